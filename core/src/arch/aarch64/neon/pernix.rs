//! NEON PERNIX kernels.
//!
//! A step handles one 8-value group of N bytes (8 values of N bits are exactly N bytes).
//!
//! * Compression: quantize 8 values (two `float32x4`, or four `float64x2` narrowed with `uzp1`),
//!   mask to N bits, merge pairs into 64-bit lanes of `2N` bits (`ushr`/`ushl`/`orr`); for
//!   N ≤ 16 merge once more (`uzp1`/`uzp2`, 4N ≤ 64 bits per lane) and form the 128-bit
//!   group `h0 | h1 << 4N` in registers (`ext`/`ushl`/`orr`), stored with one 16-byte store;
//!   for N > 16 the two `4N`-bit halves are assembled in 128-bit integers (the second at its
//!   byte position `⌊4N/8⌋`, carrying the shared byte).
//! * Decompression: one 32-byte load at the group start, two `tbl` (`vqtbl2q_u8`) gather the
//!   4 bytes starting at byte `⌊iN/8⌋` into dword `i`, `ushl` by `32 − N − (iN mod 8)` moves the
//!   field's top bit to bit 31 and a shift right by `32 − N` (arithmetic when signed) extracts
//!   it; `scvtf` (+ `sxtl` for f64) and `fmul` scale it.
//!
//! The bit width is a const generic for compression (one `match`, so the shift vectors are
//! constants) and a table lookup for decompression (one kernel per element type).
//!
//! Loads and stores of a step may run past the group's N bytes (32 bytes are read; 16 bytes
//! resp. `⌊4N/8⌋ + 16` are written): they are done in place only when they stay inside the
//! whole input/output slice, else through a small stack buffer. Writes past the group only
//! touch bytes that are written again later (the rest of the block, or the next block), in
//! increasing address order. Bytes read past a field are shifted out, so they never matter.

use crate::arch::generic::pernix::{by_width, compress_groups, group_of, lanes};
use crate::types::{Run, with_width};
use core::arch::aarch64::*;

/// Decompression tables of one bit width `N`.
#[derive(Clone, Copy)]
struct Dec {
    /// `tbl` indices: dword `i` gathers the 4 group bytes starting at byte `⌊iN/8⌋`.
    idx: [u8; 32],
    /// Left shift of dword `i`: `32 − N − (iN mod 8)`, which puts the field's top bit at 31.
    shl: [i32; 8],
}

#[allow(clippy::indexing_slicing)] // evaluated at compile time
const fn dec(n: usize) -> Dec {
    let mut t = Dec {
        idx: [0; 32],
        shl: [0; 8],
    };
    if n == 0 {
        return t;
    }
    let mut i = 0;
    while i < 8 {
        let b = i * n / 8;
        let mut k = 0;
        while k < 4 {
            // b + k <= ⌊7·24/8⌋ + 3 = 24 < 32: always a valid index into the 32 loaded bytes.
            t.idx[4 * i + k] = (b + k) as u8;
            k += 1;
        }
        t.shl[i] = (32 - n - i * n % 8) as i32;
        i += 1;
    }
    t
}

/// [`Dec`] for every bit width (index 0 unused).
#[allow(clippy::indexing_slicing)] // evaluated at compile time
static DEC: [Dec; 25] = by_width!(dec);

/// Bytes one decompression step reads from the group start.
const LOAD: usize = 32;
/// Bytes one compression step may write from the group start (N > 16: `⌊4N/8⌋ + 16 <= 28`).
const SPAN: usize = 28;

/// Loop-invariant vectors of one compression call.
#[derive(Clone, Copy)]
pub(crate) struct Quant<V> {
    inv: V,
    lo: V,
    hi: V,
    mask: uint32x4_t,
}

