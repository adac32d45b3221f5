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

use crate::arch::generic::pernix::lanes;
use crate::arch::x86_64::tables::{BYTE_GATHER, BYTE_GATHER64, DEC24, Z512, Z512_TABLES};
use crate::arch::x86_64::{prefetch_in, prefetch_out};
use crate::types::Run;
use core::arch::x86_64::*;

/// The byte gather of the N = 8, 16, 24 packing: `vpermb`/`vpermt2b` indices (from
/// [`Lanes::GATHER`]) and the mask of the step's `16·N/8` bytes.
#[derive(Clone, Copy)]
pub(crate) struct Gather {
    idx: __m512i,
    valid: u64,
}

/// Round to nearest, ties to even, exceptions suppressed (independent of MXCSR).
const RNE: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

/// Loop-invariant vectors of one compression call.
#[derive(Clone, Copy)]
pub(crate) struct Quant<V> {
    inv: V,
    lo: V,
    hi: V,
    mask: __m512i,
}

/// The vectors [`pack16`] takes from the tables of one width: the qword shifts and the four
/// byte-gather index vectors.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(crate) fn pack_tables(t: &Z512) -> (__m512i, [__m512i; 4]) {
    // SAFETY: the tables are plain arrays of 64 bytes; unaligned loads.
    unsafe {
        (
            _mm512_loadu_si512(t.cmp_shift.as_ptr().cast()),
            [
                _mm512_loadu_si512(t.cmp_idx[0].as_ptr().cast()),
                _mm512_loadu_si512(t.cmp_idx[1].as_ptr().cast()),
                _mm512_loadu_si512(t.cmp_idx[2].as_ptr().cast()),
                _mm512_loadu_si512(t.cmp_idx[3].as_ptr().cast()),
            ],
        )
    }
}

