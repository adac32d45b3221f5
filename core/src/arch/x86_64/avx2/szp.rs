//! Hand-written AVX2 kernels of the SZp hot loops (the `Avx2` path; its token is [`Bmi2`],
//! AVX2 **and** BMI2, what this path has always required). Organised as the AVX-512 VBMI leaf
//! (`avx512/szp.rs`), with 8-value steps:
//!
//! * **Block scan** (compress): 8 values per step as two vectors of 4 f64 lanes: `y = x·r`
//!   (`r = 1/(2·eb)`), `s = y + 1.5·2⁵²` (round to nearest-even, exact: the scan only runs when
//!   `max|y| < 2²⁹`), whose low dwords are the levels `q = rne(y)` as i32 (one `vshufps`, then
//!   one `vpermd` puts them in order and one more rotates them by a lane for the delta
//!   against the previous step's last level, `vpblendd`), `s − 1.5·2⁵²` = `rne(y)` for the
//!   rounding fraction, zigzag, an OR-reduction for the width, the zigzagged values stored as
//!   u32 to a block buffer, and — for strict plans — the strict check, all branch-free.
//!   Where `strict_by_fraction` (`x86_64/szp.rs`) proves it (every strict plan at the usual
//!   bounds: the planner's tightened quantizer leaves the margin), the check is
//!   `|x| ≤ max_abs` (f32 elements: a running max of the magnitude bits, which NaN and
//!   infinities survive; f64: an unordered compare per lane) plus the block's largest rounding
//!   fraction against a proven threshold, and a flagged block gets the exact check; otherwise
//!   the loop reconstructs every lane, `|x − T(q·2eb)| ≤ bound` (an unordered compare, so NaN
//!   counts as a miss). Dropping the per-lane reconstruction made the AVX2 compress 6–20 %
//!   faster on Zen 1; the rounding constant instead of
//!   `vroundpd` + `vcvtpd2dq` and the magnitude bits 15 % more in cache on a Sapphire Rapids
//!   core.
//!   Round-half-even and the spec's round-half-away of the exact quotient can only disagree
//!   near a tie: a lane whose fractional part is within `2⁻⁴⁷·max|y|` of ½ flags its block,
//!   whose levels are then recomputed exactly (`quantize_block`), as in the VBMI leaf.
//! * **Pack** (widths 1..=24): 8 values of `w` bits are exactly `w` bytes; each group is
//!   assembled by the PERNIX AVX2 compressor's `assemble` (pairs merged in 64-bit lanes, two
//!   128-bit halves) and written by its `put_group` (in place, or through a stack buffer at the
//!   block's end). Wider blocks use the portable packer.
//! * **Decode** (widths 1..=24): the PERNIX AVX2 decompressor's field extraction (two 16-byte
//!   loads, `vpshufb`, `vpsllvd`, a shift right), unzigzag, an 8-lane inclusive prefix sum
//!   (two in-lane byte shifts and a cross-lane carry) plus the previous step's last level, and
//!   `T(q·2eb)` in f64 lanes. i32 prefix sums are exact when `len·2^(w−1) < 2³¹` (the VBMI
//!   decoder's condition); other blocks take the portable kernel.
//! * **Statistics**: min/max in f32 (or f64) lanes with four accumulators and a non-finite
//!   test on the exponent bits.
//!
//! Every operation is the same IEEE operation as in the scalar reference (see the VBMI leaf's
//! notes: `q·(2eb)` and `(q·2)·eb` are one rounding of the same exact product; `vcvtpd2ps`
//! rounds to nearest-even under the default MXCSR that Rust requires), so the bytes and the
//! decoded bits equal the reference's (`tests/szp_avx2.rs`, `szp_paths.rs`, `szp_kernels.rs`).

use core::arch::x86_64::*;

use super::pernix::{assemble, lane_mask, put_group, setup, unpack_at};
use crate::arch::szp::{BUF, Quant, Stats, SzpKernel};
use crate::arch::x86_64::szp::{
    Cheap, Enc, ScanResult, ScanScalars, Scratch, decodes, each_step, exact_on_tie, scan_encoder,
    scan_kernel_methods, seed_after_scan,
};
use crate::arch::x86_64::tables::Y256_TABLES;
use crate::arch::x86_64::{Bmi2, prefetch_in, prefetch_out};
use crate::bits::payload_len;
use crate::types::{BitWidth, DType, SzpFloat, with_width};

