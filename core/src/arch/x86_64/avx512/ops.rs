//! The AVX-512 combines of the compressed-domain operations (`szp::ops`): one or two inputs
//! with coefficients ±1, behind the [`Avx512Vbmi`] token.
//!
//! * [`combine`] (widths up to 24): the decoder's `vpermb` + `vpmultishiftqb` field
//!   extraction (this leaf's tables), unzigzag, add or subtract in i32 lanes, zigzag, 16
//!   values per step; [`pack`] packs the result with the encoder's VBMI packer.
//! * [`combine64`] (widths up to 56): gathered 8-byte windows, variable shifts, i64 lanes.
//! * [`add_run`]: a run of blocks in one loop (combine a batch of blocks, then pack runs of
//!   equal width as one bit stream), for the common case of small widths.
//!
//! Each produces exactly what the scalar code of `szp::ops` produces from the same blocks
//! (`Σ ±unzigzag(field)`, zigzagged, packed LSB-first at the block's width): the tests below
//! compare every kernel with a scalar reference on random payloads, and
//! `tests/tests/szp_ops.rs` compares whole operations on the portable and AVX-512 paths.

use core::arch::x86_64::*;

use super::szp::pack_block32;
use crate::arch::x86_64::Avx512Vbmi;
use crate::arch::x86_64::tables::Z512_TABLES;
use crate::bits::{field, payload_len, unzigzag, zigzag};

/// The decoder's field extraction for one width `w` (1..=24): its `vpermb` indices and
/// `vpmultishiftqb` controls, and the shift `32 − w` that leaves each field in an i32 lane.
#[derive(Clone, Copy)]
struct Dec {
    idx: __m512i,
    ctrl: __m512i,
    cnt: __m128i,
}

impl Dec {
    /// The tables of width `w`; `None` above 24.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
    fn of(w: u8) -> Option<Dec> {
        let t = Z512_TABLES.get(usize::from(w))?;
        // SAFETY: the tables are plain arrays of 64 bytes; unaligned loads.
        let (idx, ctrl) = unsafe {
            (
                _mm512_loadu_si512(t.dec_idx.as_ptr().cast()),
                _mm512_loadu_si512(t.dec_ctrl.as_ptr().cast()),
            )
        };
        let cnt = _mm_cvtsi32_si128(32 - i32::from(w));
        Some(Dec { idx, ctrl, cnt })
    }

    /// The 16 deltas of one step (`b`: its payload bytes, from the step's first field's
    /// byte): the fields, unzigzagged as `(f >> 1) ^ −(f & 1)`, i32 lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
    fn deltas(self, b: __m512i) -> __m512i {
        let f = _mm512_srl_epi32(
            _mm512_multishift_epi64_epi8(self.ctrl, _mm512_permutexvar_epi8(self.idx, b)),
            self.cnt,
        );
        _mm512_xor_si512(
            _mm512_srli_epi32::<1>(f),
            _mm512_sub_epi32(
                _mm512_setzero_si512(),
                _mm512_and_si512(f, _mm512_set1_epi32(1)),
            ),
        )
    }
}