/// Packs 16 codes (low N bits each) into the low `2N` bytes of the result (general widths).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(crate) fn pack16<const PERMS: usize, const SHIFT: bool>(
    t: &Z512,
    shift: __m512i,
    idx: &[__m512i; 4],
    n: __m128i,
    low_n: __m512i,
    q: __m512i,
) -> __m512i {
    // qword j = code 2j | code (2j+1) << N: shift the qword right by 32 − N (the odd code,
    // masked to N bits, lands at bit N) and take its low N bits from the unshifted qword.
    let mut w = _mm512_ternarylogic_epi64::<0xD8>(_mm512_srl_epi64(q, n), q, low_n);
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

/// What the AVX-512 kernels do differently for f32 and f64.
///
/// # Safety (every method)
/// The CPU must support AVX-512 F, BW, VL, DQ and VBMI; a step at `k` with `r` values left
/// needs `r <= x.len() − k` (as `compress`/`decompress` pass it).
pub(crate) trait Lanes: Copy {
    /// A vector of `Self` as wide as 16 values' codes (f64: two halves).
    type V: Copy;
    /// The byte-gather indices of the byte-multiple widths ([`BYTE_GATHER`], [`BYTE_GATHER64`]).
    const GATHER: [[u8; 64]; 3];

    /// `x` in every lane.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn splat(x: Self) -> Self::V;

    /// The loop-invariant vectors of a compression at `n` bits with inverse scale `inv`.
    ///
    /// # Safety
    /// See `splat`.
    unsafe fn quant(inv: Self, n: u32) -> Quant<Self::V>;

    /// The 16 codes of the step at `k` of `x` (lanes `>= r` are code 0), masked to N bits.
    ///
    /// max(lo, s) / min(hi, ·) return their second operand (s) when it is NaN, so NaN survives
    /// to the conversion, which turns it into 0x8000_0000: low N bits 0, the fallback's code.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn codes(q: &Quant<Self::V>, x: &[Self], k: usize, r: usize) -> __m512i;

    /// N = 8, 16, 24: the packed `2N` bytes of the step at `k` of `x` (gathered by `g`),
    /// zeros above.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn bytes(q: &Quant<Self::V>, g: Gather, x: &[Self], k: usize, r: usize) -> __m512i;

    /// Converts the 16 fields `v`, times `sc`, into the values at `k` of `o` (`r` values left
    /// from `k`; only `min(r, 16)` are written).
    ///
    /// # Safety
    /// See the trait.
    unsafe fn store(o: &mut [Self], k: usize, r: usize, v: __m512i, sc: Self::V);
}

lanes! {
    "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi", _mm512_set1_epi32;
    f32, __m512, _mm512_set1_ps {
        const GATHER: [[u8; 64]; 3] = BYTE_GATHER;
        unsafe fn codes(q: &Quant<__m512>, x: &[f32], k: usize, r: usize) -> __m512i {
            // SAFETY: r <= x.len() − k (the caller).
            let s = _mm512_mul_ps(unsafe { step_ps(x, k, r) }, q.inv);
            let c = _mm512_min_ps(q.hi, _mm512_max_ps(q.lo, s));
            _mm512_and_si512(_mm512_cvt_roundps_epi32::<RNE>(c), q.mask)
        }
        unsafe fn bytes(q: &Quant<__m512>, g: Gather, x: &[f32], k: usize, r: usize) -> __m512i {
            // SAFETY: r <= x.len() − k (the caller).
            let s = _mm512_mul_ps(unsafe { step_ps(x, k, r) }, q.inv);
            let c = _mm512_min_ps(q.hi, _mm512_max_ps(q.lo, s));
            // The low N/8 bytes of each code (NaN's 0x8000_0000 has zero low bytes); zeros above.
            _mm512_maskz_permutexvar_epi8(g.valid, g.idx, _mm512_cvt_roundps_epi32::<RNE>(c))
        }
        unsafe fn store(o: &mut [f32], k: usize, r: usize, fields: __m512i, sc: __m512) {
            let f = _mm512_mul_ps(_mm512_cvtepi32_ps(fields), sc);
            let p = o.as_mut_ptr().wrapping_add(k);
            if r >= 16 {
                // SAFETY: r = values left in `o` from k is ≥ 16, so 16 floats at k are inside `o`.
                unsafe { _mm512_storeu_ps(p, f) }
            } else {
                // SAFETY: only the first r lanes (inside `o`) are written.
                unsafe { _mm512_mask_storeu_ps(p, ((1u32 << r) - 1) as u16, f) }
            }
        }
    }
    f64, __m512d, _mm512_set1_pd {
        const GATHER: [[u8; 64]; 3] = BYTE_GATHER64;
        unsafe fn codes(q: &Quant<__m512d>, x: &[f64], k: usize, r: usize) -> __m512i {
            // SAFETY: r <= x.len() − k (the caller).
            let (a, b) = unsafe { step_pd(x, k, r) };
            let ca = _mm512_min_pd(q.hi, _mm512_max_pd(q.lo, _mm512_mul_pd(a, q.inv)));
            let cb = _mm512_min_pd(q.hi, _mm512_max_pd(q.lo, _mm512_mul_pd(b, q.inv)));
            let ia = _mm512_cvt_roundpd_epi32::<RNE>(ca);
            let ib = _mm512_cvt_roundpd_epi32::<RNE>(cb);
            let v = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(ia), ib);
            _mm512_and_si512(v, q.mask)
        }
        unsafe fn bytes(q: &Quant<__m512d>, g: Gather, x: &[f64], k: usize, r: usize) -> __m512i {
            // SAFETY: r <= x.len() − k (the caller).
            let (a, b) = unsafe { step_pd(x, k, r) };
            let ca = _mm512_min_pd(q.hi, _mm512_max_pd(q.lo, _mm512_mul_pd(a, q.inv)));
            let cb = _mm512_min_pd(q.hi, _mm512_max_pd(q.lo, _mm512_mul_pd(b, q.inv)));
            // 64-bit conversions (one uop each; NaN gives 0x8000_0000_0000_0000, zero low bytes),
            // then the low N/8 bytes of all 16 codes from both registers; zeros above.
            let ia = _mm512_cvt_roundpd_epi64::<RNE>(ca);
            let ib = _mm512_cvt_roundpd_epi64::<RNE>(cb);
            _mm512_maskz_permutex2var_epi8(g.valid, ia, g.idx, ib)
        }
        unsafe fn store(o: &mut [f64], k: usize, r: usize, fields: __m512i, sc: __m512d) {
            let a = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(fields)), sc);
            let b = _mm512_mul_pd(
                _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64::<1>(fields)),
                sc,
            );
            let p = o.as_mut_ptr().wrapping_add(k);
            if r >= 16 {
                // SAFETY: r = values left in `o` from k is ≥ 16, so 16 doubles at k are inside `o`.
                unsafe {
                    _mm512_storeu_pd(p, a);
                    _mm512_storeu_pd(p.wrapping_add(8), b);
                }
            } else {
                let (ma, mb) = lane_masks64(r);
                // SAFETY: only lanes below r (inside `o`) are written.
                unsafe {
                    _mm512_mask_storeu_pd(p, ma, a);
                    _mm512_mask_storeu_pd(p.wrapping_add(8), mb, b);
                }
            }
        }
    }
}

