#!/usr/bin/python3
"""End to end: `dlc compile -o model.so`, then the library run by the host app.

    model_library_test.py --dlc DLC --host-app HOST_APP --work DIR [--sanitized]

Compiles models/mlp.onnx (input x: f32[N,64]) with a dim range, checks the library's dynamic
section, runs it from the host app (another process, two threads) and compares with `dlc run`
on the reference backend, then checks the errors a user can cause: a batch outside the range,
a wrong dtype, a missing input, a truncated library and an altered one. A quantized copy (`dlc quantize`)
compiles to a library whose GPU program holds int8 kernels and is compared with the
reference. Every step prints what
it checks; the first failure stops the test with exit status 1.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# What a model library may depend on: libc, libstdc++, libm, libdl, pthread (and the loader).
ALLOWED = re.compile(r"^(libc\.so\.6|libstdc\+\+\.so\.6|libm\.so\.6|libdl\.so\.2|"
                     r"libpthread\.so\.0|ld-linux-x86-64\.so\.2)$")


def run(cmd, expect_ok=True, contains=None):
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = p.stdout + p.stderr
    print(out.rstrip())
    if expect_ok and p.returncode != 0:
        sys.exit(f"FAILED: exit status {p.returncode}, expected 0")
    if not expect_ok and p.returncode == 0:
        sys.exit("FAILED: the command succeeded, expected an error")
    if contains and not re.search(contains, out):
        sys.exit(f"FAILED: the output does not match /{contains}/")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--host-app", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--sanitized", action="store_true",
                    help="a sanitizer build: the library also needs the sanitizer runtimes")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    lib = os.path.join(a.work, "mlp.so")

    print("== compile with a dim range; GPU programs for sm_80 and sm_90 (NVRTC, no GPU needed)")
    run([a.dlc, "compile", os.path.join(ROOT, "models", "mlp.onnx"), "--dim", "N=1..8",
         "--gpu-arch", "sm_80,sm_90", "-o", lib], contains=r"wrote .*mlp\.so .*8 GPU programs")

    print("== the library's dynamic section")
    dyn = run(["readelf", "-d", lib])
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    extra = [n for n in needed if not ALLOWED.match(n)]
    if a.sanitized:
        extra = [n for n in extra if not re.match(r"^lib(asan|ubsan)\.so", n)]
    if extra:
        sys.exit(f"FAILED: the library needs {extra}; allowed: libc, libstdc++, libm, libdl, "
                 f"pthread")
    print(f"NEEDED: {needed}: ok")
    syms = run(["nm", "-D", "--defined-only", lib])
    exported = sorted(set(re.findall(r" [TDRB] (\S+)", syms)))
    stray = [s for s in exported if not s.startswith("dlc_")]
    if stray:
        sys.exit(f"FAILED: the library exports more than the C API: {stray[:10]}")
    if "dlc_session_run" not in exported or "dlc_embedded_package_begin" not in exported:
        sys.exit("FAILED: the C API or the embedded package is not exported")
    print(f"exports {len(exported)} symbols, all dlc_*: ok")

    rng = np.random.default_rng(7)
    x3 = os.path.join(a.work, "x3.npy")
    np.save(x3, rng.uniform(-1, 1, (3, 64)).astype(np.float32))
    out = os.path.join(a.work, "out")
    print("== the host app runs the library: N=3 (no program of its own: CPU), two threads")
    run([a.host_app, lib, "--input", f"x={x3}", "--output-dir", out, "--threads", "2",
         "--runs", "2"], contains=r"identical outputs")
    print("== the same against `dlc run` on the reference backend")
    run([a.dlc, "run", os.path.join(ROOT, "models", "mlp.onnx"), "--device", "cpu", "--input",
         f"x={x3}", "--compare", f"probs={os.path.join(out, 'probs.npy')}", "--rtol", "1e-6",
         "--atol", "1e-7"], contains=r"compare 'probs': ok")
    x8 = os.path.join(a.work, "x8.npy")
    np.save(x8, rng.uniform(-1, 1, (8, 64)).astype(np.float32))
    run([a.host_app, lib, "--input", f"x={x8}", "--device", "cpu"], contains=r"output 'probs'")

    print("== a C program linked with the library itself loads the model embedded in it")
    exe = os.path.join(a.work, "embedded_model")
    san = ["-fsanitize=address,undefined"] if a.sanitized else []
    run(["cc", "-std=c99", *san, "-I", os.path.join(ROOT, "runtime"),
         os.path.join(ROOT, "tests", "e2e", "embedded_model.c"), lib,
         f"-Wl,-rpath,{a.work}", "-o", exe])
    run([exe], contains=r"embedded model: 1 input\(s\), the first 'x'\s+probs sum 2\.0000")

    print("== a quantized model: dlc quantize, then a library whose GPU program runs int8 kernels")
    cal = os.path.join(a.work, "cal")
    for i in range(2):
        os.makedirs(os.path.join(cal, f"s{i}"))
        np.save(os.path.join(cal, f"s{i}", "x.npy"),
                rng.uniform(-1, 1, (4, 64)).astype(np.float32))
    qmodel = os.path.join(a.work, "mlp_int8.onnx")
    run([a.dlc, "quantize", os.path.join(ROOT, "models", "mlp.onnx"), "--calibration", cal,
         "--method", "minmax", "--device", "cpu", "-o", qmodel], contains=r"wrote .*mlp_int8")
    qlib = os.path.join(a.work, "mlp_int8.so")
    run([a.dlc, "compile", qmodel, "--dim", "N=4", "--gpu-arch", "sm_80,sm_90", "-o", qlib,
         "--debug-only=realize-int8"],
        contains=r"node 'fc1' \(Gemm\): int8 \(matmul_integer, K 128\)")
    x4 = os.path.join(a.work, "x4.npy")
    np.save(x4, rng.uniform(-1, 1, (4, 64)).astype(np.float32))
    qout = os.path.join(a.work, "qout")
    run([a.host_app, qlib, "--input", f"x={x4}", "--output-dir", qout])
    # On a GPU the library runs int8 products; the reference runs the Q/DQ graph in float: the
    # two agree to float rounding of the rescale (a level apart at most, rarely).
    run([a.dlc, "run", qmodel, "--device", "cpu", "--input", f"x={x4}", "--compare",
         f"probs={os.path.join(qout, 'probs.npy')}", "--rtol", "2e-2", "--atol", "2e-3"],
        contains=r"compare 'probs': ok")

    print("== errors")
    x9 = os.path.join(a.work, "x9.npy")
    np.save(x9, np.zeros((9, 64), np.float32))
    run([a.host_app, lib, "--input", f"x={x9}"], expect_ok=False,
        contains=r"OUT_OF_RANGE.*'N' = 9 is outside the range 1\.\.8")
    xd = os.path.join(a.work, "xd.npy")
    np.save(xd, np.zeros((2, 64), np.float64))
    run([a.host_app, lib, "--input", f"x={xd}"], expect_ok=False,
        contains=r"input 'x' must be f32")
    run([a.host_app, lib], expect_ok=False, contains=r"input 'x' .* is not bound")
    run([a.host_app, lib, "--input", f"y={x3}"], expect_ok=False,
        contains=r"no input 'y'; its inputs are 'x'")
    run([a.host_app, os.path.join(a.work, "missing.so"), "--input", f"x={x3}"],
        expect_ok=False, contains=r"NOT_FOUND.*missing\.so: cannot open")
    data = open(lib, "rb").read()
    truncated = os.path.join(a.work, "truncated.so")
    open(truncated, "wb").write(data[: len(data) // 2])
    run([a.host_app, truncated, "--input", f"x={x3}"], expect_ok=False,
        contains=r"CORRUPT|truncated")
    # Alter one byte inside the package (the .dlc_package section), well past its header.
    sections = run(["readelf", "-S", "--wide", lib])
    m = re.search(r"\.dlc_package\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)", sections)
    if not m:
        sys.exit("FAILED: no .dlc_package section in the library")
    start, size = int(m.group(1), 16), int(m.group(2), 16)
    if data[start:start + 8] != b"\x89DLCPKG\n" or size < 8192:
        sys.exit(f"FAILED: the .dlc_package section ({size} bytes) does not start with the magic")
    altered = bytearray(data)
    altered[start + 4096] ^= 0x5A
    bad = os.path.join(a.work, "altered.so")
    open(bad, "wb").write(bytes(altered))
    run([a.host_app, bad, "--input", f"x={x3}"], expect_ok=False,
        contains=r"CORRUPT.*checksum")

    print("== .npy files: the host app reads them with dlc's own reader (dlc_array_read_npy),")
    print("   so it accepts and refuses exactly what `dlc run` does, with the same message")
    def npy(name, header, payload):
        header = header + " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
        path = os.path.join(a.work, name)
        with open(path, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") +
                    header.encode() + payload)
        return path
    ones = np.ones((2, 64), np.float32).tobytes()
    # A duplicated key: Python's literal (NumPy's reader) keeps the last, so this is f4 data.
    dup = npy("dup.npy", "{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, "
              "'shape': (2, 64), }", ones)
    run([a.host_app, lib, "--input", f"x={dup}", "--device", "cpu"],
        contains=r"output 'probs': float32 \[2,10\]")
    for name, header, payload, why in [
            ("shape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (a, 64), }", ones,
             r"malformed header \(expected a non-negative integer dim"),
            ("tail.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 64), }",
             ones + b"xx", r"2 bytes after the data of the f32\[2,64\] array"),
            ("short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 64), }", ones,
             r"truncated data: the header says f32\[3,64\]"),
            ("fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 64), }", ones,
             r"Fortran-ordered arrays are not supported"),
            ("big.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 64), }", ones,
             r"big-endian dtype '>f4' is not supported")]:
        path = npy(name, header, payload)
        host = run([a.host_app, lib, "--input", f"x={path}"], expect_ok=False,
                   contains=re.escape(path) + ": " + why)
        cli = run([a.dlc, "run", os.path.join(ROOT, "models", "mlp.onnx"), "--device", "cpu",
                   "--input", f"x={path}"], expect_ok=False, contains=re.escape(path) + ": " + why)
        said = [re.search(re.escape(path) + r": (.*)", o).group(1) for o in (host, cli)]
        if said[0] != said[1]:
            sys.exit(f"FAILED: the host app says {said[0]!r}, dlc run says {said[1]!r}")
    print("model library test: ok")


if __name__ == "__main__":
    main()
