//! The SZp reference and portable block kernels.
//!
//! **Reference** ([`Reference`]): one pass per value — quantize (the f64 division), the strict
//! check, delta, zigzag, width — with the zigzagged values parked in the caller's output slice
//! (from the block's payload offset on) and packed in place. Packing in place is safe: when
//! value `i` is appended, the words written so far end at bit `(i+1)·w <= 64·(i+1)`, i.e. at
//! or before the end of value `i`'s own 8-byte slot, so the writer only overwrites values
//! already read. Where the output is too short for that scratch, a two-pass encoder (width,
//! then a 128-bit bit writer) gives the same bytes.
//!
//! **Portable** ([`Portable`]): kernels written for vectorization — quantize + delta + zigzag +
//! width as one branch-free pass into a block buffer, a separate branch-free strict check,
//! word-at-a-time LSB-first packing, and decode as unpack + prefix sum into a level buffer
//! followed by a scale pass. Not hand-written intrinsics: the x86_64 AVX2 leaf compiles these
//! same functions under its target features, and the other leaves reuse pieces of them. Every
//! result is the reference's bits (the same IEEE operations in the same order).

use super::{Portable, Reference};
use crate::arch::szp::{
    BUF, BlockError, DecodeError, Quant, Run, Stats, SzpKernel, block_methods, decode_run_with,
};
use crate::bits::{
    self, BitAcc, payload_len, quantize, reconstruct, unpack_levels, unzigzag, zigzag,
};
use crate::types::SzpFloat;
use crate::types::sealed::FloatsMut;

// ---------------------------------------------------------------------------------------
// Reference

/// The reference width of one block (the sizing pass and the two-pass encoder share one copy).
#[inline]
pub(crate) fn ref_width<T: SzpFloat>(eb: f64, block: &[T], seed: i64) -> u8 {
    width_of(eb, block.iter().copied(), seed)
}

/// The width of the values `xs` (deltas from `seed`).
#[inline(always)]
fn width_of<T: SzpFloat>(eb: f64, xs: impl Iterator<Item = T>, seed: i64) -> u8 {
    let qz = bits::Quantizer::new(eb);
    let mut prev = seed;
    let mut any = 0u64;
    for x in xs {
        let q = qz.level(x);
        any |= zigzag(q.wrapping_sub(prev));
        prev = q;
    }
    bits::width(any)
}

/// The reference two-pass block encoder (deltas from `seed`): `out` must be exactly
/// `payload_len(width, len)` bytes (else `Short`); pad bits zero; strict plans check every
/// reconstruction.
pub(crate) fn ref_encode<T: SzpFloat>(
    q: &Quant,
    block: &[T],
    seed: i64,
    width: u8,
    out: &mut [u8],
) -> Result<(), BlockError> {
    encode_values(q, block.iter().copied(), block.len(), seed, width, out)
}

/// [`ref_encode`] of the `len` values `xs`.
#[inline(always)]
fn encode_values<T: SzpFloat>(
    q: &Quant,
    xs: impl Iterator<Item = T>,
    len: usize,
    seed: i64,
    width: u8,
    out: &mut [u8],
) -> Result<(), BlockError> {
    let cost = payload_len(width, len);
    if out.len() != cost || width > 64 {
        return Err(BlockError::Short(cost));
    }
    let w = u32::from(width);
    let mask = bits::mask(w);
    let mut bits = BitAcc::new(out);
    let chk = bits::Check::with_below(q.eb, q.bound, q.below);
    let qz = bits::Quantizer::new(q.eb);
    let mut prev = seed;
    for (i, x) in xs.enumerate() {
        let l = qz.level(x);
        if q.strict && chk.misses_level(x, l) {
            return Err(BlockError::Violation(i));
        }
        let u = zigzag(l.wrapping_sub(prev)) & mask;
        prev = l;
        if w > 0 {
            bits.put(u, w);
        }
    }
    bits.finish();
    Ok(())
}

/// The stand-ins of a block's values at encode: a missing value (NaN, ±inf) becomes the
/// nearest finite value before it in the block, else the block's first finite value, else 0;
/// a finite value is itself. Block-local, so every kernel, split and stream gives the same
/// bytes; a stand-in equals its neighbour, so a missing value costs no jump.
pub(crate) fn filled<T: SzpFloat>(block: &[T]) -> impl Iterator<Item = T> + '_ {
    let first = block
        .iter()
        .copied()
        .find(|x| !x.is_missing())
        .unwrap_or_default();
    block.iter().scan(first, |last, &x| {
        if !x.is_missing() {
            *last = x;
        }
        Some(*last)
    })
}

/// The width and seed of a block with missing values, from its stand-ins ([`filled`]); the
/// seed is 0, or with `heads` the stand-ins' first level.
#[inline(never)]
#[cold]
pub(crate) fn width_filled<T: SzpFloat>(eb: f64, block: &[T], heads: bool) -> (u8, i64) {
    let seed = match filled(block).next() {
        Some(x) if heads => quantize(x, eb),
        _ => 0,
    };
    (width_of(eb, filled(block), seed), seed)
}

/// Encodes a block with missing values from its stand-ins ([`filled`]) by the reference
/// two-pass encoder (what every kernel writes for such a block); returns its width and seed.
#[inline(never)]
#[cold]
pub(crate) fn encode_filled<T: SzpFloat>(
    q: &Quant,
    block: &[T],
    heads: bool,
    dst: &mut [u8],
) -> Result<(u8, i64), BlockError> {
    let (w, seed) = width_filled(q.eb, block, heads);
    let cost = payload_len(w, block.len());
    let out = dst.get_mut(..cost).ok_or(BlockError::Short(cost))?;
    encode_values(q, filled(block), block.len(), seed, w, out)?;
    Ok((w, seed))
}

/// The reference one-pass encoder: `None` (nothing written) when `rest` is shorter than
/// `8·block.len()`.
#[inline(always)]
fn ref_encode_onepass<T: SzpFloat>(
    q: &Quant,
    block: &[T],
    seed: i64,
    rest: &mut [u8],
) -> Option<Result<u8, BlockError>> {
    let len = block.len();
    let buf = rest.get_mut(..len.saturating_mul(8))?;
    let chk = bits::Check::with_below(q.eb, q.bound, q.below);
    let qz = bits::Quantizer::new(q.eb);
    let (mut prev, mut any) = (seed, 0u64);
    for (i, (&x, slot)) in block.iter().zip(buf.chunks_exact_mut(8)).enumerate() {
        let l = qz.level(x);
        if q.strict && chk.misses_level(x, l) {
            return Some(Err(BlockError::Violation(i)));
        }
        let z = zigzag(l.wrapping_sub(prev));
        prev = l;
        any |= z;
        slot.copy_from_slice(&z.to_le_bytes());
    }
    let w = bits::width(any);
    if w > 0 {
        pack_in_place(buf, len, u32::from(w));
    }
    Some(Ok(w))
}

/// The one-pass encoder of f32 blocks for targets without an f64 FPU (on hosts its tests):
/// one f32 quantization per value ([`bits::Quantizer::level_window`], the tie window of the
/// plan's magnitude), the strict check skipped below [`bits::accept_below`]'s magnitude,
/// deltas and zigzag in 32 bits, the zigzagged values parked as u32 in `rest` and packed in
/// place ([`pack32_in_place`]). `None` (the other encoders then write the block) when `T` is
/// not f32, `rest` is shorter than `4·block.len()`, a level or the seed is `2^30` or more in
/// magnitude (then a delta might not fit in 32 bits), or a value is not finite. A block
/// whose largest magnitude lets a value's fixed point reach [`bits::FIXED_LIMIT`], or exceeds
/// the plan's (where the window does not hold), is quantized again with the checked
/// quantizer. The same bytes and the same first violation as [`ref_encode`].
///
/// With [`Quant::unchecked`] (an input no pass validated) a block above the limit or with a
/// value not finite is [`BlockError::Irregular`], before anything else is decided.
#[inline(always)]
pub(crate) fn encode_f32_onepass<T: SzpFloat>(
    q: &Quant,
    block: &[T],
    seed: i64,
    rest: &mut [u8],
) -> Option<Result<u8, BlockError>> {
    encode_f32_onepass_top(q, block, seed, rest).map(|(r, _)| r)
}

/// The first value of `block` (f32, else `None`) that is not finite or whose `|x|` is above
/// the f32 with the bits `below` (at most `0x7f7f_ffff`): the block check of an unvalidated
/// input ([`Quant::unchecked`]).
#[inline(never)]
#[cold]
pub(crate) fn first_beyond<T: SzpFloat>(block: &[T], below: u32) -> Option<usize> {
    block.iter().position(|x| {
        (x as &dyn core::any::Any)
            .downcast_ref::<f32>()
            .is_some_and(|&v| bits::AbsLimit::bits_exceed(v, below))
    })
}