/// The masks of the first `r < 16` lanes of two vectors of 8 f64.
#[inline(always)]
fn lane_masks64(r: usize) -> (u8, u8) {
    (
        ((1u32 << r.min(8)) - 1) as u8,
        ((1u32 << r.saturating_sub(8)) - 1) as u8,
    )
}

/// The 16 f32 values of a step at `k` of `x` (`r` values left from `k`; lanes `>= r` are 0).
///
/// # Safety
/// `r` must be at most `x.len() − k` (as `compress` passes it).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
unsafe fn step_ps(x: &[f32], k: usize, r: usize) -> __m512 {
    let p = x.as_ptr().wrapping_add(k);
    if r >= 16 {
        // SAFETY: r <= x.len() − k (caller) and r >= 16: the 16 floats at k are inside `x`.
        unsafe { _mm512_loadu_ps(p) }
    } else {
        // SAFETY: only the first r < 16 lanes are read and they are inside `x`; masked-off lanes are not accessed (AVX-512 fault suppression).
        unsafe { _mm512_maskz_loadu_ps(((1u32 << r) - 1) as u16, p) }
    }
}

/// The 16 f64 values of a step at `k` of `x` as two vectors (see [`step_ps`]).
///
/// # Safety
/// As [`step_ps`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
unsafe fn step_pd(x: &[f64], k: usize, r: usize) -> (__m512d, __m512d) {
    let p = x.as_ptr().wrapping_add(k);
    if r >= 16 {
        // SAFETY: r <= x.len() − k (caller) and r >= 16: the 16 doubles at k are inside `x`.
        unsafe { (_mm512_loadu_pd(p), _mm512_loadu_pd(p.wrapping_add(8))) }
    } else {
        let (ma, mb) = lane_masks64(r);
        // SAFETY: only lanes below r (inside `x`) are enabled in the masks; masked-off lanes are not accessed.
        unsafe {
            (
                _mm512_maskz_loadu_pd(ma, p),
                _mm512_maskz_loadu_pd(mb, p.wrapping_add(8)),
            )
        }
    }
}

