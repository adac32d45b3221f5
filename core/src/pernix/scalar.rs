//! The portable scalar PERNIX path: the reference every other backend must match byte for byte.
//!
//! It follows the specification directly. A block of `E = floor(BS·8/N)` values is cut into
//! groups of 8 values; 8 values of N bits are exactly N bytes, so group `g` reads values
//! `[8g, 8g+8)` and writes bytes `[g·N, g·N+N)`. Inside a group, value `i` occupies bits
//! `[i·N, i·N+N)` of the little-endian group integer (LSB first). The `E mod 8` tail values are
//! packed the same way into `ceil(tail·N/8)` bytes, and every remaining byte of the block is 0.
//!
//! The bit width is a const generic, so every shift and mask is a constant and the compiler
//! turns the 8-value group into straight-line code it can vectorize; one `match` on N per call
//! selects the instance. Lengths are checked by the caller ([`super::Dispatcher`]); this module
//! only slices with iterators (`chunks_exact`, `zip`) and never panics.
//!
//! [`compress_compact`] / [`decompress_compact`] are the same format with the bit width as a
//! runtime value: one small bit-accumulator loop instead of 24 unrolled instances, and f32 codes
//! of 24 bits rounded without f64 arithmetic (no soft-float routines on an f32-only FPU).
//! [`compress`] and [`decompress`] use them on targets without SIMD backends (anything but
//! x86_64 and aarch64: microcontrollers) and with the `small` feature; elsewhere they are
//! compiled and tested against the unrolled path.
// Where the compact loop serves `compress`/`decompress`, the unrolled instances are unused.
#![cfg_attr(
    any(
        feature = "small",
        not(any(target_arch = "x86_64", target_arch = "aarch64"))
    ),
    allow(dead_code)
)]

use super::{BlockSize, PernixFloat, Run};

/// A group of 8 values of at most 24 bits spans at most 192 bits: three 64-bit words.
type GroupWords = [u64; 3];

pub use crate::types::code_range;
#[allow(unused_imports)] // used by the SIMD backends
pub(crate) use crate::types::with_width;

/// Packs 8 codes (each already reduced to its low N bits) into the N bytes of a group.
#[inline(always)]
fn pack_group<const N: usize>(codes: [u32; 8]) -> [u8; N] {
    let mut w: GroupWords = [0; 3];
    for (i, c) in codes.into_iter().enumerate() {
        let bit = i * N;
        let (word, shift) = (bit / 64, bit % 64);
        // `get_mut`: the indices are in range (word <= 2 for 8 values of <= 24 bits), and this
        // keeps the proof visible to the compiler even where it does not unroll.
        if let Some(x) = w.get_mut(word) {
            *x |= u64::from(c) << shift;
        }
        if shift + N > 64
            && let Some(x) = w.get_mut(word + 1)
        {
            *x |= u64::from(c) >> (64 - shift);
        }
    }
    let mut bytes = [0u8; 24];
    for (chunk, word) in bytes.as_chunks_mut::<8>().0.iter_mut().zip(w) {
        *chunk = word.to_le_bytes();
    }
    let mut out = [0u8; N];
    if let Some(src) = bytes.get(..N) {
        out.copy_from_slice(src); // N <= 24: always
    }
    out
}

/// Returns the 8 raw N-bit fields of a group of N bytes.
#[inline(always)]
fn unpack_group<const N: usize>(group: &[u8; N]) -> [u32; 8] {
    let mut bytes = [0u8; 24];
    if let Some(dst) = bytes.get_mut(..N) {
        dst.copy_from_slice(group); // N <= 24: always
    }
    let mut w: GroupWords = [0; 3];
    for (word, chunk) in w.iter_mut().zip(bytes.as_chunks::<8>().0) {
        *word = u64::from_le_bytes(*chunk);
    }
    let mask = (1u64 << N) - 1;
    core::array::from_fn(|i| {
        let bit = i * N;
        let (word, shift) = (bit / 64, bit % 64);
        let mut v = w.get(word).copied().unwrap_or(0) >> shift;
        if shift + N > 64 {
            v |= w.get(word + 1).copied().unwrap_or(0) << (64 - shift);
        }
        (v & mask) as u32
    })
}

