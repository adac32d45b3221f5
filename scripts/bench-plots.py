#!/usr/bin/env python3
"""Rate-distortion plots (PSNR against bits per value) from the peers CSV, as hand-written SVG.

Standard library only: reads one or more CSVs written by ``scripts/bench-peers.py`` (columns
``field, codec, rel, bits_per_value, psnr_db``) and writes one SVG per field group, one panel
per field, one line per error-bounded codec through its bounds; a lossless codec (``rel`` 0)
is a dashed vertical line at its bits per value, the cost of exact storage. When several CSVs
hold the same field, codec and bound, the first one given wins (so give the main sweep first
and a CSV that adds one codec after it).

Usage::

    python3 scripts/bench-plots.py OUT_PREFIX A.csv [B.csv ...]

writes ``OUT_PREFIX-<group>.svg`` for each group that has rows and prints the names. Groups
(by field-name prefix): climate, relief (terrain and geoid), seismic, telescope and ephemeris,
and ``other`` for any field not listed (generated fields, SDRBench files, ...).
"""

from __future__ import annotations

import csv
import math
import sys
from html import escape
from pathlib import Path

GROUPS = [
    ("climate", "Climate fields", ("ncl_ccm_", "ncl_echam5_", "ncl_fice_", "ferret_navywinds_", "ferret_levitus_")),
    ("relief", "Terrain and geoid", ("ferret_etopo5_", "proj_egm96_", "ncl_hsurf_")),
    ("seismic", "Seismic traces", ("obspy_",)),
    ("telescope-ephemeris", "Telescope image and ephemeris", ("midas_", "de421_")),
]
OTHER = ("other", "Other fields")
# Fixed colours per codec so that every plot reads alike; unknown codecs take the spares.
COLORS = {"fzpack": "#1b9e77", "sz3": "#d95f02", "zfp": "#7570b3", "upstream SZp": "#e7298a",
          "fzpack-stage": "#66a61e", "pcodec": "#a6761d", "zstd": "#666666"}
SPARE = ["#e6ab02", "#1f78b4", "#b15928", "#6a3d9a"]

PW, PH = 420, 270  # one panel
ML, MR, MT, MB = 58, 14, 30, 42  # panel margins (axis labels inside them)
LEGEND_H = 34


def group_of(field: str) -> tuple[str, str]:
    for key, title, prefixes in GROUPS:
        if field.startswith(prefixes):
            return key, title
    return OTHER


def load(paths: list[Path]) -> list[dict]:
    seen, rows = set(), []
    for p in paths:
        with p.open(newline="") as fh:
            for r in csv.DictReader(fh):
                k = (r["field"], r["codec"], float(r["rel"]))
                if k in seen:
                    continue
                seen.add(k)
                rows.append({"field": r["field"], "codec": r["codec"], "rel": float(r["rel"]),
                             "bpv": float(r["bits_per_value"]), "psnr": float(r["psnr_db"])})
    return rows


def ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About n round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out, v = [], first
    while v <= hi + step * 1e-9:
        out.append(round(v, 10))
        v += step
    return out


def fmt(v: float) -> str:
    return f"{v:g}" if abs(v) < 1e5 else f"{v:.0e}"