/// Loop invariants of one compression call (scalars: broadcast once per block).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scan {
    /// The quantizer bound `eb` (the exact levels' divisor).
    eb: f64,
    /// `1/(2·eb)`.
    r: f64,
    /// `2·eb` (exact).
    e2: f64,
    /// `½ − 2⁻⁴⁷·max|y|`: a lane is near a tie when `|y − rne(y)| >= far`.
    far: f64,
    /// The strict bound.
    bound: f64,
    /// Whether to check reconstructions.
    strict: bool,
    /// The cheap strict check, per element type.
    cheap: Cheap,
}

impl Scan {
    /// The invariants for quantizer bound `eb` and inputs with `|x| <= max_abs`, or `None`
    /// when the scan cannot prove its levels equal the spec's or fit i32: `1/(2·eb)` or `2·eb`
    /// not finite, or `max_abs/(2·eb) >= 2²⁹` (then levels, deltas and their zigzag fit i32).
    fn new(eb: f64, bound: f64, strict: bool, max_abs: f64) -> Option<Scan> {
        let p = ScanScalars::new(eb, max_abs, 536_870_912.0)?;
        Some(Scan {
            eb,
            r: p.r,
            e2: p.e2,
            far: p.far,
            bound,
            strict,
            cheap: Cheap::new(strict, eb, p.e2, bound, max_abs),
        })
    }
}

/// The masks of `vmaskmovpd` for the first `r < 8` of 8 f64 lanes held in two vectors.
#[inline]
#[target_feature(enable = "avx2,bmi2")]
fn lane_masks64(r: usize) -> (__m256i, __m256i) {
    // 64-bit lanes: lane i enabled iff dwords 2i, 2i+1 are.
    (
        lane_mask((2 * r).min(8)),
        lane_mask((2 * r).saturating_sub(8)),
    )
}

/// Widens 8 values at `p` (only `r` of them when `r < 8`; other lanes 0) to two f64 vectors,
/// and returns the loaded vector as it is (f32 elements: the 8 values; f64: the second half).
///
/// # Safety
/// `min(r, 8)` values of type `T` at `p` must be readable.
#[inline]
#[target_feature(enable = "avx2,bmi2")]
unsafe fn load8<T: SzpFloat>(p: *const T, r: usize) -> (__m256d, __m256d, __m256) {
    match T::DTYPE {
        DType::F32 => {
            let p = p.cast::<f32>();
            let x = if r >= 8 {
                // SAFETY: 8 readable f32 at `p` (caller); unaligned load.
                unsafe { _mm256_loadu_ps(p) }
            } else {
                // SAFETY: the first r lanes are readable (caller); masked-off lanes are not accessed.
                unsafe { _mm256_maskload_ps(p, lane_mask(r)) }
            };
            (
                _mm256_cvtps_pd(_mm256_castps256_ps128(x)),
                _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x)),
                x,
            )
        }
        DType::F64 => {
            let p = p.cast::<f64>();
            let (a, b) = if r >= 8 {
                // SAFETY: 8 readable f64 at `p` (caller); unaligned loads.
                unsafe { (_mm256_loadu_pd(p), _mm256_loadu_pd(p.wrapping_add(4))) }
            } else {
                let (ma, mb) = lane_masks64(r);
                // SAFETY: the first r lanes are readable (caller); masked-off lanes are not accessed.
                unsafe {
                    (
                        _mm256_maskload_pd(p, ma),
                        _mm256_maskload_pd(p.wrapping_add(4), mb),
                    )
                }
            };
            (a, b, _mm256_castpd_ps(b))
        }
    }
}

/// `T::from_f64(v).to_f64()` per lane (the rounding of the element type).
#[inline]
#[target_feature(enable = "avx2,bmi2")]
fn narrow<T: SzpFloat>(v: __m256d) -> __m256d {
    match T::DTYPE {
        DType::F32 => _mm256_cvtps_pd(_mm256_cvtpd_ps(v)),
        DType::F64 => v,
    }
}

/// `|v|` per lane.
#[inline]
#[target_feature(enable = "avx2,bmi2")]
fn abs_pd(v: __m256d) -> __m256d {
    _mm256_and_pd(v, _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX)))
}

