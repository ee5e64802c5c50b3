#!/usr/bin/python3
"""TensorFlow frontend tests: GraphDefs written as text (tests/tf/graphs/*.pbtxt, encoded to
binary .pb at build time with protoc) run through `dlc run`, their outputs checked against
NumPy computations of each op's documented TensorFlow semantics.

    check_ops.py --dlc BUILD/tools/dlc/dlc --graphs BUILD/tests/tf/graphs [--device cpu|gpu]
                 [-k SUBSTRING] [--text]

The cases live in cases_*.py beside this file: each module has CASES, a list of Case. A case
runs one graph on seeded random inputs and compares every expected output; or, with `error`,
expects dlc to fail with that text in its message. `--text` runs the .pbtxt files directly
(the text GraphDef path) instead of the encoded .pb.
"""
import argparse
import dataclasses
import importlib
import os
import re
import subprocess
import sys
import tempfile
from typing import Callable, Dict, List, Optional

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclasses.dataclass
class Case:
    name: str                                   # unique; also the test's label
    graph: str                                  # file stem in tests/tf/graphs
    inputs: Dict[str, Callable] = dataclasses.field(default_factory=dict)  # name -> rng -> array
    expect: Optional[Callable] = None           # (**inputs) -> {output tensor name: array}
    args: List[str] = dataclasses.field(default_factory=list)  # extra `dlc run` flags
    rtol: float = 1e-5
    atol: float = 1e-6
    error: Optional[str] = None                 # expected failure: text the error must contain
    gpu: bool = True                            # also run with --device gpu


def file_name(output_name):
    """The file `dlc run -o DIR` writes an output to (tools/dlc/run_util.cc outputFileName)."""
    base = re.sub(r"[^A-Za-z0-9._-]", "_", output_name)
    return ("_" + base if base.strip(".") == "" else base) + ".npy"


def run_case(case, dlc, graphs, device, text):
    path = os.path.join(graphs, case.graph + (".pbtxt" if text else ".pb"))
    rng = np.random.default_rng(abs(hash(case.name)) % (2**32))
    with tempfile.TemporaryDirectory() as tmp:
        feeds = {}
        cmd = [dlc, "run", path, "-o", os.path.join(tmp, "out"), "--device", device]
        for name, make in case.inputs.items():
            feeds[name] = np.asarray(make(rng))
            f = os.path.join(tmp, re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".in.npy")
            np.save(f, feeds[name])
            cmd += ["--input", f"{name}={f}"]
        cmd += case.args
        r = subprocess.run(cmd, capture_output=True, text=True)
        if case.error is not None:
            if r.returncode == 0:
                return f"expected an error containing {case.error!r}, but dlc succeeded"
            if case.error not in r.stderr:
                return f"expected an error containing {case.error!r}, got:\n{r.stderr}"
            if "Aborted" in r.stderr or r.returncode < 0:
                return f"dlc crashed (exit {r.returncode}):\n{r.stderr}"
            return None
        if r.returncode != 0:
            return f"dlc failed (exit {r.returncode}):\n{r.stderr}{r.stdout}"
        expected = case.expect(**{k.replace("/", "_").replace(":", "_"): v
                                  for k, v in feeds.items()})
        for out, want in expected.items():
            f = os.path.join(tmp, "out", file_name(out))
            if not os.path.exists(f):
                return f"no output {out!r} ({os.listdir(os.path.join(tmp, 'out'))})"
            got = np.load(f)
            want = np.asarray(want)
            if got.shape != want.shape:
                return f"output {out!r}: shape {got.shape}, expected {want.shape}"
            if got.dtype != want.dtype:
                return f"output {out!r}: dtype {got.dtype}, expected {want.dtype}"
            if want.dtype.kind in "biu":
                if not np.array_equal(got, want):
                    return f"output {out!r}: got\n{got}\nexpected\n{want}"
            elif not np.allclose(got, want, rtol=case.rtol, atol=case.atol, equal_nan=True):
                err = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))
                return f"output {out!r}: max abs error {err:g}\ngot\n{got}\nexpected\n{want}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--graphs", required=True, help="directory of the encoded .pb files")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--text", action="store_true", help="run the .pbtxt sources instead")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    args = ap.parse_args()
    graphs = os.path.join(HERE, "graphs") if args.text else args.graphs
    sys.path.insert(0, HERE)
    cases = []
    for f in sorted(os.listdir(HERE)):
        if f.startswith("cases_") and f.endswith(".py"):
            cases += importlib.import_module(f[:-3]).CASES
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit(f"duplicate case names: {sorted(dup)}")
    failed = 0
    ran = 0
    for c in cases:
        if args.k not in c.name or (args.device == "gpu" and not c.gpu):
            continue
        ran += 1
        msg = run_case(c, args.dlc, graphs, args.device, args.text)
        if msg:
            failed += 1
            print(f"FAIL {c.name}: {msg}")
        else:
            print(f"ok   {c.name}")
    print(f"{ran - failed}/{ran} TensorFlow op cases passed on {args.device}"
          f"{' (text GraphDefs)' if args.text else ''}")
    sys.exit(1 if failed or ran == 0 else 0)


if __name__ == "__main__":
    main()
