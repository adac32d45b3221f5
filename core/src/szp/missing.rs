//! Missing values (NaN and ±inf) and the array's shape: the extension section of format
//! version 3 (`docs/szp-archive.md`).
//!
//! A version 3 archive is a version 2 archive followed by an extension section, which the
//! header's flags announce: the shape ([`super::FLAG_SHAPE`]) and the missing values
//! ([`super::FLAG_MISSING`]), then a footer (the section's length and its CRC-32). The blocks
//! hold every missing value as a stand-in (see `arch::generic::szp::filled`: the nearest
//! finite value before it in its block, else the block's first finite value, else 0), so a
//! missing value costs the blocks nothing — no jump — and every kernel, the parallel driver and
//! the checksums work on blocks as before; the decoder writes each missing value's exact bit
//! pattern back over its stand-in.
//!
//! **Runs.** The missing values are stored as their count (u64) and runs of equal bit patterns,
//! in order: each run is
//! a LEB128 varint `gap` (values between the end of the previous run — or the start of the
//! array — and this run), a varint `(len − 1) << 1 | new` and, when `new` is 1, the run's bit
//! pattern (4 bytes for f32, 8 for f64, little-endian); when `new` is 0 the run repeats the
//! previous run's pattern. A land mask over a sea-surface field is then a few bytes per
//! coastline crossing.

use super::{DType, Error, FLAG_MISSING, FLAG_SHAPE, MAX_RANK, Shape};
use crate::types::SzpFloat;

/// Bytes after the extension's content: its length and its CRC-32 (both u32 LE).
pub const FOOTER_LEN: usize = 8;

/// Bytes of a varint at most (a u64 in LEB128).
const VARINT_MAX: usize = 10;

/// The missing values of a version 3 archive (its shape is in the [`super::Header`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Missing<'a> {
    /// The run records of the missing values (empty when there are none).
    pub runs: &'a [u8],
}

/// Where bytes go: counted only, or written into a slice.
struct Sink<'a> {
    out: Option<&'a mut [u8]>,
    len: usize,
}

impl Sink<'_> {
    fn put(&mut self, b: &[u8]) -> Result<(), Error> {
        if let Some(o) = self.out.as_deref_mut() {
            let dst = o
                .get_mut(self.len..self.len.saturating_add(b.len()))
                .ok_or(Error::OutputTooSmall {
                    needed: self.len.saturating_add(b.len()),
                })?;
            // Element-wise: no length-mismatch panic path is linked (firmware).
            for (d, s) in dst.iter_mut().zip(b) {
                *d = *s;
            }
        }
        self.len = self.len.saturating_add(b.len());
        Ok(())
    }

    /// Overwrites the 8 bytes at `at` (written earlier) with `v` (LE); nothing when counting.
    fn patch_u64(&mut self, at: usize, v: u64) {
        if let Some(d) = self.out.as_deref_mut().and_then(|o| o.get_mut(at..at + 8)) {
            for (d, b) in d.iter_mut().zip(v.to_le_bytes()) {
                *d = b;
            }
        }
    }

    /// The shape field: rank, then the dimensions.
    fn shape(&mut self, shape: &Shape) -> Result<(), Error> {
        self.put(&[shape.rank() as u8])?;
        for d in shape.dims() {
            self.put(&d.to_le_bytes())?;
        }
        Ok(())
    }

    /// One run record, values `[start, start + len)` with pattern `bits` (`size` bytes),
    /// after the run ending at `at.0` whose pattern was `at.1`; `at` moves to this run.
    fn run(
        &mut self,
        at: &mut (u64, Option<u64>),
        (start, len, bits): (u64, u64, u64),
        size: usize,
    ) -> Result<(), Error> {
        self.varint(start.saturating_sub(at.0))?;
        let new = at.1 != Some(bits);
        self.varint((len.saturating_sub(1) << 1) | u64::from(new))?;
        if new {
            self.put(bits.to_le_bytes().get(..size).unwrap_or_default())?;
        }
        *at = (start.saturating_add(len), Some(bits));
        Ok(())
    }

    /// Closes an extension written from the start of the sink: its length and CRC-32 (when
    /// writing); returns the extension's whole length.
    fn footer(mut self) -> Result<usize, Error> {
        let body = self.len;
        let sum = match self.out.as_deref() {
            Some(o) => crate::crc::hash(o.get(..body).unwrap_or_default()),
            None => 0,
        };
        self.put(&(body as u32).to_le_bytes())?;
        self.put(&sum.to_le_bytes())?;
        Ok(self.len)
    }

    fn varint(&mut self, v: u64) -> Result<(), Error> {
        let mut b = [0u8; VARINT_MAX];
        // 10 bytes hold any u64
        let n = crate::bits::leb_put(&mut b, 0, v).unwrap_or(0);
        self.put(b.get(..n).unwrap_or_default())
    }
}

