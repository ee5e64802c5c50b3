#!/usr/bin/env python3
"""Step profiles of one model side by side: `dlc run --profile --profile-json FILE` of several
builds or flag sets (`LABEL=FILE.json` each), a row per kernel with its time in each, the fastest
label, and the kernel's summary (a GEMM's shape and tile, the profile's `detail`; where the
labels ran it on different tiles, each label's tile).

    profile_compare.py base=p0.json plain=p1.json hopper=p2.json [--top 20] [--min-gain 0.05]

Steps are matched by the first node each came from (`node 'conv_27' (Conv)`), in order of
occurrence, so that variants whose fusion or extra nodes differ still line up; realize-int8's
product `conv_27/int8` matches its float twin `conv_27` (an int8 model against fp16); a step
missing from a profile shows '-'. The totals are the step-by-step sums (no CUDA graph: more than
`--benchmark` gives). `--top N` keeps the N steps where the best label gains the most over the
first; `--min-gain F` only those it beats by more than F (a share of the first's time).
`--self-test` checks the matching and the choice of the best on made-up profiles.
"""
import argparse
import json
import re
import sys
from collections import defaultdict


def step_key(step):
    """The first node a step came from (its kind for copies and host steps)."""
    m = re.search(r"node '([^']*)'", step.get("origin", ""))
    if not m:
        return step.get("kind", "?") + ":" + step.get("origin", "")
    name = m.group(1)
    return name[: -len("/int8")] if name.endswith("/int8") else name


def keyed(steps):
    """[(key, occurrence), step] in program order: the n-th step from node X is (X, n)."""
    seen = defaultdict(int)
    out = []
    for s in steps:
        k = step_key(s)
        out.append(((k, seen[k]), s))
        seen[k] += 1
    return out


def tile_of(step):
    """The GEMM tile a step's detail names (`tile 128x64x64/4x2s2k1`), or None."""
    m = re.search(r"\btile (\S+?),?(\s|$)", step.get("detail", ""))
    return m.group(1) if m else None


def compare(profiles):
    """profiles: [(label, {"steps": [...]}), ...]. Returns (rows, totals): each row a dict with
    key, kernel, detail, ms (label -> ms or None) and best (the label of the least ms)."""
    order, by_label = [], {}
    for label, prof in profiles:
        table = {}
        for key, step in keyed(prof.get("steps", [])):
            table[key] = step
            if key not in order:
                order.append(key)
        by_label[label] = table
    labels = [label for label, _ in profiles]
    rows = []
    for key in order:
        first = next(by_label[lb][key] for lb in labels if key in by_label[lb])
        ms = {lb: by_label[lb][key]["ms"] if key in by_label[lb] else None for lb in labels}
        timed = {lb: v for lb, v in ms.items() if v is not None}
        tiles = {lb: tile_of(by_label[lb][key]) if key in by_label[lb] else None for lb in labels}
        rows.append({"key": key[0], "kernel": first.get("kernel", ""),
                     "detail": first.get("detail", ""), "ms": ms, "tiles": tiles,
                     "best": min(timed, key=timed.get) if timed else None})
    totals = {lb: sum(s["ms"] for s in prof.get("steps", [])) for lb, prof in profiles}
    return rows, totals


def gain(row, base):
    """How much the best label saves over `base` on this row (ms; 0 where base is missing)."""
    b, best = row["ms"].get(base), row["ms"].get(row["best"])
    return (b - best) if b is not None and best is not None else 0.0


def print_table(rows, totals, labels, top=0, min_gain=0.0, out=sys.stdout):
    base = labels[0]
    shown = rows
    if min_gain > 0:
        shown = [r for r in shown if r["ms"].get(base) and gain(r, base) > min_gain * r["ms"][base]]
    if top > 0:
        shown = sorted(shown, key=lambda r: -gain(r, base))[:top]
    head = " | ".join(f"{lb:>9}" for lb in labels)
    def short(key):
        return key if len(key) <= 44 else "..." + key[-41:]

    print(f"| {'node':<44} | {head} | {'best':<9} | kernel |", file=out)
    for r in shown:
        cells = " | ".join(f"{r['ms'][lb]:9.4f}" if r["ms"][lb] is not None else f"{'-':>9}"
                           for lb in labels)
        what = r["kernel"] + (f" ({r['detail']})" if r["detail"] else "")
        # Where the labels ran the kernel on different tiles, each label's.
        tiles = r.get("tiles", {})
        if len({t for t in tiles.values() if t}) > 1:
            what += " [tiles: " + ", ".join(f"{lb} {t}" for lb, t in tiles.items() if t) + "]"
        print(f"| {short(r['key']):<44} | {cells} | {r['best'] or '-':<9} | {what} |", file=out)
    cells = " | ".join(f"{totals[lb]:9.4f}" for lb in labels)
    print(f"| {'total (step by step)':<44} | {cells} | {'':<9} | |", file=out)
    best_of_each = sum(r["ms"][r["best"]] for r in rows if r["best"])
    print(f"each step at its best label: {best_of_each:.4f} ms against {totals[base]:.4f} "
          f"for {base}", file=out)


