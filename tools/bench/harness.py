#!/usr/bin/env python3
"""dlc against PyTorch, both sides timed by one harness in one process (the H200 machine).

    python3 tools/bench/harness.py --dlc build/release/tools/dlc/dlc --out OUTDIR [--models resnet50]

For each model (the same exports as tools/bench/gpu_bench.py: torchvision/transformers, random
weights, static shapes), `dlc compile -o model.so` builds a model library; the library is
loaded into this process with ctypes (tools/bench/dlc_ctypes.py), its input and output bound
in place to torch CUDA tensors, and a dlc run is `dlc_session_run_async` on torch's current
stream. PyTorch eager, torch.compile and torch.compile(mode="reduce-overhead") run on the same
input tensor. All four are timed by the same function: triton.testing.do_bench (warm-up, many
calls, the L2 cache flushed before each, CUDA events, the median), or where triton is missing
the same procedure written out here. The table gives each side's median and dlc's ratio to the
fastest PyTorch mode; dlc's output is checked against eager's. Results: OUTDIR/harness.json.

--int8 also times, for the float16 ResNet-50 and BERT-base rows, the float32 export quantized by
`dlc quantize` (minmax, 2 random samples at the row's batch) and compiled with `--precision
fp16`, in the same process by the same function: its speedup over dlc fp16 and its ratio to the
fastest PyTorch mode (issue 12's benchmark with one timer for every side).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dlc_ctypes  # noqa: E402
import gpu_bench as gb  # noqa: E402

CONFIGS = [("mlp", 256, torch.float16), ("resnet50", 1, torch.float16), ("resnet50", 32, torch.float16),
           ("bert_base", 8, torch.float16), ("vit_b_16", 8, torch.float16),
           ("mobilenet_v2", 1, torch.float16), ("resnet50", 1, torch.float32)]
# --gemms: single fp16 GEMMs (M, N, K), y = x @ w with w constant; PyTorch's side is cuBLAS.
# 8192^3 and the GEMMs of tools/kbench/transformer.txt (ViT-B/16 b8, BERT-base b8 s128).
INT8_MODELS = ("resnet50", "bert_base")
GEMMS = [(8192, 8192, 8192), (1576, 3072, 768), (1576, 768, 3072), (1576, 2304, 768),
         (1576, 768, 768), (1024, 3072, 768), (1024, 768, 3072), (1024, 2304, 768),
         (1024, 768, 768)]


def bench(fn):
    """Median milliseconds of fn() on the current stream, the L2 flushed before each call."""
    try:
        from triton.testing import do_bench
        try:
            return float(do_bench(fn, warmup=25, rep=200, return_mode="median"))
        except TypeError:  # older triton: quantiles
            return float(do_bench(fn, warmup=25, rep=200, quantiles=[0.5])[0])
    except ImportError:
        pass
    flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
    for _ in range(10):
        fn()
    times = []
    for _ in range(100):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        times.append((s, e))
    torch.cuda.synchronize()
    return float(np.median([s.elapsed_time(e) for s, e in times]))


def time_library(lib, x, ref, stream):
    """Loads the model library `lib`, binds `x` and a fresh output in place, and returns the
    output's relative error against `ref` (outputs poisoned first) and the timed median of
    dlc_session_run_async on torch's stream."""
    sess = dlc_ctypes.Library(lib).session()
    sess.bind_input("input", x)
    y = sess.bind_new_output("output", device=x.device)
    with torch.no_grad():
        y.fill_(float("nan"))
        sess.run_async(stream())
        torch.cuda.synchronize()
        err = gb.rel_err(y.float().cpu().numpy(), ref.float().cpu().numpy())
        return err, bench(lambda: sess.run_async(stream()))


