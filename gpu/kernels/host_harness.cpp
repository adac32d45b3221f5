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
void encode_tiles(const T *x, fz_u64 n, fz_u32 bs, fz_u64 group, fz_u32 shift, double eb,
                  double bound, int strict, fz_u8 *archive, fz_u64 *payload, fz_u64 *viol,
                  fz_u64 *chunk_off) {
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
      fz_enc_phase2<T, VPL, K>(w, wi, tile, x, g, eb, archive, FZ_HEADER_LEN + g.nb, prefix,
                               costs, widths, cache + wi * nc, chunk_off);
  }
  *payload = total;
  delete[] status;
  delete[] cache;
}

template <class T>
void encode_any(const T *x, fz_u64 n, fz_u32 bs, fz_u64 group, fz_u32 shift, double eb,
                double bound, int strict, fz_u8 *archive, fz_u64 *payload, fz_u64 *viol,
                fz_u64 *chunk_off) {
  // The same variant choice as fzpack-gpu's launcher.
#define FZ_ENC_ARGS x, n, bs, group, shift, eb, bound, strict, archive, payload, viol, chunk_off
  if (bs <= 32) encode_tiles<T, 1, 16>(FZ_ENC_ARGS);
  else if (bs <= 64) encode_tiles<T, 2, 8>(FZ_ENC_ARGS);
  else if (bs <= 128) encode_tiles<T, 4, 4>(FZ_ENC_ARGS);
  else if (bs <= 256) encode_tiles<T, 8, 2>(FZ_ENC_ARGS);
  else encode_tiles<T, 0, 1>(FZ_ENC_ARGS);
#undef FZ_ENC_ARGS
}

template <class T, int K>
void decode_tiles(const fz_u8 *archive, fz_u64 n, fz_u32 bs, fz_u32 shift, double eb, T *out,
                  fz_u64 *chunk_off) {
  FzWarp w;
  FzGeom g;
  g.n = n;
  g.bs = bs;
  g.nb = (n + bs - 1) / bs;
  g.group = 0;
  g.shift = shift;
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
      if ((b & ((1ull << shift) - 1ull)) == 0) chunk_off[b >> shift] = prefix + costs[i];
      fz_dec_block<T>(w, payload + costs[i], fz_cost(wd, len), wd, len, eb, out + b * g.bs, 0);
    }
  }
  delete[] status;
}

template <class T>
void decode_any(const fz_u8 *archive, fz_u64 n, fz_u32 bs, fz_u32 shift, double eb, T *out,
                fz_u64 *chunk_off) {
  if (bs <= 32) decode_tiles<T, 16>(archive, n, bs, shift, eb, out, chunk_off);
  else if (bs <= 256) decode_tiles<T, 4>(archive, n, bs, shift, eb, out, chunk_off);
  else decode_tiles<T, 1>(archive, n, bs, shift, eb, out, chunk_off);
}

FzGeom geom(fz_u64 n, fz_u32 bs, fz_u64 group, fz_u32 shift) {
  FzGeom g;
  g.n = n;
  g.bs = bs;
  g.nb = (n + bs - 1) / bs;
  g.group = group;
  g.shift = shift;
  return g;
}

// Block-head layout: one warp per group, groups in order (szp_decode_heads_*), at the offsets
// the walk found.
template <class T>
void decode_heads(const fz_u8 *archive, const FzGeom &g, double eb, const fz_u64 *goff, T *out) {
  FzWarp w;
  fz_u64 ng = (g.nb + g.group - 1) / g.group;
  const fz_u8 *widths = archive + FZ_HEADER_LEN;
  const fz_u8 *body = widths + g.nb;
  for (fz_u64 gi = 0; gi < ng; ++gi) fz_dec_group<T>(w, widths, body, g, gi, goff[gi], eb, out);
}