/// OR of the 8 dwords of `v`.
#[inline]
#[target_feature(enable = "avx2,bmi2")]
fn reduce_or32(v: __m256i) -> u32 {
    let a = _mm_or_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
    let a = _mm_or_si128(a, _mm_shuffle_epi32::<0b01_00_11_10>(a));
    let a = _mm_or_si128(a, _mm_shuffle_epi32::<0b10_11_00_01>(a));
    _mm_cvtsi128_si32(a) as u32
}

/// Quantize + delta + zigzag + width (+ strict check) of one block with i32 levels; the
/// zigzagged deltas go to `u[..block.len()]` as u32. `seed` `None`: the deltas start from the
/// first lane's level (a block-head layout block), which is returned (the spec's head unless
/// the result is near a tie); otherwise `seed` is returned.
#[target_feature(enable = "avx2,bmi2")]
fn scan_block<T: SzpFloat>(
    s: &Scan,
    block: &[T],
    seed: Option<i32>,
    u: &mut [u32],
) -> (ScanResult, i32) {
    let len = block.len().min(u.len());
    let (x, up) = (block.as_ptr(), u.as_mut_ptr());
    let (r, e2, bound) = (
        _mm256_set1_pd(s.r),
        _mm256_set1_pd(s.e2),
        _mm256_set1_pd(s.bound),
    );
    // `y + 1.5·2⁵²` rounds y to an integer, ties to even (the default MXCSR, which Rust
    // requires), held in the low mantissa bits as two's complement (|y| < 2²⁹); subtracting the
    // constant again gives rne(y) exactly.
    let magic = _mm256_set1_pd(6_755_399_441_055_744.0); // 1.5·2^52
    // After `vshufps` of the two sums' low dwords (levels a0 a1 b0 b1 a2 a3 b2 b3): the levels
    // in order, and rotated by one lane.
    let order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    let rot = _mm256_setr_epi32(7, 0, 1, 4, 5, 2, 3, 6);
    // The previous step's levels rotated by one lane: lane 0 holds its last level (the seed
    // before the first step).
    let mut prev = _mm256_set1_epi32(seed.unwrap_or(0));
    let mut head = seed.unwrap_or(0);
    let mut any = _mm256_setzero_si256();
    let mut frac = _mm256_setzero_pd();
    let mut bad = _mm256_setzero_pd();
    // f32 elements under the cheap check: the largest |x| as bits (a signed max of
    // non-negative dwords; NaN and infinities survive it).
    let mut mag = _mm256_setzero_si256();
    let abs32 = _mm256_set1_epi32(i32::MAX);
    let cheap_t = s.cheap.of::<T>();
    let (cheap, full) = (cheap_t.is_some(), s.strict && cheap_t.is_none());
    let (safe, xmax) = cheap_t.unwrap_or((0.0, 0.0));
    let xmax = _mm256_set1_pd(xmax);
    each_step::<8>(len, |i, n| {
        prefetch_in(x.wrapping_add(i));
        // SAFETY: i < len <= block.len(), and load8 reads min(n, 8) values from i.
        let (xa, xb, raw) = unsafe { load8(x.wrapping_add(i), n) };
        let (ya, yb) = (_mm256_mul_pd(xa, r), _mm256_mul_pd(xb, r));
        let (sa, sb) = (_mm256_add_pd(ya, magic), _mm256_add_pd(yb, magic));
        let (fa, fb) = (_mm256_sub_pd(sa, magic), _mm256_sub_pd(sb, magic));
        // Lanes past the block hold x = 0: y, level, fraction and error are 0 there.
        frac = _mm256_max_pd(
            frac,
            _mm256_max_pd(abs_pd(_mm256_sub_pd(ya, fa)), abs_pd(_mm256_sub_pd(yb, fb))),
        );
        let lo = _mm256_castps_si256(_mm256_shuffle_ps::<0x88>(
            _mm256_castpd_ps(sa),
            _mm256_castpd_ps(sb),
        ));
        let q = _mm256_permutevar8x32_epi32(lo, order);
        let qr = _mm256_permutevar8x32_epi32(lo, rot);
        if i == 0 && seed.is_none() {
            // The block's own first level (lane 0 of `lo`): its delta is then 0.
            prev = _mm256_broadcastd_epi32(_mm256_castsi256_si128(lo));
            head = _mm256_cvtsi256_si32(lo);
        }
        let d = _mm256_sub_epi32(q, _mm256_blend_epi32::<1>(qr, prev));
        prev = qr;
        let z = _mm256_xor_si256(_mm256_slli_epi32::<1>(d), _mm256_srai_epi32::<31>(d));
        if n >= 8 {
            any = _mm256_or_si256(any, z);
            // SAFETY: values [i, i + 8) of `u` exist (i + 8 <= len <= u.len()); unaligned store.
            unsafe { _mm256_storeu_si256(up.wrapping_add(i).cast(), z) };
        } else {
            let m = lane_mask(n);
            any = _mm256_or_si256(any, _mm256_and_si256(z, m));
            // SAFETY: lanes [i, i + n) of `u` exist; masked-off lanes are not accessed.
            unsafe { _mm256_maskstore_epi32(up.wrapping_add(i).cast(), m, z) };
        }
        if cheap {
            match T::DTYPE {
                DType::F32 => {
                    let m = _mm256_and_si256(_mm256_castps_si256(raw), abs32);
                    mag = _mm256_max_epi32(mag, m);
                }
                DType::F64 => {
                    // Not (|x| <= xmax): true for |x| > xmax and for NaN (lanes past the
                    // block: 0).
                    bad = _mm256_or_pd(
                        bad,
                        _mm256_or_pd(
                            _mm256_cmp_pd::<_CMP_NLE_UQ>(abs_pd(xa), xmax),
                            _mm256_cmp_pd::<_CMP_NLE_UQ>(abs_pd(xb), xmax),
                        ),
                    );
                }
            }
        } else if full {
            let ea = abs_pd(_mm256_sub_pd(xa, narrow::<T>(_mm256_mul_pd(fa, e2))));
            let eb = abs_pd(_mm256_sub_pd(xb, narrow::<T>(_mm256_mul_pd(fb, e2))));
            // Not (err <= bound): true for err > bound and for NaN.
            bad = _mm256_or_pd(
                bad,
                _mm256_or_pd(
                    _mm256_cmp_pd::<_CMP_NLE_UQ>(ea, bound),
                    _mm256_cmp_pd::<_CMP_NLE_UQ>(eb, bound),
                ),
            );
        }
    });
    if cheap && T::DTYPE == DType::F32 {
        // The largest |x| of the f32 lanes, widened (NaN stays NaN): not <= xmax.
        let m = _mm256_castsi256_ps(mag);
        let lo = _mm256_cmp_pd::<_CMP_NLE_UQ>(_mm256_cvtps_pd(_mm256_castps256_ps128(m)), xmax);
        let hi = _mm256_cmp_pd::<_CMP_NLE_UQ>(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(m)), xmax);
        bad = _mm256_or_pd(bad, _mm256_or_pd(lo, hi));
    }
    let res = ScanResult {
        any: u64::from(reduce_or32(any)),
        near_tie: _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_GE_OQ>(frac, _mm256_set1_pd(s.far))) != 0,
        violation: _mm256_movemask_pd(bad) != 0
            || (cheap
                && _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_NLE_UQ>(frac, _mm256_set1_pd(safe)))
                    != 0),
    };
    (res, head)
}

