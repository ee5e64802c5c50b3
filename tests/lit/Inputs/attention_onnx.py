"""ONNX's Attention (ai.onnx opset 23) through dlc's importer and reference backend: writes
models with onnx.helper (Debian's onnx 1.12 has no Attention schema, so no checker), runs them
with `dlc run --device cpu` on random inputs and compares Y with numpy's attention (ONNX's
definition: softmax(Q Kᵀ scale + mask) V, the 3-D form split into heads, grouped-query heads
repeated, the causal mask upper-left). Prints one line per model; errors from dlc are printed
as they come. Usage: attention_onnx.py DLC DIR"""
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper

dlc, work = sys.argv[1:3]


def model(name, inputs, node, out_shape, opset=23):
    ins = [helper.make_tensor_value_info(n, dt, s) for n, dt, s in inputs]
    outs = [helper.make_tensor_value_info("y", T.FLOAT, out_shape)]
    m = helper.make_model(helper.make_graph([node], name, ins, outs),
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    path = "%s/%s.onnx" % (work, name)
    onnx.save(m, path)
    return path


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def run(path, name):
    d = "%s/%s" % (work, name)
    r = subprocess.run([dlc, "run", path, "--device", "cpu", "--random", "--seed", "3",
                        "--save-inputs", d + "/in", "-o", d + "/out"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        print("%s: %s" % (name, r.stderr.strip()))
        return None
    return lambda n: np.load("%s/in/%s.npy" % (d, n)).astype(np.float64), np.load(d + "/out/y.npy")


def check(name, got, want):
    print("%s: max abs error %.1e %s" % (name, np.abs(got - want).max(),
                                           "ok" if np.allclose(got, want, atol=1e-5) else "BAD"))


# 4-D, a float mask that broadcasts over the heads, the default scale 1/sqrt(D).
p = model("mask4d", [("q", T.FLOAT, [2, 3, 5, 8]), ("k", T.FLOAT, [2, 3, 7, 8]),
                     ("v", T.FLOAT, [2, 3, 7, 6]), ("m", T.FLOAT, [2, 1, 5, 7])],
          helper.make_node("Attention", ["q", "k", "v", "m"], ["y"]), [2, 3, 5, 6])
r = run(p, "mask4d")
if r:
    x, y = r
    check("mask4d", y, softmax(x("q") @ x("k").transpose(0, 1, 3, 2) / np.sqrt(8) + x("m")) @ x("v"))

# 3-D with grouped-query heads (4 over 2), causal, an explicit scale.
p = model("gqa3d", [("q", T.FLOAT, [2, 6, 32]), ("k", T.FLOAT, [2, 6, 16]),
                    ("v", T.FLOAT, [2, 6, 16])],
          helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=1, q_num_heads=4,
                           kv_num_heads=2, scale=0.3), [2, 6, 32])
r = run(p, "gqa3d")
if r:
    x, y = r
    split = lambda a, h: a.reshape(2, 6, h, 8).transpose(0, 2, 1, 3)
    q, k, v = split(x("q"), 4), np.repeat(split(x("k"), 2), 2, 1), np.repeat(split(x("v"), 2), 2, 1)
    s = q @ k.transpose(0, 1, 3, 2) * 0.3 + np.triu(np.full((6, 6), -np.inf), 1)
    check("gqa3d", y, (softmax(s) @ v).transpose(0, 2, 1, 3).reshape(2, 6, 32))

# A bool mask: false drops the key.
p = model("bool", [("q", T.FLOAT, [1, 2, 4, 8]), ("k", T.FLOAT, [1, 2, 4, 8]),
                   ("v", T.FLOAT, [1, 2, 4, 8]), ("m", T.BOOL, [4, 4])],
          helper.make_node("Attention", ["q", "k", "v", "m"], ["y"], scale=0.5), [1, 2, 4, 8])
r = run(p, "bool")
if r:
    x, y = r
    keep = np.load("%s/bool/in/m.npy" % work)
    s = np.where(keep, x("q") @ x("k").transpose(0, 1, 3, 2) * 0.5, -np.inf)
    check("bool", np.nan_to_num(y, nan=7.0), np.nan_to_num(softmax(s) @ x("v"), nan=7.0))

# What dlc refuses, with the node named.
model_past = model("past", [("q", T.FLOAT, [1, 2, 4, 8]), ("k", T.FLOAT, [1, 2, 4, 8]),
                            ("v", T.FLOAT, [1, 2, 4, 8]), ("pk", T.FLOAT, [1, 2, 1, 8]),
                            ("pv", T.FLOAT, [1, 2, 1, 8])],
                   helper.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y"]),
                   [1, 2, 4, 8])
run(model_past, "past")
model_old = model("old", [("q", T.FLOAT, [1, 2, 4, 8]), ("k", T.FLOAT, [1, 2, 4, 8]),
                          ("v", T.FLOAT, [1, 2, 4, 8])],
                  helper.make_node("Attention", ["q", "k", "v"], ["y"]), [1, 2, 4, 8], opset=21)
run(model_old, "old")
