#!/usr/bin/env python3
"""Compare two builds of the `fzpack` CLI cell by cell, timed in alternation in one sitting.

    scripts/bench-ab.py OLD_BINARY NEW_BINARY [--rounds 3] [-- BENCH ARGS...]

Runs `OLD bench ARGS --json` and `NEW bench ARGS --json` in turn, `--rounds` times each, keeps
the best compress and decompress GB/s of every cell (file, codec, path, setting) per binary, and
prints new/old per cell with the geometric mean. A drift in the machine's speed falls on both
binaries alike, so the ratio means more than either figure. Exit status 0; the verdict is the
caller's (a cell below 0.97 or a geomean below 1.0 is what the project calls a regression).
"""

import argparse
import json
import math
import subprocess
import sys


def run(binary, args):
    out = subprocess.run(
        [binary, "bench", *args, "--json"], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out)


def key(row):
    return (row["file"], row["codec"], row["path"], row["setting"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=3)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    args = argv[cut + 1:]
    best = {"old": {}, "new": {}}
    for r in range(a.rounds):
        for name, binary in (("old", a.old), ("new", a.new)):
            for row in run(binary, args):
                b = best[name].setdefault(key(row), [0.0, 0.0])
                b[0] = max(b[0], row["compress_gbps"] or 0.0)
                b[1] = max(b[1], row["decompress_gbps"] or 0.0)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    logs = {"compress": [], "decompress": []}
    print(f"{'file':34} {'codec':6} {'path':9} {'setting':10} {'comp old':>9} {'new':>7} {'x':>6} "
          f"{'dec old':>8} {'new':>7} {'x':>6}")
    for k in sorted(best["old"]):
        if k not in best["new"]:
            continue
        o, n = best["old"][k], best["new"][k]
        xs = []
        for i, what in enumerate(("compress", "decompress")):
            x = n[i] / o[i] if o[i] > 0 else float("nan")
            if x == x:
                logs[what].append(math.log(x))
            xs.append(x)
        f = k[0][-34:]
        print(f"{f:34} {k[1]:6} {k[2]:9} {k[3]:10} {o[0]:9.3f} {n[0]:7.3f} {xs[0]:6.3f} "
              f"{o[1]:8.3f} {n[1]:7.3f} {xs[1]:6.3f}")
    for what, ls in logs.items():
        if ls:
            print(f"{what}: geomean new/old {math.exp(sum(ls) / len(ls)):.3f}, "
                  f"min {math.exp(min(ls)):.3f} over {len(ls)} cells")


if __name__ == "__main__":
    main()