/// Compresses whole blocks of `run`.
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL, DQ and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(crate) unsafe fn compress<T: Lanes>(run: Run, input: &[T], inv: T, output: &mut [u8]) {
    let n = u32::from(run.bits.get());
    // SAFETY: the CPU features of this function.
    let q = unsafe { T::quant(inv, n) };
    // `Geom::each_step` passes r = the values left in `x` from k.
    // SAFETY: the CPU features of this function; r is in bounds as said above.
    let load = |x: &[T], k: usize, r: usize| unsafe { T::codes(&q, x, k, r) };
    let k = (n as usize / 8).clamp(1, 3);
    let table = T::GATHER.get(k - 1).copied().unwrap_or([0; 64]);
    // SAFETY: `table` is a local array of 64 bytes; unaligned load.
    let idx = unsafe { _mm512_loadu_si512(table.as_ptr().cast()) };
    let gather = Gather {
        idx,
        valid: u64::MAX >> (64 - 16 * k),
    };
    // SAFETY: as for `load`.
    let bytes = |x: &[T], i: usize, r: usize| unsafe { T::bytes(&q, gather, x, i, r) };
    let Some((t, g)) = plan(run, input.len(), output.len()) else {
        return;
    };
    let (Some(bin), Some(bout)) = (input.get(..g.values()), output.get_mut(..g.bytes())) else {
        return;
    };
    let n = g.n;
    let dst = bout.as_mut_ptr();
    let (xp, dp) = (bin.as_ptr(), dst.cast_const());
    let ahead = |i: usize, at: usize| {
        prefetch_in(xp.wrapping_add(i));
        prefetch_out(dp.wrapping_add(at));
    };
    let zero = _mm512_setzero_si512();
    let pad = |at: usize, len: usize| {
        if len == 0 {
        } else if len < 64 {
            // SAFETY: the padding [at, at + len) is inside the run's stride in `bout`.
            unsafe { _mm512_mask_storeu_epi8(dst.wrapping_add(at).cast(), (1u64 << len) - 1, zero) }
        } else if let Some(p) = bout.get_mut(at..at + len) {
            p.fill(0);
        }
    };
    // SAFETY (every store below): `each_step` gives masks covering bytes [at, at + min(2N,
    // ceil(rN/8))), or for a partial step at most the bytes up to its run's end; all inside
    // `bout`. Masked-off bytes are not accessed.
    match n {
        1 => g.each_step(
            ahead,
            |i, at, r, m| {
                let codes = load(bin, i, r);
                let bits = _mm512_test_epi32_mask(codes, codes);
                let out = _mm512_castsi128_si512(_mm_cvtsi32_si128(i32::from(bits)));
                // SAFETY: see above.
                unsafe { _mm512_mask_storeu_epi8(dst.wrapping_add(at).cast(), m, out) };
            },
            pad,
        ),
        8 | 16 | 24 => {
            // Byte-multiple widths: `bytes` returns the packed step directly, zeros past it.
            g.each_step(
                ahead,
                |i, at, r, m| {
                    let out = bytes(bin, i, r);
                    let p = dst.wrapping_add(at);
                    if r >= 16 && n == 8 {
                        // SAFETY: a full step owns exactly these 16 bytes of the run.
                        unsafe { _mm_storeu_si128(p.cast(), _mm512_castsi512_si128(out)) };
                    } else if r >= 16 && n == 16 {
                        // SAFETY: a full step owns exactly these 32 bytes of the run.
                        unsafe { _mm256_storeu_si256(p.cast(), _mm512_castsi512_si256(out)) };
                    } else {
                        // SAFETY: see above.
                        unsafe { _mm512_mask_storeu_epi8(p.cast(), m, out) };
                    }
                },
                pad,
            )
        }
        _ => {
            let (shift, idx) = pack_tables(t);
            let cnt = _mm_cvtsi32_si128(32 - n as i32);
            let low_n = _mm512_set1_epi64(((1u64 << n) - 1) as i64);
            macro_rules! run {
                ($p:literal, $s:literal) => {
                    g.each_step(
                        ahead,
                        |i, at, r, m| {
                            let out = pack16::<$p, $s>(t, shift, &idx, cnt, low_n, load(bin, i, r));
                            // SAFETY: see above.
                            unsafe { _mm512_mask_storeu_epi8(dst.wrapping_add(at).cast(), m, out) };
                        },
                        pad,
                    )
                };
            }
            match (t.cmp_perms, (2 * n).is_multiple_of(8)) {
                (_, true) => run!(1, false),
                (2, _) => run!(2, true),
                (3, _) => run!(3, true),
                _ => run!(4, true),
            }
        }
    }
}

/// The geometry of a run of blocks as the kernels walk it.
#[derive(Clone, Copy)]
struct Geom {
    /// Bit width.
    n: usize,
    /// Runs to process (blocks, or 1 when the blocks form one seamless stream).
    runs: usize,
    /// Values per run.
    count: usize,
    /// Byte stride of a run.
    stride: usize,
    /// Bytes of a run holding values, `ceil(count·N/8)`; the rest of the stride is zero.
    used: usize,
}

impl Geom {
    fn new(n: usize, bs: usize, blocks: usize) -> Geom {
        let epb = bs * 8 / n;
        if epb * n == bs * 8 && epb.is_multiple_of(16) {
            // No padding bits and whole steps per block: the blocks are one bit stream.
            Geom {
                n,
                runs: 1,
                count: epb * blocks,
                stride: bs * blocks,
                used: bs * blocks,
            }
        } else {
            Geom {
                n,
                runs: blocks,
                count: epb,
                stride: bs,
                used: (epb * n).div_ceil(8),
            }
        }
    }

    /// Values of all runs.
    fn values(self) -> usize {
        self.runs * self.count
    }

