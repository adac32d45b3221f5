//! The SZp archive layer: the one place that knows where an archive's bytes go.
//!
//! An archive (version 2) is `header | widths | payload | sums`: the 48-byte header and its
//! CRC ([`HEADER_LEN`] bytes), one width byte per block, the blocks' payloads back to back (in
//! the block-head layout each head group followed by its trailer), and one CRC-32 per checksum
//! chunk of `2^chunk_shift` blocks ([`blocks::chunk_sum`]). The header is written last: it
//! holds the value count, and (NOA) the value range, which a writer knows only at the end.
//!
//! * [`ArchiveWriter`] (no allocation): `begin(plan)` (or [`ArchiveWriter::open`] for a count
//!   not known up front), then [`ArchiveWriter::batch`] for runs of whole checksum chunks, then
//!   [`ArchiveWriter::finish`]. A batch's width bytes go to the caller's buffer with their
//!   archive offset ([`Batch::widths_at`]), its payload is appended to the payload written so
//!   far ([`Batch::payload_pos`]), and its chunk CRCs are sealed from cache as each chunk is
//!   encoded; `finish` gives the header bytes and the final offsets ([`Frame`]).
//!   [`ArchiveWriter::batch_payload_len`] sizes a batch's payload buffer for the writer's
//!   kernel. [`ArchiveWriter::write_all`] writes a whole archive into one buffer (the one-shot
//!   compressors: block ranges split in parallel in place, the CRCs parked at the end of the
//!   buffer and moved behind the payload), and the streaming encoder
//!   ([`super::StreamEncoder`]) pushes one block at a time into one buffer.
//! * [`ArchiveReader`] over a parsed archive ([`blocks::parse_frame`]): batches of whole
//!   checksum chunks decoded into caller slices; under [`Verify::Checksums`] each chunk's CRC
//!   is checked once, right after the chunk is decoded, while its bytes are in cache (never as
//!   a separate pass over the archive), and the walk of the chunk lengths must end exactly at
//!   the end of the payload; [`Verify::Skip`] checks no CRC but every structural rule (the
//!   whole structure is checked when the reader is made).
//!
//! The bytes do not depend on the batch sizes, the kernel or the [`Join`]: every block is
//! encoded by the same kernel rule, and chunk CRCs are over the chunk's index, widths and
//! payload.

use super::blocks::{self, ArchiveView, Grid, Header, MISSING_VALUES, Plan, chunk_sum};
use super::blocks::{put_le32, write_header};
use super::missing::{self, Patch, StreamRuns};
use super::ranges::{self, Join, Sums, on_path};
use super::{Config, Error, FORMAT_VERSION_V1, HEADER_LEN, Kernel, Mode, SzpFloat, Verify};
use crate::arch::generic::Reference;
use crate::arch::generic::szp::{encode_f32_onepass, encode_filled, encode_two_pass};
use crate::arch::szp::{BlockError, Quant, Run, SzpKernel, seed_of};
use crate::bits::{self, HEAD_GROUP_MAX};

/// Where one batch's bytes go ([`ArchiveWriter::batch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    /// The batch's first block.
    pub first_block: usize,
    /// Blocks in the batch (width bytes written to the caller's `widths`).
    pub blocks: usize,
    /// Archive offset of the batch's width bytes (`HEADER_LEN + first_block`).
    pub widths_at: usize,
    /// Payload bytes written to the start of the caller's `payload`.
    pub payload_len: usize,
    /// Offset of the batch's payload from the start of the archive's payload (the batches'
    /// payloads follow each other in order; the payload starts at [`Frame::payload_at`], or
    /// [`ArchiveWriter::payload_at`] when the count is known up front).
    pub payload_pos: usize,
    /// Chunk CRC bytes written to the start of the caller's `sums` (4 per chunk).
    pub sums_len: usize,
    /// Offset of those CRCs from the start of the archive's CRC table ([`Frame::sums_at`]).
    pub sums_pos: usize,
}

/// An archive's frame, known once every batch is written ([`ArchiveWriter::finish`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The header bytes (archive offset 0).
    pub header: [u8; HEADER_LEN],
    /// Archive offset of the payload (after the header and the width bytes).
    pub payload_at: usize,
    /// Archive offset of the chunk CRCs (after the payload).
    pub sums_at: usize,
    /// The archive length.
    pub len: usize,
}

/// The SZp archive writer: layout, chunk sealing and the header, for every encoder (one-shot,
/// batched, streaming). No allocation; the caller owns every buffer.
#[derive(Clone, Copy, Debug)]
pub struct ArchiveWriter {
    kernel: Kernel,
    plan: Plan,
    /// The quantizer parameters of `plan` and the bound on `|x|` (`quant.max_abs`), and the
    /// streamed values' limit (`|x| <= max_abs`): taken once (soft-float arithmetic on
    /// f32-only FPUs), not per block.
    quant: Quant,
    limit: bits::AbsLimit,
    /// A writer whose count is not known up front ([`ArchiveWriter::open`]): each batch is
    /// validated by the plan's config.
    open: bool,
    /// Blocks, values and payload bytes written so far.
    block: usize,
    values: usize,
    payload: usize,
    /// A batch that was not a whole number of chunks ended an open archive.
    ended: bool,
    /// One-buffer streaming: the payload offset of the current chunk.
    chunk_pos: usize,
    /// `plan.chunk_shift()`, once (the streaming encoder needs it for every block).
    shift: u8,
}

/// The run shape of `plan`.
pub(crate) fn run_of(plan: &Plan) -> Run {
    Run {
        bs: plan.block_size.max(1) as usize,
        group: plan.head_group(),
        finite: plan.strict,
        missing: plan.missing,
    }
}

/// The largest width any block of a plan can have: levels satisfy `|q| <= L` with
/// `L = trunc(max_abs/(2·eb)) + 2`, deltas `|d| <= 2L`, zigzag `<= 4L`.
fn worst_width(plan: &Plan, max_abs: f64) -> u8 {
    let l = bits::half_quotient(max_abs, plan.quant_eb); // max_abs / (2·eb)
    if !(0.0..1.0e17).contains(&l) {
        return 64;
    }
    let lq = (l * (1.0 + 1.0e-15)) as u64 + 2; // >= ceil(l) + 1 (no libm in the core)
    bits::width(lq.saturating_mul(4)).min(64)
}

