"""Writes an ONNX model whose If bodies nest DEPTH deep (each else branch holds the next If).
Usage: make_nested_if.py OUT.onnx DEPTH"""
import sys

import onnx
from onnx import TensorProto, helper

out, depth = sys.argv[1], int(sys.argv[2])
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])


def body(d):
    r = helper.make_tensor_value_info("r%d" % d, TensorProto.FLOAT, [1])
    if d == 0:
        return helper.make_graph([helper.make_node("Identity", ["x"], ["r0"])], "leaf", [], [r])
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["t%d" % d])], "t%d" % d, [],
                             [helper.make_tensor_value_info("t%d" % d, TensorProto.FLOAT, [1])])
    node = helper.make_node("If", ["c"], ["r%d" % d], then_branch=then, else_branch=body(d - 1))
    return helper.make_graph([node], "b%d" % d, [], [r])


top = body(depth)
g = helper.make_graph(list(top.node), "nested", [c, x],
                      [helper.make_tensor_value_info("r%d" % depth, TensorProto.FLOAT, [1])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.save(m, out)
