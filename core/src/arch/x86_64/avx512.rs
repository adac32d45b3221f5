//! AVX-512 VBMI kernels (F, BW, VL, DQ, VBMI).
//!
//! A step handles 16 values = two 8-value groups = `2N` bytes. Every block is processed in
//! steps of 16 from its start; the block's last, partial step uses masked loads and stores
//! (which never touch memory outside their mask), so no kernel reads or writes outside the
//! block.
//!
//! * Decompression: a masked load of the `2N` bytes, `vpermb` gathers for each pair of values
//!   the 8 bytes containing both fields into one qword, `vpmultishiftqb` moves each field's top
//!   bit to bit 31 of its dword, and an arithmetic (signed) or logical shift right by `32−N`
//!   extracts it. N = 8 and 16 use sign/zero-extending loads instead.
//! * Compression: quantize 16 values (see the module docs of [`super`]), merge pairs of codes
//!   into qwords (`2N` bits), shift qword `j` left by `2jN mod 8` and gather the output bytes
//!   with one `vpermb` per possible contributor (one when `2N` is a multiple of 8, else up to 4),
//!   OR-ing them. N = 8 and 16 use truncating `vpmovdb`/`vpmovdw`, N = 1 a test-into-mask.

use super::tables::{Z512, Z512_TABLES};
use core::arch::x86_64::*;

/// Round to nearest, ties to even, exceptions suppressed (independent of MXCSR).
const RNE: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