    /// Bytes of all runs.
    fn bytes(self) -> usize {
        self.runs * self.stride
    }

    /// Calls `f(value, byte, r, byte_mask)` for every 16-value step, in increasing address
    /// order: the step's first value index and byte offset in the whole run, `r` values left
    /// in its run (16 for full steps, a constant, so full steps need no mask arithmetic) and
    /// the mask of the step's `min(2N, ceil(r·N/8))` bytes — for a partial step possibly all
    /// bytes to the run's end, then the step also writes the padding. Otherwise, after each run,
    /// `pad(byte, len)` gets the range of its zero padding (`len` may be 0).
    ///
    /// `ahead(value, byte)` runs before every step, for the caller's prefetches.
    #[inline(always)]
    fn each_step(
        self,
        mut ahead: impl FnMut(usize, usize),
        mut f: impl FnMut(usize, usize, usize, u64),
        mut pad: impl FnMut(usize, usize),
    ) {
        let mut f = |i: usize, at: usize, r: usize, m: u64| {
            ahead(i, at);
            f(i, at, r, m);
        };
        let n = self.n;
        let full_mask = (1u64 << (2 * n)) - 1;
        let (full, rem) = (self.count / 16, self.count % 16);
        // When the partial step's bytes reach to within 64 bytes of the run's end, its mask
        // covers the run's padding too: compression writes zeros there (every packing puts
        // zeros past the step's data), decompression reads bytes it ignores (lanes ≥ r).
        let tail = self.stride - 2 * n * full;
        let (rem_mask, padded) = if rem > 0 && tail <= 64 {
            (u64::MAX >> (64 - tail), true)
        } else {
            ((1u64 << (rem * n).div_ceil(8)) - 1, false)
        };
        let (mut v, mut b) = (0, 0);
        // The 64-byte format at N = 11..=15 and 17..=24: one or two full steps and a partial
        // one per block, its mask reaching the block's end. Loops of that fixed shape, with no
        // per-block branch on the shape (LLVM does not unswitch the general loop below), run
        // the in-cache decode 1.1–1.3× faster.
        if rem > 0 && padded && (full == 1 || full == 2) {
            let (a, c) = (16 * full, 2 * n * full);
            if full == 1 {
                for _ in 0..self.runs {
                    f(v, b, 16, full_mask);
                    f(v + a, b + c, rem, rem_mask);
                    v += self.count;
                    b += self.stride;
                }
            } else {
                for _ in 0..self.runs {
                    f(v, b, 16, full_mask);
                    f(v + 16, b + 2 * n, 16, full_mask);
                    f(v + a, b + c, rem, rem_mask);
                    v += self.count;
                    b += self.stride;
                }
            }
            return;
        }
        for _ in 0..self.runs {
            if full <= 2 {
                // Small blocks (the 64-byte format at N >= 9): no loop counter.
                if full > 0 {
                    f(v, b, 16, full_mask);
                }
                if full > 1 {
                    f(v + 16, b + 2 * n, 16, full_mask);
                }
            } else {
                for k in 0..full {
                    f(v + 16 * k, b + 2 * n * k, 16, full_mask);
                }
            }
            if rem > 0 {
                f(v + 16 * full, b + 2 * n * full, rem, rem_mask);
            }
            if !padded {
                pad(b + self.used, self.stride - self.used);
            }
            v += self.count;
            b += self.stride;
        }
    }
}

/// The tables of `run`'s width and the geometry of the whole blocks that both `values`
/// values and `bytes` bytes hold.
fn plan(run: Run, values: usize, bytes: usize) -> Option<(&'static Z512, Geom)> {
    let (n, bs, epb) = (
        usize::from(run.bits.get()),
        run.block_size.bytes(),
        run.values_per_block(),
    );
    let t = Z512_TABLES.get(n)?;
    let blocks = values.checked_div(epb)?.min(bytes / bs);
    Some((t, Geom::new(n, bs, blocks)))
}

