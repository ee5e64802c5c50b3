#!/usr/bin/python3
"""TensorFlow GraphDefs, and their ONNX twins with the same weights (deterministic, seeded).

    /usr/bin/python3 models/make_tf_models.py [OUTDIR]      # default: the models/ folder

No TensorFlow is needed: the GraphDefs are written with the protobuf module protoc generates
from dlc's own frontend/tf/graph_def.proto (wire-compatible with TensorFlow's schema), with
the node names, attributes and op choices TensorFlow 1.x writes when it freezes a graph
(weights as Const nodes read through `<name>/read` Identity nodes colocated with them).

tiny_cnn_tf.pb    the bundled TensorFlow model: NHWC Conv2D/BiasAdd/Relu/MaxPool, Conv2D with
                  FusedBatchNormV3, Mean over H and W, MatMul/BiasAdd/Softmax; batch -1
twin_mlp          MatMul/BiasAdd/Relu/MatMul/BiasAdd/Softmax, batch -1
twin_resblock     NHWC ResNet block: Conv2D -> FusedBatchNormV3 -> Relu -> Conv2D ->
                  FusedBatchNormV3 -> Add(residual) -> Relu
twin_lstm         an LSTM written the TF1 way (BasicLSTMCell unrolled: ConcatV2, MatMul,
                  BiasAdd, Split into i/j/f/o, Sigmoid/Tanh, forget bias 1), 4 steps
twin_bert         one BERT encoder layer with TensorFlow's node names (bert/encoder/layer_0/...):
                  multi-head self-attention with a mask, LayerNorm as TF writes it
                  (Mean/SquaredDifference/Rsqrt), erf Gelu
Each twin is written as <name>.pb (GraphDef) and <name>.onnx (opset 17) with the same weights
and the same input and output names, so `dlc run` must give the same outputs for both.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load_pb2():
    out = tempfile.mkdtemp(prefix="dlc-tfproto-")
    subprocess.run(["protoc", f"--proto_path={ROOT}/frontend/tf", f"--python_out={out}",
                    f"{ROOT}/frontend/tf/graph_def.proto"], check=True)
    sys.path.insert(0, out)
    import graph_def_pb2
    return graph_def_pb2


pb2 = load_pb2()
TF_DT = {np.float32: pb2.DT_FLOAT, np.int32: pb2.DT_INT32, np.int64: pb2.DT_INT64,
         np.bool_: pb2.DT_BOOL}


class TFGraph:
    """A GraphDef as TensorFlow 1.x writes a frozen one."""

    def __init__(self):
        self.g = pb2.GraphDef()
        self.g.versions.producer = 27

    def node(self, name, op, inputs=(), **attrs):
        n = self.g.node.add()
        n.name, n.op = name, op
        n.input.extend(inputs)
        for k, v in attrs.items():
            a = n.attr[k]
            if isinstance(v, bool):
                a.b = v
            elif isinstance(v, int):
                a.i = v
            elif isinstance(v, float):
                a.f = v
            elif isinstance(v, str):
                a.s = v.encode()
            elif isinstance(v, type) and v in TF_DT:
                a.type = TF_DT[v]
            elif isinstance(v, list) and all(isinstance(x, bytes) for x in v):
                a.list.s.extend(v)
            elif isinstance(v, list):
                a.list.i.extend(v)
            else:
                raise TypeError(f"{k}={v!r}")
        return name

    def placeholder(self, name, dtype, shape):
        self.node(name, "Placeholder", dtype=dtype)
        for d in shape:
            self.g.node[-1].attr["shape"].shape.dim.add().size = d
        return name

    def const(self, name, value):
        value = np.asarray(value)
        n = self.g.node.add()
        n.name, n.op = name, "Const"
        n.attr["dtype"].type = TF_DT[value.dtype.type]
        t = n.attr["value"].tensor
        t.dtype = TF_DT[value.dtype.type]
        for d in value.shape:
            t.tensor_shape.dim.add().size = d
        t.tensor_content = value.tobytes()
        return name

    def weight(self, name, value):
        """A frozen variable: Const `name` read through `name/read`, colocated with it."""
        self.const(name, value)
        return self.node(f"{name}/read", "Identity", [name], T=np.float32,
                         _class=[f"loc:@{name}".encode()])

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.g.SerializeToString())
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


class OnnxGraph:
    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def init(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op, inputs, out=None, **attrs):
        self.count += 1
        out = out or f"t{self.count}"
        self.nodes.append(helper.make_node(op, list(inputs), [out], name=out, **attrs))
        return out

    def save(self, path, name, inputs, outputs):
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.producer_name = "dlc/models/make_tf_models.py"
        onnx.checker.check_model(m)
        onnx.save(m, path)
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


rng = np.random.default_rng(20261203)


def randn(*shape, scale=0.1):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def f32_info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# --- MLP -------------------------------------------------------------------------------------

def mlp(out):
    w0, b0, w1, b1 = randn(64, 128), randn(128), randn(128, 10), randn(10)
    t = TFGraph()
    t.placeholder("x", np.float32, [-1, 64])
    t.node("dense/MatMul", "MatMul", ["x", t.weight("dense/kernel", w0)], T=np.float32,
           transpose_a=False, transpose_b=False)
    t.node("dense/BiasAdd", "BiasAdd", ["dense/MatMul", t.weight("dense/bias", b0)], T=np.float32,
           data_format="NHWC")
    t.node("dense/Relu", "Relu", ["dense/BiasAdd"], T=np.float32)
    t.node("dense_1/MatMul", "MatMul", ["dense/Relu", t.weight("dense_1/kernel", w1)], T=np.float32)
    t.node("dense_1/BiasAdd", "BiasAdd", ["dense_1/MatMul", t.weight("dense_1/bias", b1)],
           T=np.float32)
    t.node("probs", "Softmax", ["dense_1/BiasAdd"], T=np.float32)
    t.save(f"{out}/twin_mlp.pb")
    o = OnnxGraph()
    h = o.op("MatMul", ["x", o.init("w0", w0)])
    h = o.op("Relu", [o.op("Add", [h, o.init("b0", b0)])])
    h = o.op("Add", [o.op("MatMul", [h, o.init("w1", w1)]), o.init("b1", b1)])
    o.op("Softmax", [h], out="probs", axis=-1)
    o.save(f"{out}/twin_mlp.onnx", "twin_mlp", [f32_info("x", ["N", 64])],
           [f32_info("probs", ["N", 10])])


# --- NHWC ResNet block -------------------------------------------------------------------------

def bn_params(c):
    return (rng.uniform(0.5, 1.5, c).astype(np.float32), randn(c),
            randn(c), rng.uniform(0.5, 1.5, c).astype(np.float32))


def resblock(out, c=32, hw=16, batch=2):
    w1, w2 = randn(3, 3, c, c, scale=0.05), randn(3, 3, c, c, scale=0.05)  # HWIO
    bn1, bn2 = bn_params(c), bn_params(c)
    eps = 1e-3
    t = TFGraph()
    t.placeholder("input", np.float32, [batch, hw, hw, c])

    def conv_bn(prefix, x, w, bn):
        conv = t.node(f"{prefix}/Conv2D", "Conv2D", [x, t.weight(f"{prefix}/kernel", w)],
                      T=np.float32, data_format="NHWC", padding="SAME", strides=[1, 1, 1, 1],
                      dilations=[1, 1, 1, 1], use_cudnn_on_gpu=True)
        names = [t.weight(f"{prefix}/bn/{n}", v)
                 for n, v in zip(["gamma", "beta", "moving_mean", "moving_variance"], bn)]
        return t.node(f"{prefix}/bn/FusedBatchNormV3", "FusedBatchNormV3", [conv] + names,
                      T=np.float32, U=np.float32, data_format="NHWC", epsilon=eps,
                      is_training=False)

    h = conv_bn("block/conv1", "input", w1, bn1)
    h = t.node("block/relu1", "Relu", [h], T=np.float32)
    h = conv_bn("block/conv2", h, w2, bn2)
    h = t.node("block/add", "AddV2", [h, "input"], T=np.float32)
    t.node("output", "Relu", [h], T=np.float32)
    t.save(f"{out}/twin_resblock.pb")

    o = OnnxGraph()

    def conv_bn_onnx(x, w, bn, tag):
        y = o.op("Conv", [x, o.init(f"{tag}.w", w.transpose(3, 2, 0, 1))], pads=[1, 1, 1, 1],
                 kernel_shape=[3, 3])
        names = [o.init(f"{tag}.{n}", v) for n, v in zip(["scale", "bias", "mean", "var"], bn)]
        return o.op("BatchNormalization", [y] + names, epsilon=eps)

    x = o.op("Transpose", ["input"], perm=[0, 3, 1, 2])
    h = o.op("Relu", [conv_bn_onnx(x, w1, bn1, "c1")])
    h = o.op("Relu", [o.op("Add", [conv_bn_onnx(h, w2, bn2, "c2"), x])])
    o.op("Transpose", [h], out="output", perm=[0, 2, 3, 1])
    o.save(f"{out}/twin_resblock.onnx", "twin_resblock", [f32_info("input", [batch, hw, hw, c])],
           [f32_info("output", [batch, hw, hw, c])])


# --- TF1 LSTM ----------------------------------------------------------------------------------

def lstm(out, batch=2, steps=4, inp=8, hidden=16):
    w, b = randn(inp + hidden, 4 * hidden, scale=0.3), randn(4 * hidden)
    t = TFGraph()
    t.placeholder("inputs", np.float32, [batch, steps, inp])
    t.const("rnn/zeros", np.zeros((batch, hidden), np.float32))
    t.weight("rnn/lstm_cell/kernel", w)
    t.weight("rnn/lstm_cell/bias", b)
    t.node("rnn/unstack", "Unpack", ["inputs"], T=np.float32, num=steps, axis=1)
    t.const("rnn/split_dim", np.array(1, np.int32))
    t.const("rnn/concat_axis", np.array(1, np.int32))
    t.const("rnn/forget_bias", np.array(1.0, np.float32))
    c, h = "rnn/zeros", "rnn/zeros"
    for s in range(steps):
        p = f"rnn/lstm_cell_{s}" if s else "rnn/lstm_cell"
        x_t = "rnn/unstack" if s == 0 else f"rnn/unstack:{s}"
        cat = t.node(f"{p}/concat", "ConcatV2", [x_t, h, "rnn/concat_axis"], T=np.float32, N=2,
                     Tidx=np.int32)
        mm = t.node(f"{p}/MatMul", "MatMul", [cat, "rnn/lstm_cell/kernel/read"], T=np.float32)
        ba = t.node(f"{p}/BiasAdd", "BiasAdd", [mm, "rnn/lstm_cell/bias/read"], T=np.float32)
        sp = t.node(f"{p}/split", "Split", ["rnn/split_dim", ba], T=np.float32, num_split=4)
        f = t.node(f"{p}/add", "Add", [f"{sp}:2", "rnn/forget_bias"], T=np.float32)
        keep = t.node(f"{p}/mul", "Mul", [c, t.node(f"{p}/Sigmoid", "Sigmoid", [f], T=np.float32)],
                      T=np.float32)
        new = t.node(f"{p}/mul_1", "Mul", [t.node(f"{p}/Sigmoid_1", "Sigmoid", [sp], T=np.float32),
                                           t.node(f"{p}/Tanh", "Tanh", [f"{sp}:1"], T=np.float32)],
                     T=np.float32)
        c = t.node(f"{p}/add_1", "Add", [keep, new], T=np.float32)
        h = t.node(f"{p}/mul_2", "Mul", [t.node(f"{p}/Tanh_1", "Tanh", [c], T=np.float32),
                                         t.node(f"{p}/Sigmoid_2", "Sigmoid", [f"{sp}:3"],
                                                T=np.float32)], T=np.float32)
    t.node("rnn/outputs", "Pack", [f"rnn/lstm_cell_{s}/mul_2" if s else "rnn/lstm_cell/mul_2"
                                   for s in range(steps)], T=np.float32, N=steps, axis=1)
    t.node("final_state", "Identity", [c], T=np.float32)
    t.save(f"{out}/twin_lstm.pb")

    o = OnnxGraph()
    o.init("zeros", np.zeros((batch, hidden), np.float32))
    o.init("W", w), o.init("B", b), o.init("one", np.array(1.0, np.float32))
    o.init("splits", np.array([hidden] * 4, np.int64))
    c, h, hs = "zeros", "zeros", []
    for s in range(steps):
        x_t = o.op("Gather", ["inputs", o.init(f"step{s}", np.array(s, np.int64))], axis=1)
        z = o.op("Add", [o.op("MatMul", [o.op("Concat", [x_t, h], axis=1), "W"]), "B"])
        outs = [f"s{s}_{k}" for k in range(4)]
        o.nodes.append(helper.make_node("Split", [z, "splits"], outs, axis=1, name=f"split{s}"))
        i, j, f, og = outs
        c = o.op("Add", [o.op("Mul", [c, o.op("Sigmoid", [o.op("Add", [f, "one"])])]),
                         o.op("Mul", [o.op("Sigmoid", [i]), o.op("Tanh", [j])])])
        h = o.op("Mul", [o.op("Tanh", [c]), o.op("Sigmoid", [og])])
        hs.append(o.op("Unsqueeze", [h, o.init(f"ax{s}", np.array([1], np.int64))]))
    o.op("Concat", hs, out="rnn/outputs", axis=1)
    o.op("Identity", [c], out="final_state")
    o.save(f"{out}/twin_lstm.onnx", "twin_lstm", [f32_info("inputs", [batch, steps, inp])],
           [f32_info("rnn/outputs", [batch, steps, hidden]), f32_info("final_state", [batch, hidden])])


# --- One BERT encoder layer --------------------------------------------------------------------

def bert(out, batch=2, seq=8, hidden=32, heads=4, inter=64):
    dh = hidden // heads
    L = "bert/encoder/layer_0"
    p = {k: randn(*s) for k, s in {
        "q_w": (hidden, hidden), "q_b": (hidden,), "k_w": (hidden, hidden), "k_b": (hidden,),
        "v_w": (hidden, hidden), "v_b": (hidden,), "ao_w": (hidden, hidden), "ao_b": (hidden,),
        "i_w": (hidden, inter), "i_b": (inter,), "o_w": (inter, hidden), "o_b": (hidden,)}.items()}
    for n in ("ln1", "ln2"):
        p[f"{n}_g"] = rng.uniform(0.5, 1.5, hidden).astype(np.float32)
        p[f"{n}_b"] = randn(hidden)
    eps = 1e-12
    t = TFGraph()
    t.placeholder("input_tensor", np.float32, [batch * seq, hidden])
    t.placeholder("input_mask", np.float32, [batch, seq])

    def dense(scope, x, w, b):
        mm = t.node(f"{scope}/MatMul", "MatMul", [x, t.weight(f"{scope}/kernel", w)], T=np.float32)
        return t.node(f"{scope}/BiasAdd", "BiasAdd", [mm, t.weight(f"{scope}/bias", b)],
                      T=np.float32)

    def shape(name, dims):
        return t.const(name, np.array(dims, np.int32))

    def heads_first(scope, x):
        r = t.node(f"{scope}/Reshape", "Reshape", [x, shape(f"{scope}/Reshape/shape",
                                                            [batch, seq, heads, dh])], T=np.float32)
        return t.node(f"{scope}/transpose", "Transpose", [r, t.const(f"{scope}/transpose/perm",
                                                                       np.array([0, 2, 1, 3], np.int32))],
                      T=np.float32, Tperm=np.int32)

    def layer_norm(scope, x, g, b):
        t.const(f"{scope}/moments/axes", np.array([-1], np.int32))
        mean = t.node(f"{scope}/moments/mean", "Mean", [x, f"{scope}/moments/axes"], T=np.float32,
                      Tidx=np.int32, keep_dims=True)
        sq = t.node(f"{scope}/moments/SquaredDifference", "SquaredDifference", [x, mean],
                    T=np.float32)
        var = t.node(f"{scope}/moments/variance", "Mean", [sq, f"{scope}/moments/axes"],
                     T=np.float32, Tidx=np.int32, keep_dims=True)
        ve = t.node(f"{scope}/batchnorm/add", "AddV2", [var, t.const(f"{scope}/batchnorm/add/y",
                                                                     np.array(eps, np.float32))],
                    T=np.float32)
        rs = t.node(f"{scope}/batchnorm/Rsqrt", "Rsqrt", [ve], T=np.float32)
        sc = t.node(f"{scope}/batchnorm/mul", "Mul", [rs, t.weight(f"{scope}/gamma", g)], T=np.float32)
        xs = t.node(f"{scope}/batchnorm/mul_1", "Mul", [x, sc], T=np.float32)
        ms = t.node(f"{scope}/batchnorm/mul_2", "Mul", [mean, sc], T=np.float32)
        sh = t.node(f"{scope}/batchnorm/sub", "Sub", [t.weight(f"{scope}/beta", b), ms], T=np.float32)
        return t.node(f"{scope}/batchnorm/add_1", "AddV2", [xs, sh], T=np.float32)

    A = f"{L}/attention/self"
    q = heads_first(f"{A}/query_heads", dense(f"{A}/query", "input_tensor", p["q_w"], p["q_b"]))
    k = heads_first(f"{A}/key_heads", dense(f"{A}/key", "input_tensor", p["k_w"], p["k_b"]))
    v = heads_first(f"{A}/value_heads", dense(f"{A}/value", "input_tensor", p["v_w"], p["v_b"]))
    s = t.node(f"{A}/MatMul", "BatchMatMulV2", [q, k], T=np.float32, adj_x=False, adj_y=True)
    s = t.node(f"{A}/Mul", "Mul", [s, t.const(f"{A}/Mul/y", np.array(1 / np.sqrt(dh), np.float32))],
               T=np.float32)
    m = t.node(f"{A}/ExpandDims", "ExpandDims", ["input_mask", t.const(f"{A}/ExpandDims/dim",
                                                                         np.array([1], np.int32))],
               T=np.float32, Tdim=np.int32)
    m = t.node(f"{A}/ExpandDims_1", "ExpandDims", [m, f"{A}/ExpandDims/dim"], T=np.float32,
               Tdim=np.int32)
    m = t.node(f"{A}/sub", "Sub", [t.const(f"{A}/sub/x", np.array(1.0, np.float32)), m], T=np.float32)
    m = t.node(f"{A}/mul_1", "Mul", [m, t.const(f"{A}/mul_1/y", np.array(-10000.0, np.float32))],
               T=np.float32)
    s = t.node(f"{A}/add", "AddV2", [s, m], T=np.float32)
    probs = t.node(f"{A}/Softmax", "Softmax", [s], T=np.float32)
    ctx = t.node(f"{A}/MatMul_1", "BatchMatMulV2", [probs, v], T=np.float32)
    ctx = t.node(f"{A}/transpose_3", "Transpose", [ctx, f"{A}/query_heads/transpose/perm"],
                 T=np.float32, Tperm=np.int32)
    ctx = t.node(f"{A}/Reshape_3", "Reshape", [ctx, shape(f"{A}/Reshape_3/shape",
                                                          [batch * seq, hidden])], T=np.float32)
    O = f"{L}/attention/output"
    h = dense(f"{O}/dense", ctx, p["ao_w"], p["ao_b"])
    h = t.node(f"{O}/add", "AddV2", [h, "input_tensor"], T=np.float32)
    h1 = layer_norm(f"{O}/LayerNorm", h, p["ln1_g"], p["ln1_b"])
    I = f"{L}/intermediate/dense"
    i = dense(I, h1, p["i_w"], p["i_b"])
    g = t.node(f"{I}/truediv", "RealDiv", [i, t.const(f"{I}/truediv/y",
                                                      np.array(np.sqrt(2.0), np.float32))], T=np.float32)
    g = t.node(f"{I}/Erf", "Erf", [g], T=np.float32)
    g = t.node(f"{I}/add", "AddV2", [t.const(f"{I}/add/x", np.array(1.0, np.float32)), g], T=np.float32)
    g = t.node(f"{I}/mul", "Mul", [t.const(f"{I}/mul/x", np.array(0.5, np.float32)), g], T=np.float32)
    g = t.node(f"{I}/mul_1", "Mul", [i, g], T=np.float32)
    h = dense(f"{L}/output/dense", g, p["o_w"], p["o_b"])
    h = t.node(f"{L}/output/add", "AddV2", [h, h1], T=np.float32)
    out_name = layer_norm(f"{L}/output/LayerNorm", h, p["ln2_g"], p["ln2_b"])
    t.save(f"{out}/twin_bert.pb")

    o = OnnxGraph()

    def dense_onnx(x, w, b):
        return o.op("Add", [o.op("MatMul", [x, o.init(f"{w}", p[w])]), o.init(b, p[b])])

    def heads_onnx(x):
        r = o.op("Reshape", [x, o.init(f"hs{o.count}", np.array([batch, seq, heads, dh], np.int64))])
        return o.op("Transpose", [r], perm=[0, 2, 1, 3])

    def ln_onnx(x, g, b, out=None):
        mean = o.op("ReduceMean", [x], axes=[-1])
        d = o.op("Sub", [x, mean])
        var = o.op("ReduceMean", [o.op("Mul", [d, d])], axes=[-1])
        den = o.op("Sqrt", [o.op("Add", [var, o.init(f"eps{o.count}", np.array(eps, np.float32))])])
        return o.op("Add", [o.op("Mul", [o.op("Div", [d, den]), o.init(g, p[g])]), o.init(b, p[b])],
                    out=out)

    q = heads_onnx(dense_onnx("input_tensor", "q_w", "q_b"))
    k = heads_onnx(dense_onnx("input_tensor", "k_w", "k_b"))
    v = heads_onnx(dense_onnx("input_tensor", "v_w", "v_b"))
    s = o.op("MatMul", [q, o.op("Transpose", [k], perm=[0, 1, 3, 2])])
    s = o.op("Mul", [s, o.init("scale", np.array(1 / np.sqrt(dh), np.float32))])
    m = o.op("Unsqueeze", ["input_mask", o.init("ax12", np.array([1, 2], np.int64))])
    m = o.op("Mul", [o.op("Sub", [o.init("one", np.array(1.0, np.float32)), m]),
                     o.init("neg", np.array(-10000.0, np.float32))])
    ctx = o.op("MatMul", [o.op("Softmax", [o.op("Add", [s, m])], axis=-1), v])
    ctx = o.op("Reshape", [o.op("Transpose", [ctx], perm=[0, 2, 1, 3]),
                           o.init("flat", np.array([batch * seq, hidden], np.int64))])
    h1 = ln_onnx(o.op("Add", [dense_onnx(ctx, "ao_w", "ao_b"), "input_tensor"]), "ln1_g", "ln1_b")
    i = dense_onnx(h1, "i_w", "i_b")
    gl = o.op("Mul", [i, o.op("Mul", [o.init("half", np.array(0.5, np.float32)),
                                      o.op("Add", ["one", o.op("Erf", [o.op("Div", [
                                          i, o.init("sqrt2", np.array(np.sqrt(2.0), np.float32))])])])])])
    ln_onnx(o.op("Add", [dense_onnx(gl, "o_w", "o_b"), h1]), "ln2_g", "ln2_b", out=out_name)
    o.save(f"{out}/twin_bert.onnx", "twin_bert",
           [f32_info("input_tensor", [batch * seq, hidden]), f32_info("input_mask", [batch, seq])],
           [f32_info(out_name, [batch * seq, hidden])])


# --- The bundled TensorFlow model -----------------------------------------------------------------

def tiny_cnn_tf(out):
    t = TFGraph()
    t.placeholder("image", np.float32, [-1, 16, 16, 3])
    conv = t.node("conv1/Conv2D", "Conv2D", ["image", t.weight("conv1/kernel", randn(3, 3, 3, 8))],
                  T=np.float32, data_format="NHWC", padding="SAME", strides=[1, 1, 1, 1])
    h = t.node("conv1/BiasAdd", "BiasAdd", [conv, t.weight("conv1/bias", randn(8))], T=np.float32)
    h = t.node("conv1/Relu", "Relu", [h], T=np.float32)
    h = t.node("pool1/MaxPool", "MaxPool", [h], T=np.float32, data_format="NHWC", padding="VALID",
               ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1])
    conv = t.node("conv2/Conv2D", "Conv2D", [h, t.weight("conv2/kernel", randn(3, 3, 8, 16))],
                  T=np.float32, data_format="NHWC", padding="SAME", strides=[1, 2, 2, 1])
    g, b, m, v = bn_params(16)
    h = t.node("conv2/bn/FusedBatchNormV3", "FusedBatchNormV3",
               [conv, t.weight("conv2/bn/gamma", g), t.weight("conv2/bn/beta", b),
                t.weight("conv2/bn/moving_mean", m), t.weight("conv2/bn/moving_variance", v)],
               T=np.float32, U=np.float32, data_format="NHWC", epsilon=1e-3, is_training=False)
    h = t.node("conv2/Relu", "Relu", [h], T=np.float32)
    h = t.node("gap/Mean", "Mean", [h, t.const("gap/reduction_indices", np.array([1, 2], np.int32))],
               T=np.float32, Tidx=np.int32, keep_dims=False)
    h = t.node("logits/MatMul", "MatMul", [h, t.weight("logits/kernel", randn(16, 10))], T=np.float32)
    h = t.node("logits/BiasAdd", "BiasAdd", [h, t.weight("logits/bias", randn(10))], T=np.float32)
    t.node("probs", "Softmax", [h], T=np.float32)
    t.save(f"{out}/tiny_cnn_tf.pb")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    os.makedirs(out, exist_ok=True)
    if out == HERE:
        tiny_cnn_tf(out)  # the only one checked in; the twins are made by the tests
    else:
        for make in (tiny_cnn_tf, mlp, resblock, lstm, bert):
            make(out)
