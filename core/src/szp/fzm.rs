//! FZGPUModules interop: a single-stage SZp `.fzm` archive (FZM v3.1, spec `szp.md` §2).
//!
//! Layout written by [`write()`] (all little-endian):
//!
//! ```text
//! [FZMHeaderCore 80 B][FZMStageInfo 256 B][FZMBufferEntry 256 B]   = 592-byte header
//! [SZp stage output: nb width bytes, block payloads][zeros to a multiple of 16]
//! ```
//!
//! * core: magic `32 5A 4D 46`, version 0x0301, 1 buffer, uncompressed size `n·sizeof(T)`,
//!   compressed size = padded payload length, header size 592, 1 stage, 1 source, flags 3
//!   (data and header CRC valid), `source_uncompressed_sizes = [n·sizeof(T), 0, 0, 0]`, data
//!   CRC-32 of the padded payload, header CRC-32 of the 592 header bytes with that field 0;
//! * stage record: type 37 (SZP), version 1, 1 input / 1 output, `stage_flags` = 1
//!   (`PRIMARY_SOURCE`), input ids `[1, 0xFFFF×7]`, output ids `[0, 0xFFFF×7]`, the 32-byte
//!   SZpConfig (spec §1.10) at offset 40, config size 32;
//! * buffer record: stage 37 v1, data type 0 (u8), producer output 0, DAG buffer id 0, name
//!   `"output"`, data size = stage output size, allocated size `nb + 8n + 64` (the stage's own
//!   estimate), uncompressed size = data size, byte offset 0, the SZpConfig again, size 32.
//!
//! The SZpConfig's `error_bound` is the bound the quantizer used: with a strict [`Config`] it is
//! the tightened bound (so the strict promise also holds for FZM archives decoded by
//! FZGPUModules), with [`Config::stage_compatible`] the bound itself (byte-identical to what the
//! FZGPUModules stage computes, pad bits aside).
//!
//! [`read`] accepts what FZGPUModules writes for a single SZp stage: v3.1, exactly one stage and
//! one buffer, stage type 37, CRCs checked when their flag bits are set, `block_size` 0 read as
//! 128 (the upstream reader's quirk), pad bits ignored. Every field is validated; a hostile
//! archive gives an error, never a panic, and the work is proportional to the archive and output
//! sizes.
//!
//! CRC-32 is the zlib/IEEE polynomial (reflected 0xEDB88320, init and final xor 0xFFFFFFFF),
//! hand-written here (slice-by-8 tables built at compile time) because the core has no
//! dependencies beyond `libm`; it is checked against zlib's check value and the Python
//! reference vector in the tests.

use super::archive::ArchiveWriter;
use super::blocks::{self, Grid, Header};
use super::ranges::{self, Serial, on_path};
use super::{Config, DType, Error, Kernel, MAX_BLOCK_SIZE, Mode, SzpFloat};
use crate::arch::szp::{Run, SzpKernel};

/// Bytes of the FZM header for one stage and one buffer: 80 + 256 + 256.
pub const FZM_HEADER_LEN: usize = 592;
/// FZM magic as stored (`0x464D5A32` little-endian).
pub const FZM_MAGIC: [u8; 4] = [0x32, 0x5A, 0x4D, 0x46];
/// FZM version 3.1.
pub const FZM_VERSION: u16 = 0x0301;
/// FZGPUModules `StageType::SZP`.
pub const STAGE_SZP: u16 = 37;

const CORE_LEN: usize = 80;
const STAGE_OFF: usize = CORE_LEN;
const BUF_OFF: usize = CORE_LEN + 256;
const CONFIG_LEN: usize = 32;

/// Largest FZM archive for `n` values of `dtype` at `block_size`: header, width bytes, 8 bytes
/// per value, 16-byte padding. `None` on overflow or an invalid block size.
pub fn max_fzm_len(n: usize, block_size: u32, dtype: DType) -> Option<usize> {
    let _ = dtype; // widths reach 64 for both types
    if block_size == 0 || block_size > MAX_BLOCK_SIZE {
        return None;
    }
    let stage = n
        .div_ceil(block_size as usize)
        .checked_add(n.checked_mul(8)?)?;
    FZM_HEADER_LEN.checked_add(stage.checked_add(15)? & !15)
}

