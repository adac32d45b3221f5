// SZp per-warp / per-tile arithmetic shared by the CUDA kernels (szp.cu) and the CPU harness
// (host_harness.cpp). Every function here is `__host__ __device__`; the warp-level operations go
// through `FzWarp` and lane values through `FzLane<T>`:
//
//   * on the device (`__CUDACC__`), `FzLane<T>` is one register and `FzWarp` wraps the warp
//     intrinsics (__shfl_sync, __reduce_or_sync, __ballot_sync);
//   * on the host, `host_shim.h` (included first) defines them as 32-element arrays and loops
//     that run the 32 lanes in order, so the same code executes on a CPU in CI.
//
// Code is written "lock-step": `w.each([&](int l) { ... v[l] ... })` is the per-lane body (on the
// device it runs once, with l = this lane; on the host 32 times), and warp collectives take and
// return whole lane values.
//
// Byte rules: specs/szp.md §1 and fzpack-core's `szp::blocks` (the reference). Quantization is
// `round_half_away(x / (2·eb))` in f64 with IEEE division (never a reciprocal), compiled without
// FMA contraction (NVRTC `--fmad=false`, host `-ffp-contract=off`), so results are bit-identical
// to the Rust reference.
#ifndef FZPACK_SZP_WARP_CUH
#define FZPACK_SZP_WARP_CUH

typedef unsigned char fz_u8;
typedef unsigned int fz_u32;
typedef int fz_i32;
typedef unsigned long long fz_u64;
typedef long long fz_i64;

// Tile geometry: a CUDA block (CTA) of FZ_WARPS warps; each warp owns K consecutive SZp blocks.
#define FZ_WARPS 8
#define FZ_THREADS (FZ_WARPS * 32)
// Archive header bytes (docs/szp-archive.md).
#define FZ_HEADER_LEN 52ull /* fzpack SZp archive format 2 (48 + header CRC) */

// Decoupled look-back status words: flag in the top two bits, a 62-bit byte count below.
#define FZ_ST_AGG (1ull << 62)
#define FZ_ST_INC (2ull << 62)
#define FZ_ST_VAL ((1ull << 62) - 1)

#if defined(__CUDACC__)
#define FZ_HD __host__ __device__ __forceinline__
#define FZ_UNROLL _Pragma("unroll")

template <class T> struct FzLane {
  T x;
  FZ_HD T &operator[](int) { return x; }
  FZ_HD const T &operator[](int) const { return x; }
};

struct FzWarp {
  template <class F> FZ_HD void each(F f) const { f((int)(threadIdx.x & 31u)); }
  template <class T> FZ_HD FzLane<T> shfl_up(const FzLane<T> &v, int d) const {
    FzLane<T> r;
    r.x = __shfl_up_sync(0xffffffffu, v.x, d);
    return r;
  }
  template <class T> FZ_HD FzLane<T> shfl(const FzLane<T> &v, const FzLane<int> &src) const {
    FzLane<T> r;
    r.x = __shfl_sync(0xffffffffu, v.x, src.x);
    return r;
  }
  template <class T> FZ_HD T bcast(const FzLane<T> &v, int lane) const {
    return __shfl_sync(0xffffffffu, v.x, lane);
  }
  FZ_HD fz_u32 reduce_or32(const FzLane<fz_u32> &v) const {
    return __reduce_or_sync(0xffffffffu, v.x);
  }
  FZ_HD fz_u64 reduce_or64(const FzLane<fz_u64> &v) const {
    fz_u32 lo = __reduce_or_sync(0xffffffffu, (fz_u32)v.x);
    fz_u32 hi = __reduce_or_sync(0xffffffffu, (fz_u32)(v.x >> 32));
    return ((fz_u64)hi << 32) | lo;
  }
  FZ_HD fz_u32 ballot(const FzLane<int> &p) const { return __ballot_sync(0xffffffffu, p.x); }
};

