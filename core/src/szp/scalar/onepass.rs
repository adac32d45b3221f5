//! The scalar path's one-pass block encoder.
//!
//! The spec's steps in one pass per value — quantize ([`quantize`], the f64 division), the
//! strict check, delta, zigzag, width — with the zigzagged values kept in the caller's output
//! slice (from the block's payload offset on) instead of a stack buffer, then packed in place.
//! Packing in place is safe: when value `i` is appended, the words written so far end at bit
//! `(i+1)·w <= 64·(i+1)`, i.e. at or before the end of value `i`'s own 8-byte slot, so the
//! writer only overwrites values already read. The two-pass encoder of [`super::super::blocks`]
//! (no scratch) remains for output slices too short to hold `8·len` bytes at the block's
//! offset; both give the same bytes.

use super::super::blocks::{Plan, quantize, reconstruct};
use super::super::{Error, SzpFloat};

#[inline(always)]
fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

/// Encodes `block` (index of its first value `first`) at the start of `rest`; returns its
/// width, or `None` (nothing written) when `rest` is shorter than `8·block.len()`.
/// The payload is `ceil(len·w/8)` bytes; bytes after it up to `8·len` are left as scratch.
pub(crate) fn encode_block<T: SzpFloat>(
    plan: &Plan,
    block: &[T],
    rest: &mut [u8],
    first: usize,
) -> Result<Option<u8>, Error> {
    let len = block.len();
    let Some(buf) = rest.get_mut(..len.saturating_mul(8)) else {
        return Ok(None);
    };
    let eb = plan.quant_eb;
    let (mut prev, mut any) = (0i64, 0u64);
    for (i, (&x, slot)) in block.iter().zip(buf.chunks_exact_mut(8)).enumerate() {
        let q = quantize(x, eb);
        if plan.strict {
            let err = (x.to_f64() - reconstruct::<T>(q, eb).to_f64()).abs();
            if err.is_nan() || err > plan.bound {
                return Err(Error::BoundViolated { index: first + i });
            }
        }
        let z = zigzag(q.wrapping_sub(prev));
        prev = q;
        any |= z;
        slot.copy_from_slice(&z.to_le_bytes());
    }
    let w = 64 - any.leading_zeros();
    if w > 0 {
        pack_in_place(buf, len, w);
    }
    Ok(Some(w as u8))
}

/// Packs the `len` little-endian u64 values of `buf` (each `< 2^w`, `1 <= w <= 64`) LSB-first
/// into its first `ceil(len·w/8)` bytes.
#[inline(always)]
fn pack_in_place(buf: &mut [u8], len: usize, w: u32) {
    let (mut acc, mut fill, mut pos) = (0u64, 0u32, 0usize);
    for i in 0..len {
        let mut b = [0u8; 8];
        if let Some(s) = buf.get(8 * i..8 * i + 8) {
            b.copy_from_slice(s);
        }
        let v = u64::from_le_bytes(b);
        acc |= v << fill; // fill < 64
        let nf = fill + w;
        if nf >= 64 {
            if let Some(d) = buf.get_mut(pos..pos + 8) {
                d.copy_from_slice(&acc.to_le_bytes());
            }
            pos += 8;
            acc = if fill == 0 { 0 } else { v >> (64 - fill) };
            fill = nf - 64;
        } else {
            fill = nf;
        }
    }
    let tail = fill.div_ceil(8) as usize;
    if let Some(d) = buf.get_mut(pos..pos + tail) {
        d.copy_from_slice(&acc.to_le_bytes()[..tail]);
    }
}