/// The zigzagged `Σ ±dⱼ` of fields `0..len` of up to two blocks (`(payload from the block
/// start, width 0..=24, negate)`) into `u[..len]`; returns the OR of the values, or `None`
/// (nothing written that matters) if an input is not covered.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn combine_vbmi(ins: &[(&[u8], u8, bool)], len: usize, u: &mut [u32]) -> Option<u32> {
    if u.len() < len || ins.len() > 2 {
        return None;
    }
    let zero = _mm512_setzero_si512();
    let none = Dec {
        idx: zero,
        ctrl: zero,
        cnt: _mm_setzero_si128(),
    };
    let mut tab = [(none, 0usize, false, 0usize); 2];
    let mut k = 0;
    for &(p, w, neg) in ins {
        if w == 0 {
            continue;
        }
        let t = Dec::of(w)?;
        if p.len() < payload_len(w, len) {
            return None;
        }
        if let Some(slot) = tab.get_mut(k) {
            *slot = (t, usize::from(w), neg, p.as_ptr() as usize);
            k += 1;
        }
    }
    let tab = tab.get(..k).unwrap_or_default();
    let mut or = zero;
    let mut i = 0;
    while i < len {
        let r = (len - i).min(16);
        let lm: u16 = if r == 16 { u16::MAX } else { (1u16 << r) - 1 };
        let mut s = zero;
        for &(t, wz, neg, base) in tab {
            let bm = u64::MAX >> (64 - (r * wz).div_ceil(8));
            let src = base as *const u8;
            // SAFETY: the step's bytes [i·w/8, i·w/8 + ceil(r·w/8)) lie inside the input's payload slice (its length is at least ceil(len·w/8), checked above); masked-off bytes are not accessed.
            let b = unsafe { _mm512_maskz_loadu_epi8(bm, src.wrapping_add(i / 8 * wz).cast()) };
            let d = t.deltas(b);
            s = if neg {
                _mm512_sub_epi32(s, d)
            } else {
                _mm512_add_epi32(s, d)
            };
        }
        // |s| <= 2 · 2^23: the i32 zigzag is exact.
        let z = _mm512_maskz_xor_epi32(lm, _mm512_slli_epi32::<1>(s), _mm512_srai_epi32::<31>(s));
        or = _mm512_or_si512(or, z);
        // SAFETY: lanes i..i+r of `u` (u.len() >= len checked); masked-off lanes are not accessed.
        unsafe { _mm512_mask_storeu_epi32(u.as_mut_ptr().wrapping_add(i).cast(), lm, z) };
        i += 16;
    }
    Some(_mm512_reduce_or_epi32(or) as u32)
}

/// The zigzagged `Σ ±dⱼ` of fields `0..len` of up to two blocks (`(payload from the block
/// start, width 0..=56, negate)`) into `u[..len]` with 64-bit lanes (gathered 8-byte windows,
/// variable shifts): the wide-width counterpart of [`combine`]. Returns the OR of the
/// values, or `None` if an input is not covered. The caller guarantees (its `fast` test)
/// that the sums do not overflow.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
fn combine64_avx512(ins: &[(&[u8], u8, bool)], len: usize, u: &mut [u64]) -> Option<u64> {
    if u.len() < len || ins.len() > 2 {
        return None;
    }
    // SIMD while every lane's 8-byte window lies inside its input's payload slice.
    let mut simd_end = len / 8 * 8;
    for &(p, w, _) in ins {
        let w = usize::from(w);
        if w > 56 || p.len() < payload_len(w as u8, len) {
            return None;
        }
        // Field i starts at byte i·w/8: its window fits while i·w <= (len − 8)·8 + 7.
        if let Some(f) = p
            .len()
            .checked_sub(8)
            .and_then(|r| (r * 8 + 7).checked_div(w))
        {
            simd_end = simd_end.min((f + 1) / 8 * 8);
        } else if w > 0 {
            simd_end = 0;
        }
    }
    let zero = _mm512_setzero_si512();
    let one = _mm512_set1_epi64(1);
    let seven = _mm512_set1_epi64(7);
    let lanes = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    let mut or = zero;
    let mut i = 0;
    while i < simd_end {
        let mut s = zero;
        for &(p, w, neg) in ins {
            if w == 0 {
                continue;
            }
            let wv = _mm512_set1_epi64(i64::from(w));
            let bit = _mm512_mullo_epi64(_mm512_add_epi64(lanes, _mm512_set1_epi64(i as i64)), wv);
            let byte = _mm512_srli_epi64::<3>(bit);
            let sh = _mm512_and_si512(bit, seven);
            // Lane j reads the 8 bytes at byte (i + j)·w / 8; i + 8 <= simd_end, which the
            // loop above capped so that every such window ends inside `p`.
            // SAFETY: each gathered 8-byte window lies inside `p` (see the two lines above).
            let g = unsafe { _mm512_i64gather_epi64::<1>(byte, p.as_ptr().cast()) };
            let mask = _mm512_set1_epi64(((1u64 << w) - 1) as i64);
            let f = _mm512_and_si512(_mm512_srlv_epi64(g, sh), mask);
            let d = _mm512_xor_si512(
                _mm512_srli_epi64::<1>(f),
                _mm512_sub_epi64(zero, _mm512_and_si512(f, one)),
            );
            s = if neg {
                _mm512_sub_epi64(s, d)
            } else {
                _mm512_add_epi64(s, d)
            };
        }
        let z = _mm512_xor_si512(_mm512_slli_epi64::<1>(s), _mm512_srai_epi64::<63>(s));
        or = _mm512_or_si512(or, z);
        // SAFETY: lanes i..i+8 of `u` (i + 8 <= len <= u.len()).
        unsafe { _mm512_storeu_si512(u.as_mut_ptr().wrapping_add(i).cast(), z) };
        i += 8;
    }
    let mut any = _mm512_reduce_or_epi64(or) as u64;
    for (k, slot) in u.iter_mut().enumerate().take(len).skip(simd_end) {
        let mut d = 0i64;
        for &(p, w, neg) in ins {
            if w > 0 {
                let w = u32::from(w);
                let v = unzigzag(field(p, k, w));
                d = if neg {
                    d.wrapping_sub(v)
                } else {
                    d.wrapping_add(v)
                };
            }
        }
        *slot = zigzag(d);
        any |= *slot;
    }
    Some(any)
}