/// 8 codes (low N bits each, values 0..3 in `a`, 4..7 in `b`) → four 64-bit lanes of `2N`
/// bits (values `2j`, `2j+1` in lane `j`): `c0 | c1 << N`.
#[inline]
#[target_feature(enable = "neon")]
fn pairs<const N: usize>(a: uint32x4_t, b: uint32x4_t) -> (uint64x2_t, uint64x2_t) {
    let n = vdupq_n_s64(N as i64);
    let lo32 = vdupq_n_u64(0xFFFF_FFFF);
    let wa = vreinterpretq_u64_u32(a);
    let wb = vreinterpretq_u64_u32(b);
    (
        vorrq_u64(vandq_u64(wa, lo32), vshlq_u64(vshrq_n_u64::<32>(wa), n)),
        vorrq_u64(vandq_u64(wb, lo32), vshlq_u64(vshrq_n_u64::<32>(wb), n)),
    )
}

/// N ≤ 16: the whole group (`8N <= 128` bits) as one vector, bytes past `N` zero.
#[inline]
#[target_feature(enable = "neon")]
fn assemble_narrow<const N: usize>(a: uint32x4_t, b: uint32x4_t) -> uint8x16_t {
    let (pa, pb) = pairs::<N>(a, b);
    let e = vuzp1q_u64(pa, pb); // [p0, p2]
    let o = vuzp2q_u64(pa, pb); // [p1, p3]
    // h = [h0, h1]: values 0..3 and 4..7, 4N <= 64 bits each.
    let h = vorrq_u64(e, vshlq_u64(o, vdupq_n_s64(2 * N as i64)));
    // The 128-bit h0 | h1 << 4N: lane 0 = h0 | h1 << 4N, lane 1 = h1 >> (64 − 4N)
    // (a register shift by −64 gives 0).
    if N == 16 {
        return vreinterpretq_u8_u64(h); // 4N = 64: h already is the group
    }
    let k = 4 * N as i64;
    // SAFETY: both arrays are 2 i64 (16 bytes).
    let (s1, s2) = unsafe {
        (
            vld1q_s64([0, k - 64].as_ptr()),
            vld1q_s64([k, -64].as_ptr()),
        )
    };
    let v1 = vshlq_u64(h, s1);
    let v2 = vshlq_u64(vextq_u64::<1>(h, h), s2);
    vreinterpretq_u8_u64(vorrq_u64(v1, v2))
}

/// N > 16: values 0..3 as `low` (4N bits) and 4..7 as `high`, already positioned for byte
/// `⌊4N/8⌋` (carrying the byte the halves share when 4N is not a multiple of 8).
#[inline]
#[target_feature(enable = "neon")]
fn assemble_wide<const N: usize>(a: uint32x4_t, b: uint32x4_t) -> (u128, u128) {
    let (pa, pb) = pairs::<N>(a, b);
    let p0 = u128::from(vgetq_lane_u64::<0>(pa));
    let p1 = u128::from(vgetq_lane_u64::<1>(pa));
    let p2 = u128::from(vgetq_lane_u64::<0>(pb));
    let p3 = u128::from(vgetq_lane_u64::<1>(pb));
    let low = p0 | (p1 << (2 * N));
    let high = p2 | (p3 << (2 * N));
    let byte = 4 * N / 8;
    (low, (high << (4 * N % 8)) | (low >> (8 * byte)))
}

/// The group's bytes as `(low, high)` for [`write_group`].
#[inline]
#[target_feature(enable = "neon")]
fn assemble<const N: usize>(a: uint32x4_t, b: uint32x4_t) -> (u128, u128) {
    if N <= 16 {
        let v = vreinterpretq_u64_u8(assemble_narrow::<N>(a, b));
        let lo = u128::from(vgetq_lane_u64::<0>(v));
        let hi = u128::from(vgetq_lane_u64::<1>(v));
        (lo | (hi << 64), 0)
    } else {
        assemble_wide::<N>(a, b)
    }
}

/// Writes the 16 bytes of `low` at `dst[0..]` and (N > 16) of `high` at `dst[⌊4N/8⌋..]`.
#[inline(always)]
fn write_group<const N: usize>(dst: &mut [u8], (low, high): (u128, u128)) {
    if let Some(d) = dst.first_chunk_mut::<16>() {
        *d = low.to_le_bytes();
    }
    if N > 16
        && let Some(d) = dst
            .get_mut(4 * N / 8..)
            .and_then(|d| d.first_chunk_mut::<16>())
    {
        *d = high.to_le_bytes();
    }
}

