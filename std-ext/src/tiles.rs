//! The facade's driver for the interpolation layout ([`Layout::Interp`]): the core's
//! [`tiled`] codec with scratch allocated here and tiles spread over rayon.
//!
//! Encoding: each task encodes whole tiles in its own scratch into buffers of their
//! compressed length; the archive is then the header, the tile table, the tiles in order and
//! the extension, so the bytes do not depend on the thread count. Decoding: the output is cut
//! into slabs of whole tiles that cover contiguous values ([`tiled::TiledView::slabs`]), one
//! task per slab, each tile's CRC checked by the task that decodes it; the missing values are
//! written last, in one pass over their runs.

use std::any::Any;
use std::cell::RefCell;

use fzpack_core::szp::tiled::{self, Scratch, TiledPlan, TiledView};
use fzpack_core::szp::{Config, Error, Verify};

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

/// Whether `archive` claims the interpolation layout: the decoders route it here, where
/// [`tiled::parse`] checks everything else.
pub(crate) fn is_tiled(archive: &[u8]) -> bool {
    tiled::claims(archive)
}

/// Encoder scratch for tiles of up to a plan's tile length, and an output buffer for one tile.
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
    fn new() -> EncodeBufs<T> {
        EncodeBufs {
            values: Vec::new(),
            decoded: Vec::new(),
            outliers: Vec::new(),
            codes: Vec::new(),
            levels: Vec::new(),
            coded: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Grows every buffer to what `plan`'s tiles need (never shrinks: reused across calls).
    fn fit(&mut self, plan: &TiledPlan) {
        let l = tiled::scratch_lens(plan.max_tile_len());
        let grow = |v: &mut Vec<T>, n: usize| {
            if v.len() < n {
                v.resize(n, T::ZERO);
            }
        };
        grow(&mut self.values, l.values);
        grow(&mut self.decoded, l.values);
        grow(&mut self.outliers, l.values);
        if self.codes.len() < l.codes {
            self.codes.resize(l.codes, 0);
        }
        if self.levels.len() < l.levels {
            self.levels.resize(l.levels, 0);
        }
        if self.coded.len() < l.coded {
            self.coded.resize(l.coded, 0);
        }
        let out = plan.max_tile_bytes(0);
        if self.out.len() < out {
            self.out.resize(out, 0);
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

thread_local! {
    /// This thread's encoder scratch per element type (`EncodeBufs<f32>`, `EncodeBufs<f64>`)
    /// and decoder scratch (codes, levels), kept between calls: allocating and first touching
    /// 1.3–9 MiB per call (per rayon split) cost about a tenth of an encode of a 1 MB field.
    /// At most one tile's worth per type and thread stays allocated.
    static SCRATCH: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on this thread's scratch of type `S` (made by `make` the first time).
fn with_scratch<S: 'static, R>(make: impl FnOnce() -> S, f: impl FnOnce(&mut S) -> R) -> R {
    // taken out of the list while `f` runs (no borrow held across it)
    let found = SCRATCH.with_borrow_mut(|all| {
        all.iter()
            .position(|b| b.is::<S>())
            .map(|i| all.swap_remove(i).downcast::<S>())
    });
    let mut held: Box<S> = match found {
        Some(Ok(s)) => s,
        _ => Box::new(make()),
    };
    let r = f(&mut held);
    SCRATCH.with_borrow_mut(|all| all.push(held));
    r
}

/// Encodes tile `t` of `input` in this thread's scratch.
fn encode_one<T: Element>(
    plan: &TiledPlan,
    input: &[T],
    t: usize,
) -> Result<(Vec<u8>, u32), Error> {
    with_scratch(EncodeBufs::<T>::new, |b| {
        b.fit(plan);
        b.tile(plan, input, t)
    })
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
                .map(|t| encode_one(plan, input, t))
                .collect()
        });
        return all.into_iter().collect();
    }
    (0..plan.tiles())
        .map(|t| encode_one(plan, input, t))
        .collect()
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
    // this thread's decoder scratch, grown to the archive's tiles
    let slab = |s: usize, part: &mut [T], at: usize| {
        with_scratch(
            || (Vec::<i32>::new(), Vec::<i64>::new()),
            |(codes, levels)| {
                if codes.len() < lens.codes {
                    codes.resize(lens.codes, 0);
                }
                if levels.len() < lens.levels {
                    levels.resize(lens.levels, 0);
                }
                view.decode_slab(s, at, part, codes, levels, verify)
            },
        )
    };
    #[cfg(feature = "rayon")]
    if let Some(par) = par {
        // every result kept, so the error reported is the first in slab order
        let all: Vec<Result<(), Error>> = par.install(|| {
            out.par_chunks_mut(per)
                .zip(starts.par_iter())
                .enumerate()
                .map(|(s, (part, &at))| slab(s, part, at))
                .collect()
        });
        all.into_iter().collect::<Result<(), Error>>()?;
        view.patch(out)?;
        return Ok(n);
    }
    for (s, (part, &at)) in out.chunks_mut(per).zip(&starts).enumerate() {
        slab(s, part, at)?;
    }
    view.patch(out)?;
    Ok(n)
}
