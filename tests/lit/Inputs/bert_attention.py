"""Writes one BERT self-attention block as Hugging Face's BertSelfAttention exports it (torch's
TorchScript exporter, eager attention, opset 17): query, key and value Linear layers of one
input, each split into heads by Reshape and Transpose, the scores divided by sqrt(D), an
additive mask, Softmax, the heads merged. Float32, random weights.
Usage: bert_attention.py OUT [B S E H [zero-bias]] (zero-bias: the biases all zero, as a fresh
model's are, so that cse makes the three one constant)"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

B, S, E, H = (int(v) for v in sys.argv[2:6]) if len(sys.argv) > 2 else (2, 10, 32, 2)
D = E // H
rng = np.random.default_rng(0)
inits, nodes = [], []


def const(name, a):
    inits.append(numpy_helper.from_array(np.asarray(a), name))
    return name


def node(op, ins, out, **attrs):
    nodes.append(helper.make_node(op, ins, [out], name="/" + out, **attrs))
    return out


heads = const("heads", np.array([B, S, H, D], np.int64))
heads_t = {}
for p in ("query", "key", "value"):
    w = const(p + ".weight", (rng.standard_normal((E, E)) / np.sqrt(E)).astype(np.float32))
    bias = np.zeros(E) if sys.argv[6:7] == ["zero-bias"] else rng.standard_normal(E) * 0.1
    b = const(p + ".bias", bias.astype(np.float32))
    y = node("Add", [b, node("MatMul", ["x", w], p + "/MatMul")], p + "/Add")
    y = node("Reshape", [y, heads], p + "/Reshape")
    heads_t[p] = node("Transpose", [y], p + "/Transpose", perm=[0, 2, 1, 3])
kt = node("Transpose", [heads_t["key"]], "key/Transpose_1", perm=[0, 1, 3, 2])
s = node("MatMul", [heads_t["query"], kt], "scores")
s = node("Div", [s, const("sqrt_d", np.array(np.sqrt(D), np.float32))], "scaled")
s = node("Add", [s, "mask"], "masked")
p = node("Softmax", [s], "probs", axis=-1)
c = node("MatMul", [p, heads_t["value"]], "context")
c = node("Transpose", [c], "context/Transpose", perm=[0, 2, 1, 3])
node("Reshape", [c, const("merged", np.array([B, S, E], np.int64))], "y")
graph = helper.make_graph(
    nodes, "bert_attention",
    [helper.make_tensor_value_info("x", T.FLOAT, [B, S, E]),
     helper.make_tensor_value_info("mask", T.FLOAT, [B, 1, 1, S])],
    [helper.make_tensor_value_info("y", T.FLOAT, [B, S, E])], inits)
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