/// Loop-invariant vectors of one compression call.
#[derive(Clone, Copy)]
struct Quant<V> {
    inv: V,
    lo: V,
    hi: V,
    mask: __m512i,
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn code_mask(n: u32) -> __m512i {
    _mm512_set1_epi32(((1u64 << n) - 1) as i32)
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn quantize_ps(q: &Quant<__m512>, x: __m512) -> __m512i {
    let s = _mm512_mul_ps(x, q.inv);
    // max(lo, s) / min(hi, ·) return their second operand (s) when it is NaN, so NaN survives
    // to the conversion, which turns it into 0x8000_0000: low N bits 0, the fallback's code.
    let c = _mm512_min_ps(q.hi, _mm512_max_ps(q.lo, s));
    _mm512_and_si512(_mm512_cvt_roundps_epi32::<RNE>(c), q.mask)
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn quantize_pd(q: &Quant<__m512d>, a: __m512d, b: __m512d) -> __m512i {
    let ca = _mm512_min_pd(q.hi, _mm512_max_pd(q.lo, _mm512_mul_pd(a, q.inv)));
    let cb = _mm512_min_pd(q.hi, _mm512_max_pd(q.lo, _mm512_mul_pd(b, q.inv)));
    let ia = _mm512_cvt_roundpd_epi32::<RNE>(ca);
    let ib = _mm512_cvt_roundpd_epi32::<RNE>(cb);
    let v = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(ia), ib);
    _mm512_and_si512(v, q.mask)
}

/// Packs 16 codes (low N bits each) into the low `2N` bytes of the result (general widths).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn pack16<const PERMS: usize, const SHIFT: bool>(
    t: &Z512,
    shift: __m512i,
    idx: &[__m512i; 4],
    n: __m128i,
    q: __m512i,
) -> __m512i {
    // qword j = code 2j | code (2j+1) << N
    let odd = _mm512_sll_epi64(_mm512_srli_epi64::<32>(q), n);
    let lo32 = _mm512_set1_epi64(0xFFFF_FFFF);
    let mut w = _mm512_ternarylogic_epi64::<0xEA>(q, lo32, odd);
    if SHIFT {
        w = _mm512_sllv_epi64(w, shift);
    }
    let mut out = _mm512_permutexvar_epi8(idx[0], w);
    let mut p = 1;
    while p < PERMS {
        let m = t.cmp_mask.get(p).copied().unwrap_or(0);
        let i = idx.get(p).copied().unwrap_or(idx[0]);
        out = _mm512_or_si512(out, _mm512_maskz_permutexvar_epi8(m, i, w));
        p += 1;
    }
    out
}

/// Compresses whole blocks of f32.
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL, DQ and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(super) unsafe fn compress_f32(n: u32, bs: usize, input: &[f32], inv: f32, output: &mut [u8]) {
    let (lo, hi) = crate::pernix::scalar::code_range(n);
    let q = Quant {
        inv: _mm512_set1_ps(inv),
        lo: _mm512_set1_ps(lo as f32),
        hi: _mm512_set1_ps(hi as f32),
        mask: code_mask(n),
    };
    let load = |x: &[f32], k: usize, r: usize| -> __m512i {
        let p = x.as_ptr().wrapping_add(16 * k);
        let x = if r >= 16 {
            // SAFETY: the caller (`compress_blocks`) passes r = values left from 16k, so the
            // 16 floats at 16k are inside `x`.
            unsafe { _mm512_loadu_ps(p) }
        } else {
            // SAFETY: only the first r < 16 lanes are read and they are inside `x`; masked-off
            // lanes are not accessed (AVX-512 fault suppression).
            unsafe { _mm512_maskz_loadu_ps(((1u32 << r) - 1) as u16, p) }
        };
        quantize_ps(&q, x)
    };
    compress_blocks(n, bs, input, output, load);
}

/// Compresses whole blocks of f64.
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL, DQ and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(super) unsafe fn compress_f64(n: u32, bs: usize, input: &[f64], inv: f64, output: &mut [u8]) {
    let (lo, hi) = crate::pernix::scalar::code_range(n);
    let q = Quant {
        inv: _mm512_set1_pd(inv),
        lo: _mm512_set1_pd(f64::from(lo)),
        hi: _mm512_set1_pd(f64::from(hi)),
        mask: code_mask(n),
    };
    let load = |x: &[f64], k: usize, r: usize| -> __m512i {
        let p = x.as_ptr().wrapping_add(16 * k);
        let (a, b) = if r >= 16 {
            // SAFETY: r = values left from 16k ≥ 16, so 16 doubles at 16k are inside `x`.
            unsafe { (_mm512_loadu_pd(p), _mm512_loadu_pd(p.wrapping_add(8))) }
        } else {
            let ma = ((1u32 << r.min(8)) - 1) as u8;
            let mb = ((1u32 << r.saturating_sub(8)) - 1) as u8;
            // SAFETY: only lanes below r (inside `x`) are enabled in the masks; masked-off lanes
            // are not accessed.
            unsafe {
                (
                    _mm512_maskz_loadu_pd(ma, p),
                    _mm512_maskz_loadu_pd(mb, p.wrapping_add(8)),
                )
            }
        };
        quantize_pd(&q, a, b)
    };
    compress_blocks(n, bs, input, output, load);
}

/// The block loop of compression; `load(block, k, r)` returns the 16 codes of step `k` of a
/// block with `r` values left from `16k` (lanes ≥ r are code 0).
#[inline(always)]
fn compress_blocks<T>(
    n: u32,
    bs: usize,
    input: &[T],
    output: &mut [u8],
    load: impl Fn(&[T], usize, usize) -> __m512i,
) {
    let nu = n as usize;
    let epb = bs * 8 / nu;
    let used = (epb * nu).div_ceil(8);
    let Some(t) = Z512_TABLES.get(nu) else {
        return;
    };
    for (bin, bout) in input.chunks_exact(epb).zip(output.chunks_exact_mut(bs)) {
        // SAFETY: this function is only inlined into the `#[target_feature]` kernels above.
        unsafe { compress_block(t, nu, epb, bin, bout, &load) };
        if let Some(rest) = bout.get_mut(used..) {
            rest.fill(0);
        }
    }
}

/// One block: every step but the last writes exactly `2N` bytes at `2N·k`, the last
/// `ceil(r·N/8)` bytes; bytes past `used` are left to the caller.
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL, DQ and VBMI; `bin.len() == epb`, `bout.len() ==
/// bs >= ceil(epb·N/8)`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
unsafe fn compress_block<T>(
    t: &Z512,
    n: usize,
    epb: usize,
    bin: &[T],
    bout: &mut [u8],
    load: &impl Fn(&[T], usize, usize) -> __m512i,
) {
    let steps = epb.div_ceil(16);
    let dst = bout.as_mut_ptr();
    let full_mask = (1u64 << (2 * n)) - 1;
    let byte_mask = |k: usize| {
        let r = epb - 16 * k;
        if r >= 16 {
            full_mask
        } else {
            (1u64 << (r * n).div_ceil(8)) - 1
        }
    };
    match n {
        1 => {
            for k in 0..steps {
                let codes = load(bin, k, epb - 16 * k);
                let bits = _mm512_test_epi32_mask(codes, codes).to_le_bytes();
                let out =
                    _mm512_castsi128_si512(_mm_cvtsi32_si128(i32::from(u16::from_le_bytes(bits))));
                // SAFETY: the mask covers bytes [2k, 2k + ceil(r/8)), inside the block's used
                // bytes (`ceil(epb/8) <= bs`); other bytes are not accessed.
                unsafe {
                    _mm512_mask_storeu_epi8(dst.wrapping_add(2 * k).cast(), byte_mask(k), out)
                };
            }
        }
        8 => {
            for k in 0..steps {
                let out = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(load(bin, k, epb - 16 * k)));
                // SAFETY: as above, the mask covers only this step's bytes inside the block.
                unsafe {
                    _mm512_mask_storeu_epi8(dst.wrapping_add(16 * k).cast(), byte_mask(k), out)
                };
            }
        }
        16 => {
            for k in 0..steps {
                let out = _mm512_castsi256_si512(_mm512_cvtepi32_epi16(load(bin, k, epb - 16 * k)));
                // SAFETY: as above, the mask covers only this step's bytes inside the block.
                unsafe {
                    _mm512_mask_storeu_epi8(dst.wrapping_add(32 * k).cast(), byte_mask(k), out)
                };
            }
        }
        _ => {
            // SAFETY: the tables are plain byte arrays of 64 bytes; unaligned loads.
            let (shift, idx) = unsafe {
                (
                    _mm512_loadu_si512(t.cmp_shift.as_ptr().cast()),
                    [
                        _mm512_loadu_si512(t.cmp_idx[0].as_ptr().cast()),
                        _mm512_loadu_si512(t.cmp_idx[1].as_ptr().cast()),
                        _mm512_loadu_si512(t.cmp_idx[2].as_ptr().cast()),
                        _mm512_loadu_si512(t.cmp_idx[3].as_ptr().cast()),
                    ],
                )
            };
            let cnt = _mm_cvtsi32_si128(n as i32);
            let aligned = (2 * n).is_multiple_of(8);
            for k in 0..steps {
                let codes = load(bin, k, epb - 16 * k);
                let out = match (t.cmp_perms, aligned) {
                    (_, true) => pack16::<1, false>(t, shift, &idx, cnt, codes),
                    (2, _) => pack16::<2, true>(t, shift, &idx, cnt, codes),
                    (3, _) => pack16::<3, true>(t, shift, &idx, cnt, codes),
                    _ => pack16::<4, true>(t, shift, &idx, cnt, codes),
                };
                // SAFETY: the mask covers bytes [2Nk, 2Nk + min(2N, ceil(rN/8))), inside the
                // block's used bytes; other bytes are not accessed.
                unsafe {
                    _mm512_mask_storeu_epi8(dst.wrapping_add(2 * n * k).cast(), byte_mask(k), out)
                };
            }
        }
    }
}

