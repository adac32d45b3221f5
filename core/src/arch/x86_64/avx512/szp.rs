//! Hand-written AVX-512 VBMI kernels of the SZp hot loops (the `Avx512` path; its token is
//! [`Avx512Vbmi`]).
//!
//! * **Block scan** (compress): 16 values per step as two vectors of 8 f64 lanes: `y = x·r`
//!   (`r = 1/(2·eb)`), `q = rne(y)` as integers (i32 levels: `y + 1.5·2⁵²` rounded to nearest-even
//!   leaves the level in the low mantissa bits, one `vpermt2d` gathers 16 of them; i64
//!   levels: `vcvtpd2qq` with embedded rounding), the delta against the previous step's levels
//!   (`valignd`/`valignq`), zigzag, an OR-reduction for the width, the zigzagged values stored
//!   to a block buffer, and the block's largest rounding fraction `|y − rne(y)|` (`vreducepd`,
//!   then `vrangepd` as a max of magnitudes), all branch-free. Round-half-even and the spec's
//!   round-half-away from zero of the exact quotient `x/(2·eb)` can only disagree near a tie:
//!   a block whose largest fraction is within `2⁻⁴⁷·max|y|` of ½ is redone by the exact
//!   portable kernel (`quantize_block`), so the levels are always the spec's.
//! * **Strict check** (strict plans), as in the AVX2 leaf: where `strict_by_fraction`
//!   (`x86_64/szp.rs`) proves it — every strict plan at the usual bounds, since the planner's
//!   tightened quantizer leaves the margin — the loop keeps the largest `|x|` (an unsigned max
//!   of the magnitude bits, which NaN and infinities survive) and the block is flagged for the
//!   exact per-element check when it exceeds the plan's `max_abs` or the largest fraction
//!   exceeds the proven threshold; otherwise every lane's reconstruction
//!   `|x − T(q·2eb)| ≤ bound` is checked. Replacing the per-lane reconstruction (a multiply,
//!   two conversions, a subtraction, an abs and a max per 8 lanes) and the round/sub/abs of
//!   the fraction made the f32 scan about 1.3× faster on a Sapphire Rapids core.
//! * **Pack** (widths 1..=24): the 16 zigzagged values of a step, narrowed to dwords, are
//!   exactly the codes of a PERNIX 16-value step (`2w` bytes, LSB-first), packed by the PERNIX
//!   AVX-512 VBMI packer (`pack16` of this leaf, `vpermb` gathers); a block's
//!   partial last step stores only its `ceil(r·w/8)` bytes with a byte mask.
//! * **Decode** (widths 1..=24): `vpermb` + `vpmultishiftqb` extract 16 fields per step (the
//!   PERNIX decoder's tables), unzigzag, a 16-lane inclusive prefix sum in 4 `valignd` steps
//!   plus the carry of the previous step, and the reconstruction `T(q·2eb)` in f64 lanes. The
//!   prefix sum runs in i32 lanes, which is exact when `len·2^(w−1) < 2³¹` (every level is a
//!   sum of at most `len` deltas of magnitude below `2^(w−1)`); other blocks take the portable
//!   kernel.
//!
//! Every operation is the same IEEE operation as in the scalar reference (products with the
//! exactly representable `2·eb` instead of `(q·2)·eb`: both are one rounding of the same exact
//! product), so the bytes and the decoded bits equal the reference's (`tests/szp_paths.rs`).

use core::arch::x86_64::*;

use crate::arch::szp::{BUF, Quant, Stats, SzpKernel, head_of};
use crate::arch::x86_64::avx512::{pack_tables, pack16};
use crate::arch::x86_64::szp::{
    Cheap, Enc, ScanResult, ScanScalars, Scratch, decodes, each_step, exact_on_tie, scan_encoder,
    scan_kernel_methods, seed_after_scan,
};
use crate::arch::x86_64::tables::{Z512, Z512_TABLES};
use crate::arch::x86_64::{Avx512Vbmi, prefetch_in, prefetch_out};
use crate::bits::payload_len;
use crate::types::{DType, SzpFloat};

/// Round to nearest, ties to even, exceptions suppressed.
const RNE: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

/// `vrangepd`/`vrangeps` control: the operand of larger magnitude, sign cleared.
const MAX_ABS: i32 = 0b1011;