/// Decompresses whole blocks of `run`.
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL, DQ and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
pub(crate) unsafe fn decompress<T: Lanes>(run: Run, input: &[u8], scale: T, output: &mut [T]) {
    // SAFETY: the CPU features of this function.
    let sc = unsafe { T::splat(scale) };
    // SAFETY: the CPU features as above; `Geom::each_step` passes r = values left from k.
    let store = |o: &mut [T], k: usize, r: usize, v: __m512i| unsafe { T::store(o, k, r, v, sc) };
    let Some((t, g)) = plan(run, output.len(), input.len()) else {
        return;
    };
    let (Some(bin), Some(bout)) = (input.get(..g.bytes()), output.get_mut(..g.values())) else {
        return;
    };
    let signed = run.signed();
    let n = g.n;
    let src = bin.as_ptr();
    let op = bout.as_ptr();
    let ahead = |i: usize, at: usize| {
        prefetch_in(src.wrapping_add(at));
        prefetch_out(op.wrapping_add(i));
    };
    let nopad = |_: usize, _: usize| {};
    // SAFETY (every load below): `each_step` gives masks covering bytes [at, at + min(2N,
    // ceil(rN/8))), or for a partial step at most the bytes up to its run's end; all inside
    // `bin`. Masked-off bytes are not accessed.
    // N = 8 and 16: a step's bytes sign- or zero-extended to dwords.
    // A full step loads all its bytes (16 for N = 8, 32 for N = 16), a partial one only the
    // bytes of its mask `m` (as the mask type `$m`).
    macro_rules! widen {
        ($load:ident, $maskz_load:ident, $m:ty, $ext:ident) => {
            g.each_step(
                ahead,
                |i, at, r, m| {
                    let p = src.wrapping_add(at);
                    let b = if r >= 16 {
                        // SAFETY: see above (a full step's mask covers all its bytes).
                        unsafe { $load(p.cast()) }
                    } else {
                        // SAFETY: see above; bytes outside the mask are not accessed.
                        unsafe { $maskz_load(m as $m, p.cast()) }
                    };
                    store(bout, i, r, $ext(b));
                },
                nopad,
            )
        };
    }
    use _mm_loadu_si128 as load16;
    use _mm_maskz_loadu_epi8 as maskz_load16;
    use _mm256_loadu_si256 as load32;
    use _mm256_maskz_loadu_epi8 as maskz_load32;
    match (n, signed) {
        (8, true) => widen!(load16, maskz_load16, u16, _mm512_cvtepi8_epi32),
        (8, false) => widen!(load16, maskz_load16, u16, _mm512_cvtepu8_epi32),
        (16, true) => widen!(load32, maskz_load32, u32, _mm512_cvtepi16_epi32),
        (16, false) => widen!(load32, maskz_load32, u32, _mm512_cvtepu16_epi32),
        (24, _) => {
            let table = DEC24.get(usize::from(signed)).copied().unwrap_or([0; 64]);
            // SAFETY: `table` is a local array of 64 bytes; unaligned load.
            let idx = unsafe { _mm512_loadu_si512(table.as_ptr().cast()) };
            let field = |at: usize, m: u64| {
                // SAFETY: see above.
                unsafe { _mm512_maskz_loadu_epi8(m, src.wrapping_add(at).cast()) }
            };
            if signed {
                g.each_step(
                    ahead,
                    |i, at, r, m| {
                        let v = _mm512_permutexvar_epi8(idx, field(at, m));
                        store(bout, i, r, _mm512_srai_epi32::<8>(v))
                    },
                    nopad,
                );
            } else {
                g.each_step(
                    ahead,
                    |i, at, r, m| {
                        let v =
                            _mm512_maskz_permutexvar_epi8(0x7777_7777_7777_7777, idx, field(at, m));
                        store(bout, i, r, v)
                    },
                    nopad,
                );
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
            let fields = |at: usize, m: u64| {
                // SAFETY: see above.
                let b = unsafe { _mm512_maskz_loadu_epi8(m, src.wrapping_add(at).cast()) };
                _mm512_multishift_epi64_epi8(ctrl, _mm512_permutexvar_epi8(idx, b))
            };
            if signed {
                g.each_step(
                    ahead,
                    |i, at, r, m| store(bout, i, r, _mm512_sra_epi32(fields(at, m), cnt)),
                    nopad,
                );
            } else {
                g.each_step(
                    ahead,
                    |i, at, r, m| store(bout, i, r, _mm512_srl_epi32(fields(at, m), cnt)),
                    nopad,
                );
            }
        }
    }
}
