#!/usr/bin/env python3
"""Tables of BENCHMARKS.md from the release CLI's measurements (standard library only).

Subcommands, driven by ``scripts/bench-all.sh``:

``json2csv OUT.csv TABLE=IN.json ...``
    ``fzpack bench --json`` arrays to one CSV, a ``table`` column naming the run each row came
    from (``szp-paths``, ``szp-layouts``, ``pernix``, ``quick``); columns are the union of the
    JSON keys, in the order first seen.

``finite FILE ...``
    Prints the names of the raw ``.f32``/``.f64`` files that hold only finite values (the ones
    ``fzpack bench`` and every peer codec accept), one a line.

``markdown CLI.csv``
    The SZp paths/threads, SZp layouts and PERNIX tables in BENCHMARKS.md's form.

``missing --fzpack BIN --data DIR --out OUT.csv [--abs 1e-2,1e-1] [--repeat 5] [--quick] [--python PY]``
    Missing values: the Levitus ocean temperature field (NaN on land) and ETOPO5 with the ocean
    (elevation < 0) set to NaN, each compressed with ``fzpack compress FILE --abs E`` with the
    NaN kept and with the NaN replaced by 0. Sizes and ratios are exact. Speeds are end-to-end
    CLI runs on one thread (``--threads 1``), input and output in a RAM-backed directory
    (``/dev/shm`` when present), best of ``--repeat`` runs of compress and decompress taking
    turns, so process start, file reading and writing are included; each variant's warm
    ``fzpack bench`` speeds (SIMD path, one thread, the same bound as a fraction of the finite
    range) are added. With ``--python PY`` (a Python with numpy and
    fzpack's wheel), both variants are also timed in one process through the wheel
    (``fzpack.szp_compress(a, E, mode="abs")`` / ``fzpack.szp_decompress``, one thread, a fresh
    output per call, the two variants taking turns, best of ``--repeat`` after a warm-up), which
    leaves process start and file I/O out. Every decoded file is checked: NaN exactly where the
    input has NaN, every other value within E. ``--quick``: Levitus at the first bound.

Markdown goes to standard output; a failed check exits non-zero.
"""

from __future__ import annotations

import argparse
import array
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LEVITUS = "ferret_levitus_temp_20x180x360.f32"
ETOPO5 = "ferret_etopo5_2161x4320.f32"


# --- json2csv ---------------------------------------------------------------------------------


def json2csv(out: Path, specs: list[str]) -> int:
    rows: list[dict] = []
    for spec in specs:
        table, _, path = spec.partition("=")
        if not path:
            raise SystemExit(f"json2csv: expected TABLE=FILE, got {spec!r}")
        data = json.loads(Path(path).read_text())
        if not isinstance(data, list) or not data:
            raise SystemExit(f"json2csv: {path} holds no rows")
        rows += [{"table": table, **r} for r in data]
    cols = list(dict.fromkeys(k for r in rows for k in r))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out} ({len(rows)} rows)")
    return 0


# --- finite ---------------------------------------------------------------------------------


