//! The inputs of one operation: each archive parsed as untrusted, its grid compared with the
//! first one's, its chunk CRCs checked just ahead of the combine ([`Check`]) and its per-block
//! state while the combine walks it ([`Term`]).

use super::super::blocks::{self, ArchiveView};
use super::super::fzm::FZM_MAGIC;
use super::super::{Error, FORMAT_VERSION_V1, LAYOUT_HEADS, Verify};
use crate::bits::{HEAD_GROUP_MAX, TrailerError, read_heads};

/// Most archives one call of [`super::linear`] / [`super::sum`] combines (a fixed stack table
/// per input).
pub const MAX_TERMS: usize = 64;

/// Result levels must stay below this magnitude (as the encoder's levels do).
pub(super) const LEVEL_LIMIT: i128 = 1 << 62;

/// The error for interpolation-layout inputs: their decoded values are not levels on a grid,
/// so no combination of them is exact.
pub(super) const INTERP_UNSUPPORTED: Error = Error::OpsUnsupported {
    what: "interpolation-layout archives (their values are predicted from decoded neighbours, \
           not levels on a shared grid: decompress, combine and recompress)",
};

/// Whether `a` claims the interpolation layout ([`super::super::Layout::Interp`]): the
/// operations refuse it by name before parsing.
pub(super) fn is_interp(a: &[u8]) -> bool {
    super::super::tiled::claims(a)
}

/// The error for `.fzm` inputs: their SZpConfig records no requested bound or strict flag, so
/// the result's bound could not be stated.
pub(super) const FZM_UNSUPPORTED: Error = Error::OpsUnsupported {
    what: ".fzm archives (decompress and recompress as fzpack .szp archives)",
};

/// One input's per-block view.
#[derive(Clone, Copy)]
pub(super) struct Term<'a> {
    pub(super) widths: &'a [u8],
    pub(super) payload: &'a [u8],
    /// The payload offset of the current block.
    pub(super) off: usize,
    /// The coefficient.
    pub(super) c: i64,
    /// Block-head layout: blocks per head group of this input (0: stage layout, no heads).
    group: usize,
    /// The loaded head group: blocks `gstart..gend`, their heads, the largest `|head|`, and
    /// the length of its trailer (skipped when the next group is loaded).
    gstart: usize,
    pub(super) gend: usize,
    heads: [i64; HEAD_GROUP_MAX],
    pub(super) hmax: f64,
    tlen: usize,
    /// The head of the current block (0 in the stage layout).
    pub(super) head: i64,
}

impl<'a> Term<'a> {
    /// An unused slot of the fixed input table.
    pub(super) const EMPTY: Term<'static> = Term {
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
    };

    /// The view of input `v` with coefficient `c`, at its first block.
    fn new(v: &ArchiveView<'a>, c: i64) -> Term<'a> {
        Term {
            widths: v.widths,
            payload: v.payload,
            c,
            group: v.header.head_group(),
            ..Term::EMPTY
        }
    }

    /// The width byte of block `b` (0 past the end).
    #[inline(always)]
    pub(super) fn width(&self, b: usize) -> u8 {
        self.widths.get(b).copied().unwrap_or(0)
    }

    /// The payload from the current block on.
    #[inline(always)]
    pub(super) fn rest(&self) -> &'a [u8] {
        self.payload.get(self.off..).unwrap_or(&[])
    }

    /// Makes block `b`'s head current (block-head layout), loading its group's trailer when
    /// `b` starts the next group: `self.off` is then at the trailer of the group before it.
    /// Blocks are visited in order.
    pub(super) fn sync(&mut self, b: usize, n: usize, bs: usize) -> Result<(), Error> {
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
            self.tlen = read_heads(self.payload.get(at..).unwrap_or(&[]), hs).map_err(trailer)?;
            self.hmax = hs
                .iter()
                .map(|&h| h.unsigned_abs() as f64)
                .fold(0.0, f64::max);
            (self.gstart, self.gend) = (b, b + cnt.max(1));
        }
        self.head = self.head_of(b);
        Ok(())
    }

    /// The head of block `b` of the loaded group (0 outside it).
    #[inline(always)]
    fn head_of(&self, b: usize) -> i64 {
        self.heads
            .get(b.wrapping_sub(self.gstart))
            .copied()
            .unwrap_or(0)
    }
}