/// Reads a varint of `src` at `*pos` (at most 10 bytes, no overflow past 64 bits).
fn varint(src: &[u8], pos: &mut usize) -> Result<u64, Error> {
    let (v, next) = crate::bits::leb_get(src, *pos).map_err(|e| match e {
        crate::bits::Leb::Truncated => Error::Corrupt("missing-value run truncated"),
        crate::bits::Leb::Overflow => Error::Corrupt("missing-value varint overflows 64 bits"),
    })?;
    *pos = next;
    Ok(v)
}

/// Calls `f(start, len, bits)` for every maximal run of equal missing bit patterns of `input`,
/// in order: the next missing value is found 32 values at a time (a vectorized test per
/// piece), and a run is measured 32 values at a time while they are all equal.
fn for_each_run<T: SzpFloat>(
    input: &[T],
    mut f: impl FnMut(usize, usize, u64) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut i = 0usize;
    while let Some(start) = next_missing(input, i) {
        let b = input.get(start).map_or(0, |x| x.bits());
        let rest = input.get(start + 1..).unwrap_or_default();
        let whole = rest
            .chunks_exact(32)
            .take_while(|c| c.iter().fold(true, |a, v| a & (v.bits() == b)))
            .count()
            * 32;
        let tail = rest.get(whole..).unwrap_or_default();
        let len = 1 + whole + tail.iter().take_while(|v| v.bits() == b).count();
        f(start, len, b)?;
        i = start + len;
    }
    Ok(())
}

/// The index of the first missing value of `input` at or after `from`.
#[inline(always)]
fn next_missing<T: SzpFloat>(input: &[T], from: usize) -> Option<usize> {
    let mut at = from;
    for piece in input.get(from..)?.chunks(32) {
        if crate::arch::szp::has_missing(piece) {
            return piece.iter().position(|x| x.is_missing()).map(|p| at + p);
        }
        at += piece.len();
    }
    None
}

/// Writes (or, with `out` `None`, counts) the extension of `input` with `flags`.
#[inline(never)]
#[cold]
fn emit<T: SzpFloat>(
    flags: u8,
    shape: &Shape,
    input: &[T],
    out: Option<&mut [u8]>,
) -> Result<usize, Error> {
    let mut s = Sink { out, len: 0 };
    if flags & FLAG_SHAPE != 0 {
        s.shape(shape)?;
    }
    if super::blocks::MISSING_VALUES && flags & FLAG_MISSING != 0 {
        let size = T::DTYPE.size();
        let (mut at, mut count) = ((0u64, None), 0u64);
        let slot = s.len;
        s.put(&[0; 8])?; // the count, known once the runs are written
        for_each_run(input, |start, len, bits| {
            count += len as u64;
            s.run(&mut at, (start as u64, len as u64, bits), size)
        })?;
        s.patch_u64(slot, count);
    }
    s.footer()
}

/// The header flags of an archive of `input` with `shape`: [`FLAG_SHAPE`] for a shape,
/// [`FLAG_MISSING`] when some value is missing (`missing`: the plan saw one).
pub(crate) fn flags(shape: &Shape, missing: bool) -> u8 {
    (if shape.is_none() { 0 } else { FLAG_SHAPE }) | (if missing { FLAG_MISSING } else { 0 })
}

