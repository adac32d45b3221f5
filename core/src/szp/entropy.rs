//! Entropy coding of one checksum chunk of quantized SZp levels (the codec of an optional
//! entropy-coded block layout: ratio at high speed).
//!
//! A chunk of `n` levels `q₀ … q_{n−1}` (the levels the SZp quantizer gives,
//! [`levels_of`] / [`levels_checked`]) is coded as its first level and the `m = n − 1`
//! zigzagged residuals `uᵢ = zigzag(qᵢ − predᵢ)` of one of three Lorenzo predictors, chosen per
//! chunk by estimated size: order 1 (`predᵢ = qᵢ₋₁`), order 2 (`predᵢ = 2qᵢ₋₁ − qᵢ₋₂`, with
//! `q₋₁ = q₀`) or, when the caller gives the field's row length `r`
//! ([`encode_chunk_rows`]), the 2-D plane within the chunk (`predᵢ = qᵢ₋₁ + qᵢ₋ᵣ − qᵢ₋ᵣ₋₁`
//! for `i > r`, `qᵢ₋₁` for `i ≤ r`) — or none (`predᵢ = 0`: [`encode_values`], for values
//! that are residuals already, such as the interpolation codes of `szp::interp`). All
//! arithmetic wraps in `i64`, so every `i64` sequence round-trips. Each residual maps to a symbol of a 136-letter alphabet: `u < 16` is its own
//! symbol; a larger `u` of bit length `k` (5..=64) is symbol `16 + 2(k − 5) + b`, `b` the bit
//! below its leading one, followed by its `k − 2` low bits as raw *extra bits* (the zstd
//! scheme). Symbols are coded by a 4-way interleaved rANS (32-bit states, 16-bit
//! renormalization, 12-bit probabilities) against a frequency table stored in the chunk; a chunk
//! where that does not pay is stored at one fixed width instead.
//!
//! # Byte layout of a coded chunk
//!
//! The coded chunk's length is known to the reader (the container stores it); `n` is too.
//! `n = 0` is the empty string. Otherwise:
//!
//! | bytes | content |
//! |---|---|
//! | 1 | mode: bits 0..=3 the coding (0 = rANS, 1 = fixed width), bits 4..=7 the predictor (0 = order 1, 1 = order 2, 2 = plane, 3 = none); other values are [`Error::Corrupt`] |
//! | 1..=10 | `zigzag(q₀)` as LEB128 (7 bits a byte, low first, high bit = more) |
//! | 1..=10 | plane only: the row length `r` as LEB128, 2..=[`MAX_PLANE_ROW`] |
//!
//! Fixed width: one byte `w` (0..=64), then the `m` residuals `uᵢ` at `w` bits each,
//! LSB-first, `ceil(m·w / 8)` bytes, pad bits zero; `w` is the bit length of the largest `uᵢ`.
//!
//! rANS, `M = 2¹²`:
//! 1. one byte `S` (1..=136): the symbols are `0..S`, `S − 1` the largest that occurs;
//! 2. the frequencies of symbols `0..S−1` as an LSB-first bit string: per symbol a 4-bit
//!    length `ℓ` (0 for frequency 0, else 1..=13), then, if `ℓ > 0`, the `ℓ − 1` bits of the
//!    frequency below its leading one; padded with zero bits to a byte. The last symbol's
//!    frequency is `M` minus the others' sum, and must be at least 1;
//! 3. LEB128 `E`, then `E` bytes of extra bits: for `i = 1 … m`, the extra bits of the symbol
//!    of `uᵢ` (if any), LSB-first, padded with zero bits (`E = ceil(total / 8)`);
//! 4. the rANS stream to the end of the chunk: four `u32` LE initial states `x₀ … x₃`, then
//!    `u16` LE words. Residual `i` (1-based) is decoded from state `j = (i − 1) mod 4`: with
//!    `slot = x_j mod M`, the symbol `s` is the one with `cum(s) ≤ slot < cum(s) + f(s)`
//!    (`cum` = the sum of the frequencies of smaller symbols), then
//!    `x_j ← f(s)·⌊x_j / M⌋ + slot − cum(s)`, and if `x_j < 2¹⁶` the next word `w` gives
//!    `x_j ← x_j·2¹⁶ + w`. After the last residual every word is consumed and every state is
//!    `2¹⁶` (anything else is [`Error::Corrupt`]).
//!
//! The encoder's choices (predictor, rANS or fixed width, the normalization of the table)
//! are not part of the format: any chunk that follows these rules decodes.
//!
//! # Resources
//!
//! No allocation, no panics on any input. The encoder keeps on the stack (about 40 KiB): the
//! symbols of the first 16384 residuals from its first pass for its second (later ones are
//! computed again), four histograms, the coding table and a block's staged extra bits and
//! rANS words; the decoder a 16 KiB slot table (`M` entries of 4 bytes), a block's symbols
//! and, for plane chunks, a 64 KiB ring of levels. The coded size never exceeds
//! [`max_coded_len`]`(n)`; the encoder wants [`encode_buffer_len`]`(n)` bytes to be sure to
//! succeed (it writes the extra bits before the table is known).
//!
//! # Speed
//!
//! Both directions work a block of 256 residuals at a time: the encoder computes a block's
//! residuals, then (first pass) their symbols, histograms and extra bits (one unaligned
//! 8-byte store a field, into a fixed stage) and (second pass, backward) the rANS steps with a
//! reciprocal multiply for the division; the decoder a block's symbols (the rANS steps), then
//! their extra bits (one 8-byte window a field), levels and values. Groups of four direct
//! symbols skip the extra bits on both sides; groups that cannot reach the end of the words
//! or extra bytes read fixed windows without checks. On x86_64 the encoder runs compiled for
//! AVX2 and BMI2 and the quantizer ([`levels_checked`]) for AVX-512 where the CPU has them
//! (`arch::x86_64::compiled`, the same source: the same bytes). Measured:
//! `benchmarks/results/amd-epyc/2026-12-06-entropy-study-fast.md`.

use super::Error;
use super::blocks::{quantize, reconstruct};
use crate::types::SzpFloat;
use core::hint::select_unpredictable;

/// Probability bits of the rANS coder (`M = 2^PROB_BITS`).
pub const PROB_BITS: u32 = 12;
const M: u32 = 1 << PROB_BITS;
/// Residuals below this are their own symbol.
const DIRECT: u64 = 16;
const DIRECT_BITS: u32 = 4; // log2(DIRECT)
/// Letters of the symbol alphabet: 16 direct, 2 per bit length 5..=64.
pub const ALPHABET: usize = DIRECT as usize + 2 * (64 - DIRECT_BITS as usize);
/// Lower end of the rANS state interval `[L, 2³²)`.
const RANS_L: u32 = 1 << 16;
/// Interleaved rANS states.
const WAYS: usize = 4;

/// Mode byte of an rANS-coded chunk.
pub const MODE_RANS: u8 = 0;
/// Mode byte of a fixed-width chunk.
pub const MODE_FIXED: u8 = 1;
/// Predictor bits of the mode byte (bits 4..=7): order-1 Lorenzo.
pub const PRED_ORDER1: u8 = 0x00;
/// Predictor bits of the mode byte: order-2 Lorenzo.
pub const PRED_ORDER2: u8 = 0x10;
/// Predictor bits of the mode byte: 2-D Lorenzo within the chunk (row length in the header).
pub const PRED_PLANE: u8 = 0x20;
/// Predictor bits of the mode byte: none (the values are the residuals).
pub const PRED_NONE: u8 = 0x30;

/// The largest coded size of a chunk of `n` levels: mode byte, a 10-byte first level, a width
/// byte and 8 bytes a residual (`12 + 8n`, saturating).
pub const fn max_coded_len(n: usize) -> usize {
    n.saturating_mul(8).saturating_add(12)
}

/// Values the quantizer takes at a time (each run is quantized, then checked, while in cache).
const QBLK: usize = 1024;

/// The levels of `xs` into `qs` (as long): the portable SZp kernel's quantizer (a multiply
/// by `1/(2·eb)`, and the exact division for any run with a value near a rounding tie or
/// beyond `2⁴⁷` steps, so every level equals [`quantize`]'s; non-finite values take the exact
/// rule too: an infinity is a near tie, a NaN gives level 0 either way). On targets without an
/// f64 FPU, [`quantize`] itself (its f32 path).
#[inline(always)]
fn quantize_run<T: SzpFloat>(xs: &[T], eb: f64, qs: &mut [i64]) {
    if crate::bits::F32_ONLY_FPU {
        for (q, &x) in qs.iter_mut().zip(xs) {
            *q = quantize(x, eb);
        }
    } else {
        // no deltas wanted: an empty delta buffer
        crate::arch::generic::szp::quantize_block(eb, 0, xs, qs, &mut []);
    }
}

/// The SZp levels of `values` under the quantizer bound `quant_eb` (a plan's
/// [`super::Plan::quant_eb`]): `levels[i] = quantize(values[i], quant_eb)`, the levels every
/// SZp kernel forms, computed as the portable kernel does (a reciprocal multiply, the exact
/// division near rounding ties). [`Error::OutputTooSmall`] if `levels` is shorter than
/// `values`.
pub fn levels_of<T: SzpFloat>(
    values: &[T],
    quant_eb: f64,
    levels: &mut [i64],
) -> Result<(), Error> {
    let Some(levels) = levels.get_mut(..values.len()) else {
        return Err(Error::OutputTooSmall {
            needed: values.len(),
        });
    };
    for (xs, qs) in values.chunks(QBLK).zip(levels.chunks_mut(QBLK)) {
        quantize_run(xs, quant_eb, qs);
    }
    Ok(())
}

/// [`levels_of`] with the strict check of a plan: each reconstruction must be within
/// `plan.bound` of its value (when `plan.strict`), else [`Error::BoundViolated`] at
/// `first_index + i`, the element's index in the field (the first such; `levels` then holds
/// the levels up to its run only). Returns nothing else: `levels` holds the levels of
/// `values`. On x86_64 CPUs with the AVX-512 subsets of the `Avx512Vbmi` token (F, DQ, BW,
/// VL, VBMI) the same source runs compiled for AVX-512 F, DQ, BW and VL
/// (`arch::x86_64::compiled`: the compiler vectorizes the conversions SSE2 lacks); the levels
/// and the first violation are the same.
pub fn levels_checked<T: SzpFloat>(
    values: &[T],
    plan: &super::Plan,
    first_index: usize,
    levels: &mut [i64],
) -> Result<(), Error> {
    let Some(levels) = levels.get_mut(..values.len()) else {
        return Err(Error::OutputTooSmall {
            needed: values.len(),
        });
    };
    let bound = plan.strict.then_some(plan.bound);
    #[cfg(target_arch = "x86_64")]
    let bad = match crate::arch::x86_64::Avx512Vbmi::new(crate::arch::CpuFeatures::detect()) {
        Some(t) => t.compiled(
            #[inline(always)]
            || levels_run(values, plan.quant_eb, bound, levels),
        ),
        None => levels_run(values, plan.quant_eb, bound, levels),
    };
    #[cfg(not(target_arch = "x86_64"))]
    let bad = levels_run(values, plan.quant_eb, bound, levels);
    match bad {
        Some(i) => Err(Error::BoundViolated {
            index: first_index + i,
        }),
        None => Ok(()),
    }
}