/// Quantizes 8 values into codes reduced to their low N bits.
#[inline(always)]
fn quantize_group<const N: usize, T: PernixFloat>(values: &[T; 8], inv: T) -> [u32; 8] {
    let (lo, hi) = code_range(N as u32);
    let mask = ((1u64 << N) - 1) as u32;
    let mut codes = [0u32; 8];
    for (c, x) in codes.iter_mut().zip(values) {
        *c = x.quantize_bits(inv, lo, hi) & mask;
    }
    codes
}

/// Turns raw N-bit fields into values: sign-extended when `SIGNED` (and N > 1), times `scale`.
#[inline(always)]
fn dequantize_group<const N: usize, const SIGNED: bool, T: PernixFloat>(
    raw: [u32; 8],
    scale: T,
) -> [T; 8] {
    let mut out = [T::ZERO; 8];
    for (o, r) in out.iter_mut().zip(raw) {
        let v = if SIGNED && N > 1 {
            ((r << (32 - N)) as i32) >> (32 - N)
        } else {
            r as i32
        };
        *o = T::dequantize(v, scale);
    }
    out
}

/// The `E mod 8` tail values of a block, zero-padded to a full group (zero codes leave the
/// unused bits zero).
#[inline(always)]
fn padded<T: PernixFloat>(tail: &[T]) -> [T; 8] {
    let mut g = [T::ZERO; 8];
    for (d, s) in g.iter_mut().zip(tail) {
        *d = *s;
    }
    g
}

fn compress_n<const N: usize, T: PernixFloat>(run: Run, input: &[T], inv: T, output: &mut [u8]) {
    let bs = run.block_size.bytes();
    let epb = bs * 8 / N;
    for (block_in, block_out) in input.chunks_exact(epb).zip(output.chunks_exact_mut(bs)) {
        let (groups_in, tail_in) = block_in.as_chunks::<8>();
        let (main_out, rest_out) = block_out.split_at_mut(groups_in.len() * N);
        for (g_in, g_out) in groups_in.iter().zip(main_out.as_chunks_mut::<N>().0) {
            *g_out = pack_group::<N>(quantize_group::<N, T>(g_in, inv));
        }
        // Tail: ceil(tail·N/8) bytes, then zeros to the end of the block.
        let tail = pack_group::<N>(quantize_group::<N, T>(&padded(tail_in), inv));
        let tail_bytes = (tail_in.len() * N).div_ceil(8);
        for (i, o) in rest_out.iter_mut().enumerate() {
            *o = if i < tail_bytes {
                tail.get(i).copied().unwrap_or(0)
            } else {
                0
            };
        }
    }
}

fn decompress_n<const N: usize, T: PernixFloat>(
    run: Run,
    input: &[u8],
    scale: T,
    output: &mut [T],
) {
    if run.sign_values {
        decompress_groups::<N, true, T>(run.block_size, input, scale, output)
    } else {
        decompress_groups::<N, false, T>(run.block_size, input, scale, output)
    }
}

fn decompress_groups<const N: usize, const SIGNED: bool, T: PernixFloat>(
    block_size: BlockSize,
    input: &[u8],
    scale: T,
    output: &mut [T],
) {
    let bs = block_size.bytes();
    let epb = bs * 8 / N;
    for (block_in, block_out) in input.chunks_exact(bs).zip(output.chunks_exact_mut(epb)) {
        let (groups_out, tail_out) = block_out.as_chunks_mut::<8>();
        let (main_in, rest_in) = block_in.split_at(groups_out.len() * N);
        for (g_in, g_out) in main_in.as_chunks::<N>().0.iter().zip(groups_out) {
            *g_out = dequantize_group::<N, SIGNED, T>(unpack_group::<N>(g_in), scale);
        }
        // Tail: only ceil(tail·N/8) bytes are read.
        let tail_bytes = (tail_out.len() * N).div_ceil(8);
        let mut group = [0u8; N];
        for (g, b) in group.iter_mut().zip(rest_in.iter().take(tail_bytes)) {
            *g = *b;
        }
        let values = dequantize_group::<N, SIGNED, T>(unpack_group::<N>(&group), scale);
        for (o, v) in tail_out.iter_mut().zip(values) {
            *o = v;
        }
    }
}

/// Compresses `input.len() / run.values_per_block()` whole blocks into `output`
/// (`run.blocks` is not read).
///
/// The caller guarantees the lengths (as [`super::Dispatcher`] does); with mismatched lengths
/// the shorter side decides how many blocks are written and nothing panics.
pub fn compress<T: PernixFloat>(run: Run, input: &[T], inverse_scale: T, output: &mut [u8]) {
    debug_assert_eq!(
        input.len() / run.values_per_block(),
        output.len() / run.block_size.bytes()
    );
    compress_path(run, input, inverse_scale, output)
}

