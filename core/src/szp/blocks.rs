//! The block-level SZp API: what the one-shot, streaming and parallel encoders share.
//!
//! Encoding: [`plan`] validates the input and resolves the bound; then for each block
//! `b` (values `[b·bs, min((b+1)·bs, n))`) [`block_width`] gives its width byte and
//! [`block_payload_len`] its byte cost; payload offsets are the exclusive prefix sum of the
//! costs, starting after the header and the `nb` width bytes; [`encode_block`] writes one
//! block's payload into its own slice (blocks own disjoint byte ranges, so a parallel driver can
//! encode them independently); [`write_header`] writes the header last.
//!
//! Decoding: [`parse`] validates an archive into an [`ArchiveView`] (header, width bytes,
//! payload); offsets again come from a prefix sum of [`block_payload_len`]; [`decode_block`]
//! decodes one block into its output slice.

use super::Config;
use super::{DType, Error, FORMAT_VERSION, HEADER_LEN, MAGIC, MAX_BLOCK_SIZE, Mode, SzpFloat};
use crate::arch::generic::szp::{ref_decode, ref_encode, ref_width};
use crate::arch::szp::{BlockError, Quant};
use crate::bits::{self, LEVEL_LIMIT};

pub use crate::bits::{quantize, reconstruct};

/// Resolved parameters of one compression.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// Element type.
    pub dtype: DType,
    /// Bound mode.
    pub mode: Mode,
    /// Values per block.
    pub block_size: u32,
    /// Number of values.
    pub n: usize,
    /// The bound as the user gave it (absolute for ABS, a fraction of the range for NOA).
    pub requested: f64,
    /// The absolute bound every element meets: `requested` (ABS) or `requested · range` (NOA).
    pub bound: f64,
    /// The bound the quantizer uses and the archive records (`bound` tightened, see the module
    /// docs; equal to `bound` for stage-compatible configs).
    pub quant_eb: f64,
    /// The value range `max − min` for NOA, else 0.
    pub value_base: f64,
    /// Whether every reconstruction is checked against `bound` while encoding.
    pub strict: bool,
}

impl Plan {
    /// Number of blocks, `ceil(n / block_size)`.
    pub fn blocks(&self) -> usize {
        self.n.div_ceil(self.block_size.max(1) as usize)
    }
    /// The length of block `b`.
    pub fn block_len(&self, b: usize) -> usize {
        let bs = self.block_size as usize;
        self.n.saturating_sub(b.saturating_mul(bs)).min(bs)
    }
    /// Offset of the first payload byte (after header and widths).
    pub fn payload_offset(&self) -> usize {
        HEADER_LEN + self.blocks()
    }
}

/// Validates a config's own fields (block size, bound, `max_abs`): the first check of
/// [`plan`], for drivers that gather the statistics themselves (SIMD paths, GPU).
pub fn check_config(cfg: &Config) -> Result<(), Error> {
    if cfg.block_size == 0 || cfg.block_size > MAX_BLOCK_SIZE {
        return Err(Error::InvalidBlockSize);
    }
    if !(cfg.error_bound.is_finite() && cfg.error_bound > 0.0) {
        return Err(Error::InvalidErrorBound);
    }
    if let Some(m) = cfg.max_abs
        && !(m.is_finite() && m >= 0.0)
    {
        return Err(Error::InvalidErrorBound);
    }
    Ok(())
}

/// Resolves the plan from the config and the data statistics (`range` = max − min for NOA,
/// `max_abs` = the magnitude the tightening must cover).
pub fn resolve(
    dtype: DType,
    cfg: &Config,
    n: usize,
    range: f64,
    max_abs: f64,
) -> Result<Plan, Error> {
    let (bound, value_base) = match cfg.mode {
        Mode::Abs => (cfg.error_bound, 0.0),
        Mode::Noa if n == 0 => (cfg.error_bound, 0.0),
        Mode::Noa => {
            if range == 0.0 {
                return Err(Error::ZeroRange);
            }
            (cfg.error_bound * range, range)
        }
    };
    if !(bound.is_finite() && bound > 0.0) {
        return Err(Error::InvalidErrorBound);
    }
    let quant_eb = if cfg.strict {
        const F64_SLACK: f64 = 8.881_784_197_001_252e-16; // 2^-50
        const F32_SLACK: f64 = 5.960_464_477_539_063e-8; // 2^-24
        // Relative rounding slack, the absolute slack of subnormal results (the smallest
        // subnormal of the type), and the largest finite value of the type.
        let (rel, absolute, limit) = match dtype {
            DType::F32 => (
                F32_SLACK + F64_SLACK,
                1.401_298_464_324_817e-45,
                f64::from(f32::MAX),
            ),
            DType::F64 => (F64_SLACK, f64::from_bits(1), f64::MAX),
        };
        // Reconstructions stay within max|x| + eb: keep that finite in the element type.
        let eb = (bound - (max_abs + bound) * rel - absolute).min(limit - max_abs);
        if eb.is_nan() || eb <= 0.0 {
            return Err(Error::BoundBelowPrecision);
        }
        eb
    } else {
        bound
    };
    Ok(Plan {
        dtype,
        mode: cfg.mode,
        block_size: cfg.block_size,
        n,
        requested: cfg.error_bound,
        bound,
        quant_eb,
        value_base,
        strict: cfg.strict,
    })
}