/// The levels of `values` into `levels` (as long) at quantizer bound `eb`, a run at a time,
/// each checked against `bound` when given: the index of the first value whose
/// reconstruction misses it (the levels after its run are then not written). The body of
/// [`levels_checked`] on every path.
#[inline(always)]
pub(crate) fn levels_run<T: SzpFloat>(
    values: &[T],
    eb: f64,
    bound: Option<f64>,
    levels: &mut [i64],
) -> Option<usize> {
    for (k, (xs, qs)) in values.chunks(QBLK).zip(levels.chunks_mut(QBLK)).enumerate() {
        quantize_run(xs, eb, qs);
        if let Some(bound) = bound
            && let Some(i) = crate::arch::generic::szp::first_violation(eb, bound, xs, qs)
        {
            return Some(k * QBLK + i);
        }
    }
    None
}

/// The symbol of residual `u` and its count of extra bits (branch-free: small and large
/// residuals mix unpredictably).
#[inline(always)]
fn symbol(u: u64) -> (usize, u32) {
    let small = u < DIRECT;
    let k = 64 - (u | DIRECT).leading_zeros(); // 5..=64
    let b = ((u >> (k - 2)) & 1) as usize;
    let big = DIRECT as usize + 2 * (k - DIRECT_BITS - 1) as usize + b;
    (
        select_unpredictable(small, u as usize, big),
        select_unpredictable(small, 0, k - 2),
    )
}

/// The base value (leading bits) and extra-bit count of symbol `s < ALPHABET`.
const fn sym_base(s: usize) -> (u64, u32) {
    if s < DIRECT as usize {
        (s as u64, 0)
    } else {
        let r = s - DIRECT as usize;
        let k = (r / 2) as u32 + DIRECT_BITS + 1;
        let b = (r % 2) as u64;
        ((1u64 << (k - 1)) | (b << (k - 2)), k - 2)
    }
}

// Evaluated at compile time: an index out of range would fail the build, not panic.
#[allow(clippy::indexing_slicing)]
const BASES: [(u64, u32); ALPHABET] = {
    let mut t = [(0u64, 0u32); ALPHABET];
    let mut s = 0;
    while s < ALPHABET {
        t[s] = sym_base(s);
        s += 1;
    }
    t
};

use crate::bits::{Leb, leb_len, leb_put as put_leb, unzigzag, zigzag};

fn get_leb(inp: &[u8], pos: usize) -> Result<(u64, usize), Error> {
    crate::bits::leb_get(inp, pos).map_err(|e| match e {
        Leb::Truncated => Error::Truncated,
        Leb::Overflow => Error::Corrupt("entropy chunk: varint overflow"),
    })
}

/// An LSB-first bit writer into a byte slice (whole bytes as they fill).
struct BitWriter<'a> {
    out: &'a mut [u8],
    pos: usize,
    acc: u64,
    cnt: u32,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut [u8], pos: usize) -> Self {
        BitWriter {
            out,
            pos,
            acc: 0,
            cnt: 0,
        }
    }
    /// Appends the low `w` bits of `v` (`w ≤ 32`; higher bits of `v` must be zero).
    #[inline(always)]
    fn put32(&mut self, v: u64, w: u32) -> Option<()> {
        self.acc |= v << self.cnt;
        self.cnt += w;
        if self.cnt >= 32 {
            self.out
                .get_mut(self.pos..self.pos + 4)?
                .copy_from_slice(&(self.acc as u32).to_le_bytes());
            self.pos += 4;
            self.acc >>= 32;
            self.cnt -= 32;
        }
        Some(())
    }
    /// Appends the low `w` bits of `v` (`w ≤ 64`).
    #[inline(always)]
    fn put(&mut self, v: u64, w: u32) -> Option<()> {
        if w > 32 {
            self.put32(v & 0xffff_ffff, 32)?;
            self.put32(v >> 32 & mask(w - 32), w - 32)
        } else {
            self.put32(v & mask(w), w)
        }
    }
    /// Flushes the last partial bytes; the position after them.
    fn finish(self) -> Option<usize> {
        let n = self.cnt.div_ceil(8) as usize;
        self.out
            .get_mut(self.pos..self.pos + n)?
            .copy_from_slice(self.acc.to_le_bytes().get(..n)?);
        Some(self.pos + n)
    }
}

#[inline(always)]
fn mask(w: u32) -> u64 {
    if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }
}

/// An LSB-first bit reader over a byte slice; reading past its end is an error.
struct BitReader<'a> {
    inp: &'a [u8],
    pos: usize,
    acc: u64,
    cnt: u32,
}

impl<'a> BitReader<'a> {
    fn new(inp: &'a [u8]) -> Self {
        BitReader {
            inp,
            pos: 0,
            acc: 0,
            cnt: 0,
        }
    }
    #[inline(always)]
    fn refill(&mut self) {
        if let Some(w) = self.inp.get(self.pos..self.pos + 8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.acc |= u64::from_le_bytes(b) << self.cnt;
            self.pos += ((63 - self.cnt) / 8) as usize;
            self.cnt |= 56;
        } else {
            self.refill_tail();
        }
    }
    #[cold]
    fn refill_tail(&mut self) {
        while self.cnt <= 56 {
            let Some(&b) = self.inp.get(self.pos) else {
                break;
            };
            self.acc |= u64::from(b) << self.cnt;
            self.pos += 1;
            self.cnt += 8;
        }
    }
    /// Reads `w ≤ 32` bits.
    #[inline(always)]
    fn get32(&mut self, w: u32) -> Result<u64, Error> {
        if self.cnt < w {
            self.refill();
            if self.cnt < w {
                return Err(Error::Corrupt("entropy chunk: bit string ends early"));
            }
        }
        let v = self.acc & ((1u64 << w) - 1);
        self.acc >>= w;
        self.cnt -= w;
        Ok(v)
    }
    /// Reads `w ≤ 64` bits.
    #[inline(always)]
    fn get(&mut self, w: u32) -> Result<u64, Error> {
        if w > 32 {
            self.get_wide(w)
        } else {
            self.get32(w)
        }
    }
    #[cold]
    fn get_wide(&mut self, w: u32) -> Result<u64, Error> {
        let lo = self.get32(32)?;
        Ok(lo | (self.get32(w - 32)? << 32))
    }
    /// Bits consumed so far.
    fn consumed(&self) -> usize {
        self.pos * 8 - self.cnt as usize
    }
    /// Whether the bits from the last one consumed to the end of its byte are zero (the
    /// padding rule).
    fn pad_is_zero(&self) -> bool {
        let pad = (8 - self.consumed() % 8) % 8;
        self.acc & mask(pad as u32) == 0
    }
}

/// Scales the histogram `count` (summing to `total > 0`) to frequencies summing to `M`, every
/// occurring symbol at least 1.
fn normalize(count: &[u64; ALPHABET], total: u64, freq: &mut [u32; ALPHABET]) {
    let mut sum = 0i64;
    let (mut big, mut big_f) = (0usize, 0u32);
    for (s, (f, &c)) in freq.iter_mut().zip(count).enumerate() {
        *f = if c == 0 {
            0
        } else {
            let v = (u128::from(c) * u128::from(M) + u128::from(total / 2)) / u128::from(total);
            (v as u32).max(1)
        };
        sum += i64::from(*f);
        if *f > big_f {
            (big, big_f) = (s, *f);
        }
    }
    // The largest frequency absorbs the difference while it can; otherwise every symbol above
    // 1 gives one in turn (the forced ones total at most ALPHABET < M, so this ends).
    let mut diff = i64::from(M) - sum;
    if let Some(f) = freq.get_mut(big) {
        let d = diff.max(1 - i64::from(*f));
        *f = (i64::from(*f) + d) as u32;
        diff -= d;
    }
    while diff < 0 {
        for f in freq.iter_mut() {
            if diff < 0 && *f > 1 {
                *f -= 1;
                diff += 1;
            }
        }
    }
}

/// Residuals one step of the encoder's and decoder's passes handles (a multiple of `WAYS`).
const BLK: usize = 256;
/// Residuals whose symbols the encoder's first pass keeps for its second (a multiple of
/// `BLK`; a chunk of `szp::CHUNK_TARGET_VALUES` levels fits); the symbols of later residuals
/// are computed again.
const SYM_KEEP: usize = 16384;

/// What the encoder needs of one symbol.
#[derive(Clone, Copy, Default)]
struct EncSym {
    /// `⌊x / f⌋` as a multiply.
    r: Recip,
    /// The frequency `f` (0: the symbol does not occur).
    freq: u32,
    cum: u32,
    /// `M − f`.
    cmpl: u32,
}

/// Exact `floor(x / f)` for every `x < 2³²` as `(x·rcp) >> shift` (Granlund–Montgomery with a
/// 33-bit multiplier).
#[derive(Clone, Copy, Default)]
struct Recip {
    rcp: u64,
}

impl Recip {
    /// One shift for every frequency (`32 + PROB_BITS`, at least `32 + ceil(log2 f)` as the
    /// method needs), so the division is a multiply and a constant shift.
    const SHIFT: u32 = 32 + PROB_BITS;
    /// The multiplier is kept shifted up by `64 − SHIFT`, so the quotient is the high half of
    /// one 64 × 64-bit product: no shifts on the encoder's chain. It fits for `f ≥ 2`; for
    /// `f ≤ 1` the multiplier is `2⁶⁴ − 1`, which gives `x − 1` for every `x ≥ 1` (the encoder
    /// adds the missing `M − 1` to the symbol's `cum`).
    fn new(f: u32) -> Recip {
        if f <= 1 {
            return Recip { rcp: u64::MAX };
        }
        let rcp = ((1u128 << Self::SHIFT) / u128::from(f)) as u64 + 1;
        Recip {
            rcp: rcp << (64 - Self::SHIFT),
        }
    }
    #[inline(always)]
    fn div(self, x: u32) -> u32 {
        ((u128::from(x) * u128::from(self.rcp)) >> 64) as u32
    }
}

/// Ring of recent levels the plane decoder keeps (power of two).
const RING: usize = 8192;
/// The longest row the plane predictor takes (the ring holds a row and two levels).
pub const MAX_PLANE_ROW: usize = RING - 2;

/// An encoder-side predictor: its residuals, mode bits and header parameter.
trait Predict: Copy {
    /// Bits 4..=7 of the mode byte.
    const BITS: u8;
    /// The zigzagged residuals `u_lo … u_{lo+len−1}` into `u` (`len = u.len()`,
    /// `1 ≤ lo`, `lo + len ≤ levels.len()`; anything else leaves `u` partly unwritten).
    fn fill(self, levels: &[i64], lo: usize, u: &mut [u64]);
    /// A number written after the first level (the plane's row length).
    fn param(self) -> Option<u64> {
        None
    }
}

