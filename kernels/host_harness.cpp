// CPU harness: runs the kernels' tile logic (szp_warp.cuh) on the host, one tile after another
// and one warp after another inside a tile, exactly as szp.cu sequences the phases (phase 1 for
// every warp, the tile scan and look-back, phase 2 for every warp). Built by fzpack-gpu's build
// script with the `cc` crate (feature `host-kernels`) and tested byte for byte against
// fzpack-core. What it cannot show: concurrency between warps and tiles, real shuffles and
// memory ordering (those only run on a GPU).
#include "host_shim.h"
#include "szp_warp.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

template <class T, int VPL, int K>
void encode_tiles(const T *x, fz_u64 n, fz_u32 bs, double eb, double bound, int strict,
                  fz_u8 *archive, fz_u64 *payload, fz_u64 *viol) {
  FzWarp w;
  FzGeom g;
  g.n = n;
  g.bs = bs;
  g.nb = (n + bs - 1) / bs;
  FzEncParams p;
  p.eb = eb;
  p.bound = bound;
  p.strict = strict;
  const fz_u64 per_tile = (fz_u64)FZ_WARPS * K;
  fz_u64 tiles = (g.nb + per_tile - 1) / per_tile;
  const int nc = VPL > 0 ? K * VPL : 1;
  FzLane<fz_u64> *cache = new FzLane<fz_u64>[FZ_WARPS * nc];
  fz_u64 costs[FZ_WARPS * K];
  fz_u32 widths[FZ_WARPS * K];
  fz_u64 *status = new fz_u64[tiles > 0 ? tiles : 1];
  memset(status, 0, sizeof(fz_u64) * (tiles > 0 ? tiles : 1));
  *viol = ~0ull;
  fz_u64 total = 0;
  for (fz_u64 tile = 0; tile < tiles; ++tile) {
    for (int wi = 0; wi < FZ_WARPS; ++wi)
      fz_enc_phase1<T, VPL, K>(w, wi, tile, x, g, p, archive, viol, costs, widths,
                               cache + wi * nc);
    fz_u64 agg = fz_tile_scan(w, costs, FZ_WARPS * K);
    if (tile > 0) status[tile] = FZ_ST_AGG | agg;
    fz_u64 prefix = fz_lookback(w, [&](fz_i64 i) { return status[i]; }, (fz_i64)tile);
    status[tile] = FZ_ST_INC | (prefix + agg);
    total = prefix + agg;
    for (int wi = 0; wi < FZ_WARPS; ++wi)
      fz_enc_phase2<T, VPL, K>(w, wi, tile, x, g, eb, archive, FZ_HEADER_LEN + g.nb + prefix,
                               costs, widths, cache + wi * nc);
  }
  *payload = total;
  delete[] status;
  delete[] cache;
}

template <class T>
void encode_any(const T *x, fz_u64 n, fz_u32 bs, double eb, double bound, int strict,
                fz_u8 *archive, fz_u64 *payload, fz_u64 *viol) {
  // The same variant choice as fzpack-gpu's launcher.
  if (bs <= 32) encode_tiles<T, 1, 16>(x, n, bs, eb, bound, strict, archive, payload, viol);
  else if (bs <= 64) encode_tiles<T, 2, 8>(x, n, bs, eb, bound, strict, archive, payload, viol);
  else if (bs <= 128) encode_tiles<T, 4, 4>(x, n, bs, eb, bound, strict, archive, payload, viol);
  else if (bs <= 256) encode_tiles<T, 8, 2>(x, n, bs, eb, bound, strict, archive, payload, viol);
  else encode_tiles<T, 0, 1>(x, n, bs, eb, bound, strict, archive, payload, viol);
}