/// Bytes of the extension (with its footer) of `input` under header `flags` (0: none).
pub(crate) fn extension_len<T: SzpFloat>(
    flags: u8,
    shape: &Shape,
    input: &[T],
) -> Result<usize, Error> {
    if flags == 0 {
        return Ok(0);
    }
    emit(flags, shape, input, None)
}

/// Writes the extension (with its footer) of `input` under header `flags` (0: nothing) at the
/// start of `out`; returns its length.
pub(crate) fn write_extension<T: SzpFloat>(
    flags: u8,
    shape: &Shape,
    input: &[T],
    out: &mut [u8],
) -> Result<usize, Error> {
    if flags == 0 {
        return Ok(0);
    }
    emit(flags, shape, input, Some(out))
}

/// The extension at the end of `tail` (the archive's bytes after its chunk CRCs' start, or the
/// whole archive): splits off the section and its footer, returning the bytes before it and
/// the section. `Truncated` when the footer or the section does not fit.
#[inline(never)]
pub(crate) fn split(archive: &[u8]) -> Result<(&[u8], &[u8], u32), Error> {
    let at = archive
        .len()
        .checked_sub(FOOTER_LEN)
        .ok_or(Error::Truncated)?;
    let (rest, foot) = archive.split_at_checked(at).ok_or(Error::Truncated)?;
    let len = crate::szp::blocks::le32(foot) as usize;
    let sum = crate::szp::blocks::le32(foot.get(4..).unwrap_or_default());
    let start = rest.len().checked_sub(len).ok_or(Error::Truncated)?;
    let (before, section) = rest.split_at_checked(start).ok_or(Error::Truncated)?;
    Ok((before, section, sum))
}

impl<'a> Missing<'a> {
    /// Parses and validates an extension `section` (without its footer) under header `flags`
    /// for `n` values of `dtype`: the shape (1 to 8 dimensions whose product is `n`), and every
    /// run (a non-finite pattern, within the array, after the previous run; the first run
    /// states its pattern), which must end exactly at the section's end. Kept out of line: the
    /// decoders of version 2 archives (firmware) do not carry its frame.
    #[inline(never)]
    #[cold]
    pub fn parse(
        flags: u8,
        dtype: DType,
        n: u64,
        section: &'a [u8],
    ) -> Result<(Shape, Self, u64), Error> {
        let mut pos = 0usize;
        let mut shape = Shape::NONE;
        if flags & FLAG_SHAPE != 0 {
            let r = usize::from(*section.first().ok_or(Error::Truncated)?);
            pos = 1;
            if r == 0 || r > MAX_RANK {
                return Err(Error::Corrupt("shape rank not in 1..=8"));
            }
            let mut dims = [0u64; MAX_RANK];
            for d in dims.iter_mut().take(r) {
                let b = section
                    .get(pos..pos + 8)
                    .and_then(|b| b.first_chunk::<8>())
                    .ok_or(Error::Truncated)?;
                *d = u64::from_le_bytes(*b);
                pos += 8;
            }
            shape = Shape::new(dims.get(..r).unwrap_or_default())?;
            if shape.count() != Some(n) {
                return Err(Error::Corrupt("shape does not multiply to the value count"));
            }
        }
        let rest = section.get(pos..).unwrap_or_default();
        if flags & FLAG_MISSING == 0 || !super::blocks::MISSING_VALUES {
            if !rest.is_empty() {
                return Err(Error::Corrupt("trailing bytes in the extension"));
            }
            return Ok((shape, Missing { runs: rest }, 0));
        }
        let (count, runs) = rest.split_first_chunk::<8>().ok_or(Error::Truncated)?;
        let count = u64::from_le_bytes(*count);
        if count > n || (count > 0) == runs.is_empty() {
            return Err(Error::Corrupt("missing-value count"));
        }
        let _ = dtype; // the runs are checked where they are read (`check`, `Patch`)
        Ok((shape, Missing { runs }, count))
    }

