//! Arithmetic on SZp archives without decompressing them (hZCCL / HoSZp style).
//!
//! Two archives on the same quantizer grid — same element type, length, block size and the
//! same recorded quantizer bound `eb` (`error_bound` of the SZpConfig, bit for bit) — hold
//! integer levels `q` with `x' = T((q·2)·eb)`. The levels of `c₁·a + c₂·b + …` are
//! `c₁·q_a + c₂·q_b + …`, and because every block's delta coding is linear
//! (`d₀ = q₀`, `dᵢ = qᵢ − qᵢ₋₁`), the per-block deltas combine the same way. Every operation
//! here is integer work on the payload: unpack each input block's zigzag deltas, combine them,
//! zigzag, recompute the block width, pack. No float round trip, no allocation; the caller
//! gives the output buffer ([`max_output_len`] is always enough).
//!
//! Both block layouts: in the block-head layout (layout 1) every block's first delta is 0 in
//! every input, so deltas combine as above; the result's block heads are `Σ cⱼ·hⱼ` (checked,
//! 2⁶² is [`Error::LevelOverflow`]) and each result head group is followed by its trailer.
//! Inputs of different layouts are [`Error::OpsMismatch`] (`"block layout (…)"`, naming both).
//!
//! # The result and its bound
//!
//! The output is a valid fzpack archive on the same grid (same `eb`, dtype, length, block
//! size), always in ABS mode, with the strict flag set when every input had it, and with the
//! requested bound `Σ |cⱼ| · boundⱼ` where `boundⱼ` is input `j`'s absolute bound
//! ([`Header::bound`](super::Header::bound): the requested ABS bound, or requested × value range for NOA). For strict
//! inputs every element of the result's decoding meets
//! `|Σ cⱼ·xⱼ − x'| ≤ Σ |cⱼ| · boundⱼ` against the original data `xⱼ`, and it differs from
//! `Σ cⱼ·decompress(aⱼ)` by at most that bound as well (see `docs/szp-archive.md`,
//! "Compressed-domain operations", for the derivation).
//!
//! # Errors, never panics or wraps
//!
//! Inputs that differ in a grid field are [`Error::OpsMismatch`] naming the field (`"dtype"`,
//! `"length"`, `"block size"`, `"quantizer bound"`); a result level of magnitude 2⁶² or more is
//! [`Error::LevelOverflow`] and one whose reconstruction is not finite in the element type
//! [`Error::ResultOverflow`], each with the index of the first such element (64-bit levels
//! never wrap); an input whose header numbers or levels no encoder writes is
//! [`Error::Implausible`], as its decoder finds it; every input is parsed and
//! validated as untrusted (as [`super::blocks::parse`] does, CRCs included: a corrupt input is
//! [`Error::ChecksumMismatch`]; each chunk's CRC is checked right before its blocks are
//! combined, so no result is built from an unchecked byte); `.fzm` inputs are [`Error::OpsUnsupported`]; a too-small
//! output is [`Error::OutputTooSmall`] with the exact length needed. Results are version 2
//! archives (checksummed) whatever the inputs' versions.
//!
//! # Addable archives
//!
//! The grid of a strict archive depends only on what the user states
//! ([`super::blocks::grid_magnitude`]): the bound and dtype — every field with
//! `max|x| ≤ 2^18·bound` (f32; `2^40·bound` for f64) compressed with `Config::abs(bound)` gets
//! the same grid — or a declared `Config::abs(eb).with_max_abs(M)` (the same grid for every
//! field with `|x| ≤ M`). Fields above `2^k·bound` fall back to the next power of two of their
//! `max|x|` and add only with archives of the same power (or declare `max_abs`).
//!
//! ```
//! use fzpack_core::szp::{self, ops, Config, DType};
//!
//! let a: [f32; 300] = core::array::from_fn(|i| (i as f32 * 0.1).sin());
//! let b: [f32; 300] = core::array::from_fn(|i| (i as f32 * 0.07).cos());
//! let cfg = Config::abs(1e-3).with_max_abs(2.0); // same grid for every |x| <= 2
//! let (mut za, mut zb, mut zc) = ([0u8; 4096], [0u8; 4096], [0u8; 4096]);
//! let la = szp::compress(&a, &cfg, &mut za)?;
//! let lb = szp::compress(&b, &cfg, &mut zb)?;
//! let lc = ops::add(&za[..la], &zb[..lb], &mut zc)?;
//! assert_eq!(szp::header(&zc[..lc])?.bound(), 2e-3);
//! let mut c = [0f32; 300];
//! szp::decompress(&zc[..lc], &mut c)?;
//! assert!((0..300).all(|i| (f64::from(a[i]) + f64::from(b[i]) - f64::from(c[i])).abs() <= 2e-3));
//! # Ok::<(), szp::Error>(())
//! ```

use super::blocks::{self, ArchiveView, Plan, block_payload_len, write_header};
use super::{DType, Error, FORMAT_VERSION_V1, HEADER_LEN, LAYOUT_HEADS, Layout, Mode, Verify};
use crate::bits::{self, HEAD_GROUP_MAX, mask, unzigzag, zigzag};

/// Most archives one call of [`linear`] / [`sum`] combines (a fixed stack table per input).
pub const MAX_TERMS: usize = 64;

/// Values per unpack chunk (the combined deltas of up to this many values at a time).
const CHUNK: usize = 512;

/// The largest block: every block is combined into one zigzag scratch of this size, so its
/// inputs are unpacked once (width and packing both read the scratch).
const MAX_BLOCK: usize = super::MAX_BLOCK_SIZE as usize;

/// The error for `.fzm` inputs: their SZpConfig records no requested bound or strict flag, so
/// the result's bound could not be stated.
const FZM_UNSUPPORTED: Error = Error::OpsUnsupported {
    what: ".fzm archives (decompress and recompress as fzpack .szp archives)",
};

/// Result levels must stay below this magnitude (as the encoder's levels do).
const LEVEL_LIMIT: i128 = 1 << 62;

/// Archive bytes that always suffice for the result of an operation on archives of `n` values
/// and block size `block_size` (header, widths, 8 bytes per value); `None` on overflow or an
/// invalid block size. Equal to [`super::max_compressed_len`].
pub fn max_output_len(n: usize, block_size: u32) -> Option<usize> {
    super::max_compressed_len(n, block_size, DType::F64)
}

/// `a + b` (bound `bound_a + bound_b`). Returns the output archive length.
pub fn add(a: &[u8], b: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    linear(&[a, b], &[1, 1], out)
}

/// `a − b` (bound `bound_a + bound_b`).
pub fn sub(a: &[u8], b: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    linear(&[a, b], &[1, -1], out)
}

/// `−a` (bound `bound_a`).
pub fn negate(a: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    linear(&[a], &[-1], out)
}

/// `k·a` for an integer `k` (bound `|k| · bound_a`; `k = 0` gives exact zeros, bound 0).
pub fn scale_int(a: &[u8], k: i64, out: &mut [u8]) -> Result<usize, Error> {
    linear(&[a], &[k], out)
}

/// `Σ aⱼ` over 1..=[`MAX_TERMS`] archives (bound `Σ boundⱼ`).
pub fn sum(archives: &[&[u8]], out: &mut [u8]) -> Result<usize, Error> {
    const ONES: [i64; MAX_TERMS] = [1; MAX_TERMS];
    let k = archives.len().min(MAX_TERMS + 1);
    linear(archives, ONES.get(..k).unwrap_or(&ONES), out)
}

/// `Σ cⱼ·aⱼ` for integer coefficients (the general form of every operation above; bound
/// `Σ |cⱼ| · boundⱼ`). `archives` and `coeffs` must have the same length, 1..=[`MAX_TERMS`].
pub fn linear(archives: &[&[u8]], coeffs: &[i64], out: &mut [u8]) -> Result<usize, Error> {
    engine(archives, coeffs, out, false)
}

