#!/usr/bin/env python3
"""int8 against fp16 on one GPU, in one run (the H200 machine; see ../shared/GPU.md).

    python3 tools/bench/int8_bench.py --dlc build/release/tools/dlc/dlc --out OUTDIR

For ResNet-50 (batch 1 and 32) and BERT-base (batch 8, sequence 128), float32 exports with a
dynamic batch: `dlc quantize` calibrates them (minmax, a few random samples at batch 1 on the
reference backend) into a QDQ ONNX file, which dlc runs with `--precision fp16` (the int8
layers through realize-int8's kernels, what stays float in fp16). Beside it, in the same
process and by the same timers as tools/bench/gpu_bench.py: dlc fp16 (`--precision fp16` on
the float32 export), PyTorch fp16 eager and torch.compile(mode="reduce-overhead"). The int8
output is compared with PyTorch's float32 output (relative to its largest |value|): random
weights and calibration on random data, so this measures that the int8 model computes the
same function roughly, not accuracy (models/digits_quant_accuracy.py does that on real data).
Microbenchmark: int8 GEMM 8192^3 (DQ -> MatMul in ONNX, realized as matmul_integer) against
torch._int_mm (cuBLAS int8). Results go to OUTDIR/int8.json and each model's profiles to
OUTDIR/profile_int8_<model>.txt and OUTDIR/profile_fp16_<model>.txt.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench as gb  # noqa: E402


def export_dynamic(model, x, path, dynamic=True):
    if hasattr(torch.backends, "mha"):
        torch.backends.mha.set_fastpath_enabled(False)
    kw = dict(input_names=["input"], output_names=["output"], opset_version=17)
    if dynamic:
        kw["dynamic_axes"] = {"input": {0: "N"}, "output": {0: "N"}}
    try:
        torch.onnx.export(model, (x,), path, dynamo=False, **kw)
    except TypeError:
        torch.onnx.export(model, (x,), path, **kw)


def quantize(dlc, path, name, workdir, samples, method, batch=1):
    cal = os.path.join(workdir, f"cal_{name}")
    for i in range(samples):
        d = os.path.join(cal, f"s{i}")
        os.makedirs(d, exist_ok=True)
        x = gb.make_input(name, batch, torch.float32, seed=100 + i)
        np.save(os.path.join(d, "input.npy"), x.cpu().numpy())
    out = path.replace(".onnx", "_int8.onnx")
    t0 = time.time()
    p = subprocess.run([dlc, "quantize", path, "--calibration", cal, "--method", method,
                        "-o", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"dlc quantize failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return out, time.time() - t0


def bench(args, name, batches, results, workdir):
    torch.manual_seed(0)
    model32 = gb.make_model(name, torch.float32)
    # BERT's export computes its position ids with an Expand whose shape dlc cannot work
    # out for a symbolic batch (a shape known only at run time): one static export per batch.
    static = name == "bert_base"
    cal_batch = batches[0] if static else 1
    x1 = gb.make_input(name, cal_batch, torch.float32)
    path = os.path.join(workdir, f"{name}_fp32.onnx")
    with torch.no_grad():
        export_dynamic(model32, x1, path, dynamic=not static)
    qpath, qs = quantize(args.dlc, path, name, workdir, args.samples, args.method, cal_batch)
    gb.log(f"{name}: quantized in {qs:.1f} s -> {qpath}")
    model16 = gb.make_model(name, torch.float16)
    for batch in batches:
        tag = f"{name} b{batch}"
        row = {"model": tag, "quantize_s": qs}
        x = gb.make_input(name, batch, torch.float32)
        x16 = x if name == "bert_base" else x.half()
        with torch.no_grad():
            ref = model32(x).float().cpu().numpy()
            row["torch_fp16_eager_ms"] = gb.time_torch(model16, x16)
            if not args.no_compile:
                ro = torch.compile(model16, mode="reduce-overhead")
                row["torch_fp16_reduce_overhead_ms"] = gb.time_torch(ro, x16)
        runs = [("dlc_fp16", path, ["--precision", "fp16", "--profile"]),
                ("dlc_int8", qpath, ["--precision", "fp16", "--profile"])]
        for vname, vargs in args.variant:  # the same two with extra dlc flags
            runs += [(f"dlc_fp16:{vname}", path, ["--precision", "fp16", "--profile"] + vargs),
                     (f"dlc_int8:{vname}", qpath, ["--precision", "fp16", "--profile"] + vargs)]
        for label, p, extra in runs:
            try:
                shutil.rmtree(os.path.join(workdir, "dlc_out"), ignore_errors=True)
                out, b, stdout = gb.run_dlc(args.dlc, p, x, workdir, args.runs, extra=extra)
                row[f"{label}_ms"] = b["median_ms"]
                row[f"{label}_rel_err_vs_torch_fp32"] = gb.rel_err(out, ref)
                if label == "dlc_int8":
                    int8_out = out
                kind, _, vname = label[len("dlc_"):].partition(":")
                suffix = f"_{vname}" if vname else ""
                with open(os.path.join(args.out, f"profile_{kind}_{name}_b{batch}{suffix}.txt"),
                          "w") as f:
                    f.write(stdout)
            except Exception as e:  # report and go on
                row[f"{label}_error"] = str(e)[-3000:]
        if batch == 1 and "dlc_int8_ms" in row:
            # The int8 kernels against the same QDQ model on the reference backend (float
            # fake quantization): what realize-int8 and the kernels change, beside the
            # quantization itself; and --verify (the realized graph on the reference).
            inp = os.path.join(workdir, "input.npy")
            np.save(inp, x.cpu().numpy())
            ref_out = os.path.join(workdir, "cpu_out")
            shutil.rmtree(ref_out, ignore_errors=True)
            p = subprocess.run([args.dlc, "run", qpath, "--device", "cpu", "--input",
                                f"input={inp}", "-o", ref_out], capture_output=True, text=True)
            if p.returncode == 0:
                cpu = np.load(os.path.join(ref_out, os.listdir(ref_out)[0]))
                row["dlc_int8_rel_err_vs_cpu_qdq"] = gb.rel_err(int8_out, cpu)
            p = subprocess.run([args.dlc, "run", qpath, "--device", "gpu", "--input",
                                f"input={inp}", "--verify"], capture_output=True, text=True)
            row["dlc_int8_verify"] = ([l for l in p.stdout.splitlines()
                                       if l.startswith("verify:")] or
                                      [(p.stdout + p.stderr)[-600:]])[0]
        if "dlc_int8_ms" in row and "dlc_fp16_ms" in row:
            row["int8_speedup_vs_dlc_fp16"] = row["dlc_fp16_ms"] / row["dlc_int8_ms"]
        for vname, _ in args.variant:  # int8 against fp16 compiled with the same flags
            if f"dlc_int8:{vname}_ms" in row and f"dlc_fp16:{vname}_ms" in row:
                row[f"int8_speedup_vs_dlc_fp16:{vname}"] = (row[f"dlc_fp16:{vname}_ms"] /
                                                            row[f"dlc_int8:{vname}_ms"])
        results["models"].append(row)
        gb.log(json.dumps(row))
        with open(os.path.join(args.out, "int8.json"), "w") as f:
            json.dump(results, f, indent=1)


def bench_int8_gemm(args, results, workdir, size=8192):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randint(-127, 128, (size, size), device="cuda", dtype=torch.int8, generator=g)
    b = torch.randint(-127, 128, (size, size), device="cuda", dtype=torch.int8, generator=g)
    # cuBLAS's int8 path wants B column-major ("TN"); time both layouts, keep the faster.
    bc = b.t().contiguous().t()
    ms_row = gb.time_torch(lambda t: torch._int_mm(t, b), a, iters=20)
    ms = min(ms_row, gb.time_torch(lambda t: torch._int_mm(t, bc), a, iters=20))
    row = {"name": f"int8 gemm {size}^3", "torch_int_mm_ms": ms,
           "torch_int_mm_row_major_b_ms": ms_row,
           "torch_int_mm_TOPs": 2 * size ** 3 / ms / 1e9}
    graph = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["input", "s"], ["xd"]),
         helper.make_node("DequantizeLinear", ["b", "s"], ["bd"]),
         helper.make_node("MatMul", ["xd", "bd"], ["y"])], "int8gemm",
        [helper.make_tensor_value_info("input", TensorProto.INT8, [size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [size, size])],
        [numpy_helper.from_array(b.cpu().numpy(), "b"),
         helper.make_tensor("s", TensorProto.FLOAT, [], [1.0])])
    path = os.path.join(workdir, f"int8gemm{size}.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    try:
        shutil.rmtree(os.path.join(workdir, "dlc_out"), ignore_errors=True)
        out, bench_, _ = gb.run_dlc(args.dlc, path, a, workdir, 20)
        row["dlc_ms"] = bench_["median_ms"]
        row["dlc_TOPs"] = 2 * size ** 3 / bench_["median_ms"] / 1e9
        row["share_of_cublas"] = row["dlc_TOPs"] / row["torch_int_mm_TOPs"]
        ref = torch._int_mm(a, b).float().cpu().numpy()
        row["max_abs_err"] = float(np.max(np.abs(out.astype(np.float64) - ref)))
        row["max_abs_ref"] = float(np.max(np.abs(ref)))
    except Exception as e:
        row["dlc_error"] = str(e)[-3000:]
    results["micro"].append(row)
    gb.log(json.dumps(row))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--samples", type=int, default=2, help="calibration samples")
    ap.add_argument("--method", default="minmax",
                    help="calibration method (minmax: entropy clips random-weight nets hard)")
    ap.add_argument("--only", choices=["models", "micro", "resnet50", "bert_base"])
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=FLAGS",
                    type=gb.variant_arg,
                    help="also run dlc fp16 and int8 with these extra flags (e.g. "
                         "hopper='--hopper-conv --hopper-int8'); repeatable")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    workdir = os.path.join(args.out, "work")
    os.makedirs(workdir, exist_ok=True)
    results = {"gpu": torch.cuda.get_device_name(), "models": [], "micro": []}
    if args.only in (None, "micro"):
        bench_int8_gemm(args, results, workdir)
    for name, batches in (("resnet50", [1, 32]), ("bert_base", [8])):
        if args.only in (None, "models", name):
            try:
                bench(args, name, batches, results, workdir)
            except Exception as e:  # report and go on
                results["models"].append({"model": name, "error": str(e)[-3000:]})
                gb.log(json.dumps(results["models"][-1]))
    with open(os.path.join(args.out, "int8.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
