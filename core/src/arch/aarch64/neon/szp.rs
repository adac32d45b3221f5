//! SZp on aarch64: the NEON path ([`crate::szp::Path::Neon`]).
//!
//! Same structure as the portable block kernels of `crate::szp::simd` (which LLVM also
//! vectorizes for NEON, the aarch64 baseline), with the data-parallel passes written with NEON
//! intrinsics, two f64 lanes at a time:
//!
//! * statistics (min, max, non-finite check) for the plan;
//! * quantization by reciprocal multiply (`fmul`, `fabs`, `fcvtzu`, `ucvtf`, round half away
//!   with a saturating `uqadd`, sign by `bsl`) with the same near-tie detection as the
//!   portable kernel — a block with a possible near-tie is recomputed with the exact division
//!   ([`blocks::quantize`]), so the levels always equal the specification's;
//! * delta (`ext` + `sub`), zigzag (`shl`/`sshr`/`eor`) and the OR-reduction giving the width;
//! * decoding's scale pass (`scvtf`, two `fmul` in the reference's order, `fcvtn` for f32).
//!
//! Packing, unpacking and the prefix sum are sequential bit-stream work and stay scalar
//! (64-bit accumulator, one unaligned 8-byte load per value). Plan resolution, header and
//! archive parsing are the shared [`blocks`] functions. Every result equals the scalar path's
//! bytes and decoded bits (tested in `tests/tests/szp_paths.rs`).

use crate::arch::CpuFeatures;
use crate::szp::blocks::{self, block_payload_len, parse, reconstruct, write_header};
use crate::szp::{Config, Error, HEADER_LEN, MAX_BLOCK_SIZE, SzpFloat};
use core::any::TypeId;
use core::arch::aarch64::*;

const BUF: usize = MAX_BLOCK_SIZE as usize;

/// [`crate::szp::compress`] on the NEON path (the portable kernels if NEON were missing).
pub(crate) fn compress<T: SzpFloat>(
    input: &[T],
    cfg: &Config,
    out: &mut [u8],
) -> Result<usize, Error> {
    if CpuFeatures::detect().neon() {
        // SAFETY: NEON was detected (it is architectural on aarch64).
        unsafe { compress_neon(input, cfg, out) }
    } else {
        crate::szp::compress_portable(input, cfg, out)
    }
}

/// [`crate::szp::decompress`] on the NEON path.
pub(crate) fn decompress<T: SzpFloat>(archive: &[u8], out: &mut [T]) -> Result<usize, Error> {
    if CpuFeatures::detect().neon() {
        // SAFETY: NEON was detected (it is architectural on aarch64).
        unsafe { decompress_neon(archive, out) }
    } else {
        crate::szp::decompress_portable(archive, out)
    }
}

/// Two consecutive values as f64 lanes.
#[inline]
#[target_feature(enable = "neon")]
fn load2<T: SzpFloat>(x: &[T; 2]) -> float64x2_t {
    if TypeId::of::<T>() == TypeId::of::<f64>() {
        let p = x.as_ptr().cast::<f64>();
        // SAFETY: `T` is f64, so `x` is 2 doubles (16 bytes).
        unsafe { vld1q_f64(p) }
    } else if TypeId::of::<T>() == TypeId::of::<f32>() {
        let p = x.as_ptr().cast::<f32>();
        // SAFETY: `T` is f32, so `x` is 2 floats (8 bytes).
        vcvt_f64_f32(unsafe { vld1_f32(p) })
    } else {
        let v = [x[0].to_f64(), x[1].to_f64()];
        // SAFETY: `v` is 2 doubles.
        unsafe { vld1q_f64(v.as_ptr()) }
    }
}

/// [`blocks::plan`] with a NEON statistics pass; any irregularity (non-finite value,
/// configured `max_abs`, level overflow) is handed to [`blocks::plan`], which reports the first
/// offending index. Otherwise the plan is the same value (same min, max and max |x|).
#[inline]
#[target_feature(enable = "neon")]
fn fast_plan<T: SzpFloat>(input: &[T], cfg: &Config) -> Result<blocks::Plan, Error> {
    blocks::check_config(cfg)?;
    if cfg.max_abs.is_some() || input.is_empty() {
        return blocks::plan(input, cfg);
    }
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
    if bad {
        return blocks::plan(input, cfg);
    }
    let mag = l.abs().max(h.abs());
    let plan = blocks::resolve(T::DTYPE, cfg, input.len(), h - l, mag)?;
    if mag / (2.0 * plan.quant_eb) >= 4_611_686_018_427_387_904.0 {
        return blocks::plan(input, cfg);
    }
    Ok(plan)
}