/// Decompresses `input.len() / run.block_size` whole blocks into `output`, sign-extended when
/// `run.sign_values` (never for N = 1).
///
/// Lengths as for [`compress`].
pub fn decompress<T: PernixFloat>(run: Run, input: &[u8], scale: T, output: &mut [T]) {
    debug_assert_eq!(
        input.len() / run.block_size.bytes(),
        output.len() / run.values_per_block()
    );
    decompress_path(run, input, scale, output)
}

// The path `compress`/`decompress` take: the compact loop on targets without SIMD backends and
// with the `small` feature, else the unrolled instances.
#[cfg(any(
    feature = "small",
    not(any(target_arch = "x86_64", target_arch = "aarch64"))
))]
use {compress_compact as compress_path, decompress_compact as decompress_path};

#[cfg(not(any(
    feature = "small",
    not(any(target_arch = "x86_64", target_arch = "aarch64"))
)))]
use {compress_unrolled as compress_path, decompress_unrolled as decompress_path};

/// [`compress`] by the unrolled instance of `run.bits`.
fn compress_unrolled<T: PernixFloat>(run: Run, input: &[T], inv: T, output: &mut [u8]) {
    with_width!(run.bits, compress_n::<_, T>, (run, input, inv, output))
}

/// [`decompress`] by the unrolled instance of `run.bits`.
fn decompress_unrolled<T: PernixFloat>(run: Run, input: &[u8], scale: T, output: &mut [T]) {
    with_width!(run.bits, decompress_n::<_, T>, (run, input, scale, output))
}

/// Round half to even of an f32 `c` with `|c| <= 2^23`, as two's-complement bits, in f32 and
/// integer arithmetic only: truncation and the fraction `c − trunc(c)` are exact there.
#[inline(always)]
fn round_even_f32(c: f32) -> u32 {
    let t = c as i32;
    let f = c - t as f32;
    let odd = t & 1 != 0;
    let r = if f > 0.5 || (f == 0.5 && odd) {
        t + 1
    } else if f < -0.5 || (f == -0.5 && odd) {
        t - 1
    } else {
        t
    };
    r as u32
}

/// [`PernixFloat::quantize_bits`] with the same result, but for f32 codes wider than 23 bits
/// (N = 24) rounded by [`round_even_f32`] instead of through f64.
#[inline(always)]
fn quantize_code<T: PernixFloat>(x: T, inv: T, lo: i32, hi: i32) -> u32 {
    if T::BYTES == 4 && hi >= (1 << 22) {
        let (x, inv) = (
            f32::from_bits(x.to_bits_u64() as u32),
            f32::from_bits(inv.to_bits_u64() as u32),
        );
        let s = x * inv;
        let (lo_f, hi_f) = (lo as f32, hi as f32);
        let c = if s < lo_f {
            lo_f
        } else if hi_f < s {
            hi_f
        } else {
            s
        };
        round_even_f32(if s.is_nan() { 0.0 } else { c })
    } else {
        x.quantize_bits(inv, lo, hi)
    }
}

/// [`compress`] with the bit width as a runtime value (see the module docs): the block is one
/// LSB-first bit stream of N-bit codes, then zero bytes to its end, which is byte for byte the
/// group layout. Same length contract as [`compress`]; never panics.
pub fn compress_compact<T: PernixFloat>(
    run: Run,
    input: &[T],
    inverse_scale: T,
    output: &mut [u8],
) {
    let n = u32::from(run.bits.get());
    let (lo, hi) = code_range(n);
    let mask = (1u32 << n).wrapping_sub(1);
    let bs = run.block_size.bytes();
    let Some(epb) = (bs * 8).checked_div(n as usize) else {
        return;
    };
    each_block(input, epb, output, bs, |block_in, block_out| {
        let mut out = block_out.iter_mut();
        let (mut acc, mut have) = (0u32, 0u32);
        for &x in block_in {
            acc |= (quantize_code(x, inverse_scale, lo, hi) & mask) << have;
            have += n;
            while have >= 8 {
                if let Some(o) = out.next() {
                    *o = acc as u8;
                }
                acc >>= 8;
                have -= 8;
            }
        }
        // The last partial byte (its unused bits are 0), then zeros.
        if have > 0
            && let Some(o) = out.next()
        {
            *o = acc as u8;
        }
        for o in out {
            *o = 0;
        }
    });
}

