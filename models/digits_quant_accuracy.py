#!/usr/bin/python3
"""int8 accuracy of models/digits_cnn.onnx on the 397 held-out digits, through dlc.

    /usr/bin/python3 models/digits_quant_accuracy.py --dlc BUILD/tools/dlc/dlc [--device cpu|gpu]
                     [--min-accuracy-drop-points 1.0]

1. Saves 200 training images as calibration samples (one folder each, `x.npy`).
2. `dlc run` on the float model: the float accuracy.
3. For each method (minmax, percentile=99.99, entropy): `dlc quantize --calibration` (int8,
   symmetric; Q/DQ on every Conv/Gemm input, weights per output channel), then `dlc run` on the
   quantized model: its accuracy.
4. The TensorFlow form of the same network (NHWC, as quantization-aware training leaves it:
   FakeQuantWithMinMaxVars on the activations with the minmax ranges, and
   FakeQuantWithMinMaxVarsPerChannel (narrow range) on the weights), written as a GraphDef and
   run by dlc.
Prints a table; exits 1 if an int8 accuracy is more than the allowed drop below float.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_digits_cnn import digits_split  # noqa: E402


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return r.stdout


def accuracy(dlc, model, x_path, y, out, device):
    run([dlc, "run", model, "--input", f"x={x_path}", "-o", out, "--device", device])
    logits = np.load(os.path.join(out, "logits.npy"))
    return float((logits.argmax(1) == y).mean())


def tf_fake_quant_graph(path, ranges):
    """The network as a TensorFlow GraphDef with FakeQuant nodes, weights from the ONNX file."""
    import onnx
    from onnx import numpy_helper
    from make_tf_models import TFGraph
    w = {i.name: numpy_helper.to_array(i) for i in onnx.load(os.path.join(HERE, "digits_cnn.onnx"))
         .graph.initializer}
    t = TFGraph()
    t.placeholder("x", np.float32, [-1, 8, 8, 1])

    def act_fq(name, src, key):
        lo, hi = ranges[key]
        t.const(f"{name}/min", np.array(lo, np.float32))
        t.const(f"{name}/max", np.array(hi, np.float32))
        return t.node(name, "FakeQuantWithMinMaxVars", [src, f"{name}/min", f"{name}/max"],
                      num_bits=8, narrow_range=False)

    def weight_fq(name, value):  # per output channel = the last dim, narrow range
        m = np.abs(value).reshape(-1, value.shape[-1]).max(0).astype(np.float32)
        t.const(f"{name}/w", value.astype(np.float32))
        t.const(f"{name}/min", -m)
        t.const(f"{name}/max", m)
        return t.node(f"{name}/fq", "FakeQuantWithMinMaxVarsPerChannel",
                      [f"{name}/w", f"{name}/min", f"{name}/max"], num_bits=8, narrow_range=True)

    def conv(name, src, wname, bname):
        wq = weight_fq(name, w[wname].transpose(2, 3, 1, 0))  # OIHW -> HWIO
        c = t.node(f"{name}/Conv2D", "Conv2D", [src, wq], T=np.float32, data_format="NHWC",
                   padding="SAME", strides=[1, 1, 1, 1])
        t.const(f"{name}/bias", w[bname])
        b = t.node(f"{name}/BiasAdd", "BiasAdd", [c, f"{name}/bias"], T=np.float32)
        r = t.node(f"{name}/Relu", "Relu", [b], T=np.float32)
        return t.node(f"{name}/MaxPool", "MaxPool", [r], T=np.float32, data_format="NHWC",
                      padding="VALID", ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1])

    h = conv("conv1", act_fq("x/fq", "x", "x"), "conv1.weight", "conv1.bias")
    h = conv("conv2", act_fq("p1/fq", h, "p1"), "conv2.weight", "conv2.bias")
    t.const("flatten/shape", np.array([-1, 128], np.int32))
    h = t.node("flatten", "Reshape", [h, "flatten/shape"], T=np.float32)
    # ONNX flattens NCHW (c, h, w); the NHWC reshape gives (h, w, c): permute the rows.
    fc = w["fc.weight"].reshape(10, 32, 2, 2).transpose(2, 3, 1, 0).reshape(128, 10)
    wq = weight_fq("fc", fc)
    mm = t.node("fc/MatMul", "MatMul", [act_fq("f/fq", h, "f"), wq], T=np.float32)
    t.const("fc/bias", w["fc.bias"])
    t.node("logits", "BiasAdd", [mm, "fc/bias"], T=np.float32)
    t.save(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--max-drop-points", type=float, default=1.0)
    args = ap.parse_args()
    xtr, _, xte, yte = digits_split()
    work = tempfile.mkdtemp(prefix="dlc-digits-")
    cal = os.path.join(work, "cal")
    for i in range(200):
        os.makedirs(os.path.join(cal, f"s{i:03d}"))
        np.save(os.path.join(cal, f"s{i:03d}", "x.npy"), xtr[i:i + 1])
    x_path = os.path.join(work, "x_test.npy")
    np.save(x_path, xte)
    model = os.path.join(HERE, "digits_cnn.onnx")
    rows = [("float32", accuracy(args.dlc, model, x_path, yte, os.path.join(work, "f"), args.device))]
    tables = {}
    for method in ("minmax", "percentile=99.99", "entropy"):
        q = os.path.join(work, f"q_{method}.dlc")
        table = os.path.join(work, f"r_{method}.json")
        run([args.dlc, "quantize", model, "--calibration", cal, "--method", method, "-o", q,
             "--save-ranges", table])
        tables[method] = json.load(open(table))["ranges"]
        rows.append((f"int8 Q/DQ, {method}",
                     accuracy(args.dlc, q, x_path, yte, os.path.join(work, method), args.device)))
    pb = os.path.join(work, "digits_fake_quant.pb")
    tf_fake_quant_graph(pb, tables["minmax"])
    np.save(x_path.replace(".npy", "_nhwc.npy"), xte.transpose(0, 2, 3, 1))
    rows.append(("TF FakeQuant (minmax)", accuracy(args.dlc, pb, x_path.replace(".npy", "_nhwc.npy"),
                                                    yte, os.path.join(work, "tf"), args.device)))
    print(f"digits: {len(yte)} held-out images, calibration on 200 training images ({args.device})")
    print("| model | accuracy | vs float (points) |")
    print("|---|---|---|")
    worst = 0.0
    for name, acc in rows:
        change = 100 * (acc - rows[0][1])
        worst = max(worst, -change)
        print(f"| {name} | {100 * acc:.2f} % | {change + 0.0:+.2f} |")
    sys.exit(1 if worst > args.max_drop_points else 0)


if __name__ == "__main__":
    main()