/// Validates `input` (finite values, `max_abs` if configured, levels in range) and resolves the
/// bound: one pass over the data.
pub fn plan<T: SzpFloat>(input: &[T], cfg: &Config) -> Result<Plan, Error> {
    Ok(plan_mag(input, cfg)?.0)
}

/// [`plan`] and a bound on `|x|` (the configured `max_abs`, else the data's largest magnitude).
pub(crate) fn plan_mag<T: SzpFloat>(input: &[T], cfg: &Config) -> Result<(Plan, f64), Error> {
    check_config(cfg)?;
    let (mut lo, mut hi, mut mag) = (f64::INFINITY, f64::NEG_INFINITY, 0f64);
    for (index, x) in input.iter().enumerate() {
        let v = x.to_f64();
        if !v.is_finite() {
            return Err(Error::NonFinite { index });
        }
        if let Some(m) = cfg.max_abs
            && v.abs() > m
        {
            return Err(Error::ValueOutOfRange { index });
        }
        lo = lo.min(v);
        hi = hi.max(v);
        mag = mag.max(v.abs());
    }
    let range = if input.is_empty() { 0.0 } else { hi - lo };
    let plan = resolve(
        T::DTYPE,
        cfg,
        input.len(),
        range,
        cfg.max_abs.unwrap_or(mag),
    )?;
    if mag / (2.0 * plan.quant_eb) >= LEVEL_LIMIT {
        let index = input
            .iter()
            .position(|x| x.to_f64().abs() / (2.0 * plan.quant_eb) >= LEVEL_LIMIT)
            .unwrap_or(0);
        return Err(Error::LevelOverflow { index });
    }
    Ok((plan, cfg.max_abs.unwrap_or(mag)))
}

/// The width byte of one block: bits of the largest zigzagged delta (0 if all are 0).
pub fn block_width<T: SzpFloat>(plan: &Plan, block: &[T]) -> u8 {
    ref_width(plan.quant_eb, block)
}

/// Payload bytes of a block of `len` values at width `width`: `ceil(len·width / 8)`
/// (the rule itself lives in one place, `crate::bits::payload_len`).
pub fn block_payload_len(width: u8, len: usize) -> usize {
    bits::payload_len(width, len)
}

/// Encodes one block (`first` = index of its first value, for error reports) into `out`,
/// which must be exactly `block_payload_len(width, block.len())` bytes. Pad bits are zero.
/// In strict plans every reconstruction is checked against the bound. (The reference kernel.)
pub fn encode_block<T: SzpFloat>(
    plan: &Plan,
    block: &[T],
    width: u8,
    out: &mut [u8],
    first: usize,
) -> Result<(), Error> {
    let q = Quant {
        eb: plan.quant_eb,
        bound: plan.bound,
        strict: plan.strict,
        max_abs: 0.0,
    };
    ref_encode(&q, block, width, out).map_err(|e| match e {
        BlockError::Violation(i) => Error::BoundViolated { index: first + i },
        BlockError::Short(needed) => Error::OutputTooSmall { needed },
    })
}

/// Decodes one block payload (`block_payload_len(width, out.len())` bytes) into `out`.
/// (The reference kernel.)
pub fn decode_block<T: SzpFloat>(
    quant_eb: f64,
    width: u8,
    payload: &[u8],
    out: &mut [T],
) -> Result<(), Error> {
    if width > 64 {
        return Err(Error::Corrupt("width above 64"));
    }
    if payload.len() != block_payload_len(width, out.len()) {
        return Err(Error::Corrupt("block payload length"));
    }
    ref_decode(quant_eb, width, payload, out);
    Ok(())
}

/// The archive header: the SZpConfig fields plus format data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header {
    /// Element type.
    pub dtype: DType,
    /// Bound mode.
    pub mode: Mode,
    /// Values per block.
    pub block_size: u32,
    /// Number of values.
    pub n: u64,
    /// The absolute bound the quantizer used (what decoding uses).
    pub quant_eb: f64,
    /// The value range (NOA), else 0.
    pub value_base: f64,
    /// The bound as requested (absolute for ABS, relative for NOA).
    pub requested: f64,
    /// Whether the archive was written under the strict promise.
    pub strict: bool,
}

impl Header {
    /// The absolute bound every element meets (strict archives): `requested` for ABS,
    /// `requested · value_base` for NOA.
    pub fn bound(&self) -> f64 {
        match self.mode {
            Mode::Abs => self.requested,
            Mode::Noa => self.requested * self.value_base,
        }
    }