    /// Validates every run of `runs` (a non-finite pattern, within the `n` values, after the
    /// previous run; the first run states its pattern) and that they hold `count` values: what
    /// a structural check of the whole archive runs (the decoders check the runs as they
    /// patch them).
    #[inline(never)]
    #[cold]
    pub fn check(dtype: DType, n: u64, count: u64, runs: &[u8]) -> Result<(), Error> {
        let mut cur = Cursor::default();
        let mut total = 0u64;
        while let Some(r) = cur.next_run(dtype, runs)? {
            if r.start.checked_add(r.len).is_none_or(|e| e > n) {
                return Err(Error::Corrupt("missing-value run past the last value"));
            }
            total += r.len;
        }
        if total != count {
            return Err(Error::Corrupt("missing-value count"));
        }
        Ok(())
    }
}

/// The runs (start, end) of validated run records `runs` of `dtype` ([`Missing::parse`]).
pub(crate) fn spans(dtype: DType, runs: &[u8]) -> impl Iterator<Item = (u64, u64)> + '_ {
    let mut cur = Cursor::default();
    core::iter::from_fn(move || match cur.next_run(dtype, runs) {
        Ok(Some(r)) => Some((r.start, r.start.saturating_add(r.len))),
        _ => None,
    })
}

/// The missing value that `Σ cⱼ·xⱼ` gives where the inputs' values `xⱼ` with coefficients
/// `cⱼ` include missing ones (`terms`: their bit patterns; the finite inputs do not change a
/// non-finite result): ±inf as IEEE arithmetic gives it, or NaN — the first NaN input's
/// pattern, quieted, else (`inf − inf`, `0·inf`) the canonical quiet NaN. Deterministic on
/// every machine (IEEE leaves the payload of a NaN result open).
fn combine(dtype: DType, terms: impl Iterator<Item = (u64, i64)>) -> u64 {
    let (quiet, canonical, inf) = match dtype {
        DType::F32 => (0x0040_0000u64, 0x7fc0_0000u64, 0x7f80_0000u64),
        DType::F64 => (
            0x0008_0000_0000_0000,
            0x7ff8_0000_0000_0000,
            0x7ff0_0000_0000_0000,
        ),
    };
    let sign = match dtype {
        DType::F32 => 0x8000_0000u64,
        DType::F64 => 0x8000_0000_0000_0000,
    };
    let (mut acc, mut nan) = (0f64, None);
    for (bits, c) in terms {
        let x = match dtype {
            DType::F32 => f64::from(f32::from_bits(bits as u32)),
            DType::F64 => f64::from_bits(bits),
        };
        if x.is_nan() && nan.is_none() {
            nan = Some(bits | quiet);
        }
        acc += c as f64 * x;
    }
    if acc.is_infinite() {
        inf | if acc < 0.0 { sign } else { 0 }
    } else {
        nan.unwrap_or(canonical)
    }
}

/// One input of [`write_combined`]: its run records and its coefficient.
#[derive(Clone, Copy)]
struct Input<'a> {
    runs: &'a [u8],
    c: i64,
    cur: Cursor,
    /// The current run (start, end, bits), or `None` when its runs are exhausted.
    run: Option<(u64, u64, u64)>,
}