def finite(paths: list[Path]) -> int:
    for p in paths:
        a = array.array("d" if p.suffix == ".f64" else "f")
        raw = p.read_bytes()
        a.frombytes(raw[: len(raw) // a.itemsize * a.itemsize])
        if sys.byteorder != "little":
            a.byteswap()
        if all(math.isfinite(v) for v in a):
            print(p)
        else:
            print(f"note: {p.name} holds non-finite values; left out of the finite-only tables", file=sys.stderr)
    return 0


# --- markdown ---------------------------------------------------------------------------------


def fnum(x: str, digits: int = 2) -> str:
    try:
        return f"{float(x):.{digits}f}"
    except ValueError:
        return "-"


def bound_of(setting: str) -> str:
    return setting.split("=", 1)[1] if "=" in setting else setting


def paths_table(rows: list[dict], key: str, label: str) -> list[str]:
    """One line per (file, setting): ratio, err/bound, PSNR, then c / d GB/s of each path."""
    paths = list(dict.fromkeys(r["path"] for r in rows))
    nthreads = sorted({r["threads"] for r in rows if r["path"] == "parallel"})
    head = {"scalar": "scalar c / d", "simd": "SIMD c / d",
            "parallel": f"{'/'.join(nthreads) or 'all'} threads c / d"}
    out = [f"| field | {label} | ratio | err/bound | PSNR dB | " + " | ".join(head.get(p, p) for p in paths) + " |",
           "|---|---|---|---|---|---|" + "---|" * (len(paths) - 1)]
    groups: dict[tuple, dict] = {}
    for r in rows:
        groups.setdefault((r["file"], r[key]), {})[r["path"]] = r
    for (f, s), by in groups.items():
        first = next(iter(by.values()))
        cells = [f"{fnum(by[p]['compress_gbps'])} / {fnum(by[p]['decompress_gbps'])}" if p in by else "-"
                 for p in paths]
        name = Path(f).stem
        out.append(f"| {name} | {bound_of(s)} | {fnum(first['ratio'])} | {fnum(first.get('err_over_bound', ''), 3)} | "
                   f"{fnum(first['psnr_db'])} | " + " | ".join(cells) + " |")
    return out


def geomean(xs: list[float]) -> float:
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def layouts_table(rows: list[dict]) -> list[str]:
    heads = {(r["file"], r["setting"]): r for r in rows if r["codec"] == "szp"}
    stage = {(r["file"], r["setting"]): r for r in rows if r["codec"] == "szp-fzgm"}
    out = ["| bound (NOA) | ratio heads / stage (geomean) | per field | compress heads / stage | decompress heads / stage |",
           "|---|---|---|---|---|"]
    for s in dict.fromkeys(k[1] for k in heads):
        keys = [k for k in heads if k[1] == s and k in stage]
        if not keys:
            continue
        per = [float(heads[k]["ratio"]) / float(stage[k]["ratio"]) for k in keys]
        c = geomean([float(heads[k]["compress_gbps"]) / float(stage[k]["compress_gbps"]) for k in keys])
        d = geomean([float(heads[k]["decompress_gbps"]) / float(stage[k]["decompress_gbps"]) for k in keys])
        out.append(f"| {bound_of(s)} | {geomean([float(heads[k]['ratio']) for k in keys]):.2f} / "
                   f"{geomean([float(stage[k]['ratio']) for k in keys]):.2f} | {min(per):.2f}–{max(per):.2f}× | "
                   f"{c:.2f}× | {d:.2f}× |")
    return out


def markdown(path: Path) -> int:
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    tables = list(dict.fromkeys(r["table"] for r in rows))
    for t in tables:
        sel = [r for r in rows if r["table"] == t]
        bad = [r for r in sel if r.get("identical_to_scalar") not in ("True", "true", "")]
        if t == "szp-layouts":
            print(f"### {t}\n")
            print("\n".join(layouts_table(sel)))
            print()
            continue
        for codec in dict.fromkeys(r["codec"] for r in sel):
            cs = [r for r in sel if r["codec"] == codec]
            print(f"### {t}\n" if codec == t else f"### {t}: {codec}\n")
            print("\n".join(paths_table(cs, "setting", "bits" if codec == "pernix" else "bound (NOA)")))
            print()
        if bad:
            print(f"ERROR: {len(bad)} rows of {t} differ from the scalar path", file=sys.stderr)
            return 1
    return 0


# --- missing values ---------------------------------------------------------------------------


def read_f32(p: Path) -> array.array:
    a = array.array("f")
    a.frombytes(p.read_bytes())
    if sys.byteorder != "little":
        a.byteswap()
    return a


def write_f32(p: Path, a: array.array) -> None:
    b = array.array("f", a)
    if sys.byteorder != "little":
        b.byteswap()
    p.write_bytes(b.tobytes())


def check(orig: array.array, dec: array.array, eb: float) -> float:
    """Max |error| over finite values; raises if NaN positions differ or the bound breaks."""
    if len(orig) != len(dec):
        raise SystemExit(f"decoded {len(dec)} values, expected {len(orig)}")
    worst = 0.0
    for i, (x, y) in enumerate(zip(orig, dec)):
        if math.isnan(x):
            if not math.isnan(y):
                raise SystemExit(f"value {i}: NaN in, {y} out")
        elif math.isnan(y) or abs(x - y) > eb:
            raise SystemExit(f"value {i}: {x} in, {y} out, bound {eb}")
        else:
            worst = max(worst, abs(x - y))
    return worst


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


# Run by --python PY: argv = eb, repeat, then the variant files; prints one JSON object per file.
INPROC = r"""
import json, math, os, sys, time
os.environ["RAYON_NUM_THREADS"] = "1"
import numpy as np
import fzpack
eb, rep, paths = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
arrs = [np.fromfile(p, dtype="<f4") for p in paths]
best = [[math.inf, math.inf] for _ in paths]
size = [0] * len(paths)
for r in range(rep + 1):
    for i, a in enumerate(arrs):
        t0 = time.perf_counter()
        c = fzpack.szp_compress(a, eb, mode="abs")
        t1 = time.perf_counter()
        d = fzpack.szp_decompress(np.frombuffer(c, dtype=np.uint8))
        t2 = time.perf_counter()
        if r:
            best[i] = [min(best[i][0], t1 - t0), min(best[i][1], t2 - t1)]
        ok = np.array_equal(np.isnan(a), np.isnan(d)) and bool(np.nanmax(np.abs(a - d)) <= eb)
        if not ok:
            raise SystemExit(f"{paths[i]}: decoded values break the bound or the NaN mask")
        size[i] = len(c)
for p, a, (tc, td), n in zip(paths, arrs, best, size):
    print(json.dumps({"path": p, "bytes": n, "compress_gbs": a.nbytes / tc / 1e9, "decompress_gbs": a.nbytes / td / 1e9}))
"""


def inproc(py: str, eb: float, repeat: int, paths: list[Path]) -> dict[str, dict]:
    out = subprocess.run([py, "-c", INPROC, repr(eb), str(repeat), *map(str, paths)],
                         check=True, capture_output=True, text=True)
    return {r["path"]: r for r in map(json.loads, out.stdout.splitlines())}


def missing(args) -> int:
    data = Path(args.data)
    bounds = [float(x) for x in args.abs.split(",") if x]
    if args.quick:
        bounds = bounds[:1]
    tmp = Path(tempfile.mkdtemp(prefix="fzpack-missing-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    nan = float("nan")
    try:
        variants = []
        lev = data / LEVITUS
        if lev.is_file():
            a = read_f32(lev)
            variants.append(("Levitus temperature, land NaN", "NaN kept", a))
            variants.append(("Levitus temperature, land NaN", "NaN → 0", array.array("f", (0.0 if math.isnan(v) else v for v in a))))
        else:
            print(f"missing: {lev} not found; Levitus rows left out", file=sys.stderr)
        eto = data / ETOPO5
        if not args.quick:
            if eto.is_file():
                a = read_f32(eto)
                variants.append(("ETOPO5, ocean NaN", "NaN kept", array.array("f", (nan if v < 0 else v for v in a))))
                variants.append(("ETOPO5, ocean NaN", "NaN → 0", array.array("f", (0.0 if v < 0 else v for v in a))))
            else:
                print(f"missing: {eto} not found; ETOPO5 rows left out", file=sys.stderr)
        if not variants:
            print("missing: no data; nothing measured", file=sys.stderr)
            return 2
        rows, srcs = [], {}
        for i, (field, how, a) in enumerate(variants):
            src = tmp / f"v{i}_{len(a)}.f32"
            write_f32(src, a)
            raw = len(a) * 4
            finite = [v for v in a if not math.isnan(v)]
            nans = len(a) - len(finite)
            rng = (max(finite) - min(finite)) if finite else 0.0
            for eb in bounds:
                arc, dec = tmp / f"v{i}.szp", tmp / f"v{i}.out.f32"
                comp = [args.fzpack, "compress", str(src), "--abs", repr(eb), "-o", str(arc), "--threads", "1", "--force"]
                deco = [args.fzpack, "decompress", str(arc), "-o", str(dec), "--threads", "1", "--force"]
                tc = td = math.inf
                for _ in range(args.repeat):
                    tc = min(tc, timed(comp))
                    td = min(td, timed(deco))
                size = arc.stat().st_size
                err = check(a, read_f32(dec), eb)
                warm_c = warm_d = ""
                if rng > 0:
                    out = subprocess.run([args.fzpack, "bench", str(src), "--codec", "szp", "--paths", "simd",
                                          "--eb", repr(eb / rng), "--json"], check=True, capture_output=True, text=True)
                    r = json.loads(out.stdout)[0]
                    warm_c, warm_d = r["compress_gbps"], r["decompress_gbps"]
                srcs[(field, how, eb)] = src
                rows.append({"field": field, "missing": how, "values": len(a), "nan_fraction": nans / len(a),
                             "abs": eb, "bytes": size, "ratio": raw / size, "max_abs_err": err,
                             "cli_compress_s": tc, "cli_decompress_s": td,
                             "cli_compress_mbs": raw / tc / 1e6, "cli_decompress_mbs": raw / td / 1e6,
                             "bench_warm_compress_gbs": warm_c, "bench_warm_decompress_gbs": warm_d})
                r = rows[-1]
                print(f"  {field:32s} {how:9s} abs={eb:<6g} {size:>11,d} B ratio {r['ratio']:6.2f} "
                      f"err {err:.3g} CLI c {tc * 1e3:7.1f} ms d {td * 1e3:7.1f} ms", file=sys.stderr, flush=True)
        for r in rows:
            r["inproc_compress_gbs"] = r["inproc_decompress_gbs"] = ""
        if args.python:
            for field in dict.fromkeys(r["field"] for r in rows):
                for eb in bounds:
                    sel = [r for r in rows if r["field"] == field and r["abs"] == eb]
                    got = inproc(args.python, eb, args.repeat, [srcs[(field, r["missing"], eb)] for r in sel])
                    for r in sel:
                        g = got[str(srcs[(field, r["missing"], eb)])]
                        r["inproc_compress_gbs"], r["inproc_decompress_gbs"] = g["compress_gbs"], g["decompress_gbs"]
                        print(f"  {field:32s} {r['missing']:9s} abs={eb:<6g} in-process {g['bytes']:>11,d} B "
                              f"c {g['compress_gbs']:.3f} d {g['decompress_gbs']:.3f} GB/s", file=sys.stderr, flush=True)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        print("| field | missing values | ABS bound | bytes | ratio | NaN-kept size / NaN→0 size | CLI compress ms (MB/s) | "
              "CLI decompress ms (MB/s) | bench warm c / d GB/s | in-process c / d GB/s |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            twin = [q for q in rows if q["field"] == r["field"] and q["abs"] == r["abs"] and q["missing"] == "NaN → 0"]
            rel = f"{r['bytes'] / twin[0]['bytes']:.3f}" if twin else "-"
            warm = (f"{r['bench_warm_compress_gbs']:.2f} / {r['bench_warm_decompress_gbs']:.2f}"
                    if r["bench_warm_compress_gbs"] != "" else "–")
            ip = (f"{r['inproc_compress_gbs']:.3f} / {r['inproc_decompress_gbs']:.3f}"
                  if r["inproc_compress_gbs"] != "" else "-")
            kept = [q["nan_fraction"] for q in rows if q["field"] == r["field"] and q["missing"] == "NaN kept"]
            frac = f" ({100 * kept[0]:.1f} % NaN)" if kept else ""
            print(f"| {r['field']}{frac} | {r['missing']} | {r['abs']:g} | {r['bytes']:,} | "
                  f"{r['ratio']:.2f} | {rel} | {1e3 * r['cli_compress_s']:.1f} ({r['cli_compress_mbs']:.0f}) | "
                  f"{1e3 * r['cli_decompress_s']:.1f} ({r['cli_decompress_mbs']:.0f}) | {warm} | {ip} |")
        print(f"\nwrote {out}", file=sys.stderr)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("json2csv")
    j.add_argument("out", type=Path)
    j.add_argument("specs", nargs="+", metavar="TABLE=FILE.json")
    f = sub.add_parser("finite")
    f.add_argument("files", nargs="+", type=Path)
    m = sub.add_parser("markdown")
    m.add_argument("csv", type=Path)
    s = sub.add_parser("missing")
    s.add_argument("--fzpack", required=True, help="the release CLI binary")
    s.add_argument("--data", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--abs", default="1e-2,1e-1")
    s.add_argument("--repeat", type=int, default=5)
    s.add_argument("--quick", action="store_true")
    s.add_argument("--python", help="a Python with numpy and fzpack: also time both variants in one process")
    args = ap.parse_args()
    if args.cmd == "json2csv":
        return json2csv(args.out, args.specs)
    if args.cmd == "finite":
        return finite(args.files)
    if args.cmd == "markdown":
        return markdown(args.csv)
    if not os.access(args.fzpack, os.X_OK):
        raise SystemExit(f"missing: {args.fzpack} is not an executable")
    return missing(args)


if __name__ == "__main__":
    sys.exit(main())