/// [`encode_f32_onepass`], and the largest bits of `|x|` over the block (above
/// `0x7f7f_ffff` where a value is not finite), which the loop tracks at no cost in a
/// register: they decide the strict check, the fixed point's range, the window's and an
/// unvalidated input's limit. (A loop tracking the fixed point's magnitude instead ran as
/// fast, but needed `|x|` checked by a pass of its own.)
#[inline(always)]
pub(crate) fn encode_f32_onepass_top<T: SzpFloat>(
    q: &Quant,
    block: &[T],
    seed: i64,
    rest: &mut [u8],
) -> Option<(Result<u8, BlockError>, u32)> {
    let len = block.len();
    let buf = rest.get_mut(..len.checked_mul(4)?)?;
    let seed = i32::try_from(seed)
        .ok()
        .filter(|s| s.unsigned_abs() < 1 << 30)?;
    let qz = bits::Quantizer::for_f32(q.eb);
    // The tie window of the plan's largest magnitude (a block past it is quantized again).
    let win = qz.window(qz.fixed_abs(f32::from_bits(q.max32)));
    let (words, _) = buf.as_chunks_mut::<4>();
    let (mut any, top) = quantize_f32_block(&qz, win, block, seed, words)?;
    let top = top >> 1;
    // An unvalidated input's block above its limit (or with a value not finite): the first
    // such value, before the checks below read the levels.
    if let Some(b) = q.unchecked
        && top > b
    {
        let i = first_beyond(block, b)?;
        return Some((Err(BlockError::Irregular(i)), top));
    }
    // Magnitudes whose fixed point may reach FIXED_LIMIT (levels of about 65024 and more:
    // those levels are not to be trusted, and such values take the integer path anyway), or
    // past the plan's (the window does not hold for them): the block again with the checked
    // quantizer (exact for every value), so that it pays the integer path once. A value that
    // is not finite (a stream's or an unvalidated input's, which check declined blocks
    // themselves) is declined.
    if top > qz.fixed_limit_bits().min(q.max32) {
        if top >= 0x7f80_0000 {
            return None;
        }
        any = requantize_f32(&qz, block, seed, words)?;
    }
    // The strict check, where some magnitude is above the one that needs none.
    if q.strict
        && top > bits::Check::skip_below(q.below)
        && let Err(e) = first_miss_f32(q, block, seed, words)?
    {
        return Some((Err(e), top));
    }
    let w = bits::width(u64::from(any));
    if w > 0 {
        pack32_in_place(words, len, u32::from(w));
    }
    Some((Ok(w), top))
}

/// The loop of [`encode_f32_onepass_top`]: quantizes `block` with the fast path and the tie
/// window `win`, parks the zigzagged deltas from `prev` in `words` ([`park32`]) and returns
/// their OR and the largest bits of `|x|` shifted left by one; `None` where a level reaches
/// `2^30` or `T` is not f32. Out of line, so that its registers are its own: inlined into the
/// encoders' drivers, it spilled under their register pressure, by amounts that changed with
/// every edit of the code around it.
#[inline(never)]
fn quantize_f32_block<T: SzpFloat>(
    qz: &bits::Quantizer,
    win: bits::Window,
    block: &[T],
    mut prev: i32,
    words: &mut [[u8; 4]],
) -> Option<(u32, u32)> {
    let qz = *qz;
    let (mut any, mut top) = (0u32, 0u32);
    // A level of 2^30 or more: noted, and the block declined after the loop (an exit from
    // inside the loop cost the loop its rotation: a second branch and indexed addressing).
    let mut big = false;
    if T::DTYPE != crate::types::DType::F32 {
        return None;
    }
    let mut step = |x: &T, slot: &mut [u8; 4]| {
        let v = (x as &dyn core::any::Any)
            .downcast_ref::<f32>()
            .copied()
            .unwrap_or_default();
        let s = qz.fixed(v);
        let l = qz.level_window(v, s, win).unwrap_or_else(|| {
            big = true;
            0
        });
        // The bits of |x| shifted left by one (the sign drops out; shifted back after the
        // loop): a shifted compare and a conditional shift on Thumb-2.
        top = top.max(v.to_bits() << 1);
        park32(l, &mut prev, &mut any, slot);
    };
    // Two values a step (one loop test, and the previous level stays in a register).
    let (xs, xt) = block.as_chunks::<2>();
    let (ws, wt) = words.as_chunks_mut::<2>();
    for ([x0, x1], [w0, w1]) in xs.iter().zip(ws.iter_mut()) {
        step(x0, w0);
        step(x1, w1);
    }
    for (x, slot) in xt.iter().zip(wt.iter_mut()) {
        step(x, slot);
    }
    (!big).then_some((any, top))
}

/// The strict check of an f32 block whose levels are parked in `words` as the zigzagged
/// deltas from `seed` ([`park32`]): the first value whose reconstruction misses the bound
/// (values in order, as the reference finds it; values within [`bits::accept_below`]'s
/// magnitude skipped; `None` for `T` not f32). Out of line: the one-pass encoders check only
/// blocks with a magnitude above `accept_below`'s.
#[inline(never)]
fn first_miss_f32<T: SzpFloat>(
    q: &Quant,
    block: &[T],
    seed: i32,
    words: &[[u8; 4]],
) -> Option<Result<(), BlockError>> {
    let words = words.get(..block.len())?;
    let chk = bits::Check::with_below(q.eb, q.bound, q.below);
    let mut l = seed;
    for (i, (x, w)) in block.iter().zip(words).enumerate() {
        let &v = (x as &dyn core::any::Any).downcast_ref::<f32>()?;
        l = l.wrapping_add(parked_delta(w));
        if chk.misses_level(v, l.into()) {
            return Some(Err(BlockError::Violation(i)));
        }
    }
    Some(Ok(()))
}

/// The delta that [`park32`] parked in `w`.
#[inline(always)]
fn parked_delta(w: &[u8; 4]) -> i32 {
    bits::unzigzag32(u32::from_le_bytes(*w))
}

/// Parks the zigzagged delta of level `l` from `prev` (both below `2^30` in magnitude, so the
/// delta fits in i32 and its zigzag, the u64 rule's value, in u32) in `slot`, ORs it into
/// `any`, and makes `l` the next `prev`: the f32 one-pass encoders' step after quantizing.
#[inline(always)]
fn park32(l: i32, prev: &mut i32, any: &mut u32, slot: &mut [u8; 4]) {
    let d = l - *prev;
    let z = bits::zigzag32(d);
    *prev = l;
    *any |= z;
    *slot = z.to_le_bytes();
}

/// The levels of an f32 block again, with the checked quantizer for every value (exact at
/// any magnitude, and slower), for blocks whose fixed point may have reached
/// [`bits::FIXED_LIMIT`] (levels of about 65024 and more): parks the zigzagged deltas from
/// `seed` in `words` (over those the fast path parked) and returns their OR, or `None` where
/// [`encode_f32_onepass`] declines (a level of `2^30` or more in magnitude, `T` not f32).
/// Out of line: rare.
#[inline(never)]
fn requantize_f32<T: SzpFloat>(
    qz: &bits::Quantizer,
    block: &[T],
    seed: i32,
    words: &mut [[u8; 4]],
) -> Option<u32> {
    let words = words.get_mut(..block.len())?;
    let mut prev = seed;
    let mut any = 0u32;
    for (x, slot) in block.iter().zip(words.iter_mut()) {
        let &v = (x as &dyn core::any::Any).downcast_ref::<f32>()?;
        park32(qz.level_checked(v)?, &mut prev, &mut any, slot);
    }
    Some(any)
}

/// The two-pass block encoder (width, then payload) into `dst`: the fallback of the one-pass
/// encoders; returns the width.
#[inline(always)]
pub(crate) fn encode_two_pass<T: SzpFloat>(
    e: &Quant,
    block: &[T],
    seed: i64,
    dst: &mut [u8],
) -> Result<u8, BlockError> {
    let w = ref_width(e.eb, block, seed);
    let cost = payload_len(w, block.len());
    let out = dst.get_mut(..cost).ok_or(BlockError::Short(cost))?;
    ref_encode(e, block, seed, w, out)?;
    Ok(w)
}

/// Packs the first `len` little-endian u32 values of `words` (each `< 2^w`, `1 <= w <= 32`)
/// LSB-first into their first `ceil(len·w/8)` bytes. In place: after value `i` the words
/// written end at byte `4·floor((i+1)·w/32) <= 4·(i+1)`, the end of value `i`'s own slot.
/// Where `w <= 16` the values go in pairs (`v0 | v1 << w`, one field of `2w <= 32` bits),
/// where `w <= 10` in triples (`3w <= 30` bits): one append and one loop step for the group;
/// the bytes are those of one value at a time. (Quadruples for `w <= 8` measured no better
/// on the instrument's data, whose widths are 8 to 13, for 192 more bytes.)
/// Out of line, as [`quantize_f32_block`] and for the same reason (both encoders measured
/// faster on Cortex-M4F with it out of line once that loop was).
#[inline(never)]
fn pack32_in_place(words: &mut [[u8; 4]], len: usize, w: u32) {
    // Cells: the loops read values ahead of the word they write, through shared references.
    let cells = core::cell::Cell::from_mut(words).as_slice_of_cells();
    let cells = cells.get(..len).unwrap_or(cells);
    let mut p = Packer32 {
        acc: 0,
        fill: 0,
        pos: 0,
    };
    let word = |c: &core::cell::Cell<[u8; 4]>| u32::from_le_bytes(c.get());
    // Groups of values as one field of at most 32 bits: one append and one loop step for
    // each group. A group's slots lie at or past the next word written (a group ends at its
    // last value's slot, as single values do).
    let singles = if w <= 10 {
        let (triples, rest) = cells.as_chunks::<3>();
        for [a, b, c] in triples {
            p.push(cells, word(a) | word(b) << w | word(c) << (2 * w), 3 * w);
        }
        rest
    } else if w <= 16 {
        let (pairs, rest) = cells.as_chunks::<2>();
        for [a, b] in pairs {
            p.push(cells, word(a) | word(b) << w, 2 * w);
        }
        rest
    } else {
        cells
    };
    for c in singles {
        p.push(cells, word(c), w);
    }
    let tail = p.fill.div_ceil(8) as usize;
    let bytes = p.acc.to_le_bytes();
    if let (Some(d), Some(s)) = (cells.get(p.pos), bytes.get(..tail)) {
        let mut b = d.get();
        if let Some(b) = b.get_mut(..tail) {
            b.copy_from_slice(s);
        }
        d.set(b);
    }
}

