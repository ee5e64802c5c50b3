#!/usr/bin/python3
"""Int8 ResNet-50 under several dlc flag sets, kernel by kernel, in one GPU call: the model from
make_resnet50.py (random weights, no PyTorch), quantized by `dlc quantize --method minmax` on
two random samples, then per batch and per variant `dlc run --precision fp16 --benchmark
--profile --profile-json`, the float model's fp16 profile beside them, and the profiles lined
up by profile_compare.py (each kernel's tile, the fastest variant per kernel).

    /usr/bin/python3 tools/bench/int8_variants.py --dlc build/release/tools/dlc/dlc --out DIR \\
        [--batches 32,1] [--variant plain=--int8-pointwise-plain] [--variant hc=--hopper-conv]

Writes DIR/p_<batch>_<variant>.json and DIR/compare_<batch>.txt; prints the benchmark medians
and each comparison's last lines. `scripts/gpu-check.sh ... int8-variants` runs it with the
variants that sessions 44-48 left open (int8 1x1 convolutions on a plain A, the Hopper kernels
for every convolution).
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import profile_compare  # noqa: E402


def run(cmd, log):
    with open(log, "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, text=True)
    return p.returncode


def median_ms(log):
    """The median of `dlc run --benchmark`'s line, or None."""
    with open(log) as f:
        for line in f:
            if "benchmark:" in line and "median" in line:
                return float(line.split("median")[1].split("ms")[0])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--batches", default="32,1")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=FLAGS")
    args = ap.parse_args()
    variants = [("base", [])]
    for v in args.variant:
        name, sep, flags = v.partition("=")
        if not sep or not name:
            ap.error(f"--variant '{v}' is not NAME=FLAGS")
        variants.append((name, shlex.split(flags)))
    batches = [int(b) for b in args.batches.split(",") if b]
    os.makedirs(args.out, exist_ok=True)
    fp32 = os.path.join(args.out, "r50.onnx")
    if run([sys.executable, os.path.join(HERE, "make_resnet50.py"), fp32, "--batch-symbolic"],
           os.path.join(args.out, "make.log")):
        sys.exit("make_resnet50.py failed: see make.log")
    rng = np.random.default_rng(0)
    cal = os.path.join(args.out, "cal")
    for i in range(2):
        os.makedirs(os.path.join(cal, f"s{i}"), exist_ok=True)
        np.save(os.path.join(cal, f"s{i}", "input.npy"),
                rng.standard_normal((1, 3, 224, 224)).astype(np.float32))
    int8 = os.path.join(args.out, "r50q.onnx")
    if run([args.dlc, "quantize", fp32, "--calibration", cal, "--method", "minmax", "-o", int8],
           os.path.join(args.out, "quantize.log")):
        sys.exit("dlc quantize failed: see quantize.log")
    medians = {}
    for b in batches:
        x = os.path.join(args.out, f"x{b}.npy")
        np.save(x, rng.standard_normal((b, 3, 224, 224)).astype(np.float32))
        profiles = []
        for name, flags, model in [("fp16", [], fp32)] + [(n, f, int8) for n, f in variants]:
            prof = os.path.join(args.out, f"p_{b}_{name}.json")
            log = os.path.join(args.out, f"run_{b}_{name}.log")
            rc = run([args.dlc, "run", model, "--input", f"input={x}", "--precision", "fp16",
                      "--benchmark", str(args.runs), "--profile", "--profile-json", prof] + flags,
                     log)
            medians[(b, name)] = median_ms(log) if rc == 0 else None
            print(f"b{b} {name:<10} {' '.join(flags):<40} "
                  f"{medians[(b, name)] if rc == 0 else 'FAILED (' + log + ')'}", flush=True)
            if rc == 0:
                with open(prof) as f:
                    profiles.append((name, json.load(f)))
        if not profiles:
            continue
        rows, totals = profile_compare.compare(profiles)
        path = os.path.join(args.out, f"compare_{b}.txt")
        with open(path, "w") as f:
            profile_compare.print_table(rows, totals, [lb for lb, _ in profiles], out=f)
        with open(path) as f:
            print("".join(f.readlines()[-2:]), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
