#!/usr/bin/python3
"""The 54 real TensorFlow graphs of tests/tf/nnfusion: each one imports and runs through
`dlc run`, with outputs equal to a NumPy evaluation of the graph (an interpreter of the ops
they use, written from TensorFlow's op documentation), or is refused with the error for
training ops / unfrozen variables.

    check_nnfusion.py --dlc BUILD/tools/dlc/dlc --pymod BUILD/tests/tf/py [--device cpu|gpu]

--pymod is where protoc --python_out put graph_def_pb2.py (built from dlc's own schema).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPHS = os.path.join(HERE, "nnfusion")

# Graphs an inference compiler must refuse, and the text the error must contain.
REFUSED = {
    "frozen_apply_momentum_graph": "training op",
    "frozen_bias_add_grad_graph": "training op",
    "frozen_sparse_apply_momentum_graph": "training op",
    "frozen_scatteradd_graph": "the graph is not frozen",
    "frozen_scattersub_graph": "the graph is not frozen",
    "frozen_scattermax_graph": "the graph is not frozen",
    "frozen_scattermin_graph": "the graph is not frozen",
}

# Graphs the GPU backend cannot run yet, and why (it needs static shapes).
GPU_SKIP = {"frozen_reshape_placeholder_graph":
            "the Reshape's target shape is a graph input: a data-dependent shape"}

# Graphs that need more than random inputs: extra `dlc run` flags and fixed feeds.
EXTRA_ARGS = {"frozen_reshape_placeholder_graph": ["--input-shape", "v3=3"]}
FIXED_FEEDS = {"frozen_reshape_placeholder_graph": {"v3": np.array([2, 9, 1], np.int64)}}

NP = {1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 6: np.int8, 9: np.int64,
      10: np.bool_, 19: np.float16}


def tensor_value(pb, t):
    dt = NP[t.dtype]
    shape = [d.size for d in t.tensor_shape.dim]
    n = int(np.prod(shape)) if shape else 1
    if t.tensor_content:
        return np.frombuffer(t.tensor_content, dtype=dt).reshape(shape).copy()
    vals = {1: t.float_val, 2: t.double_val, 3: t.int_val, 4: t.int_val, 6: t.int_val,
            9: t.int64_val, 10: t.bool_val}[t.dtype]
    vals = list(vals)
    if not vals:
        return np.zeros(shape, dt)
    vals = vals + [vals[-1]] * (n - len(vals))  # TF repeats the last value
    return np.array(vals, dtype=dt).reshape(shape)


def same_pads(size, k, s, d=1):
    eff = (k - 1) * d + 1
    out = -(-size // s)
    total = max((out - 1) * s + eff - size, 0)
    return total // 2, total - total // 2


def conv2d_nhwc(x, w, strides, padding, dilations=(1, 1), depthwise=False):
    n, h, wd, c = x.shape
    kh, kw = w.shape[:2]
    sh, sw = strides
    dh, dw = dilations
    if padding == "SAME":
        (pt, pb), (pl, pr) = same_pads(h, kh, sh, dh), same_pads(wd, kw, sw, dw)
    else:
        pt = pb = pl = pr = 0
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    oh = (xp.shape[1] - ((kh - 1) * dh + 1)) // sh + 1
    ow = (xp.shape[2] - ((kw - 1) * dw + 1)) // sw + 1
    out = None
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw, :]
            if depthwise:  # w [kh, kw, c, m] -> out [n, oh, ow, c*m]
                term = (patch[..., :, None] * w[i, j][None, None, None]).reshape(n, oh, ow, -1)
            else:
                term = np.einsum("nhwc,co->nhwo", patch, w[i, j])
            out = term if out is None else out + term
    return out.astype(x.dtype)


def pool(x, ksize, strides, padding, fmt, kind):
    if fmt.startswith("NC"):  # to channels-last and back
        perm = [0] + list(range(2, x.ndim)) + [1]
        inv = np.argsort(perm)
        return pool(x.transpose(perm), [ksize[0]] + ksize[2:] + [ksize[1]],
                    [strides[0]] + strides[2:] + [strides[1]], padding, "NHWC", kind).transpose(inv)
    sp = x.ndim - 2
    k, s = ksize[1:1 + sp], strides[1:1 + sp]
    pads = [same_pads(x.shape[1 + i], k[i], s[i]) if padding == "SAME" else (0, 0) for i in range(sp)]
    fill = -np.inf if kind == "max" else 0
    xp = np.pad(x.astype(np.float64), [(0, 0)] + pads + [(0, 0)], constant_values=fill)
    ones = np.pad(np.ones(x.shape[1:1 + sp]), pads)
    outs = [(xp.shape[1 + i] - k[i]) // s[i] + 1 for i in range(sp)]
    res = np.empty([x.shape[0]] + outs + [x.shape[-1]])
    for idx in np.ndindex(*outs):
        win = tuple(slice(idx[i] * s[i], idx[i] * s[i] + k[i]) for i in range(sp))
        block = xp[(slice(None),) + win + (slice(None),)]
        axes = tuple(range(1, 1 + sp))
        if kind == "max":
            res[(slice(None),) + idx + (slice(None),)] = block.max(axes)
        else:
            res[(slice(None),) + idx + (slice(None),)] = block.sum(axes) / ones[win].sum()
    return res.astype(x.dtype)


def evaluate(gd, feeds):
    """Values of every tensor, name -> array ("name" is output 0, "name:k" output k)."""
    vals = {}
    nodes = {n.name: n for n in gd.node}

    def get(ref):
        name, _, k = ref.partition(":")
        if name not in vals:
            run(nodes[name])
        return vals[name][int(k or 0)]

    def attr(n, key, default=None):
        if key not in n.attr:
            return default
        a = n.attr[key]
        f = a.WhichOneof("value")
        if f == "list":
            return list(a.list.i)
        return {"s": lambda: a.s.decode(), "i": lambda: a.i, "f": lambda: a.f, "b": lambda: a.b,
                "type": lambda: a.type}.get(f, lambda: None)()

    def run(n):
        ins = [get(i) for i in n.input if not i.startswith("^")]
        op = n.op
        out = None
        if op == "Placeholder":
            out = [feeds[n.name]]
        elif op == "Const":
            out = [tensor_value(None, n.attr["value"].tensor)]
        elif op == "Identity":
            out = ins
        elif op in ("Abs", "Exp", "Relu", "Sigmoid", "Tanh"):
            f = {"Abs": np.abs, "Exp": np.exp, "Relu": lambda v: np.maximum(v, 0),
                 "Sigmoid": lambda v: 1 / (1 + np.exp(-v)), "Tanh": np.tanh}[op]
            out = [f(ins[0]).astype(ins[0].dtype)]
        elif op in ("Add", "AddV2"):
            out = [ins[0] + ins[1]]
        elif op == "AddN":
            out = [sum(ins[1:], ins[0])]
        elif op == "Pow":
            with np.errstate(all="ignore"):
                out = [np.power(ins[0], ins[1]).astype(ins[0].dtype)]
        elif op == "FloorMod":
            out = [np.mod(ins[0], ins[1]).astype(ins[0].dtype)]
        elif op == "FloorDiv":
            out = [np.floor_divide(ins[0], ins[1]).astype(ins[0].dtype)]
        elif op == "Softmax":
            e = np.exp(ins[0] - ins[0].max(-1, keepdims=True))
            out = [(e / e.sum(-1, keepdims=True)).astype(ins[0].dtype)]
        elif op == "Cast":
            out = [ins[0].astype(NP[attr(n, "DstT")])]
        elif op == "ConcatV2":
            out = [np.concatenate(ins[:-1], axis=int(ins[-1]))]
        elif op == "Fill":
            out = [np.full(ins[0], ins[1], dtype=ins[1].dtype)]
        elif op == "Tile":
            out = [np.tile(ins[0], ins[1])]
        elif op == "Transpose":
            out = [ins[0].transpose(ins[1])]
        elif op == "Reshape":
            out = [ins[0].reshape(ins[1])]
        elif op == "Slice":
            b, s = ins[1], ins[2]
            out = [ins[0][tuple(slice(bb, None if ss == -1 else bb + ss) for bb, ss in zip(b, s))]]
        elif op == "Split":
            out = np.split(ins[1], attr(n, "num_split"), axis=int(ins[0]))
        elif op == "SplitV":
            sizes = list(ins[1])
            axis = int(ins[2])
            if -1 in sizes:
                sizes[sizes.index(-1)] = ins[0].shape[axis] - (sum(sizes) + 1)
            out = np.split(ins[0], np.cumsum(sizes)[:-1], axis=axis)
        elif op in ("Pad", "PadV2"):
            cv = ins[2] if op == "PadV2" else 0
            out = [np.pad(ins[0], ins[1], constant_values=cv)]
        elif op == "OneHot":
            idx, depth, on, off = ins
            axis = attr(n, "axis", -1)
            hot = np.eye(int(depth), dtype=bool)[np.clip(idx, 0, depth - 1)] & \
                ((idx >= 0) & (idx < depth))[..., None]
            r = np.where(hot, on, off).astype(on.dtype)
            out = [np.moveaxis(r, -1, axis) if axis != -1 else r]
        elif op in ("Select", "SelectV2"):
            c, x, y = ins
            if op == "Select" and c.ndim == 1 and x.ndim > 1:
                c = c.reshape((-1,) + (1,) * (x.ndim - 1))
            out = [np.where(c, x, y)]
        elif op == "ReverseSequence":
            x, lens = ins[0].copy(), ins[1]
            sd, bd = attr(n, "seq_dim"), attr(n, "batch_dim", 0)
            for b in range(x.shape[bd]):
                sl = [slice(None)] * x.ndim
                sl[bd] = b
                sl[sd] = slice(0, int(lens[b]))
                part = ins[0][tuple(sl)]
                x[tuple(sl)] = np.flip(part, axis=sd - (1 if bd < sd else 0))
            out = [x]
        elif op == "UnsortedSegmentSum":
            data, ids, num = ins
            res = np.zeros((int(num),) + data.shape[ids.ndim:], data.dtype)
            np.add.at(res, ids, data)
            out = [res]
        elif op in ("All", "Any", "Mean", "Sum"):
            axes = tuple(np.atleast_1d(ins[1]).tolist())
            f = {"All": np.all, "Any": np.any, "Mean": np.mean, "Sum": np.sum}[op]
            out = [np.asarray(f(ins[0], axis=axes, keepdims=bool(attr(n, "keep_dims", False))))
                   .astype(ins[0].dtype)]
        elif op == "MatMul":
            a = ins[0].T if attr(n, "transpose_a", False) else ins[0]
            b = ins[1].T if attr(n, "transpose_b", False) else ins[1]
            out = [(a @ b).astype(ins[0].dtype)]
        elif op in ("BatchMatMul", "BatchMatMulV2"):
            a = np.swapaxes(ins[0], -1, -2) if attr(n, "adj_x", False) else ins[0]
            b = np.swapaxes(ins[1], -1, -2) if attr(n, "adj_y", False) else ins[1]
            out = [(a @ b).astype(ins[0].dtype)]
        elif op == "BiasAdd":
            b = ins[1]
            if attr(n, "data_format", "NHWC") == "NCHW":
                b = b.reshape((-1,) + (1,) * (ins[0].ndim - 2))
            out = [ins[0] + b]
        elif op in ("Conv2D", "DepthwiseConv2dNative"):
            assert attr(n, "data_format", "NHWC") == "NHWC"
            st, dl = attr(n, "strides"), attr(n, "dilations", [1, 1, 1, 1])
            out = [conv2d_nhwc(ins[0], ins[1], st[1:3], attr(n, "padding"), dl[1:3],
                               depthwise=op != "Conv2D")]
        elif op in ("AvgPool", "MaxPool", "MaxPool3D"):
            out = [pool(ins[0], attr(n, "ksize"), attr(n, "strides"), attr(n, "padding"),
                        attr(n, "data_format", "NHWC"), "avg" if op == "AvgPool" else "max")]
        elif op == "FusedBatchNorm":
            x, scale, offset, mean, var = ins
            eps = attr(n, "epsilon", 1e-4)
            out = [((x - mean) / np.sqrt(var + eps) * scale + offset).astype(x.dtype)]
        else:
            raise NotImplementedError(op)
        vals[n.name] = out

    return vals, get


def feed_for(node, rng):
    dt = NP[node.attr["dtype"].type]
    shape = [d.size if d.size >= 0 else 2 for d in node.attr["shape"].shape.dim] \
        if "shape" in node.attr else [2]
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        return rng.integers(1, 5, shape).astype(dt)
    return rng.uniform(0.5, 1.5, shape).astype(dt)  # positive: Pow and Exp stay tame


def check(path, args, pb2):
    stem = os.path.basename(path)[:-3]
    gd = pb2.GraphDef()
    with open(path, "rb") as f:
        gd.ParseFromString(f.read())
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [args.dlc, "run", path, "-o", os.path.join(tmp, "out"), "--device", args.device]
        feeds = {}
        for n in gd.node:
            if n.op == "Placeholder":
                feeds[n.name] = FIXED_FEEDS.get(stem, {}).get(n.name)
                if feeds[n.name] is None:
                    feeds[n.name] = feed_for(n, rng)
                f = os.path.join(tmp, f"in{len(feeds)}.npy")
                np.save(f, feeds[n.name])
                cmd += ["--input", f"{n.name}={f}"]
        cmd += EXTRA_ARGS.get(stem, [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if stem in REFUSED:
            if r.returncode == 0 or REFUSED[stem] not in r.stderr:
                return f"expected a refusal containing {REFUSED[stem]!r}, got exit " \
                       f"{r.returncode}:\n{r.stderr}"
            return None
        if r.returncode != 0:
            return f"dlc failed:\n{r.stderr}"
        _, get = evaluate(gd, feeds)
        consumed = {i.lstrip("^").partition(":")[0] for n in gd.node for i in n.input}
        sinks = [n for n in gd.node if n.name not in consumed
                 and n.op not in ("Const", "NoOp", "Assert", "Placeholder")]
        compared = 0
        for n in sinks:
            for k in range(8):
                ref = n.name if k == 0 else f"{n.name}:{k}"
                f = os.path.join(tmp, "out", re.sub(r"[^A-Za-z0-9._-]", "_", ref) + ".npy")
                if not os.path.exists(f):
                    break
                if k > 0 and n.op.startswith("FusedBatchNorm"):
                    continue  # batch statistics: only y is compared
                want = np.asarray(get(ref))
                got = np.load(f)
                compared += 1
                if got.shape != want.shape:
                    return f"{ref}: shape {got.shape}, expected {want.shape}"
                if got.dtype != want.dtype:
                    return f"{ref}: dtype {got.dtype}, expected {want.dtype}"
                if not np.allclose(got, want, rtol=1e-4, atol=1e-5, equal_nan=True):
                    return f"{ref}: got\n{got}\nexpected\n{want}"
        if compared == 0:
            return f"no output compared (sinks {[n.name for n in sinks]}, files " \
                   f"{os.listdir(os.path.join(tmp, 'out'))})"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--pymod", required=True)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    sys.path.insert(0, args.pymod)
    import graph_def_pb2 as pb2  # generated at build time from frontend/tf/graph_def.proto
    files = sorted(f for f in os.listdir(GRAPHS) if f.endswith(".pb"))
    failed = 0
    for f in list(files):
        if args.device == "gpu" and f[:-3] in GPU_SKIP:
            print(f"skip {f}: {GPU_SKIP[f[:-3]]}")
            files.remove(f)
            continue
        msg = check(os.path.join(GRAPHS, f), args, pb2)
        print(f"{'FAIL' if msg else 'ok  '} {f}" + (f": {msg}" if msg else ""))
        failed += bool(msg)
    print(f"{len(files) - failed}/{len(files)} real TensorFlow graphs import and match NumPy "
          f"(or are refused as they must be) on {args.device}")
    sys.exit(1 if failed or not files else 0)


if __name__ == "__main__":
    main()