/// The bit writer of [`pack32_in_place`]: `acc` holds `fill < 32` bits not yet stored, the
/// next word to store is `pos`.
struct Packer32 {
    acc: u32,
    fill: u32,
    pos: usize,
}

impl Packer32 {
    /// Appends the `n` low bits of `v` (`1 <= n <= 32`, `v < 2^n`).
    #[inline(always)]
    fn push(&mut self, words: &[core::cell::Cell<[u8; 4]>], v: u32, n: u32) {
        let fill = self.fill;
        self.acc |= v << fill; // fill < 32
        let nf = fill + n; // below 64
        self.fill = nf & 31;
        if nf >= 32 {
            if let Some(d) = words.get(self.pos) {
                d.set(self.acc.to_le_bytes());
            }
            self.pos += 1;
            // The bits of v above the word: (v >> 1) >> (31 − fill) is 0 when fill is 0.
            self.acc = (v >> 1) >> (31 - fill);
        }
    }
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
    let bytes = acc.to_le_bytes();
    if let (Some(d), Some(s)) = (buf.get_mut(pos..pos + tail), bytes.get(..tail)) {
        d.copy_from_slice(s);
    }
}

/// The reference block decoder (levels from `seed`; `payload` exactly
/// `payload_len(width, out.len())` bytes, `width <= 64`; anything else decodes nothing).
pub(crate) fn ref_decode<T: SzpFloat>(
    quant_eb: f64,
    width: u8,
    seed: i64,
    payload: &[u8],
    out: &mut [T],
) {
    if payload.len() == payload_len(width, out.len()) {
        ref_decode_in(&bits::Recon::new(quant_eb), width, seed, payload, out);
    }
}

/// [`ref_decode`] with the bound's constants `rc` (made once per run by the caller), from
/// `rest`: the block's payload (its first `payload_len(width, out.len())` bytes; shorter, or
/// `width > 64`, decodes nothing) and whatever follows it in the caller's buffer, where the
/// 32-bit decoder reads its last fields' 4-byte windows (bits past the block's fields are
/// masked off: the values do not depend on them).
#[inline(always)]
pub(crate) fn ref_decode_in<T: SzpFloat>(
    rc: &bits::Recon,
    width: u8,
    seed: i64,
    rest: &[u8],
    out: &mut [T],
) {
    let Some(payload) = rest
        .get(..payload_len(width, out.len()))
        .filter(|_| width <= 64)
    else {
        return;
    };
    if width == 0 {
        out.fill(rc.get(seed));
        return;
    }
    let w = u32::from(width);
    let mut q = seed;
    let mut start = 0usize;
    // Targets without an f64 FPU, f32 output, `w <= 25`, and every level below 2^31 in
    // magnitude (`|seed| < 2^30`, each of the block's deltas at most `2^(w−1)`): 32-bit
    // fields (each inside the 4 bytes from its first byte), 32-bit prefix sums, the f32
    // reconstruction of an i32 level. (The core's own tests take it on every target, where
    // the reconstruction is the f64 rule or the f32 step's multiply: every reference-kernel
    // decode in them runs these loops and their reads past the payload.)
    if (bits::F32_ONLY_FPU || cfg!(test))
        && w <= 25
        && seed.unsigned_abs() < 1 << 30
        && out.len() < 1 << (31 - w)
    {
        let (n, q32) = decode_small(rc, w, seed as i32, rest, out);
        if n == out.len() {
            return;
        }
        start = n;
        q = i64::from(q32);
    }
    // Each field is one unaligned 8-byte load while its 8 bytes lie inside the payload (and
    // `w <= 56`), else read bytewise ([`bits::field`]); no carried bit state.
    for (i, o) in out.iter_mut().enumerate().skip(start) {
        q = q.wrapping_add(unzigzag(bits::field(payload, i, w)));
        rc.put(q, o);
    }
}

/// The 32-bit block decoder of [`ref_decode`] (f32 output on targets without an f64 FPU;
/// `1 <= w <= 25`, every level of the block below 2^31 in magnitude; `payload` the block's
/// fields, followed by any bytes, as [`ref_decode_in`]'s `rest`): the block's values from level
/// `q32`, reconstructed by `q as f32 * step` where the bound's step is
/// an f32 and every level of the block is at most `2^24` in magnitude ([`bits::Recon::step32`];
/// one multiply), else by [`bits::Recon::fast32`]; returns how many it wrote (all of `out`
/// unless `T` is not f32) and the last level written (`q32` if none). Out of line, so that its
/// loop has the registers to itself (inlined, the caller's live values pushed its constants
/// onto the stack).
#[inline(never)]
fn decode_small<T: SzpFloat>(
    rc: &bits::Recon,
    w: u32,
    q32: i32,
    payload: &[u8],
    out: &mut [T],
) -> (usize, i32) {
    // Each delta is at most 2^(w−1) in magnitude (zigzag values below 2^w).
    let reach = u64::from(q32.unsigned_abs()) + ((out.len() as u64) << (w - 1).min(31));
    let step = rc.step32().filter(|_| reach <= 1 << 24);
    // Where the target has an f32 FMA (`bits::FMA32`, a constant: other targets compile no
    // such path), the loop stores the levels' bits and `fused_levels` reconstructs them.
    let fused = rc
        .fused()
        .filter(|_| bits::FMA32 && step.is_none() && reach <= 1 << 24);
    // The closures own their constants (a copy of `rc`): behind the loop's `&R`, which
    // nothing in the loop can write, they stay in registers.
    let (rc, by_step) = (*rc, step.unwrap_or(0.0));
    let (mul, exact) = (move |q: i32| q as f32 * by_step, move |q: i32| rc.fast32(q));
    let run = |q32: i32, payload: &[u8], out: &mut [T]| match (T::floats_mut(out), step, fused) {
        (FloatsMut::F32(out), Some(_), _) => small_loop(w, q32, payload, out, &mul),
        (FloatsMut::F32(out), None, Some(f)) => small_fused(w, q32, payload, out, &f, &rc),
        (FloatsMut::F32(out), None, None) => small_loop(w, q32, payload, out, &exact),
        (FloatsMut::F64(_), _, _) => (0, q32),
    };
    // The values whose field's 4-byte window lies inside the payload.
    let wz = w as usize;
    let safe = payload
        .len()
        .checked_sub(4)
        .map_or(0, |r| (r * 8 / wz.max(1) + 1).min(out.len()));
    let (body, tail) = out.split_at_mut(safe);
    let (n, q32) = run(q32, payload, body);
    if n < safe || tail.is_empty() {
        return (n, q32); // not f32, or no tail
    }
    // Value `safe`'s window passes the end: fewer than 4 bytes are left from its first byte,
    // and the fields of the rest (at most 32/w + 1) lie within them. Those bytes, shifted so
    // that value `safe`'s field starts at bit 0, zero-padded, by the same loop.
    let bit = safe * wz;
    let mut last = [0u8; 8];
    for (d, s) in last.iter_mut().zip(payload.get(bit / 8..).unwrap_or(&[])) {
        *d = *s;
    }
    let last = (u64::from_le_bytes(last) >> (bit % 8)).to_le_bytes();
    let (m, q32) = run(q32, &last, tail);
    (n + m, q32)
}

/// [`small_loop`] with the FMA reconstruction: the loop stores the levels' bits, and
/// [`fused_levels`] reconstructs them (out of line, so that the caller's block loop stays as
/// small as it is on targets without it).
#[inline(never)]
fn small_fused(
    w: u32,
    q32: i32,
    payload: &[u8],
    out: &mut [f32],
    f: &bits::Fused32,
    rc: &bits::Recon,
) -> (usize, i32) {
    // The levels travel as f32 bit patterns (some are NaN patterns): only stored and loaded,
    // never operated on, until `fused_run` converts them as integers.
    let (n, q32) = small_loop(w, q32, payload, out, &|q: i32| f32::from_bits(q as u32));
    fused_levels(f, rc, out.get_mut(..n).unwrap_or_default(), |f, o| f.run(o));
    (n, q32)
}

/// Replaces the levels in `out` (each an `i32` level's bits, `|level| <= 2^24`) by their f32
/// reconstructions: `run` (`bits::Fused32::run`, or its emulation in the tests) for every
/// level it decides, the integer path for each it leaves undecided (about one in 2^16).
fn fused_levels(
    f: &bits::Fused32,
    rc: &bits::Recon,
    out: &mut [f32],
    run: impl Fn(&bits::Fused32, &mut [f32]) -> usize,
) {
    let mut rest = out;
    while !rest.is_empty() {
        let done = run(f, rest);
        let Some((o, tail)) = core::mem::take(&mut rest)
            .get_mut(done..)
            .and_then(|r| r.split_first_mut())
        else {
            return;
        };
        *o = recon_cold(rc, o.to_bits() as i32);
        rest = tail;
    }
}

/// The integer reconstruction of a level that the FMA path leaves undecided (rare: out of
/// line).
#[cold]
#[inline(never)]
fn recon_cold(rc: &bits::Recon, q: i32) -> f32 {
    rc.fast32(q)
}