/// The scalar reference of [`linear`]: every block through exact per-element level arithmetic
/// (decode each input's levels by prefix sum, combine in `i128` with checks, re-delta). Same
/// bytes and errors as [`linear`]; for tests.
pub fn linear_reference(
    archives: &[&[u8]],
    coeffs: &[i64],
    out: &mut [u8],
) -> Result<usize, Error> {
    engine(archives, coeffs, out, true)
}

/// The grid of an archive as the operations compare it.
fn check_same(first: &ArchiveView<'_>, v: &ArchiveView<'_>) -> Result<(), Error> {
    let (h0, h) = (&first.header, &v.header);
    if h.dtype != h0.dtype {
        return Err(Error::OpsMismatch { what: "dtype" });
    }
    if h.n != h0.n {
        return Err(Error::OpsMismatch { what: "length" });
    }
    if h.block_size != h0.block_size {
        return Err(Error::OpsMismatch { what: "block size" });
    }
    if h.quant_eb.to_bits() != h0.quant_eb.to_bits() {
        return Err(Error::OpsMismatch {
            what: "quantizer bound",
        });
    }
    if h.layout != h0.layout {
        return Err(Error::OpsMismatch {
            what: if h0.layout == LAYOUT_HEADS {
                "block layout (the first archive has the block-head layout `heads`, another the \
                 stage layout `fzgm`)"
            } else {
                "block layout (the first archive has the stage layout `fzgm`, another the \
                 block-head layout `heads`)"
            },
        });
    }
    Ok(())
}

/// Largest finite value of the element type, as f64.
fn type_max(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f64::from(f32::MAX),
        DType::F64 => f64::MAX,
    }
}

/// Whether level `q` reconstructs (`(q·2)·eb` in f64, then the element type) to a finite value.
#[inline]
fn recon_finite(q: i64, eb: f64, dtype: DType) -> bool {
    let v = q as f64 * 2.0 * eb;
    match dtype {
        DType::F32 => (v as f32).is_finite(),
        DType::F64 => v.is_finite(),
    }
}

/// Field `i` of width `w` (1..=64) of an LSB-first bit stream `p`: one 16-byte load where 16
/// bytes remain, else a zero-padded copy. Bits past the end read as 0.
#[inline(always)]
fn field(p: &[u8], i: usize, w: u32, mask: u64) -> u64 {
    let bit = i * w as usize;
    let byte = bit >> 3;
    let sh = (bit & 7) as u32;
    let mut b = [0u8; 16];
    if let Some(s) = p.get(byte..byte + 16) {
        b.copy_from_slice(s);
    } else if let Some(s) = p.get(byte..) {
        for (d, v) in b.iter_mut().zip(s) {
            *d = *v;
        }
    }
    ((u128::from_le_bytes(b) >> sh) as u64) & mask
}

/// Fields `first..first + dst.len()` of width `w` (0..=64), combined into `dst` as
/// `dst[i] (+)= c · unzigzag(field)` with wrapping arithmetic.
#[inline(always)]
fn unpack_combine(p: &[u8], w: u32, first: usize, c: i64, dst: &mut [i64], init: bool) {
    macro_rules! widths {
        ($($w:literal)*) => {
            match (w, init) {
                (0, true) => dst.fill(0),
                (0, false) => {}
                $(($w, true) => unpack_const::<$w, true>(p, first, c, dst),
                  ($w, false) => unpack_const::<$w, false>(p, first, c, dst),)*
                _ => unpack_wide(p, w, first, c, dst, init),
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
        31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56);
}

/// [`unpack_combine`] for a width `W` of 1..=56: each field lies inside the 8 bytes starting
/// at its first byte, so one unaligned load, a constant-pattern shift and a mask per value.
#[inline(always)]
fn unpack_const<const W: u32, const INIT: bool>(p: &[u8], first: usize, c: i64, dst: &mut [i64]) {
    let mask = (1u64 << W) - 1;
    let wz = W as usize;
    for (i, d) in dst.iter_mut().enumerate() {
        let bit = (first + i) * wz;
        let byte = bit >> 3;
        let u = if let Some(s) = p.get(byte..byte + 8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(s);
            (u64::from_le_bytes(b) >> (bit & 7)) & mask
        } else {
            field(p, first + i, W, mask)
        };
        let v = if c == 1 {
            unzigzag(u)
        } else {
            c.wrapping_mul(unzigzag(u))
        };
        *d = if INIT { v } else { d.wrapping_add(v) };
    }
}

/// [`unpack_combine`] for widths 57..=64 (16-byte windows).
fn unpack_wide(p: &[u8], w: u32, first: usize, c: i64, dst: &mut [i64], init: bool) {
    let m = mask(w);
    for (i, d) in dst.iter_mut().enumerate() {
        let v = c.wrapping_mul(unzigzag(field(p, first + i, w, m)));
        *d = if init { v } else { d.wrapping_add(v) };
    }
}

/// LSB-first bit packer into one block's exact payload slice.
struct Packer<'a> {
    out: &'a mut [u8],
    pos: usize,
    acc: u64,
    have: u32,
    w: u32,
}

impl Packer<'_> {
    #[inline(always)]
    fn put(&mut self, v: u64) {
        let w = self.w;
        self.acc |= v << self.have;
        if self.have + w >= 64 {
            if let Some(d) = self.out.get_mut(self.pos..self.pos + 8) {
                d.copy_from_slice(&self.acc.to_le_bytes());
            }
            self.pos += 8;
            self.acc = if self.have == 0 {
                0
            } else {
                v >> (64 - self.have)
            };
            self.have = self.have + w - 64;
        } else {
            self.have += w;
        }
    }
    fn flush(&mut self) {
        let n = self.have.div_ceil(8) as usize;
        let bytes = self.acc.to_le_bytes();
        if let Some(d) = self.out.get_mut(self.pos..) {
            for (d, b) in d.iter_mut().zip(bytes.iter().take(n)) {
                *d = *b;
            }
        }
    }
}

/// Packs `z` (each `< 2^w`, `1 <= w <= 64`) LSB-first into exactly `out`
/// (`ceil(z.len()·w/8)` bytes).
fn pack_into(z: &[u64], w: u32, out: &mut [u8]) {
    let mut pk = Packer {
        out,
        pos: 0,
        acc: 0,
        have: 0,
        w,
    };
    for &u in z {
        pk.put(u);
    }
    pk.flush();
}

/// One input's per-block view.
#[derive(Clone, Copy)]
struct Term<'a> {
    widths: &'a [u8],
    payload: &'a [u8],
    off: usize,
    c: i64,
    /// Block-head layout: blocks per head group of this input (0: stage layout, no heads).
    group: usize,
    /// The loaded head group: blocks `gstart..gend`, their heads, the largest `|head|`, and
    /// the length of its trailer (skipped when the next group is loaded).
    gstart: usize,
    gend: usize,
    heads: [i64; HEAD_GROUP_MAX],
    hmax: f64,
    tlen: usize,
    /// The head of the current block (0 in the stage layout).
    head: i64,
}

impl Term<'_> {
    /// Makes block `b`'s head current (block-head layout), loading its group's trailer when
    /// `b` starts the next group: `self.off` is then at the trailer of the group before it.
    /// Blocks are visited in order.
    fn sync(&mut self, b: usize, n: usize, bs: usize) -> Result<(), Error> {
        if self.group == 0 {
            return Ok(());
        }
        if b >= self.gend {
            self.off = self.off.saturating_add(self.tlen);
            let cnt = self
                .group
                .min(HEAD_GROUP_MAX)
                .min(self.widths.len().saturating_sub(b));
            let ws = self.widths.get(b..b + cnt).unwrap_or(&[]);
            let vals = n.saturating_sub(b.saturating_mul(bs)).min(cnt * bs);
            let at = self.off.saturating_add(blocks::run_bytes(ws, bs, vals));
            let hs = self.heads.get_mut(..cnt).unwrap_or(&mut []);
            self.tlen = read_heads(self.payload.get(at..).unwrap_or(&[]), hs)?;
            self.hmax = hs
                .iter()
                .map(|&h| h.unsigned_abs() as f64)
                .fold(0.0, f64::max);
            (self.gstart, self.gend) = (b, b + cnt.max(1));
        }
        self.head = self
            .heads
            .get(b.wrapping_sub(self.gstart))
            .copied()
            .unwrap_or(0);
        Ok(())
    }
}