/// Worst-case body bytes of one full unit of `plan`'s layout (`|x| <= max_abs`): a block
/// (stage layout), or a head group's blocks and trailer (block-head layout; heads are levels,
/// so their deltas obey the same bound as the blocks' deltas).
pub(crate) fn worst_unit(plan: &Plan, max_abs: f64) -> usize {
    let w = worst_width(plan, max_abs);
    let block = bits::payload_len(w, plan.block_size as usize);
    match plan.head_group() {
        0 => block,
        g => block
            .saturating_mul(g)
            .saturating_add(bits::trailer_len(w, g)),
    }
}

/// The largest archive `plan` can produce for inputs with `|x| <= max_abs`: every block at the
/// worst width (the last one at its own length) and, in the block-head layout, every group's
/// trailer at that width (the last group with its own block count), so a short archive is not
/// charged for a whole head group.
pub(crate) fn worst_len(plan: &Plan, max_abs: f64) -> usize {
    let w = worst_width(plan, max_abs);
    let nb = plan.blocks();
    let full = bits::payload_len(w, plan.block_size as usize);
    let last = nb
        .checked_sub(1)
        .map_or(0, |b| bits::payload_len(w, plan.block_len(b)));
    let mut body = nb
        .saturating_sub(1)
        .saturating_mul(full)
        .saturating_add(last);
    let g = plan.head_group();
    if g > 0 {
        let rest = nb % g;
        body = body
            .saturating_add((nb / g).saturating_mul(bits::trailer_len(w, g)))
            .saturating_add(if rest > 0 {
                bits::trailer_len(w, rest)
            } else {
                0
            });
    }
    plan.payload_offset()
        .saturating_add(body)
        .saturating_add(plan.sums_len())
        .saturating_add(worst_extension(plan))
}

/// The largest extension (version 3) of `plan`'s archives: its footer and shape and, when
/// some value is missing, a run record per value at most (two varints and a pattern; the
/// exact length for an input is [`missing::extension_len`], which the one-shot writers use).
fn worst_extension(plan: &Plan) -> usize {
    if plan.ext_flags() == 0 {
        return 0;
    }
    let shape = if plan.shape.is_none() {
        0
    } else {
        1 + 8 * plan.shape.rank()
    };
    let runs = if plan.missing {
        plan.n.saturating_mul(20 + plan.dtype.size())
    } else {
        0
    };
    (missing::FOOTER_LEN + shape).saturating_add(runs)
}

/// The largest archive of `input` under `plan` (`|x| <= max_abs`): [`worst_len`] with the
/// extension's exact length (a scan of `input` when some value is missing).
pub(crate) fn worst_len_for<T: SzpFloat>(
    plan: &Plan,
    max_abs: f64,
    input: &[T],
) -> Result<usize, Error> {
    let x = missing::extension_len(plan.ext_flags(), &plan.shape, input)?;
    Ok(worst_len(plan, max_abs)
        .saturating_sub(worst_extension(plan))
        .saturating_add(x))
}

/// Blocks per checksum chunk, `2^shift` (at least 1).
fn chunk_blocks(shift: u8) -> usize {
    (1usize << shift.min(31)).max(1)
}

/// Blocks per batch of about `bytes` raw bytes (`bs` values of `vb` bytes per block): a whole
/// number of checksum chunks of `2^shift` blocks, at least one.
fn batch_blocks_for(bytes: usize, bs: usize, vb: usize, shift: u8) -> usize {
    let c = chunk_blocks(shift);
    let want = (bytes / bs.max(1).saturating_mul(vb).max(1)).max(1);
    want.div_ceil(c).saturating_mul(c)
}

/// Notes the missing values of a streamed `block` (its first value has index `first`) in
/// `runs`, whose records grow downward from `top` in `out`, not below `floor`. Out of line:
/// a stream without missing values (firmware) does not carry its frame.
#[inline(never)]
#[cold]
fn note_missing<T: SzpFloat>(
    block: &[T],
    first: usize,
    runs: &mut StreamRuns,
    out: &mut [u8],
    top: usize,
    floor: usize,
) -> Result<(), Error> {
    let size = T::DTYPE.size();
    for (i, x) in block.iter().enumerate().filter(|(_, x)| x.is_missing()) {
        runs.note((first + i) as u64, x.bits(), size, out, top, floor)
            .map_err(|needed| Error::OutputTooSmall { needed })?;
    }
    Ok(())
}

/// A streamed block's validation: every value finite, or (feature `missing-and-shape`) the
/// block's missing values noted (`Ok(true)`), and `|x| <= max_abs`; the error names the first
/// offending value (`first` is the block's first index in the stream).
fn validate<T: SzpFloat>(block: &[T], first: usize, limit: &bits::AbsLimit) -> Result<bool, Error> {
    let mut missing = false;
    for (i, x) in block.iter().enumerate() {
        if x.is_missing() {
            if !MISSING_VALUES {
                return Err(Error::NonFinite { index: first + i });
            }
            missing = true;
        } else if limit.exceeds(*x) {
            return Err(Error::ValueOutOfRange { index: first + i });
        }
    }
    Ok(missing)
}

/// `e` with a needed length moved on by `by`.
fn shifted_len(e: Error, by: usize) -> Error {
    match e {
        Error::OutputTooSmall { needed } => Error::OutputTooSmall {
            needed: needed.saturating_add(by),
        },
        other => other,
    }
}

/// `e` with its element index moved on by `by` (the errors of a batch, named globally).
fn shifted(e: Error, by: usize) -> Error {
    match e {
        Error::NonFinite { index } => Error::NonFinite { index: index + by },
        Error::ValueOutOfRange { index } => Error::ValueOutOfRange { index: index + by },
        Error::LevelOverflow { index } => Error::LevelOverflow { index: index + by },
        Error::BoundViolated { index } => Error::BoundViolated { index: index + by },
        other => other,
    }
}

impl ArchiveWriter {
    /// A writer of the archive `plan` describes (`|x| <= max_abs`: from
    /// [`super::engine::plan_on`]), encoding on `kernel`.
    pub fn begin(kernel: Kernel, plan: &Plan, max_abs: f64) -> ArchiveWriter {
        ArchiveWriter::with_quant_on(kernel, plan, ranges::quant(plan, max_abs))
    }