/// The 32-bit loop: fields of `w` bits from the start of `payload` (each from the 4 bytes at
/// its first byte, as long as they lie inside), prefix sums from `q32`, values `rec(level)`;
/// returns how many it wrote and the last level. Where `w <= 14` or `w = 16`, two fields come
/// from each 4-byte window: one load, one bounds check and one loop step for two values. The
/// pairs start at bit offsets `2w·k`, so a window's first bit `s` is a multiple of
/// `g = gcd(2w, 8)`, at most `8 − g`, and the pair ends at bit `s + 2w <= 8 − g + 2w`: 32 at
/// most for `w = 13` (`g = 2`), 14 (`g = 4`) and 16 (`g = 8`), and for every `w <= 12`; 36 for
/// `w = 15`. Out of line, so that its loop has the registers to
/// itself (inlined, the caller's live values pushed its constants onto the stack).
#[inline(never)]
fn small_loop<R: Fn(i32) -> f32>(
    w: u32,
    mut q32: i32,
    payload: &[u8],
    out: &mut [f32],
    rec: &R,
) -> (usize, i32) {
    let (wz, m32) = (w as usize, bits::mask(w) as u32);
    let unzig = bits::unzigzag32;
    let window = |bit: usize| {
        let src = payload.get(bit / 8..bit / 8 + 4)?;
        let mut b = [0u8; 4];
        b.copy_from_slice(src);
        Some(u32::from_le_bytes(b) >> (bit % 8))
    };
    // One running bit offset (the value count is `bit / w`).
    let mut bit = 0usize;
    if w <= 14 || w == 16 {
        let (pairs, _) = out.as_chunks_mut::<2>();
        for [a, b] in pairs {
            let Some(v) = window(bit) else {
                break;
            };
            let qa = q32.wrapping_add(unzig(v & m32));
            q32 = qa.wrapping_add(unzig((v >> w) & m32));
            (*a, *b) = (rec(qa), rec(q32));
            bit += 2 * wz;
        }
    }
    let wz = wz.max(1);
    for o in out.get_mut(bit / wz..).unwrap_or_default() {
        let Some(v) = window(bit) else {
            break;
        };
        q32 = q32.wrapping_add(unzig(v & m32));
        *o = rec(q32);
        bit += wz;
    }
    (bit / wz, q32)
}

/// Whether the reference encoder first tries the one-pass encoder (values parked in the
/// output, one quantization per value). Off on targets without x86_64/aarch64 SIMD and with
/// feature `small`: there the two-pass encoder alone keeps the code small. Same bytes.
const ONE_PASS: bool = !cfg!(any(
    feature = "small",
    not(any(target_arch = "x86_64", target_arch = "aarch64"))
));

/// The statistics of f32 values (`None` for other types) without f64 arithmetic: min and max
/// of the order keys of the bits (`b` for a sign bit clear, `b` with the other 31 bits flipped
/// for a sign bit set: increasing as i32 in the value, NaNs beyond the infinities), the
/// non-finite flag from the extreme keys. Where no value is NaN, `lo` and `hi` are the values'
/// min and max (any zero of either sign for a zero extreme, as `f64::min`/`max` may give).
#[inline(always)]
pub(crate) fn f32_stats<T: SzpFloat>(x: &[T]) -> Option<Stats> {
    let key = |b: u32| (b ^ (((b as i32) >> 31) as u32 >> 1)) as i32;
    let (mut lo, mut hi) = (i32::MAX, i32::MIN);
    for v in x {
        let &f = (v as &dyn core::any::Any).downcast_ref::<f32>()?;
        let k = key(f.to_bits());
        lo = lo.min(k);
        hi = hi.max(k);
    }
    if x.is_empty() {
        return Some(Stats::EMPTY);
    }
    // Keys are their own inverse.
    let val = |k: i32| f64::from(f32::from_bits(key(k as u32) as u32));
    Some(Stats {
        lo: val(lo),
        hi: val(hi),
        bad: hi >= key(0x7f80_0000) || lo <= key(0xff80_0000),
    })
}

/// The statistics an ABS plan needs, of f32 values (`None` for other types), without f64
/// arithmetic: the largest `|x|` as `lo = −m`, `hi = m`, and the non-finite flag (the largest
/// bits of `|x|` at or above infinity's). One comparison a value where [`f32_stats`] needs two
/// order keys and two.
#[inline(always)]
pub(crate) fn f32_magnitude<T: SzpFloat>(x: &[T]) -> Option<Stats> {
    // The bits of |x| shifted left by one (the sign bit drops out): a compare with a shifted
    // operand and a conditional shift a value on Thumb-2.
    let bits2 = |v: &T| {
        (v as &dyn core::any::Any)
            .downcast_ref::<f32>()
            .map(|f| f.to_bits() << 1)
    };
    // Two values a loop step, each into its own maximum.
    let (pairs, tail) = x.as_chunks::<2>();
    let (mut t0, mut t1) = (0u32, 0u32);
    for [a, b] in pairs {
        t0 = t0.max(bits2(a)?);
        t1 = t1.max(bits2(b)?);
    }
    for v in tail {
        t0 = t0.max(bits2(v)?);
    }
    let top = t0.max(t1) >> 1;
    if x.is_empty() {
        return Some(Stats::EMPTY);
    }
    let m = f64::from(f32::from_bits(top));
    Some(Stats {
        lo: -m,
        hi: m,
        bad: top >= 0x7f80_0000,
    })
}

impl SzpKernel for Reference {
    type Enc = Quant;
    type Scratch = ();
    /// The plan pass itself (`blocks::plan_mag`) on targets with an f64 FPU; on targets
    /// without one, [`Reference::stats`] in f32 (the plan is the same value either way, and
    /// an irregular input still goes to the plan pass, which names the index).
    const EXACT_PLAN: bool = !bits::F32_ONLY_FPU;
    const FILL_COPY: bool = false;
    const CHECKS_BLOCKS: bool = true;

    #[inline(always)]
    fn scratch(self) {}
    #[inline(always)]
    fn encoder(self, q: Quant) -> Quant {
        q
    }
    #[inline(always)]
    fn quant(e: &Quant) -> Quant {
        *e
    }
    fn magnitude<T: SzpFloat>(self, x: &[T]) -> Stats {
        if bits::F32_ONLY_FPU
            && let Some(s) = f32_magnitude(x)
        {
            return s;
        }
        self.stats(x)
    }
    fn stats<T: SzpFloat>(self, x: &[T]) -> Stats {
        if bits::F32_ONLY_FPU
            && let Some(s) = f32_stats(x)
        {
            return s;
        }
        let mut s = Stats::EMPTY;
        for v in x.iter().map(|v| v.to_f64()) {
            s.lo = s.lo.min(v);
            s.hi = s.hi.max(v);
            s.bad |= !v.is_finite();
        }
        s
    }
    block_methods! {
        width: |e, block, seed, _| ref_width(e.eb, block, seed),
        encode: |e, block, seed, dst, _| {
            if bits::F32_ONLY_FPU
                && let Some(r) = encode_f32_onepass(e, block, seed, dst)
            {
                return r;
            }
            // A block of an unvalidated input that the f32 encoder did not take (declined, or
            // a target with an f64 FPU: the core's tests): checked here.
            if let Some(b) = e.unchecked
                && let Some(i) = first_beyond(block, b)
            {
                return Err(BlockError::Irregular(i));
            }
            if ONE_PASS && let Some(r) = ref_encode_onepass(e, block, seed, dst) {
                return r;
            }
            // Too little room for the one-pass scratch: the two-pass block encoder.
            encode_two_pass(e, block, seed, dst)
        },
        decode: |eb, w, seed, src, out, _| ref_decode(eb, w, seed, src, out),
    }
    /// The run loop with the bound's constants made once, and each block decoded from the
    /// run's bytes at its start ([`ref_decode_in`]): the 32-bit decoder's last windows then
    /// read the next block's bytes rather than a zero-padded copy (on the run's last block
    /// only).
    fn decode_blocks<T: SzpFloat>(
        self,
        eb: f64,
        run: Run,
        widths: &[u8],
        payload: &[u8],
        out: &mut [T],
        _: &mut (),
    ) -> Result<(), DecodeError> {
        let rc = bits::Recon::new(eb);
        decode_run_with(run, widths, payload, out, |w, seed, _, rest, block| {
            ref_decode_in(&rc, w, seed, rest, block)
        })
    }
}

// ---------------------------------------------------------------------------------------
// Portable

/// The portable kernels' block buffers.
pub(crate) struct Buffers {
    pub q: [i64; BUF],
    pub u: [u64; BUF],
}

impl Buffers {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Buffers {
            q: [0; BUF],
            u: [0; BUF],
        }
    }
}

/// Quantize + delta (from `seed`) + zigzag of one block into `u`, returning the OR of all
/// values (its bit length is the block width). Branch-free; the delta is a first-order recurrence on `q`.
///
/// The level is first computed with a multiplication by `1/(2·eb)`: `y = fl(x·r)` differs from
/// the spec's `v = fl(x/(2·eb))` by at most `|y|·2⁻⁵⁰`, and `round_half_away` can only differ
/// between `y` and `v` if a half-integer lies within that distance of `y`. Any block with a
/// value whose fractional part is within `|y|·2⁻⁴⁸` of ½ (or with `|y| >= 2⁴⁷`) is recomputed
/// with the exact division, so the levels always equal the spec's.
#[inline(always)]
pub(crate) fn quantize_block<T: SzpFloat>(
    eb: f64,
    seed: i64,
    block: &[T],
    q: &mut [i64],
    u: &mut [u64],
) -> u64 {
    let r = 1.0 / (2.0 * eb);
    let mut near_tie = false;
    for (qi, &x) in q.iter_mut().zip(block) {
        let y = x.to_f64() * r;
        let a = y.abs();
        let i = a as u64;
        let frac = a - i as f64;
        near_tie |= (frac - 0.5).abs() <= a * NEAR_TIE;
        let m = i.saturating_add(u64::from(frac >= 0.5)) as i64;
        *qi = if y < 0.0 { -m } else { m };
    }
    if near_tie {
        for (qi, &x) in q.iter_mut().zip(block) {
            *qi = quantize(x, eb);
        }
    }
    let mut any = 0u64;
    let mut prev = seed;
    for (ui, &qi) in u.iter_mut().zip(q.iter()) {
        let z = zigzag(qi.wrapping_sub(prev));
        prev = qi;
        *ui = z;
        any |= z;
    }
    any
}