/// Packs `v` (each `< 2^w`, `1 <= w <= 24`) LSB-first into exactly `out`
/// (`ceil(v.len()·w/8)` bytes; pad bits 0). Does nothing if `out` has another length.
#[target_feature(enable = "avx2,bmi2")]
fn pack32(v: &[u32], w: u32, out: &mut [u8]) {
    let Some(bits) = BitWidth::checked(w as u8) else {
        return;
    };
    if out.len() != payload_len(bits.get(), v.len()) {
        return;
    }
    with_width!(bits, pack_n::<_>, (v, out));
}

/// [`pack32`] for values held as u64 (narrowed into `v`, the u32 buffer).
#[target_feature(enable = "avx2,bmi2")]
fn pack64(u: &[u64], v: &mut [u32], w: u32, out: &mut [u8]) {
    for (d, &x) in v.iter_mut().zip(u) {
        *d = x as u32; // x < 2^w <= 2^24
    }
    pack32(v.get(..u.len()).unwrap_or_default(), w, out);
}

#[target_feature(enable = "avx2,bmi2")]
fn pack_n<const N: usize>(v: &[u32], out: &mut [u8]) {
    let mut groups = v.chunks_exact(8);
    let mut at = 0;
    for g in groups.by_ref() {
        // SAFETY: `g` is 8 u32 (32 bytes); unaligned load.
        let x = unsafe { _mm256_loadu_si256(g.as_ptr().cast()) };
        put_group::<N>(out, at, N, assemble::<N>(x));
        at += N;
    }
    let rest = groups.remainder();
    if !rest.is_empty() {
        let mut g = [0u32; 8];
        for (d, s) in g.iter_mut().zip(rest) {
            *d = *s;
        }
        // SAFETY: `g` is 8 u32; unaligned load.
        let x = unsafe { _mm256_loadu_si256(g.as_ptr().cast()) };
        put_group::<N>(out, at, (rest.len() * N).div_ceil(8), assemble::<N>(x));
    }
}

