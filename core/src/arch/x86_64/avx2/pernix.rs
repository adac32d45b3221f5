//! AVX2 kernels (also used by the BMI2 backend).
//!
//! A step handles one 8-value group of N bytes.
//!
//! * Decompression: two 16-byte loads (group byte 0 into the low lane, byte `⌊4N/8⌋` into the
//!   high lane), `vpshufb` gathers each field's 4 bytes into its dword, `vpsllvd` moves the
//!   field's top bit to bit 31 and a shift right by `32−N` (arithmetic when signed) extracts it.
//! * Compression: quantize 8 values (see [`super`]), merge pairs into qwords of `2N` bits, and
//!   assemble the two halves of the group (`4N` bits each) in 128-bit integers.
//!
//! Loads and stores of a step may run past the group's N bytes (up to 16 bytes after
//! `⌊4N/8⌋`, resp. `⌊4N/8⌋ + 16` bytes written): they are done in place only when they stay
//! inside the whole input/output slice, else through a small stack buffer. Writes past the
//! group only touch bytes that are written again later (the rest of the block, or the next
//! block), in increasing address order.

use crate::arch::generic::pernix::{compress_groups, group_of, lanes};
use crate::arch::x86_64::tables::{Y256, Y256_TABLES};
use crate::arch::x86_64::{prefetch_in, prefetch_out};
use crate::types::{PernixFloat, Run, with_width};
use core::arch::x86_64::*;

/// Lane masks for `vmaskmov`: entry r enables the first r dwords.
#[allow(clippy::indexing_slicing)] // evaluated at compile time
static LANE_MASKS: [[i32; 8]; 9] = {
    let mut m = [[0; 8]; 9];
    let mut r = 0;
    while r <= 8 {
        let mut i = 0;
        while i < r {
            m[r][i] = -1;
            i += 1;
        }
        r += 1;
    }
    m
};

#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn lane_mask(r: usize) -> __m256i {
    let m = LANE_MASKS.get(r).copied().unwrap_or([0; 8]);
    // SAFETY: `m` is a local array of 8 i32 (32 bytes); unaligned load.
    unsafe { _mm256_loadu_si256(m.as_ptr().cast()) }
}

/// Loop-invariant vectors of one compression call.
#[derive(Clone, Copy)]
pub(crate) struct Quant<V> {
    inv: V,
    lo: V,
    hi: V,
    mask: __m256i,
}

/// 8 codes as 4 qwords of `2N` bits → the group's `8N` bits as two 128-bit halves, the
/// second already shifted for its byte position `⌊4N/8⌋`. Returns (low half, high half).
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn assemble<const N: usize>(codes: __m256i) -> (u128, u128) {
    let odd = _mm256_sll_epi64(_mm256_srli_epi64::<32>(codes), _mm_cvtsi32_si128(N as i32));
    let lo32 = _mm256_set1_epi64x(0xFFFF_FFFF);
    let w = _mm256_or_si256(_mm256_and_si256(codes, lo32), odd);
    let a = _mm256_castsi256_si128(w);
    let b = _mm256_extracti128_si256::<1>(w);
    let w0 = _mm_cvtsi128_si64(a) as u64 as u128;
    let w1 = _mm_extract_epi64::<1>(a) as u64 as u128;
    let w2 = _mm_cvtsi128_si64(b) as u64 as u128;
    let w3 = _mm_extract_epi64::<1>(b) as u64 as u128;
    let low = w0 | (w1 << (2 * N));
    let high = w2 | (w3 << (2 * N));
    let byte = 4 * N / 8;
    // The byte at `byte` is shared when 4N is not a multiple of 8: carry low's part of it.
    let high = (high << (4 * N % 8)) | (low >> (8 * byte));
    (low, high)
}

/// What the AVX2 kernels do differently for f32 and f64.
pub(crate) trait Lanes: Copy + Default {
    /// A vector of `Self` as wide as 8 values' codes (f64: two halves).
    type V: Copy;

    /// `x` in every lane.
    ///
    /// # Safety
    /// The CPU must support AVX2 (as for every method of this trait).
    unsafe fn splat(x: Self) -> Self::V;

