//! SZp on aarch64: the NEON leaf (the `Neon` path; token [`Neon`]).
//!
//! Same structure as the portable block kernels of `crate::arch::generic::szp` (which LLVM also
//! vectorizes for NEON, the aarch64 baseline), with the data-parallel passes written with NEON
//! intrinsics, two f64 lanes at a time:
//!
//! * statistics (min, max, non-finite check) for the plan;
//! * quantization by reciprocal multiply (`fmul`, `fabs`, `fcvtzu`, `ucvtf`, round half away
//!   with a saturating `uqadd`, sign by `bsl`) with the same near-tie detection as the
//!   portable kernel — a block with a possible near-tie is recomputed with the exact division
//!   (`bits::quantize`), so the levels always equal the specification's;
//! * delta (`ext` + `sub`), zigzag (`shl`/`sshr`/`eor`) and the OR-reduction giving the width;
//! * decoding's scale pass (`scvtf`, two `fmul` in the reference's order, `fcvtn` for f32).
//!
//! Packing, unpacking and the prefix sum are sequential bit-stream work and use the portable
//! kernels (merged words through a 64-bit accumulator; one unaligned 8-byte load per value).
//! Plan, layout and archive parsing belong to the driver. Every result equals the scalar path's
//! bytes and decoded bits (tested in `tests/tests/szp_paths.rs`).

use crate::arch::aarch64::Neon;
use crate::arch::generic::szp::{
    Buffers, NEAR_TIE, decode_with, encode_with, fast_level, portable_kernel_items, width_with,
};
use crate::arch::szp::{BUF, BlockError, Quant, Stats, SzpKernel, block_methods, target_runs};
use crate::bits::{self, reconstruct};
use crate::types::SzpFloat;
use crate::types::sealed::{Floats, FloatsMut};
use core::arch::aarch64::*;

/// Two consecutive values as f64 lanes.
#[inline]
#[target_feature(enable = "neon")]
fn load2<T: SzpFloat>(x: &[T; 2]) -> float64x2_t {
    match T::floats(x) {
        // SAFETY: `x` is 2 doubles (16 bytes).
        Floats::F64(d) => unsafe { vld1q_f64(d.as_ptr()) },
        // SAFETY: `x` is 2 floats (8 bytes).
        Floats::F32(f) => vcvt_f64_f32(unsafe { vld1_f32(f.as_ptr()) }),
    }
}

/// Min, max and the non-finite flag, two lanes at a time.
#[inline]
#[target_feature(enable = "neon")]
fn stats<T: SzpFloat>(input: &[T]) -> Stats {
    let mut lo = vdupq_n_f64(f64::INFINITY);
    let mut hi = vdupq_n_f64(f64::NEG_INFINITY);
    let max = vdupq_n_f64(f64::MAX);
    // All-ones while every |v| <= MAX (false for NaN and ±inf).
    let mut ok = vdupq_n_u64(u64::MAX);
    let (pairs, rest) = input.as_chunks::<2>();
    for p in pairs {
        let v = load2(p);
        lo = vminq_f64(lo, v);
        hi = vmaxq_f64(hi, v);
        ok = vandq_u64(ok, vcleq_f64(vabsq_f64(v), max));
    }
    let (mut l, mut h) = (vminvq_f64(lo), vmaxvq_f64(hi));
    let mut bad = vminvq_u32(vreinterpretq_u32_u64(ok)) != u32::MAX;
    for x in rest {
        let v = x.to_f64();
        l = l.min(v);
        h = h.max(v);
        bad |= v.is_nan() || v.abs() > f64::MAX;
    }
    Stats { lo: l, hi: h, bad }
}