def time_int8(args, name, batch, x, ref, row, workdir, stem, stream):
    """The row's model as int8 (see the module's docstring), timed like the float builds."""
    import int8_bench  # its quantize(): calibration samples and `dlc quantize`

    torch.manual_seed(0)  # the weights of the float16 model, in float32
    model32 = gb.make_model(name, torch.float32)
    x32 = x if name == "bert_base" else x.float()
    path32 = os.path.join(workdir, f"{stem}_fp32.onnx")
    with torch.no_grad():
        gb.export(model32, x32, path32)
    del model32
    qpath, row["int8_quantize_s"] = int8_bench.quantize(args.dlc, path32, name, workdir, 2,
                                                       "minmax", batch)
    lib = os.path.join(workdir, f"{stem}.int8.so")
    p = subprocess.run([args.dlc, "compile", qpath, "-o", lib, "--precision", "fp16"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        row["dlc_error:int8"] = (p.stdout + p.stderr)[-1500:]
        return
    row["rel_err_vs_eager:int8"], row["dlc_ms:int8"] = time_library(lib, x32, ref, stream)


def run_config(args, name, batch, dtype, workdir):
    tag = f"{name} b{batch} {str(dtype).replace('torch.', '')}"
    gb.log(f"== {tag}")
    torch.manual_seed(0)
    model = gb.make_model(name, dtype)
    x = gb.make_input(name, batch, dtype)
    # One file name per configuration: a second library at the same path would be the first
    # one again to dlopen.
    stem = tag.replace(" ", "_")
    path = os.path.join(workdir, f"{stem}.onnx")
    with torch.no_grad():
        gb.export(model, x, path)
    row = {"model": tag}
    base = ["--no-fused-attention"] if args.no_fused_attention else []
    # The default build first ("dlc"), then each --variant with its extra flags, all alike.
    builds = [("", [])] + args.variant
    if args.profile:
        # Where dlc's time goes, kernel by kernel (`dlc run --profile`, step by step), on the
        # input the harness times: the default build and each --variant.
        for vname, vargs in builds:
            try:
                text = gb.run_dlc(args.dlc, path, x, workdir, 1,
                                  extra=base + vargs + ["--profile"])[2]
            except RuntimeError as e:
                text = str(e)
            suffix = f".{vname}" if vname else ""
            with open(os.path.join(args.out, f"profile_{stem}{suffix}.txt"), "w") as f:
                f.write(text)
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    with torch.no_grad():
        ref = model(x)
    for vname, vargs in builds:
        key = f"dlc_ms:{vname}" if vname else "dlc_ms"
        lib = os.path.join(workdir, f"{stem}{'.' + vname if vname else ''}.so")
        t0 = time.time()
        p = subprocess.run([args.dlc, "compile", path, "-o", lib] + base + vargs,
                           capture_output=True, text=True)
        if not vname:
            row["dlc_compile_s"] = time.time() - t0
            if p.returncode == 0:
                row["library_MiB"] = os.path.getsize(lib) / 2**20
        if p.returncode != 0:
            row[f"dlc_error{':' + vname if vname else ''}"] = (p.stdout + p.stderr)[-1500:]
            continue
        row[f"rel_err_vs_eager{':' + vname if vname else ''}"], row[key] = time_library(
            lib, x, ref, stream)
    if "dlc_ms" not in row:
        gb.log(json.dumps(row))
        return row
    if args.int8 and name in INT8_MODELS and dtype == torch.float16:
        try:
            time_int8(args, name, batch, x, ref, row, workdir, stem, stream)
        except Exception as e:  # report and go on with the float sides
            row["dlc_error:int8"] = str(e)[-1500:]
    with torch.no_grad():
        row["eager_ms"] = bench(lambda: model(x))
        if not args.no_compile and not name.startswith("matmul_"):
            c = torch.compile(model)
            c(x)
            row["compile_ms"] = bench(lambda: c(x))
            ro = torch.compile(model, mode="reduce-overhead")
            for _ in range(3):
                ro(x)
            row["reduce_overhead_ms"] = bench(lambda: ro(x))
    best = min(v for k, v in row.items() if k in ("eager_ms", "compile_ms", "reduce_overhead_ms"))
    row["dlc_over_best_torch"] = row["dlc_ms"] / best
    for vname, _ in args.variant:
        if f"dlc_ms:{vname}" in row:
            row[f"dlc_over_best_torch:{vname}"] = row[f"dlc_ms:{vname}"] / best
    if "dlc_ms:int8" in row:
        row["dlc_over_best_torch:int8"] = row["dlc_ms:int8"] / best
        row["int8_speedup_vs_dlc_fp16"] = row["dlc_ms"] / row["dlc_ms:int8"]
    if name.startswith("matmul_"):
        n, k = (int(v) for v in name[len("matmul_"):].split("x"))
        row["dlc_TFLOPs"] = 2.0 * batch * n * k / row["dlc_ms"] / 1e9
        row["share_of_cublas"] = row["eager_ms"] / row["dlc_ms"]
        for vname, _ in args.variant:
            if f"dlc_ms:{vname}" in row:
                row[f"share_of_cublas:{vname}"] = row["eager_ms"] / row[f"dlc_ms:{vname}"]
    gb.log(json.dumps(row))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="",
                    help="comma-separated models to keep: a name (resnet50: every batch and type), "
                         "NAME:BATCH (resnet50:32) or NAME:BATCH:DTYPE (resnet50:1:float32)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--no-fused-attention", action="store_true",
                    help="compile with dlc compile --no-fused-attention (attention unfused)")
    ap.add_argument("--profile", action="store_true",
                    help="also write each model's `dlc run --profile` to OUT/profile_<model>.txt "
                         "(OUT/profile_<model>.<variant>.txt for each --variant)")
    ap.add_argument("--gemms", action="store_true",
                    help="single GEMMs against cuBLAS (8192^3, transformer shapes) instead")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=FLAGS",
                    type=gb.variant_arg,
                    help="also compile with these dlc compile flags and time it beside the "
                         "default build (e.g. splitk=--hopper-split-k); repeatable")
    ap.add_argument("--int8", action="store_true",
                    help="also time ResNet-50 and BERT-base quantized to int8 by dlc quantize "
                         "(the float16 rows), against dlc fp16 and PyTorch by the same timer")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    wanted = set(args.models.split(",")) if args.models else set()

    def names(name, batch, dtype):  # what --models may call a configuration
        return {name, f"{name}:{batch}", f"{name}:{batch}:{str(dtype).split('.')[-1]}"}

    configs = [c for c in CONFIGS if not wanted or names(*c) & wanted]
    if args.gemms:
        configs = [(f"matmul_{n}x{k}", m, torch.float16) for m, n, k in GEMMS]
    rows = []
    with tempfile.TemporaryDirectory(prefix="dlc-harness-") as workdir:
        for name, batch, dtype in configs:
            try:
                rows.append(run_config(args, name, batch, dtype, workdir))
            except Exception as e:  # report and go on with the other models
                rows.append({"model": f"{name} b{batch}", "error": str(e)[-1500:]})
                gb.log(json.dumps(rows[-1]))
    with open(os.path.join(args.out, "harness_gemms.json" if args.gemms else "harness.json"),
              "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "models": rows}, f, indent=1)
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else "-"  # noqa: E731
    if args.gemms:
        gb.log("\n| GEMM M x N x K fp16 | cuBLAS ms | dlc ms | dlc TFLOP/s | share of cuBLAS |")
        gb.log("|---|---|---|---|---|")
        for (m, n, k), r in zip(GEMMS, rows):
            gb.log(f"| {m} x {n} x {k} | {fmt(r.get('eager_ms'))} | {fmt(r.get('dlc_ms'))} "
                   f"| {fmt(r.get('dlc_TFLOPs'))} | {fmt(r.get('share_of_cublas'))} |")
        for vname, vargs in args.variant:  # each variant's share beside the default's
            gb.log(f"\n| GEMM M x N x K fp16 | dlc ms | dlc {vname} ms ({' '.join(vargs)}) "
                   f"| {vname} share of cuBLAS |")
            gb.log("|---|---|---|---|")
            for (m, n, k), r in zip(GEMMS, rows):
                gb.log(f"| {m} x {n} x {k} | {fmt(r.get('dlc_ms'))} "
                       f"| {fmt(r.get('dlc_ms:' + vname))} "
                       f"| {fmt(r.get('share_of_cublas:' + vname))} |")
        return 0
    gb.log("\n| model | eager ms | compile ms | reduce-overhead ms | dlc ms | dlc / best torch "
           "| rel err vs eager |")
    gb.log("|---|---|---|---|---|---|---|")
    for r in rows:
        gb.log(f"| {r['model']} | {fmt(r.get('eager_ms'))} | {fmt(r.get('compile_ms'))} "
               f"| {fmt(r.get('reduce_overhead_ms'))} | {fmt(r.get('dlc_ms'))} "
               f"| {fmt(r.get('dlc_over_best_torch'))} | {r.get('rel_err_vs_eager', '-')} |")
    gb.log("\n| model | dlc compile -o s | library MiB |")
    gb.log("|---|---|---|")
    for r in rows:
        gb.log(f"| {r['model']} | {fmt(r.get('dlc_compile_s'))} | {fmt(r.get('library_MiB'))} |")
    if args.int8:
        gb.log("\n| model | dlc fp16 ms | dlc int8 ms | int8 speedup over dlc fp16 "
               "| int8 / best torch | int8 rel err vs eager |")
        gb.log("|---|---|---|---|---|---|")
        for r in rows:
            if "dlc_ms:int8" in r or "dlc_error:int8" in r:
                gb.log(f"| {r['model']} | {fmt(r.get('dlc_ms'))} | {fmt(r.get('dlc_ms:int8'))} "
                       f"| {fmt(r.get('int8_speedup_vs_dlc_fp16'))} "
                       f"| {fmt(r.get('dlc_over_best_torch:int8'))} "
                       f"| {r.get('rel_err_vs_eager:int8', r.get('dlc_error:int8', '-'))} |")
    for vname, vargs in args.variant:
        gb.log(f"\n| model | dlc ms | dlc {vname} ms ({' '.join(vargs)}) | {vname} / best torch "
               f"| rel err vs eager |")
        gb.log("|---|---|---|---|---|")
        for r in rows:
            gb.log(f"| {r['model']} | {fmt(r.get('dlc_ms'))} | {fmt(r.get('dlc_ms:' + vname))} "
                   f"| {fmt(r.get('dlc_over_best_torch:' + vname))} "
                   f"| {r.get('rel_err_vs_eager:' + vname, r.get('dlc_error:' + vname, '-'))} |")


if __name__ == "__main__":
    sys.exit(main())