def panel(field: str, rows: list[dict], colors: dict, ox: float, oy: float) -> list[str]:
    lossy = [r for r in rows if r["rel"] > 0 and math.isfinite(r["psnr"])]
    lossless = [r for r in rows if r["rel"] == 0]
    xs = [r["bpv"] for r in lossy]
    ys = [r["psnr"] for r in lossy]
    # The x range covers the lossy points; a lossless codec beyond it is an arrow label at the
    # right edge. Lossless labels sit at the bottom, where error-bounded curves rarely run.
    x1 = max(xs) * 1.08 if xs else 32.0
    x0 = 0.0
    y0, y1 = (min(ys) - 3, max(ys) + 3) if ys else (0.0, 100.0)
    w, h = PW - ML - MR, PH - MT - MB

    def sx(x):
        return ox + ML + (x - x0) / (x1 - x0) * w

    def sy(y):
        return oy + MT + h - (y - y0) / (y1 - y0) * h

    out = [f'<text x="{ox + ML + w / 2:.1f}" y="{oy + 18}" text-anchor="middle" font-weight="bold">{escape(field)}</text>',
           f'<rect x="{ox + ML}" y="{oy + MT}" width="{w}" height="{h}" fill="none" stroke="#000"/>']
    for t in ticks(x0, x1):
        if t > x1:
            continue
        out.append(f'<line x1="{sx(t):.1f}" y1="{oy + MT}" x2="{sx(t):.1f}" y2="{oy + MT + h}" stroke="#eee"/>')
        out.append(f'<text x="{sx(t):.1f}" y="{oy + MT + h + 14}" text-anchor="middle">{fmt(t)}</text>')
    for t in ticks(y0, y1):
        if t < y0 or t > y1:
            continue
        out.append(f'<line x1="{ox + ML}" y1="{sy(t):.1f}" x2="{ox + ML + w}" y2="{sy(t):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{ox + ML - 5}" y="{sy(t) + 4:.1f}" text-anchor="end">{fmt(t)}</text>')
    out.append(f'<text x="{ox + ML + w / 2:.1f}" y="{oy + PH - 8}" text-anchor="middle">bits per value</text>')
    out.append(f'<text x="{ox + 14}" y="{oy + MT + h / 2:.1f}" transform="rotate(-90 {ox + 14} {oy + MT + h / 2:.1f})" '
               f'text-anchor="middle">PSNR (dB)</text>')
    for i, r in enumerate(lossless):
        col = colors[r["codec"]]
        label = f'{escape(r["codec"])} {r["bpv"]:.1f}'
        if r["bpv"] <= x1:
            x = sx(r["bpv"])
            out.append(f'<line x1="{x:.1f}" y1="{oy + MT}" x2="{x:.1f}" y2="{oy + MT + h}" stroke="{col}" '
                       f'stroke-dasharray="5,4"/>')
            out.append(f'<text x="{x - 3:.1f}" y="{oy + MT + h - 6 - 13 * i}" text-anchor="end" fill="{col}">{label}</text>')
        else:
            out.append(f'<text x="{ox + ML + w - 4}" y="{oy + MT + h - 6 - 13 * i}" text-anchor="end" fill="{col}">'
                       f'{label} →</text>')
    for codec in dict.fromkeys(r["codec"] for r in lossy):
        pts = sorted((r["bpv"], r["psnr"]) for r in lossy if r["codec"] == codec)
        col = colors[codec]
        line = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        out.append(f'<polyline points="{line}" fill="none" stroke="{col}" stroke-width="1.8"/>')
        out += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{col}"/>' for x, y in pts]
    return out


def svg(title: str, fields: list[str], rows: list[dict], colors: dict) -> str:
    cols = 1 if len(fields) == 1 else 2
    nrows = math.ceil(len(fields) / cols)
    W, H = cols * PW, LEGEND_H + 24 + nrows * PH
    codecs = list(dict.fromkeys(r["codec"] for r in rows))
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
            f'font-family="sans-serif" font-size="11">'),
           f'<rect width="{W}" height="{H}" fill="white"/>',
           (f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">{escape(title)}: '
            f'PSNR against bits per value</text>')]
    x = 10
    for c in codecs:
        lossless = all(r["rel"] == 0 for r in rows if r["codec"] == c)
        col = colors[c]
        dash = ' stroke-dasharray="5,4"' if lossless else ""
        out.append(f'<line x1="{x}" y1="{LEGEND_H}" x2="{x + 22}" y2="{LEGEND_H}" stroke="{col}" stroke-width="2"{dash}/>')
        label = escape(c + (" (lossless)" if lossless else ""))
        out.append(f'<text x="{x + 27}" y="{LEGEND_H + 4}">{label}</text>')
        x += 40 + 7 * len(label)
    for i, f in enumerate(fields):
        ox, oy = (i % cols) * PW, LEGEND_H + 14 + (i // cols) * PH
        out += panel(f, [r for r in rows if r["field"] == f], colors, ox, oy)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    prefix, paths = argv[0], [Path(p) for p in argv[1:]]
    rows = load(paths)
    if not rows:
        print("bench-plots: no rows in " + ", ".join(map(str, paths)), file=sys.stderr)
        return 1
    colors = dict(COLORS)
    spare = iter(SPARE * 4)
    for c in dict.fromkeys(r["codec"] for r in rows):
        if c not in colors:
            colors[c] = next(spare)
    groups: dict[tuple[str, str], list[str]] = {}
    for f in dict.fromkeys(r["field"] for r in rows):
        groups.setdefault(group_of(f), []).append(f)
    for (key, title), fields in groups.items():
        fields.sort()
        out = Path(f"{prefix}-{key}.svg")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(svg(title, fields, [r for r in rows if r["field"] in fields], colors))
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