/// Loop invariants of one compression call.
#[derive(Clone, Copy)]
pub(crate) struct Scan {
    /// The quantizer bound `eb` (the exact levels' divisor).
    eb: f64,
    /// `1/(2·eb)`.
    r: __m512d,
    /// `2·eb` (exact).
    e2: __m512d,
    /// `½ − 2⁻⁴⁷·max|y|`: a lane is near a tie when `|y − rne(y)| >= far`.
    far_scalar: f64,
    /// The bits of `bound` (a positive float: its bits order like its value).
    bound_bits: u64,
    /// `max|y| < 2²⁹`: levels, deltas (and their zigzag as u32) fit in i32 ([`scan_block32`]).
    pub narrow: bool,
    /// Whether to check reconstructions.
    strict: bool,
    /// The cheap strict check, per element type.
    cheap: Cheap,
}

impl Scan {
    /// The invariants for quantizer bound `eb` and inputs with `|x| <= max_abs`, or `None`
    /// when the fast scan cannot prove its levels equal the spec's: `1/(2·eb)` or `2·eb` not
    /// finite, or `max_abs/(2·eb) >= 2⁴⁶`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
    pub(crate) fn new(eb: f64, bound: f64, strict: bool, max_abs: f64) -> Option<Scan> {
        let p = ScanScalars::new(eb, max_abs, 70_368_744_177_664.0)?; // 2^46
        Some(Scan {
            eb,
            r: _mm512_set1_pd(p.r),
            e2: _mm512_set1_pd(p.e2),
            far_scalar: p.far,
            bound_bits: bound.to_bits(),
            narrow: p.ymax < 536_870_912.0,
            strict,
            cheap: Cheap::new(strict, eb, p.e2, bound, max_abs),
        })
    }
}

/// Widens 16 values at `p` (only `r` of them when `r < 16`; other lanes 0) to two f64 vectors,
/// and returns the loaded vector as it is (f32 elements: the 16 values; f64: the second half).
///
/// # Safety
/// `min(r, 16)` values of type `T` at `p` must be readable.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
unsafe fn load16<T: SzpFloat>(p: *const T, r: usize) -> (__m512d, __m512d, __m512) {
    match T::DTYPE {
        DType::F32 => {
            let p = p.cast::<f32>();
            let x = if r >= 16 {
                // SAFETY: 16 readable f32 at `p` (caller); unaligned load.
                unsafe { _mm512_loadu_ps(p) }
            } else {
                // SAFETY: the first r lanes are readable (caller); masked-off lanes are not accessed.
                unsafe { _mm512_maskz_loadu_ps(((1u32 << r) - 1) as u16, p) }
            };
            (
                _mm512_cvtps_pd(_mm512_castps512_ps256(x)),
                _mm512_cvtps_pd(_mm512_extractf32x8_ps::<1>(x)),
                x,
            )
        }
        DType::F64 => {
            let p = p.cast::<f64>();
            let (a, b) = if r >= 16 {
                // SAFETY: 16 readable f64 at `p` (caller); unaligned loads.
                unsafe { (_mm512_loadu_pd(p), _mm512_loadu_pd(p.wrapping_add(8))) }
            } else {
                let m = (1u32 << r) - 1;
                // SAFETY: the first r lanes are readable (caller); masked-off lanes are not accessed.
                unsafe {
                    (
                        _mm512_maskz_loadu_pd(m as u8, p),
                        _mm512_maskz_loadu_pd((m >> 8) as u8, p.wrapping_add(8)),
                    )
                }
            };
            (a, b, _mm512_castpd_ps(b))
        }
    }
}

/// `T::from_f64(v).to_f64()` per lane (the rounding of the element type).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn narrow<T: SzpFloat>(v: __m512d) -> __m512d {
    match T::DTYPE {
        DType::F32 => _mm512_cvtps_pd(_mm512_cvt_roundpd_ps::<RNE>(v)),
        DType::F64 => v,
    }
}

/// `|x − T(q·2eb)|` of 8 lanes, as bits: for non-negative floats (NaN included, above +inf)
/// the unsigned integer order of the bits is the float order, so a running unsigned max
/// tracks "some error exceeds the bound or is NaN" with one instruction per vector.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn error_bits8<T: SzpFloat>(s: &Scan, x: __m512d, qf: __m512d) -> __m512i {
    let rec = narrow::<T>(_mm512_mul_pd(qf, s.e2));
    _mm512_castpd_si512(_mm512_abs_pd(_mm512_sub_pd(x, rec)))
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn zigzag8(d: __m512i) -> __m512i {
    _mm512_xor_si512(_mm512_slli_epi64::<1>(d), _mm512_srai_epi64::<63>(d))
}