    /// The loop-invariant vectors of a compression at `n` bits with inverse scale `inv`.
    ///
    /// # Safety
    /// See `splat`.
    unsafe fn quant(inv: Self, n: u32) -> Quant<Self::V>;

    /// The codes of the 8 values `g`, quantized with `q` and masked to N bits.
    ///
    /// Operand order: NaN in `x·inv` survives max/min and converts to `0x8000_0000` (code 0).
    ///
    /// # Safety
    /// AVX2.
    unsafe fn codes(q: &Quant<Self::V>, g: &[Self; 8]) -> __m256i;

    /// Stores the 8 fields `v` times `sc` into `o` (its first `min(o.len(), 8)` values).
    ///
    /// # Safety
    /// AVX2.
    unsafe fn store(o: &mut [Self], v: __m256i, sc: Self::V);
}

lanes! {
    "avx2", _mm256_set1_epi32;
    f32, __m256, _mm256_set1_ps {
        unsafe fn codes(q: &Quant<__m256>, g: &[f32; 8]) -> __m256i {
            // SAFETY: `g` is 8 floats (32 bytes); unaligned load.
            let x = unsafe { _mm256_loadu_ps(g.as_ptr()) };
            let c = _mm256_min_ps(q.hi, _mm256_max_ps(q.lo, _mm256_mul_ps(x, q.inv)));
            _mm256_and_si256(_mm256_cvtps_epi32(c), q.mask)
        }
        unsafe fn store(o: &mut [f32], v: __m256i, sc: __m256) {
            let f = _mm256_mul_ps(_mm256_cvtepi32_ps(v), sc);
            if let Some(d) = o.first_chunk_mut::<8>() {
                // SAFETY: `d` is 8 floats (32 bytes); unaligned store.
                unsafe { _mm256_storeu_ps(d.as_mut_ptr(), f) }
            } else {
                // SAFETY: the mask enables only the first `o.len() < 8` lanes, which are inside `o`.
                unsafe { _mm256_maskstore_ps(o.as_mut_ptr(), lane_mask(o.len()), f) }
            }
        }
    }
    f64, __m256d, _mm256_set1_pd {
        unsafe fn codes(q: &Quant<__m256d>, g: &[f64; 8]) -> __m256i {
            // SAFETY: `g` is 8 doubles (64 bytes); unaligned loads of its two halves.
            let (a, b) = unsafe {
                (
                    _mm256_loadu_pd(g.as_ptr()),
                    _mm256_loadu_pd(g.as_ptr().wrapping_add(4)),
                )
            };
            let ca = _mm256_min_pd(q.hi, _mm256_max_pd(q.lo, _mm256_mul_pd(a, q.inv)));
            let cb = _mm256_min_pd(q.hi, _mm256_max_pd(q.lo, _mm256_mul_pd(b, q.inv)));
            let v = _mm256_set_m128i(_mm256_cvtpd_epi32(cb), _mm256_cvtpd_epi32(ca));
            _mm256_and_si256(v, q.mask)
        }
        unsafe fn store(o: &mut [f64], v: __m256i, sc: __m256d) {
            let a = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(v)), sc);
            let b = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256::<1>(v)), sc);
            if let Some(d) = o.first_chunk_mut::<8>() {
                // SAFETY: `d` is 8 doubles (64 bytes); unaligned stores of its two halves.
                unsafe {
                    _mm256_storeu_pd(d.as_mut_ptr(), a);
                    _mm256_storeu_pd(d.as_mut_ptr().wrapping_add(4), b);
                }
            } else {
                let r = o.len();
                // 64-bit lanes: lane i enabled iff dwords 2i, 2i+1 are.
                let ma = lane_mask((2 * r).min(8));
                let mb = lane_mask((2 * r).saturating_sub(8));
                let p = o.as_mut_ptr();
                // SAFETY: the masks enable only lanes below r < 8, which are inside `o`.
                unsafe {
                    _mm256_maskstore_pd(p, ma, a);
                    _mm256_maskstore_pd(p.wrapping_add(4), mb, b);
                }
            }
        }
    }
}