/// Decodes one block (`payload` exactly `ceil(out.len()·w/8)` bytes, [`decodes`] true) into
/// `out`: `T((seed + prefix sum of unzigzag(fields))·2eb)`, the level formed in f64 as
/// `seed + f64(prefix)` (exact: [`decodes`]). Does nothing on a length mismatch.
#[target_feature(enable = "avx2,bmi2")]
fn decode_block<T: SzpFloat>(payload: &[u8], w: u8, seed: f64, e2: f64, out: &mut [T]) {
    let len = out.len();
    let Some(t) = Y256_TABLES.get(usize::from(w)) else {
        return;
    };
    if !decodes(w, len, seed as i64) || payload.len() != payload_len(w, len) {
        return;
    }
    let n = usize::from(w);
    // SAFETY: the token proves AVX2 (this function's features).
    let (shuf, shl, cnt) = unsafe { setup(t, n) };
    let h = t.hi_offset;
    let scale = _mm256_set1_pd(e2);
    let base = _mm256_set1_pd(seed);
    let (zero, one, last) = (
        _mm256_setzero_si256(),
        _mm256_set1_epi32(1),
        _mm256_set1_epi32(7),
    );
    let (src, dst) = (payload.as_ptr(), out.as_mut_ptr());
    let mut carry = zero;
    // Step g reads 16 bytes at g·w and at g·w + h (8 fields of w bits are w bytes): in place
    // while those lie inside the payload (the first `inside` steps), then from a zero-padded
    // copy of the payload's last bytes (fewer than h + 16 <= 28 of them, since
    // inside·w > len − h − 16; later steps start fewer than 28 bytes into it, so their reads
    // end before byte 28 + h + 16 <= 56 of the copy).
    let plen = payload.len();
    let inside = if plen >= h + 16 {
        (plen - h - 16) / n + 1
    } else {
        0
    };
    let mut tail = [0u8; 64];
    let rest = payload.get(inside * n..).unwrap_or_default();
    if let Some(d) = tail.get_mut(..rest.len()) {
        d.copy_from_slice(rest);
    }
    let tp = tail.as_ptr();
    each_step::<8>(len, |i, r| {
        let g = i / 8;
        prefetch_in(src.wrapping_add(g * n));
        prefetch_out(dst.wrapping_add(i));
        let f = if g < inside {
            // SAFETY: AVX2 as above; g·w + h + 16 <= payload.len() (`inside`).
            unsafe { unpack_at::<false>(src.wrapping_add(g * n), h, shuf, shl, cnt) }
        } else {
            // SAFETY: AVX2 as above; (g − inside)·w + h + 16 <= 56 bytes of `tail` (see above).
            unsafe { unpack_at::<false>(tp.wrapping_add((g - inside) * n), h, shuf, shl, cnt) }
        };
        // unzigzag: (f >> 1) ^ -(f & 1)
        let d = _mm256_xor_si256(
            _mm256_srli_epi32::<1>(f),
            _mm256_sub_epi32(zero, _mm256_and_si256(f, one)),
        );
        let mut s = _mm256_add_epi32(d, _mm256_slli_si256::<4>(d));
        s = _mm256_add_epi32(s, _mm256_slli_si256::<8>(s));
        // The low lane's total into every dword of the high lane.
        s = _mm256_add_epi32(
            s,
            _mm256_shuffle_epi32::<0xFF>(_mm256_permute2x128_si256::<0x08>(s, s)),
        );
        let q = _mm256_add_epi32(s, carry);
        carry = _mm256_permutevar8x32_epi32(q, last);
        let lo = _mm256_add_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(q)), base);
        let hi = _mm256_add_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256::<1>(q)), base);
        let (lo, hi) = (_mm256_mul_pd(lo, scale), _mm256_mul_pd(hi, scale));
        // SAFETY: lanes [i, i + min(r, 8)) of `out` exist (each_step).
        unsafe { store8::<T>(dst.wrapping_add(i), r, lo, hi) };
    });
}