/// The lane masks of a step with `r` values left: all 16 lanes, or the first `r`.
#[inline(always)]
fn lanes(r: usize) -> u16 {
    if r >= 16 {
        u16::MAX
    } else {
        ((1u32 << r) - 1) as u16
    }
}

/// Which strict check a block scan runs.
#[derive(Clone, Copy)]
enum Check {
    /// Not a strict plan: none.
    None,
    /// [`Cheap`]: `|x| <= xmax` per lane and the block's largest fraction against `safe`.
    Cheap { safe: f64, xmax: f64 },
    /// Every lane's reconstruction against the bound.
    Full,
}

/// Running maxima of one block scan: `|y − rne(y)|`, the bits of `|x|` (f32 lanes for f32
/// elements, f64 lanes for f64) and the error bits. Lanes past the block were loaded
/// as 0, so their fraction, magnitude and error are 0: none of the maxima needs a lane mask.
#[derive(Clone, Copy)]
struct Flags {
    check: Check,
    frac: __m512d,
    mag: __m512i,
    err: __m512i,
}

impl Flags {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
    fn new<T: SzpFloat>(s: &Scan) -> Flags {
        let check = match (s.strict, s.cheap.of::<T>()) {
            (false, _) => Check::None,
            (true, Some((safe, xmax))) => Check::Cheap { safe, xmax },
            (true, None) => Check::Full,
        };
        Flags {
            check,
            frac: _mm512_setzero_pd(),
            mag: _mm512_setzero_si512(),
            err: _mm512_setzero_si512(),
        }
    }