#[derive(Clone, Copy)]
struct Order1;
#[derive(Clone, Copy)]
struct Order2;
/// 2-D Lorenzo within the chunk: `qᵢ − qᵢ₋₁ − qᵢ₋ᵣ + qᵢ₋ᵣ₋₁` for `i > r` (`r` the row
/// length), order 1 for `i ≤ r`.
#[derive(Clone, Copy)]
struct Plane {
    row: usize,
}

/// `levels[lo − back .. lo − back + len]` (empty when out of range).
#[inline(always)]
fn lag(levels: &[i64], lo: usize, back: usize, len: usize) -> &[i64] {
    lo.checked_sub(back)
        .and_then(|a| levels.get(a..a + len))
        .unwrap_or(&[])
}

/// Order-1 residuals `zigzag(qᵢ − qᵢ₋₁)` for `i` in `lo..lo + u.len()`.
#[inline(always)]
fn fill_order1(levels: &[i64], lo: usize, u: &mut [u64]) {
    let len = u.len();
    let (q, w) = (lag(levels, lo, 0, len), lag(levels, lo, 1, len));
    for ((o, &q), &w) in u.iter_mut().zip(q).zip(w) {
        *o = zigzag(q.wrapping_sub(w));
    }
}

/// No prediction: `uᵢ = zigzag(qᵢ)`.
#[derive(Clone, Copy)]
struct Order0;

impl Predict for Order0 {
    const BITS: u8 = PRED_NONE;
    #[inline(always)]
    fn fill(self, levels: &[i64], lo: usize, u: &mut [u64]) {
        let q = lag(levels, lo, 0, u.len());
        for (o, &q) in u.iter_mut().zip(q) {
            *o = zigzag(q);
        }
    }
}

impl Predict for Order1 {
    const BITS: u8 = PRED_ORDER1;
    #[inline(always)]
    fn fill(self, levels: &[i64], lo: usize, u: &mut [u64]) {
        fill_order1(levels, lo, u);
    }
}

impl Predict for Order2 {
    const BITS: u8 = PRED_ORDER2;
    /// `zigzag(qᵢ − 2qᵢ₋₁ + qᵢ₋₂)`, with `q₋₁ = q₀` (so `u₁` is order 1's).
    #[inline(always)]
    fn fill(self, levels: &[i64], lo: usize, u: &mut [u64]) {
        let (u, lo) = if lo == 1 {
            let Some((u1, rest)) = u.split_first_mut() else {
                return;
            };
            fill_order1(levels, 1, core::slice::from_mut(u1));
            (rest, 2)
        } else {
            (u, lo)
        };
        let len = u.len();
        let (q, w, ww) = (
            lag(levels, lo, 0, len),
            lag(levels, lo, 1, len),
            lag(levels, lo, 2, len),
        );
        for (((o, &q), &w), &ww) in u.iter_mut().zip(q).zip(w).zip(ww) {
            *o = zigzag(q.wrapping_sub(w).wrapping_sub(w.wrapping_sub(ww)));
        }
    }
}

impl Predict for Plane {
    const BITS: u8 = PRED_PLANE;
    #[inline(always)]
    fn fill(self, levels: &[i64], lo: usize, u: &mut [u64]) {
        let r = self.row;
        // residuals up to r: order 1
        let head = (r + 1).saturating_sub(lo).min(u.len());
        let (u1, u) = u.split_at_mut(head);
        fill_order1(levels, lo, u1);
        let (lo, len) = (lo + head, u.len());
        let (q, w, up, nw) = (
            lag(levels, lo, 0, len),
            lag(levels, lo, 1, len),
            lag(levels, lo, r, len),
            lag(levels, lo, r + 1, len),
        );
        for ((((o, &q), &w), &up), &nw) in u.iter_mut().zip(q).zip(w).zip(up).zip(nw) {
            *o = zigzag(q.wrapping_sub(w).wrapping_sub(up).wrapping_add(nw));
        }
    }
    fn param(self) -> Option<u64> {
        Some(self.row as u64)
    }
}

/// Writes the mode byte's placeholder, the first level and the predictor's parameter; the
/// position after them.
fn put_head<P: Predict>(out: &mut [u8], first: i64, p: P) -> Option<usize> {
    let pos = put_leb(out, 1, zigzag(first))?;
    match p.param() {
        Some(v) => put_leb(out, pos, v),
        None => Some(pos),
    }
}

/// `log2(x)` in 16.16 fixed point, the mantissa interpolated linearly (within 0.09 bits; a
/// cost estimate only).
fn log2_q16(x: u64) -> u64 {
    if x == 0 {
        return 0;
    }
    let k = 63 - x.leading_zeros();
    let frac = if k >= 16 {
        (x >> (k - 16)) & 0xffff
    } else {
        (x << (16 - k)) & 0xffff
    };
    (u64::from(k) << 16) | frac
}

/// Estimated coded bits (16.16) of `m` residuals with histogram `count`: order-0 entropy plus
/// extra bits.
fn cost_q16(count: &[u64; ALPHABET], m: u64) -> u64 {
    let lm = log2_q16(m);
    count
        .iter()
        .zip(BASES.iter())
        .map(|(&c, &(_, e))| c * (lm - log2_q16(c).min(lm)) + ((c * u64::from(e)) << 16))
        .sum()
}

/// Encodes the levels of one chunk into `out`; returns the coded length (at most
/// [`max_coded_len`]`(levels.len())`). An `out` of [`encode_buffer_len`]`(levels.len())`
/// bytes always suffices; a shorter one may still (else [`Error::OutputTooSmall`], with
/// `out` scratch). The predictor (order-1 or order-2 Lorenzo) is the one whose residuals, on
/// a sample of every eighth (every one below 256 levels), are estimated to code smaller.
pub fn encode_chunk(levels: &[i64], out: &mut [u8]) -> Result<usize, Error> {
    encode_chunk_rows(levels, 0, out)
}

/// Encodes values that are residuals already (the interpolation codes of `szp::interp`), as
/// [`encode_chunk`] otherwise: with no predictor ([`PRED_NONE`]), or order 1 where that is
/// estimated smaller on a sample (neighbouring codes correlate on some fields);
/// [`decode_chunk`] gives them back.
pub fn encode_values(values: &[i64], out: &mut [u8]) -> Result<usize, Error> {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = crate::arch::x86_64::Bmi2::new(crate::arch::CpuFeatures::detect()) {
        return t.compiled(
            #[inline(always)]
            || encode_values_body(values, out),
        );
    }
    encode_values_body(values, out)
}

#[inline(always)]
fn encode_values_body(values: &[i64], out: &mut [u8]) -> Result<usize, Error> {
    let step = if values.len() < 256 { 1 } else { 8 };
    let (mut c0, mut c1) = ([0u64; ALPHABET], [0u64; ALPHABET]);
    let mut m = 0u64;
    for w in values.windows(2).step_by(step) {
        if let [a, b] = *w {
            if let Some(c) = c0.get_mut(symbol(zigzag(b)).0) {
                *c += 1;
            }
            if let Some(c) = c1.get_mut(symbol(zigzag(b.wrapping_sub(a))).0) {
                *c += 1;
            }
            m += 1;
        }
    }
    if cost_q16(&c1, m) < cost_q16(&c0, m) {
        encode_with(values, Order1, out)
    } else {
        encode_with(values, Order0, out)
    }
}

/// [`encode_chunk`] for a field stored in rows of `row` values (its fastest dimension; the
/// chunk need not start a row): the 2-D Lorenzo predictor within the chunk is a third
/// candidate when `2 ≤ row ≤ `[`MAX_PLANE_ROW`] and the chunk holds more than two rows. `row = 0`
/// is [`encode_chunk`]. The decoder needs nothing more: the row length is in the chunk.
///
/// On x86_64 CPUs with AVX2 and BMI2 the same source runs compiled for them
/// (`arch::x86_64::compiled`; the same bytes).
pub fn encode_chunk_rows(levels: &[i64], row: usize, out: &mut [u8]) -> Result<usize, Error> {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = crate::arch::x86_64::Bmi2::new(crate::arch::CpuFeatures::detect()) {
        return t.compiled(
            #[inline(always)]
            || encode_rows_body(levels, row, out),
        );
    }
    encode_rows_body(levels, row, out)
}

/// The body of [`encode_chunk_rows`] on every path.
#[inline(always)]
pub(crate) fn encode_rows_body(levels: &[i64], row: usize, out: &mut [u8]) -> Result<usize, Error> {
    let n = levels.len();
    if n == 0 {
        return Ok(0);
    }
    let step = if n < 256 { 1 } else { 8 };
    let mut count = [[0u64; ALPHABET]; 3];
    let [c1, c2, c3] = &mut count;
    let mut m = 0u64;
    for w in levels.windows(3).step_by(step) {
        if let [a, b, c] = *w {
            let d = c.wrapping_sub(b);
            let u1 = zigzag(d);
            let u2 = zigzag(d.wrapping_sub(b.wrapping_sub(a)));
            if let Some(c) = c1.get_mut(symbol(u1).0) {
                *c += 1;
            }
            if let Some(c) = c2.get_mut(symbol(u2).0) {
                *c += 1;
            }
            m += 1;
        }
    }
    let (k1, k2) = (cost_q16(c1, m), cost_q16(c2, m));
    if (2..=MAX_PLANE_ROW).contains(&row) && n > 2 * row + 2 {
        // Plane residuals of every eighth value past the first row; the first row costs
        // what order 1 does.
        let mut mp = 0u64;
        for w in levels.windows(row + 2).step_by(step) {
            if let (Some(&nw), Some(&up), Some(&wv), Some(&q)) =
                (w.first(), w.get(1), w.get(row), w.get(row + 1))
            {
                let u = zigzag(q.wrapping_sub(wv).wrapping_sub(up).wrapping_add(nw));
                if let Some(c) = c3.get_mut(symbol(u).0) {
                    *c += 1;
                }
                mp += 1;
            }
        }
        let total = (n - 1) as u64;
        let per = |k: u64, m: u64| u128::from(k) * u128::from(total) / u128::from(m.max(1));
        let kp = u128::from(k1) * row as u128 / u128::from(m.max(1))
            + u128::from(cost_q16(c3, mp)) * u128::from(total - row as u64) / u128::from(mp.max(1));
        // Only a clear win: the estimate ignores the first row's own statistics and the
        // sampled table's cost (measured on the shared fields: ties cost ratio).
        if kp < per(k1, m).min(per(k2, m)) / 32 * 31 {
            return encode_with(levels, Plane { row }, out);
        }
    }
    if k2 < k1 {
        encode_with(levels, Order2, out)
    } else {
        encode_with(levels, Order1, out)
    }
}

/// Bytes the rANS form reserves before its extra bits while the table is not yet known: the
/// symbol count, the longest table (4 + 12 bits for each of 135 frequencies) and a LEB128 length.
const TABLE_RESERVE: usize = 1 + (ALPHABET - 1) * 16 / 8 + 10;