/// Compresses whole blocks of `run`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn compress<T: Lanes>(run: Run, input: &[T], inv: T, output: &mut [u8]) {
    let bs = run.block_size.bytes();
    with_width!(run.bits, compress_n::<_, T>, (bs, input, inv, output));
}

#[target_feature(enable = "avx2")]
fn compress_n<const N: usize, T: Lanes>(bs: usize, input: &[T], inv: T, output: &mut [u8]) {
    // SAFETY: AVX2 (this function's target feature).
    let q = unsafe { T::quant(inv, N as u32) };
    compress_groups(N, bs, input, output, |out, at, g, bytes| {
        prefetch_in(g.as_ptr());
        prefetch_out(out.as_ptr().wrapping_add(at));
        // Whole groups are read in place, the block's last, shorter one zero-padded.
        let codes = match g.first_chunk::<8>() {
            // SAFETY: AVX2, as above.
            Some(whole) => unsafe { T::codes(&q, whole) },
            // SAFETY: AVX2, as above.
            None => unsafe { T::codes(&q, &group_of(g)) },
        };
        put_group::<N>(out, at, bytes, assemble::<N>(codes));
    });
}

/// Writes a group assembled by [`assemble`] at byte `at` of `out`: `bytes` bytes of it are
/// meaningful; more (zeros) may be written after them when `out` has room.
#[inline(always)]
pub(super) fn put_group<const N: usize>(
    out: &mut [u8],
    at: usize,
    bytes: usize,
    (low, high): (u128, u128),
) {
    let byte = 4 * N / 8;
    if let Some(dst) = out.get_mut(at..at + byte + 16) {
        // Low half (its shared last byte is rewritten by the high half, which carries it).
        if let Some(d) = dst.first_chunk_mut::<16>() {
            *d = low.to_le_bytes();
        }
        if let Some(d) = dst.get_mut(byte..).and_then(|d| d.first_chunk_mut::<16>()) {
            *d = high.to_le_bytes();
        }
    } else {
        let mut buf = [0u8; 32];
        if let Some(d) = buf.first_chunk_mut::<16>() {
            *d = low.to_le_bytes();
        }
        if let Some(d) = buf.get_mut(byte..).and_then(|d| d.first_chunk_mut::<16>()) {
            *d = high.to_le_bytes();
        }
        for (d, s) in out.iter_mut().skip(at).take(bytes).zip(buf) {
            *d = s;
        }
    }
}

/// Decompresses whole blocks of `run`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn decompress<T: Lanes>(run: Run, input: &[u8], scale: T, output: &mut [T]) {
    // SAFETY: AVX2 (this function's target feature).
    let sc = unsafe { T::splat(scale) };
    // SAFETY: AVX2, as above.
    let store = |o: &mut [T], v: __m256i| unsafe { T::store(o, v, sc) };
    let (n, bs) = (usize::from(run.bits.get()), run.block_size.bytes());
    decompress_blocks(n, bs, input, output, run.signed(), store);
}

#[inline(always)]
fn decompress_blocks<T>(
    n: usize,
    bs: usize,
    input: &[u8],
    output: &mut [T],
    signed: bool,
    store: impl Fn(&mut [T], __m256i),
) {
    let Some(t) = Y256_TABLES.get(n) else {
        return;
    };
    let epb = bs * 8 / n;
    let groups = epb.div_ceil(8);
    // SAFETY: only called from the AVX2 kernels, whose callers guarantee AVX2.
    let (shuf, shl, cnt) = unsafe { setup(t, n) };
    let h = t.hi_offset;
    for (b, bout) in output.chunks_exact_mut(epb).enumerate() {
        let base = b * bs;
        // A group's loads end before byte (G−1)·N + h + 16 < bs + 28 of its block: when the
        // input has that many bytes from the block start, load in place without checks.
        if let Some(src) = input.get(base..base + bs + 28) {
            let p = src.as_ptr();
            prefetch_in(p);
            prefetch_out(bout.as_ptr());
            if signed {
                for (g, gout) in bout.chunks_mut(8).enumerate().take(groups) {
                    // SAFETY: AVX2 as above; `g·N + h + 16 <= bs + 28` bytes are in `src`.
                    let v = unsafe { unpack_at::<true>(p.wrapping_add(g * n), h, shuf, shl, cnt) };
                    store(gout, v);
                }
            } else {
                for (g, gout) in bout.chunks_mut(8).enumerate().take(groups) {
                    // SAFETY: as above.
                    let v = unsafe { unpack_at::<false>(p.wrapping_add(g * n), h, shuf, shl, cnt) };
                    store(gout, v);
                }
            }
            continue;
        }
        for (g, gout) in bout.chunks_mut(8).enumerate().take(groups) {
            let at = base + g * n;
            // SAFETY: as above.
            let v = unsafe { unpack(t, input, at, shuf, shl, cnt, signed) };
            store(gout, v);
        }
    }
}

