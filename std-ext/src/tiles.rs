//! The facade's driver for the interpolation layout ([`Layout::Interp`]): the core's
//! [`tiled`] codec with scratch allocated here and tiles spread over rayon.
//!
//! Encoding: each task encodes whole tiles in its own scratch into buffers of their
//! compressed length; the archive is then the header, the tile table, the tiles in order and
//! the extension, so the bytes do not depend on the thread count. Decoding: the output is cut
//! into slabs of whole tiles that cover contiguous values ([`tiled::TiledView::slabs`]), one
//! task per slab, each tile's CRC checked by the task that decodes it; the missing values are
//! written last, in one pass over their runs.

use fzpack_core::szp::tiled::{self, Scratch, TiledPlan, TiledView};
use fzpack_core::szp::{Config, Error, FORMAT_VERSION_V3, LAYOUT_INTERP, MAGIC, Verify};

use crate::element::Element;
#[cfg(feature = "rayon")]
use crate::par::Parallel;
#[cfg(feature = "rayon")]
use rayon::prelude::*;

/// The thread pool a call runs on (none in builds without the feature `rayon`).
#[cfg(feature = "rayon")]
pub(crate) type Par = Parallel;
/// The thread pool a call runs on (none in builds without the feature `rayon`).
#[cfg(not(feature = "rayon"))]
pub(crate) enum Par {}

/// Whether `archive` claims the interpolation layout (magic, version 3, layout byte 2): the
/// decoders route it here, where [`tiled::parse`] checks everything else.
pub(crate) fn is_tiled(archive: &[u8]) -> bool {
    archive.get(..4) == Some(&MAGIC[..])
        && archive.get(4) == Some(&FORMAT_VERSION_V3)
        && archive.get(6) == Some(&LAYOUT_INTERP)
}

/// Encoder scratch for tiles of up to `tile_len` values, and an output buffer for one tile.
struct EncodeBufs<T> {
    values: Vec<T>,
    decoded: Vec<T>,
    outliers: Vec<T>,
    codes: Vec<i32>,
    levels: Vec<i64>,
    coded: Vec<u8>,
    out: Vec<u8>,
}

impl<T: Element> EncodeBufs<T> {
    fn new(plan: &TiledPlan) -> EncodeBufs<T> {
        let l = tiled::scratch_lens(plan.max_tile_len());
        EncodeBufs {
            values: vec![T::ZERO; l.values],
            decoded: vec![T::ZERO; l.values],
            outliers: vec![T::ZERO; l.values],
            codes: vec![0; l.codes],
            levels: vec![0; l.levels],
            coded: vec![0; l.coded],
            out: vec![0; plan.max_tile_bytes(0)],
        }
    }

    /// Encodes tile `t` of `input`; returns its bytes and CRC.
    fn tile(&mut self, plan: &TiledPlan, input: &[T], t: usize) -> Result<(Vec<u8>, u32), Error> {
        let mut s = Scratch {
            values: &mut self.values,
            decoded: &mut self.decoded,
            outliers: &mut self.outliers,
            codes: &mut self.codes,
            levels: &mut self.levels,
            coded: &mut self.coded,
        };
        let (len, crc) = plan.encode_tile(input, t, &mut s, &mut self.out)?;
        Ok((self.out.get(..len).unwrap_or_default().to_vec(), crc))
    }
}

/// Encodes every tile of `plan`, in order: on `par` when given, else on this thread.
#[cfg_attr(not(feature = "rayon"), allow(unused_variables))]
fn encode_tiles<T: Element>(
    plan: &TiledPlan,
    input: &[T],
    par: Option<&Par>,
) -> Result<Vec<(Vec<u8>, u32)>, Error> {
    #[cfg(feature = "rayon")]
    if let Some(par) = par {
        // every result kept, so the error reported is the first in tile order
        let all: Vec<Result<(Vec<u8>, u32), Error>> = par.install(|| {
            (0..plan.tiles())
                .into_par_iter()
                .map_init(|| EncodeBufs::new(plan), |b, t| b.tile(plan, input, t))
                .collect()
        });
        return all.into_iter().collect();
    }
    let mut b = EncodeBufs::new(plan);
    (0..plan.tiles()).map(|t| b.tile(plan, input, t)).collect()
}

