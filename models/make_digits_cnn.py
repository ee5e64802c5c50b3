#!/usr/bin/python3
"""Trains a small CNN on scikit-learn's 8x8 handwritten digits (Debian's python3-sklearn ships
the 1,797 images) with NumPy alone, and writes it as models/digits_cnn.onnx (opset 17).

    /usr/bin/python3 models/make_digits_cnn.py [OUT.onnx]

The split is fixed (digits_split below): the first 1,400 images (in a seeded shuffle) train,
the last 397 are held out; calibration for int8 uses 200 of the training images. Deterministic:
seeded initialisation and batches. The network (input x: f32[N,1,8,8], pixels scaled to [0,1]):

    Conv 3x3 pad 1, 1->16, Relu, MaxPool 2x2   -> [N,16,4,4]
    Conv 3x3 pad 1, 16->32, Relu, MaxPool 2x2  -> [N,32,2,2]
    Flatten, Gemm 128->10                       -> logits
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def digits_split():
    """(x_train, y_train, x_test, y_test), x in [0, 1] as f32[N,1,8,8]."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    order = np.random.default_rng(1797).permutation(len(x))
    x, y = x[order], d.target[order]
    return x[:1400], y[:1400], x[1400:], y[1400:]


def im2col(x, k=3, pad=1):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    cols = np.empty((n, c, k, k, h, w), x.dtype)
    for i in range(k):
        for j in range(k):
            cols[:, :, i, j] = xp[:, :, i:i + h, j:j + w]
    return cols.transpose(0, 4, 5, 1, 2, 3).reshape(n * h * w, c * k * k)


def col2im(cols, shape, k=3, pad=1):
    n, c, h, w = shape
    cols = cols.reshape(n, h, w, c, k, k).transpose(0, 3, 4, 5, 1, 2)
    xp = np.zeros((n, c, h + 2 * pad, w + 2 * pad), cols.dtype)
    for i in range(k):
        for j in range(k):
            xp[:, :, i:i + h, j:j + w] += cols[:, :, i, j]
    return xp[:, :, pad:pad + h, pad:pad + w]


class Net:
    def __init__(self, rng):
        he = lambda fan_in, *s: (rng.standard_normal(s) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        self.p = {"w1": he(9, 16, 1, 3, 3), "b1": np.zeros(16, np.float32),
                  "w2": he(144, 32, 16, 3, 3), "b2": np.zeros(32, np.float32),
                  "w3": he(128, 10, 128), "b3": np.zeros(10, np.float32)}

    def conv(self, x, w, b):
        n, _, h, wd = x.shape
        cols = im2col(x)
        y = cols @ w.reshape(w.shape[0], -1).T + b
        return y.reshape(n, h, wd, -1).transpose(0, 3, 1, 2), cols

    @staticmethod
    def pool(x):
        n, c, h, w = x.shape
        r = x.reshape(n, c, h // 2, 2, w // 2, 2)
        y = r.max(axis=(3, 5))
        mask = (r == y[:, :, :, None, :, None])
        return y, mask

    def forward(self, x):
        p = self.p
        c1, cols1 = self.conv(x, p["w1"], p["b1"])
        r1 = np.maximum(c1, 0)
        p1, m1 = self.pool(r1)
        c2, cols2 = self.conv(p1, p["w2"], p["b2"])
        r2 = np.maximum(c2, 0)
        p2, m2 = self.pool(r2)
        f = p2.reshape(len(x), -1)
        logits = f @ p["w3"].T + p["b3"]
        return logits, (x, cols1, c1, m1, p1, cols2, c2, m2, f)

    def grads(self, x, y):
        logits, (x, cols1, c1, m1, p1, cols2, c2, m2, f) = self.forward(x)
        e = np.exp(logits - logits.max(1, keepdims=True))
        prob = e / e.sum(1, keepdims=True)
        loss = -np.log(prob[np.arange(len(y)), y] + 1e-12).mean()
        d = prob
        d[np.arange(len(y)), y] -= 1
        d /= len(y)
        p, g = self.p, {}
        g["w3"], g["b3"] = d.T @ f, d.sum(0)
        dp2 = (d @ p["w3"]).reshape(p1.shape[0], 32, 2, 2)
        dr2 = (m2 * dp2[:, :, :, None, :, None]).reshape(c2.shape) * (c2 > 0)
        dy2 = dr2.transpose(0, 2, 3, 1).reshape(-1, 32)
        g["w2"], g["b2"] = (dy2.T @ cols2).reshape(p["w2"].shape), dy2.sum(0)
        dp1 = col2im(dy2 @ p["w2"].reshape(32, -1), p1.shape)
        dr1 = (m1 * dp1[:, :, :, None, :, None]).reshape(c1.shape) * (c1 > 0)
        dy1 = dr1.transpose(0, 2, 3, 1).reshape(-1, 16)
        g["w1"], g["b1"] = (dy1.T @ cols1).reshape(p["w1"].shape), dy1.sum(0)
        return loss, g


def train():
    xtr, ytr, xte, yte = digits_split()
    rng = np.random.default_rng(8)
    net = Net(rng)
    m = {k: np.zeros_like(v) for k, v in net.p.items()}
    v = {k: np.zeros_like(v) for k, v in net.p.items()}
    lr, step = 2e-3, 0
    for epoch in range(25):
        order = rng.permutation(len(xtr))
        for i in range(0, len(xtr), 32):
            idx = order[i:i + 32]
            loss, g = net.grads(xtr[idx], ytr[idx])
            step += 1
            for k in net.p:  # Adam
                m[k] = 0.9 * m[k] + 0.1 * g[k]
                v[k] = 0.999 * v[k] + 0.001 * g[k] ** 2
                mh, vh = m[k] / (1 - 0.9 ** step), v[k] / (1 - 0.999 ** step)
                net.p[k] = (net.p[k] - lr * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)
        acc = (net.forward(xte)[0].argmax(1) == yte).mean()
        print(f"epoch {epoch + 1}: loss {loss:.4f}, held-out accuracy {acc:.4f}")
    return net


def save(net, path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    p = net.p
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
    ]
    inits = [numpy_helper.from_array(p[k], n) for k, n in
             [("w1", "conv1.weight"), ("b1", "conv1.bias"), ("w2", "conv2.weight"),
              ("b2", "conv2.bias"), ("w3", "fc.weight"), ("b3", "fc.bias")]]
    g = helper.make_graph(nodes, "digits_cnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 8, 8])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
                          inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.producer_name = "dlc/models/make_digits_cnn.py"
    onnx.checker.check_model(model)
    onnx.save(model, path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "digits_cnn.onnx")
    save(train(), out)