/// Stores the first `min(r, 8)` lanes of `T(lo) ++ T(hi)` at `p`.
///
/// # Safety
/// `min(r, 8)` values of type `T` at `p` must be writable.
#[inline]
#[target_feature(enable = "avx2,bmi2")]
unsafe fn store8<T: SzpFloat>(p: *mut T, r: usize, lo: __m256d, hi: __m256d) {
    match T::DTYPE {
        DType::F32 => {
            let p = p.cast::<f32>();
            let v = _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
            if r >= 8 {
                // SAFETY: 8 writable f32 at `p` (caller); unaligned store.
                unsafe { _mm256_storeu_ps(p, v) }
            } else {
                // SAFETY: the first r lanes are writable (caller); others are not accessed.
                unsafe { _mm256_maskstore_ps(p, lane_mask(r), v) }
            }
        }
        DType::F64 => {
            let p = p.cast::<f64>();
            if r >= 8 {
                // SAFETY: 8 writable f64 at `p` (caller); unaligned stores.
                unsafe {
                    _mm256_storeu_pd(p, lo);
                    _mm256_storeu_pd(p.wrapping_add(4), hi);
                }
            } else {
                let (ma, mb) = lane_masks64(r);
                // SAFETY: the first r lanes are writable (caller); others are not accessed.
                unsafe {
                    _mm256_maskstore_pd(p, ma, lo);
                    _mm256_maskstore_pd(p.wrapping_add(4), mb, hi);
                }
            }
        }
    }
}

/// The vector part of [`stats`] for element type `$t` in vectors of `$lanes` lanes (the
/// intrinsics of that type follow): four accumulators over the whole 4-vector chunks of
/// `input`, folded into `$st`; evaluates to the number of values done.
macro_rules! stats_lanes {
    ($st:ident, $input:expr, $t:ty, $lanes:literal, $set1:ident, $loadu:ident, $min:ident,
     $max:ident, $storeu:ident, $cast:ident, $iset1:ident, $it:ty, $cmpgt:ident) => {{
        let p = $input.as_ptr().cast::<$t>();
        let n = $input.len() / (4 * $lanes) * (4 * $lanes);
        let mut lo = [$set1(<$t>::INFINITY); 4];
        let mut hi = [$set1(<$t>::NEG_INFINITY); 4];
        let mut bad = _mm256_setzero_si256();
        // A value is non-finite when its magnitude bits exceed those of the largest finite.
        let (mag, fin) = ($iset1(<$it>::MAX), $iset1(<$t>::MAX.to_bits() as $it));
        let mut i = 0;
        while i < n {
            for (k, (l, h)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                prefetch_in(p.wrapping_add(i + $lanes * k));
                // SAFETY: i + 4·lanes <= n <= input.len(): the lanes at i + lanes·k are inside.
                let x = unsafe { $loadu(p.wrapping_add(i + $lanes * k)) };
                *l = $min(*l, x);
                *h = $max(*h, x);
                let b = _mm256_and_si256($cast(x), mag);
                bad = _mm256_or_si256(bad, $cmpgt(b, fin));
            }
            i += 4 * $lanes;
        }
        let l = $min($min(lo[0], lo[1]), $min(lo[2], lo[3]));
        let h = $max($max(hi[0], hi[1]), $max(hi[2], hi[3]));
        let (mut la, mut ha) = ([<$t>::INFINITY; $lanes], [<$t>::NEG_INFINITY; $lanes]);
        // SAFETY: `la` and `ha` are one vector each; unaligned stores.
        unsafe {
            $storeu(la.as_mut_ptr(), l);
            $storeu(ha.as_mut_ptr(), h);
        }
        for (&a, &b) in la.iter().zip(&ha) {
            $st.lo = $st.lo.min(f64::from(a));
            $st.hi = $st.hi.max(f64::from(b));
        }
        $st.bad = _mm256_testz_si256(bad, bad) == 0;
        n
    }};
}

