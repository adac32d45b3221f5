#!/usr/bin/env python3
"""fzpack SZp against the error-bounded and lossless codecs a user would pick instead.

Codecs, each through its Python package, single thread, in one process:

* ``fzpack``     SZp, block-head layout (the default), ABS bound ``eb = rel * range``;
* ``fzpack-stage`` SZp, stage layout in the ``.fzm`` container;
* ``sz3``        SZ3 through ``pysz`` (ABS mode, its default predictor, the field's real dims);
* ``zfp``        ZFP fixed accuracy through ``zfpy`` (``tolerance = eb``, the field's real dims);
* ``pcodec``     lossless, through ``pcodec`` (1-D, its default level);
* ``zstd``       lossless, level 3, through ``zstandard``;
* ``upstream SZp`` the reference SZp implementation (github.com/szcompressor/SZp), only with
  ``--szp-upstream PATH``, through ``ctypes``, block size 128 (fzpack's default), ABS bound
  ``eb``. f32: its single-thread entry points ``szp_float_single_thread_arg`` /
  ``szp_float_decompress_single_thread_arg``. f64: ``szp_double_openmp_threadblock_arg`` /
  ``szp_double_decompress_openmp_threadblock_arg`` on one OpenMP thread, because upstream's
  f64 single-thread decoder does not skip the offset table its encoder writes (it starts reading
  at the table, ``nbThreads = 0``) and returns garbage; with one thread the OpenMP pair is the
  same single-threaded loop. Its API writes into caller buffers, so its
  compressed and decompressed buffers are allocated once per field and reused (warm), while the
  other codecs return fresh objects: this favours upstream slightly. Upstream quantizes to 32-bit
  ``int`` codes; where ``max|x| / eb >= 2^29`` the codes (or their differences) could overflow and
  its scratch buffer could be overrun, so that field and bound are not run and the output says so.
  Upstream can break its bound (it truncates ``x / eb`` and rebuilds ``code * eb`` in the data's
  precision): every lossy row counts the values over the bound (``bound_violations``), and the
  summary names each codec that broke it, with the worst error / bound.

Building upstream SZp for ``--szp-upstream`` (outside this repository; needs cmake, a C++
compiler with OpenMP, and pkg-config's libzstd, which its CMakeLists requires though the code does
not use it: ``apt-get install libzstd-dev``)::

    git clone https://github.com/szcompressor/SZp $HOME/src/SZp
    cmake -S $HOME/src/SZp -B $HOME/src/SZp/build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF
    cmake --build $HOME/src/SZp/build -j
    python3 scripts/bench-peers.py --szp-upstream $HOME/src/SZp/build   # or .../build/libSZp.so

Every field is loaded from a raw file whose name carries its shape
(``NAME_D0xD1x...xDk.f32|f64``, C order, little-endian), as in the shared data collection; with
no data directory, generated fields are used and the output says so. The bound is relative to
the field's value range (``eb = rel * (max - min)``), the same absolute bound for every
error-bounded codec.

Timing: each round runs every codec's compress and then decompress once, codecs in turn (so a
noisy neighbour hits all of them alike); the best time of ``--rounds`` rounds is kept (after one
untimed warm-up). GB/s are of float data (uncompressed bytes per second) in both directions.
A warm ``memcpy`` (``numpy.copyto``) of the same field in the same rounds is reported as the
reference speed ``M``. Threads: the script sets ``RAYON_NUM_THREADS=1`` and
``OMP_NUM_THREADS=1`` before importing anything, so every codec runs on one core.

Missing packages are reported, never silently skipped: the codec's row says ``not installed``.
The script installs nothing.

Outputs: a Markdown summary (geometric means per codec and bound, then every field) on stdout,
``--csv`` (default ``benchmarks/results/<cpu>/<date>.csv``) and ``--svg`` (PSNR against
bits/value, one line per codec and field family).

Usage::

    python3 scripts/bench-peers.py [--data DIR] [--rel 1e-2,1e-3,1e-4] [--rounds 5] [--quick]
                                   [--szp-upstream PATH]
"""

from __future__ import annotations

import os

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import ctypes  # noqa: E402
import csv  # noqa: E402
import datetime  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

