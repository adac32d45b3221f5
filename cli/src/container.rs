//! Container detection and validation, shared by `fzpack info` and `decompress` (and fuzzed:
//! `fuzz/fuzz_targets/cli_container.rs`).
//!
//! Every check here reads only what the bytes hold: no allocation is sized from a count in a
//! header before that count is checked against the bytes present. The trailing-bytes policy is
//! the same for the three formats: an archive is exactly as long as its header says, and
//! anything after it is an error.

use fzpack::pernix::{self, StreamHeader, Verify};
use fzpack::szp::{self, Mode};
use fzpack::{DType, Error};

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
    if bytes.starts_with(&pernix::STREAM_MAGIC) {
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

/// The SZp form of a `--no-verify` choice.
pub fn szp_verify(v: Verify) -> szp::Verify {
    match v {
        Verify::Checksums => szp::Verify::Checksums,
        Verify::Skip => szp::Verify::Skip,
    }
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

/// Validates a whole archive without decoding it: header, exact length (no trailing bytes),
/// the per-block structure (widths, scales) and every checksum the format has (`.pnx` v2 chunk
/// and header CRCs when `verify`, `.fzm` header and data CRCs). Decoding an archive that
/// passes can still fail only where the values themselves are checked.
pub fn check(bytes: &[u8], verify: Verify) -> Result<Summary, Error> {
    match detect(bytes) {
        Some(ArchiveKind::Pernix) => {
            let h = if verify == Verify::Checksums {
                pernix::verify_stream(bytes)?
            } else {
                StreamHeader::check(bytes, Verify::Skip)?
            };
            let scales = pernix::stream_scales(bytes)?;
            if let Some(k) = scales.iter().position(|s| !(s.is_finite() && *s > 0.0)) {
                return Err(corrupt(format!(
                    "PERNIX stream: block {k} has scale {}, not finite and positive",
                    scales[k]
                )));
            }
            Ok(Summary {
                kind: ArchiveKind::Pernix,
                dtype: h.dtype,
                n: h.n,
            })
        }
        Some(ArchiveKind::Szp) => {
            let v = szp::blocks::parse_with(bytes, szp_verify(verify))?;
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

/// Decodes a checked archive into values of `T` the simple way (whole archive, one thread):
/// what the fuzz target and tests compare the CLI's streaming decoders against.
pub fn decode_all<T: fzpack::Element>(bytes: &[u8], verify: Verify) -> Result<Vec<T>, Error> {
    let s = check(bytes, verify)?;
    if s.dtype != T::TYPE {
        return Err(Error::DTypeMismatch {
            stored: s.dtype,
            requested: T::TYPE,
        });
    }
    match s.kind {
        ArchiveKind::Pernix => pernix::default_dispatcher().decompress_stream_with(bytes, verify),
        ArchiveKind::Szp => {
            let dec = szp::Decoder::new().kernel(szp::Kernel::Scalar).serial();
            Ok(dec.verify(szp_verify(verify)).to_vec(bytes)?)
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

/// The rows `fzpack info` prints for a checked archive.
pub fn describe(bytes: &[u8], verify: Verify) -> Result<Vec<(String, String)>, Error> {
    let s = check(bytes, verify)?;
    let raw = s.n as f64 * s.dtype.size() as f64;
    let mut rows: Vec<(String, String)> = match s.kind {
        ArchiveKind::Pernix => {
            let h = StreamHeader::check(bytes, Verify::Skip)?;
            let scales = pernix::stream_scales(bytes)?;
            let (lo, hi) = scales
                .iter()
                .fold((f64::INFINITY, 0f64), |(l, h), &s| (l.min(s), h.max(s)));
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
                ("blocks".into(), scales.len().to_string()),
                ("archive size".into(), format!("{} bytes", bytes.len())),
            ];
            if !scales.is_empty() {
                let bmax = scales
                    .iter()
                    .map(|&sc| match h.dtype {
                        DType::F32 => pernix::block_error_bound(sc as f32, h.bits),
                        DType::F64 => pernix::block_error_bound(sc, h.bits),
                    })
                    .fold(0.0, f64::max);
                rows.push(("scale range".into(), format!("{lo:.6e} .. {hi:.6e}")));
                rows.push(("max error bound".into(), format!("{bmax:.6e}")));
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
        ArchiveKind::Szp => {
            let v = szp::blocks::parse_with(bytes, szp::Verify::Skip)?;
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