/// Writes a group at byte `at` of `out`: `bytes` bytes of it are meaningful; more (zeros or
/// bytes rewritten later) may be written after them when `out` has room.
#[inline(always)]
fn put_group<const N: usize>(out: &mut [u8], at: usize, bytes: usize, g: (u128, u128)) {
    if let Some(dst) = out.get_mut(at..at + SPAN) {
        write_group::<N>(dst, g);
    } else {
        let mut buf = [0u8; 32];
        write_group::<N>(&mut buf, g);
        for (d, s) in out.iter_mut().skip(at).take(bytes).zip(buf) {
            *d = s;
        }
    }
}

/// What the NEON kernels do differently for f32 and f64.
pub(crate) trait Lanes: Copy + Default {
    /// A vector of `Self` (4 f32 or 2 f64).
    type V: Copy;

    /// `x` in every lane.
    ///
    /// # Safety
    /// The CPU must support NEON (as for every method of this trait).
    unsafe fn splat(x: Self) -> Self::V;

    /// The loop-invariant vectors of a compression at `n` bits with inverse scale `inv`.
    ///
    /// # Safety
    /// See `splat`.
    unsafe fn quant(inv: Self, n: u32) -> Quant<Self::V>;

    /// The codes of the 8 values `g` (values 0..3, 4..7), quantized with `q` and masked to N
    /// bits. fmax/fmin keep a NaN, which fcvtns converts to 0 (code 0).
    ///
    /// # Safety
    /// NEON.
    unsafe fn codes(q: &Quant<Self::V>, g: &[Self; 8]) -> (uint32x4_t, uint32x4_t);

    /// Converts the 8 fields `(a, b)` times `sc` into `d`.
    ///
    /// # Safety
    /// NEON.
    unsafe fn store(d: &mut [Self; 8], fields: (int32x4_t, int32x4_t), sc: Self::V);
}

lanes! {
    "neon", vdupq_n_u32;
    f32, float32x4_t, vdupq_n_f32 {
        unsafe fn codes(q: &Quant<float32x4_t>, g: &[f32; 8]) -> (uint32x4_t, uint32x4_t) {
            // SAFETY: `g` is 8 floats; two unaligned 16-byte loads inside it.
            let (a, b) = unsafe { (vld1q_f32(g.as_ptr()), vld1q_f32(g.as_ptr().wrapping_add(4))) };
            let code = |x| {
                let c = vminq_f32(vmaxq_f32(vmulq_f32(x, q.inv), q.lo), q.hi);
                vandq_u32(vreinterpretq_u32_s32(vcvtnq_s32_f32(c)), q.mask)
            };
            (code(a), code(b))
        }
        unsafe fn store(d: &mut [f32; 8], (a, b): (int32x4_t, int32x4_t), sc: float32x4_t) {
            let fa = vmulq_f32(vcvtq_f32_s32(a), sc);
            let fb = vmulq_f32(vcvtq_f32_s32(b), sc);
            let p = d.as_mut_ptr();
            // SAFETY: `d` is 8 floats; two unaligned 16-byte stores inside it.
            unsafe {
                vst1q_f32(p, fa);
                vst1q_f32(p.wrapping_add(4), fb);
            }
        }
    }
    f64, float64x2_t, vdupq_n_f64 {
        unsafe fn codes(q: &Quant<float64x2_t>, g: &[f64; 8]) -> (uint32x4_t, uint32x4_t) {
            let p = g.as_ptr();
            // SAFETY: `g` is 8 doubles; four unaligned 16-byte loads inside it.
            let v = unsafe {
                [
                    vld1q_f64(p),
                    vld1q_f64(p.wrapping_add(2)),
                    vld1q_f64(p.wrapping_add(4)),
                    vld1q_f64(p.wrapping_add(6)),
                ]
            };
            let code = |a, b| {
                let ca = vminq_f64(vmaxq_f64(vmulq_f64(a, q.inv), q.lo), q.hi);
                let cb = vminq_f64(vmaxq_f64(vmulq_f64(b, q.inv), q.lo), q.hi);
                // Low dwords of the two's-complement i64 codes.
                let v = vuzp1q_u32(
                    vreinterpretq_u32_s64(vcvtnq_s64_f64(ca)),
                    vreinterpretq_u32_s64(vcvtnq_s64_f64(cb)),
                );
                vandq_u32(v, q.mask)
            };
            (code(v[0], v[1]), code(v[2], v[3]))
        }
        unsafe fn store(d: &mut [f64; 8], (a, b): (int32x4_t, int32x4_t), sc: float64x2_t) {
            let f = [
                vmulq_f64(vcvtq_f64_s64(vmovl_s32(vget_low_s32(a))), sc),
                vmulq_f64(vcvtq_f64_s64(vmovl_high_s32(a)), sc),
                vmulq_f64(vcvtq_f64_s64(vmovl_s32(vget_low_s32(b))), sc),
                vmulq_f64(vcvtq_f64_s64(vmovl_high_s32(b)), sc),
            ];
            let p = d.as_mut_ptr();
            // SAFETY: `d` is 8 doubles; four unaligned 16-byte stores inside it.
            unsafe {
                vst1q_f64(p, f[0]);
                vst1q_f64(p.wrapping_add(2), f[1]);
                vst1q_f64(p.wrapping_add(4), f[2]);
                vst1q_f64(p.wrapping_add(6), f[3]);
            }
        }
    }
}

