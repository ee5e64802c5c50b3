#!/usr/bin/python3
"""Writes a ResNet-50 (torchvision's v1.5 layout: stride on the 3x3 conv of each bottleneck)
as ONNX with random weights, built with onnx.helper only, so it needs no PyTorch and no
download. Exported the way exporters write it: Conv+BatchNormalization+Relu, residual Add,
MaxPool, GlobalAveragePool, Flatten, Gemm (opset 17).

    /usr/bin/python3 tools/bench/make_resnet50.py OUT.onnx [--batch N|--batch-symbolic] [--fp16]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(50)


class Builder:
    def __init__(self, dtype):
        self.nodes, self.inits, self.n = [], [], 0
        self.np_dtype = dtype

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, base, arr):
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(arr.astype(self.np_dtype), name))
        return name

    def conv_bn(self, x, cin, cout, k, stride, relu=True):
        w = self.const("w", rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k)))
        y = self.name("conv")
        self.nodes.append(helper.make_node("Conv", [x, w], [y], name=y, kernel_shape=[k, k],
                                           strides=[stride, stride], pads=[k // 2] * 4))
        scale = self.const("bn_scale", 0.5 + 0.5 * rng.random(cout))
        bias = self.const("bn_bias", rng.standard_normal(cout) * 0.1)
        mean = self.const("bn_mean", rng.standard_normal(cout) * 0.1)
        var = self.const("bn_var", 0.5 + rng.random(cout))
        z = self.name("bn")
        self.nodes.append(helper.make_node("BatchNormalization", [y, scale, bias, mean, var], [z],
                                           name=z, epsilon=1e-5))
        if not relu:
            return z
        r = self.name("relu")
        self.nodes.append(helper.make_node("Relu", [z], [r], name=r))
        return r

    def bottleneck(self, x, cin, width, stride):
        cout = width * 4
        h = self.conv_bn(x, cin, width, 1, 1)
        h = self.conv_bn(h, width, width, 3, stride)
        h = self.conv_bn(h, width, cout, 1, 1, relu=False)
        skip = x if (stride == 1 and cin == cout) else self.conv_bn(x, cin, cout, 1, stride,
                                                                   relu=False)
        s = self.name("add")
        self.nodes.append(helper.make_node("Add", [h, skip], [s], name=s))
        r = self.name("relu")
        self.nodes.append(helper.make_node("Relu", [s], [r], name=r))
        return r, cout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--batch-symbolic", action="store_true", help="batch dim named N")
    ap.add_argument("--fp16", action="store_true")
    args = ap.parse_args()
    b = Builder(np.float16 if args.fp16 else np.float32)
    x = b.conv_bn("input", 3, 64, 7, 2)
    p = b.name("maxpool")
    b.nodes.append(helper.make_node("MaxPool", [x], [p], name=p, kernel_shape=[3, 3],
                                    strides=[2, 2], pads=[1, 1, 1, 1]))
    x, c = p, 64
    for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for i in range(blocks):
            x, c = b.bottleneck(x, c, width, stride if i == 0 else 1)
    g = b.name("gap")
    b.nodes.append(helper.make_node("GlobalAveragePool", [x], [g], name=g))
    f = b.name("flatten")
    b.nodes.append(helper.make_node("Flatten", [g], [f], name=f, axis=1))
    w = b.const("fc_w", rng.standard_normal((1000, 2048)) * 0.02)
    bias = b.const("fc_b", rng.standard_normal(1000) * 0.01)
    b.nodes.append(helper.make_node("Gemm", [f, w, bias], ["logits"], name="fc", transB=1))
    et = TensorProto.FLOAT16 if args.fp16 else TensorProto.FLOAT
    batch = "N" if args.batch_symbolic else args.batch
    graph = helper.make_graph(b.nodes, "resnet50",
                              [helper.make_tensor_value_info("input", et, [batch, 3, 224, 224])],
                              [helper.make_tensor_value_info("logits", et, [batch, 1000])],
                              b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # opset 17's; newer onnx packages would stamp their own (dlc reads 3-10)
    model.producer_name = "dlc/tools/bench/make_resnet50.py"
    onnx.checker.check_model(model)
    onnx.save(model, args.out)
    print(f"wrote {args.out}: {len(b.nodes)} nodes, "
          f"{sum(np.prod(t.dims) for t in b.inits) / 1e6:.1f}M parameters")


if __name__ == "__main__":
    main()