/// The relative distance from ½ below which a reciprocal-multiply level is recomputed with the
/// exact division (`2⁻⁴⁸`; see [`quantize_block`]).
pub(crate) const NEAR_TIE: f64 = 3.552_713_678_800_501e-15;

/// The level of `y = x·(1/(2·eb))` by round half away, and whether `y`'s fraction lies within
/// `|y|·2⁻⁴⁸` of ½ (a near tie: then the exact division may round otherwise; see
/// [`quantize_block`]). Branch-free; the SIMD leaves use it for their tail values.
/// (`quantize_block` keeps these steps written out in its loop: calling this there measured
/// 10-15 % slower AVX2/AVX-512 compress in a side-by-side run, so the hot loop stays as it was.)
#[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))] // the NEON leaf's
#[inline(always)]
pub(crate) fn fast_level(y: f64) -> (i64, bool) {
    let a = y.abs();
    let i = a as u64;
    let frac = a - i as f64;
    let near = (frac - 0.5).abs() <= a * NEAR_TIE;
    let m = i.saturating_add(u64::from(frac >= 0.5)) as i64;
    (if y < 0.0 { m.wrapping_neg() } else { m }, near)
}

/// The strict check: the first index whose reconstruction misses `bound`, if any.
#[inline(always)]
pub(crate) fn first_violation<T: SzpFloat>(
    eb: f64,
    bound: f64,
    block: &[T],
    q: &[i64],
) -> Option<usize> {
    let mut bad = false;
    for (&x, &qi) in block.iter().zip(q) {
        bad |= bits::misses(x, qi, eb, bound);
    }
    if !bad {
        return None;
    }
    block
        .iter()
        .zip(q)
        .position(|(&x, &qi)| bits::misses(x, qi, eb, bound))
}

/// Merges groups of `K` consecutive `w`-bit values into one `K·w`-bit word each (`K·w <= 64`),
/// LSB-first, so the bit stream is unchanged: `words[i] = Σ_j u[K·i + j] << (j·w)`.
/// A data-parallel loop (vectorizable); returns the number of words.
#[inline(always)]
fn merge<const K: usize>(u: &[u64], w: u32, words: &mut [i64]) -> usize {
    let mut n = 0;
    for (dst, g) in words.iter_mut().zip(u.chunks_exact(K)) {
        let mut x = 0u64;
        for (j, &v) in g.iter().enumerate() {
            x |= v << (j as u32 * w);
        }
        *dst = x as i64;
        n += 1;
    }
    n
}

/// LSB-first packing of `u` (each `< 2^w`) at width `w` into exactly `out`
/// (`ceil(len·w/8)` bytes); pad bits 0. For `w <= 32`, groups of `K = 2^floor(log2(64/w))`
/// values are first merged into `K·w`-bit words (in `scratch`), which the accumulator then
/// packs `K` values at a time; the leftover values follow at width `w`.
#[inline(always)]
pub(crate) fn pack(u: &[u64], w: u32, out: &mut [u8], scratch: &mut [i64]) {
    if w == 0 {
        return;
    }
    if w == 64 {
        for (dst, v) in out.chunks_exact_mut(8).zip(u) {
            dst.copy_from_slice(&v.to_le_bytes());
        }
        return;
    }
    let k = 1usize << (64 / w).ilog2();
    let words = match k {
        1 => 0,
        2 => merge::<2>(u, w, scratch),
        4 => merge::<4>(u, w, scratch),
        8 => merge::<8>(u, w, scratch),
        16 => merge::<16>(u, w, scratch),
        32 => merge::<32>(u, w, scratch),
        _ => merge::<64>(u, w, scratch),
    };
    let mut bits = BitAcc::new(out);
    let ww = k as u32 * w;
    for &x in scratch.iter().take(words) {
        bits.put(x as u64, ww);
    }
    for &v in u.iter().skip(words * k) {
        bits.put(v, w);
    }
    bits.finish();
}

/// Min, max and the non-finite flag in 16 branch-free lanes (vectorizes).
#[inline(always)]
pub(crate) fn lane_stats<T: SzpFloat>(input: &[T]) -> Stats {
    const L: usize = 16;
    let mut lo = [f64::INFINITY; L];
    let mut hi = [f64::NEG_INFINITY; L];
    let mut bad = false;
    let (chunks, rest) = input.as_chunks::<L>();
    for c in chunks {
        for ((l, h), x) in lo.iter_mut().zip(hi.iter_mut()).zip(c) {
            let v = x.to_f64();
            *l = if v < *l { v } else { *l };
            *h = if v > *h { v } else { *h };
            bad |= v.is_nan() || v.abs() > f64::MAX;
        }
    }
    for ((l, h), x) in lo.iter_mut().zip(hi.iter_mut()).zip(rest) {
        let v = x.to_f64();
        *l = if v < *l { v } else { *l };
        *h = if v > *h { v } else { *h };
        bad |= v.is_nan() || v.abs() > f64::MAX;
    }
    Stats {
        lo: lo.iter().fold(f64::INFINITY, |a, &b| a.min(b)),
        hi: hi.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b)),
        bad,
    }
}

/// The portable encoder of one block (also the AVX2 leaf's, under its features).
#[inline(always)]
pub(crate) fn portable_encode<T: SzpFloat>(
    e: &Quant,
    block: &[T],
    seed: i64,
    dst: &mut [u8],
    s: &mut Buffers,
) -> Result<u8, BlockError> {
    encode_with(e, block, seed, dst, s, quantize_block)
}

/// One block's encoder around a quantize + delta + zigzag pass `quantize` (writing levels and
/// zigzagged deltas, returning their OR): the strict check, the width, the portable packer.
#[inline(always)]
pub(crate) fn encode_with<T: SzpFloat>(
    e: &Quant,
    block: &[T],
    seed: i64,
    dst: &mut [u8],
    s: &mut Buffers,
    quantize: impl FnOnce(f64, i64, &[T], &mut [i64], &mut [u64]) -> u64,
) -> Result<u8, BlockError> {
    let len = block.len().min(BUF);
    let (qb, ub) = (
        s.q.get_mut(..len).unwrap_or_default(),
        s.u.get_mut(..len).unwrap_or_default(),
    );
    let any = quantize(e.eb, seed, block, qb, ub);
    if e.strict
        && let Some(i) = first_violation(e.eb, e.bound, block, qb)
    {
        return Err(BlockError::Violation(i));
    }
    let w = bits::width(any);
    let cost = payload_len(w, len);
    let out = dst.get_mut(..cost).ok_or(BlockError::Short(cost))?;
    pack(ub, u32::from(w), out, qb);
    Ok(w)
}

/// The portable width of one block.
#[inline(always)]
pub(crate) fn portable_width<T: SzpFloat>(eb: f64, block: &[T], seed: i64, s: &mut Buffers) -> u8 {
    width_with(eb, block, seed, s, quantize_block)
}

/// One block's width through the pass `quantize` (see [`encode_with`]).
#[inline(always)]
pub(crate) fn width_with<T: SzpFloat>(
    eb: f64,
    block: &[T],
    seed: i64,
    s: &mut Buffers,
    quantize: impl FnOnce(f64, i64, &[T], &mut [i64], &mut [u64]) -> u64,
) -> u8 {
    let len = block.len().min(BUF);
    let (qb, ub) = (
        s.q.get_mut(..len).unwrap_or_default(),
        s.u.get_mut(..len).unwrap_or_default(),
    );
    bits::width(quantize(eb, seed, block, qb, ub))
}

/// One block's decoder around a scale pass `scale(levels, eb, out)` (writing
/// `reconstruct(level, eb)` for every level): unpack + unzigzag + prefix sum (from `seed`) into
/// `q`, then the scale pass; a width-0 block is its seed's value throughout.
#[inline(always)]
pub(crate) fn decode_with<T: SzpFloat>(
    eb: f64,
    w: u8,
    seed: i64,
    src: &[u8],
    out: &mut [T],
    q: &mut [i64; BUF],
    scale: impl FnOnce(&[i64], f64, &mut [T]),
) {
    if w == 0 {
        out.fill(reconstruct(seed, eb));
        return;
    }
    let qb = q.get_mut(..out.len().min(BUF)).unwrap_or_default();
    unpack_levels(src, u32::from(w), seed, qb);
    scale(qb, eb, out);
}

/// The portable scale pass of [`decode_with`].
#[inline(always)]
pub(crate) fn scale_levels<T: SzpFloat>(q: &[i64], eb: f64, out: &mut [T]) {
    for (o, &qi) in out.iter_mut().zip(q.iter()) {
        *o = reconstruct(qi, eb);
    }
}

/// The associated types, `scratch`, `encoder` and `quant_eb` of a kernel on the portable block
/// buffers and the plain quantizer parameters (the `Portable` token, and the NEON leaf).
macro_rules! portable_kernel_items {
    () => {
        type Enc = $crate::arch::szp::Quant;
        type Scratch = $crate::arch::generic::szp::Buffers;

        #[inline(always)]
        fn scratch(self) -> Self::Scratch {
            $crate::arch::generic::szp::Buffers::new()
        }
        #[inline(always)]
        fn encoder(self, q: Self::Enc) -> Self::Enc {
            q
        }
        #[inline(always)]
        fn quant(e: &Self::Enc) -> $crate::arch::szp::Quant {
            *e
        }
    };
}
#[allow(unused_imports)] // the NEON leaf exists on aarch64 only
pub(crate) use portable_kernel_items;

