//! The SZp number and bit-stream rules, each defined once: the quantizer and its
//! reconstruction (spec §1.2, §1.7), zigzag (§1.4), the block width (§1.5) and the payload
//! length of a block (§1.6). Every SZp kernel under [`crate::arch`] and every driver in
//! [`crate::szp`] uses these functions; none restates them.

use crate::types::SzpFloat;

/// Quantized levels must stay below this magnitude (so deltas fit in i64 without wrapping).
pub(crate) const LEVEL_LIMIT: f64 = 4_611_686_018_427_387_904.0; // 2^62

/// The quantized level of `x` (spec §1.2: f64 division, round half away from zero).
#[inline(always)]
pub fn quantize<T: SzpFloat>(x: T, eb: f64) -> i64 {
    round_half_away(x.to_f64() / (2.0 * eb))
}

/// `llround` for `|v| < 2^62` (guaranteed by the plan): exact, without a libm call. The
/// integer part is exact, so is `a − trunc(a)`, and ties (`frac == 0.5`) go away from zero.
/// Signed conversions (one instruction each way on x86_64, unlike u64's) suffice below 2^62;
/// larger magnitudes saturate.
#[inline(always)]
fn round_half_away(v: f64) -> i64 {
    let a = v.abs();
    let i = a as i64;
    let r = i.saturating_add(i64::from(a - i as f64 >= 0.5));
    if v < 0.0 { r.wrapping_neg() } else { r }
}

/// The reconstruction of level `q` (spec §1.7: `(q·2)·eb`, then the element type).
#[inline(always)]
pub fn reconstruct<T: SzpFloat>(q: i64, eb: f64) -> T {
    T::from_f64(q as f64 * 2.0 * eb)
}

/// Zigzag of a delta (spec §1.4): `(d << 1) ^ (d >> 63)`.
#[inline(always)]
pub fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline(always)]
pub fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// The width byte of a block whose zigzagged deltas OR to `any` (spec §1.5): the bit length of
/// the largest value, 0 when all are 0.
#[inline(always)]
pub fn width(any: u64) -> u8 {
    (64 - any.leading_zeros()) as u8
}

/// Payload bytes of a block of `len` values at width `width` (spec §1.6): `ceil(len·width/8)`.
#[inline(always)]
pub fn payload_len(width: u8, len: usize) -> usize {
    // len <= 4096 and width <= 64 in valid archives; saturate for hostile ones.
    len.saturating_mul(usize::from(width)).div_ceil(8)
}

/// The low-`w`-bits mask (`w` in 1..=64).
#[inline(always)]
pub(crate) fn mask(w: u32) -> u64 {
    if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }
}

/// The strict check of one value: whether the reconstruction of level `q` misses `bound`
/// (or is NaN).
#[inline(always)]
pub(crate) fn misses<T: SzpFloat>(x: T, q: i64, eb: f64, bound: f64) -> bool {
    let err = (x.to_f64() - reconstruct::<T>(q, eb).to_f64()).abs();
    err.is_nan() || err > bound
}

/// A 64-bit LSB-first bit accumulator writing whole little-endian words into `out`: the one
/// bit-stream writer of the portable kernels.
pub(crate) struct BitAcc<'a> {
    out: &'a mut [u8],
    acc: u64,
    fill: u32,
    pos: usize,
}

impl<'a> BitAcc<'a> {
    /// A writer at the start of `out`.
    #[inline(always)]
    pub(crate) fn new(out: &'a mut [u8]) -> Self {
        BitAcc {
            out,
            acc: 0,
            fill: 0,
            pos: 0,
        }
    }

    /// Appends the low `w` bits of `v` (`v < 2^w`, `1 <= w <= 64`).
    #[inline(always)]
    pub(crate) fn put(&mut self, v: u64, w: u32) {
        let fill = self.fill;
        self.acc |= if fill == 64 { 0 } else { v << fill };
        let nf = fill + w;
        if nf >= 64 {
            if let Some(dst) = self.out.get_mut(self.pos..self.pos + 8) {
                dst.copy_from_slice(&self.acc.to_le_bytes());
            }
            self.pos += 8;
            self.acc = if fill == 0 { 0 } else { v >> (64 - fill) };
            self.fill = nf - 64;
        } else {
            self.fill = nf;
        }
    }