    /// [`ArchiveWriter::begin`] with the quantizer `q` (that of `plan` and `q.max_abs`).
    #[inline(always)]
    fn with_quant_on(kernel: Kernel, plan: &Plan, q: Quant) -> ArchiveWriter {
        ArchiveWriter {
            kernel,
            plan: *plan,
            quant: q,
            limit: bits::AbsLimit::new(q.max_abs),
            open: false,
            block: 0,
            values: 0,
            payload: 0,
            ended: false,
            chunk_pos: 0,
            shift: plan.chunk_shift(),
        }
    }

    /// `plan.sums_len()` from the kept chunk shift.
    fn sums_len(&self) -> usize {
        blocks::sums_len(self.plan.blocks(), self.shift)
    }

    /// [`ArchiveWriter::begin`] for the crate's generic paths, which pass their kernel token
    /// to the `_on` methods (the writer's own kernel is then unused).
    pub(crate) fn for_token(plan: &Plan, max_abs: f64) -> ArchiveWriter {
        ArchiveWriter::begin(Kernel::Scalar, plan, max_abs)
    }

    /// [`ArchiveWriter::for_token`] with the quantizer `q` (that of `plan` and `q.max_abs`, and
    /// perhaps an unvalidated input's block check: `szp::ranges::plan_declaring`).
    pub(crate) fn with_quant(plan: &Plan, q: Quant) -> ArchiveWriter {
        ArchiveWriter::with_quant_on(Kernel::Scalar, plan, q)
    }

    /// A writer of an archive whose value count is not known up front (read from a pipe):
    /// an ABS bound with a declared `max_abs` only, where the quantizer is fixed before the
    /// first value ([`Error::StreamingNeedsAbsAndMaxAbs`] otherwise; NOA needs the value
    /// range, and without `max_abs` the strict bound depends on the data's magnitude). Every
    /// batch is validated as it arrives (finite, `|x| <= max_abs`).
    pub fn open<T: SzpFloat>(kernel: Kernel, cfg: &Config) -> Result<ArchiveWriter, Error> {
        let (plan, max_abs) = fixed_plan::<T>(0, cfg)?;
        let mut w = ArchiveWriter::begin(kernel, &plan, max_abs);
        w.open = true;
        Ok(w)
    }

    /// The plan (for an open writer, its count is that of the values written so far).
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Blocks per batch of about `bytes` raw bytes of values: a whole number of checksum
    /// chunks (so of head groups), at least one chunk.
    pub fn batch_blocks(&self, bytes: usize) -> usize {
        let bs = self.plan.block_size.max(1) as usize;
        batch_blocks_for(bytes, bs, self.plan.dtype.size(), self.shift)
    }

    /// Bytes of a payload buffer that holds any batch of `blocks` blocks on this writer's
    /// kernel: the worst case of the plan's units, or — on the reference kernel, which uses
    /// the space after a block as scratch for its levels (8 bytes a value) — 8 bytes a value
    /// plus a block's share of its head trailer (at most 9 bytes).
    pub fn batch_payload_len(&self, blocks: usize) -> usize {
        let bs = self.plan.block_size.max(1) as usize;
        let heads = if self.plan.head_group() > 0 { 9 } else { 0 };
        let raw = blocks.saturating_mul(bs.saturating_mul(8).saturating_add(heads));
        if self.kernel == Kernel::Scalar {
            return raw;
        }
        let units = blocks.div_ceil(run_of(&self.plan).unit());
        units
            .saturating_mul(worst_unit(&self.plan, self.quant.max_abs))
            .min(raw)
    }

    /// Bytes of the chunk CRCs of a batch of `blocks` blocks (4 per chunk).
    pub fn batch_sums_len(&self, blocks: usize) -> usize {
        blocks::sums_len(blocks, self.shift)
    }

    /// Archive offset of the payload (known up front unless the writer is open).
    pub fn payload_at(&self) -> usize {
        self.plan.payload_offset()
    }

    /// Values written so far.
    pub fn values(&self) -> usize {
        self.values
    }

    /// Encodes the next batch: `values` are whole checksum chunks (`2^chunk_shift` blocks of
    /// `block_size` values each) except for the archive's last batch. Writes the width bytes
    /// to `widths`, the payload to the start of `payload` (sized by
    /// [`ArchiveWriter::batch_payload_len`]) and the chunk CRCs to `sums`, each chunk's CRC
    /// computed right after it is encoded, from cache. `join` splits the batch on chunk
    /// boundaries. Errors name global element indices; after an error the writer must not be
    /// used further.
    pub fn batch<T: SzpFloat, J: Join>(
        &mut self,
        join: &J,
        values: &[T],
        widths: &mut [u8],
        payload: &mut [u8],
        sums: &mut [u8],
    ) -> Result<Batch, Error> {
        on_path!(self.kernel, k => self.batch_on(k, join, values, widths, payload, sums))
    }