/// Levels of one block into `q` (exactly the specification's, see the module docs), then
/// delta + zigzag into `u`; returns the OR of all of `u` (its bit length is the width).
#[inline]
#[target_feature(enable = "neon")]
fn quantize_block<T: SzpFloat>(
    eb: f64,
    seed: i64,
    block: &[T],
    q: &mut [i64],
    u: &mut [u64],
) -> u64 {
    let r = vdupq_n_f64(1.0 / (2.0 * eb));
    let half = vdupq_n_f64(0.5);
    let rel = vdupq_n_f64(NEAR_TIE);
    let one = vdupq_n_u64(1);
    let mut near = vdupq_n_u64(0);
    let (qp, qrest) = q.as_chunks_mut::<2>();
    let (xp, xrest) = block.as_chunks::<2>();
    for (qd, x) in qp.iter_mut().zip(xp) {
        let y = vmulq_f64(load2(x), r);
        let a = vabsq_f64(y);
        let i = vcvtq_u64_f64(a);
        let frac = vsubq_f64(a, vcvtq_f64_u64(i));
        near = vorrq_u64(
            near,
            vcleq_f64(vabsq_f64(vsubq_f64(frac, half)), vmulq_f64(a, rel)),
        );
        let m = vreinterpretq_s64_u64(vqaddq_u64(i, vandq_u64(vcgeq_f64(frac, half), one)));
        let l = vbslq_s64(vcltzq_f64(y), vnegq_s64(m), m);
        // SAFETY: `qd` is 2 i64 (16 bytes).
        unsafe { vst1q_s64(qd.as_mut_ptr(), l) };
    }
    let mut near_tie = vmaxvq_u32(vreinterpretq_u32_u64(near)) != 0;
    // The odd last value (the same scalar arithmetic as the portable kernel).
    for (qi, &x) in qrest.iter_mut().zip(xrest) {
        let (l, near) = fast_level(x.to_f64() * (1.0 / (2.0 * eb)));
        near_tie |= near;
        *qi = l;
    }
    if near_tie {
        for (qi, &x) in q.iter_mut().zip(block) {
            *qi = bits::quantize(x, eb);
        }
    }
    // Delta + zigzag + OR, two lanes at a time; `prev` holds the level before the pair in
    // lane 1.
    let mut any = vdupq_n_u64(0);
    let mut prev = vdupq_n_s64(seed);
    let (qp, qrest) = q.as_chunks::<2>();
    let (up, urest) = u.as_chunks_mut::<2>();
    for (ud, qs) in up.iter_mut().zip(qp) {
        // SAFETY: `qs` is 2 i64 (16 bytes).
        let cur = unsafe { vld1q_s64(qs.as_ptr()) };
        let d = vsubq_s64(cur, vextq_s64::<1>(prev, cur));
        let z = vreinterpretq_u64_s64(veorq_s64(vshlq_n_s64::<1>(d), vshrq_n_s64::<63>(d)));
        any = vorrq_u64(any, z);
        // SAFETY: `ud` is 2 u64 (16 bytes).
        unsafe { vst1q_u64(ud.as_mut_ptr(), z) };
        prev = cur;
    }
    let mut acc = vgetq_lane_u64::<0>(any) | vgetq_lane_u64::<1>(any);
    let mut last = vgetq_lane_s64::<1>(prev);
    for (ui, &qi) in urest.iter_mut().zip(qrest) {
        let z = bits::zigzag(qi.wrapping_sub(last));
        *ui = z;
        acc |= z;
        last = qi;
    }
    acc
}

/// `reconstruct(q, eb)` for every level: `T::from_f64(q as f64 · 2 · eb)`, two lanes at a
/// time (`scvtf`, `fmul`, `fmul`, then `fcvtn` for f32 — the reference's operations in its
/// order).
#[inline]
#[target_feature(enable = "neon")]
fn scale_block<T: SzpFloat>(q: &[i64], eb: f64, out: &mut [T]) {
    let two = vdupq_n_f64(2.0);
    let ebv = vdupq_n_f64(eb);
    let (op, orest) = out.as_chunks_mut::<2>();
    let (qp, qrest) = q.as_chunks::<2>();
    for (o, qs) in op.iter_mut().zip(qp) {
        // SAFETY: `qs` is 2 i64 (16 bytes).
        let l = unsafe { vld1q_s64(qs.as_ptr()) };
        let v = vmulq_f64(vmulq_f64(vcvtq_f64_s64(l), two), ebv);
        match T::floats_mut(o) {
            // SAFETY: `o` is 2 doubles (16 bytes).
            FloatsMut::F64(d) => unsafe { vst1q_f64(d.as_mut_ptr(), v) },
            // SAFETY: `o` is 2 floats (8 bytes).
            FloatsMut::F32(f) => unsafe { vst1_f32(f.as_mut_ptr(), vcvt_f32_f64(v)) },
        }
    }
    for (o, &qi) in orest.iter_mut().zip(qrest) {
        *o = reconstruct(qi, eb);
    }
}

/// Encodes one block (see [`SzpKernel::encode`]).
#[inline]
#[target_feature(enable = "neon")]
fn encode<T: SzpFloat>(
    e: &Quant,
    block: &[T],
    seed: i64,
    dst: &mut [u8],
    s: &mut Buffers,
) -> Result<u8, BlockError> {
    encode_with(e, block, seed, dst, s, |eb, s0, x, q, u| {
        quantize_block(eb, s0, x, q, u)
    })
}

/// The width of one block (the sizing pass).
#[inline]
#[target_feature(enable = "neon")]
fn width<T: SzpFloat>(eb: f64, block: &[T], seed: i64, s: &mut Buffers) -> u8 {
    width_with(eb, block, seed, s, |eb, s0, x, q, u| {
        quantize_block(eb, s0, x, q, u)
    })
}

/// Decodes one block (see [`SzpKernel::decode`]): scalar unpack + prefix sum, NEON scale.
#[inline]
#[target_feature(enable = "neon")]
fn decode<T: SzpFloat>(eb: f64, w: u8, seed: i64, src: &[u8], out: &mut [T], q: &mut [i64; BUF]) {
    decode_with(eb, w, seed, src, out, q, |q, eb, out| {
        scale_block(q, eb, out)
    })
}

impl SzpKernel for Neon {
    portable_kernel_items!();
    target_runs!("neon");

    #[inline(always)]
    fn stats<T: SzpFloat>(self, x: &[T]) -> Stats {
        // SAFETY: the token proves NEON.
        unsafe { stats(x) }
    }
    block_methods! {
        // SAFETY: the token proves NEON.
        width: |e, block, seed, s| unsafe { width(e.eb, block, seed, s) },
        // SAFETY: the token proves NEON.
        encode: |e, block, seed, dst, s| unsafe { encode(e, block, seed, dst, s) },
        // SAFETY: the token proves NEON.
        decode: |eb, w, seed, src, out, s| unsafe { decode(eb, w, seed, src, out, &mut s.q) },
    }
}