/// The operation's error for a head trailer that cannot be read.
pub(super) fn trailer(e: TrailerError) -> Error {
    match e {
        TrailerError::Width => Error::Corrupt("head width above 64"),
        TrailerError::Truncated => Error::Truncated,
    }
}

/// The result head of block `b`: `Σ cⱼ·hⱼ` in checked `i128`; `None` when it reaches 2⁶².
pub(super) fn out_head(terms: &[Term<'_>], b: usize) -> Option<i64> {
    let mut q: i128 = 0;
    for t in terms {
        q = i128::from(t.head_of(b))
            .checked_mul(i128::from(t.c))
            .and_then(|v| v.checked_add(q))?;
    }
    (q > -LEVEL_LIMIT && q < LEVEL_LIMIT).then_some(q as i64)
}

/// What [`open`] finds in the inputs: the first one's view, and the result's bound and
/// strict flag.
pub(super) struct Opened<'a> {
    pub(super) first: ArchiveView<'a>,
    pub(super) bound: f64,
    pub(super) strict: bool,
    /// The inputs' shape (all equal).
    pub(super) shape: super::super::Shape,
}

/// Checks the call's counts, parses every input (structure and header CRC; each chunk's CRC
/// is checked by [`Check`] right before its blocks are combined) into `views` and `terms`,
/// and compares every grid with the first one's.
pub(super) fn open<'a>(
    archives: &[&'a [u8]],
    coeffs: &[i64],
    views: &mut [Option<ArchiveView<'a>>; MAX_TERMS],
    terms: &mut [Term<'a>; MAX_TERMS],
) -> Result<Opened<'a>, Error> {
    let Some(&a0) = archives.first() else {
        return Err(Error::OpsMismatch {
            what: "archive count (none given)",
        });
    };
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
    if archives.iter().any(|a| a.starts_with(&FZM_MAGIC)) {
        return Err(FZM_UNSUPPORTED);
    }
    if archives.iter().any(|a| is_interp(a)) {
        return Err(INTERP_UNSUPPORTED);
    }
    let first = blocks::parse_structure(a0, Verify::Checksums)?;
    let shape = blocks::read_shape(a0, Verify::Checksums)?;
    let (mut bound, mut strict) = (0f64, true);
    let slots = views.iter_mut().zip(terms.iter_mut());
    for (j, ((&a, &c), (view, term))) in archives.iter().zip(coeffs).zip(slots).enumerate() {
        // Each input is parsed once (the first one above).
        let v = if j == 0 {
            first
        } else {
            blocks::parse_structure(a, Verify::Checksums)?
        };
        check_same(&first, &v)?;
        if j > 0 && blocks::read_shape(a, Verify::Checksums)? != shape {
            return Err(Error::OpsMismatch { what: "shape" });
        }
        bound += c.unsigned_abs() as f64 * v.header.bound();
        strict &= v.header.strict;
        *term = Term::new(&v, c);
        *view = Some(v);
    }
    if !(bound.is_finite() && bound >= 0.0) {
        return Err(Error::InvalidErrorBound);
    }
    Ok(Opened {
        first,
        bound,
        strict,
        shape,
    })
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

/// The chunk-CRC verification of one input, run ahead of the combine: chunks
/// `0..next` (blocks `0..verified`, payload bytes `0..off`) are checked.
#[derive(Clone, Copy, Default)]
pub(super) struct Check {
    next: u32,
    verified: usize,
    off: usize,
    /// Values in the chunks not yet checked.
    pub(super) rem: usize,
}

impl Check {
    /// Checks the input's chunks up to the one holding block `end − 1`
    /// ([`blocks::verify_chunks`], chunk by chunk). Version 1 inputs have no CRCs.
    pub(super) fn verify_to(
        &mut self,
        v: &Option<ArchiveView<'_>>,
        end: usize,
    ) -> Result<(), Error> {
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