    fn batch_on<K: SzpKernel, T: SzpFloat, J: Join>(
        &mut self,
        k: K,
        join: &J,
        values: &[T],
        widths: &mut [u8],
        payload: &mut [u8],
        sums: &mut [u8],
    ) -> Result<Batch, Error> {
        if T::DTYPE != self.plan.dtype {
            return Err(Error::DTypeMismatch);
        }
        let run = run_of(&self.plan);
        let shift = self.shift;
        let per = chunk_blocks(shift).saturating_mul(run.bs);
        let whole = values.len().is_multiple_of(per.max(1));
        let last = if self.open {
            !whole
        } else {
            self.values.saturating_add(values.len()) == self.plan.n
        };
        if self.ended || (!self.open && self.values.saturating_add(values.len()) > self.plan.n) {
            return Err(Error::StreamState);
        }
        if !whole && !last {
            return Err(Error::BlockLength { expected: per });
        }
        if self.open {
            // Validates the batch (finite, |x| <= max_abs, levels in range); its plan encodes
            // exactly as the whole archive's (the grid depends on the bound and max_abs only).
            let plan = &self.plan;
            let cfg = Config {
                strict: plan.strict,
                // Rounding to 24 significant bits is idempotent: on for a bound that already
                // has them gives the same bound whether the archive's config asked for it.
                f32_step: bits::f32_step_below(plan.quant_eb).to_bits() == plan.quant_eb.to_bits(),
                ..Config::abs(plan.requested)
                    .with_block_size(plan.block_size)
                    .with_layout(plan.layout)
                    .with_max_abs(self.quant.max_abs)
            };
            let p = ranges::plan(k, join, values, &cfg).map_err(|e| {
                // A missing value is an error here (an open-ended archive has nowhere to put
                // it: its extension would follow chunk CRCs the caller has written), named
                // if it comes first.
                let m = values.iter().position(|x| x.is_missing());
                match (m, shifted(e, 0)) {
                    (
                        Some(i),
                        Error::ValueOutOfRange { index } | Error::LevelOverflow { index },
                    ) if i < index => Error::NonFinite { index: i },
                    (_, e) => e,
                }
            });
            let (p, _) = p.map_err(|e| shifted(e, self.values))?;
            if p.missing {
                let i = values.iter().position(|x| x.is_missing()).unwrap_or(0);
                return Err(Error::NonFinite {
                    index: self.values + i,
                });
            }
            if p.quant_eb.to_bits() != self.plan.quant_eb.to_bits() {
                return Err(Error::Corrupt("a batch planned another quantizer bound"));
            }
        }
        let nb = values.len().div_ceil(run.bs);
        let slen = blocks::sums_len(nb, shift);
        let widths = widths
            .get_mut(..nb)
            .ok_or(Error::OutputTooSmall { needed: nb })?;
        let sums = sums
            .get_mut(..slen)
            .ok_or(Error::OutputTooSmall { needed: slen })?;
        let e = k.encoder(self.quant);
        let ucost = worst_unit(&self.plan, self.quant.max_abs);
        let s = Sums {
            shift,
            u0: (self.block >> shift.min(31)) as u32,
            out: sums,
        };
        let len = ranges::encode_range(
            k,
            join,
            &e,
            run,
            ucost,
            values,
            self.values,
            0,
            widths,
            payload,
            Some(s),
        )?;
        let b = Batch {
            first_block: self.block,
            blocks: nb,
            widths_at: HEADER_LEN + self.block,
            payload_len: len,
            payload_pos: self.payload,
            sums_len: slen,
            sums_pos: blocks::sums_len(self.block, shift),
        };
        self.block += nb;
        self.values += values.len();
        self.payload += len;
        self.ended = self.open && !whole;
        if self.open {
            self.plan.n = self.values;
        }
        Ok(b)
    }

    /// Ends the archive: every value written (a writer from [`ArchiveWriter::begin`]; an open
    /// writer's count is what it was given). Returns the header and the final offsets.
    pub fn finish(self) -> Result<Frame, Error> {
        let (payload_at, sums_at, len) = self.offsets()?;
        let mut header = [0u8; HEADER_LEN];
        write_header(&self.plan, &mut header)?;
        Ok(Frame {
            header,
            payload_at,
            sums_at,
            len,
        })
    }

    /// The payload's and the CRCs' archive offsets and the archive length, once every value
    /// is written.
    fn offsets(&self) -> Result<(usize, usize, usize), Error> {
        if self.values != self.plan.n {
            return Err(Error::StreamState);
        }
        let payload_at = self.plan.payload_offset();
        let sums_at = payload_at.saturating_add(self.payload);
        Ok((payload_at, sums_at, sums_at.saturating_add(self.sums_len())))
    }

    /// Writes the whole archive of `input` into `out` (a fresh writer; `input` is the plan's
    /// values) and returns its length. When `out` may be too small (below the plan's worst
    /// case and [`super::max_compressed_len`]) a sizing pass runs first, so that nothing is
    /// written on failure. Block ranges are split by `join` in place (see [`super::engine`]).
    pub fn write_all<T: SzpFloat, J: Join>(
        self,
        join: &J,
        input: &[T],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        on_path!(self.kernel, k => self.write_all_on(k, join, input, out))
    }

    pub(crate) fn write_all_on<K: SzpKernel, T: SzpFloat, J: Join>(
        mut self,
        k: K,
        j: &J,
        input: &[T],
        whole: &mut [u8],
    ) -> Result<usize, Error> {
        let plan = &self.plan;
        if self.block != 0 || plan.n != input.len() || plan.dtype != T::DTYPE {
            return Err(Error::Corrupt("plan is for another input"));
        }
        let e = k.encoder(self.quant);
        let run = run_of(plan);
        let start = plan.payload_offset();
        // The extension (version 3: shape, missing values) follows the chunk CRCs; the blocks
        // are written into the rest of `out`.
        let flags = plan.ext_flags();
        let xlen = missing::extension_len(flags, &plan.shape, input)?;
        let cap = whole.len().saturating_sub(xlen);
        let fits = cap >= worst_len(plan, self.quant.max_abs).saturating_sub(worst_extension(plan))
            || (flags == 0
                && super::max_compressed_len(input.len(), plan.block_size, T::DTYPE)
                    .is_some_and(|m| whole.len() >= m));
        let slen = plan.sums_len();
        if !fits {
            let total = start + ranges::payload_size(k, j, &e, run, input) + slen + xlen;
            if whole.len() < total {
                return Err(Error::OutputTooSmall { needed: total });
            }
        }
        let out = whole.get_mut(..cap).unwrap_or_default();
        let Some((head, body)) = out.split_at_mut_checked(start) else {
            return Err(Error::OutputTooSmall { needed: start });
        };
        let Some((_, widths)) = head.split_at_mut_checked(HEADER_LEN) else {
            return Err(Error::OutputTooSmall { needed: start });
        };
        // The chunk CRCs are written as their chunks are encoded, into the last `slen` bytes
        // of `out`, which the payload cannot reach (`fits`, or the sizing pass above), then
        // moved behind the payload.
        let Some(at) = body.len().checked_sub(slen) else {
            return Err(Error::OutputTooSmall {
                needed: start + slen,
            });
        };
        let (pay, tail) = body.split_at_mut(at);
        let sums = Sums {
            shift: plan.chunk_shift(),
            u0: 0,
            out: tail,
        };
        let ucost = worst_unit(plan, self.quant.max_abs);
        let len = ranges::encode_range(
            k,
            j,
            &e,
            run,
            ucost,
            input,
            0,
            start,
            widths,
            pay,
            Some(sums),
        )?;
        self.block = plan.blocks();
        self.values = input.len();
        self.payload = len;
        let len = self.close_in(out)?;
        // The extension right after the CRCs, in the room kept for it.
        let dst = whole.get_mut(len..).unwrap_or_default();
        let x = missing::write_extension(flags, &self.plan.shape, input, dst)
            .map_err(|e| shifted_len(e, len))?;
        Ok(len + x)
    }

