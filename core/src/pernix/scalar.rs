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

use super::{BitWidth, BlockSize, PernixFloat, elements_per_block};

/// A group of 8 values of at most 24 bits spans at most 192 bits: three 64-bit words.
type GroupWords = [u64; 3];

/// Calls `$f::<N, G…>($args)` for the runtime bit width `$bits` (written `f::<_, G…>`).
macro_rules! with_width {
    ($bits:expr, $f:ident :: <_ $(, $g:ty)*>, ($($arg:expr),* $(,)?)) => {
        match $bits.get() {
            1 => $f::<1 $(, $g)*>($($arg),*), 2 => $f::<2 $(, $g)*>($($arg),*),
            3 => $f::<3 $(, $g)*>($($arg),*), 4 => $f::<4 $(, $g)*>($($arg),*),
            5 => $f::<5 $(, $g)*>($($arg),*), 6 => $f::<6 $(, $g)*>($($arg),*),
            7 => $f::<7 $(, $g)*>($($arg),*), 8 => $f::<8 $(, $g)*>($($arg),*),
            9 => $f::<9 $(, $g)*>($($arg),*), 10 => $f::<10 $(, $g)*>($($arg),*),
            11 => $f::<11 $(, $g)*>($($arg),*), 12 => $f::<12 $(, $g)*>($($arg),*),
            13 => $f::<13 $(, $g)*>($($arg),*), 14 => $f::<14 $(, $g)*>($($arg),*),
            15 => $f::<15 $(, $g)*>($($arg),*), 16 => $f::<16 $(, $g)*>($($arg),*),
            17 => $f::<17 $(, $g)*>($($arg),*), 18 => $f::<18 $(, $g)*>($($arg),*),
            19 => $f::<19 $(, $g)*>($($arg),*), 20 => $f::<20 $(, $g)*>($($arg),*),
            21 => $f::<21 $(, $g)*>($($arg),*), 22 => $f::<22 $(, $g)*>($($arg),*),
            23 => $f::<23 $(, $g)*>($($arg),*), _ => $f::<24 $(, $g)*>($($arg),*),
        }
    };
}
#[allow(unused_imports)] // used by the SIMD backends
pub(crate) use with_width;

/// The code range `[lo, hi]` of bit width `N`: `[0, 1]` for N = 1, else `[−2^(N−1), 2^(N−1)−1]`.
pub const fn code_range(n: u32) -> (i32, i32) {
    if n == 1 {
        (0, 1)
    } else {
        (-(1 << (n - 1)), (1 << (n - 1)) - 1)
    }
}

/// Packs 8 codes (each already reduced to its low N bits) into the first N bytes of `out`.
#[inline(always)]
fn pack_group<const N: usize>(codes: &[u32; 8], out: &mut [u8]) {
    let mut w: GroupWords = [0; 3];
    for (i, &c) in codes.iter().enumerate() {
        let bit = i * N;
        let (word, shift) = (bit / 64, bit % 64);
        w[word] |= u64::from(c) << shift;
        if shift + N > 64 {
            w[word + 1] |= u64::from(c) >> (64 - shift);
        }
    }
    let bytes = words_to_bytes(w);
    for (o, b) in out.iter_mut().zip(bytes.iter().take(N)) {
        *o = *b;
    }
}

/// Reads the first `min(N, input.len())` bytes of `input` as a group and returns its 8 raw
/// N-bit fields (missing bytes read as 0).
#[inline(always)]
fn unpack_group<const N: usize>(input: &[u8]) -> [u32; 8] {
    let mut bytes = [0u8; 24];
    for (b, i) in bytes.iter_mut().zip(input.iter().take(N)) {
        *b = *i;
    }
    let w = bytes_to_words(bytes);
    let mask = (1u64 << N) - 1;
    let mut raw = [0u32; 8];
    for (i, r) in raw.iter_mut().enumerate() {
        let bit = i * N;
        let (word, shift) = (bit / 64, bit % 64);
        let mut v = w[word] >> shift;
        if shift + N > 64 {
            v |= w[word + 1] << (64 - shift);
        }
        *r = (v & mask) as u32;
    }
    raw
}

#[inline(always)]
fn words_to_bytes(w: GroupWords) -> [u8; 24] {
    let mut bytes = [0u8; 24];
    for (chunk, word) in bytes.chunks_exact_mut(8).zip(w) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    bytes
}

#[inline(always)]
fn bytes_to_words(bytes: [u8; 24]) -> GroupWords {
    let mut w: GroupWords = [0; 3];
    for (word, chunk) in w.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        *word = u64::from_le_bytes(b);
    }
    w
}

/// Quantizes up to 8 values into codes reduced to their low N bits; missing values give 0.
#[inline(always)]
fn quantize_group<const N: usize, T: PernixFloat>(values: &[T], inv: T) -> [u32; 8] {
    let (lo, hi) = code_range(N as u32);
    let mask = ((1u64 << N) - 1) as u32;
    let mut codes = [0u32; 8];
    for (c, &x) in codes.iter_mut().zip(values) {
        *c = (x.quantize(inv, lo, hi) as u32) & mask;
    }
    codes
}