/// A run of blocks of one or two inputs through [`add_run`]: each input's width bytes,
/// payload, sign and next payload offset; the archives' `n` values in blocks of `bs`; the
/// next block `b`, the block `end` the run stops before, and the output offset `pos`.
pub(crate) struct Run<'a> {
    pub(crate) widths: [&'a [u8]; 2],
    pub(crate) payload: [&'a [u8]; 2],
    pub(crate) neg: [bool; 2],
    pub(crate) off: [usize; 2],
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) bs: usize,
    pub(crate) b: usize,
    pub(crate) end: usize,
    pub(crate) pos: usize,
    /// Where `out` holds block 0's width byte (block `b`'s is at `wpos + b`).
    pub(crate) wpos: usize,
}

/// Combines blocks `r.b..r.end` of `r.k` (1 or 2) inputs into `out` (width byte at
/// `r.wpos + b`, payload at `r.pos`) in one loop: per block, unpack each input's
/// fields (widths 0..=24, i32 lanes), add or subtract, zigzag, OR for the width, and pack
/// at that width (the encoder's VBMI packer) from the zigzag scratch `z`. Advances `r`
/// past every block it wrote; stops early (leaving `r` at the block) at a block it does
/// not cover: an input width above 24, a result width above 24, or an output too small.
/// The caller guarantees the sums do not overflow (its `fast` test) and that block
/// `r.b` starts a run whose inputs' offsets are `r.off`.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn add_run_vbmi(r: &mut Run<'_>, out: &mut [u8], z: &mut [u32]) {
    // Full blocks of the common small sizes with a constant step count (unrolled).
    match (r.neg.iter().any(|&g| g), r.bs) {
        (false, 32) => run_signed::<false, 32>(r, out, z),
        (false, 64) => run_signed::<false, 64>(r, out, z),
        (false, 128) => run_signed::<false, 128>(r, out, z),
        (false, _) => run_signed::<false, 0>(r, out, z),
        (true, 32) => run_signed::<true, 32>(r, out, z),
        (true, 64) => run_signed::<true, 64>(r, out, z),
        (true, 128) => run_signed::<true, 128>(r, out, z),
        (true, _) => run_signed::<true, 0>(r, out, z),
    }
}

