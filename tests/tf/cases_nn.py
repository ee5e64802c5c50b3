"""Cases for frontend/tf/ops_nn.cc: matmul, conv, pooling, normalization, activations.

The references below follow TensorFlow's documented semantics (NHWC unless a case says
otherwise), written directly in NumPy: they do not go through ONNX's definitions, so they
check the importer's mapping onto the IR too."""
import itertools
import math

import numpy as np

from check_ops import Case

CASES = []
f32 = np.float32


def rand(*shape, lo=-1.0, hi=1.0):
    return lambda rng: rng.uniform(lo, hi, size=shape).astype(f32)


# --- References ----------------------------------------------------------------------------------

def same_pads(size, k, s, d):
    """TensorFlow's SAME: out = ceil(in / s), the odd pad at the end."""
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def conv_nd(x, w, strides, padding, dilations=None, groups=1):
    """Channels-last convolution: x [N, *spatial, C], w [*kernel, C/groups, O]."""
    sr = x.ndim - 2
    dilations = dilations or [1] * sr
    if padding == "SAME":
        pads = [same_pads(x.shape[1 + i], w.shape[i], strides[i], dilations[i]) for i in range(sr)]
    elif padding == "VALID":
        pads = [(0, 0)] * sr
    else:
        pads = padding
    x = np.pad(x.astype(np.float64), [(0, 0)] + list(pads) + [(0, 0)])
    out_sp = [(x.shape[1 + i] - (w.shape[i] - 1) * dilations[i] - 1) // strides[i] + 1
              for i in range(sr)]
    cin, cout = w.shape[-2], w.shape[-1]
    y = np.zeros([x.shape[0]] + out_sp + [cout])
    for g in range(groups):
        xs = x[..., g * cin:(g + 1) * cin]
        og = slice(g * cout // groups, (g + 1) * cout // groups)
        for off in itertools.product(*[range(k) for k in w.shape[:sr]]):
            idx = tuple(slice(off[i] * dilations[i],
                              off[i] * dilations[i] + (out_sp[i] - 1) * strides[i] + 1, strides[i])
                        for i in range(sr))
            y[..., og] += xs[(slice(None),) + idx] @ w[off][:, og]
    return y.astype(f32)


def conv_backprop_input(sizes, w, dy, strides, padding):
    """The gradient of conv_nd(x, w) with respect to x [N, H, W, C], by its definition."""
    n, h, wd, c = sizes
    if padding == "SAME":
        (pt, _), (pl, _) = same_pads(h, w.shape[0], strides[0], 1), same_pads(wd, w.shape[1], strides[1], 1)
    else:
        pt = pl = 0
    dx = np.zeros((n, h + 2 * w.shape[0] + pt, wd + 2 * w.shape[1] + pl, c))
    for i, j in itertools.product(range(dy.shape[1]), range(dy.shape[2])):
        for a, b in itertools.product(range(w.shape[0]), range(w.shape[1])):
            dx[:, i * strides[0] + a, j * strides[1] + b, :] += dy[:, i, j, :].astype(np.float64) @ w[a, b].T
    return dx[:, pt:pt + h, pl:pl + wd, :].astype(f32)


def pool_nd(x, k, s, padding, op):
    """Channels-last pooling; SAME pads are excluded from max and average alike."""
    sr = x.ndim - 2
    pads = ([same_pads(x.shape[1 + i], k[i], s[i], 1) for i in range(sr)] if padding == "SAME"
            else [(0, 0)] * sr)
    xp = np.pad(x.astype(np.float64), [(0, 0)] + pads + [(0, 0)], constant_values=np.nan)
    out_sp = [(xp.shape[1 + i] - k[i]) // s[i] + 1 for i in range(sr)]
    y = np.zeros([x.shape[0]] + out_sp + [x.shape[-1]])
    for pos in itertools.product(*[range(o) for o in out_sp]):
        win = xp[(slice(None),) + tuple(slice(p * s[i], p * s[i] + k[i]) for i, p in enumerate(pos))]
        win = win.reshape(x.shape[0], -1, x.shape[-1])
        y[(slice(None),) + pos] = np.nanmax(win, axis=1) if op == "max" else np.nanmean(win, axis=1)
    return y.astype(f32)


def resize_tf(x, size, bilinear, align, half):
    """TensorFlow's ResizeBilinear / ResizeNearestNeighbor (image_resizer_state.h), in float32."""
    n, ih, iw, c = x.shape
    oh, ow = size

    def scale(i, o):
        return f32(i - 1) / f32(o - 1) if align and o > 1 else f32(i) / f32(o)

    def src(o, i):
        sc = scale(i, o)
        pos = np.arange(o, dtype=f32)
        if bilinear:
            return (pos + f32(0.5)) * sc - f32(0.5) if half else pos * sc
        if align:
            idx = np.floor(pos * sc + f32(0.5))  # roundf: half away from zero
        else:
            idx = np.floor((pos + f32(0.5)) * sc if half else pos * sc)
        return np.clip(idx, 0, i - 1).astype(int)

    if not bilinear:
        return x[:, src(oh, ih)][:, :, src(ow, iw)]
    ys, xs = src(oh, ih), src(ow, iw)
    def weights(v, i):
        lo = np.floor(v)
        return (np.maximum(lo, 0).astype(int), np.minimum(np.ceil(v), i - 1).astype(int), (v - lo).astype(f32))
    y0, y1, yl = weights(ys, ih)
    x0, x1, xl = weights(xs, iw)
    tl, tr = x[:, y0][:, :, x0], x[:, y0][:, :, x1]
    bl, br = x[:, y1][:, :, x0], x[:, y1][:, :, x1]
    xl, yl = xl[None, None, :, None], yl[None, :, None, None]
    top = tl + (tr - tl) * xl
    bottom = bl + (br - bl) * xl
    return (top + (bottom - top) * yl).astype(f32)


def fake_quant(x, mn, mx, bits, narrow):
    """TensorFlow's fake_quant_ops_functor.h: nudge so that 0 is a level, then round."""
    x = x.astype(f32)
    mn, mx = np.broadcast_to(f32(mn), x.shape[-1:]), np.broadcast_to(f32(mx), x.shape[-1:])
    out = np.zeros_like(x)
    qmin, qmax = f32(1 if narrow else 0), f32((1 << bits) - 1)
    for ch in range(x.shape[-1]):
        lo, hi = f32(mn[ch]), f32(mx[ch])
        if lo == 0 and hi == 0:
            continue
        scale = (hi - lo) / (qmax - qmin)
        inv = (qmax - qmin) / (hi - lo)
        zp_from_min = qmin - lo / scale
        zp = qmin if zp_from_min < qmin else qmax if zp_from_min > qmax else f32(np.round(zp_from_min))
        nmin, nmax = (qmin - zp) * scale, (qmax - zp) * scale
        qzero = np.floor(-nmin * inv + f32(0.5))
        clamped = np.clip(x[..., ch], nmin, nmax) - nmin
        out[..., ch] = np.floor(clamped * inv - qzero + f32(0.5)) * scale
    return out


def space_to_depth(x, b):
    n, h, w, c = x.shape
    return x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, h // b, w // b, b * b * c)


def depth_to_space(x, b):
    n, h, w, c = x.shape
    return x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5).reshape(n, h * b, w * b, c // (b * b))


def lrn(x, r, bias, alpha, beta):
    sq = np.pad(x.astype(np.float64) ** 2, [(0, 0)] * 3 + [(r, r)])
    s = sum(sq[..., i:i + x.shape[-1]] for i in range(2 * r + 1))
    return (x / (bias + alpha * s) ** beta).astype(f32)


def erf(v):
    return np.vectorize(math.erf)(v.astype(np.float64)).astype(f32)


def nhwc(t):
    return np.moveaxis(t, 1, -1)


def nchw(t):
    return np.moveaxis(t, -1, 1)


# --- Cases ---------------------------------------------------------------------------------------

CASES += [
    Case("nn_matmul", "nn_matmul", {"a": rand(3, 4), "b": rand(5, 4), "c": rand(3, 2)},
         lambda a, b, c: {"mm_tb": a @ b.T, "mm_ta": a.T @ c}),
    Case("nn_batch_matmul", "nn_batch_matmul", {"x": rand(2, 3, 4), "y": rand(2, 5, 4), "z": rand(4, 6)},
         lambda x, y, z: {"bmm_adj": x @ y.transpose(0, 2, 1), "bmm_bcast": x @ z,
                          "bmm_v1": y @ x.transpose(0, 2, 1), "bmm_v3": y @ x.transpose(0, 2, 1)}),
    Case("nn_bias_add", "nn_bias_add", {"x": rand(2, 3, 4, 5), "b3": rand(3), "b5": rand(5)},
         lambda x, b3, b5: {"nchw": x + b3[:, None, None], "nhwc": x + b5, "v1": x + b5}),
    Case("nn_conv2d", "nn_conv2d",
         {"x": rand(1, 6, 7, 3), "f": rand(3, 3, 3, 4), "xg": rand(1, 5, 5, 4), "fg": rand(2, 2, 2, 6),
          "xc": rand(1, 3, 6, 7)},
         lambda x, f, xg, fg, xc: {
             "same_s2": conv_nd(x, f, [2, 2], "SAME"),
             "valid_d2": conv_nd(x, f, [1, 1], "VALID", [2, 2]),
             "explicit": conv_nd(x, f, [1, 2], [(2, 0), (1, 3)]),
             "grouped": conv_nd(xg, fg, [1, 1], "SAME", groups=2),
             "nchw": nchw(conv_nd(nhwc(xc), f, [2, 1], "SAME"))},
         rtol=1e-4, atol=1e-5),
    Case("nn_depthwise", "nn_depthwise", {"x": rand(1, 5, 6, 2), "f": rand(3, 3, 2, 3)},
         lambda x, f: {"same": conv_nd(x, f.reshape(3, 3, 1, 6), [1, 1], "SAME", groups=2),
                       "valid_s2": conv_nd(x, f.reshape(3, 3, 1, 6), [2, 2], "VALID", groups=2)},
         rtol=1e-4, atol=1e-5),
    Case("nn_conv_backprop", "nn_conv_backprop",
         {"f": rand(3, 3, 2, 4), "dy": rand(1, 4, 4, 4), "dyv": rand(1, 3, 3, 4)},
         lambda f, dy, dyv: {"same": conv_backprop_input((1, 7, 8, 2), f, dy, [2, 2], "SAME"),
                             "valid": conv_backprop_input((1, 8, 8, 2), f, dyv, [2, 2], "VALID")},
         rtol=1e-4, atol=1e-5),
    Case("nn_conv_backprop_dynamic", "nn_conv_backprop_dynamic",
         error="input 0 (input_sizes) must be a constant"),
    Case("nn_conv3d", "nn_conv3d", {"x": rand(1, 4, 5, 5, 2), "f": rand(2, 3, 3, 2, 3)},
         lambda x, f: {"conv3d": conv_nd(x, f, [1, 2, 2], "SAME")}, rtol=1e-4, atol=1e-5),
    Case("nn_pool", "nn_pool", {"x": rand(1, 7, 6, 3), "xc": rand(1, 3, 7, 6)},
         lambda x, xc: {"max_same": pool_nd(x, [3, 3], [2, 2], "SAME", "max"),
                        "avg_same": pool_nd(x, [3, 3], [2, 2], "SAME", "avg"),
                        "avg_valid": pool_nd(x, [2, 2], [2, 1], "VALID", "avg"),
                        "max_v2": pool_nd(x, [3, 3], [2, 2], "VALID", "max"),
                        "avg_nchw": nchw(pool_nd(nhwc(xc), [3, 3], [2, 2], "SAME", "avg"))}),
    Case("nn_pool_depth", "nn_pool_depth", error="must be 1 in the batch and channel dims"),
    Case("nn_pool3d", "nn_pool3d", {"x": rand(1, 4, 5, 5, 2)},
         lambda x: {"max3d": pool_nd(x, [2, 2, 2], [2, 2, 2], "SAME", "max"),
                    "avg3d": pool_nd(x, [2, 3, 3], [1, 2, 2], "SAME", "avg")}),
    Case("nn_fused_bn", "nn_fused_bn",
         {"x": rand(2, 3, 4, 5), "a_scale": rand(5), "a_offset": rand(5), "a_mean": rand(5),
          "a_var": rand(5, lo=0.1, hi=2.0), "b_scale": rand(3), "b_offset": rand(3), "b_mean": rand(3),
          "b_var": rand(3, lo=0.1, hi=2.0)},
         lambda x, a_scale, a_offset, a_mean, a_var, b_scale, b_offset, b_mean, b_var: {
             "bn_v3": (x - a_mean) / np.sqrt(a_var + f32(0.001)) * a_scale + a_offset,
             "bn_v3:1": a_mean, "bn_v3:2": a_var,
             "bn_nchw": ((x - b_mean[:, None, None]) / np.sqrt(b_var[:, None, None] + f32(1e-4))
                         * b_scale[:, None, None] + b_offset[:, None, None])},
         rtol=1e-4, atol=1e-5),
    Case("nn_fused_bn_training", "nn_fused_bn_training", error="training mode"),
    Case("nn_activations", "nn_activations", {"x": rand(3, 4, lo=-8, hi=8)},
         lambda x: {"relu": np.maximum(x, 0), "relu6": np.clip(x, 0, 6),
                    "elu": np.where(x > 0, x, np.expm1(x)).astype(f32),
                    "selu": (f32(1.0507009873554805) * np.where(
                        x > 0, x, f32(1.6732632423543772) * np.expm1(x))).astype(f32),
                    "sigmoid": (1 / (1 + np.exp(-x))).astype(f32), "tanh": np.tanh(x),
                    "softplus": np.log1p(np.exp(x)).astype(f32), "softsign": x / (1 + np.abs(x)),
                    "erf": erf(x), "leaky": np.where(x > 0, x, f32(0.3) * x)},
         rtol=1e-5, atol=1e-5),
    Case("nn_resize", "nn_resize", {"x": rand(1, 4, 5, 2)},
         lambda x: {f"{tag}_{mode}_{sz}": resize_tf(x, size, tag == "bl", mode == "align", mode == "half")
                    for tag in ("bl", "nn") for mode in ("asym", "align", "half")
                    for sz, size in (("a", (7, 3)), ("b", (3, 11)))},
         rtol=1e-5, atol=1e-6),
    Case("nn_resize_both", "nn_resize_both",
         error="align_corners and half_pixel_centers cannot both be true"),
    Case("nn_space_depth", "nn_space_depth", {"x": rand(1, 4, 6, 8)},
         lambda x: {"s2d": space_to_depth(x, 2), "d2s": depth_to_space(x, 2)}),
    Case("nn_lrn", "nn_lrn", {"x": rand(1, 3, 3, 8)},
         lambda x: {"lrn": lrn(x, 2, 1.5, 0.3, 0.6)}, rtol=1e-5, atol=1e-6),
    # Exact comparison: 0 must come out as exactly 0 (TensorFlow subtracts the zero level
    # before scaling), and row 0 holds zeros.
    Case("nn_fake_quant", "nn_fake_quant",
         {"x": lambda rng: np.concatenate([np.zeros((1, 3), f32),
                                           rng.uniform(-2.5, 2.5, (3, 3)).astype(f32)])},
         lambda x: {"args": fake_quant(x, -1.2, 2.1, 8, False),
                    "vars": fake_quant(x, -0.7, 1.3, 4, True),
                    "zeros": np.zeros_like(x),
                    "per_channel": fake_quant(x, [-1.0, -0.3, 0.0], [1.0, 2.5, 0.9], 5, False)},
         rtol=0, atol=0),
    Case("nn_fake_quant_bad", "nn_fake_quant_bad", error="min (1) must be smaller than max (-1)"),
]


def _graph_consts(stem):
    """The float Const nodes of a tests/tf/graphs .pbtxt, by name (for graphs with weights)."""
    import os
    import re
    text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphs", stem + ".pbtxt")).read()
    out = {}
    for m in re.finditer(r'name: "([^"]+)"\n  op: "Const"\n.*?tensor_shape \{([^}]*(?:\}[^}]*)*?)\} (float_val[^}]*)\}', text, re.S):
        dims = [int(d) for d in re.findall(r"size: (\d+)", m.group(2))]
        vals = [float(v) for v in re.findall(r"float_val: ([-0-9.e]+)", m.group(3))]
        out[m.group(1)] = np.array(vals, f32).reshape(dims)
    return out


def resnet_block(x):
    k = _graph_consts("nn_resnet_block")

    def bn(t, p):
        return (t - k[p + "mean"]) / np.sqrt(k[p + "var"] + f32(0.001)) * k[p + "scale"] + k[p + "offset"]
    h = np.maximum(bn(conv_nd(x, k["w1"], [1, 1], "SAME"), "bn1_"), 0)
    h = bn(conv_nd(h, k["w2"], [1, 1], "SAME"), "bn2_") + k["bias"]
    return {"out": np.maximum(h, 0).astype(f32)}


CASES += [
    Case("nn_resnet_block", "nn_resnet_block", {"x": rand(1, 5, 5, 3)}, resnet_block,
         rtol=1e-4, atol=1e-5),
]
