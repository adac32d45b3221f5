//! Archive detection, structural checks and description for fzpack's three formats: PERNIX
//! block streams (`.pnx`), SZp archives (`.szp`) and FZGPUModules `.fzm` — what `fzpack info`
//! prints and what `fzpack decompress` checks before it decodes.
//!
//! Every check here reads only what the bytes hold: no allocation is sized from a count in a
//! header before that count is checked against the bytes present. The trailing-bytes policy is
//! the same for the three formats: an archive is exactly as long as its header says, and
//! anything after it is an error.
//!
//! [`check`] is structural (header, exact length, SZp block widths) and runs no CRC pass over
//! the body: the decoders verify each chunk once, right after decoding it, from cache.
//! [`describe`], which decodes nothing, verifies the checksums itself when asked.
//!
//! ```
//! use fzpack::archive::{self, ArchiveKind};
//! use fzpack::pernix::{self, BitWidth, BlockSize, Verify};
//!
//! let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
//! let s = pernix::compress(&x, BitWidth::new(12)?, BlockSize::B64)?;
//! assert_eq!(archive::detect(&s), Some(ArchiveKind::Pernix));
//! assert_eq!(archive::check(&s, Verify::Checksums)?.n, 1000);
//! let rows = archive::describe(&s, Verify::Checksums)?;
//! assert!(rows.iter().any(|(k, v)| k == "integrity" && v.ends_with("verified")));
//! assert_eq!(archive::decode_all::<f32>(&s, Verify::Checksums)?.len(), 1000);
//! # Ok::<(), fzpack::Error>(())
//! ```

use fzpack_core::pernix::stream::{STREAM_MAGIC, StreamHeader};
use fzpack_core::szp::{self, Mode};

use crate::element::Element;
use crate::pernix;
use crate::{DType, Error};
use fzpack_core::types::Verify;

/// What kind of archive a byte string is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveKind {
    /// PERNIX block stream (`.pnx`).
    Pernix,
    /// fzpack SZp archive (`.szp`).
    Szp,
    /// FZGPUModules `.fzm`.
    Fzm,
}

/// The kind from the magic bytes, if any.
pub fn detect(bytes: &[u8]) -> Option<ArchiveKind> {
    if bytes.starts_with(&STREAM_MAGIC) {
        Some(ArchiveKind::Pernix)
    } else if bytes.starts_with(&szp::MAGIC) {
        Some(ArchiveKind::Szp)
    } else if bytes.starts_with(&szp::fzm::FZM_MAGIC) {
        Some(ArchiveKind::Fzm)
    } else {
        None
    }
}

/// The container a byte string starts with, when it is a known file format rather than raw
/// floats: fzpack's own archives (see [`detect`]), NumPy `.npy`, HDF5 (and so netCDF-4),
/// classic netCDF, zstd and gzip. `compress` refuses such input unless `--raw` is given: read
/// as raw floats, a header becomes garbage values and the result is silently wrong.
///
/// The magics are those of each format's specification. gzip's two magic bytes are followed
/// by its only compression method (8, deflate) here, so a raw `f32` field matches by chance
/// with odds of 2^-24, not 2^-16.
pub fn foreign_magic(bytes: &[u8]) -> Option<&'static str> {
    const MAGICS: [(&[u8], &str); 8] = [
        (b"\x93NUMPY", "a NumPy .npy file"),
        (
            b"\x89HDF\r\n\x1a\n",
            "an HDF5 file (or netCDF-4, which is HDF5)",
        ),
        (b"CDF\x01", "a netCDF classic file"),
        (b"CDF\x02", "a netCDF 64-bit offset file"),
        (b"CDF\x05", "a netCDF 64-bit data (CDF-5) file"),
        (&[0x28, 0xb5, 0x2f, 0xfd], "a zstd-compressed file"),
        (&[0x1f, 0x8b, 0x08], "a gzip-compressed file"),
        (b"PK\x03\x04", "a zip archive (e.g. .npz)"),
    ];
    if let Some(k) = detect(bytes) {
        return Some(match k {
            ArchiveKind::Pernix => "an fzpack PERNIX archive (.pnx)",
            ArchiveKind::Szp => "an fzpack SZp archive (.szp)",
            ArchiveKind::Fzm => "an FZGPUModules archive (.fzm)",
        });
    }
    MAGICS
        .iter()
        .find(|(m, _)| bytes.starts_with(m))
        .map(|&(_, what)| what)
}