NAME = re.compile(r"^(?P<stem>.+)_(?P<shape>\d+(?:x\d+)*)\.(?P<kind>f32|f64)$")
QUICK = ("proj_egm96_geoid_721x1440.f32", "ncl_ccm_temp_2x18x64x128.f32", "de421_moon_cheb_27408x3x13.f64")
ROOT = Path(__file__).resolve().parent.parent


# --- data -------------------------------------------------------------------------------------


def find_data(explicit: str | None) -> Path | None:
    cands = [Path(explicit)] if explicit else []
    env = os.environ.get("FZPACK_SHARED")
    if env:
        cands += [Path(env) / "data", Path(env)]
    cands += [ROOT.parent / "shared" / "data", ROOT / "shared" / "data"]
    for c in cands:
        if c.is_dir() and any(NAME.match(p.name) for p in c.iterdir()):
            return c
    return None


def generated() -> list[tuple[str, np.ndarray]]:
    """Fields made here when no data directory exists: a smooth 2-D field and a random walk."""
    rng = np.random.default_rng(7)
    y, x = np.mgrid[0:512, 0:1024].astype(np.float64)
    smooth = (np.sin(x / 37.0) * np.cos(y / 23.0) * 50 + y * 0.01).astype(np.float32)
    walk = np.cumsum(rng.normal(size=1 << 20)).astype(np.float32)
    return [("generated_smooth_512x1024", smooth), ("generated_walk_1048576", walk)]


def load(data: Path | None, quick: bool, only: list[str]) -> list[tuple[str, np.ndarray]]:
    if data is None:
        print("note: no data directory found (--data or FZPACK_SHARED): using generated fields")
        return generated()
    out = []
    for p in sorted(data.iterdir()):
        m = NAME.match(p.name)
        if not m or (quick and p.name not in QUICK) or (only and not any(o in p.name for o in only)):
            continue
        dt = np.dtype("<f4" if m["kind"] == "f32" else "<f8")
        shape = tuple(int(d) for d in m["shape"].split("x"))
        a = np.fromfile(p, dtype=dt).reshape(shape)
        if not np.isfinite(a).all():
            # Missing values are not supported by every peer; they are reported and skipped.
            print(f"note: {p.name} holds non-finite values; skipped (not every codec accepts them)")
            continue
        out.append((p.stem, np.ascontiguousarray(a)))
    return out


# --- codecs: each returns (compress(a) -> payload, decompress(payload) -> array) ---------------


class Missing(Exception):
    pass


def codec_fzpack(layout: str):
    try:
        import fzpack
    except ImportError as e:
        raise Missing("fzpack not installed (pip install ./python)") from e

    def make(a: np.ndarray, eb: float):
        flat = a.reshape(-1)
        if layout == "stage":
            return (lambda: fzpack.write_fzm(flat, eb, mode="abs")), fzpack.read_fzm
        return (lambda: fzpack.szp_compress(flat, eb, mode="abs")), fzpack.szp_decompress

    return make


def codec_sz3():
    try:
        from pysz import sz, szConfig, szErrorBoundMode
    except ImportError as e:
        raise Missing("pysz not installed (pip install pysz)") from e

    def make(a: np.ndarray, eb: float):
        def comp():
            cfg = szConfig(a.shape)
            cfg.errorBoundMode = szErrorBoundMode.ABS
            cfg.absErrorBound = eb
            cfg.openmp = False
            return sz.compress(a, cfg)[0]

        return comp, lambda c: sz.decompress(c, a.dtype, a.shape)[0]

    return make


def codec_zfp():
    try:
        import zfpy
    except ImportError as e:
        raise Missing("zfpy not installed (pip install zfpy)") from e

    def make(a: np.ndarray, eb: float):
        return (lambda: zfpy.compress_numpy(a, tolerance=eb)), zfpy.decompress_numpy

    return make


def codec_pcodec():
    try:
        from pcodec import ChunkConfig, standalone
    except ImportError as e:
        raise Missing("pcodec not installed (pip install pcodec)") from e

    def make(a: np.ndarray, _eb: float):
        flat = a.reshape(-1)
        return (lambda: standalone.simple_compress(flat, ChunkConfig())), standalone.simple_decompress

    return make


