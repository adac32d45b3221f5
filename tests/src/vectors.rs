//! Readers for PERNIX golden vectors.
//!
//! Two formats hold the same records:
//!
//! * **PNXV** (`vectors_f32.bin`, `vectors_f64.bin`): the files produced by the upstream C
//!   library's FALLBACK backend (format in `../shared/vectors/pernix/FORMAT.md`). Every record
//!   carries the full decompressed output.
//! * **PNXG** (`tests/golden/pernix/subset_f32.bin`, `subset_f64.bin`): the compact subset
//!   committed to this repository so a fresh clone still checks conformance. It was cut from
//!   the PNXV files by `cargo run -p fzpack-tests --bin make_pernix_subset` *after* fzpack
//!   matched every PNXV record. A record stores its input either raw or, when all elements
//!   share one bit pattern, as that single pattern, and the decompressed output as the FNV-1a
//!   64 hash of its little-endian bytes; everything else is as in PNXV.
//!
//! PNXG layout (little-endian): header `PNXG`, u32 version = 1, u32 record count, u8 element
//! size D, 3 zero bytes; then per record the 32-byte PNXV record head, bmax, scale,
//! inverse_scale (D bytes each), u8 input encoding (0 = E raw elements follow, 1 = one element
//! follows, repeated E times, 2 = no input: a decompression-only record whose compress status
//! is 99, "not run"), the input, the `BS·B` compressed bytes, and a u64 FNV-1a hash
//! of the `E·D` decompressed bytes.

use std::fmt;
use std::path::{Path, PathBuf};

/// Expected decompression output of a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// The raw bit patterns of every element.
    Full(Vec<u64>),
    /// FNV-1a 64 of the little-endian element bytes.
    Hash(u64),
}

/// One golden record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Bit width N.
    pub bits: u8,
    /// Whether decompression sign-extends.
    pub sign_values: bool,
    /// Block size in bytes.
    pub block_size: u16,
    /// Input generator (see FORMAT.md).
    pub kind: u8,
    /// Flags (see FORMAT.md).
    pub flags: u8,
    /// Number of blocks (1, or 3 for the `_blocks` API).
    pub blocks: u16,
    /// Number of elements.
    pub elements: u32,
    /// Running index in the source file.
    pub case_id: u32,
    /// Status of the scale helper.
    pub scale_status: i32,
    /// Status of `inverse_scale`.
    pub inverse_status: i32,
    /// Status of compress (99 = not run).
    pub compress_status: i32,
    /// Status of decompress (99 = not run).
    pub decompress_status: i32,
    /// Element size in bytes (4 or 8).
    pub elem_size: u8,
    /// bmax, raw bits.
    pub bmax: u64,
    /// Forward scale, raw bits.
    pub scale: u64,
    /// Inverse scale, raw bits.
    pub inverse_scale: u64,
    /// Input elements, raw bits.
    pub input: Vec<u64>,
    /// Compressed bytes (all zero if compress failed).
    pub compressed: Vec<u8>,
    /// Expected decompressed output.
    pub decoded: Decoded,
}

/// A parse failure, with the byte offset where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset in the file.
    pub offset: usize,
    /// What was wrong.
    pub what: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.offset)
    }
}

impl std::error::Error for ParseError {}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ParseError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or(ParseError {
            offset: self.pos,
            what: "truncated record",
        })?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, ParseError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, ParseError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, ParseError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Result<i32, ParseError> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn elem(&mut self, d: u8) -> Result<u64, ParseError> {
        let b = self.take(d as usize)?;
        Ok(match d {
            4 => u64::from(u32::from_le_bytes(b.try_into().unwrap())),
            _ => u64::from_le_bytes(b.try_into().unwrap()),
        })
    }
    fn elems(&mut self, d: u8, n: usize) -> Result<Vec<u64>, ParseError> {
        (0..n).map(|_| self.elem(d)).collect()
    }
}