    /// Reads and validates the 48-byte header.
    #[allow(clippy::indexing_slicing)] // constant offsets into a local [u8; HEADER_LEN]
    pub fn read(archive: &[u8]) -> Result<Header, Error> {
        let h = archive.get(..HEADER_LEN).ok_or(Error::Truncated)?;
        let mut a = [0u8; HEADER_LEN];
        a.copy_from_slice(h);
        if a[0..4] != MAGIC {
            return Err(Error::BadMagic);
        }
        if a[4] != FORMAT_VERSION {
            return Err(Error::UnsupportedVersion { version: a[4] });
        }
        let flags = a[5];
        if flags & !1 != 0 || a[6] != 0 || a[7] != 0 {
            return Err(Error::Corrupt("reserved header bits set"));
        }
        let u32_at = |o: usize| u32::from_le_bytes([a[o], a[o + 1], a[o + 2], a[o + 3]]);
        let u64_at = |o: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&a[o..o + 8]);
            u64::from_le_bytes(b)
        };
        let dtype = DType::from_code(a[8]).ok_or(Error::Corrupt("unknown data type"))?;
        let mode = Mode::from_code(a[9]).ok_or(Error::Corrupt("unknown error-bound mode"))?;
        if a[10] != 0 || a[11] != 0 {
            return Err(Error::Corrupt("SZpConfig padding set"));
        }
        let block_size = u32_at(12);
        if block_size == 0 || block_size > MAX_BLOCK_SIZE {
            return Err(Error::Corrupt("block size"));
        }
        let n = u64_at(16);
        let quant_eb = f64::from_bits(u64_at(24));
        let value_base = f64::from_bits(u64_at(32));
        let requested = f64::from_bits(u64_at(40));
        if !(quant_eb.is_finite() && quant_eb > 0.0) {
            return Err(Error::Corrupt("error bound"));
        }
        if !value_base.is_finite() || !requested.is_finite() {
            return Err(Error::Corrupt("non-finite header field"));
        }
        Ok(Header {
            dtype,
            mode,
            block_size,
            n,
            quant_eb,
            value_base,
            requested,
            strict: flags & 1 != 0,
        })
    }
}

/// Writes the header of `plan` into `out[..HEADER_LEN]`.
pub fn write_header(plan: &Plan, out: &mut [u8]) -> Result<(), Error> {
    let dst = out
        .get_mut(..HEADER_LEN)
        .ok_or(Error::OutputTooSmall { needed: HEADER_LEN })?;
    let mut h = [0u8; HEADER_LEN];
    h[0..4].copy_from_slice(&MAGIC);
    h[4] = FORMAT_VERSION;
    h[5] = u8::from(plan.strict);
    // 8..40: the FZGPUModules SZpConfig, verbatim.
    h[8] = plan.dtype.code();
    h[9] = plan.mode.code();
    h[12..16].copy_from_slice(&plan.block_size.to_le_bytes());
    h[16..24].copy_from_slice(&(plan.n as u64).to_le_bytes());
    h[24..32].copy_from_slice(&plan.quant_eb.to_le_bytes());
    h[32..40].copy_from_slice(&plan.value_base.to_le_bytes());
    h[40..48].copy_from_slice(&plan.requested.to_le_bytes());
    dst.copy_from_slice(&h);
    Ok(())
}

/// A validated archive: header, width bytes and payload.
#[derive(Clone, Copy, Debug)]
pub struct ArchiveView<'a> {
    /// The header.
    pub header: Header,
    /// Number of values, as `usize`.
    pub n: usize,
    /// One width byte per block (each <= 64).
    pub widths: &'a [u8],
    /// The block payloads back to back (exactly the length the widths imply).
    pub payload: &'a [u8],
}

impl ArchiveView<'_> {
    /// The length of block `b`.
    pub fn block_len(&self, b: usize) -> usize {
        let bs = self.header.block_size as usize;
        self.n.saturating_sub(b.saturating_mul(bs)).min(bs)
    }
}

/// Validates an archive: header, `ceil(n/bs)` width bytes present (so a hostile `n` is bounded
/// by the archive's own length), every width <= 64, and a payload of exactly the implied size.
pub fn parse(archive: &[u8]) -> Result<ArchiveView<'_>, Error> {
    let header = Header::read(archive)?;
    let rest = archive.get(HEADER_LEN..).ok_or(Error::Truncated)?;
    let bs = u64::from(header.block_size);
    let nb = header.n.div_ceil(bs.max(1));
    if nb > rest.len() as u64 {
        return Err(Error::Truncated);
    }
    let nb = nb as usize; // <= rest.len()
    let n = usize::try_from(header.n).map_err(|_| Error::Corrupt("element count"))?;
    let (widths, payload) = rest.split_at(nb);
    let mut total: u64 = 0;
    for (b, &w) in widths.iter().enumerate() {
        if w > 64 {
            return Err(Error::Corrupt("width above 64"));
        }
        let len = header.n.saturating_sub(b as u64 * bs).min(bs);
        total += (len * u64::from(w)).div_ceil(8);
    }
    if total > payload.len() as u64 {
        return Err(Error::Truncated);
    }
    if total < payload.len() as u64 {
        return Err(Error::Corrupt("trailing bytes after the payload"));
    }
    Ok(ArchiveView {
        header,
        n,
        widths,
        payload,
    })
}