/// Turns raw N-bit fields into values: sign-extended when `SIGNED` (and N > 1), times `scale`.
#[inline(always)]
fn dequantize_group<const N: usize, const SIGNED: bool, T: PernixFloat>(
    raw: [u32; 8],
    scale: T,
    out: &mut [T],
) {
    for (o, r) in out.iter_mut().zip(raw) {
        let v = if SIGNED && N > 1 {
            ((r << (32 - N)) as i32) >> (32 - N)
        } else {
            r as i32
        };
        *o = T::dequantize(v, scale);
    }
}

fn compress_n<const N: usize, T: PernixFloat>(
    block_size: BlockSize,
    input: &[T],
    inv: T,
    output: &mut [u8],
) {
    let bs = block_size.bytes();
    let epb = bs * 8 / N;
    let full = epb / 8 * 8;
    for (block_in, block_out) in input.chunks_exact(epb).zip(output.chunks_exact_mut(bs)) {
        let (main_in, tail_in) = block_in.split_at(full);
        let (main_out, rest_out) = block_out.split_at_mut(full / 8 * N);
        for (g_in, g_out) in main_in.chunks_exact(8).zip(main_out.chunks_exact_mut(N)) {
            pack_group::<N>(&quantize_group::<N, T>(g_in, inv), g_out);
        }
        // Tail: the zero codes of missing values leave the unused bits zero; the rest of the
        // block is zero-filled.
        let tail_bytes = (tail_in.len() * N).div_ceil(8);
        let (tail_out, pad) = rest_out.split_at_mut(tail_bytes.min(rest_out.len()));
        pack_group::<N>(&quantize_group::<N, T>(tail_in, inv), tail_out);
        pad.fill(0);
    }
}

fn decompress_n<const N: usize, const SIGNED: bool, T: PernixFloat>(
    block_size: BlockSize,
    input: &[u8],
    scale: T,
    output: &mut [T],
) {
    let bs = block_size.bytes();
    let epb = bs * 8 / N;
    let full = epb / 8 * 8;
    for (block_in, block_out) in input.chunks_exact(bs).zip(output.chunks_exact_mut(epb)) {
        let (main_out, tail_out) = block_out.split_at_mut(full);
        let (main_in, tail_in) = block_in.split_at(full / 8 * N);
        for (g_in, g_out) in main_in.chunks_exact(N).zip(main_out.chunks_exact_mut(8)) {
            dequantize_group::<N, SIGNED, T>(unpack_group::<N>(g_in), scale, g_out);
        }
        let tail_bytes = (tail_out.len() * N).div_ceil(8);
        let tail_in = tail_in.get(..tail_bytes).unwrap_or(tail_in);
        dequantize_group::<N, SIGNED, T>(unpack_group::<N>(tail_in), scale, tail_out);
    }
}

fn decompress_signed<const N: usize, T: PernixFloat>(
    bs: BlockSize,
    input: &[u8],
    scale: T,
    output: &mut [T],
) {
    decompress_n::<N, true, T>(bs, input, scale, output)
}

fn decompress_unsigned<const N: usize, T: PernixFloat>(
    bs: BlockSize,
    input: &[u8],
    scale: T,
    output: &mut [T],
) {
    decompress_n::<N, false, T>(bs, input, scale, output)
}

/// Compresses `input.len() / elements_per_block` whole blocks into `output`.
///
/// The caller guarantees the lengths (as [`super::Dispatcher`] does); with mismatched lengths
/// the shorter side decides how many blocks are written and nothing panics.
pub fn compress<T: PernixFloat>(
    bits: BitWidth,
    block_size: BlockSize,
    input: &[T],
    inverse_scale: T,
    output: &mut [u8],
) {
    debug_assert_eq!(
        input.len() / elements_per_block(bits, block_size),
        output.len() / block_size.bytes()
    );
    with_width!(
        bits,
        compress_n::<_, T>,
        (block_size, input, inverse_scale, output)
    )
}

/// Decompresses `input.len() / block_size` whole blocks into `output`.
///
/// Lengths as for [`compress`].
pub fn decompress<T: PernixFloat>(
    bits: BitWidth,
    block_size: BlockSize,
    input: &[u8],
    scale: T,
    output: &mut [T],
    sign_values: bool,
) {
    debug_assert_eq!(
        input.len() / block_size.bytes(),
        output.len() / elements_per_block(bits, block_size)
    );
    if sign_values {
        with_width!(
            bits,
            decompress_signed::<_, T>,
            (block_size, input, scale, output)
        )
    } else {
        with_width!(
            bits,
            decompress_unsigned::<_, T>,
            (block_size, input, scale, output)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                compress(bits, bs, input, 1.0, &mut got[..bs.bytes()]);
                assert_eq!(
                    &got[..bs.bytes()],
                    &want[..bs.bytes()],
                    "N={n} BS={}",
                    bs.bytes()
                );
                let mut back = [f64::NAN; 8192];
                decompress(bits, bs, &got[..bs.bytes()], 1.0, &mut back[..epb], true);
                for (i, (&a, &b)) in input.iter().zip(&back[..epb]).enumerate() {
                    assert_eq!(a, b, "N={n} BS={} i={i}", bs.bytes());
                }
            }
        }
    }
}