/// Writes (or, with `out` `None`, counts) the extension of an operation's result over inputs
/// of `dtype` whose validated run records and coefficients are `inputs` (at most
/// [`super::ops::MAX_TERMS`]): the shape
/// (`FLAG_SHAPE`) and, with `FLAG_MISSING`, every value missing in some input, as
/// [`combine`] gives it.
#[inline(never)]
#[cold]
pub(crate) fn write_combined(
    flags: u8,
    shape: &Shape,
    dtype: DType,
    inputs: &[(&[u8], i64)],
    out: Option<&mut [u8]>,
) -> Result<usize, Error> {
    if flags == 0 {
        return Ok(0);
    }
    let mut s = Sink { out, len: 0 };
    if flags & FLAG_SHAPE != 0 {
        s.shape(shape)?;
    }
    if flags & FLAG_MISSING != 0 {
        let (slot, mut count) = (s.len, 0u64);
        s.put(&[0; 8])?; // the count, known once the runs are written
        let mut ins = [Input {
            runs: &[],
            c: 0,
            cur: Cursor::default(),
            run: None,
        }; super::ops::MAX_TERMS];
        let k = inputs.len().min(ins.len());
        for (i, &(runs, c)) in ins.iter_mut().zip(inputs) {
            i.runs = runs;
            i.c = c;
            i.run = i
                .cur
                .next_run(dtype, runs)
                .ok()
                .flatten()
                .map(|r| (r.start, r.start + r.len, r.bits));
        }
        let ins = ins.get_mut(..k).unwrap_or_default();
        let size = dtype.size();
        let mut at = (0u64, None::<u64>);
        let mut pending: Option<(u64, u64, u64)> = None;
        let mut pos = 0u64;
        loop {
            for i in ins.iter_mut() {
                while let Some((_, e, _)) = i.run
                    && e <= pos
                {
                    i.run = i
                        .cur
                        .next_run(dtype, i.runs)
                        .ok()
                        .flatten()
                        .map(|r| (r.start, r.start + r.len, r.bits));
                }
            }
            let covered = |i: &Input<'_>| i.run.is_some_and(|(a, _, _)| a <= pos);
            if !ins.iter().any(covered) {
                match ins.iter().filter_map(|i| i.run.map(|r| r.0)).min() {
                    Some(a) => {
                        pos = a;
                        continue;
                    }
                    None => break,
                }
            }
            let mut stop = u64::MAX;
            for i in ins.iter() {
                if let Some((a, e, _)) = i.run {
                    stop = stop.min(if a <= pos { e } else { a });
                }
            }
            let terms = ins
                .iter()
                .filter(|i| covered(i))
                .filter_map(|i| i.run.map(|r| (r.2, i.c)));
            let bits = combine(dtype, terms);
            pending = match pending {
                Some((a, b, pb)) if b == pos && pb == bits => Some((a, stop, pb)),
                Some((a, b, pb)) => {
                    s.run(&mut at, (a, b - a, pb), size)?;
                    count += b - a;
                    Some((pos, stop, bits))
                }
                None => Some((pos, stop, bits)),
            };
            pos = stop;
        }
        if let Some((a, b, pb)) = pending {
            s.run(&mut at, (a, b - a, pb), size)?;
            count += b - a;
        }
        s.patch_u64(slot, count);
    }
    s.footer()
}

/// The streaming encoder's missing values: the run being extended, and the run records
/// written so far. The records are written backwards, downward from just below the chunk
/// CRCs parked at the end of the output (the payload grows upward to meet them), and turned
/// around and moved behind the CRCs when the archive is closed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StreamRuns {
    /// The run being extended: start, length, bit pattern.
    pend: Option<(u64, u64, u64)>,
    /// End of the last written run, and its pattern.
    end: u64,
    prev: Option<u64>,
    /// Bytes of records written (below the parked CRCs).
    pub(crate) used: usize,
    /// Values of the records written.
    pub(crate) count: u64,
}

impl StreamRuns {
    /// Notes a missing value at `index` with bit pattern `bits`; a run it does not extend is
    /// written (backwards) ending at `top − used` in `out`, not below `floor`. Errors with the
    /// bytes needed.
    #[inline(never)]
    #[cold]
    pub(crate) fn note(
        &mut self,
        index: u64,
        bits: u64,
        size: usize,
        out: &mut [u8],
        top: usize,
        floor: usize,
    ) -> Result<(), usize> {
        match self.pend {
            Some((s, l, b)) if b == bits && s + l == index => {
                self.pend = Some((s, l + 1, b));
                Ok(())
            }
            _ => {
                self.flush(size, out, top, floor)?;
                self.pend = Some((index, 1, bits));
                Ok(())
            }
        }
    }

    /// Writes the pending run, if any (see [`StreamRuns::note`]).
    #[inline(never)]
    #[cold]
    pub(crate) fn flush(
        &mut self,
        size: usize,
        out: &mut [u8],
        top: usize,
        floor: usize,
    ) -> Result<(), usize> {
        let Some((start, len, bits)) = self.pend.take() else {
            return Ok(());
        };
        let mut rec = [0u8; 2 * VARINT_MAX + 8];
        let mut s = Sink {
            out: Some(&mut rec[..]),
            len: 0,
        };
        let mut at = (self.end, self.prev);
        let wrote = s.run(&mut at, (start, len, bits), size);
        let k = s.len;
        let hi = top.saturating_sub(self.used);
        if wrote.is_err() || hi < floor.saturating_add(k) {
            self.pend = Some((start, len, bits));
            return Err(floor.saturating_add(k).saturating_add(out.len() - hi));
        }
        // Backwards: the record's first byte at the highest address.
        for (i, b) in rec.iter().take(k).enumerate() {
            if let Some(d) = out.get_mut(hi - 1 - i) {
                *d = *b;
            }
        }
        self.used += k;
        self.count += len;
        (self.end, self.prev) = (start + len, Some(bits));
        Ok(())
    }