/// [`add_run`] with (`NEG`) or without negated inputs; `L > 0`: blocks of exactly `L`
/// values only (it stops at a shorter last block, which the caller's per-block path takes).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn run_signed<const NEG: bool, const L: usize>(r: &mut Run<'_>, out: &mut [u8], z: &mut [u32]) {
    let (n, bs, end) = (r.n, r.bs, r.end);
    let zero = _mm512_setzero_si512();
    // A missing second input reads as width 0 in every block.
    let (wa_s, wb_s) = (r.widths[0], if r.k >= 2 { r.widths[1] } else { &[] });
    let (pa, pb) = (r.payload[0], if r.k >= 2 { r.payload[1] } else { &[] });
    // Negation as `(d ^ m) − m` with `m` all ones (negate) or zero.
    let sign = |neg: bool| _mm512_set1_epi32(-i32::from(neg));
    let (ma, mb) = (sign(r.neg[0]), sign(r.neg[1] && r.k >= 2));
    let (mut b, mut pos, [mut oa, mut ob]) = (r.b, r.pos, r.off);
    // Batches of blocks: phase 1 combines every block of the batch into `z` (the blocks'
    // chains are independent: input offsets follow from input widths alone), phase 2
    // packs them at their widths.
    let mut wbuf = [0u8; BATCH_BLOCKS];
    'run: while b < end {
        let (b0, mut nbat, mut vals) = (b, 0usize, 0usize);
        let zp = z.as_mut_ptr();
        let mut stop = false;
        while b < end && nbat < BATCH_BLOCKS {
            let len = n.saturating_sub(b.saturating_mul(bs)).min(bs);
            if L > 0 && len != L {
                stop = true;
                break;
            }
            let len = if L > 0 { L } else { len };
            if len == 0 || vals + len > z.len() {
                break;
            }
            let wa = if r.k >= 1 {
                wa_s.get(b).copied()
            } else {
                Some(0)
            };
            let wb = if r.k >= 2 {
                wb_s.get(b).copied()
            } else {
                Some(0)
            };
            let (Some(wa), Some(wb)) = (wa, wb) else {
                stop = true;
                break;
            };
            if wa > 24 || wb > 24 {
                stop = true;
                break;
            }
            let (ca, cb) = (payload_len(wa, len), payload_len(wb, len));
            // Each input's block payload must lie inside its payload slice.
            if oa + ca > pa.len() || ob + cb > pb.len() {
                stop = true;
                break;
            }
            // Width 0 reads with width 1's tables and an empty byte mask: every field is 0.
            let (Some(ta), Some(tb)) = (Dec::of(wa.max(1)), Dec::of(wb.max(1))) else {
                stop = true;
                break;
            };
            let (wa, wb) = (usize::from(wa), usize::from(wb));
            let (srca, srcb) = (pa.as_ptr().wrapping_add(oa), pb.as_ptr().wrapping_add(ob));
            let mut or = zero;
            let mut i = 0;
            while i < len {
                let rl = (len - i).min(16);
                let lm: u16 = if rl == 16 { u16::MAX } else { (1u16 << rl) - 1 };
                // ceil(rl·w/8) <= 48 bytes of each input (0 for width 0).
                let bma = (1u64 << (rl * wa).div_ceil(8)) - 1;
                let bmb = (1u64 << (rl * wb).div_ceil(8)) - 1;
                // SAFETY: the step's bytes [i·w/8, i·w/8 + ceil(rl·w/8)) of each input lie inside its block payload, checked above to lie inside its payload slice; masked-off bytes are not accessed.
                let (va, vb) = unsafe {
                    (
                        _mm512_maskz_loadu_epi8(bma, srca.wrapping_add(i / 8 * wa).cast()),
                        _mm512_maskz_loadu_epi8(bmb, srcb.wrapping_add(i / 8 * wb).cast()),
                    )
                };
                // Each input's deltas; `−d = (d ^ m) − m` with `m` all ones below.
                let (da, db) = (ta.deltas(va), tb.deltas(vb));
                let s = if NEG {
                    _mm512_add_epi32(
                        _mm512_sub_epi32(_mm512_xor_si512(da, ma), ma),
                        _mm512_sub_epi32(_mm512_xor_si512(db, mb), mb),
                    )
                } else {
                    _mm512_add_epi32(da, db)
                };
                // |s| <= 2 · 2^23: the i32 zigzag is exact.
                let zv = _mm512_maskz_xor_epi32(
                    lm,
                    _mm512_slli_epi32::<1>(s),
                    _mm512_srai_epi32::<31>(s),
                );
                or = _mm512_or_si512(or, zv);
                // SAFETY: lanes vals+i..vals+i+rl of `z` (vals + len <= z.len() checked); masked-off lanes are not accessed.
                unsafe { _mm512_mask_storeu_epi32(zp.wrapping_add(vals + i).cast(), lm, zv) };
                i += 16;
            }
            let w = 32 - (_mm512_reduce_or_epi32(or) as u32).leading_zeros();
            if w > 24 {
                stop = true;
                break;
            }
            if let Some(slot) = wbuf.get_mut(nbat) {
                *slot = w as u8;
            }
            oa += ca;
            ob += cb;
            vals += len;
            nbat += 1;
            b += 1;
        }
        // Phase 2: pack the batch's blocks (values `z[voff..voff + len]` of each). A run of
        // consecutive blocks of one width whose payloads end on byte boundaries (every
        // block but the archive's last when `bs·w` is a multiple of 8) is one bit stream:
        // one packer call for the run.
        let mut voff = 0usize;
        let mut j = 0usize;
        while j < nbat {
            let w = wbuf.get(j).copied().unwrap_or(0);
            // The run's blocks `j..e` that fit `out`: `glen` values, payload up to `end_pos`;
            // `short` once a block does not fit.
            let (mut e, mut glen, mut end_pos, mut short) = (j, 0usize, pos, false);
            while e < nbat && wbuf.get(e).copied() == Some(w) {
                let len = n.saturating_sub((b0 + e).saturating_mul(bs)).min(bs);
                let next = end_pos.checked_add(payload_len(w, len));
                let Some(next) = next.filter(|&x| x <= out.len()) else {
                    short = true;
                    break;
                };
                (glen, end_pos) = (glen + len, next);
                e += 1;
                if !(len * usize::from(w)).is_multiple_of(8) {
                    break;
                }
            }
            match out.get_mut(r.wpos + b0 + j..r.wpos + b0 + e) {
                Some(slots) => slots.fill(w),
                None => (e, glen, end_pos, short) = (j, 0, pos, true),
            }
            if w > 0
                && e > j
                && let (Some(dst), Some(zs)) = (out.get_mut(pos..end_pos), z.get(voff..voff + glen))
            {
                pack_block32(zs, u32::from(w), dst);
            }
            pos = end_pos;
            voff += glen;
            j = e;
            if short {
                // Too small from block `b0 + e` on: rewind the inputs to it.
                (oa, ob) = rewind(r, b0 + e, b, oa, ob);
                b = b0 + e;
                break 'run;
            }
        }
        if stop || nbat == 0 {
            break;
        }
    }
    (r.b, r.pos, r.off) = (b, pos, [oa, ob]);
}

