#!/usr/bin/env python3
"""Checks the source tree against DESIGN.md: who may include whom, and the size budget.

1. Includes follow the folder table of DESIGN.md ("Folders"): each folder includes only the
   folders it depends on. A quoted include of a project header ("ir/graph.h") is checked;
   system and third-party headers (<...>) are not.
2. No source file is over MAX_LINES lines, except those in EXCEPTIONS (each with its reason).

Prints what it checked and every violation; exits 1 on any. Run by ctest (`layout`) and by
.ci/run. Usage: scripts/check-layout.py [--counts]   (--counts: lines per folder too)
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 800

# Files allowed past MAX_LINES, with the reason. Keep it empty; a new entry needs a reason a
# reviewer accepts.
EXCEPTIONS = {}

# (folder prefix, the project include prefixes it may use). The first matching prefix wins,
# so subfolders with rules of their own come first.
RULES = [
    ("python/", ["dlc/"]),  # the extension sees the C API only (runtime/dlc/dlc.h)
    ("runtime/jit/", ["ir/", "frontend/", "passes/", "codegen/", "runtime/"]),
    ("runtime/", ["ir/", "runtime/", "dlc/"]),
    ("codegen/", ["ir/", "codegen/", "runtime/program.h"]),
    ("passes/", ["ir/", "passes/"]),
    ("frontend/", ["ir/", "frontend/", "onnx/"]),
    ("ir/eval/", ["ir/"]),
    ("ir/", ["ir/"]),
]
# Include prefixes forbidden even where the rule above allows the folder.
FORBIDDEN = [
    ("runtime/", "runtime/jit/", "the shipped runtime never includes the compile-and-run layer"),
    ("ir/", "ir/eval/", "op schemas and the IR core do not depend on the reference kernels"),
]
SOURCE = re.compile(r"\.(h|hpp|cc|cpp|cuh|def)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def tracked():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode == 0 and out.stdout:
        return [p for p in out.stdout.splitlines() if (ROOT / p).is_file()]
    # Not a git checkout (an exported tree): every file under the source folders.
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()
            and not str(p.relative_to(ROOT)).startswith(("build/", ".git/"))]


def rule_for(path):
    for prefix, allowed in RULES:
        if path.startswith(prefix):
            return prefix, allowed
    return None, None


def check_includes(files):
    errors, edges = [], {}
    for path in files:
        prefix, allowed = rule_for(path)
        if prefix is None or not SOURCE.search(path):
            continue
        text = (ROOT / path).read_text(errors="replace")
        for inc in INCLUDE.findall(text):
            if "/" not in inc:
                continue  # a header next to the file
            folder = inc.split("/")[0]
            edges.setdefault(prefix.rstrip("/"), set()).add(folder)
            if not any(inc.startswith(a) for a in allowed):
                errors.append(f"{path}: includes \"{inc}\"; {prefix} may include only "
                              + ", ".join(allowed))
                continue
            for scope, bad, why in FORBIDDEN:
                if path.startswith(scope) and inc.startswith(bad) and not path.startswith(bad):
                    errors.append(f"{path}: includes \"{inc}\": {why}")
    return errors, edges


def check_sizes(files):
    errors = []
    for path in files:
        if not SOURCE.search(path) and not path.endswith(".py"):
            continue
        lines = sum(1 for _ in open(ROOT / path, errors="replace"))
        if lines > MAX_LINES and path not in EXCEPTIONS:
            errors.append(f"{path}: {lines} lines, over the budget of {MAX_LINES} (split it "
                          "along the lines DESIGN.md draws, or list it in EXCEPTIONS with a "
                          "reason)")
    for path in EXCEPTIONS:
        if path not in files:
            errors.append(f"EXCEPTIONS names {path}, which does not exist: remove the entry")
    return errors


def counts(files):
    per = {}
    for path in files:
        if SOURCE.search(path):
            top = path.split("/")[0] if "/" in path else "."
            per[top] = per.get(top, 0) + sum(1 for _ in open(ROOT / path, errors="replace"))
    return per


def main():
    files = tracked()
    inc_errors, edges = check_includes(files)
    size_errors = check_sizes(files)
    print("include graph (folder -> project folders it includes):")
    for folder in sorted(edges):
        print(f"  {folder} -> {', '.join(sorted(edges[folder]))}")
    if "--counts" in sys.argv:
        print("lines of C++ per folder:")
        for folder, n in sorted(counts(files).items()):
            print(f"  {folder}: {n}")
    for e in inc_errors + size_errors:
        print("error: " + e)
    if inc_errors or size_errors:
        print(f"check-layout: {len(inc_errors)} include and {len(size_errors)} size violations")
        return 1
    print(f"check-layout: ok ({len(files)} files; includes follow DESIGN.md; none over "
          f"{MAX_LINES} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