def codec_zstd():
    try:
        import zstandard
    except ImportError as e:
        raise Missing("zstandard not installed (pip install zstandard)") from e

    def make(a: np.ndarray, _eb: float):
        c = zstandard.ZstdCompressor(level=3, threads=0)
        d = zstandard.ZstdDecompressor()
        raw = a.tobytes()
        return (lambda: c.compress(raw)), (lambda p: np.frombuffer(d.decompress(p), dtype=a.dtype))

    return make


# Upstream SZp's 32-bit quantization codes: fields with max|x| / eb at or above this are not run.
UPSTREAM_CODE_LIMIT = 2.0**29
UPSTREAM_BLOCK = 128
UPSTREAM = "upstream SZp"
SZP_UPSTREAM_PATH: str | None = None  # set from --szp-upstream
# (compress, decompress) per element type; why f64 takes the OpenMP pair: see the module docs.
UPSTREAM_FNS = {
    "float": ("szp_float_single_thread_arg", "szp_float_decompress_single_thread_arg"),
    "double": ("szp_double_openmp_threadblock_arg", "szp_double_decompress_openmp_threadblock_arg"),
}


class NotRun(Exception):
    """A codec declines one field and bound (the reason is printed, the row left out)."""


def load_upstream(path: str) -> ctypes.CDLL:
    p = Path(path)
    if p.is_dir():
        libs = sorted(p.glob("libSZp.so*")) + sorted(p.glob("lib/libSZp.so*")) + sorted(p.glob("lib*/libSZp.so*"))
        if not libs:
            raise Missing(f"no libSZp.so in {p}")
        p = libs[0]
    try:
        lib = ctypes.CDLL(str(p))
    except OSError as e:
        raise Missing(f"cannot load {p}: {e}") from e
    c_p, c_sz = ctypes.c_void_p, ctypes.c_size_t
    for t, ct in (("float", ctypes.c_float), ("double", ctypes.c_double)):
        comp = getattr(lib, UPSTREAM_FNS[t][0])
        comp.argtypes = [c_p, c_p, ctypes.POINTER(c_sz), ct, c_sz, ctypes.c_int]
        comp.restype = None
        dec = getattr(lib, UPSTREAM_FNS[t][1])
        dec.argtypes = [c_p, c_sz, ct, ctypes.c_int, c_p]
        dec.restype = None
    print(f"note: {UPSTREAM} from {p}")
    return lib


def codec_upstream_szp():
    if not SZP_UPSTREAM_PATH:
        raise Missing("give --szp-upstream PATH (a built libSZp.so or its directory)")
    if os.environ.get("OMP_NUM_THREADS") != "1":
        raise Missing(f"OMP_NUM_THREADS is {os.environ.get('OMP_NUM_THREADS')!r}; it must be 1 (single thread)")
    lib = load_upstream(SZP_UPSTREAM_PATH)

    def make(a: np.ndarray, eb: float):
        flat = a.reshape(-1)
        n = flat.size
        if n < 1024:
            raise NotRun(f"{n} values: upstream's scratch buffer (one value's size per value) may overflow")
        amax = float(np.max(np.abs(flat)))
        if amax / eb >= UPSTREAM_CODE_LIMIT:
            raise NotRun(f"max|x|/eb = {amax / eb:.3g} >= 2^29: its int32 codes would overflow")
        t = "double" if a.dtype == np.float64 else "float"
        comp_fn = getattr(lib, UPSTREAM_FNS[t][0])
        dec_fn = getattr(lib, UPSTREAM_FNS[t][1])
        hdr = a.dtype.itemsize  # the bound, stored ahead of the stream; the decoder takes what follows
        out = np.zeros(hdr + 8 + a.dtype.itemsize * n + 4096, dtype=np.uint8)  # warm: written below
        recon = np.zeros(n, dtype=a.dtype)
        size = ctypes.c_size_t(0)
        src = flat.ctypes.data
        if t == "float":
            # Its f32 entry points take the bound as a float: hand it the largest float not above
            # eb, so that any violation is its own and not the rounding of the bound.
            eb32 = np.float32(eb)
            eb = float(np.nextafter(eb32, np.float32(-np.inf)) if float(eb32) > eb else eb32)

        def comp():
            comp_fn(out.ctypes.data, src, ctypes.byref(size), eb, n, UPSTREAM_BLOCK)
            if size.value > out.size:
                raise RuntimeError(f"{UPSTREAM} wrote {size.value} bytes into a {out.size}-byte buffer")
            return out[: size.value]

        def dec(p):
            dec_fn(recon.ctypes.data, n, eb, UPSTREAM_BLOCK, p.ctypes.data + hdr)
            return recon.reshape(a.shape)

        comp()  # touch the buffers once so that every round finds them warm
        dec(out[: size.value])
        return comp, dec

    return make


