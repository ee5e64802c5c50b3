#!/usr/bin/python3
"""GraphDef-vs-ONNX twins: the same network written as a TensorFlow GraphDef and as an ONNX
model with the same weights (models/make_tf_models.py), run by `dlc run` on the same inputs;
the outputs of the two must agree. Each GraphDef is also converted to ONNX by dlc itself
(`dlc opt twin.pb -o twin.dlc.onnx`, the exporter) and run again: same outputs.

    check_twins.py --dlc BUILD/tools/dlc/dlc [--device cpu|gpu] [--workdir DIR]

Prints, per twin and output, the largest absolute and relative difference seen.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Twin -> (inputs: name -> shape, outputs).
TWINS = {
    "twin_mlp": ({"x": (3, 64)}, ["probs"]),
    "twin_resblock": ({"input": (2, 16, 16, 32)}, ["output"]),
    "twin_lstm": ({"inputs": (2, 4, 8)}, ["rnn/outputs", "final_state"]),
    "twin_bert": ({"input_tensor": (16, 32), "input_mask": (2, 8)},
                  ["bert/encoder/layer_0/output/LayerNorm/batchnorm/add_1"]),
}


def file_name(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".npy"


def run(dlc, model, feeds, out, device, extra):
    cmd = [dlc, "run", model, "-o", out, "--device", device] + extra
    for name, path in feeds.items():
        cmd += ["--input", f"{name}={path}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--workdir", help="where the twins are made (default: a temporary directory)")
    ap.add_argument("--no-generate", action="store_true",
                    help="use the twins already in --workdir (made elsewhere: the generator "
                         "needs protoc and python3-onnx)")
    ap.add_argument("--rtol", type=float, default=None)
    args = ap.parse_args()
    # The reference backend computes in f32 in both; op decompositions differ (LayerNorm as
    # Rsqrt vs Sqrt/Div, BatchNorm folded or not), so allow f32 rounding. The GPU's kernels
    # differ more (fused epilogues, different summation order).
    rtol = args.rtol or (1e-4 if args.device == "cpu" else 2e-3)
    atol = rtol / 10
    work = args.workdir or tempfile.mkdtemp(prefix="dlc-twins-")
    if not args.no_generate:
        subprocess.run([sys.executable, os.path.join(ROOT, "models", "make_tf_models.py"), work],
                       check=True, capture_output=True)
    rng = np.random.default_rng(11)
    failed = 0
    for twin, (inputs, outputs) in TWINS.items():
        feeds = {}
        for name, shape in inputs.items():
            if name == "input_mask":
                v = np.ones(shape, np.float32)
                v[1, 5:] = 0  # the second sequence is 5 tokens long
            else:
                v = rng.standard_normal(shape).astype(np.float32)
            feeds[name] = os.path.join(work, f"{twin}.{file_name(name)}")
            np.save(feeds[name], v)
        try:
            converted = os.path.join(work, f"{twin}.dlc.onnx")
            r = subprocess.run([args.dlc, "opt", os.path.join(work, f"{twin}.pb"), "-o", converted],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"dlc opt {twin}.pb -o {converted} failed:\n{r.stderr}")
            for fmt in ("pb", "onnx", "dlc.onnx"):
                run(args.dlc, os.path.join(work, f"{twin}.{fmt}"), feeds,
                    os.path.join(work, f"{twin}.{fmt}.out"), args.device, [])
        except RuntimeError as e:
            print(f"FAIL {twin}: {e}")
            failed += 1
            continue
        for out in outputs:
            a = np.load(os.path.join(work, f"{twin}.pb.out", file_name(out)))
            b = np.load(os.path.join(work, f"{twin}.onnx.out", file_name(out)))
            c = np.load(os.path.join(work, f"{twin}.dlc.onnx.out", file_name(out)))
            if not np.array_equal(a, c):
                print(f"FAIL {twin} {out}: the GraphDef converted to ONNX by dlc gives other "
                      f"outputs (max abs diff {np.abs(a - c).max():.3g})")
                failed += 1
                continue
            if a.shape != b.shape:
                print(f"FAIL {twin} {out}: shapes {a.shape} (GraphDef) vs {b.shape} (ONNX)")
                failed += 1
                continue
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            rel = diff.max() / max(np.abs(b).max(), 1e-30)
            ok = np.allclose(a, b, rtol=rtol, atol=atol)
            print(f"{'ok  ' if ok else 'FAIL'} {twin} {out} {list(a.shape)}: max abs diff "
                  f"{diff.max():.3g}, relative to max |y| {rel:.3g} ({args.device})")
            failed += not ok
    total = sum(len(o) for _, o in TWINS.values())
    print(f"{total - failed}/{total} twin outputs agree on {args.device}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