/// The SZp stage configuration of an FZM archive (the 32-byte SZpConfig, validated).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StageConfig {
    /// Element type.
    pub dtype: DType,
    /// Bound mode (informational: decoding uses only `error_bound`).
    pub mode: Mode,
    /// Values per block (0 in the file is read as 128).
    pub block_size: u32,
    /// Number of values.
    pub n: u64,
    /// The absolute bound the quantizer used.
    pub error_bound: f64,
    /// The value range (NOA), else 0.
    pub value_base: f64,
}

/// Compresses `input` into a single-stage `.fzm` archive in `out`; returns its length.
///
/// Errors are those of [`super::compress`], plus [`Error::Corrupt`] naming the limit when the
/// stage output would reach 4 GiB (FZGPUModules uses 32-bit block offsets). `out` must hold the
/// exact archive size (at most [`max_fzm_len`]); if it does not, [`Error::OutputTooSmall`] is
/// returned and nothing is written past `out`.
pub fn write<T: SzpFloat>(input: &[T], cfg: &Config, out: &mut [u8]) -> Result<usize, Error> {
    on_path!(Kernel::best(), k => write_on(k, input, cfg, out))
}

fn write_on<K: SzpKernel, T: SzpFloat>(
    k: K,
    input: &[T],
    cfg: &Config,
    out: &mut [u8],
) -> Result<usize, Error> {
    // The version 1 grid rule (tightening for the data's max|x|): `.fzm` output is unchanged.
    let (mut plan, max_abs, _) = ranges::plan_grid(k, &Serial, input, cfg, Grid::Data, false)?;
    if plan.missing {
        // The stage format has no place for missing values.
        let index = input.iter().position(|x| x.is_missing()).unwrap_or(0);
        return Err(Error::NonFinite { index });
    }
    // Nor for a shape: the container holds a flat run of values.
    plan.shape = super::Shape::NONE;
    let nb = plan.blocks();
    // The stage body (widths, then payload) is the archive layer's; the container is FZM's.
    let writer = ArchiveWriter::for_token(&plan, max_abs);
    // Sizing pass (no writes): the exact stage output size.
    let stage_len = writer.stage_body_len_on(k, input);
    if stage_len as u64 >= 1 << 32 {
        return Err(Error::Corrupt(
            "stage output of 4 GiB or more (FZM offsets are 32-bit)",
        ));
    }
    let padded = (stage_len + 15) & !15;
    let total = FZM_HEADER_LEN + padded;
    let out = out
        .get_mut(..total)
        .ok_or(Error::OutputTooSmall { needed: total })?;
    let (hdr, body) = out.split_at_mut(FZM_HEADER_LEN);
    let pos = writer.stage_body_on(k, input, FZM_HEADER_LEN, body)?;
    if let Some(pad) = body.get_mut(pos..) {
        pad.fill(0);
    }

    let mut cfg_bytes = [0u8; CONFIG_LEN];
    cfg_bytes[0] = plan.dtype.code();
    cfg_bytes[1] = plan.mode.code();
    put(&mut cfg_bytes, 4, &plan.block_size.to_le_bytes());
    put(&mut cfg_bytes, 8, &(plan.n as u64).to_le_bytes());
    put(&mut cfg_bytes, 16, &plan.quant_eb.to_le_bytes());
    put(&mut cfg_bytes, 24, &plan.value_base.to_le_bytes());

    let input_bytes = (plan.n as u64) * plan.dtype.size() as u64;
    let mut h = [0u8; FZM_HEADER_LEN];
    // Core.
    put(&mut h, 0, &FZM_MAGIC);
    put(&mut h, 4, &FZM_VERSION.to_le_bytes());
    put(&mut h, 6, &1u16.to_le_bytes());
    put(&mut h, 8, &input_bytes.to_le_bytes());
    put(&mut h, 16, &(padded as u64).to_le_bytes());
    put(&mut h, 24, &(FZM_HEADER_LEN as u64).to_le_bytes());
    put(&mut h, 32, &1u32.to_le_bytes());
    put(&mut h, 36, &1u16.to_le_bytes());
    put(&mut h, 38, &3u16.to_le_bytes());
    put(&mut h, 40, &input_bytes.to_le_bytes());
    put(&mut h, 72, &crc32(body).to_le_bytes());
    // Stage record.
    let s = STAGE_OFF;
    put(&mut h, s, &STAGE_SZP.to_le_bytes());
    put(&mut h, s + 2, &1u16.to_le_bytes());
    put(&mut h, s + 4, &[1]);
    put(&mut h, s + 5, &[1]);
    put(&mut h, s + 6, &1u16.to_le_bytes());
    for k in 0..8 {
        let (inp, outp) = if k == 0 {
            (1u16, 0u16)
        } else {
            (0xFFFF, 0xFFFF)
        };
        put(&mut h, s + 8 + 2 * k, &inp.to_le_bytes());
        put(&mut h, s + 24 + 2 * k, &outp.to_le_bytes());
    }
    put(&mut h, s + 40, &cfg_bytes);
    put(&mut h, s + 168, &(CONFIG_LEN as u32).to_le_bytes());
    // Buffer record.
    let b = BUF_OFF;
    put(&mut h, b, &STAGE_SZP.to_le_bytes());
    put(&mut h, b + 2, &1u16.to_le_bytes());
    put(&mut h, b + 8, b"output");
    let allocated = (nb as u64) + 8 * plan.n as u64 + 64;
    put(&mut h, b + 72, &(stage_len as u64).to_le_bytes());
    put(&mut h, b + 80, &allocated.to_le_bytes());
    put(&mut h, b + 88, &(stage_len as u64).to_le_bytes());
    put(&mut h, b + 104, &cfg_bytes);
    put(&mut h, b + 232, &(CONFIG_LEN as u32).to_le_bytes());
    let hcrc = crc32(&h);
    put(&mut h, 76, &hcrc.to_le_bytes());
    hdr.copy_from_slice(&h);
    Ok(total)
}