/// Levels of one block into `q` (exactly the specification's, see the module docs), then
/// delta + zigzag into `u`; returns the OR of all of `u` (its bit length is the width).
#[inline]
#[target_feature(enable = "neon")]
fn quantize_block<T: SzpFloat>(eb: f64, block: &[T], q: &mut [i64], u: &mut [u64]) -> u64 {
    const REL: f64 = 3.552_713_678_800_501e-15; // 2^-48
    let r = vdupq_n_f64(1.0 / (2.0 * eb));
    let half = vdupq_n_f64(0.5);
    let rel = vdupq_n_f64(REL);
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
        let y = x.to_f64() * (1.0 / (2.0 * eb));
        let a = y.abs();
        let i = a as u64;
        let frac = a - i as f64;
        near_tie |= (frac - 0.5).abs() <= a * REL;
        let m = i.saturating_add(u64::from(frac >= 0.5)) as i64;
        *qi = if y < 0.0 { m.wrapping_neg() } else { m };
    }
    if near_tie {
        for (qi, &x) in q.iter_mut().zip(block) {
            *qi = blocks::quantize(x, eb);
        }
    }
    // Delta + zigzag + OR, two lanes at a time; `prev` holds the level before the pair in
    // lane 1.
    let mut any = vdupq_n_u64(0);
    let mut prev = vdupq_n_s64(0);
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
        let d = qi.wrapping_sub(last);
        let z = ((d << 1) ^ (d >> 63)) as u64;
        *ui = z;
        acc |= z;
        last = qi;
    }
    acc
}

/// The strict check: the first index whose reconstruction misses `bound`, if any.
fn first_violation<T: SzpFloat>(eb: f64, bound: f64, block: &[T], q: &[i64]) -> Option<usize> {
    block.iter().zip(q).position(|(&x, &qi)| {
        let err = (x.to_f64() - reconstruct::<T>(qi, eb).to_f64()).abs();
        err.is_nan() || err > bound
    })
}

/// LSB-first packing of `u` (each `< 2^w`, `1 <= w <= 64`) into exactly `out`
/// (`ceil(len·w/8)` bytes), pad bits 0, through a 64-bit accumulator.
fn pack(u: &[u64], w: u32, out: &mut [u8]) {
    if w == 0 {
        return;
    }
    let (mut acc, mut fill, mut pos) = (0u64, 0u32, 0usize);
    for &v in u {
        acc |= if fill == 64 { 0 } else { v << fill };
        let nf = fill + w;
        if nf >= 64 {
            if let Some(dst) = out.get_mut(pos..pos + 8) {
                dst.copy_from_slice(&acc.to_le_bytes());
            }
            pos += 8;
            acc = if fill == 0 { 0 } else { v >> (64 - fill) };
            fill = nf - 64;
        } else {
            fill = nf;
        }
    }
    let tail = fill.div_ceil(8) as usize;
    if let Some(dst) = out.get_mut(pos..pos + tail) {
        dst.copy_from_slice(&acc.to_le_bytes()[..tail]);
    }
}