FZ_HD int fz_clz64(fz_u64 x) { return __clzll((long long)x); }
FZ_HD int fz_ffs32(fz_u32 x) { return __ffs((int)x); }
FZ_HD void fz_atomic_min_u64(fz_u64 *p, fz_u64 v) { atomicMin(p, v); }
#else
// host_shim.h defines FZ_HD, FzLane, FzWarp, fz_clz64, fz_ffs32, fz_atomic_min_u64.
#ifndef FZPACK_HOST_SHIM_H
#error "include host_shim.h before szp_warp.cuh on the host"
#endif
#endif

// ---------------------------------------------------------------------------------------------
// Scalar rules (fzpack-core szp::blocks).

template <class T> struct FzFloat;
template <> struct FzFloat<float> {
  static FZ_HD double to_f64(float x) { return (double)x; }
  static FZ_HD float from_f64(double v) { return (float)v; }
};
template <> struct FzFloat<double> {
  static FZ_HD double to_f64(double x) { return x; }
  static FZ_HD double from_f64(double v) { return v; }
};

// Finite iff v − v == 0 (NaN and ±inf give NaN); no bit tricks needed, valid without fast-math.
FZ_HD bool fz_finite(double v) { return v - v == 0.0; }
FZ_HD double fz_fabs(double v) { return v < 0.0 ? -v : v; }

// `round_half_away` for |v| < 2^62 (guaranteed by the plan's level check).
FZ_HD fz_i64 fz_round_half_away(double v) {
  double a = fz_fabs(v);
  fz_u64 i = (fz_u64)a;
  fz_u64 r = i + ((a - (double)i >= 0.5) ? 1ull : 0ull);
  return v < 0.0 ? -(fz_i64)r : (fz_i64)r;
}

template <class T> FZ_HD fz_i64 fz_quantize(T x, double eb) {
  return fz_round_half_away(FzFloat<T>::to_f64(x) / (2.0 * eb));
}

template <class T> FZ_HD T fz_reconstruct(fz_i64 q, double eb) {
  return FzFloat<T>::from_f64((double)q * 2.0 * eb);
}

FZ_HD fz_u64 fz_zigzag(fz_i64 d) { return ((fz_u64)d << 1) ^ (fz_u64)(d >> 63); }
FZ_HD fz_i64 fz_unzigzag(fz_u64 u) { return (fz_i64)(u >> 1) ^ -(fz_i64)(u & 1ull); }
FZ_HD fz_i64 fz_wsub(fz_i64 a, fz_i64 b) { return (fz_i64)((fz_u64)a - (fz_u64)b); }
FZ_HD fz_i64 fz_wadd(fz_i64 a, fz_i64 b) { return (fz_i64)((fz_u64)a + (fz_u64)b); }
FZ_HD fz_u32 fz_bits(fz_u64 any) { return any == 0 ? 0u : (fz_u32)(64 - fz_clz64(any)); }
FZ_HD fz_u64 fz_cost(fz_u32 width, fz_u64 len) { return (len * width + 7ull) / 8ull; }
FZ_HD fz_u64 fz_mask(fz_u32 w) { return w >= 64 ? ~0ull : ((1ull << w) - 1ull); }

// ---------------------------------------------------------------------------------------------
// Value statistics for plan resolution (min, max, max|x| over finite values; first non-finite
// index; first finite index with |x| > max_abs when max_abs >= 0).

struct FzStats {
  double lo, hi, mag;
  fz_u64 first_nonfinite, first_over;
};

FZ_HD void fz_stats_init(FzStats &s) {
  s.lo = 1.0 / 0.0;
  s.hi = -1.0 / 0.0;
  s.mag = 0.0;
  s.first_nonfinite = ~0ull;
  s.first_over = ~0ull;
}

template <class T> FZ_HD void fz_stats_add(FzStats &s, T x, fz_u64 index, double max_abs) {
  double v = FzFloat<T>::to_f64(x);
  if (!fz_finite(v)) {
    if (index < s.first_nonfinite) s.first_nonfinite = index;
    return;
  }
  double a = fz_fabs(v);
  if (max_abs >= 0.0 && a > max_abs && index < s.first_over) s.first_over = index;
  if (v < s.lo) s.lo = v;
  if (v > s.hi) s.hi = v;
  if (a > s.mag) s.mag = a;
}