impl SzpKernel for Portable {
    portable_kernel_items!();

    #[inline(always)]
    fn stats<T: SzpFloat>(self, x: &[T]) -> Stats {
        lane_stats(x)
    }
    block_methods! {
        width: |e, block, seed, s| portable_width(e.eb, block, seed, s),
        encode: |e, block, seed, dst, s| portable_encode(e, block, seed, dst, s),
        decode: |eb, w, seed, src, out, s| {
            decode_with(eb, w, seed, src, out, &mut s.q, scale_levels)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoding rule written out, field by field (the 32-bit decoder's tests' oracle:
    /// `ref_decode` itself takes the 32-bit loops in the core's tests).
    fn spec_decode(eb: f64, w: u8, seed: i64, payload: &[u8], out: &mut [f32]) {
        let mut q = seed;
        for (i, o) in out.iter_mut().enumerate() {
            q = q.wrapping_add(unzigzag(bits::field(payload, i, u32::from(w))));
            *o = reconstruct(q, eb);
        }
    }

    /// A small xorshift generator (the core has no `rand`).
    fn next(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// Blocks of smooth, noisy, constant, stepped and huge-level f32 values.
    fn blocks() -> [[f32; 97]; 6] {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut b = [[0f32; 97]; 6];
        for (k, blk) in b.iter_mut().enumerate() {
            for (i, x) in blk.iter_mut().enumerate() {
                let r = (next(&mut s) % 20_001) as f32 / 10_000.0 - 1.0;
                *x = match k {
                    0 => (i as f32 * 0.07).sin() * 3.0 + r * 0.01,
                    1 => r * 7.5,
                    2 => 1.25,
                    3 => {
                        if i < 50 {
                            -2.0
                        } else {
                            6.0 + r
                        }
                    }
                    4 => r * 1e-6,
                    // Levels beyond 2^30 at the bounds below: the encoder must decline.
                    _ => r * 1e9,
                };
            }
        }
        b
    }

    /// The one-pass encoder (with the block's largest `|x|` bits it returns) against the
    /// reference encoder, for the plan's quantizer, an unvalidated input's, and tie windows
    /// tight and too narrow for the block; a block is declined only where its levels reach
    /// `2^30` (blocks past the fixed point's limit, levels of about 65024, or past the plan's
    /// magnitude are quantized again, not declined).
    fn onepass_equals_the_reference(q: &Quant, blk: &[f32], seed: i64) -> bool {
        let (eb, cost_room) = (q.eb, blk.len() * 8);
        let w = ref_width(eb, blk, seed);
        let cost = payload_len(w, blk.len());
        let mut want = [0u8; 97 * 8];
        let want_r = ref_encode(q, blk, seed, w, &mut want[..cost.min(cost_room)]);
        let top_level = blk
            .iter()
            .map(|&x| bits::quantize(x, eb).unsigned_abs())
            .max()
            .unwrap_or(0);
        let top_bits = blk
            .iter()
            .map(|x| x.to_bits() & 0x7fff_ffff)
            .max()
            .unwrap_or(0);
        let mut declined = false;
        // The one-shot's variant of an unvalidated input (every value finite here, and
        // within the largest limit) writes the same.
        let unchecked = Quant {
            unchecked: Some(0x7f7f_ffff),
            ..*q
        };
        // The tie window of the block's own largest magnitude (the tightest that holds), and
        // of one below it (a plan's `max_abs` the block exceeds: quantized again).
        let tight = Quant {
            max32: top_bits,
            ..*q
        };
        let under = Quant {
            max32: top_bits / 2,
            ..*q
        };
        // Under Miri (safe code) the plan's quantizer and the too narrow window only.
        let quants = [q, &under, &unchecked, &tight];
        let quants = if cfg!(miri) {
            &quants[..2]
        } else {
            &quants[..]
        };
        for (k, &q) in quants.iter().enumerate() {
            let mut got = [0xa5u8; 97 * 4];
            let room = &mut got[..blk.len() * 4];
            let r = encode_f32_onepass_top(q, blk, seed, room).map(|(r, top)| {
                assert_eq!(top, top_bits, "eb {eb:e}");
                r
            });
            match r {
                Some(Ok(gw)) => {
                    assert_eq!(want_r, Ok(()), "eb {eb:e}");
                    assert_eq!(gw, w, "eb {eb:e} seed {seed}");
                    assert_eq!(got[..cost], want[..cost], "eb {eb:e} seed {seed}");
                }
                Some(Err(e)) => assert_eq!(Err(e), want_r, "eb {eb:e} quantizer {k}"),
                None => {
                    assert!(
                        top_level >= 1 << 30,
                        "eb {eb:e} quantizer {k}: declined at level {top_level}"
                    );
                    declined = true;
                }
            }
            // Too little room for the parked values: declined, nothing decided.
            let short = &mut got[..(blk.len() * 4).saturating_sub(1)];
            if !blk.is_empty() {
                assert!(encode_f32_onepass_top(q, blk, seed, short).is_none());
                assert!(encode_f32_onepass(q, blk, seed, short).is_none());
            }
        }
        declined
    }

    #[test]
    fn f32_onepass_encoder_writes_the_reference_bytes() {
        let mut declined = 0;
        // Two seeds under Miri (safe code; the native run covers the three).
        let seeds: &[i64] = if cfg!(miri) {
            &[-3, 1 << 20]
        } else {
            &[0, -3, 1 << 20]
        };
        for (eb, bound, strict) in [
            (0.000_999_999_940_395_355_2, 1e-3, true),
            (1e-3, 1e-3, false),
            (0.05, 0.05, true),
            (1.0 / 4096.0, 1.0 / 4096.0, true),
            (1e-7, 1e-7, true),
        ] {
            let q = Quant {
                eb,
                bound,
                strict,
                max_abs: 1e9,
                max32: bits::f32_at_least(1e9),
                below: 0, // every block checked
                unchecked: None,
            };
            for blk in blocks() {
                for &seed in seeds {
                    declined += usize::from(onepass_equals_the_reference(&q, &blk, seed));
                }
            }
        }
        // The huge-level blocks (levels of 2^30 and more) are among them.
        assert!(declined >= 5 * seeds.len(), "{declined} declined");
    }

    /// The one-shot encoder of an unvalidated input ([`Quant::unchecked`]): a block with a
    /// value not finite or above the limit is [`BlockError::Irregular`] naming the first one,
    /// or declined (the kernel then checks it before any other encoder runs), never encoded
    /// and never another error; the same block within the limit is encoded as without it.
    #[test]
    fn f32_onepass_encoder_of_an_unchecked_input_stops_at_the_first_irregular_value() {
        let limit = 6.5f32;
        let over = f32::from_bits(limit.to_bits() + 1);
        let (mut irregular, mut declined) = (0, 0);
        // One bound and two blocks under Miri (safe code; the native run covers the rest).
        let (ebs, nblocks): (&[f64], usize) = if cfg!(miri) {
            (&[1e-3], 2)
        } else {
            (&[1e-3, 1e-7], 5)
        };
        for &eb in ebs {
            let q = Quant {
                eb,
                bound: eb,
                strict: true,
                max_abs: f64::from(limit),
                max32: bits::f32_at_least(f64::from(limit)),
                below: 0,
                unchecked: Some(limit.to_bits()),
            };
            for blk in blocks().iter().filter(|b| b.len() >= 3).take(nblocks) {
                let n = blk.len();
                // Within the limit (the blocks' values scaled into it, the limit itself in).
                let top = blk.iter().fold(0f32, |m, x| m.max(x.abs()));
                let mut fine = [0f32; 97];
                for (d, x) in fine.iter_mut().zip(blk.iter()) {
                    *d = x / top * limit;
                }
                let fine = &fine[..n];
                let mut a = [0u8; 97 * 4];
                let mut b = [0u8; 97 * 4];
                let plain = Quant {
                    unchecked: None,
                    ..q
                };
                let ra = encode_f32_onepass(&q, fine, 0, &mut a[..n * 4]);
                let rb = encode_f32_onepass(&plain, fine, 0, &mut b[..n * 4]);
                assert_eq!(ra, rb, "eb {eb:e}");
                assert!(a == b, "eb {eb:e}");
                for bad in [f32::NAN, f32::INFINITY, -f32::INFINITY, over, -over, 1e30] {
                    for (i, j) in [(0, n - 1), (n / 2, n - 1), (n - 1, n - 1), (1, 2)] {
                        let mut x = [0f32; 97];
                        x[..n].copy_from_slice(fine);
                        (x[i], x[j]) = (bad, if j == i { bad } else { -over });
                        let mut room = [0u8; 97 * 4];
                        match encode_f32_onepass(&q, &x[..n], 0, &mut room[..n * 4]) {
                            Some(Err(BlockError::Irregular(k))) => {
                                assert_eq!(k, i, "eb {eb:e} bad {bad:e}");
                                irregular += 1;
                            }
                            None => declined += 1,
                            r => panic!("eb {eb:e} bad {bad:e} at {i}: {r:?}"),
                        }
                    }
                }
            }
        }
        // Bounds × blocks × 6 values × 4 placements, all named (none declined, as it
        // happens: an infinite value's level does not stop the f32 loop).
        assert_eq!(irregular + declined, ebs.len() * nblocks * 6 * 4);
        assert!(irregular > 0, "{irregular} irregular, {declined} declined");
    }

    /// The strict check's skipping: a bound just above the quantizer's `eb`, whose
    /// [`bits::accept_below`] magnitude lies inside the blocks' range, so that values above it
    /// miss the bound and values below it need no check; the first violation (or the bytes)
    /// as the reference encoder's.
    #[test]
    fn f32_onepass_encoder_skips_the_check_only_below_the_accepted_magnitude() {
        let (mut violations, mut passed) = (0, 0);
        for eb in [0.000_999_999_940_395_355_2, 7.7e-6, 1.0 / 3.0] {
            // `bound − eb = eb·2^-23`: the accepted magnitude is about `eb`, and above it the
            // f32 roundings of a value near a tie and of its reconstruction (up to an ulp
            // together) often pass the bound.
            let bound = eb + eb * 2f64.powi(-23);
            let below = bits::accept_below(eb, bound);
            let b = f64::from(f32::from_bits(below));
            assert!(b > 0.0, "eb {eb:e}");
            let q = Quant {
                eb,
                bound,
                strict: true,
                max_abs: 1e9,
                max32: bits::f32_at_least(1e9),
                below,
                unchecked: None,
            };
            let mut s = 0x0bad_5eed_1234_5678u64;
            // Fewer blocks under Miri (safe code; the native run covers the 60).
            for k in 0..if cfg!(miri) { 10 } else { 60 } {
                // Magnitudes up to below `b` (no check), just past it, and far past it, both
                // signs.
                let top = [0.5 * b, 0.999 * b, 1.5 * b, 20.0 * eb, 300.0 * eb][k % 5];
                let mut blk = [0f32; 37];
                for (i, x) in blk.iter_mut().enumerate() {
                    let u = next(&mut s);
                    let mut m = top * ((u >> 11) as f64 / (1u64 << 53) as f64);
                    if i % 3 == 0 {
                        // The f32 nearest a tie of the quantizer: an error of about `eb`,
                        // which the f32 roundings push past the bound about half the time.
                        m = ((m / (2.0 * eb)).floor() + 0.5) * 2.0 * eb;
                    }
                    *x = if u & 1 == 0 { m as f32 } else { -m as f32 };
                }
                let w = ref_width(eb, &blk, 0);
                let mut want = [0u8; 97 * 8];
                match ref_encode(&q, &blk, 0, w, &mut want[..payload_len(w, blk.len())]) {
                    Ok(()) => passed += 1,
                    Err(_) => violations += 1,
                }
                onepass_equals_the_reference(&q, &blk, 0);
            }
        }
        // Both outcomes occur, so the test can tell a skipped check from a needed one.
        let least = if cfg!(miri) { 2 } else { 10 };
        assert!(
            violations > least && passed > least,
            "{violations} violations, {passed} passed"
        );
    }

    /// The in-place packer against the layout written out (value `i`'s bit `b` at bit
    /// `i·w + b` of the output, LSB-first), for every width, lengths of every residue mod 2
    /// and 3 (pairs where `w <= 16` and triples where `w <= 10`, with single values after
    /// them), and values with every bit set among them.
    #[test]
    fn pack32_in_place_packs_every_width() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for w in 1..=32u32 {
            let lens: &[usize] = if cfg!(miri) {
                &[0, 1, 7, 32]
            } else {
                &[0, 1, 2, 3, 31, 32, 33]
            };
            for &len in lens {
                let mask = if w == 32 { u32::MAX } else { (1 << w) - 1 };
                let mut vals = [0u32; 33];
                for (i, v) in vals.iter_mut().enumerate().take(len) {
                    s = s
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    *v = if i % 5 == 1 {
                        mask
                    } else {
                        (s >> 32) as u32 & mask
                    };
                }
                let mut words = [[0xa5u8; 4]; 33];
                for (d, v) in words.iter_mut().zip(&vals) {
                    *d = v.to_le_bytes();
                }
                pack32_in_place(&mut words, len, w);
                let n = (len * w as usize).div_ceil(8);
                let mut want = [0u8; 33 * 4];
                for (i, v) in vals.iter().enumerate().take(len) {
                    for b in 0..w as usize {
                        let at = i * w as usize + b;
                        want[at / 8] |= (((v >> b) & 1) as u8) << (at % 8);
                    }
                }
                assert_eq!(words.as_flattened()[..n], want[..n], "w {w} len {len}");
            }
        }
    }

    #[test]
    fn f32_onepass_encoder_names_the_first_violation() {
        // A bound below the quantizer's half step: most values miss it.
        let q = Quant {
            eb: 1e-3,
            bound: 1e-4,
            strict: true,
            max_abs: 10.0,
            max32: bits::f32_at_least(10.0),
            below: 0, // hosts: every block checked
            unchecked: None,
        };
        let blk = [0.0f32, 0.5, 0.0013, 0.7, 0.25];
        let mut buf = [0u8; 20];
        let w = ref_width(q.eb, &blk, 0);
        let mut want = [0u8; 40];
        let want_r = ref_encode(&q, &blk, 0, w, &mut want[..payload_len(w, 5)]);
        assert_eq!(want_r, Err(BlockError::Violation(2)));
        assert_eq!(
            encode_f32_onepass(&q, &blk, 0, &mut buf),
            Some(Err(BlockError::Violation(2)))
        );
    }

    #[test]
    fn f32_stats_equal_the_f64_statistics() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let reference = |x: &[f32]| {
            let mut st = Stats::EMPTY;
            for v in x.iter().map(|v| f64::from(*v)) {
                st.lo = st.lo.min(v);
                st.hi = st.hi.max(v);
                st.bad |= !v.is_finite();
            }
            st
        };
        let specials = [
            0.0f32,
            -0.0,
            f32::MIN_POSITIVE,
            -f32::from_bits(1),
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        for trial in 0..3000 {
            let n = (next(&mut s) % 12) as usize;
            let mut x = [0f32; 12];
            for v in x.iter_mut().take(n) {
                let r = next(&mut s);
                *v = if trial % 3 == 0 && r.is_multiple_of(5) {
                    specials[(r / 5 % 10) as usize]
                } else {
                    f32::from_bits(r as u32 & 0xbfff_ffff) // finite, any sign
                };
            }
            let x = &x[..n];
            let (got, want) = (f32_stats(x).unwrap(), reference(x));
            assert_eq!(got.bad, want.bad, "{x:?}");
            if !want.bad {
                // Zeros of either sign are the same extreme (what abs and range see).
                assert!(
                    got.lo == want.lo && got.hi == want.hi,
                    "{x:?}: {got:?} {want:?}"
                );
            }
        }
        assert_eq!(f32_stats::<f32>(&[]), Some(Stats::EMPTY));
        assert_eq!(f32_stats(&[1.0f64]), None);
    }

    /// The ABS statistics: the largest magnitude of the f64 statistics, and the same flag.
    #[test]
    fn f32_magnitude_is_the_largest_magnitude() {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        // Fewer trials under Miri (safe code; the native run covers the 3000).
        for trial in 0..if cfg!(miri) { 300 } else { 3000 } {
            let n = 1 + (next(&mut s) % 12) as usize;
            let mut x = [0f32; 12];
            for v in x.iter_mut().take(n) {
                let r = next(&mut s);
                *v = f32::from_bits(if trial % 3 == 0 {
                    r as u32
                } else {
                    r as u32 & 0xbfff_ffff
                });
            }
            let x = &x[..n];
            let (got, full) = (f32_magnitude(x).unwrap(), f32_stats(x).unwrap());
            assert_eq!(got.bad, full.bad, "{x:?}");
            if !full.bad {
                let m = full.lo.abs().max(full.hi.abs());
                assert!(got.hi == m && got.lo == -m, "{x:?}: {got:?} {full:?}");
            }
        }
        assert_eq!(f32_magnitude::<f32>(&[]), Some(Stats::EMPTY));
        assert_eq!(f32_magnitude(&[1.0f64]), None);
        let big = f32_magnitude(&[-3.0f32, 2.0, -0.0]).unwrap();
        assert!(big.hi == 3.0 && big.lo == -3.0 && !big.bad);
    }

    #[test]
    fn small_decoder_reads_the_reference_levels() {
        // Bounds whose step is an f32 (the one-multiply loop) and bounds whose is not (under
        // Miri one of each).
        let bounds = [
            1e-3,
            f64::from(1e-3f32),
            0.05,
            1.0 / 4096.0,
            f64::from(0.05f32),
        ];
        for eb in &bounds[..if cfg!(miri) { 2 } else { bounds.len() }] {
            let eb = *eb;
            let q = Quant {
                eb,
                bound: eb,
                strict: false,
                max_abs: 1e9,
                max32: bits::f32_at_least(1e9),
                below: 0, // hosts: every block checked
                unchecked: None,
            };
            // Levels from just below 2^24 to above it, which only the general loop decodes
            // exactly (above 2^24 not every level is an f32).
            let high: [f32; 97] = core::array::from_fn(|i| {
                (((1 << 24) + 3 * i as i64 - 100) as f64 * 2.0 * eb) as f32
            });
            for blk in blocks().iter().take(5).chain([&high]) {
                // The last seed puts the block's levels past 2^24: the general loop.
                for seed in [0i64, 7, -(1 << 20), (1 << 24) - 5] {
                    let w = ref_width(eb, blk, seed);
                    if w == 0 || w > 25 {
                        continue;
                    }
                    let cost = payload_len(w, blk.len());
                    let mut payload = [0u8; 97 * 8];
                    ref_encode(&q, blk, seed, w, &mut payload[..cost]).unwrap();
                    let mut want = [0f32; 97];
                    spec_decode(eb, w, seed, &payload[..cost], &mut want[..blk.len()]);
                    let mut got = [f32::NAN; 97];
                    let rc = bits::Recon::new(eb);
                    let got = &mut got[..blk.len()];
                    let (n, last) =
                        decode_small(&rc, u32::from(w), seed as i32, &payload[..cost], got);
                    // Every value, those whose 4-byte window passes the payload's end too.
                    assert_eq!(n, blk.len());
                    for (i, (g, w)) in got[..n].iter().zip(&want[..n]).enumerate() {
                        assert_eq!(g.to_bits(), w.to_bits(), "eb {eb:e} seed {seed}: value {i}");
                    }
                    assert_eq!(
                        reconstruct::<f32>(i64::from(last), eb).to_bits(),
                        want[n - 1].to_bits()
                    );
                    // The run decoder hands it the bytes after the payload too (the next
                    // block's): its windows then read them, and the values must not change.
                    // (Under Miri one length.)
                    for more in [1, 3, 8].into_iter().skip(2 * usize::from(cfg!(miri))) {
                        let mut ext = [0xffu8; 97 * 8 + 8];
                        ext[..cost].copy_from_slice(&payload[..cost]);
                        let mut got2 = [f32::NAN; 97];
                        let got2 = &mut got2[..blk.len()];
                        let (n2, last2) =
                            decode_small(&rc, u32::from(w), seed as i32, &ext[..cost + more], got2);
                        assert_eq!((n2, last2), (n, last), "eb {eb:e} seed {seed} +{more}");
                        assert!(
                            got2.iter()
                                .zip(&*got)
                                .all(|(a, b)| a.to_bits() == b.to_bits())
                        );
                    }
                }
            }
        }
    }

    /// Every width the 32-bit decoder takes (1..=25), fields at random (the pair loop's
    /// widths, the single loop's, and their boundary), odd and even block lengths, a step
    /// bound and a general one: the reference decoder's values, with and without bytes after
    /// the payload.
    #[test]
    fn small_decoder_reads_every_width() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let widths: &[u32] = if cfg!(miri) { &[13] } else { &[] };
        let all: [u32; 25] = core::array::from_fn(|i| i as u32 + 1);
        for &w in if widths.is_empty() { &all[..] } else { widths } {
            let cases = [(1e-3, 128usize), (0.05, 97), (f64::from(1e-3f32), 31)];
            for &(eb, len) in &cases[..if cfg!(miri) { 1 } else { cases.len() }] {
                // Fields of all `w` bits (their top bits decide whether a window held the
                // whole field), except at 25, where 128 prefix sums could reach 2^31.
                let top = if w < 25 { w } else { w - 1 };
                let mut payload = [0u8; 128 * 4 + 8];
                for i in 0..len {
                    let u = next(&mut rng) & ((1 << top) - 1);
                    for b in 0..w as usize {
                        let (bit, v) = (i * w as usize + b, (u >> b) & 1);
                        payload[bit / 8] |= (v as u8) << (bit % 8);
                    }
                }
                let cost = payload_len(w as u8, len);
                let mut want = [0f32; 128];
                spec_decode(eb, w as u8, 5, &payload[..cost], &mut want[..len]);
                let rc = bits::Recon::new(eb);
                for more in [0, 2, 8].into_iter().skip(usize::from(cfg!(miri))) {
                    let mut ext = [0xa5u8; 128 * 4 + 8];
                    ext[..cost].copy_from_slice(&payload[..cost]);
                    let mut got = [f32::NAN; 128];
                    let (n, _) = decode_small(&rc, w, 5, &ext[..cost + more], &mut got[..len]);
                    assert_eq!(n, len, "w {w} eb {eb:e}");
                    for i in 0..len {
                        assert_eq!(got[i].to_bits(), want[i].to_bits(), "w {w} +{more}: {i}");
                    }
                }
            }
        }
    }

    /// The encode loop writes the same bytes whether it keeps a head group's heads (hosts) or
    /// quantizes each block's first value again for the trailer (microcontrollers): full and
    /// short groups, blocks with missing values (their heads come from the stand-ins), and the
    /// blocks decode back to the levels the heads start.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "every layout, group and missing-value case: too slow for Miri; runs natively"
    )]
    fn head_trailers_equal_with_and_without_kept_heads() {
        use crate::arch::szp::{Run, decode_run, encode_run_keeping};
        let mut s = 0x0123_4567_89ab_cdefu64;
        let mut x = [0f32; 2100];
        for (i, v) in x.iter_mut().enumerate() {
            let r = (next(&mut s) % 20_001) as f32 / 10_000.0 - 1.0;
            // Offsets that change from block to block: heads of many widths.
            *v = (i as f32 * 0.013).sin() * 40.0 + r * 0.05 + (i / 37 % 5) as f32 * 300.0;
        }
        let mut gaps = x;
        for i in [0usize, 1, 50, 64, 65, 300, 301, 302, 1999] {
            gaps[i] = f32::NAN;
        }
        gaps[640..704].fill(f32::INFINITY); // a whole block of missing values
        // The strict plan's tightening for |x| <= 1e4: 1e-3 − (1e4 + 1e-3)·(2⁻²⁴ + 2⁻⁵⁰).
        let q = Quant {
            eb: 4e-4,
            bound: 1e-3,
            strict: true,
            max_abs: 1e4,
            max32: bits::f32_at_least(1e4),
            below: 0, // hosts: every block checked
            unchecked: None,
        };
        // Missing values only where the build stores them (feature `missing-and-shape`).
        let with_gaps = crate::szp::blocks::MISSING_VALUES;
        for (input, missing) in [(&x, false), (&gaps, true)] {
            if missing && !with_gaps {
                continue;
            }
            for (bs, group) in [(64usize, 32usize), (64, 4), (37, 8), (128, 1)] {
                let run = Run {
                    bs,
                    group,
                    finite: true,
                    missing,
                };
                let nb = input.len().div_ceil(bs);
                let (mut wa, mut wb) = ([0u8; 64], [0u8; 64]);
                let (mut pa, mut pb) = ([0u8; 2100 * 8 + 600], [0u8; 2100 * 8 + 600]);
                let r = Reference::new();
                let la = encode_run_keeping::<_, _, true>(
                    r,
                    &q,
                    run,
                    input,
                    &mut wa[..nb],
                    &mut pa,
                    &mut (),
                )
                .unwrap();
                let lb = encode_run_keeping::<_, _, false>(
                    r,
                    &q,
                    run,
                    input,
                    &mut wb[..nb],
                    &mut pb,
                    &mut (),
                )
                .unwrap();
                assert_eq!((la, &wa[..nb]), (lb, &wb[..nb]), "bs {bs} group {group}");
                assert!(
                    pa[..la] == pb[..lb],
                    "bs {bs} group {group} missing {missing}"
                );
                let mut back = [0f32; 2100];
                decode_run(r, q.eb, run, &wa[..nb], &pa[..la], &mut back, &mut ()).unwrap();
                for (i, (a, b)) in input.iter().zip(&back).enumerate() {
                    if !a.is_missing() {
                        assert!((f64::from(*a) - f64::from(*b)).abs() <= 1e-3, "value {i}");
                    }
                }
                // The reference kernel's own run loop (each block decoded from the run's bytes
                // at its start, the 32-bit loops reading past its payload): the same values,
                // with the run's bytes ending at its last payload or followed by others.
                let mut ext = [0xa5u8; 2100 * 8 + 608];
                ext[..la].copy_from_slice(&pa[..la]);
                for more in [0, 8] {
                    let mut again = [f32::NAN; 2100];
                    r.decode_blocks(q.eb, run, &wa[..nb], &ext[..la + more], &mut again, &mut ())
                        .unwrap();
                    assert!(
                        back.iter()
                            .zip(&again)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                        "bs {bs} group {group} missing {missing} +{more}"
                    );
                }
            }
        }
    }

