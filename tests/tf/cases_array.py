"""Cases for frontend/tf/ops_array*.cc: shapes and data movement.

Expectations follow TensorFlow's documented semantics, written with NumPy (StridedSlice as the
Python slice it stands for).
"""
import numpy as np

from check_ops import Case


def f32(*shape, lo=-1.0, hi=1.0):
    return lambda rng: rng.uniform(lo, hi, shape).astype(np.float32)


def ints(*shape, lo=0, hi=8, dtype=np.int32):
    return lambda rng: rng.integers(lo, hi, shape).astype(dtype)


def bools(*shape):
    return lambda rng: rng.integers(0, 2, shape).astype(bool)


def const(a):
    return lambda rng: np.asarray(a)


def one_hot(idx, depth, on, off, axis):
    out = np.full(idx.shape + (depth,), off, np.float32)
    for i, v in enumerate(idx):
        if 0 <= v < depth:
            out[i, v] = on
    return out if axis == -1 else np.moveaxis(out, -1, axis)


def reverse_sequence(x, lens, seq, batch):
    out = x.copy()
    for b, n in enumerate(lens):
        src = [slice(None)] * x.ndim
        src[batch] = b
        src[seq] = slice(0, n)
        out[tuple(src)] = np.flip(x[tuple(src)], axis=seq - (batch < seq))
    return out


def unique(x):
    y, first, inverse = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first)  # TensorFlow keeps the order of first occurrence
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return y[order], rank[inverse]


def segment_sum(data, ids, num):
    out = np.zeros((num,) + data.shape[ids.ndim:], data.dtype)
    np.add.at(out, ids, data)
    return out


