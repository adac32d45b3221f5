//! The codecs dispatched: compress with a [`Setting`], and decompress or read the bound of any
//! archive by its magic bytes, on one of the three paths. PERNIX runs here, SZp in
//! [`crate::szpcli`].

use std::ops::Range;

use fzpack::DType;
use fzpack::pernix::{self, StreamHeader, Verify};
use fzpack_cli::container::{self, ArchiveKind};

use crate::codec::{Bound, Engines, PathKind, Setting, Values, Wrap};
use crate::fail::{Fail, Kind, lib};
use crate::szpcli;
use crate::szpstream::BATCH_BYTES;

/// The archive kind of `bytes`, or the error that names `name` for unknown magic bytes.
pub fn detect(name: &str, bytes: &[u8]) -> Result<ArchiveKind, Fail> {
    container::detect(bytes).ok_or_else(|| {
        Fail::new(
            Kind::Corrupt,
            format!("{name}: not an fzpack archive (unknown magic bytes)"),
        )
    })
}

/// Compresses with `setting` on `path`; `fzm` selects the .fzm container for SZp.
pub fn compress<T: Wrap>(
    name: &str,
    values: &[T],
    setting: &Setting,
    path: PathKind,
    eng: &Engines,
    fzm: bool,
) -> Result<Vec<u8>, Fail> {
    match *setting {
        Setting::Pernix { bits, block } => pernix::Encoder::new(bits, block)
            .dispatcher(eng.pernix(path))
            .to_vec(values)
            .map_err(|e| lib(name, e)),
        Setting::Szp {
            mode,
            eb,
            block,
            layout,
        } => szpcli::compress(name, values, mode, eb, block, layout, path, eng, fzm),
    }
}

/// Decompresses any archive on `path`.
pub fn decompress(name: &str, bytes: &[u8], path: PathKind, eng: &Engines) -> Result<Values, Fail> {
    match detect(name, bytes)? {
        ArchiveKind::Pernix => {
            let h = pernix::stream_header(bytes).map_err(|e| lib(name, e))?;
            let d = pernix::Decoder::new().dispatcher(eng.pernix(path));
            Ok(match h.dtype {
                DType::F32 => Values::F32(d.to_vec(bytes).map_err(|e| lib(name, e))?),
                DType::F64 => Values::F64(d.to_vec(bytes).map_err(|e| lib(name, e))?),
            })
        }
        k => szpcli::decompress(name, bytes, k, path, eng),
    }
}

/// The error bound an archive promises.
pub fn bound(name: &str, bytes: &[u8]) -> Result<Bound, Fail> {
    match detect(name, bytes)? {
        ArchiveKind::Pernix => {
            // The per-block bounds `verify` looks values up in, from the scales one at a time.
            let h = StreamHeader::check(bytes, Verify::Skip).map_err(|e| lib(name, e.into()))?;
            let bounds = h
                .scales(bytes)
                .map(|s| pernix::block_error_bound_of(h.dtype, s, h.bits))
                .collect();
            Ok(Bound::PerBlock {
                per: h.elements_per_block(),
                bounds,
            })
        }
        k => szpcli::bound(name, bytes, k).map(Bound::Uniform),
    }
}

/// The check of a non-regular input's first bytes: the rest is read only if they are an
/// archive's.
pub fn archive_head(nm: &str) -> impl Fn(&[u8]) -> Result<(), Fail> + '_ {
    move |head: &[u8]| detect(nm, head).map(|_| ())
}

/// The batches a `.pnx` stream of `units` units is written or read in, so that memory is one
/// batch: whole checksummed units, about [`BATCH_BYTES`] of raw values each (at least one
/// unit), as (first unit, byte span in the stream, value range).
pub fn pnx_batches<T: Wrap>(
    h: &StreamHeader,
    units: usize,
) -> impl Iterator<Item = (usize, Range<usize>, Range<usize>)> + '_ {
    let per = (BATCH_BYTES / (h.unit_values() * T::BYTES)).max(1);
    (0..units).step_by(per).map(move |u0| {
        let (span, vals) = h.unit_span(u0..(u0 + per).min(units));
        (u0, span, vals)
    })
}