CODECS = {
    "fzpack": (codec_fzpack, "heads", True),
    "fzpack-stage": (codec_fzpack, "stage", True),
    "sz3": (codec_sz3, None, True),
    "zfp": (codec_zfp, None, True),
    "pcodec": (codec_pcodec, None, False),
    "zstd": (codec_zstd, None, False),
    UPSTREAM: (codec_upstream_szp, None, True),
}


# --- measurement ------------------------------------------------------------------------------


def nbytes(payload) -> int:
    if isinstance(payload, np.ndarray):
        return payload.nbytes
    return len(payload)


def quality(a: np.ndarray, r: np.ndarray, eb: float) -> tuple[float, float, int]:
    """(max |error|, PSNR in dB over the value range, values with |error| > eb; 0 if eb is 0)."""
    a64 = a.reshape(-1).astype(np.float64)
    d = np.abs(a64 - np.asarray(r).reshape(-1).astype(np.float64))
    mx = float(d.max()) if d.size else 0.0
    over = int(np.count_nonzero(d > eb)) if eb > 0 else 0
    mse = float(np.mean(d * d)) if d.size else 0.0
    rng = float(a64.max() - a64.min()) if a64.size else 0.0
    psnr = math.inf if mse == 0 or rng == 0 else 20 * math.log10(rng) - 10 * math.log10(mse)
    return mx, psnr, over


def run(fields, rels, names, rounds):
    makers = {}
    for n in names:
        factory, arg, _lossy = CODECS[n]
        try:
            makers[n] = factory(arg) if arg else factory()
        except Missing as e:
            print(f"skipped {n}: {e}")
    rows = []
    for fname, a in fields:
        lo, hi = float(a.min()), float(a.max())
        for rel in rels:
            eb = rel * (hi - lo)
            if eb <= 0:
                continue
            jobs = {}
            for n, mk in makers.items():
                if not CODECS[n][2] and rel != rels[0]:
                    continue  # lossless: measured once per field
                try:
                    jobs[n] = mk(a, eb)
                except NotRun as e:
                    print(f"  {fname:34s} {n:13s} rel={rel:<7g} not run: {e}", flush=True)
            best = {n: [math.inf, math.inf] for n in jobs}
            payload, recon = {}, {}
            ref = np.empty_like(a)
            mbest = math.inf
            for r in range(rounds + 1):
                t0 = time.perf_counter()
                np.copyto(ref, a)
                t = time.perf_counter() - t0
                if r:
                    mbest = min(mbest, t)
                for n, (comp, dec) in list(jobs.items()):
                    t0 = time.perf_counter()
                    try:
                        p = comp()
                        t1 = time.perf_counter()
                        x = dec(p)
                        t2 = time.perf_counter()
                    except (ValueError, RuntimeError) as e:
                        # A codec that refuses this field and bound (e.g. a bound below the
                        # data's float precision): said, its row left out, the sweep goes on.
                        print(f"  {fname:34s} {n:13s} rel={rel:<7g} not run: {e}", flush=True)
                        del jobs[n], best[n]
                        continue
                    payload[n], recon[n] = p, x
                    if r:
                        best[n][0] = min(best[n][0], t1 - t0)
                        best[n][1] = min(best[n][1], t2 - t1)
            gb = a.nbytes / 1e9
            for n in jobs:
                lossy = CODECS[n][2]
                mx, psnr, over = quality(a, recon[n], eb if lossy else 0.0)
                size = nbytes(payload[n])
                rows.append(
                    {
                        "field": fname,
                        "dtype": str(a.dtype),
                        "shape": "x".join(map(str, a.shape)),
                        "codec": n,
                        "rel": rel if lossy else 0.0,
                        "eb": eb if lossy else 0.0,
                        "ratio": a.nbytes / size,
                        "bits_per_value": 8 * size / a.size,
                        "max_err_over_eb": (mx / eb) if lossy else 0.0,
                        "psnr_db": psnr,
                        "compress_gbs": gb / best[n][0],
                        "decompress_gbs": gb / best[n][1],
                        "memcpy_gbs": gb / mbest,
                        "bound_violations": over,
                        "values": a.size,
                    }
                )
                r = rows[-1]
                print(
                    f"  {fname:34s} {n:13s} rel={r['rel']:<7g} ratio={r['ratio']:8.2f} "
                    f"err/eb={r['max_err_over_eb']:.3f} psnr={psnr:6.1f} "
                    f"c={r['compress_gbs']:6.3f} d={r['decompress_gbs']:6.3f} GB/s (M {r['memcpy_gbs']:.1f})"
                    + (f" BOUND BROKEN on {over} of {a.size} values" if over else ""),
                    flush=True,
                )
    return rows