    /// The body of FZGPUModules' SZp stage (`.fzm`): the width bytes, then the payload — the
    /// archive's middle, without header or chunk CRCs — of `input` (the plan's values), on
    /// the calling thread, into `body` (sized by [`ArchiveWriter::stage_body_len_on`]);
    /// returns the body length. `base` is `body`'s archive offset, for error reports.
    pub(crate) fn stage_body_on<K: SzpKernel, T: SzpFloat>(
        self,
        k: K,
        input: &[T],
        base: usize,
        body: &mut [u8],
    ) -> Result<usize, Error> {
        let plan = &self.plan;
        let e = k.encoder(self.quant);
        let run = Run {
            group: 0,
            ..run_of(plan)
        };
        let nb = plan.blocks();
        let (widths, payload) = body
            .split_at_mut_checked(nb)
            .ok_or(Error::OutputTooSmall { needed: base + nb })?;
        let pos = ranges::encode_range(
            k,
            &ranges::Serial,
            &e,
            run,
            0,
            input,
            0,
            base + nb,
            widths,
            payload,
            None,
        )?;
        Ok(nb + pos)
    }

    /// The body length [`ArchiveWriter::stage_body_on`] writes (the sizing pass alone).
    pub(crate) fn stage_body_len_on<K: SzpKernel, T: SzpFloat>(self, k: K, input: &[T]) -> usize {
        let plan = &self.plan;
        let e = k.encoder(self.quant);
        let run = Run {
            group: 0,
            ..run_of(plan)
        };
        plan.blocks()
            .saturating_add(ranges::payload_size(k, &ranges::Serial, &e, run, input))
    }

    /// One-buffer streaming: encodes the next block (its values validated: finite and
    /// `|x| <= max_abs`) on the reference kernel into its place in `out` (width byte, payload,
    /// and — after a head group's last block — the group's trailer); after a checksum
    /// chunk's last block, the chunk's CRC is computed from `out` while its bytes are fresh
    /// and parked at the end of `out` ([`ArchiveWriter::close_in`] moves the CRCs behind the
    /// payload). `block` must have [`Plan::block_len`] values of the next block; `heads`
    /// holds the heads of the current head group so far (the caller keeps it between calls).
    pub(crate) fn push_block<T: SzpFloat>(
        &mut self,
        block: &[T],
        heads: &mut [i64; HEAD_GROUP_MAX],
        runs: &mut StreamRuns,
        out: &mut [u8],
    ) -> Result<(), Error> {
        let expected = self.plan.block_len(self.block);
        if expected == 0 {
            return Err(Error::StreamState);
        }
        if block.len() != expected {
            return Err(Error::BlockLength { expected });
        }
        let first = self.values;
        // `|x| > max_abs` without f64 arithmetic for f32 on f32-only FPUs.
        let limit = self.limit;
        // On targets without an f64 FPU (and without missing values in a stream), the f32
        // one-pass block encoder's largest |x| stands in for the validation pass: that runs
        // only where this magnitude fails the limit or the encoder declines the block. (The
        // core's own tests take this path on every target when missing values are off.)
        const FUSED: bool = (bits::F32_ONLY_FPU || cfg!(test)) && !MISSING_VALUES;
        let missing = if FUSED {
            false
        } else {
            validate(block, first, &limit)?
        };
        let start = self.plan.payload_offset();
        let slen = self.sums_len();
        let at = start + self.payload;
        // Missing values: their run records go below the parked CRCs, growing downward.
        let top = out.len().saturating_sub(slen);
        if MISSING_VALUES && missing {
            note_missing(block, first, runs, out, top, at)?;
        }
        // The CRC slots at the end of `out` and the run records below them are out of the
        // payload's reach.
        let room = top
            .checked_sub(runs.used)
            .filter(|&r| r >= at && out.len() >= slen)
            .ok_or(Error::OutputTooSmall {
                needed: at + slen + runs.used,
            })?;
        let (head, rest) = out.split_at_mut_checked(at).ok_or(Error::StreamState)?;
        let rest = rest.get_mut(..room - at).unwrap_or_default();
        let slot = HEADER_LEN + self.block;
        let width = head.get_mut(slot..slot + 1).ok_or(Error::StreamState)?;
        let k = Reference::new();
        let e = k.encoder(self.quant);
        let group = self.plan.head_group();
        let needed = |c: usize| Error::OutputTooSmall {
            needed: at + c + slen + runs.used,
        };
        // The seed: 0, or (block-head layout) the block's head.
        let r = if MISSING_VALUES && missing {
            encode_filled(&e, block, group > 0, rest)
        } else if FUSED {
            // The one-shot's block check of an unvalidated input (a value not finite or
            // above the limit is `BlockError::Irregular`, named below). Declined: the pass
            // checks the block, and the two-pass encoder writes it, as the kernel would.
            let seed = seed_of(group > 0, block, self.plan.quant_eb);
            let e = Quant {
                unchecked: Some(limit.below_bits()),
                ..e
            };
            match encode_f32_onepass(&e, block, seed, rest) {
                Some(r) => r.map(|w| (w, seed)),
                None => {
                    validate(block, first, &limit)?;
                    encode_two_pass(&e, block, seed, rest).map(|w| (w, seed))
                }
            }
        } else {
            k.encode_block(&e, block, group > 0, rest, &mut ())
        };
        let (w, seed) = r.map_err(|err| match err {
            BlockError::Violation(i) => Error::BoundViolated { index: first + i },
            BlockError::Irregular(i) => ranges::irregular_error(block.get(i), first + i),
            BlockError::Short(c) => needed(c),
        })?;
        if let Some(s) = width.first_mut() {
            *s = w;
        }
        let mut len = bits::payload_len(w, block.len());
        let last = self.block + 1 == self.plan.blocks();
        if group > 0 {
            // Park the head; after the group's last block (or the archive's), its trailer.
            let j = self.block % group.max(1);
            if let Some(h) = heads.get_mut(j) {
                *h = seed;
            }
            if j + 1 == group || last {
                let hs = heads.get(..j + 1).unwrap_or_default();
                let dst = rest.get_mut(len..).unwrap_or_default();
                len += bits::put_heads(hs, dst).map_err(|c| needed(len + c))?;
            }
        }
        self.payload += len;
        self.values += block.len();
        self.block += 1;
        let shift = self.shift;
        let c = chunk_blocks(shift);
        if self.block.is_multiple_of(c) || last {
            // Seal the chunk that this block completes, from the bytes just written.
            let u = (self.block - 1) >> shift.min(31);
            let b0 = u << shift.min(31);
            let ws = out
                .get(HEADER_LEN + b0..HEADER_LEN + self.block)
                .unwrap_or_default();
            let p = out
                .get(start + self.chunk_pos..start + self.payload)
                .unwrap_or_default();
            let sum = chunk_sum(u as u32, ws, p);
            let tail = out.len() - slen + 4 * u; // slot u of the parked CRCs (`room` checked)
            put_le32(out.get_mut(tail..).unwrap_or_default(), sum);
            self.chunk_pos = self.payload;
        }
        Ok(())
    }