/// Min, max and whether any value is NaN or infinite: 4 accumulators of 8 (f32) or 4 (f64)
/// lanes, the last values one at a time.
#[target_feature(enable = "avx2,bmi2")]
fn stats<T: SzpFloat>(input: &[T]) -> Stats {
    let mut st = Stats::EMPTY;
    let done = match T::DTYPE {
        DType::F32 => stats_lanes!(
            st,
            input,
            f32,
            8,
            _mm256_set1_ps,
            _mm256_loadu_ps,
            _mm256_min_ps,
            _mm256_max_ps,
            _mm256_storeu_ps,
            _mm256_castps_si256,
            _mm256_set1_epi32,
            i32,
            _mm256_cmpgt_epi32
        ),
        DType::F64 => stats_lanes!(
            st,
            input,
            f64,
            4,
            _mm256_set1_pd,
            _mm256_loadu_pd,
            _mm256_min_pd,
            _mm256_max_pd,
            _mm256_storeu_pd,
            _mm256_castpd_si256,
            _mm256_set1_epi64x,
            i64,
            _mm256_cmpgt_epi64
        ),
    };
    for v in input.iter().skip(done).map(|v| v.to_f64()) {
        st.lo = st.lo.min(v);
        st.hi = st.hi.max(v);
        st.bad |= !v.is_finite();
    }
    st
}

/// One block on the fast scan from `seed` (`None`: from its own first level, the block-head
/// layout's head): the result (its `any` exact), whether the block's exact levels and
/// zigzagged deltas are in `s.p.q`/`s.p.u` (a lane was near a tie) rather than the deltas in
/// `s.u32s`, and the seed (the head: the first lane's level, or near a tie the exact quantize
/// of the first value).
#[inline]
#[target_feature(enable = "avx2,bmi2")]
fn scan<T: SzpFloat>(
    sc: &Scan,
    block: &[T],
    seed: Option<i64>,
    s: &mut Scratch,
) -> (ScanResult, bool, i64) {
    let len = block.len().min(BUF);
    // Every plan this scan runs for has max|y| < 2²⁹ (`Scan::new`): a head fits in i32.
    let seed32 = match seed {
        Some(v) => i32::try_from(v).ok().map(Some),
        None => Some(None),
    };
    let (res, seed) = match seed32 {
        Some(s32) => {
            let u = s.u32s.get_mut(..len).unwrap_or_default();
            let (res, first) = scan_block(sc, block, s32, u);
            (res, seed_after_scan(seed, &res, first, block, sc.eb))
        }
        // A seed outside i32 (never a level of a plan this scan runs for): the exact levels.
        None => (
            ScanResult {
                any: 0,
                near_tie: true,
                violation: true,
            },
            seed.unwrap_or(0),
        ),
    };
    let res = exact_on_tie(sc.eb, seed, block, s, res);
    (res, res.near_tie, seed)
}

scan_encoder!("avx2,bmi2");

impl SzpKernel for Bmi2 {
    scan_kernel_methods!("avx2,bmi2");

    #[inline(always)]
    fn encoder(self, q: Quant) -> Enc<Scan> {
        Enc {
            q,
            scan: Scan::new(q.eb, q.bound, q.strict, q.max_abs),
        }
    }
    #[inline(always)]
    fn stats<T: SzpFloat>(self, x: &[T]) -> Stats {
        // SAFETY: the token proves AVX2 and BMI2 (and the OS YMM state).
        unsafe { stats(x) }
    }
}

#[cfg(test)]
mod tests {
    use super::{Scan, scan_block};
    use crate::arch::CpuFeatures;
    use crate::arch::x86_64::Bmi2;
    use crate::arch::x86_64::szp::tests::threshold_flags;

    /// The loop's side of the cheap check (`x86_64::szp::tests::threshold_flags`).
    ///
    /// On a CPU without AVX2 + BMI2 the leaf never runs and this test returns at once; the
    /// core links no standard library even in its tests, so the skip is printed by
    /// `tests/tests/szp_avx2.rs` (same condition, same `cargo test` run), which also checks
    /// that the path is refused.
    #[test]
    fn scan_flags_what_the_threshold_cannot_prove() {
        let Some(_token) = Bmi2::new(CpuFeatures::detect()) else {
            return;
        };
        threshold_flags(|eb, strict, xmax, block| {
            let sc = Scan::new(eb, eb, strict, xmax).expect("scan invariants");
            let mut u = [0u32; 16];
            // SAFETY: the token above proves AVX2 and BMI2.
            let (r, _) = unsafe { scan_block(&sc, block, Some(0), &mut u) };
            (sc.cheap.of::<f32>(), r)
        });
    }
}