template <class T, int K>
void decode_tiles(const fz_u8 *archive, fz_u64 n, fz_u32 bs, double eb, T *out) {
  FzWarp w;
  FzGeom g;
  g.n = n;
  g.bs = bs;
  g.nb = (n + bs - 1) / bs;
  const fz_u64 per_tile = (fz_u64)FZ_WARPS * K;
  fz_u64 tiles = (g.nb + per_tile - 1) / per_tile;
  fz_u64 costs[FZ_WARPS * K];
  fz_u64 *status = new fz_u64[tiles > 0 ? tiles : 1];
  memset(status, 0, sizeof(fz_u64) * (tiles > 0 ? tiles : 1));
  for (fz_u64 tile = 0; tile < tiles; ++tile) {
    fz_u64 b0 = tile * per_tile;
    for (fz_u64 i = 0; i < per_tile; ++i) {
      fz_u64 b = b0 + i;
      costs[i] = b < g.nb ? fz_cost(archive[FZ_HEADER_LEN + b], fz_block_len(g, b)) : 0;
    }
    fz_u64 agg = fz_tile_scan(w, costs, FZ_WARPS * K);
    if (tile > 0) status[tile] = FZ_ST_AGG | agg;
    fz_u64 prefix = fz_lookback(w, [&](fz_i64 i) { return status[i]; }, (fz_i64)tile);
    status[tile] = FZ_ST_INC | (prefix + agg);
    const fz_u8 *payload = archive + FZ_HEADER_LEN + g.nb + prefix;
    for (fz_u64 i = 0; i < per_tile; ++i) {
      fz_u64 b = b0 + i;
      if (b >= g.nb) break;
      fz_u64 len = fz_block_len(g, b);
      fz_u32 wd = archive[FZ_HEADER_LEN + b];
      fz_dec_block<T>(w, payload + costs[i], fz_cost(wd, len), wd, len, eb, out + b * g.bs);
    }
  }
  delete[] status;
}

template <class T>
void decode_any(const fz_u8 *archive, fz_u64 n, fz_u32 bs, double eb, T *out) {
  if (bs <= 32) decode_tiles<T, 16>(archive, n, bs, eb, out);
  else if (bs <= 256) decode_tiles<T, 4>(archive, n, bs, eb, out);
  else decode_tiles<T, 1>(archive, n, bs, eb, out);
}

// The stats kernel's grid-stride order with an emulated grid of `threads` threads.
template <class T> void stats_any(const T *x, fz_u64 n, double max_abs, double *out5f,
                                  fz_u64 *out2) {
  const fz_u64 threads = 4 * FZ_THREADS;
  FzStats all;
  fz_stats_init(all);
  for (fz_u64 t = 0; t < threads; ++t) {
    FzStats s;
    fz_stats_init(s);
    for (fz_u64 i = t; i < n; i += threads) fz_stats_add<T>(s, x[i], i, max_abs);
    fz_stats_merge(all, s);
  }
  out5f[0] = all.lo;
  out5f[1] = all.hi;
  out5f[2] = all.mag;
  out2[0] = all.first_nonfinite;
  out2[1] = all.first_over;
}

}  // namespace

extern "C" {

// `archive` must hold 48 + nb + 8n bytes; the header bytes are left to the caller. Returns the
// payload byte count in *payload and the first strict violation (or ~0) in *viol.
void fzh_encode_f32(const float *x, fz_u64 n, fz_u32 bs, double eb, double bound, int strict,
                    fz_u8 *archive, fz_u64 *payload, fz_u64 *viol) {
  encode_any<float>(x, n, bs, eb, bound, strict, archive, payload, viol);
}
void fzh_encode_f64(const double *x, fz_u64 n, fz_u32 bs, double eb, double bound, int strict,
                    fz_u8 *archive, fz_u64 *payload, fz_u64 *viol) {
  encode_any<double>(x, n, bs, eb, bound, strict, archive, payload, viol);
}
// `archive` is a validated archive followed by at least 4 readable bytes (aligned word reads).
void fzh_decode_f32(const fz_u8 *archive, fz_u64 n, fz_u32 bs, double eb, float *out) {
  decode_any<float>(archive, n, bs, eb, out);
}
void fzh_decode_f64(const fz_u8 *archive, fz_u64 n, fz_u32 bs, double eb, double *out) {
  decode_any<double>(archive, n, bs, eb, out);
}
void fzh_stats_f32(const float *x, fz_u64 n, double max_abs, double *f3, fz_u64 *i2) {
  stats_any<float>(x, n, max_abs, f3, i2);
}
void fzh_stats_f64(const double *x, fz_u64 n, double max_abs, double *f3, fz_u64 *i2) {
  stats_any<double>(x, n, max_abs, f3, i2);
}
// Look-back over caller-made status words (every predecessor of `tile` published).
fz_u64 fzh_lookback(const fz_u64 *status, fz_i64 tile) {
  FzWarp w;
  return fz_lookback(w, [&](fz_i64 i) { return status[i]; }, tile);
}
// Tile scan of `count` (<= 1024) costs in place; returns the total.
fz_u64 fzh_tile_scan(fz_u64 *costs, int count) {
  FzWarp w;
  return fz_tile_scan(w, costs, count);
}
}
