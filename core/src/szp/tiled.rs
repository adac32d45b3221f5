//! The interpolation layout ([`Layout::Interp`](super::Layout::Interp), layout code 2): an
//! archive of independent [`interp`] tiles, built for ratio.
//!
//! An archive of this layout is always format version 3 with the shape stored
//! (`docs/szp-archive.md`, "Layout 2"):
//!
//! | bytes | content |
//! |---|---|
//! | 52 | the header ([`Header`]): version 3, flags strict + [`FLAG_SHAPE`] (+ [`FLAG_MISSING`]), layout 2, chunk shift 0, block size 1, `error_bound` = the step's half `eb′` |
//! | 8·T | the tile table: per tile its byte length (u32) and CRC-32 (u32) over the tile's index (u32), its length (u32) and its bytes |
//! | Σ len | the tiles back to back, each as [`interp::encode_tile`] writes it |
//! | L + 8 | the version 3 extension: the shape, the missing values' runs, its footer |
//!
//! The tiles are those of [`interp::tiles`] over the shape folded to three dimensions
//! ([`interp::fold`]); `T` follows from the shape. Each tile predicts its values from the
//! values the decoder will have, quantizes the difference with step `2·eb′`
//! (`eb′ = bound·(1 − 2⁻¹⁰)`) and stores a value exactly where the decoded value would miss
//! the bound, so every finite value meets the bound (the strict promise). A missing value
//! (NaN, ±inf) takes code 0 — its stand-in is its prediction, so it costs almost nothing —
//! and the extension's runs restore its bits after the tiles are decoded.
//!
//! The core allocates nothing: the encoder and decoder work in the caller's [`Scratch`]
//! (about 5 tile lengths of values: 5 MiB for the largest f32 tile, 64³ values; a 2-D tile of
//! 256² f32 values needs 1.3 MiB). The `fzpack` facade allocates it and runs tiles in
//! parallel; the bytes do not depend on the thread count (every tile is encoded alone).

use core::ops::Range;

use super::blocks::{Header, chunk_sum, header_bytes};
use super::interp::{self, Tile, TileScratch};
use super::missing::{self, Missing, Patch};
use super::{Config, Error, FLAG_MISSING, FLAG_SHAPE, FORMAT_VERSION_V3, HEADER_LEN};
use super::{LAYOUT_INTERP, Mode, Shape, SzpFloat, Verify, entropy};

/// Whether `archive` claims the interpolation layout: the magic, then layout byte 2 (the
/// one check every reader routes on before [`parse`] checks everything else).
pub fn claims(archive: &[u8]) -> bool {
    archive.starts_with(&super::MAGIC) && archive.get(6) == Some(&LAYOUT_INTERP)
}

/// Bytes per tile in the tile table: the tile's length and its CRC-32 (both u32 LE).
pub const ENTRY_LEN: usize = 8;

/// The quantizer's bound `eb′` against the bound: `bound·(1 − 2⁻¹⁰)`, so that a code's
/// rounding rarely lands a decoded value outside the bound (where it would be stored exactly).
const STEP_MARGIN: f64 = 1.0 - 1.0 / 1024.0;

/// The resolved parameters of an archive of this layout: the header it will have, the shape
/// and its folded dimensions, the tiles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TiledPlan {
    header: Header,
    shape: Shape,
    dims: [usize; 3],
    tiles: usize,
}

/// Lengths of the caller's [`Scratch`] slices for tiles of up to `tile_len` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScratchLens {
    /// `values`, `decoded` and `outliers` (elements).
    pub values: usize,
    /// `codes` (elements).
    pub codes: usize,
    /// `levels` (elements).
    pub levels: usize,
    /// `coded` (bytes).
    pub coded: usize,
}

/// The scratch lengths for tiles of up to `tile_len` values (the encoder needs all of them,
/// the decoder `codes` and `levels`).
pub const fn scratch_lens(tile_len: usize) -> ScratchLens {
    ScratchLens {
        values: tile_len,
        codes: tile_len,
        levels: interp::LEVELS_SCRATCH,
        coded: entropy::encode_buffer_len(interp::PIECE),
    }
}

