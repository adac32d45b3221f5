// SZp compress / decompress kernels (f32, f64; ABS and NOA; block sizes 1..=4096).
//
// Compiled at run time by NVRTC (fzpack-gpu embeds szp_warp.cuh + this file with include_str!
// and defines FZPACK_JIT). The per-warp logic lives in szp_warp.cuh, which the CPU harness runs
// too; this file holds only launch geometry, shared memory, barriers and status publication.
//
// Compression (one pass over the input after the statistics pass):
//   szp_stats_*        grid-stride min/max/max|x| + first bad index, one partial per CTA
//   szp_stats_final    one CTA merges the partials into one record (40 bytes to the host)
//   szp_level_*        first index whose level reaches 2^62 (only run on that error path)
//   szp_encode_*       tile = FZ_WARPS warps × K SZp blocks: widths + costs (deltas cached in
//                      registers for bs <= 256), tile scan, decoupled look-back over tiles in
//                      blockIdx order (as CUB's single-pass scan), then word-level packing.
//                      Both layouts: in the block-head layout a block's cost includes its
//                      group's head trailer when it closes the group (heads are recomputed from
//                      one input value per block, so a group may span tiles), so the look-back
//                      carries payload and trailer bytes and the pass stays single. Records each
//                      checksum chunk's body offset.
//   szp_crc_chunks     one warp per checksum chunk: the chunk CRCs after the body (sealing, its
//                      body length read from the encoder's scratch: no host round trip), or
//                      (verification) the first chunk whose stored CRC differs.
// Decompression:
//   szp_dec_check      stage layout: every width <= 64 and the total payload size
//   szp_decode_*       stage layout: tile scan of costs + decoupled look-back, then
//                      warp-per-block decode; records each chunk's body offset.
//   szp_dec_walk       block-head layout: one warp walks the head groups (a trailer's position
//                      depends on every earlier trailer's width byte: a chain through the data;
//                      the payload sums of 32 groups come in parallel, and FZ_WALK_AHEAD
//                      trailers are resolved per round trip from windows loaded at once),
//                      validating as core's parse does.
//   szp_decode_heads_* block-head layout: one warp per head group at the walk's offsets.
#ifndef FZPACK_JIT
#include "szp_warp.cuh"
#endif

struct FzStatsRaw {
  fz_u64 lo, hi, mag, first_nonfinite, first_over;  // doubles as bits
};

__device__ __forceinline__ void fz_store_stats(fz_u64 *dst, const FzStats &s) {
  dst[0] = (fz_u64)__double_as_longlong(s.lo);
  dst[1] = (fz_u64)__double_as_longlong(s.hi);
  dst[2] = (fz_u64)__double_as_longlong(s.mag);
  dst[3] = s.first_nonfinite;
  dst[4] = s.first_over;
}

__device__ __forceinline__ FzStats fz_load_stats(const fz_u64 *src) {
  FzStats s;
  s.lo = __longlong_as_double((long long)src[0]);
  s.hi = __longlong_as_double((long long)src[1]);
  s.mag = __longlong_as_double((long long)src[2]);
  s.first_nonfinite = src[3];
  s.first_over = src[4];
  return s;
}

__device__ __forceinline__ FzStats fz_stats_shfl(const FzStats &s, int d) {
  FzStats o;
  o.lo = __shfl_down_sync(0xffffffffu, s.lo, d);
  o.hi = __shfl_down_sync(0xffffffffu, s.hi, d);
  o.mag = __shfl_down_sync(0xffffffffu, s.mag, d);
  o.first_nonfinite = __shfl_down_sync(0xffffffffu, s.first_nonfinite, d);
  o.first_over = __shfl_down_sync(0xffffffffu, s.first_over, d);
  return o;
}

// Block-wide merge; thread 0 returns the CTA's record.
__device__ __forceinline__ FzStats fz_stats_block(FzStats s) {
  __shared__ fz_u64 part[FZ_WARPS][5];
  for (int d = 16; d >= 1; d >>= 1) {
    FzStats o = fz_stats_shfl(s, d);
    fz_stats_merge(s, o);
  }
  int wi = threadIdx.x >> 5;
  if ((threadIdx.x & 31) == 0) fz_store_stats(part[wi], s);
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i < FZ_WARPS; ++i) {
      FzStats o = fz_load_stats(part[i]);
      fz_stats_merge(s, o);
    }
  }
  return s;
}