    /// Writes the last `ceil(fill/8)` bytes.
    #[inline(always)]
    pub(crate) fn finish(self) {
        let tail = self.fill.div_ceil(8) as usize;
        let bytes = self.acc.to_le_bytes();
        if let (Some(dst), Some(src)) = (
            self.out.get_mut(self.pos..self.pos + tail),
            bytes.get(..tail),
        ) {
            dst.copy_from_slice(src);
        }
    }
}

/// Field `i` (width `w`, 1..=64) of an LSB-first payload: one unaligned 8-byte load when the
/// field's 8-byte window lies inside `payload` and `w <= 56`, else a bytewise read through a
/// 128-bit window (missing bytes read as 0).
#[inline(always)]
pub(crate) fn field(payload: &[u8], i: usize, w: u32) -> u64 {
    let bit = i * w as usize;
    let from = bit / 8;
    if w <= 56
        && let Some(src) = payload.get(from..from + 8)
    {
        let mut b = [0u8; 8];
        b.copy_from_slice(src);
        return (u64::from_le_bytes(b) >> (bit % 8)) & mask(w);
    }
    let mut b = [0u8; 16];
    let take = payload.len().saturating_sub(from).min(9);
    if let (Some(dst), Some(src)) = (b.get_mut(..take), payload.get(from..from + take)) {
        dst.copy_from_slice(src);
    }
    ((u128::from_le_bytes(b) >> (bit % 8)) as u64) & mask(w)
}

/// Most blocks in one head group of the block-head layout (`szp::Layout::Heads`): a group
/// holds `1 << min(5, chunk_shift)` blocks, so groups never straddle a checksum chunk.
pub const HEAD_GROUP_MAX: usize = 32;

/// The blocks per head group for an archive whose checksum chunks hold `2^chunk_shift`
/// blocks: `2^min(5, chunk_shift)`.
#[inline]
pub fn head_group(chunk_shift: u8) -> usize {
    1usize << chunk_shift.min(5)
}

/// The head trailer of a group (block-head layout): the bit length `hw` of the largest
/// `zigzag(head_j − head_{j−1})` (`head_{−1} = 0` at the start of every group).
#[inline]
pub(crate) fn heads_width(heads: &[i64]) -> u8 {
    let (mut prev, mut any) = (0i64, 0u64);
    for &h in heads {
        any |= zigzag(h.wrapping_sub(prev));
        prev = h;
    }
    width(any)
}

/// Bytes of a head trailer of `cnt` heads at width `hw`: the width byte and the packed fields.
#[inline(always)]
pub fn trailer_len(hw: u8, cnt: usize) -> usize {
    1 + payload_len(hw, cnt)
}

/// Writes the head trailer of `heads` at the start of `out`: one byte `hw`
/// ([`heads_width`]), then `zigzag(head_j − head_{j−1})` packed LSB-first at `hw` bits (pad
/// bits zero). Returns its length, or `Err(length)` when `out` is shorter.
#[inline]
pub(crate) fn put_heads(heads: &[i64], out: &mut [u8]) -> Result<usize, usize> {
    let hw = heads_width(heads);
    let len = trailer_len(hw, heads.len());
    let dst = out.get_mut(..len).ok_or(len)?;
    let Some((first, packed)) = dst.split_first_mut() else {
        return Err(len);
    };
    *first = hw;
    if hw > 0 {
        packed.fill(0);
        let mut acc = BitAcc::new(packed);
        let mut prev = 0i64;
        for &h in heads {
            acc.put(zigzag(h.wrapping_sub(prev)), u32::from(hw));
            prev = h;
        }
        acc.finish();
    }
    Ok(len)
}