/// The 8 fields of the group at `p`.
///
/// # Safety
/// The CPU must support AVX2; 16 bytes at `p` and at `p + h` must be readable.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn unpack_at<const SIGNED: bool>(
    p: *const u8,
    h: usize,
    shuf: __m256i,
    shl: __m256i,
    cnt: __m128i,
) -> __m256i {
    // SAFETY: the caller guarantees both 16-byte ranges.
    let v = unsafe { _mm256_loadu2_m128i(p.wrapping_add(h).cast(), p.cast()) };
    let m = _mm256_sllv_epi32(_mm256_shuffle_epi8(v, shuf), shl);
    if SIGNED {
        _mm256_sra_epi32(m, cnt)
    } else {
        _mm256_srl_epi32(m, cnt)
    }
}

/// # Safety
/// The CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn setup(t: &Y256, n: usize) -> (__m256i, __m256i, __m128i) {
    // SAFETY: the tables are plain arrays of 32 bytes; unaligned loads.
    unsafe {
        (
            _mm256_loadu_si256(t.dec_shuf.as_ptr().cast()),
            _mm256_loadu_si256(t.dec_shl.as_ptr().cast()),
            _mm_cvtsi32_si128(32 - n as i32),
        )
    }
}

/// The 8 fields of the group at byte `at` of `input` (bytes past the input read as 0).
///
/// # Safety
/// The CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn unpack(
    t: &Y256,
    input: &[u8],
    at: usize,
    shuf: __m256i,
    shl: __m256i,
    cnt: __m128i,
    signed: bool,
) -> __m256i {
    let h = t.hi_offset;
    let v = if let Some(src) = input.get(at..at + h + 16) {
        let p = src.as_ptr();
        // SAFETY: `src` has h + 16 bytes: 16 at 0 and 16 at h are inside it.
        unsafe { _mm256_loadu2_m128i(p.wrapping_add(h).cast(), p.cast()) }
    } else {
        let mut buf = [0u8; 48];
        for (d, s) in buf.iter_mut().zip(input.iter().skip(at)) {
            *d = *s;
        }
        let p = buf.as_ptr();
        // SAFETY: `buf` has 48 ≥ h + 16 bytes (h ≤ 12).
        unsafe { _mm256_loadu2_m128i(p.wrapping_add(h).cast(), p.cast()) }
    };
    let m = _mm256_sllv_epi32(_mm256_shuffle_epi8(v, shuf), shl);
    if signed {
        _mm256_sra_epi32(m, cnt)
    } else {
        _mm256_srl_epi32(m, cnt)
    }
}

/// Decompresses `run.blocks` frames (each: the block's scale, `T::BYTES` little-endian, then
/// its `run.block_size` bytes) of `frames` into `run.values_per_block()` values each of
/// `output`: [`crate::pernix::Dispatcher::decompress_frames`]'s loop, fused. Per call, not per
/// block, it sets up the shuffle tables and divides; the width is a constant; and a block's
/// last, shorter group stores all 8 lanes when `output` has room after it (those values belong
/// to the next block and are written again, in increasing address order), so only the run's
/// final block takes a masked store. On Zen 1 the per-block call, division and masked store
/// cost more than the unpacking itself (`fzpack bench --codec pernix`, BENCHMARKS.md).
///
/// The caller has checked `frames.len() >= run.blocks · (bs + T::BYTES)` and
/// `output.len() == run.blocks · run.values_per_block()`. Returns `Err(k)` at the first frame
/// `k` whose scale is not finite and positive: frames `0..k` are decoded, the values of frame
/// `k` and later are unspecified.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn decompress_frames<T: Lanes + PernixFloat>(
    run: Run,
    frames: &[u8],
    output: &mut [T],
) -> Result<(), usize> {
    let (bs, blocks, signed) = (run.block_size.bytes(), run.blocks, run.signed());
    with_width!(
        run.bits,
        frames_n::<_, T>,
        (bs, blocks, signed, frames, output)
    )
}