/// The caller's scratch for encoding tiles ([`scratch_lens`] gives the lengths).
pub struct Scratch<'a, T> {
    /// A tile's values gathered.
    pub values: &'a mut [T],
    /// The decoded values.
    pub decoded: &'a mut [T],
    /// The outliers.
    pub outliers: &'a mut [T],
    /// The codes.
    pub codes: &'a mut [i32],
    /// One piece's values for the entropy coder.
    pub levels: &'a mut [i64],
    /// One piece coded.
    pub coded: &'a mut [u8],
}

/// Resolves the archive of `input` under `cfg` (one pass over the data): the bound (ABS, or
/// NOA times the range of the finite values), the shape (`cfg.shape`, else one dimension of
/// `input.len()`), `max_abs` if set. `cfg.block_size` and `cfg.strict` do not apply: the
/// layout has no blocks and always keeps the strict promise.
///
/// Errors: [`Error::InvalidErrorBound`], [`Error::ZeroRange`] (NOA, every finite value
/// equal), [`Error::ValueOutOfRange`], [`Error::InvalidShape`], [`Error::FeatureOff`] in
/// builds without `missing-and-shape` (the layout always stores the shape).
pub fn plan<T: SzpFloat>(input: &[T], cfg: &Config) -> Result<TiledPlan, Error> {
    if !(cfg.error_bound.is_finite() && cfg.error_bound > 0.0) {
        return Err(Error::InvalidErrorBound);
    }
    if let Some(m) = cfg.max_abs
        && !(m.is_finite() && m >= 0.0)
    {
        return Err(Error::InvalidErrorBound);
    }
    if !super::blocks::MISSING_VALUES {
        return Err(Error::FeatureOff {
            feature: "missing-and-shape",
        });
    }
    let n = input.len();
    let (lo, hi, mag, missing) = extremes(input);
    if let Some(m) = cfg.max_abs
        && mag > m
    {
        let index = input
            .iter()
            .position(|x| x.to_f64().abs() > m)
            .unwrap_or_default();
        return Err(Error::ValueOutOfRange { index });
    }
    let range = if lo <= hi { hi - lo } else { 0.0 };
    let (bound, value_base) = match cfg.mode {
        Mode::Abs => (cfg.error_bound, 0.0),
        Mode::Noa if n == 0 => (cfg.error_bound, 0.0),
        Mode::Noa if range == 0.0 => return Err(Error::ZeroRange),
        Mode::Noa => (cfg.error_bound * range, range),
    };
    let quant_eb = bound * STEP_MARGIN;
    if !(bound.is_finite() && quant_eb > 0.0 && (2.0 * quant_eb).is_finite()) {
        return Err(Error::InvalidErrorBound);
    }
    let shape = if cfg.shape.is_none() {
        Shape::new(&[n as u64])?
    } else {
        cfg.shape
    };
    if shape.count() != Some(n as u64) {
        return Err(Error::InvalidShape);
    }
    let dims = interp::fold(shape.dims()).ok_or(Error::InvalidShape)?;
    let tiles = interp::tile_count(dims).ok_or(Error::InvalidShape)?;
    let ext = FLAG_SHAPE | if missing { FLAG_MISSING } else { 0 };
    let header = Header {
        version: FORMAT_VERSION_V3,
        layout: LAYOUT_INTERP,
        chunk_shift: 0,
        dtype: T::DTYPE,
        mode: cfg.mode,
        block_size: 1,
        n: n as u64,
        quant_eb,
        value_base,
        requested: cfg.error_bound,
        strict: true,
        ext,
        missing,
        missing_count: 0,
        rank: shape.rank() as u8,
    };
    header.check_numbers()?;
    Ok(TiledPlan {
        header,
        shape,
        dims,
        tiles: if n == 0 { 0 } else { tiles },
    })
}