/// Decompresses whole blocks into f32.
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL, DQ and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(super) unsafe fn decompress_f32(
    n: u32,
    bs: usize,
    input: &[u8],
    scale: f32,
    output: &mut [f32],
    signed: bool,
) {
    let sc = _mm512_set1_ps(scale);
    let store = |o: &mut [f32], k: usize, r: usize, v: __m512i| {
        let f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), sc);
        let p = o.as_mut_ptr().wrapping_add(16 * k);
        if r >= 16 {
            // SAFETY: r = values left from 16k ≥ 16, so 16 floats at 16k are inside `o`.
            unsafe { _mm512_storeu_ps(p, f) }
        } else {
            // SAFETY: only the first r lanes (inside `o`) are written.
            unsafe { _mm512_mask_storeu_ps(p, ((1u32 << r) - 1) as u16, f) }
        }
    };
    decompress_blocks(n, bs, input, output, signed, store);
}

/// Decompresses whole blocks into f64.
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL, DQ and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(super) unsafe fn decompress_f64(
    n: u32,
    bs: usize,
    input: &[u8],
    scale: f64,
    output: &mut [f64],
    signed: bool,
) {
    let sc = _mm512_set1_pd(scale);
    let store = |o: &mut [f64], k: usize, r: usize, v: __m512i| {
        let a = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(v)), sc);
        let b = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64::<1>(v)), sc);
        let p = o.as_mut_ptr().wrapping_add(16 * k);
        if r >= 16 {
            // SAFETY: r ≥ 16 values are left from 16k, so 16 doubles at 16k are inside `o`.
            unsafe {
                _mm512_storeu_pd(p, a);
                _mm512_storeu_pd(p.wrapping_add(8), b);
            }
        } else {
            let ma = ((1u32 << r.min(8)) - 1) as u8;
            let mb = ((1u32 << r.saturating_sub(8)) - 1) as u8;
            // SAFETY: only lanes below r (inside `o`) are written.
            unsafe {
                _mm512_mask_storeu_pd(p, ma, a);
                _mm512_mask_storeu_pd(p.wrapping_add(8), mb, b);
            }
        }
    };
    decompress_blocks(n, bs, input, output, signed, store);
}