def self_test():
    a = {"steps": [
        {"kind": "kernel", "kernel": "g0_q", "origin": "node 'input.q' (QuantizeLinear)", "ms": 0.02},
        {"kind": "kernel", "kernel": "g1_conv", "origin": "node 'conv_1/int8' (ConvInteger)",
         "detail": "i8 GEMM, batch 1 of 64 x 64 x 64, tile 128x64x64/4x2s2k1", "ms": 0.05},
        {"kind": "kernel", "kernel": "g1_conv", "origin": "node 'conv_1/int8' (ConvInteger)", "ms": 0.04},
    ]}
    # The variant has an extra step first (a cast) and the conv's repeat is faster.
    b = {"steps": [
        {"kind": "kernel", "kernel": "g0_cast", "origin": "node 'x.f32' (Cast)", "ms": 0.01},
        {"kind": "kernel", "kernel": "g1_mul", "origin": "node 'input.q' (Mul) + node 'input.q' (QuantizeLinear)", "ms": 0.03},
        {"kind": "kernel", "kernel": "g2_conv", "origin": "node 'conv_1/int8' (ConvInteger)",
         "detail": "i8 GEMM, batch 1 of 64 x 64 x 64, tile 64x64x64/2x2s2k1", "ms": 0.06},
        {"kind": "kernel", "kernel": "g2_conv", "origin": "node 'conv_1/int8' (ConvInteger)", "ms": 0.02},
    ]}
    rows, totals = compare([("a", a), ("b", b)])
    keys = [(r["key"], r["ms"]["a"], r["ms"]["b"], r["best"]) for r in rows]
    want = [("input.q", 0.02, 0.03, "a"), ("conv_1", 0.05, 0.06, "a"),
            ("conv_1", 0.04, 0.02, "b"), ("x.f32", None, 0.01, "b")]
    assert keys == want, keys
    assert rows[1]["detail"].startswith("i8 GEMM"), rows[1]
    assert rows[1]["tiles"] == {"a": "128x64x64/4x2s2k1", "b": "64x64x64/2x2s2k1"}, rows[1]
    assert abs(totals["a"] - 0.11) < 1e-12 and abs(totals["b"] - 0.12) < 1e-12, totals
    assert abs(gain(rows[2], "a") - 0.02) < 1e-12 and gain(rows[3], "a") == 0.0
    # An int8 product lines up with its float twin.
    f = {"steps": [{"kind": "kernel", "kernel": "g1_conv", "origin": "node 'conv_1' (Conv)", "ms": 0.07}]}
    rows2, _ = compare([("fp16", f), ("int8", a)])
    conv = [r for r in rows2 if r["key"] == "conv_1"]
    assert len(conv) == 2 and conv[0]["ms"] == {"fp16": 0.07, "int8": 0.05}, rows2
    import io
    buf = io.StringIO()
    print_table(rows, totals, ["a", "b"], top=1, out=buf)
    lines = buf.getvalue().splitlines()
    assert len(lines) == 4 and "conv_1" in lines[1] and "0.0200" in lines[1], lines
    buf = io.StringIO()
    print_table(rows, totals, ["a", "b"], out=buf)
    assert "[tiles: a 128x64x64/4x2s2k1, b 64x64x64/2x2s2k1]" in buf.getvalue(), buf.getvalue()
    assert "each step at its best label: 0.1000 ms" in lines[3], lines
    print("profile_compare self-test: ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profiles", nargs="*", metavar="LABEL=FILE.json")
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--min-gain", type=float, default=0.0)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return 0
    if not args.profiles:
        ap.error("give at least one LABEL=FILE.json")
    profiles = []
    for item in args.profiles:
        label, sep, path = item.partition("=")
        if not sep or not label or not path:
            ap.error(f"'{item}' is not LABEL=FILE.json")
        try:
            with open(path) as f:
                profiles.append((label, json.load(f)))
        except (OSError, json.JSONDecodeError) as e:
            ap.error(f"{path}: {e}")
    rows, totals = compare(profiles)
    print_table(rows, totals, [lb for lb, _ in profiles], args.top, args.min_gain)
    return 0


if __name__ == "__main__":
    sys.exit(main())
