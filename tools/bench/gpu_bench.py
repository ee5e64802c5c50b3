#!/usr/bin/env python3
"""dlc against PyTorch on one GPU, in one run (the H200 machine; see ../shared/GPU.md).

    python3 tools/bench/gpu_bench.py --dlc build/release/tools/dlc/dlc --out OUTDIR [--quick]

For each model (torchvision ResNet-50 and MobileNetV2, ViT-B/16, BERT-base from transformers;
random weights, nothing downloaded) it exports ONNX (opset 17), then times PyTorch eager,
torch.compile and torch.compile(mode="reduce-overhead") and dlc on the same input, checks dlc's
output against PyTorch's (max relative error against the largest |value|), and prints a table
of milliseconds and ratios. Microbenchmarks: a fused chain of 8 elementwise ops on 256M fp32
elements against a device-to-device copy, and fp16 GEMM 4096^3 / 8192^3 against torch.matmul.
Compile time of ResNet-50 with a cold and a warm kernel cache. Results also go to
OUTDIR/bench.json, and each model's per-kernel profile (`dlc run --profile`) to
OUTDIR/profile_<model>.txt. Timings are medians of CUDA-event (PyTorch) or dlc-reported GPU times after
warm-up. TF32 is off on the PyTorch side (dlc uses it only with --allow-tf32).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def log(*a):
    print(*a, flush=True)


def time_torch(fn, x, warmup=10, iters=50):
    for _ in range(warmup):
        fn(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(x)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return float(np.median(times))


def make_model(name, dtype):
    if name == "resnet50":
        import torchvision
        m = torchvision.models.resnet50(weights=None)
    elif name == "mobilenet_v2":
        import torchvision
        m = torchvision.models.mobilenet_v2(weights=None)
    elif name == "vit_b_16":
        import torchvision
        m = torchvision.models.vit_b_16(weights=None)
    elif name.startswith("matmul_"):
        # One GEMM, y = x @ w with w [K, N] a constant: "matmul_NxK", the batch is M.
        n, k = (int(v) for v in name[len("matmul_"):].split("x"))

        class MatMul(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.randn(k, n) / k ** 0.5)

            def forward(self, x):
                return torch.matmul(x, self.w)

        m = MatMul()
    elif name == "mlp":
        # The MLP row: 1024-4096-1024 with a GELU between.
        m = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(),
                                torch.nn.Linear(4096, 1024))
    elif name == "bert_base":
        from transformers import BertConfig, BertModel
        # bert-base-uncased sizes. Eager attention: the TorchScript exporter's form of SDPA
        # builds its mask in float32 and so promotes every layer after the first to float32.
        cfg = BertConfig(attn_implementation="eager")
        m = BertModel(cfg, add_pooling_layer=False)

        class Wrap(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, ids):
                return self.inner(input_ids=ids).last_hidden_state

        m = Wrap(m)
    else:
        raise ValueError(name)
    # torchvision zero-initialises some classifier heads (ViT), which would make the output
    # comparison trivial: give every final Linear random weights.
    last = [mod for mod in m.modules() if isinstance(mod, torch.nn.Linear)]
    if last and name not in ("bert_base", "mlp") and not name.startswith("matmul_"):
        torch.nn.init.normal_(last[-1].weight, std=0.5)
        torch.nn.init.normal_(last[-1].bias, std=0.5)
    # Fresh BatchNorm layers are identities (mean 0, variance 1, scale 1, shift 0): give them
    # statistics, so that fold-batchnorm folds something and activations keep their spread.
    g = torch.Generator().manual_seed(1)
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            c = mod.num_features
            mod.weight.data = torch.rand(c, generator=g) + 0.5
            mod.bias.data = torch.randn(c, generator=g) * 0.1
            mod.running_mean = torch.randn(c, generator=g) * 0.1
            mod.running_var = torch.rand(c, generator=g) + 0.5
    return m.eval().to("cuda", dtype)


def make_input(name, batch, dtype, seq=128, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    if name == "bert_base":
        return torch.randint(0, 30522, (batch, seq), device="cuda", generator=g)
    if name.startswith("matmul_"):
        k = int(name.split("x")[-1])
        return torch.randn(batch, k, device="cuda", dtype=dtype, generator=g)
    if name == "mlp":
        return torch.randn(batch, 1024, device="cuda", dtype=dtype, generator=g)
    return torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype, generator=g)


def export(model, x, path):
    # torchvision's ViT uses a fused attention kernel in eval mode that has no ONNX form.
    if hasattr(torch.backends, "mha"):
        torch.backends.mha.set_fastpath_enabled(False)
    kw = dict(input_names=["input"], output_names=["output"], opset_version=17)
    try:
        torch.onnx.export(model, (x,), path, dynamo=False, **kw)
    except TypeError:
        torch.onnx.export(model, (x,), path, **kw)


def weight_dtypes(path):
    """How many initializers of each dtype the exported file holds (an export meant to be fp16
    can come out partly fp32: the file, not the PyTorch module, is what dlc runs)."""
    import onnx
    counts = {}
    for t in onnx.load(path, load_external_data=False).graph.initializer:
        name = onnx.TensorProto.DataType.Name(t.data_type)
        counts[name] = counts.get(name, 0) + 1
    return counts


def run_dlc(dlc, onnx_path, x, workdir, runs, extra=()):
    """Runs `dlc run` on the GPU; returns (output array, benchmark dict, stdout)."""
    inp = os.path.join(workdir, "input.npy")
    arr = x.detach().cpu().numpy()
    np.save(inp, arr)
    outdir = os.path.join(workdir, "dlc_out")
    bench_json = os.path.join(workdir, "dlc_bench.json")
    cmd = [dlc, "run", onnx_path, "--device", "gpu", "--input", f"input={inp}",
           "--output-dir", outdir, "--benchmark", str(runs), "--benchmark-json", bench_json,
           *extra]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t0
    if p.returncode != 0:
        raise RuntimeError(f"dlc failed ({p.returncode}):\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
    outs = [f for f in os.listdir(outdir) if f.endswith(".npy")]
    out = np.load(os.path.join(outdir, outs[0]))
    with open(bench_json) as f:
        bench = json.load(f)
    bench["wall_s"] = wall
    return out, bench, p.stdout


def run_library(args, onnx_path, workdir, dlc_out):
    """`dlc compile -o` the model, run the library from the host app on the GPU; returns the
    library size, the host app's load-to-first-result time and its error against `dlc run`."""
    lib = os.path.join(workdir, "model.so")
    p = subprocess.run([args.dlc, "compile", onnx_path, "-o", lib], capture_output=True, text=True)
    if p.returncode != 0:
        return {"library_error": (p.stdout + p.stderr)[-2000:]}
    outdir = os.path.join(workdir, "lib_out")
    shutil.rmtree(outdir, ignore_errors=True)
    p = subprocess.run([args.host_app, lib, "--device", "gpu", "--input",
                        f"input={os.path.join(workdir, 'input.npy')}", "--output-dir", outdir],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"library_error": (p.stdout + p.stderr)[-2000:]}
    startup = [l for l in p.stdout.splitlines() if l.startswith("load to first result")]
    outs = sorted(f for f in os.listdir(outdir) if f.endswith(".npy"))
    got = np.load(os.path.join(outdir, outs[0]))
    return {"library_MiB": os.path.getsize(lib) / 2**20,
            "library_startup_ms": float(startup[0].split()[-2]) if startup else None,
            "library_rel_err_vs_dlc_run": rel_err(got, dlc_out)}