/// Writes `bytes` at `off` of a fixed-size header buffer (offsets are constants inside it).
fn put(h: &mut [u8], off: usize, bytes: &[u8]) {
    if let Some(d) = h.get_mut(off..off + bytes.len()) {
        d.copy_from_slice(bytes);
    }
}

fn u16_at(a: &[u8], o: usize) -> Result<u16, Error> {
    let s = a.get(o..o + 2).ok_or(Error::Truncated)?;
    Ok(u16::from_le_bytes(
        s.try_into().map_err(|_| Error::Truncated)?,
    ))
}

fn u32_at(a: &[u8], o: usize) -> Result<u32, Error> {
    let s = a.get(o..o + 4).ok_or(Error::Truncated)?;
    Ok(u32::from_le_bytes(
        s.try_into().map_err(|_| Error::Truncated)?,
    ))
}

fn u64_at(a: &[u8], o: usize) -> Result<u64, Error> {
    let s = a.get(o..o + 8).ok_or(Error::Truncated)?;
    let mut b = [0u8; 8];
    b.copy_from_slice(s);
    Ok(u64::from_le_bytes(b))
}

fn parse_config(c: &[u8]) -> Result<StageConfig, Error> {
    let dtype = DType::from_code(*c.first().ok_or(Error::Truncated)?)
        .ok_or(Error::Corrupt("unknown SZpConfig data type"))?;
    // Readers use only abs_eb, bs, n and T; eb_mode is informational (1 is unused upstream).
    let mode = match c.get(1) {
        Some(2) => Mode::Noa,
        _ => Mode::Abs,
    };
    let mut block_size = u32_at(c, 4)?;
    if block_size == 0 {
        block_size = 128; // the upstream reader's mapping
    }
    if block_size > MAX_BLOCK_SIZE {
        return Err(Error::Corrupt("SZpConfig block size above 4096"));
    }
    let n = u64_at(c, 8)?;
    let error_bound = f64::from_bits(u64_at(c, 16)?);
    let value_base = f64::from_bits(u64_at(c, 24)?);
    if !(error_bound.is_finite() && error_bound > 0.0) {
        return Err(Error::Corrupt("SZpConfig error bound"));
    }
    Ok(StageConfig {
        dtype,
        mode,
        block_size,
        n,
        error_bound,
        value_base,
    })
}

