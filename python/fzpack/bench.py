"""``python -m fzpack.bench``: fzpack SZp and PERNIX against numcodecs Zstd and Blosc.

Every codec runs on the same fields (the real ones in ``shared/data`` when found — see
``--data`` — else generated ones) through its numcodecs interface, on warm buffers: each
(field, codec) pair is encoded and decoded once untimed, then ``--repeat`` times timed, and
the table reports the **median** time of those runs (``--best`` reports the fastest instead).
GB/s are of float data (uncompressed bytes / second) in both directions; ratio is
uncompressed bytes / compressed bytes; ``max err`` is the worst absolute error over the
field, divided by the codec's bound for SZp (so it must be <= 1). Zstd and Blosc are
lossless (``max err`` 0); SZp and PERNIX are lossy, so the ratios answer "how much smaller
for this bound", not "which is better".

SZp runs in each of ``--layouts`` (default ``heads``, the block-head layout, and ``interp``, the
interpolation layout, which predicts across the field's real dimensions: the best ratio, slower).

Threads: fzpack SZp splits inputs larger than 1 MiB across its rayon pool (all cores);
Blosc uses ``numcodecs.blosc`` threads (all cores unless ``--threads``); numcodecs.Zstd is
single-threaded.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import fzpack

_NAME = re.compile(r"^(?P<stem>.+)_(?P<shape>\d+(?:x\d+)*)\.(?P<kind>f32|f64)$")

#: Fields of --quick: small real ones of different kinds (smooth, noisy, f64).
QUICK = (
    "proj_egm96_geoid_721x1440.f32",
    "ferret_navywinds_uwnd_132x73x144.f32",
    "de421_moon_cheb_27408x3x13.f64",
)


def find_data(explicit: str | None) -> Path | None:
    cands = []
    if explicit:
        cands += [Path(explicit), Path(explicit) / "data"]
    env = os.environ.get("FZPACK_SHARED")
    if env:
        cands += [Path(env), Path(env) / "data"]
    here = Path.cwd().resolve()
    for d in [here, *here.parents]:
        cands.append(d.parent / "shared" / "data")
        cands.append(d / "shared" / "data")
    for c in cands:
        if c.is_dir() and any(c.glob("*.f32")):
            return c
    return None


def load_fields(data: Path | None, quick: bool) -> list[tuple[str, np.ndarray]]:
    out = []
    if data is not None:
        for p in sorted(data.iterdir()):
            m = _NAME.match(p.name)
            if not m or (quick and p.name not in QUICK):
                continue
            a = np.fromfile(p, dtype="<f4" if m["kind"] == "f32" else "<f8")
            if not np.isfinite(a).all():
                continue  # SZp/PERNIX refuse NaN (levitus marks land with NaN)
            out.append((p.name, a.reshape([int(s) for s in m["shape"].split("x")])))
    if out:
        return out
    rng = np.random.default_rng(0)
    n = 1 << (20 if quick else 22)
    t = np.arange(n, dtype=np.float64)
    return [
        (f"gen_smooth_{n}.f32", (np.sin(t / 500.0) * 30 + np.cos(t / 37.0)).astype(np.float32)),
        (f"gen_walk_{n}.f32", np.cumsum(rng.normal(size=n)).astype(np.float32)),
        (f"gen_walk_{n // 2}.f64", np.cumsum(rng.normal(size=n // 2))),
    ]


def codecs(args) -> list[tuple[str, object, float | None]]:
    """(label, numcodecs codec, relative bound or None) in table order."""
    import numcodecs

    from fzpack.numcodecs import PERNIX, SZp

    if args.threads:
        numcodecs.blosc.set_nthreads(args.threads)
    out: list[tuple[str, object, float | None]] = []
    for layout in args.layouts:
        # The default layout keeps the label it always had; the others name theirs.
        tag = "" if layout == "heads" else f"{layout} "
        for rel in args.eb:
            out.append((f"fzpack SZp {tag}noa {rel:g}", SZp(rel, mode="noa", layout=layout), rel))
    for bits in args.bits:
        out.append((f"fzpack PERNIX {bits} bits", PERNIX(bits, 64), None))
    out.append(("numcodecs Zstd(3)", numcodecs.Zstd(level=3), None))
    out.append(
        ("numcodecs Blosc(zstd,5,shuffle)", numcodecs.Blosc("zstd", 5, numcodecs.Blosc.SHUFFLE), None)
    )
    out.append(("numcodecs Blosc(lz4,5,shuffle)", numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE), None))
    return out


def timed(f, repeat: int, pick) -> tuple[float, object]:
    f()  # warm: page in the buffers, grow allocator pools, start thread pools
    ts = []
    r = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - t0)
    return pick(ts), r


def _blosc_threads() -> str:
    try:
        from numcodecs import blosc

        return str(blosc.get_nthreads()) if hasattr(blosc, "get_nthreads") else "default"
    except ImportError:
        return "no"


def run(args) -> str:
    data = find_data(args.data)
    fields = load_fields(data, args.quick)
    pick = min if args.best else statistics.median
    rows = []
    for name, x in fields:
        x = np.ascontiguousarray(x)
        rng = float(x.max()) - float(x.min())
        for label, c, rel in codecs(args):
            enc_t, enc = timed(lambda: c.encode(x), args.repeat, pick)
            dec_t, dec = timed(lambda: c.decode(enc), args.repeat, pick)
            if not isinstance(dec, np.ndarray):  # Zstd/Blosc give bytes
                dec = np.frombuffer(dec, dtype=np.uint8)
            dec = dec.view(x.dtype).reshape(-1)
            err = float(np.max(np.abs(x.reshape(-1).astype(np.float64) - dec.astype(np.float64))))
            if rel is not None:
                bound = rel * rng
                err_s = f"{err / bound:.3f}" if bound > 0 else f"{err:.3g}"
                if err > bound:
                    raise AssertionError(f"{label} on {name}: max error {err} > bound {bound}")
            else:
                err_s = f"{err:.3g}"
            rows.append(
                (name, label, x.nbytes / len(enc), x.nbytes / enc_t / 1e9, x.nbytes / dec_t / 1e9, err_s)
            )
    stat = "fastest" if args.best else "median"
    head = [
        f"fzpack {fzpack.__version__} bench: {len(fields)} fields from "
        f"{data if data else 'generated data'}; {stat} of {args.repeat} warm runs per cell; "
        f"GB/s of float data; Python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} CPUs, Blosc {_blosc_threads()} threads; load {os.getloadavg()[0]:.2f}",
        "",
        "| field | codec | ratio | compress GB/s | decompress GB/s | max err (SZp: / bound) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    lines = [
        f"| {n} | {lbl} | {ratio:.2f} | {ce:.3f} | {de:.3f} | {e} |" for n, lbl, ratio, ce, de, e in rows
    ]
    # Per codec over all fields: geometric means of the ratio and of the speed relative to
    # numcodecs Zstd on the same field in the same run (robust to the machine's load drifting).
    ref = "numcodecs Zstd(3)"
    base = {n: (ce, de) for n, lbl, _, ce, de, _ in rows if lbl == ref}
    summary = [
        "",
        f"Geometric mean over the {len(fields)} fields (speed as a multiple of {ref} on the same field):",
        "",
        f"| codec | ratio | compress x {ref} | decompress x {ref} |",
        "|---|---:|---:|---:|",
    ]
    for lbl in dict.fromkeys(r[1] for r in rows):
        mine = [r for r in rows if r[1] == lbl]
        g = lambda v: float(np.exp(np.mean(np.log(v))))  # noqa: E731
        summary.append(
            f"| {lbl} | {g([r[2] for r in mine]):.2f} | {g([r[3] / base[r[0]][0] for r in mine]):.2f} | "
            f"{g([r[4] / base[r[0]][1] for r in mine]):.2f} |"
        )
    return "\n".join(head + lines + summary)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fzpack.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="3 fields, 3 runs (a smoke run)")
    p.add_argument("--data", help="folder of .f32/.f64 fields (default: shared/data, FZPACK_SHARED)")
    p.add_argument("--repeat", type=int, help="timed runs per cell (default 7, --quick 3)")
    p.add_argument("--best", action="store_true", help="report the fastest run, not the median")
    p.add_argument("--eb", type=float, nargs="+", default=[1e-3, 1e-5], help="SZp NOA bounds")
    p.add_argument(
        "--layouts",
        nargs="+",
        default=["heads", "interp"],
        choices=fzpack.SZP_LAYOUTS,
        help="SZp layouts (fzpack.SZP_LAYOUTS; default heads interp)",
    )
    p.add_argument("--bits", type=int, nargs="+", default=[16], help="PERNIX bit widths")
    p.add_argument("--threads", type=int, help="Blosc threads (default: all)")
    args = p.parse_args(argv)
    if args.repeat is None:
        args.repeat = 3 if args.quick else 7
    try:
        import numcodecs  # noqa: F401
    except ImportError:
        print("python -m fzpack.bench needs numcodecs (pip install numcodecs)", file=sys.stderr)
        return 2
    print(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