    /// Accounts the 16 lanes of a step: `x` as loaded (`load16`), its f64 halves and their
    /// `y = x·r`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
    fn add<T: SzpFloat>(
        &mut self,
        s: &Scan,
        (xa, xb, x): (__m512d, __m512d, __m512),
        (ya, yb): (__m512d, __m512d),
    ) {
        // y − rne(y), exact (`vreducepd`).
        let ta = _mm512_reduce_pd::<RNE>(ya);
        let tb = _mm512_reduce_pd::<RNE>(yb);
        self.frac = _mm512_range_pd::<MAX_ABS>(self.frac, _mm512_range_pd::<MAX_ABS>(ta, tb));
        match self.check {
            Check::None => {}
            Check::Cheap { .. } => {
                // |x| as bits, by unsigned integer max: NaN (above +inf) and infinities
                // survive it, where `vrangeps` would drop a NaN operand.
                self.mag = match T::DTYPE {
                    DType::F32 => _mm512_max_epu32(self.mag, _mm512_castps_si512(_mm512_abs_ps(x))),
                    DType::F64 => _mm512_max_epu64(
                        self.mag,
                        _mm512_max_epu64(
                            _mm512_castpd_si512(_mm512_abs_pd(xa)),
                            _mm512_castpd_si512(_mm512_abs_pd(xb)),
                        ),
                    ),
                };
            }
            Check::Full => {
                // rne(y) = y − (y − rne(y)), exact.
                let ea = error_bits8::<T>(s, xa, _mm512_sub_pd(ya, ta));
                let eb = error_bits8::<T>(s, xb, _mm512_sub_pd(yb, tb));
                self.err = _mm512_max_epu64(self.err, _mm512_max_epu64(ea, eb));
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
    fn result<T: SzpFloat>(self, s: &Scan, any: u64) -> ScanResult {
        // Lane-wise compares instead of horizontal reductions.
        let near_tie =
            _mm512_cmp_pd_mask::<_CMP_GE_OQ>(self.frac, _mm512_set1_pd(s.far_scalar)) != 0;
        let violation = match self.check {
            Check::None => false,
            Check::Cheap { safe, xmax } => {
                // Not (|x| <= xmax): true above it and for NaN (unordered).
                let (lo, hi) = match T::DTYPE {
                    DType::F32 => {
                        let m = _mm512_castsi512_ps(self.mag);
                        (
                            _mm512_cvtps_pd(_mm512_castps512_ps256(m)),
                            _mm512_cvtps_pd(_mm512_extractf32x8_ps::<1>(m)),
                        )
                    }
                    DType::F64 => (_mm512_castsi512_pd(self.mag), _mm512_setzero_pd()),
                };
                let xm = _mm512_set1_pd(xmax);
                _mm512_cmp_pd_mask::<_CMP_NLE_UQ>(lo, xm) != 0
                    || _mm512_cmp_pd_mask::<_CMP_NLE_UQ>(hi, xm) != 0
                    || _mm512_cmp_pd_mask::<_CMP_NLE_UQ>(self.frac, _mm512_set1_pd(safe)) != 0
            }
            Check::Full => {
                _mm512_cmpgt_epu64_mask(self.err, _mm512_set1_epi64(s.bound_bits as i64)) != 0
            }
        };
        ScanResult {
            any,
            near_tie,
            violation,
        }
    }
}

/// Quantize + delta + zigzag + width (+ strict check) of one block, with i64 levels; the
/// zigzagged deltas go to `u[..block.len()]`. Out of line: only plans with `max|y| >= 2²⁹`
/// take it, and inlined it kept the narrow scan from being inlined into the block loop.
#[inline(never)]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(crate) fn scan_block<T: SzpFloat>(
    s: &Scan,
    block: &[T],
    seed: i64,
    u: &mut [u64],
) -> ScanResult {
    let len = block.len().min(u.len());
    let (x, up) = (block.as_ptr(), u.as_mut_ptr());
    // Lane 7 of `prev` is the level before the first value.
    let mut prev = _mm512_set1_epi64(seed);
    let mut any = _mm512_setzero_si512();
    let mut flags = Flags::new::<T>(s);
    each_step::<16>(len, |i, r| {
        let m = lanes(r);
        let (ma, mb) = (m as u8, (m >> 8) as u8);
        prefetch_in(x.wrapping_add(i));
        if T::DTYPE == DType::F64 {
            prefetch_in(x.wrapping_add(i + 8));
        }
        // SAFETY: i < len <= block.len(), and load16 reads min(r, 16) values from i.
        let xs = unsafe { load16(x.wrapping_add(i), r) };
        let (ya, yb) = (_mm512_mul_pd(xs.0, s.r), _mm512_mul_pd(xs.1, s.r));
        let qa = _mm512_cvt_roundpd_epi64::<RNE>(ya);
        let qb = _mm512_cvt_roundpd_epi64::<RNE>(yb);
        let za = zigzag8(_mm512_sub_epi64(qa, _mm512_alignr_epi64::<7>(qa, prev)));
        let zb = zigzag8(_mm512_sub_epi64(qb, _mm512_alignr_epi64::<7>(qb, qa)));
        prev = qb;
        any = _mm512_mask_or_epi64(any, ma, any, za);
        any = _mm512_mask_or_epi64(any, mb, any, zb);
        flags.add::<T>(s, xs, (ya, yb));
        // SAFETY: lanes [i, i + min(r, 16)) of `u` exist (len <= u.len()); masked-off lanes are not accessed.
        unsafe {
            _mm512_mask_storeu_epi64(up.wrapping_add(i).cast(), ma, za);
            _mm512_mask_storeu_epi64(up.wrapping_add(i + 8).cast(), mb, zb);
        }
    });
    flags.result::<T>(s, _mm512_reduce_or_epi64(any) as u64)
}

/// [`scan_block`] with i32 levels, for plans with `max|x|/(2·eb) < 2²⁹` ([`Scan::narrow`]):
/// levels and deltas then fit in i32 and zigzag to the same values, and 16 lanes share one
/// vector. The zigzagged deltas go to `u[..block.len()]` as u32. `seed` `None`: the deltas
/// start from the first lane's level (a block-head layout block), which is returned (the
/// spec's head unless the result is near a tie); otherwise `seed` is returned.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(crate) fn scan_block32<T: SzpFloat>(
    s: &Scan,
    block: &[T],
    seed: Option<i32>,
    u: &mut [u32],
) -> (ScanResult, i32) {
    let len = block.len().min(u.len());
    let (x, up) = (block.as_ptr(), u.as_mut_ptr());
    // Lane 15 of `prev` is the level before the first value.
    let mut prev = _mm512_set1_epi32(seed.unwrap_or(0));
    let mut head = seed.unwrap_or(0);
    let mut any = _mm512_setzero_si512();
    let mut flags = Flags::new::<T>(s);
    each_step::<16>(len, |i, r| {
        let m = lanes(r);
        prefetch_in(x.wrapping_add(i));
        if T::DTYPE == DType::F64 {
            prefetch_in(x.wrapping_add(i + 8));
        }
        // SAFETY: i < len <= block.len(), and load16 reads min(r, 16) values from i.
        let xs = unsafe { load16(x.wrapping_add(i), r) };
        let (ya, yb) = (_mm512_mul_pd(xs.0, s.r), _mm512_mul_pd(xs.1, s.r));
        // rne(y) as i32: `y + 1.5·2⁵²` rounds y to an integer (|y| < 2²⁹) held in the low
        // mantissa bits, two's complement; one `vpermt2d` gathers the 16 low dwords.
        let magic = _mm512_set1_pd(6_755_399_441_055_744.0); // 1.5·2^52
        let q = _mm512_permutex2var_epi32(
            _mm512_castpd_si512(_mm512_add_round_pd::<RNE>(ya, magic)),
            _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30),
            _mm512_castpd_si512(_mm512_add_round_pd::<RNE>(yb, magic)),
        );
        if i == 0 && seed.is_none() {
            // The block's own first level: every lane of `prev` (its delta is then 0).
            prev = _mm512_permutexvar_epi32(_mm512_setzero_si512(), q);
            head = _mm_cvtsi128_si32(_mm512_castsi512_si128(q));
        }
        let d = _mm512_sub_epi32(q, _mm512_alignr_epi32::<15>(q, prev));
        prev = q;
        let z = _mm512_xor_si512(_mm512_slli_epi32::<1>(d), _mm512_srai_epi32::<31>(d));
        any = _mm512_mask_or_epi32(any, m, any, z);
        flags.add::<T>(s, xs, (ya, yb));
        // SAFETY: lanes [i, i + min(r, 16)) of `u` exist (len <= u.len()); masked-off lanes are not accessed.
        unsafe { _mm512_mask_storeu_epi32(up.wrapping_add(i).cast(), m, z) };
    });
    (
        flags.result::<T>(s, _mm512_reduce_or_epi32(any) as u32 as u64),
        head,
    )
}