def variant_arg(text):
    """argparse type of --variant NAME=FLAGS (harness.py, int8_bench.py): (NAME, [FLAG, ...])."""
    name, sep, flags = text.partition("=")
    if not name or not sep:
        raise argparse.ArgumentTypeError(f"expected NAME=FLAGS, got '{text}'")
    return name, flags.split()


def rel_err(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-12))


def bench_model(args, name, batch, dtype, results, workdir):
    tag = f"{name} b{batch} {str(dtype).replace('torch.', '')}"
    log(f"== {tag}")
    torch.manual_seed(0)
    model = make_model(name, dtype)
    x = make_input(name, batch, dtype)
    path = os.path.join(workdir, f"{name}_b{batch}_{str(dtype)[6:]}.onnx")
    t0 = time.time()
    with torch.no_grad():
        export(model, x, path)
    log(f"exported {path} in {time.time() - t0:.1f} s")
    row = {"model": tag, "export_weight_dtypes": weight_dtypes(path)}
    if dtype == torch.float16 and row["export_weight_dtypes"].get("FLOAT", 0):
        log(f"warning: the float16 export of {tag} has float32 weights: "
            f"{row['export_weight_dtypes']}; dlc runs what the file says")
    with torch.no_grad():
        ref = model(x).float().cpu().numpy()
        # A comparison is only worth something if the output depends on the input.
        other = make_input(name, batch, dtype, seed=1)
        row["output_depends_on_input"] = bool(
            np.max(np.abs(model(other).float().cpu().numpy() - ref)) > 0)
        if not row["output_depends_on_input"]:
            log(f"warning: {tag}: the output does not depend on the input; the comparison is void")
        row["eager_ms"] = time_torch(model, x)
        if not args.no_compile:
            c = torch.compile(model)
            row["compile_ms"] = time_torch(c, x)
            ro = torch.compile(model, mode="reduce-overhead")
            row["reduce_overhead_ms"] = time_torch(ro, x)
    try:
        ptag = tag.replace(" ", "_")
        out, bench, stdout = run_dlc(args.dlc, path, x, workdir, args.runs,
                                     extra=["--profile", "--profile-json",
                                            os.path.join(args.out, f"profile_{ptag}.json")])
        with open(os.path.join(args.out, f"profile_{ptag}.txt"), "w") as f:
            f.write(stdout)
        row["dlc_ms"] = bench["median_ms"]
        row["dlc_first_run_s"] = bench.get("first_run_s")
        # CPU fallback steps (the profile's "N x host" line): the issue wants none.
        host = re.search(r"(\d+) x host", stdout)
        row["host_steps"] = int(host.group(1)) if host else 0
        row["rel_err_vs_torch"] = rel_err(out, ref)
        tol = 1e-4 if dtype == torch.float32 else 1e-2
        row["within_tol"] = row["rel_err_vs_torch"] <= tol and row["output_depends_on_input"]
        if args.host_app:  # the model library, run from the host app
            row.update(run_library(args, path, workdir, out))
        if args.baseline_dlc:
            row.update(compare_baseline(args, path, x, workdir))
        if not args.no_verify:  # the reference backend on the CPU beside the GPU
            inp = os.path.join(workdir, "input.npy")
            t0 = time.time()
            try:
                p = subprocess.run([args.dlc, "run", path, "--device", "gpu", "--input",
                                    f"input={inp}", "--verify"], capture_output=True, text=True,
                                   timeout=args.verify_timeout)
                line = [l for l in p.stdout.splitlines() if l.startswith("verify:")]
                row["verify"] = line[0] if line else (p.stdout + p.stderr)[-600:]
            except subprocess.TimeoutExpired:
                row["verify"] = f"not finished in {args.verify_timeout} s"
            row["verify_s"] = time.time() - t0
    except Exception as e:  # report and go on with the other models
        row["dlc_error"] = str(e)[-2000:]
        log(row["dlc_error"])
    results["models"].append(row)
    log(json.dumps(row))
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(results, f, indent=1)