    /// `fused_levels` reconstructs every level, the ones the FMA run leaves undecided by the
    /// integer path: a block of levels at a bound that puts every odd level near 7·10^6 on
    /// an f32 tie (undecided), mixed with ordinary ones, in runs of every length (the run's
    /// steps of four start at every offset of the pattern).
    #[test]
    fn fused_levels_reconstruct_every_level() {
        let fma = bits::tests::fma;
        let eb = 0.75 * (1.0 + 2f64.powi(-45));
        let (rc, f) = (bits::Recon::new(eb), bits::Fused32::new(eb));
        let f = f.unwrap_or_else(|| panic!("bound out of range"));
        let levels: [i32; 40] = core::array::from_fn(|i| match i % 5 {
            0 => 7_000_001 + 2 * i as i32, // odd: undecided
            1 => -7_000_003,               // odd: undecided
            2 => 7_000_000 + 2 * i as i32, // even: decided
            3 => 0,
            _ => -(i as i32) * 1001,
        });
        let (mut undecided, mut buf) = (0, [0f32; 40]);
        for len in 0..=levels.len() {
            for start in [0, 1, 3] {
                let Some(lv) = levels.get(start..len.max(start)) else {
                    continue;
                };
                let out = &mut buf[..lv.len()];
                for (o, &q) in out.iter_mut().zip(lv) {
                    *o = f32::from_bits(q as u32);
                }
                let mut probe = [0f32; 40];
                let probe = &mut probe[..lv.len()];
                probe.copy_from_slice(out);
                // The run stops at the first level the method leaves undecided, four at a
                // time or one by one.
                let first = lv
                    .iter()
                    .position(|&q| {
                        let (_, y1, y2) = f.bracket_with(q, fma);
                        y1 != y2
                    })
                    .unwrap_or(lv.len());
                assert_eq!(f.run_with(probe, fma), first, "run {start}..{len}");
                undecided += usize::from(first < lv.len());
                fused_levels(&f, &rc, out, |f, o| f.run_with(o, fma));
                for (o, &q) in out.iter().zip(lv) {
                    let want = reconstruct::<f32>(i64::from(q), eb);
                    assert_eq!(o.to_bits(), want.to_bits(), "q = {q}, run {start}..{len}");
                }
            }
        }
        assert!(undecided > 0, "no run stopped at an undecided level");
    }
}