/// The packer's loop invariants for one width.
#[derive(Clone, Copy)]
struct Packer<'t> {
    t: &'t Z512,
    shift: __m512i,
    idx: [__m512i; 4],
    cnt: __m128i,
    low: __m512i,
}

impl Packer<'_> {
    /// The invariants of width `w` (1..=24).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
    fn new(w: u32) -> Option<Packer<'static>> {
        let t = Z512_TABLES.get(w as usize).filter(|_| w >= 1)?;
        let (shift, idx) = pack_tables(t);
        Some(Packer {
            t,
            shift,
            idx,
            cnt: _mm_cvtsi32_si128(32 - w as i32),
            low: _mm512_set1_epi64(((1u64 << w) - 1) as i64),
        })
    }
}

/// Packs `len` values (each `< 2^w`, `1 <= w <= 24`), whose 16-value steps `load(i, m)`
/// returns as dwords (lanes outside `m` zero), LSB-first into exactly `out`
/// (`ceil(len·w/8)` bytes; pad bits 0). Does nothing if `out` has another length.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn pack_with(len: usize, w: u32, out: &mut [u8], load: impl Fn(usize, u16) -> __m512i) {
    if out.len() != payload_len(w as u8, len) {
        return;
    }
    let Some(p) = Packer::new(w) else {
        return;
    };
    match (p.t.cmp_perms, (2 * w).is_multiple_of(8)) {
        (_, true) => pack_steps::<1, false>(&p, len, w, out, load),
        (2, _) => pack_steps::<2, true>(&p, len, w, out, load),
        (3, _) => pack_steps::<3, true>(&p, len, w, out, load),
        _ => pack_steps::<4, true>(&p, len, w, out, load),
    }
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn pack_steps<const P: usize, const S: bool>(
    p: &Packer<'_>,
    len: usize,
    w: u32,
    out: &mut [u8],
    load: impl Fn(usize, u16) -> __m512i,
) {
    let dst = out.as_mut_ptr();
    let wz = w as usize;
    each_step::<16>(len, |i, r| {
        // The step's bytes: 2w, or ceil(r·w/8) for a partial step.
        let bm = u64::MAX >> (64 - (r * wz).div_ceil(8));
        let codes = load(i, lanes(r));
        let packed = pack16::<P, S>(p.t, p.shift, &p.idx, p.cnt, p.low, codes);
        // SAFETY: the step's bytes [i·w/8, i·w/8 + ceil(r·w/8)) lie inside `out`, whose length is ceil(len·w/8) (checked by `pack_with`); masked-off bytes are not accessed.
        unsafe { _mm512_mask_storeu_epi8(dst.wrapping_add(i / 8 * wz).cast(), bm, packed) };
    });
}