/// The smallest and largest finite values, the largest finite magnitude and whether a value
/// is missing, in one branch-free pass (eight lanes, so it vectorizes; compiled for AVX2
/// where the CPU has it: the same comparisons and selects, so the same results).
fn extremes<T: SzpFloat>(input: &[T]) -> (f64, f64, f64, bool) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = crate::arch::x86_64::Bmi2::new(crate::arch::CpuFeatures::detect()) {
        return t.compiled(
            #[inline(always)]
            || extremes_body(input),
        );
    }
    extremes_body(input)
}

/// [`extremes`], the portable body.
#[inline(always)]
fn extremes_body<T: SzpFloat>(input: &[T]) -> (f64, f64, f64, bool) {
    const L: usize = 8;
    let (mut lo, mut hi, mut mag) = ([f64::INFINITY; L], [f64::NEG_INFINITY; L], [0f64; L]);
    let mut miss = [false; L];
    let (chunks, rest) = input.as_chunks::<L>();
    // the tail padded with copies of its first value (which changes no result)
    let pad = rest.first().map(|&r0| {
        let mut p = [r0; L];
        p.iter_mut().zip(rest).for_each(|(p, &x)| *p = x);
        p
    });
    for c in chunks.iter().chain(pad.as_ref()) {
        let lanes = lo
            .iter_mut()
            .zip(hi.iter_mut())
            .zip(mag.iter_mut().zip(miss.iter_mut()));
        for (&x, ((l, h), (m, s))) in c.iter().zip(lanes) {
            // selects, not branches: a missing value leaves the lanes as they are
            // a missing value becomes NaN, which `min`/`max` skip
            let v = x.to_f64();
            let f = v.abs() < f64::INFINITY;
            let v = if f { v } else { f64::NAN };
            *l = l.min(v);
            *h = h.max(v);
            *m = m.max(v.abs());
            *s |= !f;
        }
    }
    let fold = |a: [f64; L], f: fn(f64, f64) -> f64, init: f64| a.into_iter().fold(init, f);
    (
        fold(lo, f64::min, f64::INFINITY),
        fold(hi, f64::max, f64::NEG_INFINITY),
        fold(mag, f64::max, 0.0),
        miss.contains(&true),
    )
}

impl TiledPlan {
    /// The header the archive will have (`missing_count` is not known before the extension).
    pub fn header(&self) -> &Header {
        &self.header
    }
    /// The shape the archive stores.
    pub fn shape(&self) -> Shape {
        self.shape
    }
    /// The shape folded to the three dimensions the tiles are cut from.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }
    /// The number of tiles.
    pub fn tiles(&self) -> usize {
        self.tiles
    }
    /// Tile `t` (offsets and strides in the whole array); `None` past the last.
    pub fn tile(&self, t: usize) -> Option<Tile> {
        if t >= self.tiles {
            return None;
        }
        interp::tile_at(self.dims, t)
    }
    /// The values of the largest tile (the first one): what [`scratch_lens`] needs.
    pub fn max_tile_len(&self) -> usize {
        self.tile(0).map_or(0, |t| t.len())
    }
    /// The most bytes tile `t` can take ([`interp::max_tile_bytes`]).
    pub fn max_tile_bytes(&self, t: usize) -> usize {
        self.tile(t).map_or(0, |tile| {
            interp::max_tile_bytes(tile.len(), self.header.dtype.size())
        })
    }
    /// The quantization step, `2·eb′`.
    pub fn step(&self) -> f64 {
        2.0 * self.header.quant_eb
    }
    /// The archive offset of the first tile (after the header and the tile table).
    pub fn payload_at(&self) -> usize {
        HEADER_LEN.saturating_add(self.tiles.saturating_mul(ENTRY_LEN))
    }

    /// The largest archive of `input` (the plan's input): header, table, every tile at its
    /// worst, the extension exactly.
    pub fn worst_len<T: SzpFloat>(&self, input: &[T]) -> Result<usize, Error> {
        let tiles = (0..self.tiles).fold(0usize, |a, t| a.saturating_add(self.max_tile_bytes(t)));
        Ok(self
            .payload_at()
            .saturating_add(tiles)
            .saturating_add(self.extension_len(input)?))
    }

