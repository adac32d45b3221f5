#!/usr/bin/env python3
"""Ring allreduce model: raw MPI vs fzpack's pipelined compressed allreduce (reduce-scatter +
allgather of SZp chunk archives, compressed-domain adds at every step, one decode at the end).

The codec inputs are measured, not constants: pass the line that
`examples/codec_speeds.rs` printed in the same run (`scripts/mpi-link.sh` does), e.g.
  scripts/mpi-model.py --codec "codec: n=... compress_gbs=0.8 add_gbs=8 decompress_gbs=11 \
      raw_add_gbs=12 ratio=3.07 ratio_sum2=2.67"
or, without --codec, the script builds and runs that example itself on $FZPACK_DATA (default
../shared/data)/ferret_etopo5_2161x4320.f32 (a generated field when absent) at ABS 1e-4 of
its range.

Model (one rank per node; every node's link runs at B in each direction; S bytes per rank):
* raw:   2(R-1)/R * S/B  +  (R-1)/R * S/raw_add  +  2(R-1) * alpha
* compressed, pipelined: chunk k+1's codec work overlaps chunk k's transfer, so each ring step
  costs max(wire, codec) of that step; reduce-scatter step s moves a (s+1)-term sum of S/R bytes
  of floats, whose archive is 32/(b1 + g log2(s+1)) smaller (b1: measured bits per value of one
  archive; g: measured growth per doubling of the magnitude, from the archive of x + 2x, i.e.
  (b2 - b1)/log2(3): the sum of k correlated fields grows log2(k) bits, the worst case) while the rank compresses the next segment of its
  own data and adds what it received; allgather steps move R-term sums while the rank decodes
  the segment that arrived. Fill: compressing the first segment. Codec threads scale the codec
  speeds linearly (hZCCL's multi-thread mode; the link is unaffected).
"""
import argparse
import math
import os
import re
import subprocess
import sys

ALPHA = 2e-6  # per ring step latency, seconds
S = 64 * 2**20  # bytes of floats per rank


def measured(line):
    keys = ("compress_gbs", "add_gbs", "decompress_gbs", "raw_add_gbs", "ratio", "ratio_sum2")
    got = dict(re.findall(r"(\w+)=([0-9.eE+-]+)", line))
    missing = [k for k in keys if k not in got]
    if missing:
        sys.exit(f"mpi-model.py: codec line lacks {missing}: {line!r}")
    return {k: float(got[k]) for k in keys}


def run_codec():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    data = os.environ.get("FZPACK_DATA", os.path.join(root, "..", "shared", "data"))
    f = os.path.join(data, "ferret_etopo5_2161x4320.f32")
    src = ["--input", f] if os.path.exists(f) else ["--n", "9335520"]
    cmd = ["cargo", "run", "-q", "--release", "-p", "fzpack", "--example", "codec_speeds", "--"]
    out = subprocess.run(cmd + src + ["--eb", "1e-4", "--mode", "noa"], cwd=root,
                         check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def raw(m, R, B):
    return 2 * (R - 1) / R * S / B + (R - 1) / R * S / (m["raw_add_gbs"] * 1e9) + 2 * (R - 1) * ALPHA


def comp(m, R, B, threads):
    c, a, d = (m[k] * 1e9 * threads for k in ("compress_gbs", "add_gbs", "decompress_gbs"))
    b1, b2 = 32 / m["ratio"], 32 / m["ratio_sum2"]
    g = (b2 - b1) / math.log2(3)  # x + 2x is 3x: bits per doubling of the magnitude
    seg = S / R

    def wire(k):  # one segment of k-term sums on the link
        return seg * min(32.0, b1 + g * math.log2(k)) / 32 / B

    t = seg / c  # fill: the first segment compressed before it can move
    for s in range(R - 1):  # reduce-scatter
        t += max(wire(s + 1), seg / c + seg / a) + ALPHA
    for _ in range(R - 1):  # allgather
        t += max(wire(R), seg / d) + ALPHA
    return t + seg / d / 8  # drain: the last chunk's decode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--codec", help="the codec_speeds line measured in this run")
    args = ap.parse_args()
    line = args.codec or run_codec()
    m = measured(line)
    print(f"model inputs (measured, one thread): {line}")
    print(f"S = {S / 2**20:.0f} MiB of f32 per rank, alpha = {ALPHA * 1e6:.0f} us per step")
    print()
    print("| link per node | ranks | raw ms | compressed ms, 1 thr | raw/comp 1 thr "
          "| compressed ms, 64 thr | raw/comp 64 thr |")
    print("|---|---|---|---|---|---|---|")
    for gbps in (25, 100, 200):
        B = gbps * 1e9 / 8
        for R in (64, 128, 256, 512):
            r, c1, c64 = raw(m, R, B), comp(m, R, B, 1), comp(m, R, B, 64)
            print(f"| {gbps} Gb/s | {R} | {r * 1e3:.1f} | {c1 * 1e3:.1f} | {r / c1:.2f} "
                  f"| {c64 * 1e3:.1f} | {r / c64:.2f} |")


if __name__ == "__main__":
    main()