/// The output length [`encode_chunk`] needs to be sure to succeed for `n` levels: the rANS
/// form is written in place with room for the longest table.
pub const fn encode_buffer_len(n: usize) -> usize {
    max_coded_len(n).saturating_add(TABLE_RESERVE)
}

/// Bytes of the encoder's per-block staging of extra bits: a block's at most `62·BLK` bits,
/// a partial byte and the 8-byte store's slack, positions taken modulo `STAGE_MASK + 1`
/// (never reached), so that no store needs a check.
const STAGE_MASK: usize = 2047;
const _: () = assert!(62 * BLK / 8 + 1 + 8 <= STAGE_MASK);

/// The extra-bit writer of the encoder's first pass on a stage of one block: LSB-first, one
/// unaligned 8-byte store a value (no branch on the bit count but for the rare fields above
/// 56 bits), `acc` holding the `cnt < 8` bits of the partial byte between values.
struct Stage {
    buf: [u8; STAGE_MASK + 9],
    pos: usize,
    acc: u64,
    cnt: u32,
}

impl Stage {
    /// Appends the `nb ≤ 56` bits `v` (`v < 2^nb`).
    #[inline(always)]
    fn put56(&mut self, v: u64, nb: u32) {
        self.acc |= v << self.cnt;
        self.cnt += nb;
        let at = self.pos & STAGE_MASK;
        if let Some(d) = self.buf.get_mut(at..at + 8) {
            d.copy_from_slice(&self.acc.to_le_bytes());
        }
        let bytes = self.cnt >> 3;
        self.pos += bytes as usize;
        self.acc >>= bytes * 8;
        self.cnt &= 7;
    }
    /// Appends the `nb ≤ 62` bits `v` (`v < 2^nb`).
    #[inline(always)]
    fn put(&mut self, v: u64, nb: u32) {
        let (v, nb) = if nb > 56 {
            self.put56(v & 0xff_ffff, 24);
            (v >> 24, nb - 24)
        } else {
            (v, nb)
        };
        self.put56(v, nb);
    }
    /// The whole bytes written since the last call (the stage starts again).
    #[inline(always)]
    fn take(&mut self) -> &[u8] {
        let n = self.pos;
        self.pos = 0;
        self.buf.get(..n).unwrap_or_default()
    }
}

/// One residual of the encoder's first pass: its symbol, a count in `h`, its extra bits.
#[inline(always)]
fn first_pass(u: u64, s: &mut u8, h: &mut [u64; 256], st: &mut Stage) {
    let (sym, e) = symbol(u);
    *s = sym as u8;
    if let Some(c) = h.get_mut(usize::from(sym as u8)) {
        *c += 1;
    }
    // e <= 62: the mask needs no branch
    st.put(u & ((1u64 << e) - 1), e);
}

/// The symbols of residuals `lo..lo + len`: from the first pass's `kept` where it kept them,
/// else computed again into `own` (through `u`).
#[inline(always)]
fn block_syms<'a, P: Predict>(
    p: P,
    levels: &[i64],
    lo: usize,
    len: usize,
    kept: &'a [u8],
    own: &'a mut [u8; BLK],
    u: &mut [u64; BLK],
) -> &'a [u8] {
    if let Some(s) = kept.get(lo - 1..lo - 1 + len) {
        return s;
    }
    let u = u.get_mut(..len).unwrap_or_default();
    p.fill(levels, lo, u);
    for (s, &u) in own.iter_mut().zip(u.iter()) {
        *s = symbol(u).0 as u8;
    }
    own.get(..len).unwrap_or_default()
}

#[inline(always)]
fn encode_with<P: Predict>(levels: &[i64], p: P, out: &mut [u8]) -> Result<usize, Error> {
    let Some(&first) = levels.first() else {
        return Ok(0);
    };
    let n = levels.len();
    let m = n - 1;
    let head = 1 + leb_len(zigzag(first)) + p.param().map_or(0, leb_len);
    // First pass, a block of residuals at a time: the symbols (kept for the second pass),
    // their histogram (one per state, so that runs of one symbol do not wait on the last
    // increment), the OR of all residuals, and the extra bits, staged per block and copied
    // to where they would go after the longest table (moved down once the table is known).
    let mut hist = [[0u64; 256]; WAYS];
    let mut kept = [0u8; SYM_KEEP];
    let mut own = [0u8; BLK];
    let mut ubuf = [0u64; BLK];
    let mut st = Stage {
        buf: [0; STAGE_MASK + 9],
        pos: 0,
        acc: 0,
        cnt: 0,
    };
    let provisional = head + TABLE_RESERVE;
    let mut at = provisional;
    let mut fits = true;
    let mut any = 0u64;
    let mut lo = 1;
    while lo < n {
        let len = BLK.min(n - lo);
        let u = ubuf.get_mut(..len).unwrap_or_default();
        p.fill(levels, lo, u);
        let syms = match kept.get_mut(lo - 1..lo - 1 + len) {
            Some(s) => s,
            None => own.get_mut(..len).unwrap_or_default(),
        };
        let (ug, ut) = u.as_chunks::<WAYS>();
        let (sg, stail) = syms.as_chunks_mut::<WAYS>();
        let [h0, h1, h2, h3] = &mut hist;
        for (&[u0, u1, u2, u3], [s0, s1, s2, s3]) in ug.iter().zip(sg.iter_mut()) {
            let or = u0 | u1 | u2 | u3;
            any |= or;
            if or < DIRECT {
                // four direct symbols, no extra bits (most groups of smooth data)
                for ((s, u), h) in [s0, s1, s2, s3]
                    .into_iter()
                    .zip([u0, u1, u2, u3])
                    .zip([&mut *h0, &mut *h1, &mut *h2, &mut *h3])
                {
                    *s = u as u8;
                    if let Some(c) = h.get_mut(u as usize) {
                        *c += 1;
                    }
                }
                continue;
            }
            first_pass(u0, s0, h0, &mut st);
            first_pass(u1, s1, h1, &mut st);
            first_pass(u2, s2, h2, &mut st);
            first_pass(u3, s3, h3, &mut st);
        }
        for (&u, s) in ut.iter().zip(stail.iter_mut()) {
            any |= u;
            first_pass(u, s, h0, &mut st);
        }
        let bytes = st.take();
        match out.get_mut(at..at + bytes.len()) {
            Some(d) => d.copy_from_slice(bytes),
            None => fits = false,
        }
        at += bytes.len();
        lo += len;
    }
    // the partial last byte
    let last = st.cnt.div_ceil(8) as usize;
    match out.get_mut(at..at + last) {
        Some(d) => d.copy_from_slice(st.acc.to_le_bytes().get(..last).unwrap_or_default()),
        None => fits = false,
    }
    let extra_len = fits.then_some(at + last - provisional);
    let mut count = [0u64; ALPHABET];
    for h in &hist {
        for (c, &k) in count.iter_mut().zip(h) {
            *c += k;
        }
    }
    let width = 64 - any.leading_zeros();
    let fixed_len = head + 1 + m.saturating_mul(width as usize).div_ceil(8);
    let pbits = P::BITS;
    if m > 0
        && let Some(extra_len) = extra_len
        && let Some(len) = encode_rans(
            first,
            levels,
            p,
            &count,
            &kept,
            out,
            (head, extra_len),
            fixed_len,
        )
    {
        if let Some(b) = out.first_mut() {
            *b = MODE_RANS | pbits;
        }
        return Ok(len);
    }
    // Fixed width.
    let too_small = Error::OutputTooSmall { needed: fixed_len };
    if out.len() < fixed_len {
        return Err(too_small);
    }
    let mut pos = put_head(out, first, p).ok_or(too_small)?;
    if let Some(b) = out.first_mut() {
        *b = MODE_FIXED | pbits;
    }
    *out.get_mut(pos).ok_or(too_small)? = width as u8;
    pos += 1;
    let mut bw = BitWriter::new(out, pos);
    let mut lo = 1;
    while lo < n {
        let len = BLK.min(n - lo);
        let u = ubuf.get_mut(..len).unwrap_or_default();
        p.fill(levels, lo, u);
        for &u in u.iter() {
            bw.put(u, width).ok_or(too_small)?;
        }
        lo += len;
    }
    bw.finish().ok_or(too_small)
}

/// The entry of symbol `s` (every `u8` indexes the table: no check is left).
#[inline(always)]
fn sym(enc: &[EncSym; 256], s: u8) -> &EncSym {
    const NONE: EncSym = EncSym {
        r: Recip { rcp: 0 },
        freq: 0,
        cum: 0,
        cmpl: 0,
    };
    enc.get(usize::from(s)).unwrap_or(&NONE)
}

/// Bytes of the encoder's per-block staging of rANS words (a block emits at most one word a
/// symbol); positions are taken modulo its length (never reached), so no store needs a check.
const WORDS_STAGE: usize = 2 * BLK;

/// One symbol into state `x` (the rANS step that [`dec_step`] inverts), the renormalization
/// word staged below `*at` in `stage` (`*at ≥ 2` whenever a symbol of the block is left).
#[inline(always)]
fn enc_staged(x: &mut u32, e: &EncSym, stage: &mut [u8; WORDS_STAGE + 2], at: &mut usize) {
    // Renormalize without a branch: the low half goes below `at` either way and only counts
    // when the state is too large (`x ≥ f·2²⁰`; never for `f = M`).
    let i = at.wrapping_sub(2) & (WORDS_STAGE - 1);
    if let Some(d) = stage.get_mut(i..i + 2) {
        d.copy_from_slice(&(*x as u16).to_le_bytes());
    }
    let emit = (*x >> (32 - PROB_BITS)) >= e.freq;
    *at -= 2 * usize::from(emit);
    let xs = select_unpredictable(emit, *x >> 16, *x);
    // ⌊x/f⌋·M + (x mod f) + cum
    let q = e.r.div(xs);
    *x = xs + e.cum + q * e.cmpl;
}

