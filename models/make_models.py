#!/usr/bin/python3
"""Builds the small example models bundled with dlc (deterministic: seeded weights).

    /usr/bin/python3 models/make_models.py [OUTDIR]     # default: the models/ folder

mlp.onnx         Gemm/Relu/Softmax classifier, symbolic batch N (opset 17)
tiny_cnn.onnx    Conv/BatchNormalization/Relu/MaxPool/GlobalAveragePool, a Shape->Gather->
                 Unsqueeze->Concat->Reshape flatten as exporters write it, Gemm (opset 17)
tiny_bert.onnx   one transformer encoder layer exported "in pieces": LayerNorm from
                 ReduceMean/Sub/Pow/Sqrt/Div, Gelu from Erf, multi-head attention with
                 runtime-computed Reshape targets, symbolic batch B and sequence S (opset 17)
tiny_unet.onnx   a segmentation-style encoder-decoder on x [N, 3, H, W] (every dim symbolic):
                 two stride-2 Conv/Relu, a ConvTranspose upsampling, Resize to the skip
                 connection's size and, last, to the input's, both sizes computed from Shape
                 at run time (Shape -> Slice -> Concat), a residual Add, a 1x1 Conv to 2
                 classes per pixel (opset 17)
tiny_detector.onnx  a detector-style model on x [N, 3, H, W] (every dim symbolic): a two-Conv
                 backbone, box and class heads (1x1 Convs, Sigmoid) over every cell of the
                 feature map, NonMaxSuppression (at most 4 boxes a class, IoU 0.5, score 0.55),
                 then the selected boxes gathered (Gather by batch * anchors + box) and their
                 scores (GatherND): outputs whose first dim is the number of boxes kept, known
                 only once NMS has run (opset 17)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = [helper.make_opsetid("", 17)]
rng = np.random.default_rng(20261202)


def weight(name, *shape, scale=0.1):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def f32(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


def save(model, path):
    model.producer_name = "dlc/models/make_models.py"
    onnx.checker.check_model(model)
    onnx.save(model, path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def mlp():
    nodes = [
        helper.make_node("Gemm", ["x", "fc0.weight", "fc0.bias"], ["h0"], name="fc0", transB=1),
        helper.make_node("Relu", ["h0"], ["r0"], name="relu0"),
        helper.make_node("Gemm", ["r0", "fc1.weight", "fc1.bias"], ["logits"], name="fc1", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    inits = [weight("fc0.weight", 128, 64), weight("fc0.bias", 128),
             weight("fc1.weight", 10, 128), weight("fc1.bias", 10)]
    g = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])], inits)
    return helper.make_model(g, opset_imports=OPSET)


def tiny_cnn():
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"],
                         ["b1"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        helper.make_node("Shape", ["gap"], ["gap_shape"], name="shape"),
        helper.make_node("Gather", ["gap_shape", "zero"], ["batch"], name="gather_batch", axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="unsqueeze_batch"),
        helper.make_node("Concat", ["batch1", "minus_one"], ["flat_shape"], name="concat_shape", axis=0),
        helper.make_node("Reshape", ["gap", "flat_shape"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
    ]
    inits = [
        weight("conv1.weight", 16, 3, 3, 3), weight("conv1.bias", 16),
        f32("bn1.scale", 1 + 0.1 * rng.standard_normal(16)), weight("bn1.bias", 16),
        weight("bn1.mean", 16), f32("bn1.var", 1 + 0.1 * np.abs(rng.standard_normal(16))),
        weight("conv2.weight", 32, 16, 3, 3), weight("conv2.bias", 32),
        weight("fc.weight", 10, 32), weight("fc.bias", 10),
        numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
        i64("axes0", [0]), i64("minus_one", [-1]),
    ]
    g = helper.make_graph(
        nodes, "tiny_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    return helper.make_model(g, opset_imports=OPSET)


def tiny_bert():
    d, heads, ff = 64, 4, 256
    hd = d // heads
    nodes, inits = [], []

    def node(op, ins, outs, **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=f"/{outs[0]}/{op}", **attrs))
        return outs[0]

    def layer_norm(x, prefix):
        mean = node("ReduceMean", [x], [f"{prefix}_mean"], axes=[-1], keepdims=1)
        cen = node("Sub", [x, mean], [f"{prefix}_centered"])
        sq = node("Pow", [cen, "two"], [f"{prefix}_sq"])
        var = node("ReduceMean", [sq], [f"{prefix}_var"], axes=[-1], keepdims=1)
        vareps = node("Add", [var, "eps"], [f"{prefix}_var_eps"])
        std = node("Sqrt", [vareps], [f"{prefix}_std"])
        normed = node("Div", [cen, std], [f"{prefix}_normed"])
        inits.extend([f32(f"{prefix}.weight", 1 + 0.1 * rng.standard_normal(d)), weight(f"{prefix}.bias", d)])
        scaled = node("Mul", [normed, f"{prefix}.weight"], [f"{prefix}_scaled"])
        return node("Add", [scaled, f"{prefix}.bias"], [f"{prefix}_out"])

    def linear(x, prefix, din, dout):
        inits.extend([weight(f"{prefix}.weight", din, dout), weight(f"{prefix}.bias", dout)])
        mm = node("MatMul", [x, f"{prefix}.weight"], [f"{prefix}_mm"])
        return node("Add", [mm, f"{prefix}.bias"], [f"{prefix}_out"])

    # Runtime shape arithmetic as torch.onnx writes it: [B, S, heads, hd] from Shape(x).
    shp = node("Shape", ["x"], ["x_shape"])
    b = node("Gather", [shp, "idx0"], ["dim_b"], axis=0)
    s = node("Gather", [shp, "idx1"], ["dim_s"], axis=0)
    b1 = node("Unsqueeze", [b, "axes0"], ["dim_b1"])
    s1 = node("Unsqueeze", [s, "axes0"], ["dim_s1"])
    heads_shape = node("Concat", [b1, s1, "heads_hd"], ["heads_shape"], axis=0)
    model_shape = node("Concat", [b1, s1, "model_d"], ["model_shape"], axis=0)

    def split_heads(x, name):
        r = node("Reshape", [x, heads_shape], [f"{name}_heads"])
        return node("Transpose", [r], [f"{name}_t"], perm=[0, 2, 1, 3])

    q = split_heads(linear("x", "attn.q", d, d), "q")
    k = split_heads(linear("x", "attn.k", d, d), "k")
    v = split_heads(linear("x", "attn.v", d, d), "v")
    kt = node("Transpose", [k], ["k_tt"], perm=[0, 1, 3, 2])
    scores = node("MatMul", [q, kt], ["scores"])
    scaled = node("Div", [scores, "sqrt_hd"], ["scores_scaled"])
    probs = node("Softmax", [scaled], ["attn_probs"], axis=-1)
    ctx = node("MatMul", [probs, v], ["context"])
    ctx_t = node("Transpose", [ctx], ["context_t"], perm=[0, 2, 1, 3])
    ctx_m = node("Reshape", [ctx_t, model_shape], ["context_merged"])
    attn = linear(ctx_m, "attn.out", d, d)
    res1 = node("Add", ["x", attn], ["residual1"])
    ln1 = layer_norm(res1, "ln1")
    h = linear(ln1, "ffn.up", d, ff)
    # Gelu as exporters write it: 0.5 * x * (1 + erf(x / sqrt(2)))
    hs = node("Div", [h, "sqrt2"], ["gelu_scaled"])
    e = node("Erf", [hs], ["gelu_erf"])
    e1 = node("Add", [e, "one"], ["gelu_erf1"])
    hm = node("Mul", [h, e1], ["gelu_mul"])
    g = node("Mul", [hm, "half"], ["gelu_out"])
    down = linear(g, "ffn.down", ff, d)
    res2 = node("Add", [ln1, down], ["residual2"])
    out = layer_norm(res2, "ln2")
    nodes.append(helper.make_node("Identity", [out], ["y"], name="/y/Identity"))

    inits.extend([
        numpy_helper.from_array(np.array(0, dtype=np.int64), "idx0"),
        numpy_helper.from_array(np.array(1, dtype=np.int64), "idx1"),
        i64("axes0", [0]), i64("heads_hd", [heads, hd]), i64("model_d", [d]),
        f32("two", 2.0), f32("eps", 1e-5), f32("sqrt_hd", np.sqrt(hd)), f32("sqrt2", np.sqrt(2.0)),
        f32("one", 1.0), f32("half", 0.5),
    ])
    gr = helper.make_graph(
        nodes, "tiny_bert", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "S", d])], inits)
    return helper.make_model(gr, opset_imports=OPSET)


def tiny_unet():
    def shape_of(src, name):
        # [N, C] of `like`, then [H, W] of `src`: the sizes Resize takes, computed at run time.
        return [
            helper.make_node("Shape", [src], [f"{name}.shape"], name=f"{name}.shape"),
            helper.make_node("Slice", [f"{name}.shape", "hw.start", "hw.end"], [f"{name}.hw"],
                             name=f"{name}.hw"),
        ]
    nodes = [
        helper.make_node("Conv", ["x", "enc1.weight", "enc1.bias"], ["e1"], name="enc1",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["e1"], ["r1"], name="enc1.relu"),
        helper.make_node("Conv", ["r1", "enc2.weight", "enc2.bias"], ["e2"], name="enc2",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["e2"], ["r2"], name="enc2.relu"),
        helper.make_node("ConvTranspose", ["r2", "up.weight", "up.bias"], ["u"], name="up",
                         kernel_shape=[2, 2], strides=[2, 2]),
        # The upsampled map is resized to the skip connection's size (they differ when H or W
        # is not a multiple of 4).
        *shape_of("r1", "skip"),
        helper.make_node("Shape", ["u"], ["u.shape"], name="u.shape"),
        helper.make_node("Slice", ["u.shape", "nc.start", "nc.end"], ["u.nc"], name="u.nc"),
        helper.make_node("Concat", ["u.nc", "skip.hw"], ["skip.size"], name="skip.size", axis=0),
        helper.make_node("Resize", ["u", "", "", "skip.size"], ["us"], name="up.resize",
                         mode="linear"),
        helper.make_node("Add", ["us", "r1"], ["merged"], name="merge"),
        helper.make_node("Relu", ["merged"], ["m"], name="merge.relu"),
        *shape_of("x", "input"),
        helper.make_node("Shape", ["m"], ["m.shape"], name="m.shape"),
        helper.make_node("Slice", ["m.shape", "nc.start", "nc.end"], ["m.nc"], name="m.nc"),
        helper.make_node("Concat", ["m.nc", "input.hw"], ["out.size"], name="out.size", axis=0),
        helper.make_node("Resize", ["m", "", "", "out.size"], ["full"], name="out.resize",
                         mode="nearest"),
        helper.make_node("Conv", ["full", "head.weight", "head.bias"], ["logits"], name="head",
                         kernel_shape=[1, 1]),
    ]
    inits = [weight("enc1.weight", 8, 3, 3, 3, scale=0.3), weight("enc1.bias", 8),
             weight("enc2.weight", 16, 8, 3, 3, scale=0.2), weight("enc2.bias", 16),
             weight("up.weight", 16, 8, 2, 2, scale=0.2), weight("up.bias", 8),
             weight("head.weight", 2, 8, 1, 1, scale=0.5), weight("head.bias", 2),
             i64("hw.start", [2]), i64("hw.end", [4]), i64("nc.start", [0]), i64("nc.end", [2])]
    gr = helper.make_graph(
        nodes, "tiny_unet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 2, "H", "W"])], inits)
    return helper.make_model(gr, opset_imports=OPSET)


def tiny_detector():
    classes = 3
    nodes = [
        helper.make_node("Conv", ["x", "c1.weight", "c1.bias"], ["f1"], name="backbone.conv1",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["f1"], ["r1"], name="backbone.relu1"),
        helper.make_node("Conv", ["r1", "c2.weight", "c2.bias"], ["f2"], name="backbone.conv2",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["f2"], ["feat"], name="backbone.relu2"),
        # Boxes: 4 numbers per cell in (0, 1), [N, 4, h, w] -> [N, A, 4].
        helper.make_node("Conv", ["feat", "box.weight", "box.bias"], ["box.raw"], name="box.head",
                         kernel_shape=[1, 1]),
        helper.make_node("Sigmoid", ["box.raw"], ["box.sig"], name="box.sigmoid"),
        helper.make_node("Reshape", ["box.sig", "keep.n.4"], ["box.flat"], name="box.flatten"),
        helper.make_node("Transpose", ["box.flat"], ["boxes"], name="box.nhwc", perm=[0, 2, 1]),
        # Scores: one per class and cell, [N, C, A].
        helper.make_node("Conv", ["feat", "cls.weight", "cls.bias"], ["cls.raw"], name="cls.head",
                         kernel_shape=[1, 1]),
        helper.make_node("Reshape", ["cls.raw", "keep.n.c"], ["cls.flat"], name="cls.flatten"),
        helper.make_node("Sigmoid", ["cls.flat"], ["scores"], name="cls.sigmoid"),
        helper.make_node("NonMaxSuppression",
                         ["boxes", "scores", "max.boxes", "iou.threshold", "score.threshold"],
                         ["selected"], name="nms"),
        # The kept boxes: row batch * A + box of the boxes flattened to [N * A, 4].
        helper.make_node("Gather", ["selected", "col.batch"], ["sel.batch"], name="sel.batch",
                         axis=1),
        helper.make_node("Gather", ["selected", "col.box"], ["sel.box"], name="sel.box", axis=1),
        helper.make_node("Shape", ["boxes"], ["boxes.shape"], name="boxes.shape"),
        helper.make_node("Gather", ["boxes.shape", "one"], ["anchors"], name="anchors", axis=0),
        helper.make_node("Mul", ["sel.batch", "anchors"], ["row.base"], name="row.base"),
        helper.make_node("Add", ["row.base", "sel.box"], ["row"], name="row"),
        helper.make_node("Reshape", ["boxes", "rows.4"], ["all.boxes"], name="all.boxes"),
        helper.make_node("Gather", ["all.boxes", "row"], ["det.boxes"], name="det.boxes", axis=0),
        helper.make_node("GatherND", ["scores", "selected"], ["det.scores"], name="det.scores"),
    ]
    inits = [weight("c1.weight", 8, 3, 3, 3, scale=0.3), weight("c1.bias", 8),
             weight("c2.weight", 16, 8, 3, 3, scale=0.2), weight("c2.bias", 16),
             weight("box.weight", 4, 16, 1, 1, scale=0.5), weight("box.bias", 4),
             weight("cls.weight", classes, 16, 1, 1, scale=0.5), weight("cls.bias", classes),
             i64("keep.n.4", [0, 4, -1]), i64("keep.n.c", [0, classes, -1]),
             i64("max.boxes", [4]), f32("iou.threshold", [0.5]), f32("score.threshold", [0.55]),
             numpy_helper.from_array(np.array(0, dtype=np.int64), "col.batch"),
             numpy_helper.from_array(np.array(2, dtype=np.int64), "col.box"),
             numpy_helper.from_array(np.array(1, dtype=np.int64), "one"),
             i64("rows.4", [-1, 4])]
    gr = helper.make_graph(
        nodes, "tiny_detector",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, ["K", 3]),
         helper.make_tensor_value_info("det.boxes", TensorProto.FLOAT, ["K", 4]),
         helper.make_tensor_value_info("det.scores", TensorProto.FLOAT, ["K"])], inits)
    return helper.make_model(gr, opset_imports=OPSET)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    save(mlp(), os.path.join(out, "mlp.onnx"))
    save(tiny_cnn(), os.path.join(out, "tiny_cnn.onnx"))
    save(tiny_bert(), os.path.join(out, "tiny_bert.onnx"))
    save(tiny_unet(), os.path.join(out, "tiny_unet.onnx"))
    save(tiny_detector(), os.path.join(out, "tiny_detector.onnx"))


if __name__ == "__main__":
    main()