/// Blocks per batch of [`add_run`].
const BATCH_BLOCKS: usize = 256;

/// The input offsets at block `from` given those at block `to` (`from <= to`): back by the
/// payloads of blocks `from..to`.
fn rewind(r: &Run<'_>, from: usize, to: usize, mut oa: usize, mut ob: usize) -> (usize, usize) {
    let (n, bs) = (r.n, r.bs);
    for bj in from..to {
        let len = n.saturating_sub(bj.saturating_mul(bs)).min(bs);
        let wa = if r.k >= 1 {
            r.widths[0].get(bj).copied().unwrap_or(0)
        } else {
            0
        };
        let wb = if r.k >= 2 {
            r.widths[1].get(bj).copied().unwrap_or(0)
        } else {
            0
        };
        oa = oa.saturating_sub(payload_len(wa, len));
        ob = ob.saturating_sub(payload_len(wb, len));
    }
    (oa, ob)
}

/// The zigzagged `Σ ±dⱼ` of fields `0..len` of up to two blocks (`(payload from the block
/// start, width 0..=24, negate)`) into `u[..len]`; the OR of the values, or `None` (nothing
/// written that matters) if an input is not covered.
#[inline]
pub(crate) fn combine(
    token: Avx512Vbmi,
    ins: &[(&[u8], u8, bool)],
    len: usize,
    u: &mut [u32],
) -> Option<u32> {
    let _ = token;
    // SAFETY: the token proves AVX-512 F/BW/VL/DQ and VBMI.
    unsafe { combine_vbmi(ins, len, u) }
}

/// [`combine`] for widths 0..=56 in 64-bit lanes. The caller guarantees that the sums do not
/// overflow (two deltas below 2⁵⁵ in magnitude never do).
#[inline]
pub(crate) fn combine64(
    token: Avx512Vbmi,
    ins: &[(&[u8], u8, bool)],
    len: usize,
    u: &mut [u64],
) -> Option<u64> {
    let _ = token;
    // SAFETY: the token proves AVX-512 F/BW/VL/DQ.
    unsafe { combine64_avx512(ins, len, u) }
}