/// The block loop of decompression; `store(block, k, r, fields)` converts and writes the 16
/// fields of step `k` (`r` values left from `16k`; only the first `min(r, 16)` are written).
#[inline(always)]
fn decompress_blocks<T>(
    n: u32,
    bs: usize,
    input: &[u8],
    output: &mut [T],
    signed: bool,
    store: impl Fn(&mut [T], usize, usize, __m512i),
) {
    let nu = n as usize;
    let epb = bs * 8 / nu;
    let Some(t) = Z512_TABLES.get(nu) else {
        return;
    };
    for (bin, bout) in input.chunks_exact(bs).zip(output.chunks_exact_mut(epb)) {
        // SAFETY: this function is only inlined into the `#[target_feature]` kernels above.
        unsafe { decompress_block(t, nu, epb, bin, bout, signed, &store) };
    }
}

/// One block of decompression.
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL, DQ and VBMI; `bin.len() == bs >= ceil(epb·N/8)`,
/// `bout.len() == epb`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
unsafe fn decompress_block<T>(
    t: &Z512,
    n: usize,
    epb: usize,
    bin: &[u8],
    bout: &mut [T],
    signed: bool,
    store: &impl Fn(&mut [T], usize, usize, __m512i),
) {
    let steps = epb.div_ceil(16);
    let src = bin.as_ptr();
    let full_mask = (1u64 << (2 * n)) - 1;
    let byte_mask = |k: usize| {
        let r = epb - 16 * k;
        if r >= 16 {
            full_mask
        } else {
            (1u64 << (r * n).div_ceil(8)) - 1
        }
    };
    match (n, signed) {
        (8, _) => {
            for k in 0..steps {
                // SAFETY: the mask covers only this step's bytes [16k, 16k + min(16, r)),
                // inside the block.
                let b = unsafe {
                    _mm_maskz_loadu_epi8(byte_mask(k) as u16, src.wrapping_add(16 * k).cast())
                };
                let v = if signed {
                    _mm512_cvtepi8_epi32(b)
                } else {
                    _mm512_cvtepu8_epi32(b)
                };
                store(bout, k, epb - 16 * k, v);
            }
        }
        (16, _) => {
            for k in 0..steps {
                // SAFETY: the mask covers only this step's bytes, inside the block.
                let b = unsafe {
                    _mm256_maskz_loadu_epi8(byte_mask(k) as u32, src.wrapping_add(32 * k).cast())
                };
                let v = if signed {
                    _mm512_cvtepi16_epi32(b)
                } else {
                    _mm512_cvtepu16_epi32(b)
                };
                store(bout, k, epb - 16 * k, v);
            }
        }
        _ => {
            // SAFETY: the tables are plain 64-byte arrays; unaligned loads.
            let (idx, ctrl) = unsafe {
                (
                    _mm512_loadu_si512(t.dec_idx.as_ptr().cast()),
                    _mm512_loadu_si512(t.dec_ctrl.as_ptr().cast()),
                )
            };
            let cnt = _mm_cvtsi32_si128(32 - n as i32);
            for k in 0..steps {
                // SAFETY: the mask covers bytes [2Nk, 2Nk + min(2N, ceil(rN/8))), inside the
                // block's used bytes; masked-off bytes are not accessed.
                let b = unsafe {
                    _mm512_maskz_loadu_epi8(byte_mask(k), src.wrapping_add(2 * n * k).cast())
                };
                let m = _mm512_multishift_epi64_epi8(ctrl, _mm512_permutexvar_epi8(idx, b));
                let v = if signed {
                    _mm512_sra_epi32(m, cnt)
                } else {
                    _mm512_srl_epi32(m, cnt)
                };
                store(bout, k, epb - 16 * k, v);
            }
        }
    }
}