    /// The block count of the next [`ArchiveWriter::push_block`] (0 once every block is in).
    pub(crate) fn next_block_len(&self) -> usize {
        self.plan.block_len(self.block)
    }

    /// Ends a streamed archive in `out` ([`ArchiveWriter::close_in`]) and writes its extension
    /// (its shape, if the config gave one: a stream holds no missing values); returns the
    /// archive's length.
    pub(crate) fn close_stream(
        &self,
        out: &mut [u8],
        runs: &mut StreamRuns,
    ) -> Result<usize, Error> {
        let slen = self.sums_len();
        let top = out.len().saturating_sub(slen);
        let at = self.plan.payload_offset() + self.payload;
        let size = self.plan.dtype.size();
        runs.flush(size, out, top, at)
            .map_err(|needed| Error::OutputTooSmall { needed })?;
        if MISSING_VALUES && runs.any() {
            return self.close_missing(out, runs);
        }
        let len = self.close_in(out)?;
        let flags = self.plan.ext_flags();
        let dst = out.get_mut(len..).unwrap_or_default();
        let x = missing::write_extension::<f32>(flags, &self.plan.shape, &[], dst)
            .map_err(|e| shifted_len(e, len))?;
        Ok(len + x)
    }

    /// [`ArchiveWriter::close_stream`] of a stream with missing values, whose `used` bytes of
    /// run records lie backwards just below the CRCs parked at the end of `out`: turns the
    /// records and CRCs around into `CRCs | records` and moves them behind the payload, puts
    /// the shape in front of the records, the footer after them, and the header (version 3,
    /// with `FLAG_MISSING`) last. Element-wise and checked: no panic path (firmware).
    #[inline(never)]
    #[cold]
    fn close_missing(&self, out: &mut [u8], runs: &StreamRuns) -> Result<usize, Error> {
        let used = runs.used;
        let mut plan = self.plan;
        plan.missing = true;
        let (_, sums_at, len) = self.offsets()?;
        let slen = len - sums_at;
        // The shape, then the count (8 bytes), in front of the records.
        let shape = if plan.shape.is_none() {
            0
        } else {
            1 + 8 * plan.shape.rank()
        };
        let head = shape + 8;
        let total = len + head + used + missing::FOOTER_LEN;
        let lo = out
            .len()
            .checked_sub(slen + used)
            .filter(|&lo| lo >= sums_at && out.len() >= total)
            .ok_or(Error::OutputTooSmall { needed: total })?;
        // [records backwards | CRCs] -> [CRCs | records]: reverse the CRCs, then the whole.
        let top = lo + used;
        out.get_mut(top..).unwrap_or_default().reverse();
        out.get_mut(lo..).unwrap_or_default().reverse();
        // Down to `sums_at` (<= `lo`), front to back; then the records up past the shape,
        // back to front.
        for i in 0..slen + used {
            if let Some(&v) = out.get(lo + i)
                && let Some(d) = out.get_mut(sums_at + i)
            {
                *d = v;
            }
        }
        for i in (0..used).rev() {
            if let Some(&v) = out.get(len + i)
                && let Some(d) = out.get_mut(len + head + i)
            {
                *d = v;
            }
        }
        if shape > 0 {
            missing::put_shape(&plan.shape, out.get_mut(len..).unwrap_or_default())?;
        }
        let c = out.get_mut(len + shape..len + head).unwrap_or_default();
        for (d, b) in c.iter_mut().zip(runs.count.to_le_bytes()) {
            *d = b;
        }
        missing::put_footer(out, len, head + used)?;
        write_header(&plan, out)?;
        Ok(total)
    }

    /// Bytes of the extension (version 3: the shape and missing values; 0 for version 2) of
    /// `input`, the whole input of this writer's archive: what follows the chunk CRCs of a
    /// batched archive ([`ArchiveWriter::write_extension`]).
    pub fn extension_len<T: SzpFloat>(&self, input: &[T]) -> Result<usize, Error> {
        missing::extension_len(self.plan.ext_flags(), &self.plan.shape, input)
    }

    /// Writes the extension of `input` (the whole input of this writer's archive, whose
    /// missing values the batches encoded as stand-ins) at the start of `out`; returns its
    /// length. A batched writer appends it after the chunk CRCs ([`Frame::len`]).
    pub fn write_extension<T: SzpFloat>(
        &self,
        input: &[T],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        missing::write_extension(self.plan.ext_flags(), &self.plan.shape, input, out)
    }

    /// Ends an archive written into one buffer `out` ([`ArchiveWriter::write_all`],
    /// [`ArchiveWriter::push_block`]): moves the CRCs parked in the last [`Plan::sums_len`]
    /// bytes of `out` behind the payload and writes the header last; returns the length.
    pub(crate) fn close_in(&self, out: &mut [u8]) -> Result<usize, Error> {
        let (_, sums_at, len) = self.offsets()?;
        let slen = len - sums_at;
        let Some(at) = out.len().checked_sub(slen) else {
            return Err(Error::OutputTooSmall { needed: len });
        };
        if at < sums_at {
            return Err(Error::OutputTooSmall { needed: len });
        }
        // Move the CRCs down to `sums_at` (<= `at`), front to back, so the ranges may overlap;
        // element-wise and checked, so no panic path is linked (firmware).
        for i in 0..slen {
            if let Some(&v) = out.get(at + i)
                && let Some(d) = out.get_mut(sums_at + i)
            {
                *d = v;
            }
        }
        write_header(&self.plan, out)?;
        Ok(len)
    }
}