def bench_micro(args, results, workdir):
    # Fused chain of 8 elementwise ops on 256M fp32 elements, as an ONNX model run by dlc.
    import onnx
    from onnx import TensorProto, helper
    n = 256 * 1024 * 1024
    nodes, prev = [], "input"  # run_dlc feeds the model's input by this name
    ops = [("Mul", 1.5), ("Add", 0.25), ("Relu", None), ("Sub", 0.125), ("Mul", 0.5),
           ("Tanh", None), ("Add", 1.0), ("Sigmoid", None)]
    inits = []
    for i, (op, c) in enumerate(ops):
        out = f"t{i}" if i < len(ops) - 1 else "y"
        if c is None:
            nodes.append(helper.make_node(op, [prev], [out]))
        else:
            inits.append(helper.make_tensor(f"c{i}", TensorProto.FLOAT, [], [c]))
            nodes.append(helper.make_node(op, [prev, f"c{i}"], [out]))
        prev = out
    g = helper.make_graph(nodes, "chain8", [helper.make_tensor_value_info("input", 1, [n])],
                          [helper.make_tensor_value_info("y", 1, [n])], inits)
    path = os.path.join(workdir, "chain8.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
              path)
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    copy_ms = time_torch(lambda t: y.copy_(t), x, iters=20)
    copy_bw = 2 * n * 4 / copy_ms / 1e9  # TB/s (bytes read + written)
    row = {"name": "chain8 fp32 256M", "copy_ms": copy_ms, "copy_TBps": copy_bw}
    try:
        _, bench, _ = run_dlc(args.dlc, path, x, workdir, 20)
        row["dlc_ms"] = bench["median_ms"]
        row["dlc_TBps"] = 2 * n * 4 / bench["median_ms"] / 1e9
        row["share_of_copy"] = row["dlc_TBps"] / copy_bw
    except Exception as e:
        row["dlc_error"] = str(e)[-2000:]
    results["micro"].append(row)
    log(json.dumps(row))
    del x, y
    torch.cuda.empty_cache()
    for size in (4096, 8192):
        a = torch.randn(size, size, device="cuda", dtype=torch.float16)
        b = torch.randn(size, size, device="cuda", dtype=torch.float16)
        ms = time_torch(lambda t: torch.matmul(t, b), a, iters=20)
        tf = 2 * size ** 3 / ms / 1e9
        row = {"name": f"gemm fp16 {size}^3", "torch_ms": ms, "torch_TFLOPs": tf}
        gi = helper.make_graph([helper.make_node("MatMul", ["input", "b"], ["y"])], "gemm",
                               [helper.make_tensor_value_info("input", 10, [size, size])],
                               [helper.make_tensor_value_info("y", 10, [size, size])],
                               [onnx.numpy_helper.from_array(b.cpu().numpy(), "b")])
        gpath = os.path.join(workdir, f"gemm{size}.onnx")
        onnx.save(helper.make_model(gi, opset_imports=[helper.make_opsetid("", 17)],
                                    ir_version=8), gpath)
        try:
            out, bench, _ = run_dlc(args.dlc, gpath, a, workdir, 20)
            row["dlc_ms"] = bench["median_ms"]
            row["dlc_TFLOPs"] = 2 * size ** 3 / bench["median_ms"] / 1e9
            row["share_of_cublas"] = row["dlc_TFLOPs"] / tf
            ref = torch.matmul(a, b).float().cpu().numpy()
            row["rel_err"] = rel_err(out, ref)
        except Exception as e:
            row["dlc_error"] = str(e)[-2000:]
        results["micro"].append(row)
        log(json.dumps(row))