    /// The extension's bytes for `input` (a scan for missing values when there are some).
    pub fn extension_len<T: SzpFloat>(&self, input: &[T]) -> Result<usize, Error> {
        missing::extension_len(self.header.ext, &self.shape, input)
    }

    /// Encodes tile `t` of `input` (the plan's input) into `out`: returns the tile's length
    /// and its CRC (the table entry, [`TiledPlan::put_entry`]). [`Error::OutputTooSmall`] if
    /// `out` is shorter than the tile needs ([`TiledPlan::max_tile_bytes`] always does);
    /// [`Error::InvalidShape`] if `t` is past the last tile, `input` is not the plan's length
    /// or a scratch slice is short.
    pub fn encode_tile<T: SzpFloat>(
        &self,
        input: &[T],
        t: usize,
        s: &mut Scratch<'_, T>,
        out: &mut [u8],
    ) -> Result<(usize, u32), Error> {
        if input.len() as u64 != self.header.n {
            return Err(Error::InvalidShape);
        }
        let tile = self.tile(t).ok_or(Error::InvalidShape)?;
        let len = tile.len();
        let values = s.values.get_mut(..len).ok_or(Error::InvalidShape)?;
        gather(input, &tile, values)?;
        let ts = TileScratch {
            decoded: &mut *s.decoded,
            codes: &mut *s.codes,
            outliers: &mut *s.outliers,
            levels: &mut *s.levels,
            coded: &mut *s.coded,
        };
        let bound = self.header.bound();
        let bytes = interp::encode_tile(values, tile.dims, self.step(), bound, ts, out)?;
        let body = out.get(..bytes).ok_or(Error::InvalidShape)?;
        let len32 = u32::try_from(bytes).map_err(|_| Error::InvalidShape)?;
        Ok((bytes, chunk_sum(t as u32, &len32.to_le_bytes(), body)))
    }

    /// Writes tile `t`'s table entry (its length and CRC from [`TiledPlan::encode_tile`]) into
    /// the archive `out`.
    pub fn put_entry(&self, out: &mut [u8], t: usize, len: usize, crc: u32) -> Result<(), Error> {
        let at = HEADER_LEN.saturating_add(t.saturating_mul(ENTRY_LEN));
        let needed = at.saturating_add(ENTRY_LEN);
        let dst = out
            .get_mut(at..needed)
            .ok_or(Error::OutputTooSmall { needed })?;
        let len = u32::try_from(len).map_err(|_| Error::InvalidShape)?;
        let mut e = [0u8; ENTRY_LEN];
        let (l, c) = e.split_at_mut(4);
        l.copy_from_slice(&len.to_le_bytes());
        c.copy_from_slice(&crc.to_le_bytes());
        dst.copy_from_slice(&e);
        Ok(())
    }

    /// Completes the archive in `out` once every tile and table entry is in place (the tiles
    /// take `payload_len` bytes from [`TiledPlan::payload_at`]): writes the extension after
    /// the tiles and the header; returns the archive's length.
    pub fn finish<T: SzpFloat>(
        &self,
        input: &[T],
        payload_len: usize,
        out: &mut [u8],
    ) -> Result<usize, Error> {
        let at = self.payload_at().saturating_add(payload_len);
        let x = self.extension_len(input)?;
        let end = at.saturating_add(x);
        let dst = out
            .get_mut(at..end)
            .ok_or(Error::OutputTooSmall { needed: end })?;
        missing::write_extension(self.header.ext, &self.shape, input, dst)?;
        let head = out
            .get_mut(..HEADER_LEN)
            .ok_or(Error::OutputTooSmall { needed: end })?;
        head.copy_from_slice(&header_bytes(&self.header));
        Ok(end)
    }
}