FZ_HD void fz_stats_merge(FzStats &s, const FzStats &o) {
  if (o.lo < s.lo) s.lo = o.lo;
  if (o.hi > s.hi) s.hi = o.hi;
  if (o.mag > s.mag) s.mag = o.mag;
  if (o.first_nonfinite < s.first_nonfinite) s.first_nonfinite = o.first_nonfinite;
  if (o.first_over < s.first_over) s.first_over = o.first_over;
}

// ---------------------------------------------------------------------------------------------
// Encoding one SZp block with one warp. Chunk c holds values [32c, 32c+32) of the block, one per
// lane; its packed bits are exactly the 32-bit words [c·w, (c+1)·w) of the block's bit stream
// (32 values × w bits), so chunks never share a word and every lane can build whole words.

struct FzEncParams {
  double eb;      // quantizer bound (plan.quant_eb)
  double bound;   // strict check bound (plan.bound)
  int strict;     // check every reconstruction
};

// One chunk of pass 1: quantize, delta against the previous value (lane 0: the previous
// chunk's lane 31, carried in `prev_last`), zigzag, strict check. Values past `len` give 0.
template <class T>
FZ_HD FzLane<fz_u64> fz_width_chunk(const FzWarp &w, const T *x, fz_u64 len, fz_u64 c0,
                                     const FzEncParams &p, fz_u64 first, fz_u64 *viol,
                                     fz_i64 &prev_last) {
  FzLane<fz_i64> q;
  w.each([&](int l) {
    fz_u64 i = c0 + (fz_u64)l;
    q[l] = i < len ? fz_quantize<T>(x[i], p.eb) : 0;
  });
  FzLane<fz_i64> pq = w.shfl_up(q, 1);
  FzLane<fz_u64> u;
  fz_i64 carry = prev_last;
  w.each([&](int l) {
    fz_u64 i = c0 + (fz_u64)l;
    if (i < len) {
      fz_i64 pv = l == 0 ? carry : pq[l];
      u[l] = fz_zigzag(fz_wsub(q[l], pv));
      if (p.strict) {
        double err = fz_fabs(FzFloat<T>::to_f64(x[i]) -
                             FzFloat<T>::to_f64(fz_reconstruct<T>(q[l], p.eb)));
        if (!(err <= p.bound)) fz_atomic_min_u64(viol, first + i);
      }
    } else {
      u[l] = 0;
    }
  });
  prev_last = w.bcast(q, 31);
  return u;
}

// Pass 1: the block's width (and the strict check). With VPL > 0 (blocks of at most 32·VPL
// values) the chunk loop is unrolled and `cache[0..VPL)` keeps the zigzagged deltas in
// registers for pass 2; VPL == 0 means "no cache, recompute in pass 2".
template <class T, int VPL>
FZ_HD fz_u32 fz_enc_width(const FzWarp &w, const T *x, fz_u64 len, const FzEncParams &p,
                          fz_u64 first, fz_u64 *viol, FzLane<fz_u64> *cache) {
  fz_i64 prev_last = 0;
  fz_u64 any = 0;
  if (VPL > 0) {
    FZ_UNROLL
    for (int c = 0; c < (VPL > 0 ? VPL : 1); ++c) {
      if (32ull * (fz_u64)c < len) {
        FzLane<fz_u64> u = fz_width_chunk<T>(w, x, len, 32ull * (fz_u64)c, p, first, viol,
                                             prev_last);
        any |= w.reduce_or64(u);
        cache[c] = u;
      }
    }
  } else {
    for (fz_u64 c0 = 0; c0 < len; c0 += 32) {
      FzLane<fz_u64> u = fz_width_chunk<T>(w, x, len, c0, p, first, viol, prev_last);
      any |= w.reduce_or64(u);
    }
  }
  return fz_bits(any);
}

