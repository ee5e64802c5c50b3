"""Writes torch.nn.MultiheadAttention (batch_first, self-attention, need_weights=False) as its
TorchScript exporter writes it at opset 17, inside a residual block as torchvision's ViT uses
it: the input transposed to [S, B, E], one packed in-projection [S, B, 3E] split by Reshape,
Unsqueeze, Transpose, Squeeze and three Gathers, the heads by Reshape and Transpose, Q and Kᵀ
each scaled by sqrt(scale), the heads merged to rows [S * B, E], the out-projection a Gemm,
transposed back to [B, S, E] and added to the input. Float32, random weights.
Usage: torch_mha.py OUT [B S E H]"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

out = sys.argv[1]
B, L, E, H = (int(v) for v in sys.argv[2:6]) if len(sys.argv) > 2 else (2, 6, 32, 2)
D = E // H
rng = np.random.default_rng(0)
inits, nodes = [], []


def c(name, a):
    inits.append(numpy_helper.from_array(np.asarray(a), name))
    return name


def n(op, ins, **attrs):
    name = "%s_%d" % (op.lower(), len(nodes))
    nodes.append(helper.make_node(op, ins, [name], name="/" + name, **attrs))
    return name


t0 = n("Transpose", ["x"], perm=[1, 0, 2])
p = n("MatMul", [t0, c("w_in", (rng.standard_normal((E, 3 * E)) / np.sqrt(E)).astype(np.float32))])
p = n("Add", [c("b_in", (rng.standard_normal(3 * E) * 0.1).astype(np.float32)), p])
p = n("Reshape", [p, c("s1", np.array([L, B, 3, E], np.int64))])
p = n("Unsqueeze", [p, c("ax0", np.array([0], np.int64))])
p = n("Transpose", [p], perm=[3, 1, 2, 0, 4])
p = n("Squeeze", [p, c("ax3", np.array([3], np.int64))])
qkv = []
for i in range(3):
    g = n("Gather", [p, c("i%d" % i, np.array(i, np.int64))], axis=0)
    g = n("Reshape", [g, c("s2_%d" % i, np.array([L, B * H, D], np.int64))])
    g = n("Transpose", [g], perm=[1, 0, 2])
    qkv.append(n("Reshape", [g, c("s3_%d" % i, np.array([B, H, L, D], np.int64))]))
q, k, v = qkv
sc = c("sqrt_scale", np.array(1 / np.sqrt(np.sqrt(D)), np.float32))
s = n("MatMul", [n("Mul", [q, sc]), n("Mul", [n("Transpose", [k], perm=[0, 1, 3, 2]), sc])])
o = n("MatMul", [n("Softmax", [s], axis=-1), v])
o = n("Reshape", [n("Transpose", [o], perm=[2, 0, 1, 3]), c("s4", np.array([L * B, E], np.int64))])
o = n("Gemm", [o, c("w_out", (rng.standard_normal((E, E)) / np.sqrt(E)).astype(np.float32)),
               c("b_out", (rng.standard_normal(E) * 0.1).astype(np.float32))], transB=1)
o = n("Transpose", [n("Reshape", [o, c("s5", np.array([L, B, E], np.int64))])], perm=[1, 0, 2])
nodes.append(helper.make_node("Add", [o, "x"], ["y"], name="/residual"))
graph = helper.make_graph(nodes, "torch_mha", [helper.make_tensor_value_info("x", T.FLOAT, [B, L, E])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [B, L, E])], inits)
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, out)