/// Bytes of an `.fzm` archive: its 592-byte header plus the compressed size it records
/// (offset 16, u64); `None` when the header is short.
pub fn fzm_len(bytes: &[u8]) -> Option<u64> {
    let c: [u8; 8] = bytes.get(16..24)?.try_into().ok()?;
    u64::from_le_bytes(c).checked_add(szp::fzm::FZM_HEADER_LEN as u64)
}

fn corrupt(s: String) -> Error {
    Error::Corrupt(s)
}

/// The exact-length rule for `.fzm` (the core's reader ignores bytes after the body).
fn fzm_exact(bytes: &[u8]) -> Result<(), Error> {
    if let Some(want) = fzm_len(bytes)
        && (bytes.len() as u64) > want
    {
        return Err(corrupt(format!(
            ".fzm: {} bytes after the end of the archive ({want} bytes)",
            bytes.len() as u64 - want
        )));
    }
    Ok(())
}

/// What `check` found: kind, element type, value count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// The format.
    pub kind: ArchiveKind,
    /// Element type of the values.
    pub dtype: DType,
    /// Number of values.
    pub n: u64,
}

/// Validates a whole archive's structure without decoding it: header, exact length (no
/// trailing bytes) and, for SZp, the per-block widths; `.fzm` archives are read by the core's
/// `.fzm` reader, which checks their header and data CRCs. No CRC pass over a `.pnx` or `.szp`
/// body (only the `.pnx` header CRC when `verify`): their decoders verify each chunk once,
/// after decoding it, and check every `.pnx` scale. Decoding an archive that passes can still
/// fail where the data is checked (CRCs, scales, values).
pub fn check(bytes: &[u8], verify: Verify) -> Result<Summary, Error> {
    match detect(bytes) {
        Some(ArchiveKind::Pernix) => {
            let h = StreamHeader::check(bytes, verify)?;
            Ok(Summary {
                kind: ArchiveKind::Pernix,
                dtype: h.dtype,
                n: h.n,
            })
        }
        Some(ArchiveKind::Szp) if crate::tiles::is_tiled(bytes) => {
            // The interpolation layout: its own parse (tile table, shape, missing runs).
            let v = szp::tiled::parse(bytes, Verify::Skip)?;
            Ok(Summary {
                kind: ArchiveKind::Szp,
                dtype: v.header.dtype,
                n: v.header.n,
            })
        }
        Some(ArchiveKind::Szp) => {
            let v = szp::blocks::parse_with(bytes, Verify::Skip)?;
            Ok(Summary {
                kind: ArchiveKind::Szp,
                dtype: v.header.dtype,
                n: v.header.n,
            })
        }
        Some(ArchiveKind::Fzm) => {
            let c = szp::fzm::config(bytes)?;
            fzm_exact(bytes)?;
            // n is bounded by the archive: one width byte per block must be present.
            let max = (bytes.len() as u64).saturating_mul(u64::from(c.block_size));
            if c.n > max {
                return Err(Error::Szp(szp::Error::Truncated));
            }
            Ok(Summary {
                kind: ArchiveKind::Fzm,
                dtype: c.dtype,
                n: c.n,
            })
        }
        None => Err(corrupt(
            "not an fzpack archive (unknown magic bytes)".into(),
        )),
    }
}

/// Decodes an archive into values of `T` the simple way (whole archive; SZp on one thread with
/// the scalar kernel): what the fuzz target and tests compare the CLI's streaming decoders
/// against. Checks first ([`check`]); the decoders verify the checksums.
pub fn decode_all<T: Element>(bytes: &[u8], verify: Verify) -> Result<Vec<T>, Error> {
    let s = check(bytes, verify)?;
    if s.dtype != T::TYPE {
        return Err(Error::DTypeMismatch {
            stored: s.dtype,
            requested: T::TYPE,
        });
    }
    match s.kind {
        ArchiveKind::Pernix => pernix::Decoder::new().verify(verify).to_vec(bytes),
        ArchiveKind::Szp if crate::tiles::is_tiled(bytes) => {
            // The interpolation layout needs scratch: the facade's decoder, one thread.
            crate::szp::Decoder::new()
                .kernel(szp::Kernel::Scalar)
                .serial()
                .verify(verify)
                .to_vec(bytes)
        }
        ArchiveKind::Szp => {
            let mut out = vec![T::ZERO; s.n as usize]; // bounded by check
            let (k, one) = (szp::Kernel::Scalar, &szp::engine::Serial);
            szp::engine::decompress_verify_on(k, one, bytes, &mut out, verify)?;
            Ok(out)
        }
        ArchiveKind::Fzm => {
            let mut out = vec![T::ZERO; s.n as usize]; // bounded by check
            szp::fzm::read(bytes, &mut out)?;
            Ok(out)
        }
    }
}

