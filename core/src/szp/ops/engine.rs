//! The driver of every operation: the inputs opened ([`super::input`]), then the output
//! written chunk by chunk (its checksum chunks): each input's chunks covering the next blocks
//! CRC-checked right before those blocks are combined, while they are in cache; within a
//! chunk, runs of blocks (cut at head-group ends in the block-head layout) through the
//! AVX-512 run kernel where it applies, else block by block ([`super::block`]); each result
//! head group followed by its trailer; each output chunk's CRC taken right after it is
//! written; the header last.

use super::super::blocks::{Plan, chunk_sum, write_header};
use super::super::missing;
use super::super::{Error, HEADER_LEN, LAYOUT_HEADS, Layout, Mode};
use super::block::{At, Grid, Out, Path, Scratch, one_block, pow2_below, recon_finite, type_max};
use super::input::{self, Check, MAX_TERMS, Opened, Term, out_head};
#[cfg(target_arch = "x86_64")]
use crate::arch::x86_64::avx512::ops as simd;
use crate::bits::{HEAD_GROUP_MAX, heads_width, put_heads, trailer_len};

/// `Σ cⱼ·aⱼ` into `out` on `path`; the output archive's length.
pub(super) fn run(
    archives: &[&[u8]],
    coeffs: &[i64],
    out: &mut [u8],
    path: Path,
) -> Result<usize, Error> {
    let mut views = [None; MAX_TERMS];
    let mut terms: [Term<'_>; MAX_TERMS] = [Term::EMPTY; MAX_TERMS];
    let opened = input::open(archives, coeffs, &mut views, &mut terms)?;
    let k = archives.len();
    let views = views.get(..k).unwrap_or_default();
    let mut plan = result_plan(&opened);
    // The extension (version 3): the inputs' shape, and every value missing in some input.
    plan.missing = views.iter().flatten().any(|v| v.header.missing);
    let mut ins: [(&[u8], i64); MAX_TERMS] = [(&[], 0); MAX_TERMS];
    for ((slot, v), &c) in ins.iter_mut().zip(views).zip(coeffs) {
        *slot = (v.as_ref().map_or(&[][..], |v| v.ext.runs), c);
    }
    let ins = ins.get(..k).unwrap_or_default();
    let (flags, shape) = (plan.ext_flags(), plan.shape);
    let xlen = missing::write_combined(flags, &shape, plan.dtype, ins, None)?;
    let cap = out.len().saturating_sub(xlen);
    let body = out.get_mut(..cap).unwrap_or_default();
    let terms = terms.get_mut(..k).unwrap_or_default();
    let len = combine(&opened, terms, views, &plan, body, path).map_err(|e| match e {
        Error::OutputTooSmall { needed } => Error::OutputTooSmall {
            needed: needed.saturating_add(xlen),
        },
        e => e,
    })?;
    // The extension right after the result's chunk CRCs, in the room kept for it.
    let dst = out.get_mut(len..).unwrap_or_default();
    let x = missing::write_combined(flags, &shape, plan.dtype, ins, Some(dst))?;
    Ok(len + x)
}

/// The combine of the opened inputs into `out`: the result archive's length.
fn combine(
    opened: &Opened<'_>,
    terms: &mut [Term<'_>],
    views: &[Option<super::super::ArchiveView<'_>>],
    plan: &Plan,
    out: &mut [u8],
    path: Path,
) -> Result<usize, Error> {
    let k = terms.len();
    let g = grid(opened, path);
    let mut c = Combiner::new(terms, &g, plan, out, path);
    let nb = opened.first.widths.len();
    let step = (1usize << plan.chunk_shift().min(31)).max(1);
    let mut checks = [Check::default(); MAX_TERMS];
    let checks = checks.get_mut(..k).unwrap_or_default();
    for (ck, v) in checks.iter_mut().zip(views) {
        ck.rem = v.as_ref().map_or(0, |v| v.n);
    }
    let (mut b, mut u) = (0usize, 0u32);
    while b < nb {
        let (seg_start, seg_pos) = (b, c.out.pos);
        let seg_end = nb.min(b.saturating_add(step));
        for (ck, v) in checks.iter_mut().zip(views) {
            ck.verify_to(v, seg_end)?;
        }
        while b < seg_end {
            b = c.step(b, seg_end)?;
        }
        c.seal_chunk(u, seg_start, seg_end, seg_pos);
        u += 1;
    }
    c.finish(plan)
}

/// The result's plan: the inputs' grid, ABS mode, the accumulated bound.
fn result_plan(o: &Opened<'_>) -> Plan {
    let h = o.first.header;
    Plan {
        dtype: h.dtype,
        mode: Mode::Abs,
        block_size: h.block_size,
        n: o.first.n,
        requested: o.bound,
        bound: o.bound,
        quant_eb: h.quant_eb,
        value_base: 0.0,
        strict: o.strict,
        layout: if h.layout == LAYOUT_HEADS {
            Layout::Heads
        } else {
            Layout::Fzgm
        },
        missing: false,
        shape: h.shape,
    }
}

/// The fixed facts of the operation on `path`.
fn grid(o: &Opened<'_>, path: Path) -> Grid {
    let h = o.first.header;
    // Where the bound is so large that some levels' values are not finite in the element type
    // (never for the bounds encoders write for data below ~2⁶⁴·eb), every input level is
    // checked as its decoder checks it, on the exact path.
    let inputs_finite = !recon_finite(i64::MIN, h.quant_eb, h.dtype);
    Grid {
        n: o.first.n,
        bs: h.block_size as usize,
        eb: h.quant_eb,
        dtype: h.dtype,
        tmax: type_max(h.dtype),
        exact_only: matches!(path, Path::Exact) || inputs_finite,
        inputs_finite,
    }
}

/// The run that one [`Combiner::step`] may cover: it ends at `end` (the chunk's end, in the
/// block-head layout cut at the output's and every input's group end, and after a result
/// head that overflows); `hb` is `Σ |cⱼ| · max|hⱼ|` of the inputs' current head groups, `err`
/// the first block whose result head reaches 2⁶² (`usize::MAX`: none).
struct RunHeads {
    end: usize,
    hb: f64,
    err: usize,
}

/// The state of one operation while its blocks are combined.
struct Combiner<'t, 'a, 'g, 'o> {
    terms: &'t mut [Term<'a>],
    g: &'g Grid,
    out: Out<'o>,
    sc: Scratch,
    /// Blocks in the archives.
    nb: usize,
    /// The `fast` test's crude level bound of every block at once: a full block at each
    /// input's widest width (the heads' part is added per run).
    crude_all: f64,
    /// Output blocks per head group (0: stage layout) and the heads of the current group.
    og: usize,
    oheads: [i64; HEAD_GROUP_MAX],
    /// Each output chunk's CRC is taken right after the chunk is written (in cache) and kept
    /// in the last `slen` bytes of the output, from `stash` on, until the payload's end is
    /// known: while the result fits, no payload byte reaches them.
    stash: usize,
    slen: usize,
}

impl<'t, 'a, 'g, 'o> Combiner<'t, 'a, 'g, 'o> {
    fn new(
        terms: &'t mut [Term<'a>],
        g: &'g Grid,
        plan: &Plan,
        buf: &'o mut [u8],
        path: Path,
    ) -> Self {
        let nb = terms.first().map_or(0, |t| t.widths.len());
        let crude_all = terms
            .iter()
            .map(|t| {
                let w = t.widths.iter().copied().max().unwrap_or(0);
                t.c.unsigned_abs() as f64 * g.bs as f64 * pow2_below(w)
            })
            .sum();
        let wpos = HEADER_LEN;
        let pos = wpos.saturating_add(nb);
        let slen = plan.sums_len();
        let stash = buf.len().saturating_sub(slen);
        let fits = buf.len() >= pos;
        let sc = Scratch::new(if g.exact_only { Path::Exact } else { path }, terms);
        Combiner {
            terms,
            g,
            out: Out {
                buf,
                wpos,
                pos,
                fits,
            },
            sc,
            nb,
            crude_all,
            og: plan.head_group().min(HEAD_GROUP_MAX),
            oheads: [0; HEAD_GROUP_MAX],
            stash,
            slen,
        }
    }

    /// Combines the run of blocks from `b` (inside the chunk ending at `seg_end`) that one
    /// call covers, at least one block; returns the next block.
    fn step(&mut self, mut b: usize, seg_end: usize) -> Result<usize, Error> {
        let run = self.heads(b, seg_end)?;
        let fast = self.g.fast(self.crude_all + run.hb);
        #[cfg(target_arch = "x86_64")]
        if fast && run.err != b {
            b = self.simd_run(b, run.err.min(run.end));
        }
        if b < run.end {
            if b == run.err {
                return Err(Error::LevelOverflow {
                    index: b.saturating_mul(self.g.bs),
                });
            }
            self.block(b, fast, run.hb)?;
            b += 1;
        }
        // The end of an output head group: its trailer follows its blocks.
        if self.og > 0 && (b & (self.og - 1) == 0 || b == self.nb) {
            let cnt = (b.wrapping_sub(1) & (self.og - 1)) + 1;
            self.out.put_trailer(self.oheads.get(..cnt).unwrap_or(&[]));
        }
        Ok(b)
    }

    /// The run from block `b` ([`RunHeads`]); in the block-head layout, loads the inputs'
    /// head groups and the result heads of the run's blocks.
    fn heads(&mut self, b: usize, seg_end: usize) -> Result<RunHeads, Error> {
        let mut r = RunHeads {
            end: seg_end,
            hb: 0.0,
            err: usize::MAX,
        };
        if self.og == 0 {
            return Ok(r);
        }
        for t in self.terms.iter_mut() {
            t.sync(b, self.g.n, self.g.bs)?;
            r.hb += t.c.unsigned_abs() as f64 * t.hmax;
            r.end = r.end.min(t.gend);
        }
        // `og` is a power of two: the end of `b`'s group.
        let gmask = self.og - 1;
        r.end = r.end.min(self.nb.min((b & !gmask) + self.og));
        for bb in b..r.end {
            match (out_head(self.terms, bb), self.oheads.get_mut(bb & gmask)) {
                (Some(h), Some(slot)) => *slot = h,
                _ => {
                    (r.end, r.err) = (bb.max(b + 1), bb);
                    break;
                }
            }
        }
        Ok(r)
    }

    /// The AVX-512 run kernel over blocks `b..end` where it applies (one or two inputs with
    /// coefficients ±1, the run passing the `fast` test, the output fitting so far); returns
    /// the first block it did not write.
    #[cfg(target_arch = "x86_64")]
    fn simd_run(&mut self, b: usize, end: usize) -> usize {
        let Some(token) = self.sc.simd else {
            return b;
        };
        if !self.out.fits {
            return b;
        }
        let (t0, t1) = (self.terms.first(), self.terms.get(1));
        let widths = |t: Option<&Term<'a>>| t.map_or(&[][..], |t| t.widths);
        let payload = |t: Option<&Term<'a>>| t.map_or(&[][..], |t| t.payload);
        let neg = |t: Option<&Term<'a>>| t.is_some_and(|t| t.c < 0);
        let off = |t: Option<&Term<'a>>| t.map_or(0, |t| t.off);
        let mut r = simd::Run {
            widths: [widths(t0), widths(t1)],
            payload: [payload(t0), payload(t1)],
            neg: [neg(t0), neg(t1)],
            off: [off(t0), off(t1)],
            k: self.terms.len(),
            n: self.g.n,
            bs: self.g.bs,
            b,
            end,
            pos: self.out.pos,
            wpos: self.out.wpos,
        };
        simd::add_run(token, &mut r, self.out.buf, &mut self.sc.z32);
        for (t, &off) in self.terms.iter_mut().zip(&r.off) {
            t.off = off;
        }
        self.out.pos = r.pos;
        r.b
    }

    /// Block `b` alone ([`one_block`]), from the result head of its group.
    fn block(&mut self, b: usize, all_fast: bool, hb: f64) -> Result<(), Error> {
        let mut seed = 0i64;
        if self.og > 0 {
            for t in self.terms.iter_mut() {
                t.sync(b, self.g.n, self.g.bs)?;
            }
            seed = self.oheads.get(b & (self.og - 1)).copied().unwrap_or(0);
        }
        let at = At { all_fast, hb, seed };
        one_block(self.terms, b, self.g, at, &mut self.out, &mut self.sc)
    }

    /// Takes the CRC of output chunk `u` (blocks `seg_start..seg_end`, payload from
    /// `seg_pos`) and stashes it while the output fits.
    fn seal_chunk(&mut self, u: u32, seg_start: usize, seg_end: usize, seg_pos: usize) {
        let o = &mut self.out;
        if !(o.fits && o.pos <= self.stash) {
            return;
        }
        let crc = match (
            o.buf.get(o.wpos + seg_start..o.wpos + seg_end),
            o.buf.get(seg_pos..o.pos),
        ) {
            (Some(w), Some(p)) => chunk_sum(u, w, p),
            _ => 0,
        };
        let at = self.stash + 4 * u as usize;
        if let Some(d) = o.buf.get_mut(at..at + 4) {
            d.copy_from_slice(&crc.to_le_bytes());
        }
    }

    /// Moves the stashed CRCs behind the payload and writes the header; the archive's
    /// length, or the length needed.
    fn finish(self, plan: &Plan) -> Result<usize, Error> {
        let o = self.out;
        let needed = o.pos + self.slen;
        if !o.fits || o.buf.len() < needed {
            return Err(Error::OutputTooSmall { needed });
        }
        // pos <= stash: every chunk's CRC was stashed; move them behind the payload.
        o.buf.copy_within(self.stash.., o.pos);
        write_header(plan, o.buf)?;
        Ok(needed)
    }
}

impl Out<'_> {
    /// Writes the head trailer of `heads` at `pos` while the output fits; advances `pos`.
    fn put_trailer(&mut self, heads: &[i64]) {
        let len = if self.fits {
            match put_heads(heads, self.buf.get_mut(self.pos..).unwrap_or(&mut [])) {
                Ok(len) => len,
                Err(len) => {
                    self.fits = false;
                    len
                }
            }
        } else {
            trailer_len(heads_width(heads), heads.len())
        };
        self.pos += len;
    }
}