def geomean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def markdown(rows, rels) -> str:
    out = ["| codec | rel | ratio (geomean) | compress GB/s | decompress GB/s | worst err/eb | fields |",
           "|---|---|---|---|---|---|---|"]
    codecs = list(dict.fromkeys(r["codec"] for r in rows))
    for c in codecs:
        for rel in (rels if CODECS[c][2] else [0.0]):
            sel = [r for r in rows if r["codec"] == c and r["rel"] == rel]
            if not sel:
                continue
            out.append(
                f"| {c} | {rel if rel else 'lossless'} | {geomean([r['ratio'] for r in sel]):.2f} | "
                f"{geomean([r['compress_gbs'] for r in sel]):.3f} | {geomean([r['decompress_gbs'] for r in sel]):.3f} | "
                f"{max(r['max_err_over_eb'] for r in sel):.3f} | {len(sel)} |"
            )
    out += ["", "| field | codec | rel | ratio | bits/value | err/eb | PSNR dB | compress GB/s | decompress GB/s |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(
            f"| {r['field']} | {r['codec']} | {r['rel'] if r['rel'] else 'lossless'} | {r['ratio']:.2f} | "
            f"{r['bits_per_value']:.3f} | {r['max_err_over_eb']:.3f} | {r['psnr_db']:.1f} | "
            f"{r['compress_gbs']:.3f} | {r['decompress_gbs']:.3f} |"
        )
    broken = [r for r in rows if r.get("bound_violations")]
    if broken:
        out += ["", "Bound broken (values with |error| > eb):", ""]
        for c in dict.fromkeys(r["codec"] for r in broken):
            sel = [r for r in broken if r["codec"] == c]
            worst = max(sel, key=lambda r: r["max_err_over_eb"])
            out.append(
                f"- {c}: {sum(r['bound_violations'] for r in sel)} values in {len(sel)} field/bound runs; "
                f"worst err/eb {worst['max_err_over_eb']:.7g} ({worst['field']}, rel {worst['rel']})"
            )
    return "\n".join(out)