fn ratio_row(raw: f64, len: usize, n: u64) -> [(String, String); 2] {
    if n == 0 {
        return [
            ("ratio".into(), "n/a (no values)".into()),
            ("bits/value".into(), "n/a (no values)".into()),
        ];
    }
    [
        ("ratio".into(), format!("{:.3}", raw / len.max(1) as f64)),
        (
            "bits/value".into(),
            format!("{:.3}", len as f64 * 8.0 / n as f64),
        ),
    ]
}

/// The rows `fzpack info` prints: [`check`], then what the format holds, with every checksum
/// verified when `verify` (a `.pnx` or `.szp` body is read once for that).
pub fn describe(bytes: &[u8], verify: Verify) -> Result<Vec<(String, String)>, Error> {
    let s = check(bytes, verify)?;
    let raw = s.n as f64 * s.dtype.size() as f64;
    let mut rows: Vec<(String, String)> = match s.kind {
        ArchiveKind::Pernix => {
            // The scales are iterated (range, worst bound), and with `verify` every chunk CRC
            // is checked: info decodes nothing, so this is its one verification pass.
            let ins = pernix::inspect(bytes, verify)?;
            let h = ins.header;
            let mut rows = vec![
                (
                    "format".into(),
                    format!("PERNIX block stream v{}", h.version),
                ),
                (
                    "integrity".into(),
                    if h.unit_sum_len() > 0 {
                        match verify {
                            Verify::Checksums => format!(
                                "CRC-32 per chunk of {} blocks and of the header: verified",
                                h.unit_frames()
                            ),
                            Verify::Skip => "CRC-32 per chunk: not verified (--no-verify)".into(),
                        }
                    } else {
                        "none (version 1 stream)".into()
                    },
                ),
                ("dtype".into(), h.dtype.to_string()),
                ("values".into(), h.n.to_string()),
                ("bits".into(), h.bits.get().to_string()),
                (
                    "block size".into(),
                    format!("{} bytes", h.block_size.bytes()),
                ),
                (
                    "values per block".into(),
                    h.elements_per_block().to_string(),
                ),
                ("blocks".into(), ins.blocks.to_string()),
                ("archive size".into(), format!("{} bytes", bytes.len())),
            ];
            if let Some((lo, hi)) = ins.scale_range {
                rows.push(("scale range".into(), format!("{lo:.6e} .. {hi:.6e}")));
                rows.push((
                    "max error bound".into(),
                    format!("{:.6e}", ins.max_error_bound),
                ));
            }
            rows
        }
        ArchiveKind::Fzm => {
            let c = szp::fzm::config(bytes)?;
            let dtype: DType = c.dtype;
            let mode = match c.mode {
                Mode::Abs => "ABS".to_string(),
                Mode::Noa => format!("NOA (value range {:.6e})", c.value_base),
            };
            vec![
                (
                    "format".into(),
                    "FZGPUModules .fzm v3.1, one SZp stage".into(),
                ),
                (
                    "integrity".into(),
                    "CRC-32 of header and data: verified".into(),
                ),
                ("dtype".into(), dtype.to_string()),
                ("values".into(), c.n.to_string()),
                ("block size".into(), format!("{} values", c.block_size)),
                (
                    "error bound".into(),
                    format!("{:.6e} absolute, {mode}", c.error_bound),
                ),
                ("archive size".into(), format!("{} bytes", bytes.len())),
            ]
        }
        ArchiveKind::Szp if crate::tiles::is_tiled(bytes) => describe_tiled(bytes, verify)?,
        ArchiveKind::Szp => {
            // info decodes nothing: this parse is its verification pass (with `verify`).
            let v = szp::blocks::parse_with(bytes, verify)?;
            let h = v.header;
            let dtype: DType = h.dtype;
            let mode = match h.mode {
                Mode::Abs => format!("ABS {:.6e}", h.requested),
                Mode::Noa => format!(
                    "NOA {:.6e} of the value range {:.6e}",
                    h.requested, h.value_base
                ),
            };
            let mut hist = [0usize; 65];
            for &w in v.widths {
                hist[usize::from(w.min(64))] += 1;
            }
            let zero = hist[0];
            let wmax = (0..65).rev().find(|&w| hist[w] > 0).unwrap_or(0);
            vec![
                (
                    "format".into(),
                    format!("fzpack SZp archive v{}", h.version),
                ),
                (
                    "integrity".into(),
                    if h.version >= 2 {
                        let per = 1u64 << h.chunk_shift.min(31);
                        match verify {
                            Verify::Checksums => format!(
                                "CRC-32 of the header and per chunk of {per} blocks: verified"
                            ),
                            Verify::Skip => "CRC-32 per chunk: not verified (--no-verify)".into(),
                        }
                    } else {
                        "none (version 1 archive)".into()
                    },
                ),
                ("dtype".into(), dtype.to_string()),
                ("values".into(), h.n.to_string()),
                ("block size".into(), format!("{} values", h.block_size)),
                ("blocks".into(), v.widths.len().to_string()),
                (
                    "layout".into(),
                    if h.head_group() > 0 {
                        format!(
                            "block-head (heads stored apart, {} blocks per group)",
                            h.head_group()
                        )
                    } else {
                        "stage (FZGPUModules, fzgm)".into()
                    },
                ),
                ("error bound".into(), mode),
                ("absolute bound".into(), format!("{:.6e}", h.bound())),
                ("quantizer bound".into(), format!("{:.6e}", h.quant_eb)),
                (
                    "strict".into(),
                    if h.strict {
                        "yes (every value checked against the bound)"
                    } else {
                        "no (stage-compatible)"
                    }
                    .into(),
                ),
                (
                    "block widths".into(),
                    format!("max {wmax} bits, {zero} constant (0-bit) blocks"),
                ),
                ("archive size".into(), format!("{} bytes", bytes.len())),
            ]
        }
    };
    rows.extend(ratio_row(raw, bytes.len(), s.n));
    Ok(rows)
}