/// The rANS form, its extra bits (`extra_len` bytes) already at `head + TABLE_RESERVE`, if it
/// fits `out` and is shorter than `limit` bytes; the caller writes the mode byte. `kept`: the
/// symbols of the first residuals.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn encode_rans<P: Predict>(
    first: i64,
    levels: &[i64],
    p: P,
    count: &[u64; ALPHABET],
    kept: &[u8],
    out: &mut [u8],
    (head, extra_len): (usize, usize),
    limit: usize,
) -> Option<usize> {
    let n = levels.len();
    let m: u64 = count.iter().sum();
    let mut freq = [0u32; ALPHABET];
    normalize(count, m, &mut freq);
    let syms = freq.iter().rposition(|&f| f > 0)? + 1;
    // Header, symbol count, table.
    let mut pos = put_head(out, first, p)?;
    debug_assert_eq!(pos, head);
    *out.get_mut(pos)? = syms as u8;
    pos += 1;
    let mut w = BitWriter::new(out, pos);
    for &f in freq.get(..syms - 1)? {
        if f == 0 {
            w.put32(0, 4)?;
        } else {
            let l = 32 - f.leading_zeros();
            w.put32(u64::from(l), 4)?;
            w.put32(u64::from(f) & mask(l - 1), l - 1)?;
        }
    }
    pos = w.finish()?;
    pos = put_leb(out, pos, extra_len as u64)?;
    let provisional = head + TABLE_RESERVE;
    if pos > provisional || out.len() < provisional + extra_len {
        return None;
    }
    out.copy_within(provisional..provisional + extra_len, pos);
    let start = pos + extra_len;
    let floor = start + 4 * WAYS;
    if floor >= limit {
        return None;
    }
    // rANS, backward from the end of `out` (every symbol a `u8` indexes the table).
    let mut enc = [EncSym::default(); 256];
    let mut c = 0u32;
    for (e, &f) in enc.iter_mut().zip(freq.iter()) {
        *e = EncSym {
            r: Recip::new(f),
            freq: f,
            // f = 1: the reciprocal gives x − 1 for x (every state is at least 1), short of
            // the quotient by one: one more M − f
            cum: c + if f == 1 { M - 1 } else { 0 },
            cmpl: M - f,
        };
        c += f;
    }
    let words = out.get_mut(floor..)?;
    let mut end = words.len();
    let mut x = [RANS_L; WAYS];
    let (mut own, mut ubuf) = ([0u8; BLK], [0u64; BLK]);
    let mut stage = [0u8; WORDS_STAGE + 2];
    // Residual i goes to state (i − 1) mod 4 and every block starts a group of four. The
    // encoder runs backward: blocks from the last, the partial group at the end first, then
    // whole groups (states 3, 2, 1, 0) with the states in registers; each block's words are
    // staged, then copied below the words so far.
    let blocks = (n - 1).div_ceil(BLK);
    for b in (0..blocks).rev() {
        let lo = 1 + b * BLK;
        let len = BLK.min(n - lo);
        let s = block_syms(p, levels, lo, len, kept, &mut own, &mut ubuf);
        let (groups, tail) = s.as_chunks::<WAYS>();
        let mut at = WORDS_STAGE;
        for (xs, &s) in x.iter_mut().zip(tail).rev() {
            enc_staged(xs, sym(&enc, s), &mut stage, &mut at);
        }
        let [x0, x1, x2, x3] = &mut x;
        for &[s0, s1, s2, s3] in groups.iter().rev() {
            enc_staged(x3, sym(&enc, s3), &mut stage, &mut at);
            enc_staged(x2, sym(&enc, s2), &mut stage, &mut at);
            enc_staged(x1, sym(&enc, s1), &mut stage, &mut at);
            enc_staged(x0, sym(&enc, s0), &mut stage, &mut at);
        }
        let staged = stage.get(at..WORDS_STAGE)?;
        let below = end.checked_sub(staged.len())?;
        words.get_mut(below..end)?.copy_from_slice(staged);
        end = below;
    }
    let mut end = floor + end;
    for &xs in x.iter().rev() {
        end -= 4;
        out.get_mut(end..end + 4)?
            .copy_from_slice(&xs.to_le_bytes());
    }
    let total = start + (out.len() - end);
    if total >= limit {
        return None;
    }
    out.copy_within(end.., start);
    Some(total)
}

/// Decodes a coded chunk into `levels` (its length is the chunk's `n`).
/// [`Error::Corrupt`] or [`Error::Truncated`] if `coded` is not exactly the coding of
/// `levels.len()` levels.
// (The decoder compiled for AVX2 and BMI2, as the encoder is, measured 40 % slower on the
// shared fields; it runs as compiled for the baseline everywhere.)
pub fn decode_chunk(coded: &[u8], levels: &mut [i64]) -> Result<(), Error> {
    decode_into(coded, levels, |q| q)
}

/// Decodes a coded chunk straight to values: `out[i] = reconstruct(qᵢ, quant_eb)`, the SZp
/// reconstruction every kernel applies (bit-identical to decoding levels, then values).
pub fn decode_chunk_values<T: SzpFloat>(
    coded: &[u8],
    quant_eb: f64,
    out: &mut [T],
) -> Result<(), Error> {
    decode_into(coded, out, |q| reconstruct::<T>(q, quant_eb))
}

#[inline(always)]
fn decode_into<O: Copy>(coded: &[u8], out: &mut [O], conv: impl Fn(i64) -> O) -> Result<(), Error> {
    let Some((o0, orest)) = out.split_first_mut() else {
        return if coded.is_empty() {
            Ok(())
        } else {
            Err(Error::Corrupt("entropy chunk: bytes for no values"))
        };
    };
    let (&mode, _) = coded.split_first().ok_or(Error::Truncated)?;
    let (zf, pos) = get_leb(coded, 1)?;
    let first = unzigzag(zf);
    *o0 = conv(first);
    match (mode & 0x0f, mode & 0xf0) {
        (c, PRED_ORDER1) => decode_coded(c, coded, pos, &mut Int1 { q: first }, orest, conv),
        (c, PRED_ORDER2) => decode_coded(c, coded, pos, &mut Int2 { q: first, d: 0 }, orest, conv),
        (c, PRED_PLANE) => decode_plane(c, coded, pos, first, orest, conv),
        (c, PRED_NONE) => decode_coded(c, coded, pos, &mut Int0, orest, conv),
        _ => Err(Error::Corrupt("entropy chunk: unknown predictor")),
    }
}

/// The decoder side of a predictor: the next level from the next residual.
trait Integrate {
    fn push(&mut self, u: u64) -> i64;
}

/// No predictor: the residual is the value.
struct Int0;

impl Integrate for Int0 {
    #[inline(always)]
    fn push(&mut self, u: u64) -> i64 {
        unzigzag(u)
    }
}

/// Order 1: the residual adds to the level.
struct Int1 {
    q: i64,
}

/// Order 2: the residual adds to the delta, the delta to the level.
struct Int2 {
    q: i64,
    d: i64,
}

/// The plane predictor over a ring of the last levels.
struct IntPlane {
    ring: [i64; RING],
    j: usize,
    row: usize,
    q: i64,
}

impl Integrate for Int1 {
    #[inline(always)]
    fn push(&mut self, u: u64) -> i64 {
        self.q = self.q.wrapping_add(unzigzag(u));
        self.q
    }
}

impl Integrate for Int2 {
    #[inline(always)]
    fn push(&mut self, u: u64) -> i64 {
        self.d = self.d.wrapping_add(unzigzag(u));
        self.q = self.q.wrapping_add(self.d);
        self.q
    }
}

impl Integrate for IntPlane {
    #[inline(always)]
    fn push(&mut self, u: u64) -> i64 {
        const MASK: usize = RING - 1;
        self.j += 1;
        let j = self.j;
        // The previous level stays in a register (`q`); the ring gives the row above, which
        // is far enough back not to wait on the store just made.
        let grad = if j > self.row {
            let at = |k: usize| self.ring.get(k & MASK).copied().unwrap_or(0);
            at(j - self.row).wrapping_sub(at(j - self.row - 1))
        } else {
            0
        };
        self.q = self.q.wrapping_add(grad).wrapping_add(unzigzag(u));
        if let Some(r) = self.ring.get_mut(j & MASK) {
            *r = self.q;
        }
        self.q
    }
}

/// Decodes a plane-predicted chunk (the ring lives only in this frame).
#[inline(never)]
fn decode_plane<O: Copy>(
    coding: u8,
    coded: &[u8],
    pos: usize,
    first: i64,
    orest: &mut [O],
    conv: impl Fn(i64) -> O,
) -> Result<(), Error> {
    let (row, pos) = get_leb(coded, pos)?;
    let row = usize::try_from(row)
        .ok()
        .filter(|r| (2..=MAX_PLANE_ROW).contains(r))
        .ok_or(Error::Corrupt("entropy chunk: plane row length"))?;
    let mut ring = [0i64; RING];
    if let Some(r) = ring.first_mut() {
        *r = first;
    }
    let mut q = IntPlane {
        ring,
        j: 0,
        row,
        q: first,
    };
    decode_coded(coding, coded, pos, &mut q, orest, conv)
}

#[inline(always)]
fn decode_coded<O: Copy, I: Integrate>(
    coding: u8,
    coded: &[u8],
    mut pos: usize,
    q: &mut I,
    orest: &mut [O],
    conv: impl Fn(i64) -> O,
) -> Result<(), Error> {
    match coding {
        MODE_FIXED => {
            let width = u32::from(*coded.get(pos).ok_or(Error::Truncated)?);
            pos += 1;
            if width > 64 {
                return Err(Error::Corrupt("entropy chunk: width above 64"));
            }
            let body = coded.get(pos..).ok_or(Error::Truncated)?;
            if body.len() != orest.len().saturating_mul(width as usize).div_ceil(8) {
                return Err(Error::Corrupt("entropy chunk: fixed-width length"));
            }
            let mut r = BitReader::new(body);
            for o in orest.iter_mut() {
                *o = conv(q.push(r.get(width)?));
            }
            if !r.pad_is_zero() {
                return Err(Error::Corrupt("entropy chunk: fixed-width padding"));
            }
            Ok(())
        }
        MODE_RANS => decode_rans(coded, pos, q, orest, conv),
        _ => Err(Error::Corrupt("entropy chunk: unknown mode")),
    }
}

/// The residual of each symbol from its extra bits `v` (indexed by a `u8`): entry
/// `nb | hi << 8` gives `(hi << nb) | v` with `nb` extra bits ([`BASES`] packed; 0 past the
/// alphabet).
// Evaluated at compile time: an index out of range would fail the build, not panic.
#[allow(clippy::indexing_slicing)]
const DEC: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut s = 0;
    while s < ALPHABET {
        let (base, nb) = BASES[s];
        t[s] = ((base >> nb) as u16) << 8 | nb as u16;
        s += 1;
    }
    t
};

/// The decoder's extra-bit reader: `bits` from the first extra byte to the end of the chunk,
/// `pos` the next bit. The rANS stream follows the extra bits, so an 8-byte window fits at
/// every extra byte but the last few (those read byte by byte); bits read past the extra bits
/// leave `pos` beyond them, which the end check rejects.
struct ExtraIn<'a> {
    bits: &'a [u8],
    pos: usize,
}

impl ExtraIn<'_> {
    /// The residual of symbol `s` from its extra bits.
    #[inline(always)]
    fn residual(&mut self, s: u8) -> u64 {
        let d = DEC.get(usize::from(s)).copied().unwrap_or(0);
        let nb = u32::from(d & 0xff);
        (u64::from(d >> 8) << nb) | self.take(nb)
    }
    /// The next `nb ≤ 62` bits.
    #[inline(always)]
    fn take(&mut self, nb: u32) -> u64 {
        let (v, pos) = if nb > 56 {
            take_wide(self.bits, self.pos, nb)
        } else {
            take56(self.bits, self.pos, nb)
        };
        self.pos = pos;
        v
    }
}

/// The `nb ≤ 56` bits of `bits` at bit `pos`, and the position after them.
#[inline(always)]
fn take56(bits: &[u8], pos: usize, nb: u32) -> (u64, usize) {
    let at = pos >> 3;
    let w = match bits.get(at..).and_then(|b| b.first_chunk::<8>()) {
        Some(w) => u64::from_le_bytes(*w),
        None => window_tail(bits, at),
    };
    ((w >> (pos & 7)) & ((1u64 << nb) - 1), pos + nb as usize)
}