/// The interpolation-layout archive of `input` under `cfg` in `out` (replaced; empty on
/// error); returns its length.
pub(crate) fn compress_into<T: Element>(
    input: &[T],
    cfg: &Config,
    par: Option<&Par>,
    out: &mut Vec<u8>,
) -> Result<usize, Error> {
    out.clear();
    let plan = tiled::plan(input, cfg)?;
    let tiles = encode_tiles(&plan, input, par)?;
    let payload: usize = tiles.iter().map(|(b, _)| b.len()).sum();
    let total = plan.payload_at() + payload + plan.extension_len(input)?;
    out.resize(total, 0);
    let mut pos = plan.payload_at();
    for (t, (bytes, crc)) in tiles.iter().enumerate() {
        plan.put_entry(out, t, bytes.len(), *crc)?;
        out.get_mut(pos..pos + bytes.len())
            .ok_or(Error::OutputTooSmall { needed: total })?
            .copy_from_slice(bytes);
        pos += bytes.len();
    }
    let r = plan.finish(input, payload, out);
    if r.is_err() {
        out.clear();
    }
    r
}

/// [`compress_into`] into a slice: [`Error::OutputTooSmall`] (nothing written past `out`)
/// when the archive does not fit.
pub(crate) fn compress_slice<T: Element>(
    input: &[T],
    cfg: &Config,
    par: Option<&Par>,
    out: &mut [u8],
) -> Result<usize, Error> {
    let mut v = Vec::new();
    let len = compress_into(input, cfg, par, &mut v)?;
    out.get_mut(..len)
        .ok_or(Error::OutputTooSmall { needed: len })?
        .copy_from_slice(&v);
    Ok(len)
}

/// The number of values and the element type of an interpolation-layout archive (its whole
/// structure checked, not its tiles' CRCs).
pub(crate) fn view(archive: &[u8], verify: Verify) -> Result<TiledView<'_>, Error> {
    tiled::parse(archive, verify)
}

/// Decodes `view` (of `archive`) into `out[..n]`: slabs on `par` when given.
#[cfg_attr(not(feature = "rayon"), allow(unused_variables))]
pub(crate) fn decode<T: Element>(
    view: &TiledView<'_>,
    out: &mut [T],
    par: Option<&Par>,
    verify: Verify,
) -> Result<usize, Error> {
    let n = view.n;
    let out = out
        .get_mut(..n)
        .ok_or(Error::OutputTooSmall { needed: n })?;
    let (_, _, per) = view.slabs();
    let per = per.max(1);
    let starts: Vec<usize> = view.slab_starts().collect();
    let lens = tiled::scratch_lens(view.max_tile_len());
    let scratch = || (vec![0i32; lens.codes], vec![0i64; lens.levels]);
    #[cfg(feature = "rayon")]
    if let Some(par) = par {
        // every result kept, so the error reported is the first in slab order
        let all: Vec<Result<(), Error>> = par.install(|| {
            out.par_chunks_mut(per)
                .zip(starts.par_iter())
                .enumerate()
                .map_init(scratch, |(codes, levels), (s, (part, &at))| {
                    view.decode_slab(s, at, part, codes, levels, verify)
                })
                .collect()
        });
        all.into_iter().collect::<Result<(), Error>>()?;
        view.patch(out)?;
        return Ok(n);
    }
    let (mut codes, mut levels) = scratch();
    for (s, (part, &at)) in out.chunks_mut(per).zip(&starts).enumerate() {
        view.decode_slab(s, at, part, &mut codes, &mut levels, verify)?;
    }
    view.patch(out)?;
    Ok(n)
}