def bench_compile(args, results, workdir):
    import torchvision
    m = torchvision.models.resnet50(weights=None).eval().cuda().half()
    x = torch.randn(1, 3, 224, 224, device="cuda", dtype=torch.float16)
    path = os.path.join(workdir, "resnet50_compile.onnx")
    with torch.no_grad():
        export(m, x, path)
    cache = tempfile.mkdtemp(prefix="dlc-cache-")
    env = dict(os.environ, DLC_CACHE_DIR=cache)
    row = {"name": "compile resnet50 fp16 b1"}
    for label in ("cold", "warm"):
        t0 = time.time()
        p = subprocess.run([args.dlc, "compile", path], env=env,
                           capture_output=True, text=True)
        row[f"{label}_s"] = time.time() - t0
        if p.returncode != 0:
            row[f"{label}_error"] = (p.stdout + p.stderr)[-2000:]
    shutil.rmtree(cache, ignore_errors=True)
    results["compile"] = row
    log(json.dumps(row))


def compare_baseline(args, onnx_path, x, workdir):
    """The same model through an earlier dlc (`--baseline-dlc`), in this run: its time by the
    same `dlc run --benchmark`, and what each compiles (kernel names, identical sources, the
    program summary), so a restructuring shows whether kernels or speed moved."""
    row = {}
    try:
        _, bench, _ = run_dlc(args.baseline_dlc, onnx_path, x, workdir, args.runs)
        row["baseline_dlc_ms"] = bench["median_ms"]
    except Exception as e:  # an older dlc may not run everything the new one does
        row["baseline_error"] = str(e)[-1000:]
        return row
    emitted = {}
    for tag, dlc in (("new", args.dlc), ("base", args.baseline_dlc)):
        d = os.path.join(workdir, f"emit_{tag}")
        shutil.rmtree(d, ignore_errors=True)
        p = subprocess.run([dlc, "compile", onnx_path, "--emit", f"cuda={d}"],
                           capture_output=True, text=True)
        summary = [l for l in p.stdout.splitlines() if " kernels in " in l]
        row[f"summary_{tag}"] = re.sub(r"\(\d+ from the cache, NVRTC [0-9.]+ s\), ", "",
                                       summary[0].split(": ", 1)[-1]) if summary else p.stderr[-300:]
        emitted[tag] = {f: open(os.path.join(d, f), "rb").read()
                        for f in os.listdir(d) if f.endswith(".cu")} if os.path.isdir(d) else {}
    new, base = emitted["new"], emitted["base"]
    row["kernels_new"], row["kernels_base"] = len(new), len(base)
    row["kernel_names_same"] = sorted(new) == sorted(base)
    row["kernels_identical"] = sum(1 for k in new if base.get(k) == new[k])
    return row


