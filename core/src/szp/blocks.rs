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

/// Quantized levels must stay below this magnitude (so deltas fit in i64 without wrapping).
const LEVEL_LIMIT: f64 = 4_611_686_018_427_387_904.0; // 2^62

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
    Ok(plan)
}

/// The quantized level of `x` (spec §1.2: f64 division, round half away from zero).
#[inline(always)]
pub fn quantize<T: SzpFloat>(x: T, eb: f64) -> i64 {
    round_half_away(x.to_f64() / (2.0 * eb))
}

/// `llround` for `|v| < 2^62` (guaranteed by [`plan`]): exact, without a libm call. The
/// integer part is exact, so is `a − trunc(a)`, and ties (`frac == 0.5`) go away from zero.
/// Signed conversions (one instruction each way on x86_64, unlike u64's) suffice below 2^62;
/// larger magnitudes saturate.
#[inline(always)]
fn round_half_away(v: f64) -> i64 {
    let a = v.abs();
    let i = a as i64;
    let r = i.saturating_add(i64::from(a - i as f64 >= 0.5));
    if v < 0.0 { r.wrapping_neg() } else { r }
}

/// The reconstruction of level `q` (spec §1.7: `(q·2)·eb`, then the element type).
#[inline(always)]
pub fn reconstruct<T: SzpFloat>(q: i64, eb: f64) -> T {
    T::from_f64(q as f64 * 2.0 * eb)
}

#[inline(always)]
fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

#[inline(always)]
fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// The width byte of one block: bits of the largest zigzagged delta (0 if all are 0).
pub fn block_width<T: SzpFloat>(plan: &Plan, block: &[T]) -> u8 {
    let mut prev = 0i64;
    let mut any = 0u64;
    for &x in block {
        let q = quantize(x, plan.quant_eb);
        any |= zigzag(q.wrapping_sub(prev));
        prev = q;
    }
    (64 - any.leading_zeros()) as u8
}

/// Payload bytes of a block of `len` values at width `width`: `ceil(len·width / 8)`.
pub fn block_payload_len(width: u8, len: usize) -> usize {
    // len <= 4096 and width <= 64 in valid archives; saturate for hostile ones.
    len.saturating_mul(usize::from(width)).div_ceil(8)
}

/// Encodes one block (`first` = index of its first value, for error reports) into `out`,
/// which must be exactly `block_payload_len(width, block.len())` bytes. Pad bits are zero.
/// In strict plans every reconstruction is checked against the bound.
pub fn encode_block<T: SzpFloat>(
    plan: &Plan,
    block: &[T],
    width: u8,
    out: &mut [u8],
    first: usize,
) -> Result<(), Error> {
    if out.len() != block_payload_len(width, block.len()) || width > 64 {
        return Err(Error::OutputTooSmall {
            needed: block_payload_len(width, block.len()),
        });
    }
    let w = u32::from(width);
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let mut bits = BitWriter {
        out,
        pos: 0,
        acc: 0,
        have: 0,
    };
    let mut prev = 0i64;
    for (i, &x) in block.iter().enumerate() {
        let q = quantize(x, plan.quant_eb);
        if plan.strict {
            let err = (x.to_f64() - reconstruct::<T>(q, plan.quant_eb).to_f64()).abs();
            if err.is_nan() || err > plan.bound {
                return Err(Error::BoundViolated { index: first + i });
            }
        }
        let u = zigzag(q.wrapping_sub(prev)) & mask;
        prev = q;
        if w > 0 {
            bits.put(u, w);
        }
    }
    bits.flush();
    Ok(())
}

struct BitWriter<'a> {
    out: &'a mut [u8],
    pos: usize,
    acc: u128,
    have: u32,
}

impl BitWriter<'_> {
    #[inline(always)]
    fn put(&mut self, v: u64, w: u32) {
        self.acc |= u128::from(v) << self.have;
        self.have += w;
        if self.have >= 64 {
            let word = (self.acc as u64).to_le_bytes();
            if let Some(dst) = self.out.get_mut(self.pos..self.pos + 8) {
                dst.copy_from_slice(&word);
            }
            self.pos += 8;
            self.acc >>= 64;
            self.have -= 64;
        }
    }
    fn flush(&mut self) {
        let bytes = (self.acc as u64).to_le_bytes();
        let n = self.have.div_ceil(8) as usize;
        if let Some(dst) = self.out.get_mut(self.pos..) {
            for (d, b) in dst.iter_mut().zip(bytes.iter().take(n)) {
                *d = *b;
            }
        }
    }
}

/// Decodes one block payload (`block_payload_len(width, out.len())` bytes) into `out`.
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
    if width == 0 {
        out.fill(reconstruct(0, quant_eb));
        return Ok(());
    }
    let w = u32::from(width);
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let mut q = 0i64;
    let mut start = 0usize;
    if w <= 56 {
        // Each field lies inside the 8 bytes starting at its first byte: one unaligned load per
        // value while 8 bytes remain, no carried bit state.
        let wz = w as usize;
        for (i, o) in out.iter_mut().enumerate() {
            let bit = i * wz;
            let Some(src) = payload.get(bit / 8..bit / 8 + 8) else {
                break;
            };
            let mut b = [0u8; 8];
            b.copy_from_slice(src);
            let u = (u64::from_le_bytes(b) >> (bit % 8)) & mask;
            q = q.wrapping_add(unzigzag(u));
            *o = reconstruct(q, quant_eb);
            start = i + 1;
        }
    }
    let mut pos = start * w as usize / 8;
    let mut acc: u128 = 0;
    let mut have: u32 = 0;
    // Skip the bits of a partly consumed first byte.
    let skip = (start * w as usize % 8) as u32;
    if skip != 0 {
        acc = u128::from(payload.get(pos).copied().unwrap_or(0) >> skip);
        have = 8 - skip;
        pos += 1;
    }
    for o in out.iter_mut().skip(start) {
        if have < w {
            // Refill 8 bytes at a time where possible, else the last few.
            let mut word = [0u8; 8];
            let take = payload.len().saturating_sub(pos).min(8);
            if let Some(src) = payload.get(pos..pos + take) {
                word[..take].copy_from_slice(src);
            }
            acc |= u128::from(u64::from_le_bytes(word)) << have;
            have += 8 * take as u32;
            pos += take;
        }
        let u = (acc as u64) & mask;
        acc >>= w;
        have = have.saturating_sub(w);
        q = q.wrapping_add(unzigzag(u));
        *o = reconstruct(q, quant_eb);
    }
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
