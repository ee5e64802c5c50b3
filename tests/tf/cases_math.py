"""Cases for frontend/tf/ops_math.cc: elementwise math, comparisons, logic, reductions."""
import numpy as np

from check_ops import Case


def f32(a):
    return np.asarray(a, dtype=np.float32)


def _binary(x, y):
    with np.errstate(all="ignore"):
        out = {
            "add": x + y, "addv2": x + y, "sub": x - y, "mul": x * y, "realdiv": x / y,
            "maximum": np.maximum(x, y), "minimum": np.minimum(x, y), "pow": np.power(x, y),
            "squareddifference": (x - y) ** 2,
            "floordiv": np.floor(x / y), "floormod": x - np.floor(x / y) * y,
            "divnonan": np.where(y == 0, f32(0), x / y),
            "addn": x + x + y, "clip": np.minimum(np.maximum(x, f32(-0.5)), f32([0.5, 0.25, 1, 2])),
            "equal": x == y, "notequal": x != y, "less": x < y, "lessequal": x <= y,
            "greater": x > y, "greaterequal": x >= y,
        }
    return {k: (f32(v) if v.dtype != np.bool_ else v) for k, v in out.items()}


def _unary(x):
    return {k: f32(v) for k, v in {
        "abs": np.abs(x), "neg": -x, "exp": np.exp(x), "expm1": np.expm1(x), "log": np.log(x),
        "log1p": np.log1p(x), "sqrt": np.sqrt(x), "rsqrt": 1 / np.sqrt(x), "square": x * x,
        "reciprocal": 1 / x, "floor": np.floor(x), "ceil": np.ceil(x),
        "round": np.round(x),  # half to even, as TensorFlow's Round
        "sign": np.sign(x), "sin": np.sin(x), "cos": np.cos(x), "tan": np.tan(x),
        "atan": np.arctan(x), "sinh": np.sinh(x), "cosh": np.cosh(x), "asinh": np.arcsinh(x),
    }.items()} | {"isfinite": np.isfinite(x)}


def _int(a, b):
    trunc = (np.abs(a) // np.abs(b)) * np.sign(a) * np.sign(b)
    gt, lt = a > b, a < 0
    return {k: (v.astype(np.int32) if v.dtype != np.bool_ else v) for k, v in {
        "floordiv": np.floor_divide(a, b), "floormod": np.mod(a, b), "truncatemod": np.fmod(a, b),
        "truncatediv": trunc, "div": trunc, "add": a + b, "maximum": np.maximum(a, b),
        "addn": a + b + a, "and": gt & lt, "or": gt | lt, "not": ~gt,
    }.items()}


def _reduce(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    sm = e / e.sum(-1, keepdims=True)
    rev_incl = np.flip(np.cumsum(np.flip(x, 1), 1), 1)
    gt = x > 0
    return {
        "mean": f32(x.mean((0, 2))), "sum_keep": f32(x.sum((0, 2), keepdims=True)),
        "max": f32(x.max(-1)), "min": f32(x.min((0, 2))), "prod": f32(x.prod(-1)),
        "sum_none": x, "argmax": np.argmax(x, -1).astype(np.int32),
        "argmin": np.argmin(x, 1).astype(np.int64), "softmax": f32(sm),
        "logsoftmax": f32(np.log(sm)), "cumsum": f32(rev_incl - x),
        "all": gt.all(-1), "any": gt.any((0, 2), keepdims=True),
    }


def _signed_ints(rng, n):
    return rng.choice(np.array([-7, -3, -2, -1, 1, 2, 3, 5], np.int32), n)


CASES = [
    Case("math_binary", "math_binary",
         inputs={"x": lambda r: f32(r.uniform(-2, 2, (3, 4))),
                 "y": lambda r: f32([0.75, -1.5, 0.0, 2.0])},
         expect=_binary, rtol=1e-5, atol=1e-6),
    Case("math_unary", "math_unary",
         inputs={"x": lambda r: f32(r.integers(1, 12, (2, 5)) / 4)},  # has .5 ties for Round
         expect=_unary, rtol=2e-5, atol=1e-6),
    Case("math_int", "math_int",
         inputs={"a": lambda r: r.integers(-20, 20, 6).astype(np.int32),
                 "b": lambda r: _signed_ints(r, 6)},
         expect=_int),
    Case("math_reduce", "math_reduce",
         inputs={"x": lambda r: f32(r.standard_normal((2, 3, 4)))},
         expect=_reduce, rtol=1e-5, atol=1e-5),
]

CASES += [
    # keep_prob 1: the mask folds to ones (no random op left), the output is x exactly.
    Case("math_dropout_folded", "math_dropout",
         inputs={"x": lambda r: f32(r.standard_normal((2, 3)))},
         expect=lambda x: {"dropout/mul": x}, rtol=0, atol=0),
]