    /// Whether some value was missing.
    pub(crate) fn any(&self) -> bool {
        self.used > 0 || self.pend.is_some()
    }
}

/// Writes the shape field of an extension (`rank`, then the dimensions) at the start of `out`;
/// returns its length, or the length needed.
pub(crate) fn put_shape(shape: &Shape, out: &mut [u8]) -> Result<usize, Error> {
    let mut s = Sink {
        out: Some(out),
        len: 0,
    };
    s.shape(shape)?;
    Ok(s.len)
}

/// Writes the footer of an extension of `len` bytes that starts at `at` in `out` (its CRC
/// over those bytes); returns the bytes written (8) or the length needed.
pub(crate) fn put_footer(out: &mut [u8], at: usize, len: usize) -> Result<usize, Error> {
    let end = at.saturating_add(len);
    let sum = crate::crc::hash(
        out.get(at..end)
            .ok_or(Error::OutputTooSmall { needed: end })?,
    );
    let f = out
        .get_mut(end..end + FOOTER_LEN)
        .ok_or(Error::OutputTooSmall {
            needed: end + FOOTER_LEN,
        })?;
    let bytes = (len as u32)
        .to_le_bytes()
        .into_iter()
        .chain(sum.to_le_bytes());
    for (d, s) in f.iter_mut().zip(bytes) {
        *d = s;
    }
    Ok(FOOTER_LEN)
}

/// One run of missing values.
#[derive(Clone, Copy, Debug)]
struct RunRec {
    start: u64,
    len: u64,
    bits: u64,
}

/// A position in the run records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cursor {
    pos: usize,
    end: u64,
    bits: Option<u64>,
}

impl Cursor {
    fn next_run(&mut self, dtype: DType, runs: &[u8]) -> Result<Option<RunRec>, Error> {
        if self.pos >= runs.len() {
            return Ok(None);
        }
        let gap = varint(runs, &mut self.pos)?;
        let word = varint(runs, &mut self.pos)?;
        let len = (word >> 1) + 1;
        let bits = if word & 1 == 1 {
            let size = dtype.size();
            let b = runs
                .get(self.pos..self.pos + size)
                .ok_or(Error::Corrupt("missing-value run truncated"))?;
            self.pos += size;
            let mut w = [0u8; 8];
            for (d, s) in w.iter_mut().zip(b) {
                *d = *s;
            }
            let bits = u64::from_le_bytes(w);
            let finite = match dtype {
                DType::F32 => f32::from_bits(bits as u32).is_finite(),
                DType::F64 => f64::from_bits(bits).is_finite(),
            };
            if finite {
                return Err(Error::Corrupt("a missing-value pattern that is finite"));
            }
            bits
        } else {
            self.bits
                .ok_or(Error::Corrupt("the first missing-value run has no pattern"))?
        };
        let start = self
            .end
            .checked_add(gap)
            .ok_or(Error::Corrupt("missing-value run past the last value"))?;
        self.end = start
            .checked_add(len)
            .ok_or(Error::Corrupt("missing-value run past the last value"))?;
        self.bits = Some(bits);
        Ok(Some(RunRec { start, len, bits }))
    }
}

/// The decoder's place in the runs: writes the missing values of each decoded batch, batches
/// in order ([`Patch::apply`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Patch {
    /// At the run being written (its end and pattern).
    cur: Cursor,
    /// Values of that run not written yet (its last `left`).
    left: u64,
    /// Values of the runs read so far.
    total: u64,
}