/// Reads a head trailer of `hs.len()` heads at the start of `src` (width byte, zigzag head
/// deltas from 0, LSB-first) into `hs`; returns the trailer's length.
fn read_heads(src: &[u8], hs: &mut [i64]) -> Result<usize, Error> {
    let (&hw, packed) = src.split_first().ok_or(Error::Truncated)?;
    if hw > 64 {
        return Err(Error::Corrupt("head width above 64"));
    }
    let plen = bits::payload_len(hw, hs.len());
    let packed = packed.get(..plen).ok_or(Error::Truncated)?;
    let w = u32::from(hw);
    let mut h = 0i64;
    for (i, slot) in hs.iter_mut().enumerate() {
        if w > 0 {
            h = h.wrapping_add(unzigzag(field(packed, i, w, mask(w))));
        }
        *slot = h;
    }
    Ok(1 + plen)
}

/// The result head of block `b`: `Σ cⱼ·hⱼ` in checked `i128`; `None` when it reaches 2⁶².
fn out_head(terms: &[Term<'_>], b: usize) -> Option<i64> {
    let mut q: i128 = 0;
    for t in terms {
        let h = t.heads.get(b.wrapping_sub(t.gstart)).copied().unwrap_or(0);
        q = i128::from(h)
            .checked_mul(i128::from(t.c))
            .and_then(|v| v.checked_add(q))?;
    }
    (q > -LEVEL_LIMIT && q < LEVEL_LIMIT).then_some(q as i64)
}

fn engine(
    archives: &[&[u8]],
    coeffs: &[i64],
    out: &mut [u8],
    exact_only: bool,
) -> Result<usize, Error> {
    if archives.is_empty() {
        return Err(Error::OpsMismatch {
            what: "archive count (none given)",
        });
    }
    if archives.len() > MAX_TERMS {
        return Err(Error::OpsMismatch {
            what: "archive count (at most 64 per call)",
        });
    }
    if coeffs.len() != archives.len() {
        return Err(Error::OpsMismatch {
            what: "coefficient count",
        });
    }
    for a in archives {
        if a.starts_with(&super::fzm::FZM_MAGIC) {
            return Err(FZM_UNSUPPORTED);
        }
    }
    // Structure and header CRC here; each chunk's CRC right before its blocks are combined.
    let mut views = [None; MAX_TERMS];
    let first = blocks::parse_structure(archives[0], Verify::Checksums)?;
    let mut terms = [Term {
        widths: &[],
        payload: &[],
        off: 0,
        c: 0,
        group: 0,
        gstart: 0,
        gend: 0,
        heads: [0; HEAD_GROUP_MAX],
        hmax: 0.0,
        tlen: 0,
        head: 0,
    }; MAX_TERMS];
    let mut bound = 0f64;
    let mut strict = true;
    for (j, ((t, &a), &c)) in terms.iter_mut().zip(archives).zip(coeffs).enumerate() {
        // Each input's CRCs are checked once (the first one above).
        let v = if j == 0 {
            first
        } else {
            blocks::parse_structure(a, Verify::Checksums)?
        };
        check_same(&first, &v)?;
        if let Some(slot) = views.get_mut(j) {
            *slot = Some(v);
        }
        bound += c.unsigned_abs() as f64 * v.header.bound();
        strict &= v.header.strict;
        *t = Term {
            widths: v.widths,
            payload: v.payload,
            off: 0,
            c,
            group: v.header.head_group(),
            ..*t
        };
    }
    let terms = &mut terms[..archives.len()];
    let views = &views[..archives.len()];
    if !(bound.is_finite() && bound >= 0.0) {
        return Err(Error::InvalidErrorBound);
    }
    let h = first.header;
    let (n, eb, dtype) = (first.n, h.quant_eb, h.dtype);
    let bs = h.block_size as usize;
    let nb = first.widths.len();
    let plan = Plan {
        dtype,
        mode: Mode::Abs,
        block_size: h.block_size,
        n,
        requested: bound,
        bound,
        quant_eb: eb,
        value_base: 0.0,
        strict,
        layout: if h.layout == LAYOUT_HEADS {
            Layout::Heads
        } else {
            Layout::Fzgm
        },
    };
    let tmax = type_max(dtype);
    // Where the bound is so large that some levels' values are not finite in the element type
    // (never for the bounds encoders write for data below ~2⁶⁴·eb), every input level is
    // checked as its decoder checks it, on the exact path.
    let inputs_finite = !recon_finite(i64::MIN, eb, dtype);
    let exact_only = exact_only || inputs_finite;
    let payload_start = HEADER_LEN + nb;
    let mut pos = payload_start; // next payload byte of the output
    let mut fits = out.len() >= payload_start;
    let mut sc = Scratch {
        acc: None,
        zz: None,
        #[cfg(target_arch = "x86_64")]
        simd: !exact_only
            && terms.len() <= 2
            && terms.iter().all(|t| t.c == 1 || t.c == -1)
            && x86::available(),
        #[cfg(target_arch = "x86_64")]
        z32: [0u32; MAX_BLOCK],
    };
    // The per-block `fast` test below, once for the whole archive: every block's crude level
    // bound is at most the one of a full block at each input's widest width.
    // In the block-head layout every level also carries its block's head: the bound adds
    // `Σ |cⱼ| · max|hⱼ|` of the current head groups (`hb` below).
    let crude_all = {
        let mut crude = 0f64;
        for t in terms.iter() {
            let w = t.widths.iter().copied().max().unwrap_or(0);
            crude += t.c.unsigned_abs() as f64 * bs as f64 * pow2_below(w);
        }
        crude
    };
    let fast_with = |hb: f64| {
        let crude = crude_all + hb;
        !exact_only && crude < (1u64 << 61) as f64 && crude * 2.0 * eb * (1.0 + 1e-12) <= tmax
    };
    // Output head groups (0: stage layout) and the heads of the current one.
    let og = plan.head_group().min(HEAD_GROUP_MAX);
    let mut oheads = [0i64; HEAD_GROUP_MAX];
    // Chunk by chunk (the output's checksum chunks): each input's chunks covering the next
    // blocks are CRC-checked right before those blocks are combined, while they are in cache.
    // (A per-group step of a block-head layout would slot in at group ends inside a chunk.)
    let step = (1usize << plan.chunk_shift().min(31)).max(1);
    let mut checks = [Check::default(); MAX_TERMS];
    let checks = &mut checks[..terms.len()];
    for (ck, v) in checks.iter_mut().zip(views.iter()) {
        ck.rem = v.as_ref().map_or(0, |v| v.n);
    }
    // Each output chunk's CRC is taken right after the chunk is written (in cache) and kept
    // in the last `slen` bytes of `out` until the payload's end is known: while the result
    // fits, no payload byte reaches them.
    let slen = plan.sums_len();
    let stash = out.len().saturating_sub(slen);
    let mut b = 0usize;
    let mut u = 0u32;
    while b < nb {
        let (seg_start, seg_pos) = (b, pos);
        let seg_end = nb.min(b.saturating_add(step));
        for (ck, v) in checks.iter_mut().zip(views.iter()) {
            ck.verify_to(v, seg_end)?;
        }
        while b < seg_end {
            // The run this step may cover: the chunk, in the block-head layout cut at the
            // output's and every input's group end, and before a result head that overflows.
            let (mut run_end, mut hb, mut head_err) = (seg_end, 0f64, usize::MAX);
            if og > 0 {
                for t in terms.iter_mut() {
                    t.sync(b, n, bs)?;
                    hb += t.c.unsigned_abs() as f64 * t.hmax;
                    run_end = run_end.min(t.gend);
                }
                // `og` is a power of two: the end of `b`'s group.
                let gmask = og - 1;
                run_end = run_end.min(nb.min((b & !gmask) + og));
                let mut bb = b;
                while bb < run_end {
                    match (out_head(terms, bb), oheads.get_mut(bb & gmask)) {
                        (Some(h), Some(slot)) => *slot = h,
                        _ => {
                            (run_end, head_err) = (bb.max(b + 1), bb);
                            break;
                        }
                    }
                    bb += 1;
                }
            }
            let fast = fast_with(hb);
            #[cfg(target_arch = "x86_64")]
            if sc.simd && fast && fits && head_err != b {
                let mut r = x86::Run {
                    widths: [&[]; 2],
                    payload: [&[]; 2],
                    neg: [false; 2],
                    off: [0; 2],
                    k: terms.len(),
                    n,
                    bs,
                    b,
                    end: head_err.min(run_end),
                    pos,
                };
                for (j, t) in terms.iter().enumerate().take(2) {
                    r.widths[j] = t.widths;
                    r.payload[j] = t.payload;
                    r.neg[j] = t.c < 0;
                    r.off[j] = t.off;
                }
                // SAFETY: `x86::available` checked AVX-512 F/BW/VL/DQ and VBMI at run time.
                unsafe { x86::add_run(&mut r, out, &mut sc.z32) };
                for (j, t) in terms.iter_mut().enumerate().take(2) {
                    t.off = r.off[j];
                }
                (b, pos) = (r.b, r.pos);
            }
            if b < run_end {
                if b == head_err {
                    return Err(Error::LevelOverflow {
                        index: b.saturating_mul(bs),
                    });
                }
                let mut seed = 0i64;
                if og > 0 {
                    for t in terms.iter_mut() {
                        t.sync(b, n, bs)?;
                    }
                    seed = oheads.get(b & (og - 1)).copied().unwrap_or(0);
                }
                let g = Grid {
                    n,
                    bs,
                    eb,
                    dtype,
                    tmax,
                    exact_only,
                    all_fast: fast,
                    hb,
                    seed,
                    inputs_finite,
                };
                one_block(terms, b, &g, out, &mut pos, &mut fits, &mut sc)?;
                b += 1;
            }
            // The end of an output head group: its trailer follows its blocks.
            if og > 0 && (b & (og - 1) == 0 || b == nb) {
                let cnt = (b.wrapping_sub(1) & (og - 1)) + 1;
                let hs = oheads.get(..cnt).unwrap_or(&[]);
                let len = if fits {
                    match bits::put_heads(hs, out.get_mut(pos..).unwrap_or(&mut [])) {
                        Ok(len) => len,
                        Err(len) => {
                            fits = false;
                            len
                        }
                    }
                } else {
                    bits::trailer_len(bits::heads_width(hs), cnt)
                };
                pos += len;
            }
        }
        if fits && pos <= stash {
            let crc = match (
                out.get(HEADER_LEN + seg_start..HEADER_LEN + seg_end),
                out.get(seg_pos..pos),
            ) {
                (Some(w), Some(p)) => blocks::chunk_sum(u, w, p),
                _ => 0,
            };
            let at = stash + 4 * u as usize;
            if let Some(d) = out.get_mut(at..at + 4) {
                d.copy_from_slice(&crc.to_le_bytes());
            }
        }
        u += 1;
    }
    if !fits || out.len() < pos + slen {
        return Err(Error::OutputTooSmall { needed: pos + slen });
    }
    // pos <= stash: every chunk's CRC was stashed; move them behind the payload.
    out.copy_within(stash.., pos);
    write_header(&plan, out)?;
    Ok(pos + slen)
}

/// The chunk-CRC verification of one input, run ahead of the combine: chunks
/// `0..next` (blocks `0..verified`, payload bytes `0..off`) are checked.
#[derive(Clone, Copy, Default)]
struct Check {
    next: u32,
    verified: usize,
    off: usize,
    /// Values in the chunks not yet checked.
    rem: usize,
}

impl Check {
    /// Checks the input's chunks up to the one holding block `end − 1`
    /// ([`blocks::verify_chunks`], chunk by chunk). Version 1 inputs have no CRCs.
    fn verify_to(&mut self, v: &Option<ArchiveView<'_>>, end: usize) -> Result<(), Error> {
        let Some(v) = v else {
            return Ok(());
        };
        if v.header.version == FORMAT_VERSION_V1 {
            return Ok(());
        }
        let bs = v.header.block_size as usize;
        let c = (1usize << v.header.chunk_shift.min(31)).max(1);
        while self.verified < end {
            let u = self.next;
            let lo = self.verified;
            let hi = v.widths.len().min(lo.saturating_add(c));
            let wc = v.widths.get(lo..hi).unwrap_or(&[]);
            if wc.is_empty() {
                break;
            }
            let vals = self.rem.min(wc.len().saturating_mul(bs));
            let body = v.payload.get(self.off..).unwrap_or(&[]);
            let bytes = blocks::body_len(wc, bs, vals, v.header.head_group(), body)?;
            let p = v
                .payload
                .get(self.off..self.off.saturating_add(bytes))
                .ok_or(Error::Truncated)?;
            let at = (u as usize).saturating_mul(4);
            let stored = v
                .sums
                .get(at..at.saturating_add(4))
                .and_then(|s| s.first_chunk::<4>())
                .map(|s| u32::from_le_bytes(*s));
            if stored != Some(blocks::chunk_sum(u, wc, p)) {
                return Err(Error::ChecksumMismatch {
                    what: "blocks",
                    chunk: u,
                });
            }
            self.rem -= vals;
            self.off += bytes;
            self.verified = hi;
            self.next += 1;
        }
        Ok(())
    }
}

/// The fixed facts of one operation that [`one_block`] needs.
struct Grid {
    n: usize,
    bs: usize,
    eb: f64,
    dtype: DType,
    tmax: f64,
    exact_only: bool,
    /// Every block passes the `fast` test ([`engine`] checked it once for the run).
    all_fast: bool,
    /// `Σ |cⱼ| · max|hⱼ|` of the current head groups (0 in the stage layout).
    hb: f64,
    /// The result head of the block (its first level; 0 in the stage layout).
    seed: i64,
    /// Check that every input level's value is finite (bounds so large that some levels'
    /// values are not: then every block takes the exact path).
    inputs_finite: bool,
}

/// The engine's per-block scratch.
struct Scratch {
    /// Set up on first use (the run kernel needs neither: no 36 KiB clear per call).
    acc: Option<[i64; CHUNK]>,
    zz: Option<[u64; MAX_BLOCK]>,
    /// Whether the AVX-512 combines apply (one or two inputs, coefficients ±1, CPU support).
    #[cfg(target_arch = "x86_64")]
    simd: bool,
    #[cfg(target_arch = "x86_64")]
    z32: [u32; MAX_BLOCK],
}

/// `2^(w−1)` for a width `w` (0 for `w = 0`): the largest `|delta|` a width-`w` field holds.
fn pow2_below(w: u8) -> f64 {
    if w == 0 {
        0.0
    } else {
        // w in 1..=255: 2^(w-1) built from its exponent bits (finite up to 2^254).
        f64::from_bits((u64::from(w) - 1 + 1023) << 52)
    }
}

/// The AVX-512 combines' view of block `b` of (up to two) inputs: each one's payload from the
/// block on, its width and whether it is subtracted.
#[cfg(target_arch = "x86_64")]
fn simd_inputs<'a>(terms: &[Term<'a>], b: usize) -> [(&'a [u8], u8, bool); 2] {
    let mut ins: [(&[u8], u8, bool); 2] = [(&[], 0, false); 2];
    for (slot, t) in ins.iter_mut().zip(terms.iter()) {
        let w = t.widths.get(b).copied().unwrap_or(0);
        *slot = (t.payload.get(t.off..).unwrap_or(&[]), w, t.c < 0);
    }
    ins
}

/// Combines block `b` of every input into the output at `*pos_io` (the per-block path:
/// SIMD combines where they apply, else the scalar unpack or the exact reference); advances
/// `*pos_io` and every input's offset, clears `*fits_io` once the output is too small.
fn one_block(
    terms: &mut [Term<'_>],
    b: usize,
    g: &Grid,
    out: &mut [u8],
    pos_io: &mut usize,
    fits_io: &mut bool,
    sc: &mut Scratch,
) -> Result<(), Error> {
    let (n, bs, eb, dtype, tmax, exact_only) = (g.n, g.bs, g.eb, g.dtype, g.tmax, g.exact_only);
    let pos = *pos_io;
    let mut fits = *fits_io;
    let acc = sc.acc.get_or_insert([0i64; CHUNK]);
    let zz = sc.zz.get_or_insert([0u64; MAX_BLOCK]);
    #[cfg(target_arch = "x86_64")]
    let (simd, z32) = (sc.simd, &mut sc.z32);
    let start = b * bs;
    let len = (n - start).min(bs);
    // Crude bound on every |level| of this block: |q| <= len · 2^(w-1) per input.
    let fast = g.all_fast || {
        let mut crude = g.hb;
        for t in terms.iter() {
            let w = t.widths.get(b).copied().unwrap_or(0);
            crude += t.c.unsigned_abs() as f64 * len as f64 * pow2_below(w);
        }
        !exact_only && crude < (1u64 << 61) as f64 && crude * 2.0 * eb * (1.0 + 1e-12) <= tmax
    };
    // Set once a path has combined the block: its width (the 32-bit SIMD path, which packs it
    // too) or, on the 64-bit paths, the OR of the zigzag values they leave in `zz`.
    let mut width = u32::MAX;
    let mut any64 = None;
    #[cfg(target_arch = "x86_64")]
    if simd && fast {
        let ins = simd_inputs(terms, b);
        let ins = &ins[..terms.len()];
        if len <= z32.len() {
            // SAFETY: `x86::available` checked AVX-512 F/BW/VL/DQ and VBMI at run time.
            let any = unsafe { x86::combine(ins, len, z32) };
            if let Some(w) = any.map(|a| 32 - a.leading_zeros()).filter(|&w| w <= 24) {
                width = w;
                let cost = block_payload_len(w as u8, len);
                if fits && pos + cost <= out.len() && w > 0 {
                    // SAFETY: as above; the values are below 2^w, 1 <= w <= 24.
                    unsafe { x86::pack(&z32[..len], w, &mut out[pos..pos + cost]) };
                }
            }
        }
        if width == u32::MAX && len <= zz.len() {
            // SAFETY: `x86::available` checked AVX-512 F/BW/VL/DQ (and VBMI) at run time.
            any64 = unsafe { x86::combine64(ins, len, zz) };
        }
    }
    if width == u32::MAX && any64.is_none() && fast && len <= zz.len() {
        // Unpack every input once, chunk by chunk, into the block's zigzag scratch.
        let mut any = 0u64;
        let mut i = 0;
        while i < len {
            let m = (len - i).min(CHUNK);
            let a = &mut acc[..m];
            for (j, t) in terms.iter().enumerate() {
                let w = u32::from(t.widths.get(b).copied().unwrap_or(0));
                let p = t.payload.get(t.off..).unwrap_or(&[]);
                unpack_combine(p, w, i, t.c, a, j == 0);
            }
            for (z, &d) in zz[i..i + m].iter_mut().zip(a.iter()) {
                *z = zigzag(d);
                any |= *z;
            }
            i += m;
        }
        any64 = Some(any);
    }
    if let Some(any) = any64 {
        width = 64 - any.leading_zeros();
        let cost = block_payload_len(width as u8, len);
        if fits && pos + cost <= out.len() && width > 0 {
            pack_into(&zz[..len], width, &mut out[pos..pos + cost]);
        }
    } else if width == u32::MAX {
        let mut any = 0u64;
        exact_block(terms, b, len, eb, dtype, g.seed, g.inputs_finite, |i, u| {
            let _ = i;
            any |= u;
        })
        .map_err(|e| e.error(start))?;
        width = 64 - any.leading_zeros();
        let cost = block_payload_len(width as u8, len);
        if fits && pos + cost <= out.len() && width > 0 {
            let mut pk = Packer {
                out: &mut out[pos..pos + cost],
                pos: 0,
                acc: 0,
                have: 0,
                w: width,
            };
            exact_block(terms, b, len, eb, dtype, g.seed, g.inputs_finite, |_, u| {
                pk.put(u)
            })
            .map_err(|e| e.error(start))?;
            pk.flush();
        }
    }
    let cost = block_payload_len(width as u8, len);
    if fits && pos + cost <= out.len() {
        out[HEADER_LEN + b] = width as u8;
    } else {
        fits = false;
    }
    *pos_io = pos + cost;
    *fits_io = fits;
    for t in terms.iter_mut() {
        let w = t.widths.get(b).copied().unwrap_or(0);
        t.off += block_payload_len(w, len);
    }
    Ok(())
}

/// Why [`exact_block`] stopped, at the element's index in the block.
#[derive(Clone, Copy)]
enum Stop {
    /// A result level reaches 2⁶² ([`Error::LevelOverflow`]).
    Level(usize),
    /// A result level's value is not finite in the element type ([`Error::ResultOverflow`]).
    Result(usize),
    /// An input level's value is not finite in the element type: the input is
    /// [`Error::Implausible`], as its decoder finds it.
    Input,
}

impl Stop {
    /// The operation's error for a stop in the block starting at element `start`.
    fn error(self, start: usize) -> Error {
        match self {
            Stop::Level(i) => Error::LevelOverflow { index: start + i },
            Stop::Result(i) => Error::ResultOverflow { index: start + i },
            Stop::Input => Error::Implausible {
                what: "a level whose value is not finite in the element type",
            },
        }
    }
}

/// The exact reference of one block: per-element levels of every input (wrapping prefix sums,
/// as the decoder computes them, from each input's block head), combined in checked `i128`;
/// `f(i, zigzag delta)` per value, the first delta from `seed` (the result head, or 0).
/// Stops at the first element whose level reaches 2⁶² or does not reconstruct finitely, or,
/// with `inputs_finite`, whose input level does not.
#[allow(clippy::too_many_arguments)] // the block's place and the grid's facts
fn exact_block(
    terms: &[Term<'_>],
    b: usize,
    len: usize,
    eb: f64,
    dtype: DType,
    seed: i64,
    inputs_finite: bool,
    mut f: impl FnMut(usize, u64),
) -> Result<(), Stop> {
    let mut levels = [0i64; MAX_TERMS];
    for (l, t) in levels.iter_mut().zip(terms) {
        *l = t.head;
    }
    let mut prev = seed;
    for i in 0..len {
        let mut q: i128 = 0;
        for (t, l) in terms.iter().zip(levels.iter_mut()) {
            let w = u32::from(t.widths.get(b).copied().unwrap_or(0));
            if w > 0 {
                let p = t.payload.get(t.off..).unwrap_or(&[]);
                *l = l.wrapping_add(unzigzag(field(p, i, w, mask(w))));
            }
            if inputs_finite && !recon_finite(*l, eb, dtype) {
                return Err(Stop::Input);
            }
            q = i128::from(*l)
                .checked_mul(i128::from(t.c))
                .and_then(|v| v.checked_add(q))
                .ok_or(Stop::Level(i))?;
        }
        if q >= LEVEL_LIMIT || q <= -LEVEL_LIMIT {
            return Err(Stop::Level(i));
        }
        let q = q as i64; // |q| < 2^62
        if !recon_finite(q, eb, dtype) {
            return Err(Stop::Result(i));
        }
        f(i, zigzag(q - prev)); // both below 2^62 in magnitude: no overflow
        prev = q;
    }
    Ok(())
}

/// Compressed-domain statistics of one archive (levels decoded by prefix sum, no floats
/// materialized).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Element type.
    pub dtype: DType,
    /// Number of values.
    pub n: usize,
    /// The quantizer bound `eb` (a level `q` decodes to `T((q·2)·eb)`).
    pub quant_eb: f64,
    /// The archive's absolute bound per element ([`super::Header::bound`]).
    pub bound: f64,
    /// `Σ q` over all values.
    pub level_sum: i128,
    /// Smallest and largest level; `None` for an empty archive.
    pub min_max_levels: Option<(i64, i64)>,
}

impl Stats {
    /// `Σ x'` computed from the levels: `(Σ q)·2·eb` (within `n · bound` of the exact sum of
    /// the original data for strict archives, plus the f64 rounding of the product).
    pub fn sum(&self) -> f64 {
        self.level_sum as f64 * 2.0 * self.quant_eb
    }
    /// `sum / n` (`None` for an empty archive); within `bound` of the original mean.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum() / self.n as f64)
    }
    /// The decoded values of the smallest and largest level (f64 of the level's
    /// reconstruction in the element type: exactly what decompression yields).
    pub fn min_max(&self) -> Option<(f64, f64)> {
        let r = |q: i64| {
            let v = q as f64 * 2.0 * self.quant_eb;
            match self.dtype {
                DType::F32 => f64::from(v as f32),
                DType::F64 => v,
            }
        };
        self.min_max_levels.map(|(lo, hi)| (r(lo), r(hi)))
    }
}

/// [`Stats`] of one (untrusted) archive in one pass over its payload.
pub fn stats(archive: &[u8]) -> Result<Stats, Error> {
    if archive.starts_with(&super::fzm::FZM_MAGIC) {
        return Err(FZM_UNSUPPORTED);
    }
    let v = blocks::parse(archive)?;
    let bs = v.header.block_size as usize;
    let group = v.header.head_group().min(HEAD_GROUP_MAX);
    let (mut s, mut lo, mut hi) = (0i128, i64::MAX, i64::MIN);
    let mut off = 0usize;
    let mut acc = [0i64; CHUNK];
    let mut heads = [0i64; HEAD_GROUP_MAX];
    let mut tlen = 0usize;
    for (b, &w) in v.widths.iter().enumerate() {
        let len = (v.n - b * bs).min(bs);
        // Block-head layout: at a group's first block, skip the previous group's trailer and
        // read this group's (it follows the group's payloads).
        // `group` is a power of two.
        if group > 0 && b & (group - 1) == 0 {
            off += tlen;
            let cnt = group.min(v.widths.len() - b);
            let ws = v.widths.get(b..b + cnt).unwrap_or(&[]);
            let vals = (v.n - b * bs).min(cnt * bs);
            let at = off + blocks::run_bytes(ws, bs, vals);
            let hs = heads.get_mut(..cnt).unwrap_or(&mut []);
            tlen = read_heads(v.payload.get(at..).unwrap_or(&[]), hs)?;
        }
        let p = v.payload.get(off..).unwrap_or(&[]);
        let mut q = if group > 0 {
            heads.get(b & (group - 1)).copied().unwrap_or(0)
        } else {
            0
        };
        let mut i = 0;
        while i < len {
            let m = (len - i).min(CHUNK);
            let a = &mut acc[..m];
            unpack_combine(p, u32::from(w), i, 1, a, true);
            for &d in a.iter() {
                q = q.wrapping_add(d);
                s += i128::from(q);
                lo = lo.min(q);
                hi = hi.max(q);
            }
            i += m;
        }
        off += block_payload_len(w, len);
    }
    // As its decoder does, refuse an archive with a level whose value is not finite (the
    // reconstruction is monotone in |q|: the extremes decide).
    if v.n > 0
        && !(recon_finite(lo, v.header.quant_eb, v.header.dtype)
            && recon_finite(hi, v.header.quant_eb, v.header.dtype))
    {
        return Err(Error::Implausible {
            what: "a level whose value is not finite in the element type",
        });
    }
    Ok(Stats {
        dtype: v.header.dtype,
        n: v.n,
        quant_eb: v.header.quant_eb,
        bound: v.header.bound(),
        level_sum: s,
        min_max_levels: (v.n > 0).then_some((lo, hi)),
    })
}

/// The sum of the decoded values, from the levels ([`Stats::sum`]).
pub fn value_sum(archive: &[u8]) -> Result<f64, Error> {
    stats(archive).map(|s| s.sum())
}

/// The mean of the decoded values ([`Stats::mean`]); `None` for an empty archive.
pub fn mean(archive: &[u8]) -> Result<Option<f64>, Error> {
    stats(archive).map(|s| s.mean())
}

/// The smallest and largest level ([`Stats::min_max_levels`]).
pub fn min_max_levels(archive: &[u8]) -> Result<Option<(i64, i64)>, Error> {
    stats(archive).map(|s| s.min_max_levels)
}

/// The AVX-512 VBMI combine of one or two inputs with coefficients ±1 and widths up to 24
/// (the decoder's `vpermb` + `vpmultishiftqb` field extraction, i32 lanes), packed by the
/// encoder's VBMI packer; blocks it does not cover take the scalar code. Same bytes.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    use crate::arch::CpuFeatures;
    use crate::arch::x86_64::tables::Z512_TABLES;

    /// Whether this CPU runs [`combine`] and [`pack`].
    pub(super) fn available() -> bool {
        CpuFeatures::detect().has(
            CpuFeatures::AVX512F
                | CpuFeatures::AVX512BW
                | CpuFeatures::AVX512VL
                | CpuFeatures::AVX512DQ
                | CpuFeatures::AVX512VBMI,
        )
    }

    /// The decoder's field extraction for one width `w` (1..=24): its `vpermb` indices and
    /// `vpmultishiftqb` controls, and the shift `32 − w` that leaves each field in an i32 lane.
    #[derive(Clone, Copy)]
    struct Dec {
        idx: __m512i,
        ctrl: __m512i,
        cnt: __m128i,
    }

    impl Dec {
        /// The tables of width `w`; `None` above 24.
        #[inline]
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
        fn of(w: u8) -> Option<Dec> {
            let t = Z512_TABLES.get(usize::from(w))?;
            // SAFETY: the tables are plain arrays of 64 bytes; unaligned loads.
            let (idx, ctrl) = unsafe {
                (
                    _mm512_loadu_si512(t.dec_idx.as_ptr().cast()),
                    _mm512_loadu_si512(t.dec_ctrl.as_ptr().cast()),
                )
            };
            let cnt = _mm_cvtsi32_si128(32 - i32::from(w));
            Some(Dec { idx, ctrl, cnt })
        }

        /// The 16 deltas of one step (`b`: its payload bytes, from the step's first field's
        /// byte): the fields, unzigzagged as `(f >> 1) ^ −(f & 1)`, i32 lanes.
        #[inline]
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
        fn deltas(self, b: __m512i) -> __m512i {
            let f = _mm512_srl_epi32(
                _mm512_multishift_epi64_epi8(self.ctrl, _mm512_permutexvar_epi8(self.idx, b)),
                self.cnt,
            );
            _mm512_xor_si512(
                _mm512_srli_epi32::<1>(f),
                _mm512_sub_epi32(
                    _mm512_setzero_si512(),
                    _mm512_and_si512(f, _mm512_set1_epi32(1)),
                ),
            )
        }
    }

    /// The zigzagged `Σ ±dⱼ` of fields `0..len` of up to two blocks (`(payload from the block
    /// start, width 0..=24, negate)`) into `u[..len]`; returns the OR of the values, or `None`
    /// (nothing written that matters) if an input is not covered.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
    pub(super) fn combine(ins: &[(&[u8], u8, bool)], len: usize, u: &mut [u32]) -> Option<u32> {
        if u.len() < len || ins.len() > 2 {
            return None;
        }
        let zero = _mm512_setzero_si512();
        let none = Dec {
            idx: zero,
            ctrl: zero,
            cnt: _mm_setzero_si128(),
        };
        let mut tab = [(none, 0usize, false, 0usize); 2];
        let mut k = 0;
        for &(p, w, neg) in ins {
            if w == 0 {
                continue;
            }
            let t = Dec::of(w)?;
            if p.len() < super::block_payload_len(w, len) {
                return None;
            }
            tab[k] = (t, usize::from(w), neg, p.as_ptr() as usize);
            k += 1;
        }
        let tab = &tab[..k];
        let mut or = zero;
        let mut i = 0;
        while i < len {
            let r = (len - i).min(16);
            let lm: u16 = if r == 16 { u16::MAX } else { (1u16 << r) - 1 };
            let mut s = zero;
            for &(t, wz, neg, base) in tab {
                let bm = u64::MAX >> (64 - (r * wz).div_ceil(8));
                let src = base as *const u8;
                // SAFETY: the step's bytes [i·w/8, i·w/8 + ceil(r·w/8)) lie inside the input's payload slice (its length is at least ceil(len·w/8), checked above); masked-off bytes are not accessed.
                let b = unsafe { _mm512_maskz_loadu_epi8(bm, src.wrapping_add(i / 8 * wz).cast()) };
                let d = t.deltas(b);
                s = if neg {
                    _mm512_sub_epi32(s, d)
                } else {
                    _mm512_add_epi32(s, d)
                };
            }
            // |s| <= 2 · 2^23: the i32 zigzag is exact.
            let z =
                _mm512_maskz_xor_epi32(lm, _mm512_slli_epi32::<1>(s), _mm512_srai_epi32::<31>(s));
            or = _mm512_or_si512(or, z);
            // SAFETY: lanes i..i+r of `u` (u.len() >= len checked); masked-off lanes are not accessed.
            unsafe { _mm512_mask_storeu_epi32(u.as_mut_ptr().wrapping_add(i).cast(), lm, z) };
            i += 16;
        }
        Some(_mm512_reduce_or_epi32(or) as u32)
    }

    /// The zigzagged `Σ ±dⱼ` of fields `0..len` of up to two blocks (`(payload from the block
    /// start, width 0..=56, negate)`) into `u[..len]` with 64-bit lanes (gathered 8-byte windows,
    /// variable shifts): the wide-width counterpart of [`combine`]. Returns the OR of the
    /// values, or `None` if an input is not covered. The caller guarantees (its `fast` test)
    /// that the sums do not overflow.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    pub(super) fn combine64(ins: &[(&[u8], u8, bool)], len: usize, u: &mut [u64]) -> Option<u64> {
        if u.len() < len || ins.len() > 2 {
            return None;
        }
        // SIMD while every lane's 8-byte window lies inside its input's payload slice.
        let mut simd_end = len / 8 * 8;
        for &(p, w, _) in ins {
            let w = usize::from(w);
            if w > 56 || p.len() < super::block_payload_len(w as u8, len) {
                return None;
            }
            // Field i starts at byte i·w/8: its window fits while i·w <= (len − 8)·8 + 7.
            if let Some(f) = p
                .len()
                .checked_sub(8)
                .and_then(|r| (r * 8 + 7).checked_div(w))
            {
                simd_end = simd_end.min((f + 1) / 8 * 8);
            } else if w > 0 {
                simd_end = 0;
            }
        }
        let zero = _mm512_setzero_si512();
        let one = _mm512_set1_epi64(1);
        let seven = _mm512_set1_epi64(7);
        let lanes = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
        let mut or = zero;
        let mut i = 0;
        while i < simd_end {
            let mut s = zero;
            for &(p, w, neg) in ins {
                if w == 0 {
                    continue;
                }
                let wv = _mm512_set1_epi64(i64::from(w));
                let bit =
                    _mm512_mullo_epi64(_mm512_add_epi64(lanes, _mm512_set1_epi64(i as i64)), wv);
                let byte = _mm512_srli_epi64::<3>(bit);
                let sh = _mm512_and_si512(bit, seven);
                // Lane j reads the 8 bytes at byte (i + j)·w / 8; i + 8 <= simd_end, which the
                // loop above capped so that every such window ends inside `p`.
                // SAFETY: each gathered 8-byte window lies inside `p` (see the two lines above).
                let g = unsafe { _mm512_i64gather_epi64::<1>(byte, p.as_ptr().cast()) };
                let mask = _mm512_set1_epi64(((1u64 << w) - 1) as i64);
                let f = _mm512_and_si512(_mm512_srlv_epi64(g, sh), mask);
                let d = _mm512_xor_si512(
                    _mm512_srli_epi64::<1>(f),
                    _mm512_sub_epi64(zero, _mm512_and_si512(f, one)),
                );
                s = if neg {
                    _mm512_sub_epi64(s, d)
                } else {
                    _mm512_add_epi64(s, d)
                };
            }
            let z = _mm512_xor_si512(_mm512_slli_epi64::<1>(s), _mm512_srai_epi64::<63>(s));
            or = _mm512_or_si512(or, z);
            // SAFETY: lanes i..i+8 of `u` (i + 8 <= len <= u.len()).
            unsafe { _mm512_storeu_si512(u.as_mut_ptr().wrapping_add(i).cast(), z) };
            i += 8;
        }
        let mut any = _mm512_reduce_or_epi64(or) as u64;
        for (k, slot) in u.iter_mut().enumerate().take(len).skip(simd_end) {
            let mut d = 0i64;
            for &(p, w, neg) in ins {
                if w > 0 {
                    let w = u32::from(w);
                    let v = super::unzigzag(super::field(p, k, w, super::mask(w)));
                    d = if neg {
                        d.wrapping_sub(v)
                    } else {
                        d.wrapping_add(v)
                    };
                }
            }
            *slot = super::zigzag(d);
            any |= *slot;
        }
        Some(any)
    }

    /// A run of blocks of one or two inputs through [`add_run`]: each input's width bytes,
    /// payload, sign and next payload offset; the archives' `n` values in blocks of `bs`; the
    /// next block `b`, the block `end` the run stops before, and the output offset `pos`.
    pub(super) struct Run<'a> {
        pub widths: [&'a [u8]; 2],
        pub payload: [&'a [u8]; 2],
        pub neg: [bool; 2],
        pub off: [usize; 2],
        pub k: usize,
        pub n: usize,
        pub bs: usize,
        pub b: usize,
        pub end: usize,
        pub pos: usize,
    }

    /// Combines blocks `r.b..r.end` of `r.k` (1 or 2) inputs into `out` (width byte at
    /// `HEADER_LEN + b`, payload at `r.pos`) in one loop: per block, unpack each input's
    /// fields (widths 0..=24, i32 lanes), add or subtract, zigzag, OR for the width, and pack
    /// at that width (the encoder's VBMI packer) from the zigzag scratch `z`. Advances `r`
    /// past every block it wrote; stops early (leaving `r` at the block) at a block it does
    /// not cover: an input width above 24, a result width above 24, or an output too small.
    /// The caller guarantees the sums do not overflow (its `fast` test) and that block
    /// `r.b` starts a run whose inputs' offsets are `r.off`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
    pub(super) fn add_run(r: &mut Run<'_>, out: &mut [u8], z: &mut [u32]) {
        // Full blocks of the common small sizes with a constant step count (unrolled).
        match (r.neg.iter().any(|&g| g), r.bs) {
            (false, 32) => run_signed::<false, 32>(r, out, z),
            (false, 64) => run_signed::<false, 64>(r, out, z),
            (false, 128) => run_signed::<false, 128>(r, out, z),
            (false, _) => run_signed::<false, 0>(r, out, z),
            (true, 32) => run_signed::<true, 32>(r, out, z),
            (true, 64) => run_signed::<true, 64>(r, out, z),
            (true, 128) => run_signed::<true, 128>(r, out, z),
            (true, _) => run_signed::<true, 0>(r, out, z),
        }
    }

    /// [`add_run`] with (`NEG`) or without negated inputs; `L > 0`: blocks of exactly `L`
    /// values only (it stops at a shorter last block, which the caller's per-block path takes).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
    fn run_signed<const NEG: bool, const L: usize>(r: &mut Run<'_>, out: &mut [u8], z: &mut [u32]) {
        let (n, bs, end) = (r.n, r.bs, r.end);
        let zero = _mm512_setzero_si512();
        // A missing second input reads as width 0 in every block.
        let (wa_s, wb_s) = (r.widths[0], if r.k >= 2 { r.widths[1] } else { &[] });
        let (pa, pb) = (r.payload[0], if r.k >= 2 { r.payload[1] } else { &[] });
        // Negation as `(d ^ m) − m` with `m` all ones (negate) or zero.
        let sign = |neg: bool| _mm512_set1_epi32(-i32::from(neg));
        let (ma, mb) = (sign(r.neg[0]), sign(r.neg[1] && r.k >= 2));
        let (mut b, mut pos, [mut oa, mut ob]) = (r.b, r.pos, r.off);
        // Batches of blocks: phase 1 combines every block of the batch into `z` (the blocks'
        // chains are independent: input offsets follow from input widths alone), phase 2
        // packs them at their widths.
        let mut wbuf = [0u8; BATCH_BLOCKS];
        'run: while b < end {
            let (b0, mut nbat, mut vals) = (b, 0usize, 0usize);
            let zp = z.as_mut_ptr();
            let mut stop = false;
            while b < end && nbat < BATCH_BLOCKS {
                let len = n.saturating_sub(b.saturating_mul(bs)).min(bs);
                if L > 0 && len != L {
                    stop = true;
                    break;
                }
                let len = if L > 0 { L } else { len };
                if len == 0 || vals + len > z.len() {
                    break;
                }
                let wa = if r.k >= 1 {
                    wa_s.get(b).copied()
                } else {
                    Some(0)
                };
                let wb = if r.k >= 2 {
                    wb_s.get(b).copied()
                } else {
                    Some(0)
                };
                let (Some(wa), Some(wb)) = (wa, wb) else {
                    stop = true;
                    break;
                };
                if wa > 24 || wb > 24 {
                    stop = true;
                    break;
                }
                let (ca, cb) = (
                    super::block_payload_len(wa, len),
                    super::block_payload_len(wb, len),
                );
                // Each input's block payload must lie inside its payload slice.
                if oa + ca > pa.len() || ob + cb > pb.len() {
                    stop = true;
                    break;
                }
                // Width 0 reads with width 1's tables and an empty byte mask: every field is 0.
                let (Some(ta), Some(tb)) = (Dec::of(wa.max(1)), Dec::of(wb.max(1))) else {
                    stop = true;
                    break;
                };
                let (wa, wb) = (usize::from(wa), usize::from(wb));
                let (srca, srcb) = (pa.as_ptr().wrapping_add(oa), pb.as_ptr().wrapping_add(ob));
                let mut or = zero;
                let mut i = 0;
                while i < len {
                    let rl = (len - i).min(16);
                    let lm: u16 = if rl == 16 { u16::MAX } else { (1u16 << rl) - 1 };
                    // ceil(rl·w/8) <= 48 bytes of each input (0 for width 0).
                    let bma = (1u64 << (rl * wa).div_ceil(8)) - 1;
                    let bmb = (1u64 << (rl * wb).div_ceil(8)) - 1;
                    // SAFETY: the step's bytes [i·w/8, i·w/8 + ceil(rl·w/8)) of each input lie inside its block payload, checked above to lie inside its payload slice; masked-off bytes are not accessed.
                    let (va, vb) = unsafe {
                        (
                            _mm512_maskz_loadu_epi8(bma, srca.wrapping_add(i / 8 * wa).cast()),
                            _mm512_maskz_loadu_epi8(bmb, srcb.wrapping_add(i / 8 * wb).cast()),
                        )
                    };
                    // Each input's deltas; `−d = (d ^ m) − m` with `m` all ones below.
                    let (da, db) = (ta.deltas(va), tb.deltas(vb));
                    let s = if NEG {
                        _mm512_add_epi32(
                            _mm512_sub_epi32(_mm512_xor_si512(da, ma), ma),
                            _mm512_sub_epi32(_mm512_xor_si512(db, mb), mb),
                        )
                    } else {
                        _mm512_add_epi32(da, db)
                    };
                    // |s| <= 2 · 2^23: the i32 zigzag is exact.
                    let zv = _mm512_maskz_xor_epi32(
                        lm,
                        _mm512_slli_epi32::<1>(s),
                        _mm512_srai_epi32::<31>(s),
                    );
                    or = _mm512_or_si512(or, zv);
                    // SAFETY: lanes vals+i..vals+i+rl of `z` (vals + len <= z.len() checked); masked-off lanes are not accessed.
                    unsafe { _mm512_mask_storeu_epi32(zp.wrapping_add(vals + i).cast(), lm, zv) };
                    i += 16;
                }
                let w = 32 - (_mm512_reduce_or_epi32(or) as u32).leading_zeros();
                if w > 24 {
                    stop = true;
                    break;
                }
                if let Some(slot) = wbuf.get_mut(nbat) {
                    *slot = w as u8;
                }
                oa += ca;
                ob += cb;
                vals += len;
                nbat += 1;
                b += 1;
            }
            // Phase 2: pack the batch's blocks (values `z[voff..voff + len]` of each). A run of
            // consecutive blocks of one width whose payloads end on byte boundaries (every
            // block but the archive's last when `bs·w` is a multiple of 8) is one bit stream:
            // one packer call for the run.
            let mut voff = 0usize;
            let mut j = 0usize;
            while j < nbat {
                let w = wbuf.get(j).copied().unwrap_or(0);
                // The run's blocks `j..e` that fit `out`: `glen` values, payload up to `end_pos`;
                // `short` once a block does not fit.
                let (mut e, mut glen, mut end_pos, mut short) = (j, 0usize, pos, false);
                while e < nbat && wbuf.get(e).copied() == Some(w) {
                    let len = n.saturating_sub((b0 + e).saturating_mul(bs)).min(bs);
                    let next = end_pos.checked_add(super::block_payload_len(w, len));
                    let Some(next) = next.filter(|&x| x <= out.len()) else {
                        short = true;
                        break;
                    };
                    (glen, end_pos) = (glen + len, next);
                    e += 1;
                    if !(len * usize::from(w)).is_multiple_of(8) {
                        break;
                    }
                }
                match out.get_mut(super::HEADER_LEN + b0 + j..super::HEADER_LEN + b0 + e) {
                    Some(slots) => slots.fill(w),
                    None => (e, glen, end_pos, short) = (j, 0, pos, true),
                }
                if w > 0
                    && e > j
                    && let (Some(dst), Some(zs)) =
                        (out.get_mut(pos..end_pos), z.get(voff..voff + glen))
                {
                    crate::arch::x86_64::avx512::szp::pack_block32(zs, u32::from(w), dst);
                }
                pos = end_pos;
                voff += glen;
                j = e;
                if short {
                    // Too small from block `b0 + e` on: rewind the inputs to it.
                    (oa, ob) = rewind(r, b0 + e, b, oa, ob);
                    b = b0 + e;
                    break 'run;
                }
            }
            if stop || nbat == 0 {
                break;
            }
        }
        (r.b, r.pos, r.off) = (b, pos, [oa, ob]);
    }

    /// Blocks per batch of [`add_run`].
    const BATCH_BLOCKS: usize = 256;

    /// The input offsets at block `from` given those at block `to` (`from <= to`): back by the
    /// payloads of blocks `from..to`.
    fn rewind(r: &Run<'_>, from: usize, to: usize, mut oa: usize, mut ob: usize) -> (usize, usize) {
        let (n, bs) = (r.n, r.bs);
        for bj in from..to {
            let len = n.saturating_sub(bj.saturating_mul(bs)).min(bs);
            let wa = if r.k >= 1 {
                r.widths[0].get(bj).copied().unwrap_or(0)
            } else {
                0
            };
            let wb = if r.k >= 2 {
                r.widths[1].get(bj).copied().unwrap_or(0)
            } else {
                0
            };
            oa = oa.saturating_sub(super::block_payload_len(wa, len));
            ob = ob.saturating_sub(super::block_payload_len(wb, len));
        }
        (oa, ob)
    }

    /// Packs `u` (each `< 2^w`, `1 <= w <= 24`) into exactly `out` (the encoder's VBMI packer).
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")]
    pub(super) fn pack(u: &[u32], w: u32, out: &mut [u8]) {
        crate::arch::x86_64::avx512::szp::pack_block32(u, w, out);
    }
}