/// NEON build of the compressor.
///
/// # Safety
/// The CPU must support NEON.
#[target_feature(enable = "neon")]
unsafe fn compress_neon<T: SzpFloat>(
    input: &[T],
    cfg: &Config,
    out: &mut [u8],
) -> Result<usize, Error> {
    let plan = fast_plan(input, cfg)?;
    let bs = plan.block_size as usize;
    let eb = plan.quant_eb;
    let start = plan.payload_offset();
    let mut q = [0i64; BUF];
    let mut u = [0u64; BUF];
    // Exact size first when `out` might be too small, so nothing is written on failure.
    let fits = crate::szp::max_compressed_len(input.len(), plan.block_size, T::DTYPE)
        .is_some_and(|m| out.len() >= m);
    if !fits {
        let mut total = start;
        for block in input.chunks(bs) {
            let len = block.len().min(BUF);
            let any = quantize_block(eb, block, &mut q[..len], &mut u[..len]);
            total += block_payload_len((64 - any.leading_zeros()) as u8, block.len());
        }
        if out.len() < total {
            return Err(Error::OutputTooSmall { needed: total });
        }
    }
    let Some((head, body)) = out.split_at_mut_checked(start) else {
        return Err(Error::OutputTooSmall { needed: start });
    };
    let Some((hdr, widths)) = head.split_at_mut_checked(HEADER_LEN) else {
        return Err(Error::OutputTooSmall { needed: start });
    };
    let mut pos = 0usize;
    for ((b, block), wslot) in input.chunks(bs).enumerate().zip(widths.iter_mut()) {
        let len = block.len().min(BUF);
        let (qb, ub) = (&mut q[..len], &mut u[..len]);
        let any = quantize_block(eb, block, qb, ub);
        if plan.strict
            && let Some(i) = first_violation(eb, plan.bound, block, qb)
        {
            return Err(Error::BoundViolated { index: b * bs + i });
        }
        let w = 64 - any.leading_zeros();
        let cost = block_payload_len(w as u8, len);
        let Some(dst) = body.get_mut(pos..pos + cost) else {
            return Err(Error::OutputTooSmall {
                needed: start + pos + cost,
            });
        };
        pack(ub, w, dst);
        *wslot = w as u8;
        pos += cost;
    }
    write_header(&plan, hdr)?;
    Ok(start + pos)
}

/// Unpack + unzigzag + prefix sum of one block into `q` (`payload` is exactly
/// `ceil(len·w/8)` bytes, `1 <= w <= 64`).
fn unpack_levels(payload: &[u8], w: u32, q: &mut [i64]) {
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let mut acc = 0i64;
    for (i, qi) in q.iter_mut().enumerate() {
        let bit = i * w as usize;
        let from = bit / 8;
        let v = if let Some(src) = payload.get(from..from + 8)
            && w <= 56
        {
            let mut b = [0u8; 8];
            b.copy_from_slice(src);
            (u64::from_le_bytes(b) >> (bit % 8)) & mask
        } else {
            let mut b = [0u8; 16];
            let take = payload.len().saturating_sub(from).min(9);
            if let Some(src) = payload.get(from..from + take) {
                b[..take].copy_from_slice(src);
            }
            ((u128::from_le_bytes(b) >> (bit % 8)) as u64) & mask
        };
        acc = acc.wrapping_add(((v >> 1) as i64) ^ -((v & 1) as i64));
        *qi = acc;
    }
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
        if TypeId::of::<T>() == TypeId::of::<f64>() {
            // SAFETY: `T` is f64, so `o` is 2 doubles (16 bytes).
            unsafe { vst1q_f64(o.as_mut_ptr().cast::<f64>(), v) };
        } else if TypeId::of::<T>() == TypeId::of::<f32>() {
            // SAFETY: `T` is f32, so `o` is 2 floats (8 bytes).
            unsafe { vst1_f32(o.as_mut_ptr().cast::<f32>(), vcvt_f32_f64(v)) };
        } else {
            o[0] = reconstruct(qs[0], eb);
            o[1] = reconstruct(qs[1], eb);
        }
    }
    for (o, &qi) in orest.iter_mut().zip(qrest) {
        *o = reconstruct(qi, eb);
    }
}

/// NEON build of the decompressor.
///
/// # Safety
/// The CPU must support NEON.
#[target_feature(enable = "neon")]
unsafe fn decompress_neon<T: SzpFloat>(archive: &[u8], out: &mut [T]) -> Result<usize, Error> {
    let view = parse(archive)?;
    if view.header.dtype != T::DTYPE {
        return Err(Error::DTypeMismatch);
    }
    let out = out
        .get_mut(..view.n)
        .ok_or(Error::OutputTooSmall { needed: view.n })?;
    let bs = view.header.block_size as usize;
    let eb = view.header.quant_eb;
    let mut q = [0i64; BUF];
    let mut pos = 0usize;
    for (&w, block) in view.widths.iter().zip(out.chunks_mut(bs)) {
        let len = block.len();
        let cost = block_payload_len(w, len);
        let src = view.payload.get(pos..pos + cost).ok_or(Error::Truncated)?;
        pos += cost;
        if w == 0 {
            block.fill(reconstruct(0, eb));
            continue;
        }
        let qb = &mut q[..len.min(BUF)];
        unpack_levels(src, u32::from(w), qb);
        scale_block(qb, eb, block);
    }
    Ok(view.n)
}