/// Packs `u` (each `< 2^w`, `1 <= w <= 24`) LSB-first into exactly `out`
/// (`ceil(u.len()·w/8)` bytes; pad bits 0). Does nothing if `out` has another length.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(crate) fn pack_block(u: &[u64], w: u32, out: &mut [u8]) {
    let src = u.as_ptr();
    pack_with(u.len(), w, out, |i, m| {
        // SAFETY: the lanes of `m` are values i.. of `u` (`pack_steps` passes the lanes left); masked-off lanes are not accessed.
        let (a, b) = unsafe {
            (
                _mm512_maskz_loadu_epi64(m as u8, src.wrapping_add(i).cast()),
                _mm512_maskz_loadu_epi64((m >> 8) as u8, src.wrapping_add(i + 8).cast()),
            )
        };
        _mm512_inserti64x4::<1>(
            _mm512_castsi256_si512(_mm512_cvtepi64_epi32(a)),
            _mm512_cvtepi64_epi32(b),
        )
    });
}

/// [`pack_block`] for values held as u32.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(crate) fn pack_block32(u: &[u32], w: u32, out: &mut [u8]) {
    let src = u.as_ptr();
    pack_with(u.len(), w, out, |i, m| {
        // SAFETY: the lanes of `m` are values i.. of `u` (`pack_steps` passes the lanes left); masked-off lanes are not accessed.
        unsafe { _mm512_maskz_loadu_epi32(m, src.wrapping_add(i).cast()) }
    });
}

/// Decodes one block (`payload` exactly `ceil(out.len()·w/8)` bytes, [`decodes`] true) into
/// `out`: `T((seed + prefix sum of unzigzag(fields))·2eb)`, the level formed in f64 as
/// `seed + f64(prefix)` (exact: [`decodes`]). Does nothing on a length mismatch.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(crate) fn decode_block<T: SzpFloat>(payload: &[u8], w: u8, seed: f64, e2: f64, out: &mut [T]) {
    let len = out.len();
    let Some(t) = Z512_TABLES.get(usize::from(w)) else {
        return;
    };
    if !decodes(w, len, seed as i64) || payload.len() != payload_len(w, len) {
        return;
    }
    // SAFETY: the tables are plain arrays of 64 bytes; unaligned loads.
    let (idx, ctrl) = unsafe {
        (
            _mm512_loadu_si512(t.dec_idx.as_ptr().cast()),
            _mm512_loadu_si512(t.dec_ctrl.as_ptr().cast()),
        )
    };
    let cnt = _mm_cvtsi32_si128(32 - i32::from(w));
    let scale = _mm512_set1_pd(e2);
    let base = _mm512_set1_pd(seed);
    let zero = _mm512_setzero_si512();
    let one = _mm512_set1_epi32(1);
    let last = _mm512_set1_epi32(15);
    let wz = usize::from(w);
    let (src, dst) = (payload.as_ptr(), out.as_mut_ptr());
    let mut carry = zero;
    each_step::<16>(len, |i, r| {
        let bm = u64::MAX >> (64 - (r * wz).div_ceil(8));
        prefetch_in(src.wrapping_add(i / 8 * wz));
        prefetch_out(dst.wrapping_add(i));
        if T::DTYPE == DType::F64 {
            prefetch_out(dst.wrapping_add(i + 8));
        }
        // SAFETY: the step's bytes [i·w/8, i·w/8 + ceil(r·w/8)) lie inside `payload` (checked length); masked-off bytes are not accessed.
        let b = unsafe { _mm512_maskz_loadu_epi8(bm, src.wrapping_add(i / 8 * wz).cast()) };
        let f = _mm512_srl_epi32(
            _mm512_multishift_epi64_epi8(ctrl, _mm512_permutexvar_epi8(idx, b)),
            cnt,
        );
        // unzigzag: (f >> 1) ^ -(f & 1)
        let d = _mm512_xor_si512(
            _mm512_srli_epi32::<1>(f),
            _mm512_sub_epi32(zero, _mm512_and_si512(f, one)),
        );
        let mut s = _mm512_add_epi32(d, _mm512_alignr_epi32::<15>(d, zero));
        s = _mm512_add_epi32(s, _mm512_alignr_epi32::<14>(s, zero));
        s = _mm512_add_epi32(s, _mm512_alignr_epi32::<12>(s, zero));
        s = _mm512_add_epi32(s, _mm512_alignr_epi32::<8>(s, zero));
        let q = _mm512_add_epi32(s, carry);
        carry = _mm512_permutexvar_epi32(last, q);
        let lo = _mm512_cvtepi32_pd(_mm512_castsi512_si256(q));
        let hi = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64::<1>(q));
        let lo = _mm512_mul_pd(_mm512_add_pd(lo, base), scale);
        let hi = _mm512_mul_pd(_mm512_add_pd(hi, base), scale);
        // SAFETY: lanes [i, i + min(r, 16)) of `out` exist; masked-off lanes are not accessed.
        unsafe { store16::<T>(dst.wrapping_add(i), lanes(r), lo, hi) };
    });
}