/// `describe`'s rows for an SZp archive of the interpolation layout. The header CRC and the
/// extension's are checked by the parse (with `verify`); the tiles' CRCs cover their bytes and
/// are checked as each tile is decoded, so here, where nothing is decoded, they are not.
fn describe_tiled(bytes: &[u8], verify: Verify) -> Result<Vec<(String, String)>, Error> {
    let v = szp::tiled::parse(bytes, verify)?;
    let h = v.header;
    let mode = match h.mode {
        Mode::Abs => format!("ABS {:.6e}", h.requested),
        Mode::Noa => format!(
            "NOA {:.6e} of the value range {:.6e}",
            h.requested, h.value_base
        ),
    };
    let [d0, d1, d2] = v.dims();
    Ok(vec![
        (
            "format".into(),
            format!("fzpack SZp archive v{}", h.version),
        ),
        (
            "integrity".into(),
            match verify {
                Verify::Checksums => "CRC-32 of the header and the extension: verified; \
                                      CRC-32 per tile: checked when decoded"
                    .into(),
                Verify::Skip => "CRC-32 per tile: not verified (--no-verify)".into(),
            },
        ),
        ("dtype".into(), h.dtype.to_string()),
        ("values".into(), h.n.to_string()),
        (
            "layout".into(),
            "interp (interpolation tiles, layout 2)".into(),
        ),
        (
            "tiles".into(),
            format!("{} (over the shape folded to {d0}x{d1}x{d2})", v.tiles()),
        ),
        ("error bound".into(), mode),
        ("absolute bound".into(), format!("{:.6e}", h.bound())),
        ("quantizer bound".into(), format!("{:.6e}", h.quant_eb)),
        (
            "strict".into(),
            "yes (every value checked against the bound)".into(),
        ),
        ("archive size".into(), format!("{} bytes", bytes.len())),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pernix::{BitWidth, BlockSize};

    /// A flipped body bit: `check` (structural) passes, the decoder and a verifying
    /// `describe` (what `fzpack info` prints) reject it, and without checksums both accept it.
    #[test]
    fn check_is_structural_and_describe_and_decode_verify() {
        let x: Vec<f32> = (0..5000).map(|i| (i as f32 * 0.01).sin() * 9.0).collect();
        let pnx = pernix::compress(&x, BitWidth::new(12).unwrap(), BlockSize::B64).unwrap();
        let cfg = szp::Config::abs(1e-3);
        let cap = szp::max_compressed_len(x.len(), cfg.block_size, DType::F32).unwrap();
        let mut szp = vec![0u8; cap];
        let len = szp::compress(&x, &cfg, &mut szp).unwrap();
        szp.truncate(len);
        for (name, good) in [("pnx", pnx), ("szp", szp)] {
            let mut bad = good.clone();
            let at = bad.len() - 9; // inside the last chunk's data
            bad[at] ^= 0x20;
            let s = check(&bad, Verify::Checksums).unwrap();
            assert_eq!((s.n, s.dtype), (5000, DType::F32), "{name}");
            assert!(describe(&bad, Verify::Checksums).is_err(), "{name}");
            assert!(
                decode_all::<f32>(&bad, Verify::Checksums).is_err(),
                "{name}"
            );
            let rows = describe(&bad, Verify::Skip).unwrap();
            assert!(
                rows.iter()
                    .any(|(k, v)| k == "integrity" && v.contains("not verified")),
                "{name}"
            );
            let rows = describe(&good, Verify::Checksums).unwrap();
            assert!(
                rows.iter()
                    .any(|(k, v)| k == "integrity" && v.ends_with(": verified")),
                "{name}"
            );
            assert_eq!(
                decode_all::<f32>(&good, Verify::Checksums).unwrap().len(),
                5000
            );
            assert!(
                check(&good[..good.len() - 1], Verify::Skip).is_err(),
                "{name}"
            );
        }
    }

    /// `info`'s `.pnx` rows come from iterating the scales: the worst bound holds for every
    /// value, and a non-positive scale is an error (of inspection and the decoder, not of the
    /// structural check).
    #[test]
    fn pnx_rows_bound_the_error() {
        let x: Vec<f64> = (0..3000).map(|i| ((i * 7) % 101) as f64 - 50.3).collect();
        let s = pernix::compress(&x, BitWidth::new(10).unwrap(), BlockSize::B128).unwrap();
        let ins = pernix::inspect(&s, Verify::Checksums).unwrap();
        let y: Vec<f64> = pernix::decompress(&s).unwrap();
        let worst = x
            .iter()
            .zip(&y)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(worst > 0.0 && worst <= ins.max_error_bound);
        let (lo, hi) = ins.scale_range.unwrap();
        assert!(lo > 0.0 && lo <= hi && hi <= 50.3 / 511.0 * (1.0 + 1e-12));
        assert_eq!(ins.blocks, 3000usize.div_ceil(102));
        let rows = describe(&s, Verify::Checksums).unwrap();
        let row = |k: &str| rows.iter().find(|(r, _)| r == k).map(|(_, v)| v.clone());
        assert_eq!(row("blocks"), Some(ins.blocks.to_string()));
        let bound = format!("{:.6e}", ins.max_error_bound);
        assert_eq!(row("max error bound"), Some(bound));
        let mut neg = s.clone();
        neg[32..40].copy_from_slice(&(-1.0f64).to_le_bytes()); // block 0's scale
        let e = pernix::inspect(&neg, Verify::Skip).unwrap_err();
        assert!(e.to_string().contains("block 0 has scale -1.0"), "{e}");
        assert!(check(&neg, Verify::Skip).is_ok());
        assert!(decode_all::<f64>(&neg, Verify::Skip).is_err());
    }

    /// An interpolation-layout archive: `check` and `describe` parse it with its own parser
    /// (the layout, the tile count), `decode_all` decodes it (the facade's decoder), a flipped
    /// tile byte fails the verifying decode, a truncation fails `check`, the wrong type is named.
    #[test]
    fn interpolation_layout_is_checked_described_and_decoded() {
        let (r, c) = (40usize, 70usize);
        let x: Vec<f32> = (0..r * c)
            .map(|k| ((k / c) as f32 * 0.1).sin() * ((k % c) as f32 * 0.05).cos() * 7.0)
            .collect();
        let cfg = szp::Config::abs(1e-3)
            .with_layout(szp::Layout::Interp)
            .with_shape(szp::Shape::new(&[r as u64, c as u64]).unwrap());
        let a = crate::szp::compress(&x, &cfg).unwrap();
        assert_eq!(detect(&a), Some(ArchiveKind::Szp));
        let s = check(&a, Verify::Checksums).unwrap();
        assert_eq!((s.n, s.dtype), ((r * c) as u64, DType::F32));
        let rows = describe(&a, Verify::Checksums).unwrap();
        let row = |k: &str| rows.iter().find(|(r, _)| r == k).map(|(_, v)| v.clone());
        assert!(row("layout").unwrap().starts_with("interp"));
        let tiles = szp::tiled::parse(&a, Verify::Checksums).unwrap().tiles();
        assert!(row("tiles").unwrap().starts_with(&format!("{tiles} ")));
        let back = decode_all::<f32>(&a, Verify::Checksums).unwrap();
        assert!(x.iter().zip(&back).all(|(p, q)| (p - q).abs() <= 1e-3));
        assert!(matches!(
            decode_all::<f64>(&a, Verify::Checksums),
            Err(Error::DTypeMismatch { .. })
        ));
        let mut bad = a.clone();
        bad[szp::HEADER_LEN + 8 * tiles + 10] ^= 0x08;
        assert!(decode_all::<f32>(&bad, Verify::Checksums).is_err());
        assert!(check(&a[..a.len() - 1], Verify::Skip).is_err());
    }
}