/// Copies `tile`'s values out of the C-order array `input` into `values` (C order in the tile).
fn gather<T: SzpFloat>(input: &[T], tile: &Tile, values: &mut [T]) -> Result<(), Error> {
    let [d0, d1, d2] = tile.dims;
    let [s0, s1, _] = tile.strides;
    let mut rows = values.chunks_exact_mut(d2.max(1));
    for i0 in 0..d0 {
        for i1 in 0..d1 {
            let at = tile.offset + i0 * s0 + i1 * s1;
            let src = input.get(at..at + d2).ok_or(Error::InvalidShape)?;
            rows.next().ok_or(Error::InvalidShape)?.copy_from_slice(src);
        }
    }
    Ok(())
}

/// Compresses `input` into `out` in the interpolation layout, serially, in the caller's
/// scratch (for tiles of [`TiledPlan::max_tile_len`] values); returns the archive's length.
/// [`Error::OutputTooSmall`] names [`TiledPlan::worst_len`] when `out` runs out.
pub fn compress<T: SzpFloat>(
    input: &[T],
    cfg: &Config,
    s: &mut Scratch<'_, T>,
    out: &mut [u8],
) -> Result<usize, Error> {
    let plan = plan(input, cfg)?;
    let short = |e: Error| match e {
        Error::OutputTooSmall { .. } => match plan.worst_len(input) {
            Ok(needed) => Error::OutputTooSmall { needed },
            Err(e) => e,
        },
        e => e,
    };
    let mut pos = plan.payload_at();
    for t in 0..plan.tiles() {
        let dst = out
            .get_mut(pos..)
            .ok_or(Error::OutputTooSmall { needed: pos })?;
        let (len, crc) = plan.encode_tile(input, t, s, dst).map_err(short)?;
        plan.put_entry(out, t, len, crc).map_err(short)?;
        pos += len;
    }
    plan.finish(input, pos - plan.payload_at(), out)
        .map_err(short)
}

/// A parsed archive of the interpolation layout: header, shape, tile table and tiles,
/// missing values. Made by [`parse`], which checks the whole structure.
#[derive(Clone, Copy, Debug)]
pub struct TiledView<'a> {
    /// The header.
    pub header: Header,
    /// The shape.
    pub shape: Shape,
    /// The number of values.
    pub n: usize,
    dims: [usize; 3],
    table: &'a [u8],
    payload: &'a [u8],
    runs: &'a [u8],
}

/// Parses an archive of the interpolation layout: the header (its CRC and the extension's
/// under [`Verify::Checksums`]), the layout's rules (version 3, a shape, strict, block size
/// 1, chunk shift 0, a finite step), the tile table (one entry per tile of the shape; the
/// lengths add up exactly to the bytes before the extension) and the missing-value runs. The
/// tiles' CRCs are checked as each tile is decoded. A valid archive holds at most 2¹⁸ values
/// per table entry, so at most 2¹⁵ values per archive byte.
pub fn parse(archive: &[u8], verify: Verify) -> Result<TiledView<'_>, Error> {
    let header = Header::read_with(archive, verify)?;
    if header.layout != LAYOUT_INTERP {
        return Err(Error::UnsupportedLayout {
            layout: header.layout,
        });
    }
    if !header.strict || header.block_size != 1 || header.chunk_shift != 0 {
        return Err(Error::Corrupt("interpolation layout header fields"));
    }
    if !(2.0 * header.quant_eb).is_finite() {
        return Err(Error::Corrupt("error bound"));
    }
    let (before, section, _) = missing::split(archive)?;
    let (shape, m, count) = Missing::parse(header.ext, header.dtype, header.n, section)?;
    let Missing { runs } = m;
    if header.missing {
        Missing::check(header.dtype, header.n, count, runs)?;
    }
    let n = usize::try_from(header.n).map_err(|_| Error::Truncated)?;
    let dims = interp::fold(shape.dims()).ok_or(Error::Corrupt("shape"))?;
    let tiles = if n == 0 {
        0
    } else {
        interp::tile_count(dims).ok_or(Error::Corrupt("shape"))?
    };
    let rest = before.get(HEADER_LEN..).ok_or(Error::Truncated)?;
    let table_len = tiles.checked_mul(ENTRY_LEN).ok_or(Error::Truncated)?;
    let (table, payload) = rest.split_at_checked(table_len).ok_or(Error::Truncated)?;
    let total = table
        .chunks_exact(ENTRY_LEN)
        .try_fold(0u64, |a, e| a.checked_add(u64::from(entry(e).0)))
        .ok_or(Error::Corrupt("tile lengths"))?;
    let have = payload.len() as u64;
    if total > have {
        return Err(Error::Truncated);
    }
    if total < have {
        return Err(Error::Corrupt("bytes after the last tile"));
    }
    Ok(TiledView {
        header,
        shape,
        n,
        dims,
        table,
        payload,
        runs,
    })
}