/// A validated single-stage SZp `.fzm`: its config and the stage output (widths + payloads).
struct FzmView<'a> {
    config: StageConfig,
    stage: &'a [u8],
}

fn parse(archive: &[u8]) -> Result<FzmView<'_>, Error> {
    let core = archive.get(..CORE_LEN).ok_or(Error::Truncated)?;
    if core.get(0..4) != Some(&FZM_MAGIC[..]) {
        return Err(Error::BadMagic);
    }
    let version = u16_at(core, 4)?;
    if version != FZM_VERSION {
        return Err(Error::UnsupportedVersion {
            version: (version >> 8) as u8,
        });
    }
    let num_buffers = u16_at(core, 6)?;
    let compressed = u64_at(core, 16)?;
    let header_size = u64_at(core, 24)?;
    let num_stages = u32_at(core, 32)?;
    let flags = u16_at(core, 38)?;
    if num_stages != 1 || num_buffers != 1 {
        return Err(Error::Corrupt(
            "FZM: not a single-stage, single-buffer archive",
        ));
    }
    if header_size != FZM_HEADER_LEN as u64 {
        return Err(Error::Corrupt("FZM: header size"));
    }
    let header = archive.get(..FZM_HEADER_LEN).ok_or(Error::Truncated)?;
    if flags & 2 != 0 {
        let stored = u32_at(header, 76)?;
        let mut h = [0u8; FZM_HEADER_LEN];
        h.copy_from_slice(header);
        put(&mut h, 76, &[0; 4]);
        if crc32(&h) != stored {
            return Err(Error::Corrupt("FZM: header CRC-32 mismatch"));
        }
    }
    let body_all = archive.get(FZM_HEADER_LEN..).ok_or(Error::Truncated)?;
    if compressed > body_all.len() as u64 {
        return Err(Error::Truncated);
    }
    let body = body_all
        .get(..compressed as usize)
        .ok_or(Error::Truncated)?;
    if flags & 1 != 0 && crc32(body) != u32_at(header, 72)? {
        return Err(Error::Corrupt("FZM: data CRC-32 mismatch"));
    }
    let st = header.get(STAGE_OFF..BUF_OFF).ok_or(Error::Truncated)?;
    let buf = header.get(BUF_OFF..).ok_or(Error::Truncated)?;
    if u16_at(st, 0)? != STAGE_SZP || u16_at(buf, 0)? != STAGE_SZP {
        return Err(Error::Corrupt("FZM: stage type is not SZp (37)"));
    }
    if u32_at(st, 168)? < CONFIG_LEN as u32 || st.get(168..172) != buf.get(232..236) {
        return Err(Error::Corrupt("FZM: SZpConfig size"));
    }
    // The stage's output buffer id must be the buffer entry's DAG id.
    if u16_at(st, 24)? != u16_at(buf, 6)? {
        return Err(Error::Corrupt(
            "FZM: buffer id does not match the stage output",
        ));
    }
    let config = parse_config(st.get(40..40 + CONFIG_LEN).ok_or(Error::Truncated)?)?;
    let data_size = u64_at(buf, 72)?;
    let offset = u64_at(buf, 96)?;
    let end = offset
        .checked_add(data_size)
        .ok_or(Error::Corrupt("FZM: segment"))?;
    if end > body.len() as u64 {
        return Err(Error::Truncated);
    }
    let stage = body
        .get(offset as usize..end as usize)
        .ok_or(Error::Truncated)?;
    Ok(FzmView { config, stage })
}

