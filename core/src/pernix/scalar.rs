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
    out.copy_from_slice(&bytes[..N]);
    out
}

/// Returns the 8 raw N-bit fields of a group of N bytes.
#[inline(always)]
fn unpack_group<const N: usize>(group: &[u8; N]) -> [u32; 8] {
    let mut bytes = [0u8; 24];
    bytes[..N].copy_from_slice(group);
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

fn compress_n<const N: usize, T: PernixFloat>(
    block_size: BlockSize,
    input: &[T],
    inv: T,
    output: &mut [u8],
) {
    let bs = block_size.bytes();
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

fn decompress_n<const N: usize, const SIGNED: bool, T: PernixFloat>(
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