impl Patch {
    /// Writes the missing values among values `[v0, v0 + out.len())` of an archive of `n`
    /// values over their stand-ins in `out` (batches in order), checking each run as it is
    /// read (`Corrupt` for a malformed run or one past the last value).
    #[inline(never)]
    pub fn apply<T: SzpFloat>(
        &mut self,
        runs: &[u8],
        n: u64,
        v0: u64,
        out: &mut [T],
    ) -> Result<(), Error> {
        let end = v0.saturating_add(out.len() as u64);
        loop {
            if self.left == 0 {
                let Some(r) = self.cur.next_run(T::DTYPE, runs)? else {
                    return Ok(());
                };
                if r.start.checked_add(r.len).is_none_or(|e| e > n) || r.start < v0 {
                    return Err(Error::Corrupt("missing-value run past the last value"));
                }
                self.left = r.len;
                self.total = self.total.saturating_add(r.len);
            }
            // The run's unwritten values: [at, cur.end).
            let at = self.cur.end.saturating_sub(self.left);
            if at >= end {
                return Ok(());
            }
            let stop = self.cur.end.min(end);
            let from = at.max(v0);
            let x = T::from_bits(self.cur.bits.unwrap_or(0));
            let (a, b) = ((from - v0) as usize, (stop.max(from) - v0) as usize);
            for o in out.get_mut(a..b).unwrap_or_default() {
                *o = x;
            }
            self.left -= stop - at;
            if self.left > 0 {
                return Ok(());
            }
        }
    }

    /// After the last batch: every run read (to the end of `runs`) and `count` values in all.
    pub fn finish(&self, runs: &[u8], count: u64) -> Result<(), Error> {
        if self.left != 0 || self.cur.pos != runs.len() || self.total != count {
            return Err(Error::Corrupt("missing-value count"));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used)]
mod tests {
    use super::super::blocks::MISSING_VALUES;
    use super::super::{Config, Error, FLAG_MISSING, Shape, compress, decompress};

    /// With the crate feature `missing-and-shape` a NaN is stored and comes back; without it the
    /// encoder names it, a shape is refused, and a format 3 archive is refused by name.
    #[test]
    fn missing_values_are_stored_or_refused_as_the_feature_says() {
        let mut x = [0f32; 300];
        for (i, v) in x.iter_mut().enumerate() {
            *v = i as f32 * 0.25;
        }
        x[7] = f32::NAN;
        let mut out = [0u8; 4096];
        let mut back = [0f32; 300];
        let r = compress(&x, &Config::abs(1e-2), &mut out);
        if MISSING_VALUES {
            let n = r.unwrap();
            assert_eq!(decompress(&out[..n], &mut back), Ok(300));
            assert!(back[7].is_nan() && (back[8] - x[8]).abs() <= 1e-2);
        } else {
            assert_eq!(r, Err(Error::NonFinite { index: 7 }));
        }
        // A version 2 archive turned into version 3 with FLAG_MISSING, a count of 0 and no
        // runs.
        x[7] = 1.0;
        let n = compress(&x, &Config::abs(1e-2), &mut out).unwrap();
        out[4] = 3;
        out[5] |= FLAG_MISSING;
        let sum = crate::crc::hash(&out[..48]);
        out[48..52].copy_from_slice(&sum.to_le_bytes());
        // The extension: the count (0), then its length (8) and CRC-32.
        out[n..n + 8].fill(0);
        let sum = crate::crc::hash(&[0u8; 8]);
        out[n + 8..n + 12].copy_from_slice(&8u32.to_le_bytes());
        out[n + 12..n + 16].copy_from_slice(&sum.to_le_bytes());
        let r = decompress(&out[..n + 16], &mut back);
        // Shapes: stored with the feature, refused without it.
        let s = Shape::new(&[3, 100]);
        if MISSING_VALUES {
            assert_eq!(r, Ok(300));
            assert_eq!(s.map(|s| s.dims().len()), Ok(2));
        } else {
            assert_eq!(s, Err(Error::InvalidShape));
            assert_eq!(
                r,
                Err(Error::FeatureOff {
                    feature: "missing-and-shape"
                })
            );
        }
    }
}