/// Compresses whole blocks of `run`.
///
/// # Safety
/// The CPU must support NEON.
#[target_feature(enable = "neon")]
pub(crate) unsafe fn compress<T: Lanes>(run: Run, input: &[T], inv: T, output: &mut [u8]) {
    let bs = run.block_size.bytes();
    with_width!(run.bits, compress_n::<_, T>, (bs, input, inv, output));
}

#[inline(never)] // one call per run; a named symbol for the instruction counts
#[target_feature(enable = "neon")]
fn compress_n<const N: usize, T: Lanes>(bs: usize, input: &[T], inv: T, output: &mut [u8]) {
    // SAFETY: NEON (this function's target feature).
    let q = unsafe { T::quant(inv, N as u32) };
    compress_groups(N, bs, input, output, |out, o, g, bytes| {
        // SAFETY: NEON, as above.
        let (a, b) = unsafe { T::codes(&q, &group_of(g)) };
        if N <= 16 && bytes == N && o + 16 <= out.len() {
            let v = assemble_narrow::<N>(a, b);
            // SAFETY: o + 16 <= out.len(): one unaligned 16-byte store inside `out`.
            unsafe { vst1q_u8(out.as_mut_ptr().wrapping_add(o), v) };
        } else {
            put_group::<N>(out, o, bytes, assemble::<N>(a, b));
        }
    });
}

/// The 8 fields of the group whose 32 loaded bytes are `src`, as i32 (sign-extended when
/// `SIGNED`): values 0..3 and 4..7.
#[inline]
#[target_feature(enable = "neon")]
fn fields<const SIGNED: bool>(
    src: uint8x16x2_t,
    idx: (uint8x16_t, uint8x16_t),
    shl: (int32x4_t, int32x4_t),
    shr: int32x4_t,
) -> (int32x4_t, int32x4_t) {
    let a = vshlq_u32(vreinterpretq_u32_u8(vqtbl2q_u8(src, idx.0)), shl.0);
    let b = vshlq_u32(vreinterpretq_u32_u8(vqtbl2q_u8(src, idx.1)), shl.1);
    if SIGNED {
        (
            vshlq_s32(vreinterpretq_s32_u32(a), shr),
            vshlq_s32(vreinterpretq_s32_u32(b), shr),
        )
    } else {
        (
            vreinterpretq_s32_u32(vshlq_u32(a, shr)),
            vreinterpretq_s32_u32(vshlq_u32(b, shr)),
        )
    }
}