/// Reads the SZp stage configuration of a single-stage `.fzm` archive (validating the header,
/// the CRCs and the segment bounds, not the payload).
pub fn config(archive: &[u8]) -> Result<StageConfig, Error> {
    Ok(parse(archive)?.config)
}

/// The [`Header`] view of an FZM archive's config (`requested` is the recorded bound, relative
/// for NOA; `strict` is false because the FZM format cannot say; `version` is 0: not an fzpack
/// archive header).
pub fn header(archive: &[u8]) -> Result<Header, Error> {
    let c = config(archive)?;
    let requested = match c.mode {
        Mode::Noa if c.value_base > 0.0 => c.error_bound / c.value_base,
        _ => c.error_bound,
    };
    Ok(Header {
        version: 0,
        layout: super::LAYOUT_FZGM,
        chunk_shift: 0,
        dtype: c.dtype,
        mode: c.mode,
        block_size: c.block_size,
        n: c.n,
        quant_eb: c.error_bound,
        value_base: c.value_base,
        requested,
        strict: false,
        ext: 0,
        missing: false,
        missing_count: 0,
        rank: 0,
    })
}

/// Decompresses a single-stage SZp `.fzm` archive into `out`; returns the number of values.
///
/// Errors: [`Error::BadMagic`], [`Error::UnsupportedVersion`] (anything but v3.1),
/// [`Error::Truncated`], [`Error::Corrupt`] (CRC mismatch, wrong stage/buffer counts or type,
/// widths above 64, a stage output longer than its widths imply, ...),
/// [`Error::DTypeMismatch`], [`Error::OutputTooSmall`] (`out` shorter than `n`).
pub fn read<T: SzpFloat>(archive: &[u8], out: &mut [T]) -> Result<usize, Error> {
    let v = parse(archive)?;
    let c = v.config;
    if c.dtype != T::DTYPE {
        return Err(Error::DTypeMismatch);
    }
    let bs = u64::from(c.block_size);
    let nb = c.n.div_ceil(bs);
    if nb > v.stage.len() as u64 {
        return Err(Error::Truncated);
    }
    let (widths, payload) = v.stage.split_at(nb as usize);
    let n = usize::try_from(c.n).map_err(|_| Error::Corrupt("element count"))?;
    let total = blocks::body_len(widths, bs as usize, n, 0, &[])?;
    if total > payload.len() {
        return Err(Error::Truncated);
    }
    if total < payload.len() {
        return Err(Error::Corrupt("trailing bytes after the stage payload"));
    }
    let out = out
        .get_mut(..n)
        .ok_or(Error::OutputTooSmall { needed: n })?;
    let (eb, bs) = (c.error_bound, bs as usize);
    let run = Run {
        bs,
        group: 0,
        finite: true,
        missing: false,
    };
    on_path!(Kernel::best(), k => ranges::decode_range(k, &Serial, eb, run, widths, payload, out))?;
    Ok(n)
}

/// Continues a CRC-32 (zlib/IEEE): `crc32_update(0, a ++ b) == crc32_update(crc32_update(0, a), b)`.
/// (`crate::crc`: crc32fast on x86_64/aarch64, a table-free loop on microcontrollers.)
pub fn crc32_update(crc: u32, data: &[u8]) -> u32 {
    let mut h = crate::crc::Crc32::new_with_initial(crc);
    h.update(data);
    h.finalize()
}

/// CRC-32 (zlib/IEEE polynomial, init and final xor 0xFFFFFFFF) of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    crate::crc::hash(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_values() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        let data: [u8; 37] = core::array::from_fn(|i| (i * 37 + 11) as u8);
        // Bit-at-a-time reference of the reflected polynomial.
        let mut bytewise = 0xFFFF_FFFFu32;
        for &b in &data {
            bytewise ^= u32::from(b);
            for _ in 0..8 {
                bytewise = if bytewise & 1 != 0 {
                    0xEDB8_8320 ^ (bytewise >> 1)
                } else {
                    bytewise >> 1
                };
            }
        }
        assert_eq!(crc32(&data), !bytewise);
        assert_eq!(crc32_update(crc32(&data[..13]), &data[13..]), crc32(&data));
    }
}