// Recomputes the zigzagged deltas of chunk c0 (the no-cache path).
template <class T>
FZ_HD FzLane<fz_u64> fz_enc_chunk(const FzWarp &w, const T *x, fz_u64 len, fz_u64 c0,
                                   double eb) {
  FzLane<fz_i64> q;
  w.each([&](int l) {
    fz_u64 i = c0 + (fz_u64)l;
    q[l] = i < len ? fz_quantize<T>(x[i], eb) : 0;
  });
  FzLane<fz_i64> pq = w.shfl_up(q, 1);
  fz_i64 before = 0;
  if (c0 > 0) before = fz_quantize<T>(x[c0 - 1], eb);  // uniform load, L1 hit
  FzLane<fz_u64> u;
  w.each([&](int l) {
    fz_u64 i = c0 + (fz_u64)l;
    fz_i64 pv = l == 0 ? before : pq[l];
    u[l] = i < len ? fz_zigzag(fz_wsub(q[l], pv)) : 0;
  });
  return u;
}

// Packs one chunk's values (u, width `wd` > 0) into its `wd` 32-bit words and stores the bytes
// below `cost` (block-relative) at `out` (the block's first payload byte, any alignment).
// Lane j builds word j (and j + 32 when wd > 32) by gathering the values that overlap it.
FZ_HD void fz_pack_chunk(const FzWarp &w, const FzLane<fz_u64> &u, fz_u32 wd, fz_u64 chunk,
                         fz_u8 *out, fz_u64 cost) {
  int steps = (int)(32u / wd) + 2;
  if (steps > 32) steps = 32;
  for (fz_u32 half = 0; half * 32u < wd; ++half) {
    FzLane<fz_u32> word;
    FzLane<int> klo;
    w.each([&](int l) {
      word[l] = 0;
      fz_u32 jj = half * 32u + (fz_u32)l;
      klo[l] = (int)((32u * jj) / wd);
    });
    for (int t = 0; t < steps; ++t) {
      FzLane<int> src;
      w.each([&](int l) {
        int k = klo[l] + t;
        src[l] = k > 31 ? 31 : k;
      });
      FzLane<fz_u64> v = w.shfl(u, src);
      w.each([&](int l) {
        fz_u32 jj = half * 32u + (fz_u32)l;
        int k = klo[l] + t;
        if (jj < wd && k <= 31) {
          fz_i64 s = (fz_i64)k * (fz_i64)wd - 32 * (fz_i64)jj;
          if (s < 32) {
            fz_u64 part = s >= 0 ? (v[l] << s) : (v[l] >> (-s));
            word[l] |= (fz_u32)part;
          }
        }
      });
    }
    w.each([&](int l) {
      fz_u32 jj = half * 32u + (fz_u32)l;
      if (jj < wd) {
        fz_u64 b0 = 4ull * (chunk * wd + jj);
        for (int t = 0; t < 4; ++t)
          if (b0 + (fz_u64)t < cost) out[b0 + (fz_u64)t] = (fz_u8)(word[l] >> (8 * t));
      }
    });
  }
}

