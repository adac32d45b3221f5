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
  FZ_HD void sync() const { __syncwarp(); }
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

// Pass 1: the block's width (and the strict check); the first delta is taken against `seed`
// (0 in the stage layout, the block's head in the block-head layout). With VPL > 0 (blocks of at most 32·VPL
// values) the chunk loop is unrolled and `cache[0..VPL)` keeps the zigzagged deltas in
// registers for pass 2; VPL == 0 means "no cache, recompute in pass 2".
template <class T, int VPL>
FZ_HD fz_u32 fz_enc_width(const FzWarp &w, const T *x, fz_u64 len, const FzEncParams &p,
                          fz_u64 first, fz_u64 *viol, FzLane<fz_u64> *cache, fz_i64 seed) {
  fz_i64 prev_last = seed;
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

// Recomputes the zigzagged deltas of chunk c0 (the no-cache path; `seed` as in fz_enc_width).
template <class T>
FZ_HD FzLane<fz_u64> fz_enc_chunk(const FzWarp &w, const T *x, fz_u64 len, fz_u64 c0,
                                   double eb, fz_i64 seed) {
  FzLane<fz_i64> q;
  w.each([&](int l) {
    fz_u64 i = c0 + (fz_u64)l;
    q[l] = i < len ? fz_quantize<T>(x[i], eb) : 0;
  });
  FzLane<fz_i64> pq = w.shfl_up(q, 1);
  fz_i64 before = seed;
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
                       fz_u8 *out, fz_u64 cost, const FzLane<fz_u64> *cache, fz_i64 seed) {
  if (wd == 0) return;
  if (VPL > 0) {
    FZ_UNROLL
    for (int c = 0; c < (VPL > 0 ? VPL : 1); ++c)
      if (32ull * (fz_u64)c < len) fz_pack_chunk(w, cache[c], wd, (fz_u64)c, out, cost);
  } else {
    fz_u64 chunk = 0;
    for (fz_u64 c0 = 0; c0 < len; c0 += 32, ++chunk) {
      FzLane<fz_u64> u = fz_enc_chunk<T>(w, x, len, c0, eb, seed);
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
                        double eb, T *out, fz_i64 seed) {
  fz_i64 carry = seed;
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
  fz_u64 n;      // values
  fz_u64 bs;     // block size
  fz_u64 nb;     // blocks
  fz_u64 group;  // blocks per head group (block-head layout), 0 for the stage layout
  fz_u32 shift;  // checksum chunks hold 2^shift blocks
};

FZ_HD fz_u64 fz_block_len(const FzGeom &g, fz_u64 b) {
  fz_u64 s = b * g.bs;
  return s >= g.n ? 0 : (g.n - s < g.bs ? g.n - s : g.bs);
}

// Block-head layout: whether block b closes its head group (its trailer follows its payload).
FZ_HD bool fz_group_end(const FzGeom &g, fz_u64 b) {
  return g.group > 0 && ((b + 1) % g.group == 0 || b + 1 == g.nb);
}

// The seed of block b's deltas: its head (first level) in the block-head layout, else 0.
template <class T>
FZ_HD fz_i64 fz_seed(const FzGeom &g, const T *x, fz_u64 b, double eb) {
  return g.group > 0 ? fz_quantize<T>(x[b * g.bs], eb) : 0;
}

// The head trailer of group `gi` (block-head layout; bits::put_heads): lane l < cnt holds
// zigzag(h_l − h_{l−1}) with h_{−1} = 0, 0 elsewhere; *hw gets the trailer's width byte and
// *cnt the group's block count. The heads are recomputed from the input (one value per block),
// so any tile can size and write the trailer of a group whose blocks other tiles encode.
template <class T>
FZ_HD FzLane<fz_u64> fz_group_heads(const FzWarp &w, const T *x, const FzGeom &g, fz_u64 gi,
                                     double eb, fz_u32 *hw, fz_u64 *cnt) {
  fz_u64 b0 = gi * g.group;
  fz_u64 c = g.nb - b0 < g.group ? g.nb - b0 : g.group;
  FzLane<fz_i64> h;
  w.each([&](int l) { h[l] = (fz_u64)l < c ? fz_quantize<T>(x[(b0 + (fz_u64)l) * g.bs], eb) : 0; });
  FzLane<fz_i64> ph = w.shfl_up(h, 1);
  FzLane<fz_u64> u;
  w.each([&](int l) {
    u[l] = (fz_u64)l < c ? fz_zigzag(fz_wsub(h[l], l == 0 ? 0 : ph[l])) : 0;
  });
  *hw = fz_bits(w.reduce_or64(u));
  *cnt = c;
  return u;
}

// Encode phase 1 for warp `wi` of tile `tile`: widths (written to the archive's width bytes) and
// costs (into costs[wi·K + k]); cache[k·VPL + c] keeps chunk c of block k when VPL > 0. A block's
// cost is its payload plus, when it closes a head group, the group's trailer: so the tile scan
// and the decoupled look-back carry payload and trailer bytes alike, and every offset is final
// after the one pass.
template <class T, int VPL, int K>
FZ_HD void fz_enc_phase1(const FzWarp &w, int wi, fz_u64 tile, const T *x, const FzGeom &g,
                         const FzEncParams &p, fz_u8 *archive, fz_u64 *viol, fz_u64 *costs,
                         fz_u32 *widths, FzLane<fz_u64> *cache) {
  FZ_UNROLL
  for (int k = 0; k < K; ++k) {
    fz_u64 b = (tile * FZ_WARPS + (fz_u64)wi) * K + (fz_u64)k;
    fz_u64 len = b < g.nb ? fz_block_len(g, b) : 0;
    fz_u32 wd = 0;
    fz_u64 cost = 0;
    if (len > 0) {
      fz_i64 seed = fz_seed<T>(g, x, b, p.eb);
      wd = fz_enc_width<T, VPL>(w, x + b * g.bs, len, p, b * g.bs, viol,
                                cache + (VPL > 0 ? k * VPL : 0), seed);
      w.each([&](int l) {
        if (l == 0) archive[FZ_HEADER_LEN + b] = (fz_u8)wd;
      });
      cost = fz_cost(wd, len);
      if (fz_group_end(g, b)) {
        fz_u32 hw;
        fz_u64 cnt;
        fz_group_heads<T>(w, x, g, b / g.group, p.eb, &hw, &cnt);
        cost += 1 + fz_cost(hw, cnt);
      }
    }
    w.each([&](int l) {
      if (l == 0) {
        costs[wi * K + k] = cost;
        widths[wi * K + k] = wd;
      }
    });
  }
}

// Encode phase 2: packs the warp's blocks at payload offsets `base + offs[..]` (exclusive sums
// after fz_tile_scan; `base` = offset of the tile's first body byte from the archive's
// payload offset `poff`), each group-closing block followed by its group's head trailer. When
// `chunk_off` is not null, the body offset of every checksum chunk's first block is recorded
// there (what the device CRC pass reads).
template <class T, int VPL, int K>
FZ_HD void fz_enc_phase2(const FzWarp &w, int wi, fz_u64 tile, const T *x, const FzGeom &g,
                         double eb, fz_u8 *archive, fz_u64 poff, fz_u64 base,
                         const fz_u64 *offs, const fz_u32 *widths,
                         const FzLane<fz_u64> *cache, fz_u64 *chunk_off) {
  FZ_UNROLL
  for (int k = 0; k < K; ++k) {
    fz_u64 b = (tile * FZ_WARPS + (fz_u64)wi) * K + (fz_u64)k;
    if (b >= g.nb) continue;
    fz_u64 len = fz_block_len(g, b);
    fz_u32 wd = widths[wi * K + k];
    fz_u64 off = base + offs[wi * K + k];
    fz_u8 *out = archive + poff + off;
    fz_u64 cost = fz_cost(wd, len);
    fz_i64 seed = VPL > 0 ? 0 : fz_seed<T>(g, x, b, eb);  // the cache already holds deltas
    fz_enc_pack<T, VPL>(w, x + b * g.bs, len, eb, wd, out, cost, cache + (VPL > 0 ? k * VPL : 0),
                        seed);
    if (fz_group_end(g, b)) {
      fz_u32 hw;
      fz_u64 cnt;
      FzLane<fz_u64> u = fz_group_heads<T>(w, x, g, b / g.group, eb, &hw, &cnt);
      w.each([&](int l) {
        if (l == 0) out[cost] = (fz_u8)hw;
      });
      if (hw > 0) fz_pack_chunk(w, u, hw, 0, out + cost + 1, fz_cost(hw, cnt));
    }
    if (chunk_off && (b & ((1ull << g.shift) - 1ull)) == 0) {
      w.each([&](int l) {
        if (l == 0) chunk_off[b >> g.shift] = off;
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Block-head layout decoding. A trailer's position depends on the width byte of every trailer
// before it, so group offsets are a chain through the data (no per-tile aggregate exists before
// the prefix is known): one warp walks the groups (fz_dec_walk) and the decode kernel then runs
// one warp per group in parallel. The walk computes the payload sums of 32 groups at a time in
// parallel from the width bytes and resolves FZ_WALK_AHEAD trailers per memory round trip: the
// width byte of the k-th next trailer can only lie in a window of 8·(blocks of the k groups
// before it) + 1 bytes (each trailer is 1..1 + 8·cnt bytes), so the warp loads every window at
// once (independent loads) and then resolves the chain from that copy.

#define FZ_WALK_AHEAD 8
#define FZ_WALK_WIN (256 * FZ_WALK_AHEAD * (FZ_WALK_AHEAD - 1) / 2 + FZ_WALK_AHEAD)

// Sum over the warp (every lane gets it).
FZ_HD fz_u64 fz_warp_sum(const FzWarp &w, FzLane<fz_u64> v) {
  for (int d = 16; d >= 1; d >>= 1) {
    FzLane<int> src;
    w.each([&](int l) { src[l] = l ^ d; });
    FzLane<fz_u64> o = w.shfl(v, src);
    w.each([&](int l) { v[l] += o[l]; });
  }
  return w.bcast(v, 0);
}

// Walks the body of a block-head archive (`avail` bytes from the payload offset to the
// archive's end, chunk CRCs included, as core's `blocks::body_len` reads it): goff[gi] = body
// offset of group gi, chunk_off[u] = body offset of checksum chunk u (when not null). Returns
// the body length; sets *bad, in core's order group by group, to 1 for a width above 64, 2 for a
// trailer width byte at or past `avail`, 3 for a head width above 64. `win`: FZ_WALK_WIN bytes
// of scratch (shared memory on the device).
FZ_HD fz_u64 fz_dec_walk(const FzWarp &w, const fz_u8 *widths, const fz_u8 *body, fz_u64 avail,
                         const FzGeom &g, fz_u64 *goff, fz_u64 *chunk_off, fz_u32 *bad,
                         fz_u8 *win) {
  fz_u64 ng = (g.nb + g.group - 1) / g.group;
  fz_u64 off = 0;
  *bad = 0;
  for (fz_u64 g0 = 0; g0 < ng; g0 += 32) {
    // Lane l: the payload bytes of group g0 + l (independent loads, no chain).
    FzLane<fz_u64> pay;
    FzLane<fz_u64> cnt;
    FzLane<int> over;
    w.each([&](int l) {
      fz_u64 gi = g0 + (fz_u64)l;
      pay[l] = 0;
      cnt[l] = 0;
      over[l] = 0;
      if (gi < ng) {
        fz_u64 b0 = gi * g.group;
        fz_u64 c = g.nb - b0 < g.group ? g.nb - b0 : g.group;
        for (fz_u64 j = 0; j < c; ++j) {
          fz_u32 wd = widths[b0 + j];
          if (wd > 64) over[l] = 1;
          else pay[l] += fz_cost(wd, fz_block_len(g, b0 + j));
        }
        cnt[l] = c;
      }
    });
    fz_u64 top = ng - g0 < 32 ? ng - g0 : 32;
    for (fz_u64 j0 = 0; j0 < top; j0 += FZ_WALK_AHEAD) {
      int d = (int)(top - j0 < FZ_WALK_AHEAD ? top - j0 : FZ_WALK_AHEAD);
      // Window k (group j0 + k's width byte): from off + base[k], wlen[k] bytes, at win[ws[k]].
      fz_u64 base[FZ_WALK_AHEAD], wlen[FZ_WALK_AHEAD], ws[FZ_WALK_AHEAD];
      fz_u64 sum_p = 0, sum_c = 0, total = 0;
      FZ_UNROLL
      for (int k = 0; k < FZ_WALK_AHEAD; ++k) {
        base[k] = wlen[k] = ws[k] = 0;
        if (k < d) {
          sum_p += w.bcast(pay, (int)j0 + k);
          base[k] = sum_p + (fz_u64)k;
          wlen[k] = 8 * sum_c + 1;
          ws[k] = total;
          total += wlen[k];
          sum_c += w.bcast(cnt, (int)j0 + k);
        }
      }
      w.each([&](int l) {
        for (fz_u64 i = (fz_u64)l; i < total; i += 32) {
          int k = 0;
          while (k + 1 < d && i >= ws[k + 1]) ++k;
          fz_u64 pos = off + base[k] + (i - ws[k]);
          win[i] = pos < avail ? body[pos] : (fz_u8)0xff;
        }
      });
      w.sync();
      fz_u64 cur = off;
      for (int k = 0; k < d; ++k) {
        fz_u64 gi = g0 + j0 + (fz_u64)k;
        if (w.bcast(over, (int)j0 + k)) {  // the group's widths are checked before its trailer
          *bad = 1;
          return 0;
        }
        fz_u64 at = cur + w.bcast(pay, (int)j0 + k);
        if (at >= avail) {
          *bad = 2;
          return 0;
        }
        fz_u32 hw = win[ws[k] + (at - off - base[k])];  // at − off − base[k] < wlen[k]
        if (hw > 64) {
          *bad = 3;
          return 0;
        }
        fz_u64 b0 = gi * g.group;
        w.each([&](int l) {
          if (l == 0) {
            goff[gi] = cur;
            if (chunk_off && (b0 & ((1ull << g.shift) - 1ull)) == 0) chunk_off[b0 >> g.shift] = cur;
          }
        });
        cur = at + 1 + fz_cost(hw, w.bcast(cnt, (int)j0 + k));
      }
      off = cur;
      w.sync();  // every lane has read the windows before the next step overwrites them
    }
  }
  return off;
}

// Decodes head group `gi` with one warp: block costs scanned across the lanes, the trailer's
// heads unpacked (lane l: head l) and prefix-summed, then the blocks decoded seeded by their
// heads. `body` is followed by at least 4 readable bytes (aligned word reads).
template <class T>
FZ_HD void fz_dec_group(const FzWarp &w, const fz_u8 *widths, const fz_u8 *body,
                        const FzGeom &g, fz_u64 gi, fz_u64 goff, double eb, T *out) {
  fz_u64 b0 = gi * g.group;
  fz_u64 c = g.nb - b0 < g.group ? g.nb - b0 : g.group;
  FzLane<fz_u64> cost;
  w.each([&](int l) {
    fz_u64 b = b0 + (fz_u64)l;
    cost[l] = (fz_u64)l < c ? fz_cost(widths[b], fz_block_len(g, b)) : 0;
  });
  FzLane<fz_u64> inc = cost;
  for (int d = 1; d < 32; d <<= 1) {
    FzLane<fz_u64> up = w.shfl_up(inc, d);
    w.each([&](int l) {
      if (l >= d) inc[l] += up[l];
    });
  }
  fz_u64 pay = w.bcast(inc, 31);
  const fz_u8 *trailer = body + goff + pay;
  fz_u32 hw = trailer[0];
  fz_u64 tcost = fz_cost(hw, c);
  FzLane<fz_i64> h;
  w.each([&](int l) {
    h[l] = (hw > 0 && (fz_u64)l < c)
               ? fz_unzigzag(fz_read_field(trailer + 1, tcost, (fz_u64)l * hw, hw))
               : 0;
  });
  for (int d = 1; d < 32; d <<= 1) {
    FzLane<fz_i64> up = w.shfl_up(h, d);
    w.each([&](int l) {
      if (l >= d) h[l] = fz_wadd(h[l], up[l]);
    });
  }
  for (fz_u64 j = 0; j < c; ++j) {
    fz_u64 b = b0 + j;
    fz_u64 len = fz_block_len(g, b);
    fz_u32 wd = widths[b];
    fz_u64 start = w.bcast(inc, (int)j) - w.bcast(cost, (int)j);
    fz_dec_block<T>(w, body + goff + start, fz_cost(wd, len), wd, len, eb, out + b * g.bs,
                    w.bcast(h, (int)j));
  }
}

// ---------------------------------------------------------------------------------------------
// Chunk CRCs (docs/szp-archive.md: zlib's CRC-32 of the chunk index as u32 LE, the chunk's width
// bytes, then its body bytes). One warp per chunk: lane l takes the l-th 32nd of that message,
// byte-at-a-time through a 256-entry table (the kernel's copy sits in shared memory), and the 32
// lane CRCs are combined in a tree with zlib's crc32_combine (multiplication by x^(8·len) modulo
// the polynomial), so the result is the CRC of the whole message.

#define FZ_CRC_POLY 0xedb88320u

FZ_HD fz_u32 fz_crc_mulmod(fz_u32 a, fz_u32 b) {
  fz_u32 m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ FZ_CRC_POLY : b >> 1;
  }
  return p;
}

// x^(8·len) modulo the polynomial (reflected), by repeated squaring from x^8.
FZ_HD fz_u32 fz_crc_shift(fz_u64 len) {
  fz_u32 p = 1u << 31;  // x^0
  fz_u32 t = 1u << 23;  // x^8
  while (len) {
    if (len & 1) p = fz_crc_mulmod(t, p);
    t = fz_crc_mulmod(t, t);
    len >>= 1;
  }
  return p;
}

// crc32_combine: the CRC of A‖B from crc(A), crc(B) and |B|.
FZ_HD fz_u32 fz_crc_combine(fz_u32 a, fz_u32 b, fz_u64 len_b) {
  return len_b == 0 ? a : (fz_crc_mulmod(fz_crc_shift(len_b), a) ^ b);
}

// The CRC of chunk `u`: index, `nw` width bytes, `nbody` body bytes; `tab` the byte table.
FZ_HD fz_u32 fz_crc_chunk(const FzWarp &w, const fz_u32 *tab, fz_u32 u, const fz_u8 *widths,
                          fz_u64 nw, const fz_u8 *body, fz_u64 nbody) {
  fz_u64 total = 4 + nw + nbody;
  fz_u64 seg = (total + 31) / 32;
  FzLane<fz_u32> crc;
  FzLane<fz_u64> len;
  w.each([&](int l) {
    fz_u64 a = (fz_u64)l * seg, e = a + seg;
    if (a > total) a = total;
    if (e > total) e = total;
    fz_u32 c = 0xffffffffu;
    for (fz_u64 i = a; i < e; ++i) {
      fz_u8 byte = i < 4 ? (fz_u8)(u >> (8 * i)) : (i < 4 + nw ? widths[i - 4] : body[i - 4 - nw]);
      c = tab[(c ^ byte) & 0xffu] ^ (c >> 8);
    }
    crc[l] = c ^ 0xffffffffu;
    len[l] = e - a;
  });
  for (int d = 1; d < 32; d <<= 1) {
    FzLane<int> src;
    w.each([&](int l) { src[l] = (l + d) & 31; });
    FzLane<fz_u32> rc = w.shfl(crc, src);
    FzLane<fz_u64> rl = w.shfl(len, src);
    w.each([&](int l) {
      if ((l & (2 * d - 1)) == 0) {
        crc[l] = fz_crc_combine(crc[l], rc[l], rl[l]);
        len[l] += rl[l];
      }
    });
  }
  return w.bcast(crc, 0);
}

// The byte table of the reflected polynomial (zlib's crc_table[0]).
#define FZ_CRC_TABLE_INIT {\
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu, \
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u, \
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u, \
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u, \
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u, \
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u, \
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu, \
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u, \
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u, \
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u, \
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u, \
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u, \
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du, \
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu, \
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u, \
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u, \
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u, \
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u, \
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau, \
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu, \
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u, \
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au, \
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u, \
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u, \
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu, \
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu, \
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu, \
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu, \
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u, \
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u, \
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u, \
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du, \
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu, \
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u, \
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u, \
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u, \
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u, \
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u, \
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu, \
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u, \
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u, \
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u, \
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du \
}

#endif  // FZPACK_SZP_WARP_CUH