template <class T>
__device__ void fz_stats_kernel(const T *__restrict__ x, fz_u64 n, double max_abs,
                                fz_u64 *__restrict__ partials) {
  FzStats s;
  fz_stats_init(s);
  fz_u64 stride = (fz_u64)gridDim.x * blockDim.x;
  for (fz_u64 i = (fz_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    fz_stats_add<T>(s, x[i], i, max_abs);
  s = fz_stats_block(s);
  if (threadIdx.x == 0) fz_store_stats(partials + 5ull * blockIdx.x, s);
}

extern "C" __global__ void __launch_bounds__(FZ_THREADS)
    szp_stats_f32(const float *x, fz_u64 n, double max_abs, fz_u64 *partials) {
  fz_stats_kernel<float>(x, n, max_abs, partials);
}
extern "C" __global__ void __launch_bounds__(FZ_THREADS)
    szp_stats_f64(const double *x, fz_u64 n, double max_abs, fz_u64 *partials) {
  fz_stats_kernel<double>(x, n, max_abs, partials);
}

// One CTA: merges `count` partials into out[0..5].
extern "C" __global__ void __launch_bounds__(FZ_THREADS)
    szp_stats_final(const fz_u64 *partials, fz_u32 count, fz_u64 *out) {
  FzStats s;
  fz_stats_init(s);
  for (fz_u32 i = threadIdx.x; i < count; i += blockDim.x) {
    FzStats o = fz_load_stats(partials + 5ull * i);
    fz_stats_merge(s, o);
  }
  s = fz_stats_block(s);
  if (threadIdx.x == 0) fz_store_stats(out, s);
}

template <class T>
__device__ void fz_level_kernel(const T *__restrict__ x, fz_u64 n, double two_eb,
                                fz_u64 *first) {
  const double limit = 4611686018427387904.0;  // 2^62
  fz_u64 stride = (fz_u64)gridDim.x * blockDim.x;
  for (fz_u64 i = (fz_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    if (fz_fabs(FzFloat<T>::to_f64(x[i])) / two_eb >= limit) atomicMin(first, i);
}

extern "C" __global__ void szp_level_f32(const float *x, fz_u64 n, double two_eb,
                                         fz_u64 *first) {
  fz_level_kernel<float>(x, n, two_eb, first);
}
extern "C" __global__ void szp_level_f64(const double *x, fz_u64 n, double two_eb,
                                         fz_u64 *first) {
  fz_level_kernel<double>(x, n, two_eb, first);
}

__device__ __forceinline__ fz_u64 fz_status_load(const fz_u64 *status, fz_i64 i) {
  return *((const volatile fz_u64 *)status + i);
}

__device__ __forceinline__ void fz_status_store(fz_u64 *status, fz_u64 tile, fz_u64 v) {
  *((volatile fz_u64 *)status + tile) = v;
}

// Tile scan of smem costs by warp 0, look-back and publication; returns via smem.
template <int NBLK>
__device__ __forceinline__ void fz_tile_offsets(const FzWarp &w, fz_u64 *costs,
                                                fz_u64 *status, fz_u64 tile,
                                                fz_u64 *tile_base, fz_u64 *total) {
  fz_u64 agg = fz_tile_scan(w, costs, NBLK);
  if (tile > 0 && (threadIdx.x & 31) == 0) fz_status_store(status, tile, FZ_ST_AGG | agg);
  fz_u64 prefix = fz_lookback(
      w, [&](fz_i64 i) { return fz_status_load(status, i); }, (fz_i64)tile);
  if ((threadIdx.x & 31) == 0) {
    fz_status_store(status, tile, FZ_ST_INC | (prefix + agg));
    *tile_base = prefix;
    if (tile + 1 == gridDim.x) *total = prefix + agg;
  }
}

// scratch[0] = payload bytes (written by the last tile), scratch[1] = first strict violation.
template <class T, int VPL, int K>
__device__ void fz_encode_kernel(const T *__restrict__ x, fz_u64 n, fz_u32 bs, fz_u64 group,
                                 fz_u32 shift, double eb, double bound, int strict,
                                 fz_u8 *__restrict__ archive, fz_u64 *status, fz_u64 *scratch,
                                 fz_u64 *chunk_off) {
  __shared__ fz_u64 costs[FZ_WARPS * K];
  __shared__ fz_u32 widths[FZ_WARPS * K];
  __shared__ fz_u64 tile_base;
  FzWarp w;
  FzGeom g;
  g.n = n;
  g.bs = bs;
  g.nb = (n + bs - 1) / bs;
  g.group = group;
  g.shift = shift;
  FzEncParams p;
  p.eb = eb;
  p.bound = bound;
  p.strict = strict;
  FzLane<fz_u64> cache[VPL > 0 ? K * VPL : 1];
  int wi = threadIdx.x >> 5;
  fz_u64 tile = blockIdx.x;
  fz_enc_phase1<T, VPL, K>(w, wi, tile, x, g, p, archive, scratch + 1, costs, widths, cache);
  __syncthreads();
  if (wi == 0) fz_tile_offsets<FZ_WARPS * K>(w, costs, status, tile, &tile_base, scratch);
  __syncthreads();
  fz_enc_phase2<T, VPL, K>(w, wi, tile, x, g, eb, archive, FZ_HEADER_LEN + g.nb, tile_base,
                           costs, widths, cache, chunk_off);
}

#define FZ_ENCODE(NAME, T, VPL, K)                                                         \
  extern "C" __global__ void __launch_bounds__(FZ_THREADS)                                 \
      NAME(const T *x, fz_u64 n, fz_u32 bs, fz_u64 group, fz_u32 shift, double eb,          \
           double bound, int strict, fz_u8 *archive, fz_u64 *status, fz_u64 *scratch,      \
           fz_u64 *chunk_off) {                                                             \
    fz_encode_kernel<T, VPL, K>(x, n, bs, group, shift, eb, bound, strict, archive, status, \
                                scratch, chunk_off);                                        \
  }

// Fast paths: bs <= 32·VPL keeps the block's deltas in registers (K·VPL = 16 chunks per lane).
FZ_ENCODE(szp_encode_f32_v1, float, 1, 16)
FZ_ENCODE(szp_encode_f32_v2, float, 2, 8)
FZ_ENCODE(szp_encode_f32_v4, float, 4, 4)
FZ_ENCODE(szp_encode_f32_v8, float, 8, 2)
FZ_ENCODE(szp_encode_f32_g, float, 0, 1)
FZ_ENCODE(szp_encode_f64_v1, double, 1, 16)
FZ_ENCODE(szp_encode_f64_v2, double, 2, 8)
FZ_ENCODE(szp_encode_f64_v4, double, 4, 4)
FZ_ENCODE(szp_encode_f64_v8, double, 8, 2)
FZ_ENCODE(szp_encode_f64_g, double, 0, 1)

// out[0] += payload bytes implied by the widths, out[1] |= 1 if a width exceeds 64.
extern "C" __global__ void __launch_bounds__(FZ_THREADS)
    szp_dec_check(const fz_u8 *widths, fz_u64 nb, fz_u64 n, fz_u32 bs, fz_u64 *out) {
  __shared__ fz_u64 part[FZ_WARPS];
  __shared__ fz_u32 badp[FZ_WARPS];
  FzGeom g;
  g.n = n;
  g.bs = bs;
  g.nb = nb;
  fz_u64 sum = 0;
  fz_u32 bad = 0;
  fz_u64 stride = (fz_u64)gridDim.x * blockDim.x;
  for (fz_u64 b = (fz_u64)blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += stride) {
    fz_u32 wd = widths[b];
    if (wd > 64) bad = 1;
    else sum += fz_cost(wd, fz_block_len(g, b));
  }
  for (int d = 16; d >= 1; d >>= 1) {
    sum += __shfl_down_sync(0xffffffffu, sum, d);
    bad |= __shfl_down_sync(0xffffffffu, bad, d);
  }
  if ((threadIdx.x & 31) == 0) {
    part[threadIdx.x >> 5] = sum;
    badp[threadIdx.x >> 5] = bad;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i < FZ_WARPS; ++i) {
      sum += part[i];
      bad |= badp[i];
    }
    atomicAdd(out, sum);
    if (bad) atomicOr(out + 1, 1ull);
  }
}

// Decode: widths validated beforehand (szp_dec_check). scratch[0] = payload bytes (last tile).
template <class T, int K>
__device__ void fz_decode_kernel(const fz_u8 *__restrict__ archive, fz_u64 n, fz_u32 bs,
                                 fz_u32 shift, double eb, T *__restrict__ out, fz_u64 *status,
                                 fz_u64 *scratch, fz_u64 *chunk_off) {
  __shared__ fz_u64 costs[FZ_WARPS * K];
  __shared__ fz_u64 tile_base;
  FzWarp w;
  FzGeom g;
  g.n = n;
  g.bs = bs;
  g.nb = (n + bs - 1) / bs;
  fz_u64 tile = blockIdx.x;
  fz_u64 b0 = tile * FZ_WARPS * K;
  for (int i = threadIdx.x; i < FZ_WARPS * K; i += blockDim.x) {
    fz_u64 b = b0 + (fz_u64)i;
    costs[i] = b < g.nb ? fz_cost(archive[FZ_HEADER_LEN + b], fz_block_len(g, b)) : 0;
  }
  __syncthreads();
  int wi = threadIdx.x >> 5;
  if (wi == 0) fz_tile_offsets<FZ_WARPS * K>(w, costs, status, tile, &tile_base, scratch);
  __syncthreads();
  const fz_u8 *payload = archive + FZ_HEADER_LEN + g.nb + tile_base;
  for (int k = 0; k < K; ++k) {
    int i = wi * K + k;
    fz_u64 b = b0 + (fz_u64)i;
    if (b >= g.nb) break;
    fz_u64 len = fz_block_len(g, b);
    fz_u32 wd = archive[FZ_HEADER_LEN + b];
    if ((threadIdx.x & 31) == 0 && (b & ((1ull << shift) - 1ull)) == 0)
      chunk_off[b >> shift] = tile_base + costs[i];
    fz_dec_block<T>(w, payload + costs[i], fz_cost(wd, len), wd, len, eb, out + b * g.bs, 0);
  }
}

#define FZ_DECODE(NAME, T, K)                                                              \
  extern "C" __global__ void __launch_bounds__(FZ_THREADS)                                 \
      NAME(const fz_u8 *archive, fz_u64 n, fz_u32 bs, fz_u32 shift, double eb, T *out,      \
           fz_u64 *status, fz_u64 *scratch, fz_u64 *chunk_off) {                            \
    fz_decode_kernel<T, K>(archive, n, bs, shift, eb, out, status, scratch, chunk_off);     \
  }

FZ_DECODE(szp_decode_f32_k16, float, 16)
FZ_DECODE(szp_decode_f32_k4, float, 4)
FZ_DECODE(szp_decode_f32_k1, float, 1)
FZ_DECODE(szp_decode_f64_k16, double, 16)
FZ_DECODE(szp_decode_f64_k4, double, 4)
FZ_DECODE(szp_decode_f64_k1, double, 1)

// Block-head layout walk: one warp (launch 1 CTA of 32 threads). out[0] = body length, out[1] =
// error code (fz_dec_walk: 0 none, 1 width, 2 truncated, 3 head width). `avail`: the archive's
// bytes after its width bytes.
extern "C" __global__ void __launch_bounds__(32)
    szp_dec_walk(const fz_u8 *archive, fz_u64 n, fz_u32 bs, fz_u64 group, fz_u32 shift,
                 fz_u64 avail, fz_u64 *goff, fz_u64 *chunk_off, fz_u64 *out) {
  FzWarp w;
  FzGeom g;
  g.n = n;
  g.bs = bs;
  g.nb = (n + bs - 1) / bs;
  g.group = group;
  g.shift = shift;
  __shared__ fz_u8 win[FZ_WALK_WIN];
  fz_u32 bad = 0;
  fz_u64 len = fz_dec_walk(w, archive + FZ_HEADER_LEN, archive + FZ_HEADER_LEN + g.nb, avail, g,
                           goff, chunk_off, &bad, win);
  if (threadIdx.x == 0) {
    out[0] = len;
    out[1] = bad;
  }
}

// Block-head layout decode: warp wi of CTA c decodes head group c·FZ_WARPS + wi (archive
// validated by szp_dec_walk; followed by at least 4 readable bytes).
template <class T>
__device__ void fz_decode_heads_kernel(const fz_u8 *__restrict__ archive, fz_u64 n, fz_u32 bs,
                                       fz_u64 group, double eb, const fz_u64 *__restrict__ goff,
                                       T *__restrict__ out) {
  FzWarp w;
  FzGeom g;
  g.n = n;
  g.bs = bs;
  g.nb = (n + bs - 1) / bs;
  g.group = group;
  g.shift = 0;
  fz_u64 gi = (fz_u64)blockIdx.x * FZ_WARPS + (threadIdx.x >> 5);
  if (gi * group >= g.nb) return;
  const fz_u8 *widths = archive + FZ_HEADER_LEN;
  fz_dec_group<T>(w, widths, widths + g.nb, g, gi, goff[gi], eb, out);
}

extern "C" __global__ void __launch_bounds__(FZ_THREADS)
    szp_decode_heads_f32(const fz_u8 *archive, fz_u64 n, fz_u32 bs, fz_u64 group, double eb,
                         const fz_u64 *goff, float *out) {
  fz_decode_heads_kernel<float>(archive, n, bs, group, eb, goff, out);
}
extern "C" __global__ void __launch_bounds__(FZ_THREADS)
    szp_decode_heads_f64(const fz_u8 *archive, fz_u64 n, fz_u32 bs, fz_u64 group, double eb,
                         const fz_u64 *goff, double *out) {
  fz_decode_heads_kernel<double>(archive, n, bs, group, eb, goff, out);
}

__constant__ fz_u32 fz_crc_table_const[256] = FZ_CRC_TABLE_INIT;

// Chunk CRCs, one warp per chunk: chunk u's body is [chunk_off[u], chunk_off[u+1]) (the last
// ends at *body_len, which the encoder's or the walk's last step wrote on the device).
// verify == 0: writes the CRCs (LE) after the body (sealing). verify != 0: atomicMin's the
// first chunk whose stored CRC differs into *mismatch.
extern "C" __global__ void __launch_bounds__(FZ_THREADS)
    szp_crc_chunks(fz_u8 *archive, fz_u64 nb, fz_u32 shift, const fz_u64 *chunk_off,
                   const fz_u64 *body_len, int verify, fz_u64 *mismatch) {
  __shared__ fz_u32 tab[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) tab[i] = fz_crc_table_const[i];
  __syncthreads();
  FzWarp w;
  fz_u64 c = 1ull << shift;
  fz_u64 nu = (nb + c - 1) / c;
  fz_u64 u = (fz_u64)blockIdx.x * FZ_WARPS + (threadIdx.x >> 5);
  if (u >= nu) return;
  fz_u64 total = *body_len;
  fz_u64 a = chunk_off[u], e = u + 1 < nu ? chunk_off[u + 1] : total;
  fz_u64 nw = nb - u * c < c ? nb - u * c : c;
  const fz_u8 *widths = archive + FZ_HEADER_LEN;
  const fz_u8 *body = widths + nb;
  fz_u32 s = fz_crc_chunk(w, tab, (fz_u32)u, widths + u * c, nw, body + a, e - a);
  fz_u8 *slot = (fz_u8 *)body + total + 4 * u;
  if ((threadIdx.x & 31) == 0) {
    if (verify) {
      fz_u32 stored = (fz_u32)slot[0] | ((fz_u32)slot[1] << 8) | ((fz_u32)slot[2] << 16) |
                      ((fz_u32)slot[3] << 24);
      if (stored != s) atomicMin(mismatch, u);
    } else {
      for (int t = 0; t < 4; ++t) slot[t] = (fz_u8)(s >> (8 * t));
    }
  }
}