/// [`take56`] of `56 < nb ≤ 62` bits: 32, then the rest.
#[cold]
fn take_wide(bits: &[u8], pos: usize, nb: u32) -> (u64, usize) {
    let (lo, pos) = take56(bits, pos, 32);
    let (hi, pos) = take56(bits, pos, nb - 32);
    (lo | hi << 32, pos)
}

/// The 8 bytes of `bits` from `at`, zeros past the end.
#[cold]
fn window_tail(bits: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    for (d, s) in b.iter_mut().zip(bits.get(at..).unwrap_or_default()) {
        *d = *s;
    }
    u64::from_le_bytes(b)
}

/// One rANS decode step of state `x` (slot table entries `f | (slot − cum) << 12 | s << 24`,
/// `f < M`) and its renormalization word from `words` at `wp`; the symbol. Branch-free:
/// reading past the words gives zeros and leaves `wp` beyond them, which the end check
/// rejects.
#[inline(always)]
fn dec_step(x: &mut u32, table: &[u32; M as usize], words: &[u8], wp: &mut usize) -> u8 {
    let e = table.get((*x & (M - 1)) as usize).copied().unwrap_or(0);
    let f = e & (M - 1);
    let bias = (e >> PROB_BITS) & (M - 1);
    let xs = f * (*x >> PROB_BITS) + bias;
    let w = words
        .get(*wp..)
        .and_then(|w| w.first_chunk::<2>())
        .map_or(0, |w| u32::from(u16::from_le_bytes(*w)));
    let need = xs < RANS_L;
    *x = select_unpredictable(need, (xs << 16) | w, xs);
    *wp += 2 * usize::from(need);
    (e >> 24) as u8
}

/// Word bytes four decode steps read at most.
const GROUP_WORDS: usize = 2 * WAYS;
/// Extra bytes the fields of four residuals occupy at most (up to 62 bits each after up to 7
/// bits already read) with the 8-byte window of the last one, rounded to a power of two
/// plus 8 (so a mask bounds the window's offset).
const GROUP_BITS: usize = 32 + 8;
const _: () = assert!((7 + 62 * WAYS).div_ceil(8) + 8 <= GROUP_BITS);

/// [`dec_step`] within a group that cannot run past the words: `wv` the next
/// [`GROUP_WORDS`] word bytes and `wo` the offset in them (the mask below never bites; it
/// only lets the compiler drop the check).
#[inline(always)]
fn dec_fast(x: &mut u32, table: &[u32; M as usize], wv: &[u8; GROUP_WORDS], wo: &mut usize) -> u8 {
    let e = table.get((*x & (M - 1)) as usize).copied().unwrap_or(0);
    let f = e & (M - 1);
    let bias = (e >> PROB_BITS) & (M - 1);
    let xs = f * (*x >> PROB_BITS) + bias;
    let i = *wo & (GROUP_WORDS - 2);
    let w = u32::from(wv.get(i).copied().unwrap_or(0))
        | u32::from(wv.get(i + 1).copied().unwrap_or(0)) << 8;
    let need = xs < RANS_L;
    *x = select_unpredictable(need, (xs << 16) | w, xs);
    *wo += 2 * usize::from(need);
    (e >> 24) as u8
}

/// Per symbol (indexed by a `u8`): its base residual and the mask of its extra bits
/// (`2^nb − 1`); 0 past the alphabet.
// Evaluated at compile time: an index out of range would fail the build, not panic.
#[allow(clippy::indexing_slicing)]
const BASE_MASK: [(u64, u64); 256] = {
    let mut t = [(0u64, 0u64); 256];
    let mut s = 0;
    while s < ALPHABET {
        let (base, nb) = BASES[s];
        t[s] = (base, (1u64 << nb) - 1);
        s += 1;
    }
    t
};

/// Per symbol (indexed by a `u8`): its count of extra bits; 0 past the alphabet.
// Evaluated at compile time: an index out of range would fail the build, not panic.
#[allow(clippy::indexing_slicing)]
const EXTRA_BITS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut s = 0;
    while s < ALPHABET {
        t[s] = BASES[s].1 as u8;
        s += 1;
    }
    t
};

/// The residual of symbol `s` from its extra bits in `bv` at bit `bo`, within a group whose
/// fields cannot run past `bv` (the mask below never bites).
#[inline(always)]
fn residual_fast(s: u8, bv: &[u8; GROUP_BITS], bo: &mut usize) -> u64 {
    let (base, m) = BASE_MASK.get(usize::from(s)).copied().unwrap_or((0, 0));
    let nb = EXTRA_BITS.get(usize::from(s)).copied().unwrap_or(0);
    let window = |b: usize| {
        let j = (b >> 3) & (GROUP_BITS - 9);
        bv.get(j..)
            .and_then(|w| w.first_chunk::<8>())
            .map_or(0, |w| u64::from_le_bytes(*w) >> (b & 7))
    };
    let v = if nb > 56 {
        (window(*bo) & 0xffff_ffff) | (window(*bo + 32) << 32 & m)
    } else {
        window(*bo) & m
    };
    *bo += usize::from(nb);
    base | v
}