def print_tables(results):
    """The tables of a run (also `--table bench.json`, for a run stopped before its end)."""
    log("\n| model | eager ms | compile ms | reduce-overhead ms | dlc ms | dlc / reduce-overhead "
        "| rel err vs torch | within tol | verify | CPU steps |")
    log("|---|---|---|---|---|---|---|---|---|---|")
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else "-"
    fmte = lambda v: f"{v:.2e}" if isinstance(v, float) else "-"
    for r in results.get("models", []):
        ro = r.get("reduce_overhead_ms")
        d = r.get("dlc_ms")
        log(f"| {r['model']} | {fmt(r.get('eager_ms'))} | {fmt(r.get('compile_ms'))} | {fmt(ro)} "
            f"| {fmt(d) if d else 'error'} | {fmt(d / ro) if d and ro else '-'} "
            f"| {fmte(r.get('rel_err_vs_torch'))} | {r.get('within_tol', '-')}"
            f"{'' if r.get('output_depends_on_input', True) else ' (output ignores the input)'} "
            f"| {r.get('verify', '-')} | {r.get('host_steps', '-')} |")
    libs = [r for r in results.get("models", []) if "library_MiB" in r or "library_error" in r]
    if libs:
        log("\n| model | library MiB | host app load to first result ms | rel err vs dlc run |")
        log("|---|---|---|---|")
        for r in libs:
            if "library_error" in r:
                log(f"| {r['model']} | error | - | - |")
            else:
                log(f"| {r['model']} | {r['library_MiB']:.1f} | {r['library_startup_ms']} "
                    f"| {r['library_rel_err_vs_dlc_run']:.2e} |")
    base = [r for r in results.get("models", []) if "baseline_dlc_ms" in r or "baseline_error" in r]
    if base:
        log("\n| model | dlc ms | baseline dlc ms | dlc / baseline | kernels (base) | same names "
            "| identical sources | program (new) | program (base) |")
        log("|---|---|---|---|---|---|---|---|---|")
        for r in base:
            if "baseline_error" in r:
                log(f"| {r['model']} | {fmt(r.get('dlc_ms'))} | error | - | - | - | - | - | - |")
                continue
            d, b = r.get("dlc_ms"), r["baseline_dlc_ms"]
            log(f"| {r['model']} | {fmt(d)} | {fmt(b)} | {fmt(d / b) if d and b else '-'} "
                f"| {r['kernels_new']} ({r['kernels_base']}) | {r['kernel_names_same']} "
                f"| {r['kernels_identical']} | {r['summary_new']} | {r['summary_base']} |")
    for r in results.get("micro", []):
        log(json.dumps(r))
    if "compile" in results:
        log(json.dumps(results["compile"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dlc")
    ap.add_argument("--out")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="ResNet-50 batch 1 fp16 only")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--host-app", default="",
                    help="the host app (tests/dlc_host_app): also compile each model to a .so and "
                         "run it from there")
    ap.add_argument("--no-verify", action="store_true",
                    help="skip `dlc run --verify` (the reference backend on the CPU)")
    ap.add_argument("--verify-timeout", type=float, default=240,
                    help="seconds one `dlc run --verify` may take (default 240)")
    ap.add_argument("--baseline-dlc", default="",
                    help="an earlier dlc to compare with in the same run (time, kernels)")
    ap.add_argument("--only", default="", help="comma-separated: models,micro,compile")
    ap.add_argument("--models", default="", help="comma-separated model names to keep")
    ap.add_argument("--table", default="",
                    help="only print the tables of an earlier run's bench.json")
    args = ap.parse_args()
    if args.table:
        with open(args.table) as f:
            print_tables(json.load(f))
        return 0
    if not args.dlc or not args.out:
        ap.error("--dlc and --out are required (unless --table)")
    os.makedirs(args.out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="dlc-bench-")
    # Same arithmetic on both sides: PyTorch would run fp32 convolutions on TF32 tensor cores
    # (cuDNN's default), dlc only with --allow-tf32.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "models": [], "micro": []}
    parts = set(args.only.split(",")) if args.only else {"models", "micro", "compile"}
    configs = [("resnet50", 1, torch.float16)]
    if not args.quick:
        configs += [("bert_base", 8, torch.float16), ("vit_b_16", 8, torch.float16),
                    ("mobilenet_v2", 1, torch.float16), ("resnet50", 32, torch.float16),
                    ("resnet50", 1, torch.float32)]
    if args.models:
        configs = [c for c in configs if c[0] in args.models.split(",")]
    if "models" in parts:
        for name, batch, dtype in configs:
            bench_model(args, name, batch, dtype, results, workdir)
    if "micro" in parts:
        bench_micro(args, results, workdir)
    if "compile" in parts:
        bench_compile(args, results, workdir)
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(results, f, indent=1)
    print_tables(results)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