/// A table entry's length and CRC.
fn entry(e: &[u8]) -> (u32, u32) {
    let le = |o: usize| {
        let mut b = [0u8; 4];
        b.iter_mut()
            .zip(e.get(o..o + 4).unwrap_or_default())
            .for_each(|(d, s)| *d = *s);
        u32::from_le_bytes(b)
    };
    (le(0), le(4))
}

impl TiledView<'_> {
    /// The number of tiles.
    pub fn tiles(&self) -> usize {
        self.table.len() / ENTRY_LEN
    }

    /// The shape folded to three dimensions.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// The largest tile's values (the first tile's): the decoder's `codes` scratch.
    pub fn max_tile_len(&self) -> usize {
        if self.tiles() == 0 {
            return 0;
        }
        interp::tile_at(self.dims, 0).map_or(0, |t| t.len())
    }

    /// The slabs a parallel decoder hands out ([`interp::slab`]): the number of slabs, tiles
    /// per slab and values per slab (the last slab may hold fewer of both).
    pub fn slabs(&self) -> (usize, usize, usize) {
        let (tiles, values) = interp::slab(self.dims);
        (self.tiles().div_ceil(tiles.max(1)), tiles.max(1), values)
    }

    /// The byte offset (in the tiles) of each slab's first tile, in order: one pass over the
    /// table.
    pub fn slab_starts(&self) -> impl Iterator<Item = usize> + '_ {
        let (_, per, _) = self.slabs();
        let mut at = 0usize;
        self.table
            .chunks_exact(ENTRY_LEN)
            .enumerate()
            .filter_map(move |(t, e)| {
                let start = at;
                at = at.saturating_add(entry(e).0 as usize);
                (t % per == 0).then_some(start)
            })
    }

    /// The values of slab `slab`: its range in the array.
    pub fn slab_values(&self, slab: usize) -> Range<usize> {
        let (_, _, per) = self.slabs();
        let a = slab.saturating_mul(per).min(self.n);
        a..a.saturating_add(per).min(self.n)
    }

    /// Decodes slab `slab`, whose first tile starts at byte `at` of the tiles
    /// ([`TiledView::slab_starts`]), into `out` (exactly the slab's values,
    /// [`TiledView::slab_values`]); `codes` and `levels` are scratch
    /// ([`scratch_lens`] of [`TiledView::max_tile_len`]). Each tile's CRC is checked under
    /// [`Verify::Checksums`] before it is decoded. Missing values hold stand-ins until
    /// [`TiledView::patch`].
    pub fn decode_slab<T: SzpFloat>(
        &self,
        slab: usize,
        at: usize,
        out: &mut [T],
        codes: &mut [i32],
        levels: &mut [i64],
        verify: Verify,
    ) -> Result<(), Error> {
        if T::DTYPE != self.header.dtype {
            return Err(Error::DTypeMismatch);
        }
        let (_, per, _) = self.slabs();
        let base = self.slab_values(slab).start;
        let first = slab.saturating_mul(per);
        let last = first.saturating_add(per).min(self.tiles());
        let step = 2.0 * self.header.quant_eb;
        let mut pos = at;
        for t in first..last {
            let e = self
                .table
                .get(t * ENTRY_LEN..(t + 1) * ENTRY_LEN)
                .ok_or(Error::InvalidShape)?;
            let (len, crc) = entry(e);
            let end = pos.saturating_add(len as usize);
            let bytes = self.payload.get(pos..end).ok_or(Error::Truncated)?;
            if verify == Verify::Checksums && chunk_sum(t as u32, &len.to_le_bytes(), bytes) != crc
            {
                return Err(Error::ChecksumMismatch {
                    what: "tile",
                    chunk: t as u32,
                });
            }
            let tile = interp::tile_at(self.dims, t).ok_or(Error::InvalidShape)?;
            let tile = Tile {
                offset: tile.offset.checked_sub(base).ok_or(Error::InvalidShape)?,
                ..tile
            };
            interp::decode_tile(bytes, &tile, step, out, codes, levels)?;
            pos = end;
        }
        Ok(())
    }

    /// Writes the missing values over their stand-ins in `out` (all `n` values decoded),
    /// checking every run.
    pub fn patch<T: SzpFloat>(&self, out: &mut [T]) -> Result<(), Error> {
        if !self.header.missing {
            return Ok(());
        }
        let out = out
            .get_mut(..self.n)
            .ok_or(Error::OutputTooSmall { needed: self.n })?;
        let mut p = Patch::default();
        p.apply(self.runs, self.header.n, 0, out)?;
        p.finish(self.runs, self.header.missing_count)
    }
}