def svg(rows, path: Path) -> None:
    """PSNR against bits/value, one polyline per (codec, field); lossy codecs only."""
    lossy = [r for r in rows if r["rel"] and math.isfinite(r["psnr_db"])]
    if not lossy:
        return
    W, H, L, B = 900, 560, 70, 50
    xs = [r["bits_per_value"] for r in lossy]
    ys = [r["psnr_db"] for r in lossy]
    x0, x1 = 0.0, max(xs) * 1.05
    y0, y1 = min(ys) - 5, max(ys) + 5
    sx = lambda x: L + (x - x0) / (x1 - x0) * (W - L - 180)  # noqa: E731
    sy = lambda y: H - B - (y - y0) / (y1 - y0) * (H - B - 20)  # noqa: E731
    colors = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"]
    codecs = list(dict.fromkeys(r["codec"] for r in lossy))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
             f'<rect width="{W}" height="{H}" fill="white"/>',
             f'<line x1="{L}" y1="{H-B}" x2="{W-180}" y2="{H-B}" stroke="black"/>',
             f'<line x1="{L}" y1="{H-B}" x2="{L}" y2="20" stroke="black"/>',
             f'<text x="{(W-180+L)/2}" y="{H-12}" text-anchor="middle">bits per value</text>',
             f'<text x="18" y="{H/2}" transform="rotate(-90 18 {H/2})" text-anchor="middle">PSNR (dB)</text>']
    for i in range(6):
        xv = x0 + (x1 - x0) * i / 5
        yv = y0 + (y1 - y0) * i / 5
        parts.append(f'<text x="{sx(xv):.1f}" y="{H-B+16}" text-anchor="middle">{xv:.1f}</text>')
        parts.append(f'<text x="{L-6}" y="{sy(yv)+4:.1f}" text-anchor="end">{yv:.0f}</text>')
    for ci, c in enumerate(codecs):
        col = colors[ci % len(colors)]
        for f in dict.fromkeys(r["field"] for r in lossy if r["codec"] == c):
            pts = sorted((r["bits_per_value"], r["psnr_db"]) for r in lossy if r["codec"] == c and r["field"] == f)
            line = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
            parts.append(f'<polyline points="{line}" fill="none" stroke="{col}" stroke-opacity="0.7"/>')
            parts += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" fill="{col}"/>' for x, y in pts]
        parts.append(f'<rect x="{W-165}" y="{30+ci*20}" width="12" height="12" fill="{col}"/>')
        parts.append(f'<text x="{W-147}" y="{40+ci*20}">{c}</text>')
    parts.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts) + "\n")


def cpu_slug() -> str:
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1]
                break
    except OSError:
        pass
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "unknown-cpu"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help="directory of NAME_D0x...xDk.f32|f64 files (default: ../shared/data)")
    ap.add_argument("--rel", default="1e-2,1e-3,1e-4", help="bounds relative to each field's range")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds (best kept), after one warm-up")
    ap.add_argument("--codecs", default="fzpack,sz3,zfp,pcodec,zstd", help=f"from {','.join(CODECS)}")
    ap.add_argument("--fields", default="", help="comma-separated substrings selecting fields")
    ap.add_argument("--quick", action="store_true", help=f"three small fields: {', '.join(QUICK)}")
    ap.add_argument("--csv", help="CSV output (default benchmarks/results/<cpu>/<date>.csv)")
    ap.add_argument("--svg", help="rate-distortion plot (default: next to the CSV, .svg)")
    ap.add_argument("--no-files", action="store_true", help="print only; write no CSV or SVG")
    ap.add_argument("--no-svg", action="store_true",
                    help="write the CSV only (scripts/bench-plots.py draws per-group plots from it)")
    ap.add_argument("--szp-upstream", metavar="PATH",
                    help=f"built upstream SZp (libSZp.so or its directory): adds the {UPSTREAM!r} codec")
    args = ap.parse_args()
    global SZP_UPSTREAM_PATH
    SZP_UPSTREAM_PATH = args.szp_upstream
    rels = [float(x) for x in args.rel.split(",") if x]
    names = [n for n in args.codecs.split(",") if n]
    for n in names:
        if n not in CODECS:
            ap.error(f"unknown codec {n!r}; known: {', '.join(CODECS)}")
    if args.szp_upstream and UPSTREAM not in names:
        names.append(UPSTREAM)
    fields = load(find_data(args.data), args.quick, [f for f in args.fields.split(",") if f])
    if not fields:
        print("no fields to measure", file=sys.stderr)
        return 2
    print(f"# {len(fields)} fields, rel {rels}, {args.rounds} rounds, one thread, cpu {cpu_slug()}, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    rows = run(fields, rels, names, args.rounds)
    print()
    print(markdown(rows, rels))
    if not args.no_files and rows:
        today = datetime.date.today().isoformat()
        csv_path = Path(args.csv) if args.csv else ROOT / "benchmarks" / "results" / cpu_slug() / f"{today}.csv"
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        with csv_path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        if args.no_svg:
            print(f"\nwrote {csv_path}")
        else:
            svg_path = Path(args.svg) if args.svg else csv_path.with_suffix(".svg")
            svg(rows, svg_path)
            print(f"\nwrote {csv_path} and {svg_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