def space_to_batch(x, block, pads):
    # tf.space_to_batch_nd, as its documentation defines it (reshape, permute, reshape).
    x = np.pad(x, [(0, 0)] + pads + [(0, 0)] * (x.ndim - 1 - len(block)))
    b, m = x.shape[0], len(block)
    split = [b]
    for k in range(m):
        split += [x.shape[k + 1] // block[k], block[k]]
    x = x.reshape(split + list(x.shape[m + 1:]))
    perm = [2 * k + 2 for k in range(m)] + [0] + [2 * k + 1 for k in range(m)]
    perm += list(range(2 * m + 1, x.ndim))
    x = x.transpose(perm)
    return x.reshape([b * int(np.prod(block))] + [split[2 * k + 1] for k in range(m)] +
                     list(x.shape[2 * m + 1:]))


def batch_to_space(x, block, crops):
    m = len(block)
    b = x.shape[0] // int(np.prod(block))
    x = x.reshape(list(block) + [b] + list(x.shape[1:]))
    perm = [m]
    for k in range(m):
        perm += [m + 1 + k, k]
    perm += list(range(2 * m + 1, x.ndim))
    x = x.transpose(perm)
    x = x.reshape([b] + [x.shape[1 + 2 * k] * block[k] for k in range(m)] +
                  list(x.shape[2 * m + 1:]))
    idx = [slice(None)] + [slice(c0, x.shape[k + 1] - c1) for k, (c0, c1) in enumerate(crops)]
    return x[tuple(idx)]


CASES = [
    Case("array_cast", "array_cast",
         inputs={"x": f32(3, 4, lo=-5, hi=5), "n": ints(5, lo=-9, hi=9)},
         expect=lambda x, n: {"to_int": np.trunc(x).astype(np.int32), "to_bool": x != 0,
                              "to_float": n.astype(np.float32)}),
    Case("array_reshape", "array_reshape",
         inputs={"x": f32(2, 3, 4), "z": f32(0, 3)},
         expect=lambda x, z: {"r1": x.reshape(-1, 4), "r2": x.reshape(4, 3, 2),
                              "r3": np.zeros((3, 0), np.float32)}),
    Case("array_reshape_bad", "array_reshape_bad",
         error="node 'bad_reshape' (Reshape): cannot reshape f32[2,3] (6 elements) to [4,2]"),
    Case("array_squeeze", "array_squeeze",
         inputs={"x": f32(1, 3, 1, 2)},
         expect=lambda x: {"sq_all": x.reshape(3, 2), "sq_2": x[:, :, 0, :],
                           "sq_neg": x[0, :, 0, :], "ed_last": x[..., np.newaxis],
                           "ed_1": x[:, np.newaxis]}),
    Case("array_squeeze_symbolic", "array_squeeze_symbolic",
         inputs={"x": f32(2, 1)},
         error="node 'sq' (Squeeze): Squeeze with no squeeze_dims needs every dim known"),
    Case("array_transpose", "array_transpose",
         inputs={"x": f32(2, 3, 4)},
         expect=lambda x: {"t": x.transpose(2, 0, 1)}),
    Case("array_transpose_dynamic", "array_transpose_dynamic",
         inputs={"x": f32(2, 3, 4), "perm": const(np.array([2, 0, 1], np.int32))},
         error="node 't' (Transpose): input 1 (perm) must be a constant"),
    Case("array_concat", "array_concat",
         inputs={"a": f32(2, 3), "b": f32(2, 2), "c": f32(1, 3)},
         expect=lambda a, b, c: {"cat_v2": np.concatenate([a, b], -1),
                                 "cat_v1": np.concatenate([a, c], 0)}),
    Case("array_pack_unpack", "array_pack_unpack",
         inputs={"a": f32(2, 3), "b": f32(2, 3), "x": f32(3, 2, 4)},
         expect=lambda a, b, x: {"pack_1": np.stack([a, b], 1),
                                 "pack_neg": np.stack([a, b, a], -1),
                                 "unpack": x[:, 0], "unpack:1": x[:, 1]}),
    Case("array_split", "array_split",
         inputs={"x": f32(2, 6)},
         expect=lambda x: {"split": x[:, 0:2], "split:1": x[:, 2:4], "split:2": x[:, 4:6],
                           "splitv": x[:, 0:1], "splitv:1": x[:, 1:4], "splitv:2": x[:, 4:6]}),
    Case("array_slice", "array_slice", gpu=False,  # data-dependent shape: the GPU backend needs static shapes
         inputs={"x": f32(4, 5, 6), "begin": const(np.array([2, 1, 0], np.int32)),
                 "size": const(np.array([-1, 3, 2], np.int32))},
         expect=lambda x, begin, size: {"s_const": x[1:3, 0:, 2:5], "s_dyn": x[2:, 1:4, 0:2]}),
    Case("array_strided_slice", "array_strided_slice",
         inputs={"x": f32(4, 5, 6)},
         expect=lambda x: {"ss_masks": x[1:3, :, -1::-1],
                           "ss_ellipsis_new_shrink": x[..., np.newaxis, 2],
                           "ss_shrink_neg": x[-1, 4:0:-2, 1:],
                           "ss_new_first": x[np.newaxis, ..., 1:5:2],
                           "ss_short": x[1:-1],
                           "ss_empty": x[:, -10::-1],
                           "ss_mid_ellipsis": x[1, ..., -2]}),
    Case("array_strided_slice_symbolic", "array_strided_slice_symbolic",
         inputs={"x": f32(5, 6)},
         expect=lambda x: {"ss_last_row": x[-1], "ss_reversed": x[::-1, ::2],
                           "ss_tail": x[-3:, 1:-1], "ss_rev_from": x[-2::-1, 5::-3]}),
    Case("array_shape_arith", "array_shape_arith",
         inputs={"x": f32(5, 6)},
         expect=lambda x: {"y": x.reshape(5, 2, 3)}),
    Case("array_pad", "array_pad",
         inputs={"x": f32(3, 4)},
         expect=lambda x: {"pad": np.pad(x, [(1, 0), (2, 1)]),
                           "pad_v2": np.pad(x, [(1, 0), (2, 1)], constant_values=1.5),
                           "reflect": np.pad(x, [(1, 1), (2, 2)], mode="reflect"),
                           "symmetric": np.pad(x, [(2, 1), (0, 3)], mode="symmetric")}),
    Case("array_mirror_pad_bad", "array_mirror_pad_bad",
         inputs={"x": f32(2, 3)},
         error="node 'mp' (MirrorPad): SYMMETRIC paddings 3 and 0 exceed the size 2 of dim 0"),
    Case("array_tile_fill", "array_tile_fill",
         inputs={"x": f32(2, 3), "v": const(np.float32(2.5)), "n": ints(3, 1)},
         expect=lambda x, v, n: {"tile": np.tile(x, (2, 1)),
                                 "fill": np.full((2, 3), 2.5, np.float32),
                                 "zeros": np.zeros_like(x), "ones": np.ones_like(n),
                                 "bcast": np.broadcast_to(n, (2, 3, 4))}),
    Case("array_shape", "array_shape",
         inputs={"x": f32(2, 3, 4), "y": ints(5)},
         expect=lambda x, y: {"shape32": np.array([2, 3, 4], np.int32),
                              "shape64": np.array([2, 3, 4], np.int64),
                              "shape_n": np.array([2, 3, 4], np.int32),
                              "shape_n:1": np.array([5], np.int32),
                              "size": np.int32(24), "rank": np.int32(1)}),
    Case("array_range", "array_range", gpu=False,  # data-dependent shape: the GPU backend needs static shapes
         inputs={"limit": const(np.int32(11))},
         expect=lambda limit: {"irange": np.arange(1, 11, 3, dtype=np.int32),
                               "frange": np.arange(0.5, 2.0, 0.25, dtype=np.float32)}),
    Case("array_gather", "array_gather",
         inputs={"params": f32(5, 4), "idx": ints(2, 3, hi=4),
                 "idx0": ints(3, hi=5, dtype=np.int64),
                 "nd": lambda rng: np.stack([rng.integers(0, 5, 3), rng.integers(0, 4, 3)],
                                            1).astype(np.int32)},
         expect=lambda params, idx, idx0, nd: {"gather_v2": np.take(params, idx, axis=1),
                                               "gather_v1": params[idx0],
                                               "gather_nd": params[nd[:, 0], nd[:, 1]]}),
    Case("array_gather_batch_dims", "array_gather_batch_dims",
         inputs={"params": f32(2, 4), "idx": ints(2, 3, hi=4)},
         error="node 'gather' (GatherV2): batch_dims 1 is not supported (only 0)"),
    Case("array_one_hot", "array_one_hot",
         inputs={"idx": const(np.array([0, 2, -1, 1, 3], np.int32))},
         expect=lambda idx: {"oh_last": one_hot(idx, 3, 5.0, -1.0, -1),
                             "oh_0": one_hot(idx, 3, 5.0, -1.0, 0)}),
    Case("array_select", "array_select",
         inputs={"c1": bools(3), "c2": bools(3, 2), "c3": bools(1, 2), "x": f32(3, 2),
                 "y": f32(3, 2), "s": const(np.float32(7))},
         expect=lambda c1, c2, c3, x, y, s: {"rows": np.where(c1[:, None], x, y),
                                             "same": np.where(c2, x, y),
                                             "v2": np.where(c3, x, s)}),
    Case("array_where", "array_where", gpu=False,  # data-dependent shape: the GPU backend needs static shapes
         inputs={"b": bools(3, 4), "n": ints(2, 2, 3, hi=2)},
         expect=lambda b, n: {"where_bool": np.argwhere(b), "where_int": np.argwhere(n)}),
    Case("array_reverse", "array_reverse",
         inputs={"x": f32(2, 3, 4), "s": f32(3, 5, 2), "t": f32(3, 2, 5),
                 "lens": const(np.array([2, 5, 0], np.int64))},
         expect=lambda x, s, t, lens: {"rev": x[::-1, :, ::-1],
                                       "rs": reverse_sequence(s, lens, 1, 0),
                                       "rs_t": reverse_sequence(t, lens, 2, 0)}),
    Case("array_topk", "array_topk",
         inputs={"x": f32(3, 6)},
         expect=lambda x: {"topk": -np.sort(-x, axis=1)[:, :3],
                           "topk:1": np.argsort(-x, axis=1)[:, :3].astype(np.int32)}),
    Case("array_unique", "array_unique", gpu=False,  # data-dependent shape: the GPU backend needs static shapes
         inputs={"x": const(np.array([4, 1, 4, 7, 1, 0, 7, 7, 3, 4], np.int32))},
         expect=lambda x: {"u": unique(x)[0], "u:1": unique(x)[1].astype(np.int32),
                           "u64": unique(x)[0], "u64:1": unique(x)[1].astype(np.int64)}),
    Case("array_segment_sum", "array_segment_sum",
         inputs={"data": f32(4, 3), "ids": const(np.array([3, 0, 3, 1], np.int32)),
                 "data2": f32(2, 2, 3), "ids2": const(np.array([[4, 0], [4, 2]], np.int64))},
         expect=lambda data, ids, data2, ids2: {"seg": segment_sum(data, ids, 5),
                                                "seg2": segment_sum(data2, ids2, 5)}),
    Case("array_space_batch", "array_space_batch",
         inputs={"x": f32(2, 4, 3, 2), "y": f32(8, 2, 3, 1)},
         expect=lambda x, y: {"s2b": space_to_batch(x, [2, 2], [(1, 1), (0, 1)]),
                              "b2s": batch_to_space(y, [2, 2], [(0, 1), (1, 1)])}),
    Case("array_einsum", "array_einsum",
         inputs={"a": f32(2, 3), "b": f32(3, 4), "p": f32(2, 3, 4), "q": f32(2, 5, 4)},
         expect=lambda a, b, p, q: {"mm": a @ b, "bmm": np.einsum("bij,bkj->bik", p, q)}),
]