/// The 32 bytes at `at` of `rest` (bytes past its end read as 0).
#[inline]
#[target_feature(enable = "neon")]
fn load_padded(rest: &[u8], at: usize) -> uint8x16x2_t {
    let mut buf = [0u8; LOAD];
    for (d, s) in buf.iter_mut().zip(rest.iter().skip(at)) {
        *d = *s;
    }
    // SAFETY: `buf` has 32 bytes.
    unsafe { vld1q_u8_x2(buf.as_ptr()) }
}

/// Walks the groups of every block, handing each group's fields to `store` with the group's
/// 8 output values (a block's last, partial group goes through a local buffer).
#[inline(never)] // one call per run; a named symbol for the instruction counts
#[target_feature(enable = "neon")]
fn decompress_blocks<const SIGNED: bool, T: Copy + Default>(
    n: usize,
    bs: usize,
    input: &[u8],
    output: &mut [T],
    store: impl Fn(&mut [T; 8], (int32x4_t, int32x4_t)),
) {
    let Some(t) = DEC.get(n) else {
        return;
    };
    if n == 0 || bs == 0 {
        return;
    }
    let epb = bs * 8 / n;
    if epb == 0 {
        return;
    }
    // SAFETY: the tables are plain arrays (32 bytes, 8 i32); unaligned loads inside them.
    let (idx, shl) = unsafe {
        (
            (
                vld1q_u8(t.idx.as_ptr()),
                vld1q_u8(t.idx.as_ptr().wrapping_add(16)),
            ),
            (
                vld1q_s32(t.shl.as_ptr()),
                vld1q_s32(t.shl.as_ptr().wrapping_add(4)),
            ),
        )
    };
    let shr = vdupq_n_s32(-(32 - n as i32));
    for (b, bout) in output.chunks_exact_mut(epb).enumerate() {
        let rest = input.get(b * bs..).unwrap_or(&[]);
        // Groups whose 32-byte load lies inside the input: g·n + 32 <= rest.len().
        let fast = match rest.len().checked_sub(LOAD) {
            Some(room) => room / n + 1,
            None => 0,
        };
        let (full, partial) = bout.as_chunks_mut::<8>();
        let split = fast.min(full.len());
        let (full_fast, full_slow) = full.split_at_mut(split);
        let p = rest.as_ptr();
        for (g, gout) in full_fast.iter_mut().enumerate() {
            // SAFETY: g < fast, so the 32 bytes at g·n are inside `rest`.
            let src = unsafe { vld1q_u8_x2(p.wrapping_add(g * n)) };
            store(gout, fields::<SIGNED>(src, idx, shl, shr));
        }
        for (g, gout) in (split..).zip(full_slow.iter_mut()) {
            store(
                gout,
                fields::<SIGNED>(load_padded(rest, g * n), idx, shl, shr),
            );
        }
        if !partial.is_empty() {
            let src = load_padded(rest, full.len() * n);
            let mut buf = [T::default(); 8];
            store(&mut buf, fields::<SIGNED>(src, idx, shl, shr));
            for (d, s) in partial.iter_mut().zip(buf) {
                *d = s;
            }
        }
    }
}

/// Decompresses whole blocks of `run`.
///
/// # Safety
/// The CPU must support NEON.
#[target_feature(enable = "neon")]
pub(crate) unsafe fn decompress<T: Lanes>(run: Run, input: &[u8], scale: T, output: &mut [T]) {
    // SAFETY: NEON (this function's target feature).
    let sc = unsafe { T::splat(scale) };
    // SAFETY: NEON, as above.
    let store = |d: &mut [T; 8], f: (int32x4_t, int32x4_t)| unsafe { T::store(d, f, sc) };
    let (n, bs) = (usize::from(run.bits.get()), run.block_size.bytes());
    if run.signed() {
        decompress_blocks::<true, T>(n, bs, input, output, store);
    } else {
        decompress_blocks::<false, T>(n, bs, input, output, store);
    }
}