/// Decompresses an archive of the interpolation layout into `out` serially; `codes` and
/// `levels` are scratch ([`scratch_lens`] of [`TiledView::max_tile_len`]: at most 2¹⁸ and
/// [`interp::LEVELS_SCRATCH`]). Returns the number of values. Every inconsistency is an error,
/// never a panic; on error `out` holds unspecified values.
pub fn decompress<T: SzpFloat>(
    archive: &[u8],
    out: &mut [T],
    codes: &mut [i32],
    levels: &mut [i64],
    verify: Verify,
) -> Result<usize, Error> {
    let view = parse(archive, verify)?;
    if T::DTYPE != view.header.dtype {
        return Err(Error::DTypeMismatch);
    }
    let out = out
        .get_mut(..view.n)
        .ok_or(Error::OutputTooSmall { needed: view.n })?;
    let (_, _, per) = view.slabs();
    for (slab, (at, part)) in view
        .slab_starts()
        .zip(out.chunks_mut(per.max(1)))
        .enumerate()
    {
        view.decode_slab(slab, at, part, codes, levels, verify)?;
    }
    view.patch(out)?;
    Ok(view.n)
}

#[cfg(test)]
mod tests {
    use super::{extremes, extremes_body};

    /// The scan's results on this CPU (compiled for AVX2 where it has it) equal the portable
    /// body's, and skip missing values: the archive's value range must not depend on the CPU.
    #[test]
    fn extremes_skip_missing_values_on_every_path() {
        let mut x = [0f32; 203];
        for (i, v) in x.iter_mut().enumerate() {
            *v = (i as f32 * 0.37).sin() * 5.0 - 1.0;
        }
        x[7] = f32::NAN;
        x[100] = f32::INFINITY;
        x[202] = f32::NEG_INFINITY; // in the tail that is padded
        let (lo, hi, mag, miss) = extremes(&x);
        assert_eq!((lo, hi, mag, miss), extremes_body(&x));
        assert!(miss);
        let finite = x.iter().filter(|v| v.is_finite()).map(|&v| f64::from(v));
        let want_lo = finite.clone().fold(f64::INFINITY, f64::min);
        let want_hi = finite.clone().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!((lo, hi), (want_lo, want_hi));
        assert_eq!(mag, want_lo.abs().max(want_hi.abs()));
        let clean = [1.5f64, -2.0, 0.25];
        assert_eq!(extremes(&clean), (-2.0, 1.5, 2.0, false));
        assert_eq!(
            extremes::<f64>(&[]),
            (f64::INFINITY, f64::NEG_INFINITY, 0.0, false)
        );
    }
}