/// [`decompress`] with the bit width as a runtime value; reads only the `ceil(E·N/8)` bytes of
/// each block that hold values. Same length contract as [`decompress`]; never panics.
pub fn decompress_compact<T: PernixFloat>(run: Run, input: &[u8], scale: T, output: &mut [T]) {
    let n = u32::from(run.bits.get());
    let mask = (1u32 << n).wrapping_sub(1);
    let bs = run.block_size.bytes();
    let Some(epb) = (bs * 8).checked_div(n as usize) else {
        return;
    };
    // Sign extension by shifting the field to the top and back (never for N = 1).
    let ext = if run.signed() { 32 - n } else { 0 };
    each_block(input, bs, output, epb, |block_in, block_out| {
        let mut src = block_in.iter();
        let (mut acc, mut have) = (0u32, 0u32);
        for o in block_out {
            while have < n {
                acc |= u32::from(src.next().copied().unwrap_or(0)) << have;
                have += 8;
            }
            let raw = acc & mask;
            acc >>= n; // n <= 24
            have -= n;
            *o = T::dequantize(((raw << ext) as i32) >> ext, scale);
        }
    });
}

/// Calls `f(block_in, block_out)` for each pair of whole blocks, `a` items of `input` and `b`
/// of `output` each, in order, until either side runs out (never panics).
#[inline(always)]
fn each_block<I, O>(
    input: &[I],
    a: usize,
    output: &mut [O],
    b: usize,
    mut f: impl FnMut(&[I], &mut [O]),
) {
    let (mut input, mut output) = (input, output);
    while let (Some((block_in, rest_in)), Some((block_out, rest_out))) = (
        input.split_at_checked(a),
        core::mem::take(&mut output).split_at_mut_checked(b),
    ) {
        f(block_in, block_out);
        (input, output) = (rest_in, rest_out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{BitWidth, elements_per_block};

    /// Inputs that probe the quantizer: ties and near-ties at the inverse scale, the clamp
    /// edges, NaN, infinities, huge values, signed zeros, and random values.
    fn probe_values<T: PernixFloat>(bits: BitWidth, inv: T, state: &mut u64, out: &mut [T]) {
        let (lo, hi) = code_range(u32::from(bits.get()));
        for (i, o) in out.iter_mut().enumerate() {
            *state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = *state >> 11;
            let span = (i64::from(hi) - i64::from(lo) + 3) as u64;
            let k = i64::from(lo) - 1 + (r % span) as i64;
            let special = [
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e300,
                -1e300,
                0.0,
                -0.0,
                f64::from(hi) + 0.5,
                f64::from(lo) - 0.5,
            ];
            let base = match i % 4 {
                // An exact tie or a neighbour of one, in code units.
                0 => k as f64 + 0.5,
                1 => f64::from_bits((k as f64 + 0.5).to_bits() + 1),
                2 => special[(r >> 40) as usize % special.len()],
                _ => (k as f64) + ((r >> 20) % 1000) as f64 / 1000.0,
            };
            // To the element type, then undo the inverse scale (roughly: the quantizer sees
            // x·inv, which for inv = 1 is exact).
            let _ = inv;
            *o = T::from_bits_u64(if T::BYTES == 4 {
                u64::from((base as f32).to_bits())
            } else {
                base.to_bits()
            });
        }
    }

    fn compact_matches<T: PernixFloat>(inverse_scales: &[T]) {
        let mut state = 0x0bad_5eed_1234_5678u64;
        for bits in BitWidth::all() {
            for bs in BlockSize::ALL {
                for &inv in inverse_scales {
                    let epb = elements_per_block(bits, bs);
                    let mut input = [T::ZERO; 3 * 8192];
                    let input = &mut input[..3 * epb];
                    probe_values(bits, inv, &mut state, input);
                    let mut want = [0xA5u8; 3 * 1024];
                    let mut got = [0x5Au8; 3 * 1024];
                    let (want, got) = (&mut want[..3 * bs.bytes()], &mut got[..3 * bs.bytes()]);
                    let run = Run::new(bits, bs, 3);
                    with_width!(bits, compress_n::<_, T>, (run, input, inv, want));
                    compress_compact(run, input, inv, got);
                    assert_eq!(got, want, "compress N={} BS={}", bits.get(), bs.bytes());
                    for signed in [true, false] {
                        let scale = T::ONE.div(inv);
                        let mut a = [T::ONE; 3 * 8192];
                        let mut b = [T::ZERO; 3 * 8192];
                        let (a, b) = (&mut a[..3 * epb], &mut b[..3 * epb]);
                        let run = run.with_sign_values(signed);
                        with_width!(bits, decompress_n::<_, T>, (run, want, scale, a));
                        decompress_compact(run, want, scale, b);
                        for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
                            assert_eq!(
                                x.to_bits_u64(),
                                y.to_bits_u64(),
                                "decompress N={} BS={} signed={signed} i={i}",
                                bits.get(),
                                bs.bytes()
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "every width, size, scale: too slow for Miri")]
    fn compact_path_matches_the_unrolled_path_f32() {
        compact_matches::<f32>(&[1.0, 0.75, 3.0e-3, 1.0e7]);
    }

    #[test]
    #[cfg_attr(miri, ignore = "every width, size, scale: too slow for Miri")]
    fn compact_path_matches_the_unrolled_path_f64() {
        compact_matches::<f64>(&[1.0, 0.75, 3.0e-3, 1.0e7]);
    }

    #[test]
    fn compact_f32_rounding_matches_on_24_bit_ties() {
        // Every tie and neighbour of a tie in a band of 24-bit codes, both signs, plus the
        // clamp edges: the f32-only rounding equals the f64 one of the reference.
        let (lo, hi) = code_range(24);
        for base in [0i32, 1, 4_194_300, 8_388_600, -8_388_600, -4_194_300] {
            for k in base - 8..base + 8 {
                let t = k as f32 + 0.5;
                for x in [
                    t,
                    f32::from_bits(t.to_bits() + 1),
                    f32::from_bits(t.to_bits() - 1),
                    k as f32,
                ] {
                    for x in [x, -x] {
                        assert_eq!(
                            quantize_code(x, 1.0f32, lo, hi),
                            x.quantize_bits(1.0, lo, hi),
                            "x={x}"
                        );
                    }
                }
            }
        }
        for x in [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            8388607.5,
            -8388608.5,
            1e30,
        ] {
            assert_eq!(
                quantize_code(x, 1.0f32, lo, hi),
                x.quantize_bits(1.0, lo, hi)
            );
        }
    }

    /// The spec's definition, bit by bit: the block as a little-endian integer equals
    /// Σ (q_i mod 2^N) << (i·N).
    fn model_pack(n: usize, codes: &[u32], out: &mut [u8]) {
        out.fill(0);
        for (i, &c) in codes.iter().enumerate() {
            for b in 0..n {
                if c >> b & 1 == 1 {
                    let k = i * n + b;
                    out[k / 8] |= 1 << (k % 8);
                }
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "every width and size: too slow for Miri")]
    fn packing_matches_the_bit_model_for_every_width_and_size() {
        let mut state = 0x1234_5678_9abc_def0u64;
        for bits in BitWidth::all() {
            let n = bits.get() as usize;
            for bs in BlockSize::ALL {
                let epb = elements_per_block(bits, bs);
                // Integer inputs with inv = 1 quantize to themselves.
                let (lo, hi) = code_range(n as u32);
                let span = (i64::from(hi) - i64::from(lo) + 1) as u64;
                let input: [f64; 8192] = core::array::from_fn(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (i64::from(lo) + ((state >> 11) % span) as i64) as f64
                });
                let input = &input[..epb];
                let codes: [u32; 8192] = core::array::from_fn(|i| {
                    input
                        .get(i)
                        .map_or(0, |&x| (x as i32 as u32) & ((1u64 << n) - 1) as u32)
                });
                let mut want = [0u8; 1024];
                model_pack(n, &codes[..epb], &mut want[..bs.bytes()]);
                let mut got = [0xA5u8; 1024];
                let run = Run::new(bits, bs, 1);
                compress(run, input, 1.0, &mut got[..bs.bytes()]);
                assert_eq!(
                    &got[..bs.bytes()],
                    &want[..bs.bytes()],
                    "N={n} BS={}",
                    bs.bytes()
                );
                let mut back = [f64::NAN; 8192];
                decompress(run, &got[..bs.bytes()], 1.0, &mut back[..epb]);
                for (i, (&a, &b)) in input.iter().zip(&back[..epb]).enumerate() {
                    assert_eq!(a, b, "N={n} BS={} i={i}", bs.bytes());
                }
            }
        }
    }
}
