"""Calibration samples for range-mismatch.dlc: x uniform in [-50, 50], mask 0 or 10000."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(20261203)
for i in range(8):
    d = os.path.join(out, f"s{i}")
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "x.npy"), rng.uniform(-50, 50, (4, 64)).astype(np.float32))
    np.save(os.path.join(d, "mask.npy"), (rng.random((4, 64)) < 0.5).astype(np.float32) * 10000)