#[inline(always)]
fn frames_n<const N: usize, T: Lanes + PernixFloat>(
    bs: usize,
    blocks: usize,
    signed: bool,
    frames: &[u8],
    output: &mut [T],
) -> Result<(), usize> {
    // 64-byte blocks (the interchange size, and the one with the fewest groups per block)
    // get a constant group count, so that their block loop has no inner loop control.
    match (signed, bs) {
        (true, 64) => frames_ns::<N, T, true>(64, blocks, frames, output),
        (false, 64) => frames_ns::<N, T, false>(64, blocks, frames, output),
        (true, _) => frames_ns::<N, T, true>(bs, blocks, frames, output),
        (false, _) => frames_ns::<N, T, false>(bs, blocks, frames, output),
    }
}

#[inline(always)]
fn frames_ns<const N: usize, T: Lanes + PernixFloat, const S: bool>(
    bs: usize,
    blocks: usize,
    frames: &[u8],
    output: &mut [T],
) -> Result<(), usize> {
    let Some(t) = Y256_TABLES.get(N) else {
        return Ok(());
    };
    let epb = bs * 8 / N;
    let groups = epb.div_ceil(8);
    let fl = bs + T::BYTES;
    // SAFETY: only called from `decompress_frames`, whose caller guarantees AVX2.
    let (shuf, shl, cnt) = unsafe { setup(t, N) };
    let h = 4 * N / 8; // `t.hi_offset`, as a constant
    for k in 0..blocks {
        let at = k * fl;
        let scale = frames
            .get(at..at + T::BYTES)
            .map(|b| T::from_bits_u64(b.iter().rev().fold(0, |a, &x| (a << 8) | u64::from(x))))
            .filter(|s| s.is_positive_finite())
            .ok_or(k)?;
        // SAFETY: AVX2, as above.
        let sc = unsafe { T::splat(scale) };
        let o0 = k * epb;
        let start = at + T::BYTES;
        prefetch_in(frames.as_ptr().wrapping_add(at));
        prefetch_out(output.as_ptr().wrapping_add(o0));
        // A group's loads end before byte (G−1)·N + h + 16 < bs + 28 of its block, its stores
        // at value 8·G of the block: every frame but the last of the run has both in place.
        let src = frames.get(start..start + bs + 28);
        let dst = output.get_mut(o0..o0 + 8 * groups);
        if let (Some(src), Some(dst)) = (src, dst) {
            let p = src.as_ptr();
            for (g, d) in dst.as_chunks_mut::<8>().0.iter_mut().enumerate() {
                // SAFETY: AVX2 as above; `g·N + h + 16 <= bs + 28` bytes are in `src`.
                let v = unsafe { unpack_at::<S>(p.wrapping_add(g * N), h, shuf, shl, cnt) };
                // SAFETY: AVX2, as above.
                unsafe { T::store(d, v, sc) };
            }
        } else {
            let block = frames.get(start..).unwrap_or_default();
            for g in 0..groups {
                // SAFETY: AVX2, as above; `unpack` checks its loads against `block`.
                let v = unsafe { unpack(t, block, g * N, shuf, shl, cnt, S) };
                let o = output.get_mut(o0 + 8 * g..).unwrap_or_default();
                // SAFETY: AVX2, as above. 8 lanes when `o` has them, else its `len < 8`.
                unsafe { T::store(o, v, sc) };
            }
        }
    }
    Ok(())
}
