#!/usr/bin/env python3
"""Ring allreduce model: raw MPI vs fzpack compressed (reduce-scatter + allgather of SZp
archives, compressed-domain add). Inputs are this session's measurements (single thread,
AVX-512 host, f32 geoid field, eb = 1e-4 of the range): compress 1.6 GB/s, decompress 7.6 GB/s,
compressed add 3.6 GB/s of float data, raw float add 10 GB/s (memory bound), ratio 3.16
(sums grow ~log2(k)/w: ratio of a k-term sum ~ 32/(32/3.16 + log2 k)). threads: perfect
scaling of the codec assumed (hZCCL's multi-thread mode), network unaffected."""
import math
C, D, A, RAW_ADD, RHO = 1.6e9, 7.6e9, 3.6e9, 10e9, 3.16
ALPHA = 2e-6  # per message latency
S = 64 * 2**20  # bytes per rank

def raw(R, B):
    return 2 * (R - 1) / R * S / B + (R - 1) / R * S / RAW_ADD + 2 * (R - 1) * ALPHA

def comp(R, B, threads=1):
    c, d, a = C * threads, D * threads, A * threads
    bits = 32 / RHO
    t = S / c + S / d + 2 * (R - 1) * ALPHA
    for k in range(1, R):  # reduce-scatter step k carries a k-term sum
        t += S / R / (32 / (bits + math.log2(k)) * B) + S / R / a
    t += (R - 1) * S / R / (32 / (bits + math.log2(R)) * B)  # allgather of R-term sums
    return t

print("| link | ranks | raw ms | compressed ms (1 thr) | speedup 1 thr | speedup 16 thr |")
print("|---|---|---|---|---|---|")
for gbps in (10, 25, 100):
    B = gbps * 1e9 / 8
    for R in (64, 128, 256, 512):
        r, c1, c16 = raw(R, B), comp(R, B), comp(R, B, 16)
        print(f"| {gbps} Gb/s | {R} | {r*1e3:.0f} | {c1*1e3:.0f} | {r/c1:.2f} | {r/c16:.2f} |")