const fz_u32 crc_table[256] = FZ_CRC_TABLE_INIT;

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
// `group`: blocks per head group (0: the stage layout); `shift`: chunks of 2^shift blocks;
// `chunk_off` gets each chunk's body offset (ceil(nb / 2^shift) slots).
void fzh_encode_f32(const float *x, fz_u64 n, fz_u32 bs, fz_u64 group, fz_u32 shift, double eb,
                    double bound, int strict, fz_u8 *archive, fz_u64 *payload, fz_u64 *viol,
                    fz_u64 *chunk_off) {
  encode_any<float>(x, n, bs, group, shift, eb, bound, strict, archive, payload, viol, chunk_off);
}
void fzh_encode_f64(const double *x, fz_u64 n, fz_u32 bs, fz_u64 group, fz_u32 shift, double eb,
                    double bound, int strict, fz_u8 *archive, fz_u64 *payload, fz_u64 *viol,
                    fz_u64 *chunk_off) {
  encode_any<double>(x, n, bs, group, shift, eb, bound, strict, archive, payload, viol,
                     chunk_off);
}
// The block-head walk (szp_dec_walk): group and chunk body offsets, the body length; returns
// the error code (0: none). `avail`: bytes after the width bytes (body and chunk CRCs).
fz_u32 fzh_dec_walk(const fz_u8 *archive, fz_u64 n, fz_u32 bs, fz_u64 group, fz_u32 shift,
                    fz_u64 avail, fz_u64 *goff, fz_u64 *chunk_off, fz_u64 *body_len) {
  FzWarp w;
  FzGeom g = geom(n, bs, group, shift);
  fz_u32 bad = 0;
  static thread_local fz_u8 win[FZ_WALK_WIN];
  *body_len = fz_dec_walk(w, archive + FZ_HEADER_LEN, archive + FZ_HEADER_LEN + g.nb, avail, g,
                          goff, chunk_off, &bad, win);
  return bad;
}
// `archive` is a validated archive followed by at least 4 readable bytes (aligned word reads).
// Stage layout (group 0): the look-back decoder, recording chunk body offsets in `chunk_off`;
// block-head layout: per-group decode at the walk's offsets `goff`.
void fzh_decode_f32(const fz_u8 *archive, fz_u64 n, fz_u32 bs, fz_u64 group, fz_u32 shift,
                    double eb, const fz_u64 *goff, float *out, fz_u64 *chunk_off) {
  if (group > 0) decode_heads<float>(archive, geom(n, bs, group, shift), eb, goff, out);
  else decode_any<float>(archive, n, bs, shift, eb, out, chunk_off);
}
void fzh_decode_f64(const fz_u8 *archive, fz_u64 n, fz_u32 bs, fz_u64 group, fz_u32 shift,
                    double eb, const fz_u64 *goff, double *out, fz_u64 *chunk_off) {
  if (group > 0) decode_heads<double>(archive, geom(n, bs, group, shift), eb, goff, out);
  else decode_any<double>(archive, n, bs, shift, eb, out, chunk_off);
}
// The CRC of chunk `u` with the warp-parallel CRC (what szp_crc_chunks runs per warp).
fz_u32 fzh_crc_chunk(fz_u32 u, const fz_u8 *widths, fz_u64 nw, const fz_u8 *body,
                     fz_u64 nbody) {
  FzWarp w;
  return fz_crc_chunk(w, crc_table, u, widths, nw, body, nbody);
}
// The sealing pass as szp_crc_chunks runs it: chunk u's body is [chunk_off[u], chunk_off[u+1])
// (the last ends at `body_len`); its CRC goes to sums[4u..4u+4] (LE).
void fzh_seal(const fz_u8 *widths, fz_u64 nb, fz_u32 shift, const fz_u8 *body,
              const fz_u64 *chunk_off, fz_u64 body_len, fz_u8 *sums) {
  FzWarp w;
  fz_u64 c = 1ull << shift;
  fz_u64 nu = (nb + c - 1) / c;
  for (fz_u64 u = 0; u < nu; ++u) {
    fz_u64 a = chunk_off[u], e = u + 1 < nu ? chunk_off[u + 1] : body_len;
    fz_u64 nw = nb - u * c < c ? nb - u * c : c;
    fz_u32 s = fz_crc_chunk(w, crc_table, (fz_u32)u, widths + u * c, nw, body + a, e - a);
    for (int t = 0; t < 4; ++t) sums[4 * u + t] = (fz_u8)(s >> (8 * t));
  }
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