/// Stores the lanes of `m` of `T(lo) ++ T(hi)` at `p`.
///
/// # Safety
/// The lanes of `m` at `p` must be writable.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
unsafe fn store16<T: SzpFloat>(p: *mut T, m: u16, lo: __m512d, hi: __m512d) {
    match T::DTYPE {
        DType::F32 => {
            let v = _mm512_insertf32x8::<1>(
                _mm512_castps256_ps512(_mm512_cvt_roundpd_ps::<RNE>(lo)),
                _mm512_cvt_roundpd_ps::<RNE>(hi),
            );
            // SAFETY: the lanes of `m` are writable (caller); others are not accessed.
            unsafe { _mm512_mask_storeu_ps(p.cast(), m, v) }
        }
        DType::F64 => {
            let p = p.cast::<f64>();
            // SAFETY: the lanes of `m` are writable (caller); others are not accessed.
            unsafe {
                _mm512_mask_storeu_pd(p, m as u8, lo);
                _mm512_mask_storeu_pd(p.wrapping_add(8), (m >> 8) as u8, hi);
            }
        }
    }
}

/// The body of [`stats`] for one element type `$t` in vectors of `$lanes` lanes (`$m` the
/// lane-mask type; the intrinsics of that type follow): four accumulators, then one masked
/// vector at a time.
macro_rules! stats_lanes {
    ($input:expr, $t:ty, $m:ty, $lanes:literal, $set1:ident, $loadu:ident, $maskz_loadu:ident,
     $min:ident, $max:ident, $mask_min:ident, $mask_max:ident, $fpclass:ident,
     $mask_fpclass:ident, $rmin:ident, $rmax:ident) => {{
        let p = $input.as_ptr().cast::<$t>();
        let n = $input.len();
        let mut lo = [$set1(<$t>::INFINITY); 4];
        let mut hi = [$set1(<$t>::NEG_INFINITY); 4];
        let mut bad: $m = 0;
        let mut i = 0;
        while i + 4 * $lanes <= n {
            for (k, (l, h)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                prefetch_in(p.wrapping_add(i + $lanes * k));
                // SAFETY: i + 4·lanes <= n, so the lanes at i + lanes·k are inside `input`.
                let x = unsafe { $loadu(p.wrapping_add(i + $lanes * k)) };
                *l = $min(*l, x);
                *h = $max(*h, x);
                bad |= $fpclass::<NONFINITE>(x);
            }
            i += 4 * $lanes;
        }
        while i < n {
            let r = n - i;
            let m: $m = if r >= $lanes {
                <$m>::MAX
            } else {
                ((1u32 << r) - 1) as $m
            };
            // SAFETY: the lanes of `m` are values i.. of `input`; others are not accessed.
            let x = unsafe { $maskz_loadu(m, p.wrapping_add(i)) };
            lo[0] = $mask_min(lo[0], m, lo[0], x);
            hi[0] = $mask_max(hi[0], m, hi[0], x);
            bad |= $mask_fpclass::<NONFINITE>(m, x);
            i += $lanes;
        }
        let l = $min($min(lo[0], lo[1]), $min(lo[2], lo[3]));
        let h = $max($max(hi[0], hi[1]), $max(hi[2], hi[3]));
        (f64::from($rmin(l)), f64::from($rmax(h)), bad != 0)
    }};
}

/// Min, max and whether any value is NaN or infinite, 64 values per iteration (4 accumulators).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn stats<T: SzpFloat>(input: &[T]) -> (f64, f64, bool) {
    // fpclass categories: QNaN 0x01, +inf 0x08, -inf 0x10, SNaN 0x80.
    const NONFINITE: i32 = 0x99;
    match T::DTYPE {
        DType::F32 => stats_lanes!(
            input,
            f32,
            u16,
            16,
            _mm512_set1_ps,
            _mm512_loadu_ps,
            _mm512_maskz_loadu_ps,
            _mm512_min_ps,
            _mm512_max_ps,
            _mm512_mask_min_ps,
            _mm512_mask_max_ps,
            _mm512_fpclass_ps_mask,
            _mm512_mask_fpclass_ps_mask,
            _mm512_reduce_min_ps,
            _mm512_reduce_max_ps
        ),
        DType::F64 => stats_lanes!(
            input,
            f64,
            u8,
            8,
            _mm512_set1_pd,
            _mm512_loadu_pd,
            _mm512_maskz_loadu_pd,
            _mm512_min_pd,
            _mm512_max_pd,
            _mm512_mask_min_pd,
            _mm512_mask_max_pd,
            _mm512_fpclass_pd_mask,
            _mm512_mask_fpclass_pd_mask,
            _mm512_reduce_min_pd,
            _mm512_reduce_max_pd
        ),
    }
}