#[inline(always)]
fn decode_rans<O: Copy, I: Integrate>(
    coded: &[u8],
    mut pos: usize,
    q: &mut I,
    out: &mut [O],
    conv: impl Fn(i64) -> O,
) -> Result<(), Error> {
    let syms = usize::from(*coded.get(pos).ok_or(Error::Truncated)?);
    pos += 1;
    if syms == 0 || syms > ALPHABET {
        return Err(Error::Corrupt("entropy chunk: symbol count"));
    }
    // Table.
    let mut freq = [0u32; ALPHABET];
    let mut r = BitReader::new(coded.get(pos..).ok_or(Error::Truncated)?);
    let mut sum = 0u32;
    for f in freq.iter_mut().take(syms - 1) {
        let l = r.get32(4)? as u32;
        if l > PROB_BITS + 1 {
            return Err(Error::Corrupt("entropy chunk: frequency length"));
        }
        if l > 0 {
            *f = (1 << (l - 1)) | r.get32(l - 1)? as u32;
        }
        sum += *f;
    }
    if sum >= M {
        return Err(Error::Corrupt(
            "entropy chunk: frequencies exceed the total",
        ));
    }
    let last = M - sum;
    *freq.get_mut(syms - 1).ok_or(Error::Truncated)? = last;
    if !r.pad_is_zero() {
        return Err(Error::Corrupt("entropy chunk: table padding"));
    }
    pos += r.consumed().div_ceil(8);
    let (extra_len, p) = get_leb(coded, pos)?;
    pos = p;
    let extra_len = usize::try_from(extra_len).map_err(|_| Error::Truncated)?;
    let extra_end = pos.checked_add(extra_len).ok_or(Error::Truncated)?;
    let extra = coded.get(pos..extra_end).ok_or(Error::Truncated)?;
    let stream = coded.get(extra_end..).ok_or(Error::Truncated)?;
    let (st, words) = stream.split_at_checked(4 * WAYS).ok_or(Error::Truncated)?;
    let mut x = [0u32; WAYS];
    for (xs, b) in x.iter_mut().zip(st.chunks_exact(4)) {
        *xs = u32::from_le_bytes(b.first_chunk::<4>().copied().unwrap_or_default());
    }
    let mut ex = ExtraIn {
        bits: coded.get(pos..).unwrap_or_default(),
        pos: 0,
    };
    let mut wp = 0usize;
    if last == M {
        // One symbol: every slot is its own, so no state ever moves or renormalizes; the
        // residuals are its base and extra bits.
        let d = DEC.get(syms - 1).copied().unwrap_or(0);
        let nb = u32::from(d & 0xff);
        for o in out.iter_mut() {
            *o = conv(q.push((u64::from(d >> 8) << nb) | ex.take(nb)));
        }
    } else {
        // Slot table: f | (slot − cum) << 12 | symbol << 24 (every f < M here).
        let mut table = [0u32; M as usize];
        let mut c = 0usize;
        for (s, &f) in freq.iter().enumerate().take(syms) {
            let e = table
                .get_mut(c..c + f as usize)
                .ok_or(Error::Corrupt("entropy chunk: table"))?;
            for (b, t) in e.iter_mut().enumerate() {
                *t = f | (b as u32) << PROB_BITS | (s as u32) << 24;
            }
            c += f as usize;
        }
        // A block at a time: the symbols (rANS), then the residuals (their extra bits), the
        // levels and the values.
        let mut sbuf = [0u8; BLK];
        for ob in out.chunks_mut(BLK) {
            let sb = sbuf.get_mut(..ob.len()).unwrap_or_default();
            let (groups, tail) = sb.as_chunks_mut::<WAYS>();
            let [x0, x1, x2, x3] = &mut x;
            for g in groups.iter_mut() {
                // Where four steps cannot run past the words (all but the last groups), they
                // read a fixed-size window without checks.
                if let Some(wv) = words.get(wp..).and_then(|w| w.first_chunk::<GROUP_WORDS>()) {
                    let mut wo = 0usize;
                    *g = [
                        dec_fast(x0, &table, wv, &mut wo),
                        dec_fast(x1, &table, wv, &mut wo),
                        dec_fast(x2, &table, wv, &mut wo),
                        dec_fast(x3, &table, wv, &mut wo),
                    ];
                    wp += wo;
                } else {
                    *g = [
                        dec_step(x0, &table, words, &mut wp),
                        dec_step(x1, &table, words, &mut wp),
                        dec_step(x2, &table, words, &mut wp),
                        dec_step(x3, &table, words, &mut wp),
                    ];
                }
            }
            for (s, xs) in tail.iter_mut().zip(x.iter_mut()) {
                *s = dec_step(xs, &table, words, &mut wp);
            }
            let (og, ot) = ob.as_chunks_mut::<WAYS>();
            let (sg, st) = sb.as_chunks::<WAYS>();
            for (o, s) in og.iter_mut().zip(sg) {
                if u32::from_le_bytes(*s) & 0xf0f0_f0f0 == 0 {
                    // four direct symbols, no extra bits (most groups of smooth data)
                    for (o, &s) in o.iter_mut().zip(s) {
                        *o = conv(q.push(u64::from(s)));
                    }
                    continue;
                }
                // As above for the extra bytes.
                if let Some(bv) = ex
                    .bits
                    .get(ex.pos >> 3..)
                    .and_then(|b| b.first_chunk::<GROUP_BITS>())
                {
                    let mut bo = ex.pos & 7;
                    for (o, &s) in o.iter_mut().zip(s) {
                        *o = conv(q.push(residual_fast(s, bv, &mut bo)));
                    }
                    ex.pos = (ex.pos & !7) + bo;
                } else {
                    for (o, &s) in o.iter_mut().zip(s) {
                        *o = conv(q.push(ex.residual(s)));
                    }
                }
            }
            for (o, &s) in ot.iter_mut().zip(st) {
                *o = conv(q.push(ex.residual(s)));
            }
        }
    }
    if wp != words.len() || x.iter().any(|&xs| xs != RANS_L) {
        return Err(Error::Corrupt(
            "entropy chunk: rANS stream does not end in its initial state",
        ));
    }
    // Every extra bit read lies in the extra bytes, they end in the last one, and its bits
    // past the last read are zero.
    let pad = match ex.pos & 7 {
        0 => 0,
        k => extra.get(ex.pos >> 3).map_or(0, |&b| u32::from(b) >> k),
    };
    if ex.pos.div_ceil(8) != extra.len() || pad != 0 {
        return Err(Error::Corrupt("entropy chunk: extra bits length"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 4096;
    const CAP: usize = encode_buffer_len(N);

    /// xorshift64*
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Fills `q` with a walk from `start`: each value is the last plus `step()`.
    fn walk_into(q: &mut [i64], start: i64, mut step: impl FnMut() -> i64) {
        let mut acc = start;
        for x in q.iter_mut() {
            acc = acc.wrapping_add(step());
            *x = acc;
        }
    }

    /// [`walk_into`] a new array.
    fn walk<const L: usize>(start: i64, step: impl FnMut() -> i64) -> [i64; L] {
        let mut q = [0i64; L];
        walk_into(&mut q, start, step);
        q
    }

    /// Encodes, checks the size bound and the exact round trip; returns the coded length.
    fn round_trip(levels: &[i64]) -> usize {
        round_trip_mode(levels).0
    }

    /// [`round_trip`], and the mode byte.
    fn round_trip_mode(levels: &[i64]) -> (usize, u8) {
        round_trip_rows(levels, 0)
    }

    /// [`round_trip_mode`] with rows of `row` levels.
    fn round_trip_rows(levels: &[i64], row: usize) -> (usize, u8) {
        let mut coded = [0u8; CAP];
        let buf = &mut coded[..encode_buffer_len(levels.len())];
        let len = encode_chunk_rows(levels, row, buf).unwrap();
        assert!(len <= max_coded_len(levels.len()), "{len} > bound");
        let mut back = [0i64; N];
        decode_chunk(&coded[..len], &mut back[..levels.len()]).unwrap();
        assert_eq!(&back[..levels.len()], levels);
        (len, coded[0])
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn adversarial_sequences_round_trip() {
        let mut q = [0i64; N];
        assert_eq!(round_trip(&q[..0]), 0);
        for n in [1, 2, 3, 4, 5, 7, 8, 9, 100, N] {
            // all equal (zero and far from zero)
            for v in [0, 7, -1, i64::MAX, i64::MIN, 1 << 62] {
                q[..n].fill(v);
                round_trip(&q[..n]);
            }
            // alternating small and huge
            for (a, b) in [
                (1, -1),
                (0, 1 << 62),
                (-(1 << 62), 1 << 62),
                (i64::MIN, i64::MAX),
            ] {
                for (i, x) in q[..n].iter_mut().enumerate() {
                    *x = if i % 2 == 0 { a } else { b };
                }
                round_trip(&q[..n]);
            }
            // a ramp with one huge jump in the middle
            for (i, x) in q[..n].iter_mut().enumerate() {
                *x = i as i64 + if i > n / 2 { (1 << 62) - 5 } else { 0 };
            }
            round_trip(&q[..n]);
            for row in [2, 3, 5, 64] {
                round_trip_rows(&q[..n], row);
            }
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn generated_sequences_round_trip() {
        let mut rng = Rng(0x1234_5678_9ABC_DEF1);
        let mut q = [0i64; N];
        let mut modes = [0usize; 256];
        for case in 0..600 {
            let n = match case % 4 {
                0 => rng.below(20) as usize,
                1 => rng.below(N as u64 + 1) as usize,
                _ => N - rng.below(8) as usize,
            };
            // residual magnitude scale (bits), outlier rate, zero rate
            let scale = rng.below(64) as u32;
            let outliers = rng.below(50);
            let zeros = rng.below(100);
            let start = rng.next() as i64 >> rng.below(64);
            walk_into(&mut q[..n], start, || {
                if rng.below(100) < zeros {
                    0
                } else if rng.below(1000) < outliers {
                    rng.next() as i64
                } else {
                    (rng.next() >> (63 - scale.min(62))) as i64 - (1i64 << scale.min(62) >> 1)
                }
            });
            if case % 3 == 0 {
                // integrate once more: a curved signal, where order 2 predicts better
                let mut s = 0i64;
                for x in q[..n].iter_mut() {
                    s = s.wrapping_add(*x >> 8);
                    *x = s;
                }
            }
            // rows: none, degenerate, typical, longer than the chunk, beyond the ring
            let row = [0, 1, 2, 3, 7, 64, 100, 1000, n, N + 5, MAX_PLANE_ROW + 1][case % 11];
            if case % 5 == 1 {
                // a 2-D field: rows that repeat with a slow drift, where the plane predicts
                for i in row.max(1)..n {
                    q[i] = q[i - row.max(1)].wrapping_add((rng.below(3) as i64) - 1);
                }
            }
            let (len, mode) = round_trip_rows(&q[..n], row);
            if len > 0 {
                modes[usize::from(mode)] += 1;
            }
        }
        // every coding and predictor was exercised
        for m in [MODE_RANS, MODE_FIXED] {
            for p in [PRED_ORDER1, PRED_ORDER2, PRED_PLANE] {
                assert!(
                    modes[usize::from(m | p)] > 2,
                    "mode {:#x}: {}",
                    m | p,
                    modes[usize::from(m | p)]
                );
            }
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn values_round_trip_without_a_predictor_in_both_codings() {
        let mut rng = Rng(7);
        let mut coded = [0u8; CAP];
        let mut back = [0i64; N];
        let mut seen = [false; 2];
        for case in 0..40 {
            let n = [1, 2, 5, 100, 1000, N][case % 6];
            // mostly zeros (rANS pays), uniform over a wide range (fixed width), extremes
            let v: [i64; N] = core::array::from_fn(|i| match case % 4 {
                0 => i64::from(rng.below(100) >= 95) * (rng.below(9) as i64 - 4),
                1 => rng.below(1 << 20) as i64 - (1 << 19),
                2 => [i64::MIN, i64::MAX, 0, -1][i % 4],
                _ => (i as i64 % 7) - 3,
            });
            let buf = &mut coded[..encode_buffer_len(n)];
            let len = encode_values(&v[..n], buf).unwrap();
            assert!(len <= max_coded_len(n));
            assert!([PRED_NONE, PRED_ORDER1].contains(&(coded[0] & 0xf0)));
            decode_chunk(&coded[..len], &mut back[..n]).unwrap();
            assert_eq!(&back[..n], &v[..n], "case {case}");
            if n > 100 {
                seen[usize::from(coded[0] & 0x0f == MODE_FIXED)] = true;
            }
        }
        assert_eq!(seen, [true, true], "both codings exercised");
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn smooth_chunks_code_below_one_bit_per_value() {
        // 97 % zero residuals, the rest ±1..3: entropy ~0.25 bits; a fixed width needs 3.
        let mut rng = Rng(99);
        let q: [i64; N] = walk(1_000_000, || {
            if rng.below(100) >= 97 {
                rng.below(7) as i64 - 3
            } else {
                0
            }
        });
        let mut coded = [0u8; CAP];
        let len = encode_chunk(&q, &mut coded).unwrap();
        assert_eq!(coded[0], MODE_RANS);
        assert!(
            len * 8 < N * 2 / 5,
            "{} bits per value",
            len as f64 * 8.0 / N as f64
        );
        round_trip(&q);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn plane_predictor_wins_on_a_smooth_two_d_field() {
        // q = a(i) + b(j) on 64-wide rows: the plane residual is 0 everywhere past the first
        // row, order 1 and 2 see the row profile.
        let mut rng = Rng(21);
        let row_profile: [i64; 64] = walk(0, || rng.below(41) as i64 - 20);
        let mut q = [0i64; N];
        for (k, x) in q.iter_mut().enumerate() {
            *x = row_profile[k % 64] + 3 * (k / 64) as i64;
        }
        let (len2d, mode) = round_trip_rows(&q, 64);
        assert_eq!(mode & 0xf0, PRED_PLANE);
        let (len1d, mode) = round_trip_mode(&q);
        assert_ne!(mode & 0xf0, PRED_PLANE);
        assert!(len2d * 4 < len1d, "{len2d} vs {len1d}");
        // the decoder learns the row length from the chunk
        let mut coded = [0u8; CAP];
        let len = encode_chunk_rows(&q, 64, &mut coded).unwrap();
        let mut v = [0f64; N];
        decode_chunk_values(&coded[..len], 0.5, &mut v).unwrap();
        assert!(v.iter().zip(&q).all(|(a, &b)| *a == b as f64));
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn noise_falls_back_to_fixed_width() {
        let mut rng = Rng(5);
        let mut q = [0i64; N];
        for x in q.iter_mut() {
            *x = rng.next() as i64;
        }
        let mut coded = [0u8; CAP];
        let len = encode_chunk(&q, &mut coded).unwrap();
        assert_eq!(coded[0] & 0x0f, MODE_FIXED);
        assert_eq!(len, 1 + leb_len(zigzag(q[0])) + 1 + (N - 1) * 8);
        round_trip(&q);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn short_outputs_are_errors_not_overruns() {
        let mut rng = Rng(11);
        let q: [i64; 300] = walk(0, || rng.below(9) as i64 - 4);
        let mut full = [0u8; 4000];
        let len = encode_chunk(&q, &mut full).unwrap();
        for cap in 0..len {
            let mut out = [0u8; 4000];
            match encode_chunk(&q, &mut out[..cap]) {
                Err(Error::OutputTooSmall { needed }) => assert!(needed > cap),
                Ok(l) => {
                    // A shorter slice may still hold the other form.
                    assert!(l <= cap);
                    let mut back = [0i64; 300];
                    decode_chunk(&out[..l], &mut back).unwrap();
                    assert_eq!(back, q);
                }
                Err(e) => panic!("{e:?}"),
            }
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn damaged_chunks_are_errors_or_other_levels_never_panics() {
        let mut rng = Rng(3);
        let mut q: [i64; 257] = walk(0, || {
            if rng.below(10) == 0 {
                rng.below(1 << 20) as i64
            } else {
                rng.below(3) as i64 - 1
            }
        });
        damage(&q, 0);
        // rows of 16 that repeat with small changes and jumps: the plane predictor
        for i in 16..257 {
            q[i] = q[i - 16]
                + if rng.below(10) == 0 {
                    rng.below(1 << 20) as i64
                } else {
                    rng.below(3) as i64 - 1
                };
        }
        damage(&q, 16);
    }

    fn damage(q: &[i64; 257], row: usize) {
        let q = *q;
        let mut coded = [0u8; 4000];
        let len = encode_chunk_rows(&q, row, &mut coded).unwrap();
        assert_eq!(coded[0] & 0x0f, MODE_RANS);
        assert_eq!(coded[0] & 0xf0 == PRED_PLANE, row > 0);
        let mut back = [0i64; 257];
        let mut detected = 0;
        for i in 0..len {
            for bit in 0..8 {
                let mut bad = coded;
                bad[i] ^= 1 << bit;
                match decode_chunk(&bad[..len], &mut back) {
                    Err(_) => detected += 1,
                    Ok(()) => assert_ne!(back, q, "flip at byte {i} bit {bit} went unseen"),
                }
            }
            // truncation and one extra byte
            assert!(decode_chunk(&coded[..i], &mut back).is_err());
        }
        assert!(decode_chunk(&coded[..len + 1], &mut back).is_err());
        // wrong n
        assert!(decode_chunk(&coded[..len], &mut back[..256]).is_err());
        assert!(
            detected > len * 4,
            "{detected} of {} flips detected",
            len * 8
        );
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn random_bytes_never_panic() {
        // Arbitrary chunks with a valid-looking mode byte and header reach the table, extra-bit
        // and rANS paths; each must end in an error or in some levels, never a panic.
        let mut rng = Rng(0xDEC0DE);
        let mut buf = [0u8; 600];
        let mut back = [0i64; 700];
        let mut vals = [0f32; 700];
        let mut errors = 0;
        for case in 0..3000 {
            let len = rng.below(buf.len() as u64) as usize;
            for b in buf[..len].iter_mut() {
                *b = rng.next() as u8;
            }
            if len > 0 {
                buf[0] = [0x00, 0x01, 0x10, 0x11, 0x20, 0x21][case % 6];
            }
            if len > 3 && case % 2 == 0 {
                // a short first level and a small symbol count / width / row
                buf[1] = rng.below(128) as u8;
                buf[2] = if buf[0] & 0xf0 == PRED_PLANE {
                    2 + rng.below(100) as u8
                } else {
                    rng.below(137) as u8
                };
            }
            let n = rng.below(back.len() as u64) as usize;
            errors += usize::from(decode_chunk(&buf[..len], &mut back[..n]).is_err());
            let _ = decode_chunk_values(&buf[..len], 0.25, &mut vals[..n]);
        }
        assert!(errors > 2900, "{errors} of 3000 random chunks rejected");
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn values_decode_equals_levels_then_reconstruct() {
        let eb = 1e-3;
        let x: [f32; 1000] = core::array::from_fn(|i| ((i as f32) * 0.37).sin() * 20.0);
        let mut q = [0i64; 1000];
        levels_of(&x, eb, &mut q).unwrap();
        let mut coded = [0u8; CAP];
        let len = encode_chunk(&q, &mut coded).unwrap();
        let mut v = [0f32; 1000];
        decode_chunk_values(&coded[..len], eb, &mut v).unwrap();
        for (a, &l) in v.iter().zip(&q) {
            assert_eq!(a.to_bits(), reconstruct::<f32>(l, eb).to_bits());
        }
        assert!(levels_of(&x, eb, &mut q[..999]).is_err());
        // the strict check: the plan's own bound passes, a bound below the quantizer's fails
        let cfg = crate::szp::Config::abs(1e-3);
        let mut plan = crate::szp::blocks::plan(&x, &cfg).unwrap();
        let mut q2 = [0i64; 1000];
        levels_checked(&x, &plan, 0, &mut q2).unwrap();
        levels_of(&x, plan.quant_eb, &mut q).unwrap();
        assert_eq!(q, q2);
        plan.bound = plan.quant_eb / 4.0;
        assert!(matches!(
            levels_checked(&x, &plan, 5000, &mut q2),
            Err(Error::BoundViolated { index }) if index >= 5000
        ));
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn reciprocal_division_is_exact() {
        let mut rng = Rng(77);
        for x in [1, 2, 77, 1 << 16, u32::MAX] {
            // frequency 1: one short (the encoder's table makes up for it)
            assert_eq!(Recip::new(1).div(x), x - 1);
        }
        for f in 2..=M {
            let r = Recip::new(f);
            for x in [
                0,
                1,
                f - 1,
                f,
                f + 1,
                u32::MAX,
                u32::MAX - 1,
                u32::MAX / f * f,
                u32::MAX / f * f - 1,
            ] {
                assert_eq!(r.div(x), x / f, "x {x} f {f}");
            }
            for _ in 0..64 {
                let x = rng.next() as u32;
                assert_eq!(r.div(x), x / f, "x {x} f {f}");
            }
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn symbols_cover_every_residual() {
        let mut rng = Rng(8);
        for k in 0..=64u32 {
            for _ in 0..50 {
                let u = if k == 0 {
                    0
                } else {
                    (1u64 << (k - 1)) | (rng.next() & mask(k - 1))
                };
                let (s, e) = symbol(u);
                assert!(s < ALPHABET);
                let (base, eb) = BASES[s];
                assert_eq!(eb, e);
                assert_eq!(base | (u & mask(e)), u);
            }
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn chunks_longer_than_the_kept_symbols_round_trip() {
        // Past SYM_KEEP residuals the encoder's second pass computes the symbols again; a
        // mistake there codes other symbols than the table counted, and the round trip fails.
        const L: usize = SYM_KEEP + 3 * BLK + 7;
        let mut rng = Rng(404);
        let mut q = [0i64; L];
        walk_into(&mut q, 12, || {
            if rng.below(20) == 0 {
                rng.below(1 << 30) as i64 - (1 << 29)
            } else {
                rng.below(5) as i64 - 2
            }
        });
        let mut coded = [0u8; encode_buffer_len(L)];
        let mut back = [0i64; L];
        for row in [0, 100] {
            let len = encode_chunk_rows(&q, row, &mut coded).unwrap();
            assert_eq!(coded[0] & 0x0f, MODE_RANS);
            decode_chunk(&coded[..len], &mut back).unwrap();
            assert!(back == q, "row {row}");
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn one_symbol_chunks_round_trip_and_check_their_states() {
        // Second differences of 40 (and a first step of 40): every order-2 residual is 80,
        // one symbol (with extra bits) of frequency M, whose states never move; the decoder's
        // path for it still checks that the stream is exactly four initial states.
        let q: [i64; 1000] = core::array::from_fn(|i| 7 + 20 * (i * (i + 1)) as i64);
        let mut coded = [0u8; encode_buffer_len(1000)];
        let len = encode_chunk(&q, &mut coded).unwrap();
        assert_eq!(coded[0], MODE_RANS | PRED_ORDER2);
        // one symbol: its count byte is 1 + its index, no table bits follow
        let s = symbol(80).0;
        let syms_at = 1 + leb_len(zigzag(7));
        assert_eq!(usize::from(coded[syms_at]), s + 1);
        let mut back = [0i64; 1000];
        decode_chunk(&coded[..len], &mut back).unwrap();
        assert_eq!(back, q);
        // every bit of the four states matters
        for i in len - 4 * WAYS..len {
            for bit in 0..8 {
                let mut bad = coded;
                bad[i] ^= 1 << bit;
                assert!(
                    decode_chunk(&bad[..len], &mut back).is_err(),
                    "state byte {i} bit {bit}"
                );
            }
        }
        assert!(decode_chunk(&coded[..len - 1], &mut back).is_err());
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code over 10^4+ coded values: too slow for Miri; runs natively"
    )]
    fn every_encoder_path_gives_the_same_bytes() {
        // encode_chunk_rows runs the encoder compiled for AVX2 and BMI2 where the CPU has
        // them; its bytes must be the portable body's.
        let mut rng = Rng(0xB17E5);
        let mut q = [0i64; N];
        let mut a = [0u8; CAP];
        let mut b = [0u8; CAP];
        for case in 0..200 {
            let n = if case % 2 == 0 {
                N
            } else {
                rng.below(N as u64) as usize
            };
            let scale = rng.below(63) as u32;
            walk_into(&mut q[..n], rng.next() as i64 >> 8, || {
                if rng.below(50) == 0 {
                    rng.next() as i64
                } else {
                    (rng.next() >> (63 - scale)) as i64 - (1i64 << scale >> 1)
                }
            });
            let row = [0, 3, 64][case % 3];
            let la = encode_chunk_rows(&q[..n], row, &mut a).unwrap();
            let lb = encode_rows_body(&q[..n], row, &mut b).unwrap();
            assert!(a[..la] == b[..lb], "case {case}");
        }
    }

    #[test]
    fn levels_equal_the_scalar_quantizer_on_every_path() {
        // levels_checked runs the portable kernel's quantizer (compiled for AVX-512 where the
        // CPU has it): a reciprocal multiply, the exact division near rounding ties. Its levels
        // must be quantize()'s, near ties, huge and non-finite values included, and the first
        // violation the scalar check's.
        let eb = 0.001_f64;
        let mut x = [0f64; 3000];
        let mut rng = Rng(31);
        for (i, v) in x.iter_mut().enumerate() {
            let k = rng.below(1 << 20) as f64 - (1 << 19) as f64;
            *v = match i % 6 {
                // just around a tie (k + ½)·2eb, a few ulps either way
                0 => f64::from_bits(
                    ((k + 0.5) * 2.0 * eb)
                        .to_bits()
                        .wrapping_add(rng.below(7))
                        .wrapping_sub(3),
                ),
                1 => k * 2.0 * eb,
                2 => (rng.next() as i64) as f64 * 1e-3,
                3 => f64::from_bits(rng.next()),
                4 => [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -0.0, 5e-324][i / 6 % 5],
                _ => (i as f64 * 0.37).sin() * 1e5,
            };
        }
        let mut q = [0i64; 3000];
        levels_of(&x, eb, &mut q).unwrap();
        for (&v, &l) in x.iter().zip(&q) {
            assert_eq!(l, quantize(v, eb), "{v:e}");
        }
        let mut plan =
            crate::szp::blocks::plan(&[0.0f64, 1.0], &crate::szp::Config::abs(eb)).unwrap();
        plan.quant_eb = eb;
        plan.bound = eb * 1.000_001;
        let first = x
            .iter()
            .position(|&v| crate::bits::misses(v, quantize(v, eb), eb, plan.bound));
        let mut q2 = [0i64; 3000];
        let got = levels_checked(&x, &plan, 10, &mut q2);
        match first {
            Some(i) => {
                assert!(matches!(got, Err(Error::BoundViolated { index }) if index == 10 + i))
            }
            None => assert!(got.is_ok()),
        }
        assert!(first.is_some(), "the data has values beyond the bound");
        // finite data within range: no violation, the same levels
        let y: [f32; 2000] =
            core::array::from_fn(|i| ((i as f32) * 0.013).cos() * 300.0 + (i % 7) as f32 * 0.0005);
        let cfg = crate::szp::Config::abs(1e-3);
        let plan = crate::szp::blocks::plan(&y, &cfg).unwrap();
        let mut qy = [0i64; 2000];
        levels_checked(&y, &plan, 0, &mut qy).unwrap();
        for (&v, &l) in y.iter().zip(&qy) {
            assert_eq!(l, quantize(v, plan.quant_eb));
        }
    }
}
