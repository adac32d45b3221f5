#!/usr/bin/env python3
"""The interpolation layout (``Layout::Interp``: ``fzpack_core::szp::tiled`` through the
``fzpack`` facade) against SZ3 in one run: ratio and single-thread speed per field and bound.

For each field of the data directory (``NAME_D0xD1x...xDk.f32|f64``, the shared data
collection; fields with non-finite values are skipped and said so) and each relative bound
(``eb = rel * (max - min)``), in turn:

* SZ3 through ``pysz`` in this process (ABS mode, its default predictor, the field's real
  dims, OpenMP off), best of ``--rounds`` after one warm-up, as ``scripts/bench-peers.py``
  measures it (its loader and SZ3 codec are reused from there: end to end through the Python
  API, which allocates its output on every call);
* the layout through ``std-ext/examples/interp_one.rs FILE REL`` (built here with cargo):
  the archive exactly as every front end writes it (header, tile table, tiles, extension),
  with the field's shape, the facade's ``Encoder``/``Decoder`` on the calling thread with
  their ``Vec`` reused across rounds, best of ``--rounds`` after a warm-up, every element
  checked against the bound; beside it, in the same process, a warm ``memcpy`` of the field
  and the block-head layout's ratio.

So the two speeds are measured the way each library is used (SZ3's allocating Python call,
the facade's reused buffers) — which favours fzpack slightly; the ratios are exact either
way. Everything runs on one thread (``RAYON_NUM_THREADS = OMP_NUM_THREADS = 1``).

The script installs nothing: run it with a Python that has ``numpy`` and ``pysz``; without
``pysz`` it says so and reports the tile codec alone.

Usage::

    python3 scripts/ratio-study.py [--data DIR] [--rel 1e-2,1e-3,1e-4] [--rounds 3] [--only NAME]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_peers", ROOT / "scripts" / "bench-peers.py")
peers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(peers)  # sets the one-thread environment before numpy loads

import numpy as np  # noqa: E402


def study_binary() -> Path:
    exe = ROOT / "target" / "release" / "examples" / "interp_one"
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "fzpack", "--example", "interp_one"],
        cwd=ROOT,
        check=True,
    )
    return exe


def tile_codec(exe: Path, path: Path, rel: float, rounds: int) -> dict:
    out = subprocess.run(
        [str(exe), str(path), repr(rel), "--reps", str(rounds)], capture_output=True, text=True
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip() or f"interp_one failed ({out.returncode})")
    return {k: float(v) for k, v in (kv.split("=") for kv in out.stdout.split())}


def sz3(make, a: np.ndarray, eb: float, rounds: int) -> dict:
    comp, dec = make(a, eb)
    best = [math.inf, math.inf]
    for r in range(rounds + 1):
        t0 = time.perf_counter()
        p = comp()
        t1 = time.perf_counter()
        x = dec(p)
        t2 = time.perf_counter()
        if r:
            best = [min(best[0], t1 - t0), min(best[1], t2 - t1)]
    mx, _psnr, over = peers.quality(a, x, eb)
    gb = a.nbytes / 1e9
    return {
        "ratio": a.nbytes / peers.nbytes(p),
        "enc_gbs": gb / best[0],
        "dec_gbs": gb / best[1],
        "err": mx / eb,
        "over": over,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help="directory of NAME_D0x...xDk.f32|f64 fields")
    ap.add_argument("--rel", default="1e-2,1e-3,1e-4")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated substrings of field names")
    args = ap.parse_args()
    rels = [float(r) for r in args.rel.split(",")]
    data = peers.find_data(args.data)
    if data is None:
        print("no data directory found (--data or FZPACK_SHARED): nothing to measure")
        return 1
    only = [o for o in args.only.split(",") if o]
    fields = peers.load(data, False, only)
    try:
        make = peers.codec_sz3()
    except peers.Missing as e:
        print(f"SZ3 not measured: {e}")
        make = None
    exe = study_binary()
    print(f"data: {data}; one thread; best of {args.rounds} rounds")
    print()
    print("| field | rel | interp ratio | SZ3 ratio | interp / SZ3 | interp enc GB/s | SZ3 enc GB/s | "
          "enc × | interp dec GB/s | SZ3 dec GB/s | dec × |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    per = {rel: [] for rel in rels}
    for name, a in fields:
        path = data / f"{name}.{'f32' if a.dtype == np.float32 else 'f64'}"
        lo, hi = float(a.min()), float(a.max())
        for rel in rels:
            eb = rel * (hi - lo)
            s = sz3(make, a, eb, args.rounds) if make else None
            try:
                t = tile_codec(exe, path, rel, args.rounds)
            except RuntimeError as e:
                print(f"| {name} | {rel:g} | error: {e} |")
                continue
            if s and s["over"]:
                print(f"note: SZ3 broke its bound on {s['over']} values of {name} at {rel:g}")
            f = (lambda k, d=2: f"{s[k]:.{d}f}") if s else (lambda k, d=2: "-")
            x = (lambda k: f"{t[k] / s[k]:.2f}") if s else (lambda k: "-")
            print(f"| {name} | {rel:g} | {t['ratio']:.2f} | {f('ratio')} | {x('ratio')} | "
                  f"{t['enc_gbs']:.2f} | {f('enc_gbs')} | {x('enc_gbs')} | {t['dec_gbs']:.2f} | "
                  f"{f('dec_gbs')} | {x('dec_gbs')} |", flush=True)
            per[rel].append((t, s))
    mem = [t["memcpy_gbs"] for r in per.values() for t, _ in r]
    heads = {rel: peers.geomean([t["heads_ratio"] for t, _ in r]) for rel, r in per.items() if r}
    print()
    if mem:
        print(f"warm memcpy of the fields in the same runs: {min(mem):.1f}-{max(mem):.1f} GB/s; "
              "block-head layout ratio (geomean): "
              + ", ".join(f"{rel:g}: {v:.2f}" for rel, v in heads.items()))
        print()
    print("| rel | fields | interp ratio | SZ3 ratio | interp / SZ3 | interp enc GB/s | SZ3 enc GB/s | "
          "enc × | interp dec GB/s | SZ3 dec GB/s | dec × |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for rel, rows in per.items():
        if not rows:
            continue
        g = lambda k, i: peers.geomean([r[i][k] for r in rows if r[i]])  # noqa: E731
        have = all(r[1] for r in rows)
        cols = []
        for k in ("ratio", "enc_gbs", "dec_gbs"):
            tv, sv = g(k, 0), (g(k, 1) if have else float("nan"))
            cols += [f"{tv:.2f}", f"{sv:.2f}", f"{tv / sv:.2f}" if have else "-"]
        print(f"| {rel:g} | {len(rows)} | " + " | ".join(cols) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