/// One block on the fast scan from `seed` (`None`: from its own first level, the block-head
/// layout's head): the result (its `any` exact), whether the block's zigzagged deltas are in
/// `s.p.u` (wide scans, or a lane was near a tie: then the exact levels are in `s.p.q`) rather
/// than in `s.u32s`, and the seed (the head: the first lane's level, or near a tie the exact
/// quantize of the first value).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn scan<T: SzpFloat>(
    sc: &Scan,
    block: &[T],
    seed: Option<i64>,
    s: &mut Scratch,
) -> (ScanResult, bool, i64) {
    let len = block.len().min(BUF);
    // The narrow scan: a plan with max|y| < 2²⁹ (a head is one of its levels) and a seed in i32.
    let narrow = match seed {
        Some(v) => i32::try_from(v).ok().filter(|_| sc.narrow).map(Some),
        None => sc.narrow.then_some(None),
    };
    let (res, seed) = match narrow {
        Some(s32) => {
            let u = s.u32s.get_mut(..len).unwrap_or_default();
            let (res, first) = scan_block32(sc, block, s32, u);
            (res, seed_after_scan(seed, &res, first, block, sc.eb))
        }
        None => {
            let seed = seed.unwrap_or_else(|| head_of(block, sc.eb));
            let u = s.p.u.get_mut(..len).unwrap_or_default();
            (scan_block(sc, block, seed, u), seed)
        }
    };
    let res = exact_on_tie(sc.eb, seed, block, s, res);
    (res, res.near_tie || narrow.is_none(), seed)
}

/// [`pack_block`] in the shape [`scan_kernel_methods!`] calls.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn pack64(u: &[u64], _: &mut [u32], w: u32, out: &mut [u8]) {
    pack_block(u, w, out);
}

/// [`pack_block32`] in the shape [`scan_kernel_methods!`] calls.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
fn pack32(v: &[u32], w: u32, out: &mut [u8]) {
    pack_block32(v, w, out);
}

scan_encoder!("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi");

impl SzpKernel for Avx512Vbmi {
    scan_kernel_methods!("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi");

    #[inline(always)]
    fn encoder(self, q: Quant) -> Enc<Scan> {
        // SAFETY: the token proves AVX-512 F/BW/VL/DQ/VBMI (and the OS ZMM state).
        let scan = unsafe { Scan::new(q.eb, q.bound, q.strict, q.max_abs) };
        Enc { q, scan }
    }
    #[inline(always)]
    fn stats<T: SzpFloat>(self, x: &[T]) -> Stats {
        // SAFETY: as in `encoder`.
        let (lo, hi, bad) = unsafe { stats(x) };
        Stats { lo, hi, bad }
    }
}

#[cfg(test)]
mod tests {
    use super::{Scan, scan_block, scan_block32};
    use crate::arch::CpuFeatures;
    use crate::arch::x86_64::Avx512Vbmi;
    use crate::arch::x86_64::szp::tests::threshold_flags;

    /// The loop's side of the cheap check (`x86_64::szp::tests::threshold_flags`), in both
    /// scans (i32 and i64 levels).
    ///
    /// On a CPU without AVX-512 VBMI the leaf never runs and this test returns at once; the
    /// core links no standard library even in its tests, so the skip is printed by
    /// `tests/tests/szp_paths.rs`.
    #[test]
    fn scan_flags_what_the_threshold_cannot_prove() {
        let Some(_token) = Avx512Vbmi::new(CpuFeatures::detect()) else {
            return;
        };
        threshold_flags(|eb, strict, xmax, block| {
            // SAFETY: the token above proves the leaf's features.
            let sc = unsafe { Scan::new(eb, eb, strict, xmax) }.expect("scan invariants");
            let mut u = [0u32; 16];
            // SAFETY: as above.
            let (r, _) = unsafe { scan_block32(&sc, block, Some(0), &mut u) };
            (sc.cheap.of::<f32>(), r)
        });
        threshold_flags(|eb, strict, xmax, block| {
            // SAFETY: the token above proves the leaf's features.
            let sc = unsafe { Scan::new(eb, eb, strict, xmax) }.expect("scan invariants");
            let mut u = [0u64; 16];
            // SAFETY: as above.
            let r = unsafe { scan_block(&sc, block, 0, &mut u) };
            (sc.cheap.of::<f32>(), r)
        });
    }
}