/// The plan of an archive of `n` values whose quantizer is fixed before the first value (ABS
/// and `max_abs`), and its `max_abs`: the streaming encoders' plan.
pub(crate) fn fixed_plan<T: SzpFloat>(n: usize, cfg: &Config) -> Result<(Plan, f64), Error> {
    let (Mode::Abs, Some(max_abs)) = (cfg.mode, cfg.max_abs) else {
        return Err(Error::StreamingNeedsAbsAndMaxAbs);
    };
    blocks::check_config(cfg)?;
    let plan = blocks::resolve_grid(T::DTYPE, cfg, n, 0.0, max_abs, Grid::Stated)?;
    if bits::level_vs_limit(max_abs, plan.quant_eb) == Some(true) {
        return Err(Error::LevelOverflow { index: 0 });
    }
    Ok((plan, max_abs))
}

/// The SZp archive reader: decodes a parsed archive a batch of whole checksum chunks at a
/// time into caller slices, verifying each chunk's CRC once, from cache, right after the chunk
/// is decoded.
#[derive(Clone, Copy, Debug)]
pub struct ArchiveReader<'a> {
    kernel: Kernel,
    view: ArchiveView<'a>,
    /// Whether chunk CRCs are checked (version 2 under [`Verify::Checksums`]).
    checked: bool,
    block: usize,
    /// Payload bytes decoded so far.
    off: usize,
    /// The last batch was decoded (and the payload's end checked).
    done: bool,
    /// Where the missing values (version 3) of the next batch start.
    patch: Patch,
}

impl<'a> ArchiveReader<'a> {
    /// Parses `archive` ([`blocks::parse_frame`]: the header, and its CRC unless `verify` is
    /// [`Verify::Skip`]; the count bounded by the width bytes present) for decoding on
    /// `kernel`. Under verification the body's lengths are walked chunk by chunk as the
    /// batches are decoded; with [`Verify::Skip`] the whole structure is checked here.
    // Out of line: its temporaries (header, view) are gone before the decode runs, so they
    // do not deepen the decoders' stack (firmware).
    #[inline(never)]
    pub fn new(kernel: Kernel, archive: &'a [u8], verify: Verify) -> Result<Self, Error> {
        let h = Header::read_with(archive, verify)?;
        let checked = verify == Verify::Checksums && h.version != FORMAT_VERSION_V1;
        let view = blocks::frame(h, archive, !checked)?;
        Ok(ArchiveReader {
            kernel,
            view,
            checked,
            block: 0,
            off: 0,
            done: false,
            patch: Patch::default(),
        })
    }

    /// The reader's place, without the borrow of the archive: for a caller that owns the
    /// archive next to the reader's state (an `std::io::Read` adaptor), to
    /// [`ReaderPos::attach`] again for the next batch. No parsing is repeated.
    pub fn detach(self) -> ReaderPos {
        let v = &self.view;
        ReaderPos {
            kernel: self.kernel,
            header: v.header,
            n: v.n,
            nb: v.widths.len(),
            payload: v.payload.len(),
            sums: v.sums.len(),
            checked: self.checked,
            block: self.block,
            off: self.off,
            done: self.done,
            patch: self.patch,
            runs: v.ext.runs.len(),
            ext_len: ext_len(&v.header, v.ext.runs.len()),
        }
    }

    /// [`ArchiveReader::new`] for the crate's generic paths, which pass their kernel token to
    /// the `_on` methods.
    pub(crate) fn for_token(archive: &'a [u8], verify: Verify) -> Result<Self, Error> {
        ArchiveReader::new(Kernel::Scalar, archive, verify)
    }