// Pass 2: packs the block at width `wd` into out[0..cost).
template <class T, int VPL>
FZ_HD void fz_enc_pack(const FzWarp &w, const T *x, fz_u64 len, double eb, fz_u32 wd,
                       fz_u8 *out, fz_u64 cost, const FzLane<fz_u64> *cache) {
  if (wd == 0) return;
  if (VPL > 0) {
    FZ_UNROLL
    for (int c = 0; c < (VPL > 0 ? VPL : 1); ++c)
      if (32ull * (fz_u64)c < len) fz_pack_chunk(w, cache[c], wd, (fz_u64)c, out, cost);
  } else {
    fz_u64 chunk = 0;
    for (fz_u64 c0 = 0; c0 < len; c0 += 32, ++chunk) {
      FzLane<fz_u64> u = fz_enc_chunk<T>(w, x, len, c0, eb);
      fz_pack_chunk(w, u, wd, chunk, out, cost);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Tile scan and decoupled look-back (one warp). `costs` holds `count` (<= 32·32) block costs; on
// return it holds their exclusive prefix sums and the tile total is returned.

FZ_HD fz_u64 fz_tile_scan(const FzWarp &w, fz_u64 *costs, int count) {
  int per = (count + 31) / 32;
  FzLane<fz_u64> sum;
  w.each([&](int l) {
    fz_u64 s = 0;
    for (int k = 0; k < per; ++k) {
      int i = l * per + k;
      if (i < count) s += costs[i];
    }
    sum[l] = s;
  });
  FzLane<fz_u64> inc = sum;
  for (int d = 1; d < 32; d <<= 1) {
    FzLane<fz_u64> up = w.shfl_up(inc, d);
    w.each([&](int l) {
      if (l >= d) inc[l] += up[l];
    });
  }
  fz_u64 total = w.bcast(inc, 31);
  w.each([&](int l) {
    fz_u64 run = inc[l] - sum[l];
    for (int k = 0; k < per; ++k) {
      int i = l * per + k;
      if (i < count) {
        fz_u64 c = costs[i];
        costs[i] = run;
        run += c;
      }
    }
  });
  return total;
}

// The exclusive prefix of tile `tile` from its predecessors' status words: 32 at a time, lane l
// reading tile − 1 − l; sums aggregates up to the nearest inclusive prefix. `load(i)` returns the
// status word of tile i (volatile on the device); a 0 (not yet published) word makes the warp
// re-read the window (spin) until the predecessor publishes.
template <class Load> FZ_HD fz_u64 fz_lookback(const FzWarp &w, Load load, fz_i64 tile) {
  fz_u64 prefix = 0;
  fz_i64 pos = tile - 1;
  while (pos >= 0) {
    FzLane<fz_u64> s;
    FzLane<int> is_inc, is_empty;
    w.each([&](int l) {
      fz_i64 i = pos - l;
      s[l] = i >= 0 ? load(i) : FZ_ST_INC;  // before tile 0: inclusive 0
      is_inc[l] = (s[l] & FZ_ST_INC) != 0;
      is_empty[l] = (s[l] >> 62) == 0;
    });
    fz_u32 inc = w.ballot(is_inc);
    fz_u32 empty = w.ballot(is_empty);
    // Lanes that matter: up to and including the first inclusive one (all 32 if none).
    fz_u32 upto = inc ? (fz_u32)(fz_ffs32(inc) - 1) : 31u;
    fz_u32 need = upto >= 31 ? 0xffffffffu : ((1u << (upto + 1)) - 1u);
    if (empty & need) continue;  // a predecessor has not published yet: re-read
    FzLane<fz_u64> val;
    w.each([&](int l) { val[l] = ((fz_u32)l <= upto) ? (s[l] & FZ_ST_VAL) : 0; });
    for (int d = 16; d >= 1; d >>= 1) {
      FzLane<fz_u64> o;
      FzLane<int> src;
      w.each([&](int l) { src[l] = (l + d) & 31; });
      o = w.shfl(val, src);
      w.each([&](int l) { val[l] += o[l]; });
    }
    prefix += w.bcast(val, 0);
    if (inc) break;
    pos -= 32;
  }
  return prefix;
}

// ---------------------------------------------------------------------------------------------
// Decoding one block with one warp: lane l of chunk c reads its field from the chunk's words with
// aligned 32-bit loads (at most three, none starting at or past the block's last byte), an
// inclusive warp scan turns deltas into levels, and the stores are coalesced.

FZ_HD fz_u64 fz_read_field(const fz_u8 *blk, fz_u64 cost, fz_u64 bit, fz_u32 wd) {
  const fz_u8 *p = blk + (bit >> 3);
  fz_u64 addr = (fz_u64)p;
  const fz_u32 *wp = (const fz_u32 *)(addr & ~3ull);
  fz_u32 off = (fz_u32)((addr & 3ull) * 8ull + (bit & 7ull));
  fz_u64 end = (fz_u64)(blk + cost);
  fz_u32 w0 = wp[0];
  fz_u32 w1 = (fz_u64)(wp + 1) < end ? wp[1] : 0u;
  fz_u32 w2 = (off + wd > 64u && (fz_u64)(wp + 2) < end) ? wp[2] : 0u;
  fz_u64 lo = ((fz_u64)w1 << 32) | w0;
  fz_u64 v = lo >> off;
  if (off > 0) v |= (fz_u64)w2 << (64u - off);
  return v & fz_mask(wd);
}

template <class T>
FZ_HD void fz_dec_block(const FzWarp &w, const fz_u8 *blk, fz_u64 cost, fz_u32 wd, fz_u64 len,
                        double eb, T *out) {
  fz_i64 carry = 0;
  fz_u64 chunk = 0;
  for (fz_u64 c0 = 0; c0 < len; c0 += 32, ++chunk) {
    FzLane<fz_i64> d;
    w.each([&](int l) {
      fz_u64 i = c0 + (fz_u64)l;
      d[l] = 0;
      if (wd > 0 && i < len) {
        fz_u64 bit = chunk * 32ull * wd + (fz_u64)l * wd;
        d[l] = fz_unzigzag(fz_read_field(blk, cost, bit, wd));
      }
    });
    for (int s = 1; s < 32; s <<= 1) {
      FzLane<fz_i64> up = w.shfl_up(d, s);
      w.each([&](int l) {
        if (l >= s) d[l] = fz_wadd(d[l], up[l]);
      });
    }
    w.each([&](int l) {
      fz_u64 i = c0 + (fz_u64)l;
      if (i < len) out[i] = fz_reconstruct<T>(fz_wadd(carry, d[l]), eb);
    });
    carry = fz_wadd(carry, w.bcast(d, 31));
  }
}

// ---------------------------------------------------------------------------------------------
// Tile phases shared by the kernels and the host harness.

struct FzGeom {
  fz_u64 n;   // values
  fz_u64 bs;  // block size
  fz_u64 nb;  // blocks
};

FZ_HD fz_u64 fz_block_len(const FzGeom &g, fz_u64 b) {
  fz_u64 s = b * g.bs;
  return s >= g.n ? 0 : (g.n - s < g.bs ? g.n - s : g.bs);
}

// Encode phase 1 for warp `wi` of tile `tile`: widths (written to the archive's width bytes) and
// costs (into costs[wi·K + k]); cache[k·VPL + c] keeps chunk c of block k when VPL > 0.
template <class T, int VPL, int K>
FZ_HD void fz_enc_phase1(const FzWarp &w, int wi, fz_u64 tile, const T *x, const FzGeom &g,
                         const FzEncParams &p, fz_u8 *archive, fz_u64 *viol, fz_u64 *costs,
                         fz_u32 *widths, FzLane<fz_u64> *cache) {
  FZ_UNROLL
  for (int k = 0; k < K; ++k) {
    fz_u64 b = (tile * FZ_WARPS + (fz_u64)wi) * K + (fz_u64)k;
    fz_u64 len = b < g.nb ? fz_block_len(g, b) : 0;
    fz_u32 wd = 0;
    if (len > 0) {
      wd = fz_enc_width<T, VPL>(w, x + b * g.bs, len, p, b * g.bs, viol,
                                cache + (VPL > 0 ? k * VPL : 0));
      w.each([&](int l) {
        if (l == 0) archive[FZ_HEADER_LEN + b] = (fz_u8)wd;
      });
    }
    w.each([&](int l) {
      if (l == 0) {
        costs[wi * K + k] = fz_cost(wd, len);
        widths[wi * K + k] = wd;
      }
    });
  }
}

// Encode phase 2: packs the warp's blocks at payload offsets `base + costs[..]` (exclusive sums
// after fz_tile_scan; `base` = archive offset of the tile's first payload byte).
template <class T, int VPL, int K>
FZ_HD void fz_enc_phase2(const FzWarp &w, int wi, fz_u64 tile, const T *x, const FzGeom &g,
                         double eb, fz_u8 *archive, fz_u64 base, const fz_u64 *offs,
                         const fz_u32 *widths, const FzLane<fz_u64> *cache) {
  FZ_UNROLL
  for (int k = 0; k < K; ++k) {
    fz_u64 b = (tile * FZ_WARPS + (fz_u64)wi) * K + (fz_u64)k;
    if (b >= g.nb) continue;
    fz_u64 len = fz_block_len(g, b);
    fz_u32 wd = widths[wi * K + k];
    fz_enc_pack<T, VPL>(w, x + b * g.bs, len, eb, wd, archive + base + offs[wi * K + k],
                        fz_cost(wd, len), cache + (VPL > 0 ? k * VPL : 0));
  }
}

#endif  // FZPACK_SZP_WARP_CUH