/// Combines the run of blocks `r.b..r.end` into `out` as far as it covers them (see
/// [`add_run_vbmi`]); advances `r` past every block it wrote.
#[inline]
pub(crate) fn add_run(token: Avx512Vbmi, r: &mut Run<'_>, out: &mut [u8], z: &mut [u32]) {
    let _ = token;
    // SAFETY: the token proves AVX-512 F/BW/VL/DQ and VBMI.
    unsafe { add_run_vbmi(r, out, z) }
}

/// Packs `u` (each `< 2^w`, `1 <= w <= 24`) into exactly `out` (the encoder's VBMI packer).
#[inline]
pub(crate) fn pack(token: Avx512Vbmi, u: &[u32], w: u32, out: &mut [u8]) {
    let _ = token;
    // SAFETY: the token proves AVX-512 F/BW/VL/DQ and VBMI.
    unsafe { pack_block32(u, w, out) }
}

#[cfg(test)]
mod tests {
    use super::{Run, add_run, combine, combine64};
    use crate::arch::CpuFeatures;
    use crate::arch::x86_64::Avx512Vbmi;
    use crate::bits::{BitAcc, field, payload_len, unzigzag, width, zigzag};

    /// Values per block at most.
    const BS: usize = 4096;

    /// xorshift64.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn coin(&mut self) -> bool {
            self.next() & 1 == 0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn fill(&mut self, b: &mut [u8]) {
            for x in b {
                *x = self.next() as u8;
            }
        }
    }

    /// The scalar reference of the combines: `zigzag(Σ ±unzigzag(field))` of fields `0..len`
    /// of each `(payload, width, negate)` into `u`; the OR of the values.
    fn reference(ins: &[(&[u8], u8, bool)], u: &mut [u64]) -> u64 {
        let mut any = 0;
        for (i, slot) in u.iter_mut().enumerate() {
            let mut d = 0i64;
            for &(p, w, neg) in ins {
                let v = if w == 0 {
                    0
                } else {
                    unzigzag(field(p, i, u32::from(w)))
                };
                d = if neg {
                    d.wrapping_sub(v)
                } else {
                    d.wrapping_add(v)
                };
            }
            *slot = zigzag(d);
            any |= *slot;
        }
        any
    }

    /// [`combine`] and [`combine64`] against [`reference`] on random payloads: every width
    /// their lanes take, lengths around the 16- and 8-value steps, payloads exactly as long as
    /// the fields (the last windows at the slice's end) or longer.
    ///
    /// On a CPU without AVX-512 VBMI this returns at once (the core links no standard library
    /// even in its tests; `tests/tests/szp_ops.rs` prints the skip).
    #[test]
    fn combines_match_the_scalar_reference() {
        let Some(t) = Avx512Vbmi::new(CpuFeatures::detect()) else {
            return;
        };
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut pa, mut pb) = ([0u8; BS * 7 + 16], [0u8; BS * 7 + 16]);
        let (mut want, mut got64, mut got32) = ([0u64; BS], [0u64; BS], [0u32; BS]);
        for round in 0..3000 {
            let len = match round % 3 {
                0 => rng.below(40),
                1 => rng.below(300),
                _ => rng.below(BS + 1),
            };
            let wide = round % 2 == 1;
            let top = if wide { 57 } else { 25 };
            let (wa, wb) = (rng.below(top) as u8, rng.below(top) as u8);
            let slack = if rng.coin() { 0 } else { 1 + rng.below(15) };
            let (la, lb) = (payload_len(wa, len) + slack, payload_len(wb, len));
            rng.fill(&mut pa[..la]);
            rng.fill(&mut pb[..lb]);
            let (na, nb) = (rng.coin(), rng.coin());
            let two = [(&pa[..la], wa, na), (&pb[..lb], wb, nb)];
            let ins = if rng.below(3) == 0 {
                &two[..1]
            } else {
                &two[..]
            };
            let any = reference(ins, &mut want[..len]);
            let ctx = (round, len, wa, wb, na, nb, ins.len());
            if wide {
                let got = combine64(t, ins, len, &mut got64[..len]);
                assert_eq!(got, Some(any), "{ctx:?}");
                assert_eq!(got64[..len], want[..len], "{ctx:?}");
            } else {
                let got = combine(t, ins, len, &mut got32[..len]);
                assert_eq!(got.map(u64::from), Some(any), "{ctx:?}");
                let same = got32[..len].iter().zip(&want[..len]);
                assert!(same.clone().all(|(&g, &w)| u64::from(g) == w), "{ctx:?}");
            }
        }
    }

    /// [`add_run`] against the reference block by block: per block, the combine, the width,
    /// the width byte and the payload packed LSB-first; the run stops at the first block with
    /// an input or result width above 24 or whose payload does not fit the output, and (the
    /// unrolled sizes 32, 64, 128) at a short last block. Same bytes, same stop, same offsets.
    #[test]
    fn add_run_matches_the_scalar_reference() {
        let Some(t) = Avx512Vbmi::new(CpuFeatures::detect()) else {
            return;
        };
        const NB: usize = 300;
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let (mut pa, mut pb) = ([0u8; NB * 128 * 3 + 16], [0u8; NB * 128 * 3 + 16]);
        let (mut wa, mut wb) = ([0u8; NB], [0u8; NB]);
        let (mut got, mut want) = ([0u8; NB * 128 * 4], [0u8; NB * 128 * 4]);
        let mut z = [0u32; BS];
        let mut u = [0u64; 128];
        for round in 0..400 {
            let bs = [1, 7, 32, 64, 100, 128][rng.below(6)];
            let nb = 1 + rng.below(NB);
            let n = (nb - 1) * bs + 1 + rng.below(bs);
            // Mostly narrow widths, now and then one the run does not cover.
            let wide = rng.below(4) == 0;
            for w in wa[..nb].iter_mut().chain(wb[..nb].iter_mut()) {
                *w = if wide && rng.below(40) == 0 {
                    25
                } else {
                    rng.below(20) as u8
                };
            }
            let k = 1 + rng.below(2);
            let neg = [rng.coin(), rng.coin()];
            let bytes = |ws: &[u8]| -> usize {
                (0..nb)
                    .map(|b| payload_len(ws[b], (n - b * bs).min(bs)))
                    .sum()
            };
            let (la, lb) = (bytes(&wa[..nb]), bytes(&wb[..nb]));
            rng.fill(&mut pa[..la]);
            rng.fill(&mut pb[..lb]);
            let full = nb + la.max(lb) * 2 + 8;
            let cap = if rng.below(3) == 0 {
                nb + rng.below(full - nb)
            } else {
                full
            };
            got[..cap].fill(0xA5);
            want[..cap].fill(0xA5);
            let mut r = Run {
                widths: [&wa[..nb], &wb[..nb]],
                payload: [&pa[..la], &pb[..lb]],
                neg,
                off: [0, 0],
                k,
                n,
                bs,
                b: 0,
                end: nb,
                pos: nb,
                wpos: 0,
            };
            add_run(t, &mut r, &mut got[..cap], &mut z);
            // The reference, block by block.
            let (mut b, mut pos, mut off) = (0usize, nb, [0usize; 2]);
            while b < nb {
                let len = (n - b * bs).min(bs);
                if matches!(bs, 32 | 64 | 128) && len != bs {
                    break;
                }
                let ws = [wa[b], if k == 2 { wb[b] } else { 0 }];
                if ws.iter().any(|&w| w > 24) {
                    break;
                }
                let ins = [
                    (&pa[off[0]..la], ws[0], neg[0]),
                    (&pb[off[1]..lb], ws[1], neg[1] && k == 2),
                ];
                let w = width(reference(&ins[..k], &mut u[..len]));
                let cost = payload_len(w, len);
                if w > 24 || pos + cost > cap {
                    break;
                }
                want[b] = w;
                let mut acc = BitAcc::new(&mut want[pos..pos + cost]);
                for &v in &u[..len] {
                    acc.put(v, u32::from(w));
                }
                acc.finish();
                pos += cost;
                off[0] += payload_len(ws[0], len);
                off[1] += payload_len(ws[1], len);
                b += 1;
            }
            let ctx = (round, bs, nb, n, k, neg, cap);
            assert_eq!((r.b, r.pos, r.off), (b, pos, off), "{ctx:?}");
            assert!(got[..cap] == want[..cap], "{ctx:?}");
        }
    }
}
