#!/usr/bin/python3
"""Generates the ONNX backend node tests (model.onnx + test_data_set_*/{input,output}_*.pb)
from Debian's python3-onnx into OUTDIR.

Some of onnx 1.12's case files still use numpy aliases that numpy 1.24 removed (np.float,
np.int, np.bool, np.object); they are restored here before the generator imports them.
Usage: gen-node-tests.py OUTDIR
"""
import os
import sys

import numpy as np

for alias, real in (("float", float), ("int", int), ("bool", bool), ("object", object),
                    ("complex", complex), ("str", str)):
    if alias not in np.__dict__:
        setattr(np, alias, real)

from onnx.backend.test.cmd_tools import main as onnx_cmd_main  # noqa: E402


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    stamp = os.path.join(out, ".complete")
    if os.path.exists(stamp):
        print(f"gen-node-tests: {out} already generated")
        return 0
    os.makedirs(out, exist_ok=True)
    sys.argv = ["backend-test-tools", "generate-data", "-o", out]
    onnx_cmd_main()
    with open(stamp, "w") as f:
        f.write("ok\n")
    n = len(os.listdir(os.path.join(out, "node")))
    print(f"gen-node-tests: {n} node test folders in {out}/node")
    return 0


if __name__ == "__main__":
    sys.exit(main())