    /// The parsed archive (under verification, its payload's length is checked as the last
    /// batch is decoded).
    pub fn view(&self) -> &ArchiveView<'a> {
        &self.view
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.view.header
    }

    /// Blocks per batch of about `bytes` bytes of decoded values: whole checksum chunks.
    pub fn batch_blocks(&self, bytes: usize) -> usize {
        let h = &self.view.header;
        let bs = h.block_size.max(1) as usize;
        batch_blocks_for(bytes, bs, h.dtype.size(), h.chunk_shift)
    }

    /// Values of the next batch of `blocks` blocks (fewer at the archive's end; 0 when done).
    pub fn batch_len(&self, blocks: usize) -> usize {
        let bs = self.view.header.block_size.max(1) as usize;
        let b1 = self
            .block
            .saturating_add(blocks)
            .min(self.view.widths.len());
        b1.saturating_mul(bs)
            .min(self.view.n)
            .saturating_sub(self.block.saturating_mul(bs))
    }

    /// Whether the last batch has been decoded (an archive of no values takes one batch of
    /// no blocks, which checks that its payload is empty).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Decodes the next `blocks` blocks (a whole number of checksum chunks, or the rest of the
    /// archive) into `out[..batch_len(blocks)]`, ranges split by `join`; returns the values
    /// written. Under verification each chunk's CRC is checked right after it is decoded
    /// ([`Error::ChecksumMismatch`] names the chunk; `out` then holds unspecified values), and
    /// the last batch checks that the payload ends where its lengths say.
    pub fn batch<T: SzpFloat, J: Join>(
        &mut self,
        join: &J,
        blocks: usize,
        out: &mut [T],
    ) -> Result<usize, Error> {
        on_path!(self.kernel, k => self.batch_on(k, join, blocks, out))
    }

    /// The one-shot decoder: every block in one batch, into `out[..n]`; returns `n`.
    pub(crate) fn read_all_on<K: SzpKernel, T: SzpFloat, J: Join>(
        mut self,
        k: K,
        j: &J,
        out: &mut [T],
    ) -> Result<usize, Error> {
        let view = &self.view;
        if view.header.dtype != T::DTYPE {
            return Err(Error::DTypeMismatch);
        }
        let out = out
            .get_mut(..view.n)
            .ok_or(Error::OutputTooSmall { needed: view.n })?;
        let (ws, p, sums) = (view.widths, view.payload, view.sums);
        self.decode_run(k, j, ws, p, sums, 0, true, out)?;
        let n = view.n;
        if MISSING_VALUES && view.header.missing {
            let (runs, count) = (view.ext.runs, view.header.missing_count);
            self.patch.apply(runs, n as u64, 0, out)?;
            self.patch.finish(runs, count)?;
        }
        Ok(n)
    }

    /// Decodes the blocks `ws` (whole chunks from chunk `u0`, or the archive's last ones:
    /// `last`) whose body starts `rest` into `out`, each chunk's CRC (`sums`) checked right
    /// after it is decoded where the reader verifies; returns the body bytes used. A last
    /// run must end exactly at the end of the payload.
    #[allow(clippy::too_many_arguments)] // the run's place in the archive
    #[inline]
    fn decode_run<K: SzpKernel, T: SzpFloat, J: Join>(
        &self,
        k: K,
        j: &J,
        ws: &[u8],
        rest: &[u8],
        sums: &[u8],
        u0: u32,
        last: bool,
        out: &mut [T],
    ) -> Result<usize, Error> {
        let h = &self.view.header;
        let run = Run {
            bs: h.block_size.max(1) as usize,
            group: h.head_group(),
            finite: h.strict,
            missing: h.missing,
        };
        let eb = h.quant_eb;
        if self.checked {
            let walked =
                ranges::decode_chunks(k, j, eb, run, h.chunk_shift, u0, ws, rest, sums, out)
                    .and_then(|used| {
                        if last && used != rest.len() {
                            Err(Error::Corrupt("trailing bytes after the payload"))
                        } else {
                            Ok(used)
                        }
                    });
            // On failure, the structure check names what is wrong where it can (a truncated
            // archive, trailing bytes) rather than the chunk CRC that its shifted sums broke.
            walked.map_err(|e| blocks::body_error(&self.view).unwrap_or(e))
        } else {
            // The structure was checked whole when the reader was made: the archive's last
            // run is the rest of the payload.
            let len = if last {
                rest.len()
            } else {
                blocks::body_len(ws, run.bs, out.len(), run.group, rest)?
            };
            let p = rest.get(..len).ok_or(Error::Truncated)?;
            ranges::decode_range(k, j, eb, run, ws, p, out)?;
            Ok(len)
        }
    }

    pub(crate) fn batch_on<K: SzpKernel, T: SzpFloat, J: Join>(
        &mut self,
        k: K,
        j: &J,
        blocks: usize,
        out: &mut [T],
    ) -> Result<usize, Error> {
        let view = &self.view;
        let h = &view.header;
        if h.dtype != T::DTYPE {
            return Err(Error::DTypeMismatch);
        }
        let nb = view.widths.len();
        let shift = h.chunk_shift;
        let c = chunk_blocks(shift);
        if self.done {
            return Err(Error::StreamState);
        }
        let b0 = self.block;
        let b1 = b0.saturating_add(blocks).min(nb);
        if b1 < nb && !(b1 - b0).is_multiple_of(c) {
            return Err(Error::BlockLength {
                expected: c.saturating_mul(h.block_size as usize),
            });
        }
        let vals = self.batch_len(blocks);
        let out = out
            .get_mut(..vals)
            .ok_or(Error::OutputTooSmall { needed: vals })?;
        let ws = view.widths.get(b0..b1).ok_or(Error::StreamState)?;
        let rest = view.payload.get(self.off..).ok_or(Error::Truncated)?;
        let sums = if self.checked {
            let (s0, s1) = (blocks::sums_len(b0, shift), blocks::sums_len(b1, shift));
            view.sums.get(s0..s1).ok_or(Error::Truncated)?
        } else {
            &[]
        };
        let u0 = (b0 >> shift.min(31)) as u32;
        let used = self.decode_run(k, j, ws, rest, sums, u0, b1 == nb, out)?;
        if MISSING_VALUES && h.missing {
            let v0 = b0.saturating_mul(h.block_size as usize) as u64;
            self.patch.apply(view.ext.runs, view.n as u64, v0, out)?;
            if b1 == nb {
                self.patch.finish(view.ext.runs, h.missing_count)?;
            }
        }
        self.block = b1;
        self.off = self.off.saturating_add(used);
        self.done = b1 == nb;
        Ok(vals)
    }
}

/// Bytes of a version 3 archive's extension with its footer (0 before version 3): the shape's,
/// the count's and the runs' bytes.
fn ext_len(h: &Header, runs: usize) -> usize {
    if h.ext == 0 {
        return 0;
    }
    let shape = if h.ext & super::FLAG_SHAPE != 0 {
        1 + 8 * usize::from(h.rank)
    } else {
        0
    };
    let count = if h.missing { 8 } else { 0 };
    shape + count + runs + missing::FOOTER_LEN
}

/// An [`ArchiveReader`]'s place ([`ArchiveReader::detach`]).
#[derive(Clone, Copy, Debug)]
pub struct ReaderPos {
    kernel: Kernel,
    header: Header,
    n: usize,
    nb: usize,
    payload: usize,
    sums: usize,
    checked: bool,
    block: usize,
    off: usize,
    done: bool,
    patch: Patch,
    runs: usize,
    ext_len: usize,
}

impl ReaderPos {
    /// The reader again, over the archive it was made from (the same bytes: another
    /// archive of another length is [`Error::StreamState`]; other bytes of the same length
    /// are decoded with every bounds check, and their CRCs checked, but against the first
    /// archive's parsed header).
    pub fn attach(self, archive: &[u8]) -> Result<ArchiveReader<'_>, Error> {
        let hl = self.header.header_len();
        let len = hl
            .saturating_add(self.nb)
            .saturating_add(self.payload)
            .saturating_add(self.sums);
        if archive.len() != len.saturating_add(self.ext_len) {
            return Err(Error::StreamState);
        }
        let foot = archive.len().saturating_sub(missing::FOOTER_LEN);
        let runs = archive
            .get(foot.saturating_sub(self.runs)..foot)
            .filter(|_| self.ext_len > 0)
            .unwrap_or_default();
        let archive = archive.get(..len).ok_or(Error::StreamState)?;
        let rest = archive.get(hl..).ok_or(Error::StreamState)?;
        let (widths, rest) = rest.split_at_checked(self.nb).ok_or(Error::StreamState)?;
        let (payload, sums) = rest
            .split_at_checked(self.payload)
            .ok_or(Error::StreamState)?;
        Ok(ArchiveReader {
            kernel: self.kernel,
            view: ArchiveView {
                header: self.header,
                n: self.n,
                widths,
                payload,
                sums,
                ext: missing::Missing { runs },
            },
            checked: self.checked,
            block: self.block,
            off: self.off,
            done: self.done,
            patch: self.patch,
        })
    }

    /// Whether the last batch has been decoded.
    pub fn is_done(&self) -> bool {
        self.done
    }
}