/// FNV-1a 64 over the little-endian bytes of `elems` (each `elem_size` bytes wide).
pub fn fnv1a_elems(elems: &[u64], elem_size: u8) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for e in elems {
        for b in &e.to_le_bytes()[..elem_size as usize] {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Parses a PNXV or PNXG file.
pub fn parse(data: &[u8]) -> Result<Vec<Record>, ParseError> {
    let mut c = Cursor { data, pos: 0 };
    let magic = c.take(4)?;
    let compact = match magic {
        b"PNXV" => false,
        b"PNXG" => true,
        _ => {
            return Err(ParseError {
                offset: 0,
                what: "bad magic (want PNXV or PNXG)",
            });
        }
    };
    if c.u32()? != 1 {
        return Err(ParseError {
            offset: 4,
            what: "unsupported version",
        });
    }
    let count = c.u32()?;
    let d = c.u8()?;
    if d != 4 && d != 8 {
        return Err(ParseError {
            offset: 12,
            what: "element size must be 4 or 8",
        });
    }
    c.take(3)?;
    let mut out = Vec::with_capacity(count.min(1 << 20) as usize);
    for _ in 0..count {
        let bits = c.u8()?;
        let sign_values = c.u8()? != 0;
        let block_size = c.u16()?;
        let kind = c.u8()?;
        let flags = c.u8()?;
        let blocks = c.u16()?;
        let elements = c.u32()?;
        let case_id = c.u32()?;
        let scale_status = c.i32()?;
        let inverse_status = c.i32()?;
        let compress_status = c.i32()?;
        let decompress_status = c.i32()?;
        let bmax = c.elem(d)?;
        let scale = c.elem(d)?;
        let inverse_scale = c.elem(d)?;
        let e = elements as usize;
        let input = if compact {
            match c.u8()? {
                0 => c.elems(d, e)?,
                1 => vec![c.elem(d)?; e],
                2 => Vec::new(),
                _ => {
                    return Err(ParseError {
                        offset: c.pos,
                        what: "bad input encoding",
                    });
                }
            }
        } else {
            c.elems(d, e)?
        };
        let compressed = c.take(block_size as usize * blocks as usize)?.to_vec();
        let decoded = if compact {
            Decoded::Hash(u64::from_le_bytes(c.take(8)?.try_into().unwrap()))
        } else {
            Decoded::Full(c.elems(d, e)?)
        };
        out.push(Record {
            bits,
            sign_values,
            block_size,
            kind,
            flags,
            blocks,
            elements,
            case_id,
            scale_status,
            inverse_status,
            compress_status,
            decompress_status,
            elem_size: d,
            bmax,
            scale,
            inverse_scale,
            input,
            compressed,
            decoded,
        });
    }
    if c.pos != data.len() {
        return Err(ParseError {
            offset: c.pos,
            what: "trailing bytes after the last record",
        });
    }
    Ok(out)
}

/// Serializes records as a PNXG file (all records must share one element size).
pub fn write_compact(records: &[Record]) -> Vec<u8> {
    let d = records.first().map_or(4, |r| r.elem_size);
    let mut v = Vec::new();
    v.extend_from_slice(b"PNXG");
    v.extend_from_slice(&1u32.to_le_bytes());
    v.extend_from_slice(&(records.len() as u32).to_le_bytes());
    v.extend_from_slice(&[d, 0, 0, 0]);
    let put = |v: &mut Vec<u8>, x: u64| v.extend_from_slice(&x.to_le_bytes()[..d as usize]);
    for r in records {
        assert_eq!(r.elem_size, d, "mixed element sizes");
        v.push(r.bits);
        v.push(u8::from(r.sign_values));
        v.extend_from_slice(&r.block_size.to_le_bytes());
        v.push(r.kind);
        v.push(r.flags);
        v.extend_from_slice(&r.blocks.to_le_bytes());
        v.extend_from_slice(&r.elements.to_le_bytes());
        v.extend_from_slice(&r.case_id.to_le_bytes());
        for s in [
            r.scale_status,
            r.inverse_status,
            r.compress_status,
            r.decompress_status,
        ] {
            v.extend_from_slice(&s.to_le_bytes());
        }
        for x in [r.bmax, r.scale, r.inverse_scale] {
            put(&mut v, x);
        }
        let constant = r.input.windows(2).all(|w| w[0] == w[1]) && !r.input.is_empty();
        if r.input.is_empty() {
            v.push(2);
        } else if constant {
            v.push(1);
            put(&mut v, r.input[0]);
        } else {
            v.push(0);
            for &x in &r.input {
                put(&mut v, x);
            }
        }
        v.extend_from_slice(&r.compressed);
        let h = match &r.decoded {
            Decoded::Full(e) => fnv1a_elems(e, d),
            Decoded::Hash(h) => *h,
        };
        v.extend_from_slice(&h.to_le_bytes());
    }
    v
}

/// The directory of the full upstream vector set: `$PERNIX_VECTORS_DIR` if set, else
/// `../shared/vectors/pernix` relative to the workspace root. `None` if it does not exist.
pub fn upstream_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("PERNIX_VECTORS_DIR") {
        Some(d) => PathBuf::from(d),
        None => workspace_root().join("../shared/vectors/pernix"),
    };
    dir.is_dir().then_some(dir)
}

/// The committed compact subset directory (`tests/golden/pernix`).
pub fn subset_dir() -> PathBuf {
    workspace_root().join("tests/golden/pernix")
}

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

use fzpack_core::pernix::{
    BitWidth, BlockSize, Dispatcher, Error, PernixFloat, Status, inverse_scale, scale_from_bmax,
};

fn code<T>(r: &Result<T, Error>) -> i32 {
    Status::of(r).code()
}

/// Replays one record on `dispatcher`: the scale helpers (when the record used them), compress
/// into a pre-filled buffer, and decompress of the golden bytes into a pre-filled buffer.
/// Returns a description of every mismatch (empty = the record matches).
pub fn replay(rec: &Record, dispatcher: &Dispatcher) -> Vec<String> {
    match rec.elem_size {
        4 => replay_typed::<f32>(rec, dispatcher),
        _ => replay_typed::<f64>(rec, dispatcher),
    }
}

fn replay_typed<T: PernixFloat>(rec: &Record, d: &Dispatcher) -> Vec<String> {
    let mut bad = Vec::new();
    let id = format!(
        "case {} (N={} BS={} sign={} kind={} blocks={})",
        rec.case_id, rec.bits, rec.block_size, rec.sign_values as u8, rec.kind, rec.blocks
    );
    let bits = BitWidth::new(rec.bits);
    let bs = BlockSize::new(u32::from(rec.block_size));
    let (bits, bs) = match (bits, bs) {
        (Ok(b), Ok(s)) => (b, s),
        (b, s) => {
            let got = if let Err(e) = s { e.code() } else { code(&b) };
            if got != rec.compress_status {
                bad.push(format!(
                    "{id}: parameter status {got}, want {}",
                    rec.compress_status
                ));
            }
            return bad;
        }
    };
    let scale = T::from_bits_u64(rec.scale);
    if rec.flags & 1 != 0 {
        let s = scale_from_bmax(T::from_bits_u64(rec.bmax), bits);
        if code(&s) != rec.scale_status {
            bad.push(format!(
                "{id}: scale status {}, want {}",
                code(&s),
                rec.scale_status
            ));
        } else if let Ok(s) = s
            && s.to_bits_u64() != rec.scale
        {
            bad.push(format!(
                "{id}: scale bits {:#x}, want {:#x}",
                s.to_bits_u64(),
                rec.scale
            ));
        }
    }
    if rec.scale_status == 0 {
        let inv = inverse_scale(scale);
        if code(&inv) != rec.inverse_status {
            bad.push(format!(
                "{id}: inverse status {}, want {}",
                code(&inv),
                rec.inverse_status
            ));
        } else if let Ok(i) = inv
            && i.to_bits_u64() != rec.inverse_scale
        {
            bad.push(format!(
                "{id}: inverse bits {:#x}, want {:#x}",
                i.to_bits_u64(),
                rec.inverse_scale
            ));
        }
    }
    let blocks = usize::from(rec.blocks);
    if rec.compress_status != 99 {
        let input: Vec<T> = rec.input.iter().map(|&b| T::from_bits_u64(b)).collect();
        let mut out = vec![0xA5u8; rec.compressed.len()];
        let r = d.compress_blocks(
            bits,
            bs,
            &input,
            T::from_bits_u64(rec.inverse_scale),
            &mut out,
            blocks,
        );
        if code(&r) != rec.compress_status {
            bad.push(format!(
                "{id}: compress status {}, want {}",
                code(&r),
                rec.compress_status
            ));
        } else if r.is_ok() && out != rec.compressed {
            let at = out
                .iter()
                .zip(&rec.compressed)
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            bad.push(format!(
                "{id}: compressed byte {at} is {:#04x}, want {:#04x}",
                out[at], rec.compressed[at]
            ));
        }
    }
    if rec.decompress_status != 99 {
        let mut out = vec![T::from_bits_u64(0x7ff4_dead_7fa5_a5a5); rec.elements as usize];
        let r = d.decompress_blocks(
            bits,
            bs,
            &rec.compressed,
            scale,
            &mut out,
            blocks,
            rec.sign_values,
        );
        if code(&r) != rec.decompress_status {
            bad.push(format!(
                "{id}: decompress status {}, want {}",
                code(&r),
                rec.decompress_status
            ));
        } else if r.is_ok() {
            let got: Vec<u64> = out.iter().map(|x| x.to_bits_u64()).collect();
            match &rec.decoded {
                Decoded::Full(want) if &got != want => {
                    let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
                    bad.push(format!(
                        "{id}: decoded element {at} bits {:#x}, want {:#x}",
                        got[at], want[at]
                    ));
                }
                Decoded::Hash(h) if fnv1a_elems(&got, rec.elem_size) != *h => {
                    bad.push(format!("{id}: decoded hash mismatch"));
                }
                _ => {}
            }
        }
    }
    bad
}
