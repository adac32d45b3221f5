//! The SZp archive's rules below the layout: the plan ([`plan`], [`resolve`]: validation,
//! the bound and its strict tightening), the header ([`Header`], [`write_header`]), the
//! lengths of a run of blocks ([`body_len`] and the chunk walk: payloads and, in the block-head
//! layout, head trailers), the chunk CRC ([`chunk_sum`]) and the parse of an archive into an
//! [`ArchiveView`] ([`parse_frame`], [`parse`]).
//!
//! Where the header, the width bytes, the payload and the chunk CRCs go, and the order in
//! which they are written and checked, is the archive layer's ([`super::archive`]); the block
//! loops are the engine's ([`super::engine`]), over the kernels of `crate::arch`.

use super::missing::{self, Missing};
use super::{CHUNK_TARGET_VALUES, Config, FORMAT_VERSION_V1, HEADER_LEN_V1, LAYOUT_FZGM, Verify};
use super::{DType, Error, FORMAT_VERSION, HEADER_LEN, MAGIC, MAX_BLOCK_SIZE, Mode, SzpFloat};
use super::{
    FLAG_MISSING, FLAG_SHAPE, FORMAT_VERSION_V3, LAYOUT_HEADS, LAYOUT_INTERP, Layout, Shape,
};
use crate::bits;

pub use crate::bits::{quantize, reconstruct};

/// Whether this build reads and writes the format 3 extension: missing values and shapes
/// (crate feature `missing-and-shape`).
pub(crate) const MISSING_VALUES: bool = cfg!(feature = "missing-and-shape");

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
    /// The block layout.
    pub layout: Layout,
    /// Some value is missing (NaN or ±inf): the archive stores them in its extension
    /// (format version 3) and the blocks hold stand-ins.
    pub missing: bool,
    /// The array's shape, stored in the extension ([`Shape::NONE`]: none).
    pub shape: Shape,
}

impl Plan {
    /// The header flags of the extension (0: none, a version 2 archive).
    pub fn ext_flags(&self) -> u8 {
        missing::flags(&self.shape, self.missing)
    }
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
    /// `s`: every checksum chunk holds `2^s` blocks ([`chunk_shift`]).
    pub fn chunk_shift(&self) -> u8 {
        chunk_shift(self.block_size)
    }
    /// Bytes of the chunk CRCs that close the archive ([`sums_len`]).
    pub fn sums_len(&self) -> usize {
        sums_len(self.blocks(), self.chunk_shift())
    }
    /// Blocks per head group ([`Layout::Heads`]: `bits::head_group(chunk_shift)`), 0 for
    /// [`Layout::Fzgm`] (no heads).
    pub fn head_group(&self) -> usize {
        match self.layout {
            // no plan has the interpolation layout (`check_config` refuses it)
            Layout::Fzgm | Layout::Interp => 0,
            Layout::Heads => bits::head_group(self.chunk_shift()),
        }
    }
}

/// The body bytes of a run of blocks: their payloads and, where `group > 0` (the block-head
/// layout, `group` blocks per head group; the run starts on a group boundary), each group's
/// head trailer, whose width byte is read from `body` (the run's bytes from its start).
/// `n` values in all, `bs` per block, the last block possibly shorter. Errors: a width above
/// 64 ([`Error::Corrupt`]) or a trailer past the end of `body` ([`Error::Truncated`]).
pub fn body_len(
    widths: &[u8],
    bs: usize,
    n: usize,
    group: usize,
    body: &[u8],
) -> Result<usize, Error> {
    let bs = bs.max(1);
    if let Some(cost) = PieceCost::new(widths.len(), bs, n, group) {
        // Every block full but the last, whole bytes per value step: each piece (a head group,
        // or the whole run in the stage layout) is a branch-free sum and max of its widths.
        let mut total = 0usize;
        for (k, g) in pieces(widths, cost.piece).enumerate() {
            total = total.saturating_add(cost.of(k, g)?);
            if group > 0 {
                let hw = *body.get(total).ok_or(Error::Truncated)?;
                total = total.saturating_add(trailer_bytes(hw, g.len())?);
            }
        }
        return Ok(total);
    }
    let mut rem = n;
    let mut total = 0usize;
    for g in pieces(widths, group.max(1)) {
        let mut cnt = 0usize;
        for &w in g {
            if w > 64 {
                return Err(Error::Corrupt("width above 64"));
            }
            let len = rem.min(bs);
            total = total.saturating_add(bits::payload_len(w, len));
            rem -= len;
            cnt += 1;
        }
        if group > 0 {
            let hw = *body.get(total).ok_or(Error::Truncated)?;
            total = total.saturating_add(trailer_bytes(hw, cnt)?);
        }
    }
    Ok(total)
}

/// The length of a head trailer of `cnt` heads whose width byte is `hw`.
fn trailer_bytes(hw: u8, cnt: usize) -> Result<usize, Error> {
    if hw > 64 {
        return Err(Error::Corrupt("head width above 64"));
    }
    Ok(bits::trailer_len(hw, cnt))
}

/// Payload bytes of the pieces of a run whose blocks are all full but the last and hold whole
/// bytes per 8 values (`bs % 8 == 0`): what every archive and each of its chunks is. A piece is
/// a head group (`group > 0`) or the whole run; its payload is `bs/8 · Σw`, the last block's
/// term corrected to `ceil(last·w/8)`.
#[derive(Clone, Copy)]
struct PieceCost {
    bs8: usize,
    piece: usize,
    nb: usize,
    last: usize,
}

/// Whether [`body_len`] and [`chunk_walk`] take their per-piece paths: on the 64-bit hosts,
/// where the walks run over archives much larger than the caches. On microcontrollers (and
/// with feature `small`) the per-block loop alone keeps the decoder's `.text` as it was.
const PIECE_WALK: bool = !cfg!(any(
    feature = "small",
    not(any(target_arch = "x86_64", target_arch = "aarch64"))
));

impl PieceCost {
    fn new(nb: usize, bs: usize, n: usize, group: usize) -> Option<PieceCost> {
        if !PIECE_WALK {
            return None;
        }
        let last = n.checked_sub(bs.saturating_mul(nb.checked_sub(1)?))?;
        (last <= bs && bs.is_multiple_of(8)).then_some(PieceCost {
            bs8: bs / 8,
            piece: if group == 0 { nb } else { group },
            nb,
            last,
        })
    }

    /// Payload bytes of piece `k` (widths `g`); a width above 64 is corrupt.
    #[inline]
    fn of(self, k: usize, g: &[u8]) -> Result<usize, Error> {
        let (sum, max) = g
            .iter()
            .fold((0usize, 0u8), |(t, m), &w| (t + usize::from(w), m.max(w)));
        if max > 64 {
            return Err(Error::Corrupt("width above 64"));
        }
        let mut c = sum.saturating_mul(self.bs8);
        if k.saturating_add(1).saturating_mul(self.piece) >= self.nb
            && let Some(&w) = g.last()
        {
            // c >= bs8·w: the term is part of the sum.
            c = c - self.bs8 * usize::from(w) + bits::payload_len(w, self.last);
        }
        Ok(c)
    }
}

/// The body length and CRC ([`chunk_sum`]) of checksum chunk `chunk` (`widths`, `n` values,
/// `bs` per block, head groups of `group` blocks; `body` from the chunk's start), in one pass:
/// each group's payload is added to the CRC before its trailer's width byte is read, so that
/// byte is in cache (a cold archive's trailers would otherwise be a chain of cache misses).
pub(crate) fn chunk_walk(
    chunk: u32,
    widths: &[u8],
    bs: usize,
    n: usize,
    group: usize,
    body: &[u8],
) -> Result<(usize, u32), Error> {
    let Some(cost) = PieceCost::new(widths.len(), bs.max(1), n, group).filter(|_| group > 0) else {
        let len = body_len(widths, bs, n, group, body)?;
        let p = body.get(..len).ok_or(Error::Truncated)?;
        return Ok((len, chunk_sum(chunk, widths, p)));
    };
    let mut h = crate::crc::Crc32::new();
    h.update(&chunk.to_le_bytes());
    h.update(widths);
    let mut off = 0usize;
    for (k, g) in pieces(widths, cost.piece).enumerate() {
        let end = off.saturating_add(cost.of(k, g)?);
        h.update(body.get(off..end).ok_or(Error::Truncated)?);
        let hw = *body.get(end).ok_or(Error::Truncated)?;
        let t = end.saturating_add(trailer_bytes(hw, g.len())?);
        h.update(body.get(end..t).ok_or(Error::Truncated)?);
        off = t;
    }
    Ok((off, h.finalize()))
}

/// The writer's chunk shift for a block size: the smallest `s` with
/// `2^s · block_size >= CHUNK_TARGET_VALUES` (16384 values; `s = 7` at block size 128).
pub fn chunk_shift(block_size: u32) -> u8 {
    let bs = block_size.max(1) as usize;
    let mut s = 0u8;
    while (bs << s) < CHUNK_TARGET_VALUES {
        s += 1;
    }
    s
}

/// Bytes of the chunk CRCs of `nb` blocks in chunks of `2^shift` blocks: 4 per chunk.
pub fn sums_len(nb: usize, shift: u8) -> usize {
    let c = (1usize << shift.min(31)).max(1); // .max(1): provably non-zero, no panic path
    nb.div_ceil(c).saturating_mul(4)
}

/// Payload bytes of a run of blocks (`widths`, `n` values in all, `bs` per block, the last
/// possibly shorter).
pub fn run_bytes(widths: &[u8], bs: usize, n: usize) -> usize {
    let mut rem = n;
    let mut total = 0usize;
    for &w in widths {
        let len = rem.min(bs);
        total += bits::payload_len(w, len);
        rem -= len;
    }
    total
}

/// `s` in pieces of `c` bytes (the last one shorter). Unlike `slice::chunks` it keeps no
/// division in a size hint, so no divide-by-zero panic path reaches firmware builds.
pub(crate) fn pieces(s: &[u8], c: usize) -> impl Iterator<Item = &[u8]> {
    let c = c.max(1);
    let mut rest = s;
    core::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (a, b) = rest.split_at_checked(c.min(rest.len()))?;
        rest = b;
        Some(a)
    })
}

/// Writes `v` little-endian into the first (up to) 4 bytes of `s` (a 4-byte CRC slot; no
/// length-mismatch panic path, which the firmware build must not link).
pub(crate) fn put_le32(s: &mut [u8], v: u32) {
    for (d, b) in s.iter_mut().zip(v.to_le_bytes()) {
        *d = b;
    }
}

/// The little-endian u32 at the start of `s` (0 if `s` is shorter: callers pass 4-byte chunks).
pub(crate) fn le32(s: &[u8]) -> u32 {
    s.first_chunk::<4>().map_or(0, |b| u32::from_le_bytes(*b))
}

/// The CRC-32 of checksum chunk `chunk`: zlib's CRC-32 of the chunk index (u32 LE), the chunk's
/// width bytes and its payload bytes (in that order).
pub fn chunk_sum(chunk: u32, widths: &[u8], payload: &[u8]) -> u32 {
    let mut h = crate::crc::Crc32::new();
    h.update(&chunk.to_le_bytes());
    h.update(widths);
    h.update(payload);
    h.finalize()
}

/// Validates a config's own fields (block size, bound, `max_abs`): the first check of
/// [`plan`], for drivers that gather the statistics themselves (SIMD paths, GPU).
pub fn check_config(cfg: &Config) -> Result<(), Error> {
    if cfg.block_size == 0 || cfg.block_size > MAX_BLOCK_SIZE {
        return Err(Error::InvalidBlockSize);
    }
    if cfg.layout == Layout::Interp {
        return Err(Error::NeedsScratch);
    }
    if Layout::from_code(cfg.layout.code()).is_none() {
        // A layout left out of this build (feature `layout-heads`).
        return Err(Error::UnsupportedLayout {
            layout: cfg.layout.code(),
        });
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

/// `k` of the quantizer grid magnitude `M = 2^k · bound` for f32 data ([`grid_magnitude`]).
pub const GRID_SHIFT_F32: i32 = 18;
/// `k` of the quantizer grid magnitude `M = 2^k · bound` for f64 data.
pub const GRID_SHIFT_F64: i32 = 40;

/// Rounding slack of the strict tightening for `dtype`: (relative, absolute, type maximum,
/// half an ulp of the type maximum).
fn slack(dtype: DType) -> (f64, f64, f64, f64) {
    const F64_SLACK: f64 = 8.881_784_197_001_252e-16; // 2^-50
    const F32_SLACK: f64 = 5.960_464_477_539_063e-8; // 2^-24
    // Relative rounding slack, the absolute slack of subnormal results (the smallest
    // subnormal of the type), the largest finite value of the type, and half its ulp: a
    // result below `max + half` rounds to a finite value (to `max` itself at worst).
    match dtype {
        DType::F32 => (
            F32_SLACK + F64_SLACK,
            1.401_298_464_324_817e-45,
            f64::from(f32::MAX),
            1.014_120_480_182_583_5e31, // 2^103
        ),
        DType::F64 => (F64_SLACK, f64::from_bits(1), f64::MAX, pow2(970)),
    }
}

/// The precision term of the strict tightening: `bound − (m + bound)·rel − abs` (not positive:
/// the bound is below the float precision at magnitude `m`).
fn precision_room(dtype: DType, bound: f64, m: f64) -> f64 {
    let (rel, absolute, limit, _) = slack(dtype);
    let m = m.min(limit);
    let s = m + bound;
    // `m + bound` overflows only near the type's maximum; the sum's own rounding is kept
    // everywhere else (it fixes the bytes of every archive written so far).
    let slack = if s.is_finite() {
        s * rel
    } else {
        m * rel + bound * rel
    };
    bound - slack - absolute
}

/// The range term of the strict tightening: how far above `m` a reconstruction may land and
/// still round to a finite value of the type, less the quantizer's own rounding
/// (`|q·2eb − x| <= eb + |x|·2⁻⁵²`, covered by `m·2⁻⁵⁰`). Not positive: the magnitude is too
/// close to the type's maximum ([`Error::RangeOverflow`]).
fn range_room(dtype: DType, m: f64) -> f64 {
    const Q_SLACK: f64 = 8.881_784_197_001_252e-16; // 2^-50
    let (_, _, limit, half) = slack(dtype);
    let m = m.min(limit); // every finite value of the type is at most `limit`
    (limit - m) + 0.5 * half - m * Q_SLACK
}

/// The strict quantizer bound for `bound` when every `|x| <= m` (a declared `m` above the
/// type's maximum counts as the maximum):
/// `min(bound − (m + bound)·rel − abs, type_max + half_ulp/2 − m − m·2⁻⁵⁰)` (not positive:
/// below precision, or a range that overflows the type).
fn tighten(dtype: DType, bound: f64, m: f64) -> f64 {
    // Reconstructions stay within m + eb (plus the quantizer's rounding): keep that below the
    // point where the element type rounds to infinity.
    precision_room(dtype, bound, m).min(range_room(dtype, m))
}

/// The error of a tightening that is not positive: the bound is below the precision of the
/// data, or (the precision term allowing it) the range overflows the type.
fn tighten_error(dtype: DType, bound: f64, m: f64) -> Error {
    if precision_room(dtype, bound, m) > 0.0 {
        Error::RangeOverflow
    } else {
        Error::BoundBelowPrecision
    }
}

/// `2^k` as f64 for `k` in -1022..=1023.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k.clamp(-1022, 1023) + 1023) as u64) << 52)
}

/// The smallest power of two `>= x` (`x` finite, positive; `x` itself for subnormals and
/// values whose next power overflows).
fn next_pow2(x: f64) -> f64 {
    let b = x.to_bits();
    let e = (b >> 52) & 0x7ff;
    if e == 0 || b & ((1u64 << 52) - 1) == 0 || e >= 0x7fe {
        return x;
    }
    f64::from_bits((e + 1) << 52)
}

/// The magnitude the strict tightening covers when the config declares no `max_abs` (a
/// grid that depends only on what the user states): `M = 2^k · bound` (`k` =
/// [`GRID_SHIFT_F32`] or [`GRID_SHIFT_F64`]) when the data's `max|x| <= M`; otherwise the
/// next power of two `>= max|x|`, as long as it costs at most half the bound; otherwise
/// `max|x|` itself. Archives of the first case with the same bound and dtype share one grid;
/// those of the second share it when their power of two matches.
pub fn grid_magnitude(dtype: DType, bound: f64, data_max: f64) -> f64 {
    let k = match dtype {
        DType::F32 => GRID_SHIFT_F32,
        DType::F64 => GRID_SHIFT_F64,
    };
    let fixed = bound * pow2(k);
    if data_max <= fixed && tighten(dtype, bound, fixed) >= 0.5 * bound {
        return fixed;
    }
    let p = next_pow2(data_max);
    if p >= data_max && tighten(dtype, bound, p) >= 0.5 * bound {
        p
    } else {
        data_max
    }
}

/// Which magnitude a strict plan without a declared `max_abs` tightens for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Grid {
    /// [`grid_magnitude`]: a grid that depends only on the bound and dtype (fzpack archives).
    Stated,
    /// The data's `max|x|` (the version 1 rule; `.fzm` output keeps it unchanged).
    Data,
}

/// Resolves the plan from the config and the data statistics (`range` = max − min for NOA,
/// `max_abs` = the configured `max_abs`, else the data's largest magnitude). Strict plans
/// tighten the bound for the configured `max_abs`, else for [`grid_magnitude`].
pub fn resolve(
    dtype: DType,
    cfg: &Config,
    n: usize,
    range: f64,
    max_abs: f64,
) -> Result<Plan, Error> {
    resolve_grid(dtype, cfg, n, range, max_abs, Grid::Stated)
}

/// [`resolve`] with the grid rule `grid`.
pub(crate) fn resolve_grid(
    dtype: DType,
    cfg: &Config,
    n: usize,
    range: f64,
    max_abs: f64,
    grid: Grid,
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
    if !(cfg.shape.is_none() || n == 0 || cfg.shape.count() == Some(n as u64)) {
        return Err(Error::InvalidShape);
    }
    let quant_eb = if cfg.strict {
        let m = match (cfg.max_abs, grid) {
            (Some(m), _) => m,
            (None, Grid::Stated) => grid_magnitude(dtype, bound, max_abs),
            (None, Grid::Data) => max_abs,
        };
        let eb = tighten(dtype, bound, m);
        if eb.is_nan() || eb <= 0.0 {
            return Err(tighten_error(dtype, bound, m));
        }
        eb
    } else {
        bound
    };
    let quant_eb = if cfg.f32_step && dtype == DType::F32 {
        crate::bits::f32_step_below(quant_eb)
    } else {
        quant_eb
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
        layout: cfg.layout,
        missing: false,
        shape: cfg.shape,
    })
}

/// Validates `input` (finite values, `max_abs` if configured, levels in range) and resolves the
/// bound: one pass over the data.
pub fn plan<T: SzpFloat>(input: &[T], cfg: &Config) -> Result<Plan, Error> {
    Ok(plan_mag(input, cfg, Grid::Stated)?.0)
}

/// [`plan`] and a bound on `|x|` (the configured `max_abs`, else the data's largest magnitude),
/// under the grid rule `grid`.
pub(crate) fn plan_mag<T: SzpFloat>(
    input: &[T],
    cfg: &Config,
    grid: Grid,
) -> Result<(Plan, f64), Error> {
    check_config(cfg)?;
    let (mut lo, mut hi, mut mag) = (f64::INFINITY, f64::NEG_INFINITY, 0f64);
    let mut missing = false;
    for (index, x) in input.iter().enumerate() {
        let v = x.to_f64();
        if !v.is_finite() {
            if !MISSING_VALUES {
                return Err(Error::NonFinite { index });
            }
            // A missing value: stored apart, outside the range and the grid.
            missing = true;
            continue;
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
    let range = if lo <= hi { hi - lo } else { 0.0 };
    let mut plan = resolve_grid(
        T::DTYPE,
        cfg,
        input.len(),
        range,
        cfg.max_abs.unwrap_or(mag),
        grid,
    )?;
    if bits::level_vs_limit(mag, plan.quant_eb) == Some(true) {
        let index = input
            .iter()
            .position(|x| bits::level_vs_limit(x.to_f64().abs(), plan.quant_eb) == Some(true))
            .unwrap_or(0);
        return Err(Error::LevelOverflow { index });
    }
    plan.missing = missing;
    Ok((plan, cfg.max_abs.unwrap_or(mag)))
}

/// Payload bytes of a block of `len` values at width `width`: `ceil(len·width / 8)`
/// (the rule itself lives in one place, `crate::bits::payload_len`).
pub fn block_payload_len(width: u8, len: usize) -> usize {
    bits::payload_len(width, len)
}

/// The archive header: the SZpConfig fields plus format data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header {
    /// Format version: 1 (no checksums) or 2 (0 in the view of an `.fzm` config, [`super::fzm::header`]).
    pub version: u8,
    /// Layout (byte 6: [`super::LAYOUT_FZGM`] = 0, [`super::LAYOUT_HEADS`] = 1, [`super::LAYOUT_INTERP`] = 2).
    pub layout: u8,
    /// Version 2: each checksum chunk holds `2^chunk_shift` blocks (0 for version 1).
    pub chunk_shift: u8,
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
    /// Version 3: the extension's flags ([`super::FLAG_MISSING`], [`super::FLAG_SHAPE`]); 0
    /// for versions 1 and 2.
    pub ext: u8,
    /// Version 3: the archive may hold missing values (NaN, ±inf), stored exactly.
    pub missing: bool,
    /// The number of missing values.
    pub missing_count: u64,
    /// The number of dimensions of the array's shape (version 3 with a shape; 0 otherwise).
    /// The dimensions: [`read_shape`] (kept out of the header, which decoders copy about:
    /// firmware stacks).
    pub rank: u8,
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

    /// Blocks per head group: `bits::head_group(chunk_shift)` for the block-head layout, 0
    /// for the stage layout.
    pub fn head_group(&self) -> usize {
        if self.layout == LAYOUT_HEADS {
            bits::head_group(self.chunk_shift)
        } else {
            0
        }
    }

    /// The header's length in the archive: 48 bytes (version 1) or 52 (version 2).
    pub fn header_len(&self) -> usize {
        if self.version == FORMAT_VERSION_V1 {
            HEADER_LEN_V1
        } else {
            HEADER_LEN
        }
    }

    /// Reads and validates the header (48 bytes for version 1, 52 with its CRC for version 2),
    /// checking the header CRC.
    pub fn read(archive: &[u8]) -> Result<Header, Error> {
        Header::read_with(archive, Verify::Checksums)
    }

    /// [`Header::read`], checking the version 2 header CRC only under [`Verify::Checksums`].
    #[allow(clippy::indexing_slicing)] // constant offsets into a [u8; HEADER_LEN_V1]
    pub fn read_with(archive: &[u8], verify: Verify) -> Result<Header, Error> {
        // Borrowed, not copied: a copy is a `memcpy` call that firmware decoders would link
        // for it alone.
        let a: &[u8; HEADER_LEN_V1] = archive
            .get(..HEADER_LEN_V1)
            .and_then(|h| h.try_into().ok())
            .ok_or(Error::Truncated)?;
        if a[0..4] != MAGIC {
            return Err(Error::BadMagic);
        }
        let version = a[4];
        if version != FORMAT_VERSION && version != FORMAT_VERSION_V1 && version != FORMAT_VERSION_V3
        {
            return Err(Error::UnsupportedVersion { version });
        }
        let flags = a[5];
        let known = if version == FORMAT_VERSION_V3 {
            1 | FLAG_MISSING | FLAG_SHAPE
        } else {
            1
        };
        if flags & !known != 0 {
            return Err(Error::Corrupt("reserved header bits set"));
        }
        let ext = flags & (FLAG_MISSING | FLAG_SHAPE);
        if version == FORMAT_VERSION_V3 && ext == 0 {
            return Err(Error::Corrupt("version 3 archive without an extension"));
        }
        if ext != 0 && !MISSING_VALUES {
            return Err(Error::FeatureOff {
                feature: "missing-and-shape",
            });
        }
        let (layout, chunk_shift) = if version == FORMAT_VERSION_V1 {
            if a[6] != 0 || a[7] != 0 {
                return Err(Error::Corrupt("reserved header bits set"));
            }
            (LAYOUT_FZGM, 0)
        } else {
            let sum = archive
                .get(HEADER_LEN_V1..HEADER_LEN)
                .ok_or(Error::Truncated)?;
            let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
            if verify == Verify::Checksums && crate::crc::hash(a) != stored {
                return Err(Error::ChecksumMismatch {
                    what: "header",
                    chunk: 0,
                });
            }
            if Layout::from_code(a[6]).is_none() {
                return Err(Error::UnsupportedLayout { layout: a[6] });
            }
            if a[7] > 31 {
                return Err(Error::Corrupt("chunk shift above 31"));
            }
            if a[6] == LAYOUT_INTERP && (version != FORMAT_VERSION_V3 || flags & FLAG_SHAPE == 0) {
                return Err(Error::Corrupt("interpolation layout without a shape"));
            }
            (a[6], a[7])
        };
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
        let mut header = Header {
            version,
            layout,
            chunk_shift,
            dtype,
            mode,
            block_size,
            n,
            quant_eb,
            value_base,
            requested,
            strict: flags & 1 != 0,
            ext,
            missing: ext & FLAG_MISSING != 0,
            missing_count: 0,
            rank: 0,
        };
        header.check_numbers()?;
        if ext != 0 {
            let (shape, count) = read_extension(&header, archive, verify)?;
            (header.rank, header.missing_count) = (shape.rank() as u8, count);
        }
        Ok(header)
    }

    /// Checks the header's numbers as an encoder writes them (the fields are finite already):
    /// a requested bound `>= 0` (0 only for the exact zeros of an ABS operation result), for
    /// NOA a positive requested bound and, with values, a positive value range; an absolute
    /// bound ([`Header::bound`]) that is finite and, where positive, not below the quantizer
    /// bound (the tightened bound never exceeds the requested one). Errors are
    /// [`Error::Implausible`].
    pub fn check_numbers(&self) -> Result<(), Error> {
        if bits::F32_ONLY_FPU {
            self.numbers_in_integers()
        } else {
            self.numbers_in_f64()
        }
    }

    /// [`Header::check_numbers`] in f64 arithmetic, as the rule reads.
    fn numbers_in_f64(&self) -> Result<(), Error> {
        let implausible = |what| Err(Error::Implausible { what });
        if self.requested.is_nan() || self.requested < 0.0 {
            return implausible("negative requested error bound");
        }
        if self.value_base.is_nan() || self.value_base < 0.0 {
            return implausible("negative value range");
        }
        if self.mode == Mode::Noa
            && (self.requested == 0.0 || (self.n > 0 && self.value_base == 0.0))
        {
            return implausible("relative error bound or value range of 0");
        }
        let bound = self.bound();
        if !bound.is_finite() {
            return implausible("error bound (requested x value range) is not finite");
        }
        if bound > 0.0 && self.quant_eb > bound {
            return implausible("quantizer bound above the requested error bound");
        }
        Ok(())
    }

    /// [`Header::check_numbers`] in integers, with the same outcome on every input: a
    /// non-negative f64 orders as its bits do. Targets without an f64 FPU (the decoders of
    /// such firmware) so link no soft-float f64 for it.
    fn numbers_in_integers(&self) -> Result<(), Error> {
        const MAG: u64 = bits::F64_MAG;
        const INF: u64 = bits::F64_INF;
        let implausible = |what| Err(Error::Implausible { what });
        let (r, v) = (self.requested.to_bits(), self.value_base.to_bits());
        // NaN, or below zero (-0.0 is not).
        let negative = |b: u64| b & MAG > INF || (b >> 63 != 0 && b & MAG != 0);
        if negative(r) {
            return implausible("negative requested error bound");
        }
        if negative(v) {
            return implausible("negative value range");
        }
        let noa = self.mode == Mode::Noa;
        if noa && (r & MAG == 0 || (self.n > 0 && v & MAG == 0)) {
            return implausible("relative error bound or value range of 0");
        }
        // The bits of `Header::bound`: `requested`, or for NOA `requested · value_base`
        // (`requested` is positive; a zero `value_base` gives a signed zero, or NaN with an
        // infinite `requested`; an infinite factor otherwise gives infinity).
        let bound = if !noa {
            r
        } else if v & MAG == 0 {
            if r >= INF { INF + 1 } else { v }
        } else {
            bits::mul_f64_bits(self.requested, self.value_base).unwrap_or(INF)
        };
        if bound & MAG >= INF {
            return implausible("error bound (requested x value range) is not finite");
        }
        // `bound > 0.0 && quant_eb > bound`: a positive `bound` has its sign clear and is not
        // zero; a larger `quant_eb` has its sign clear and is not NaN.
        let q = self.quant_eb.to_bits();
        if (1..INF).contains(&bound) && q > bound && q <= INF {
            return implausible("quantizer bound above the requested error bound");
        }
        Ok(())
    }
}

/// Writes the version 2 header of `plan` (48 bytes and their CRC-32) into `out[..HEADER_LEN]`.
/// The archive is complete once the chunk CRCs follow the payload ([`seal`]).
pub fn write_header(plan: &Plan, out: &mut [u8]) -> Result<(), Error> {
    let dst = out
        .get_mut(..HEADER_LEN)
        .ok_or(Error::OutputTooSmall { needed: HEADER_LEN })?;
    if !(plan.shape.is_none() || plan.shape.count() == Some(plan.n as u64)) {
        return Err(Error::InvalidShape);
    }
    let ext = plan.ext_flags();
    let h = header_bytes(&Header {
        version: if ext == 0 {
            FORMAT_VERSION
        } else {
            FORMAT_VERSION_V3
        },
        layout: plan.layout.code(),
        chunk_shift: plan.chunk_shift(),
        dtype: plan.dtype,
        mode: plan.mode,
        block_size: plan.block_size,
        n: plan.n as u64,
        quant_eb: plan.quant_eb,
        value_base: plan.value_base,
        requested: plan.requested,
        strict: plan.strict,
        ext,
        missing: plan.missing,
        missing_count: 0,
        rank: 0,
    });
    dst.copy_from_slice(&h);
    Ok(())
}

/// The 52 bytes of a version 2 or 3 header (the fields `Header::read` reads, and their
/// CRC-32): the one place that lays a header out, for every layout.
pub(crate) fn header_bytes(hd: &Header) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..4].copy_from_slice(&MAGIC);
    h[4] = hd.version;
    h[5] = u8::from(hd.strict) | hd.ext;
    h[6] = hd.layout;
    h[7] = hd.chunk_shift;
    // 8..40: the FZGPUModules SZpConfig, verbatim.
    h[8] = hd.dtype.code();
    h[9] = hd.mode.code();
    h[12..16].copy_from_slice(&hd.block_size.to_le_bytes());
    h[16..24].copy_from_slice(&hd.n.to_le_bytes());
    h[24..32].copy_from_slice(&hd.quant_eb.to_le_bytes());
    h[32..40].copy_from_slice(&hd.value_base.to_le_bytes());
    h[40..48].copy_from_slice(&hd.requested.to_le_bytes());
    let sum = crate::crc::hash(&h[..HEADER_LEN_V1]);
    h[HEADER_LEN_V1..].copy_from_slice(&sum.to_le_bytes());
    h
}

/// Writes the chunk CRCs of an archive body into `sums` ([`Plan::sums_len`] bytes): `widths`
/// are the archive's width bytes, `payload` its payload, `n` values, `bs` per block, chunks of
/// `2^shift` blocks. (The serial form of the writer's sealing step.)
pub fn seal(widths: &[u8], payload: &[u8], n: usize, bs: usize, shift: u8, sums: &mut [u8]) {
    seal_with(widths, payload, n, bs, shift, 0, sums);
}

/// [`seal`] for either layout: `group` blocks per head group ([`Plan::head_group`]; 0 for the
/// stage layout). A chunk's CRC covers its payloads and the head trailers of its groups.
pub fn seal_with(
    widths: &[u8],
    payload: &[u8],
    n: usize,
    bs: usize,
    shift: u8,
    group: usize,
    sums: &mut [u8],
) {
    let c = (1usize << shift.min(31)).max(1); // .max(1): provably non-zero, no panic path
    let mut off = 0usize;
    let mut rem = n;
    for (u, (wc, s)) in pieces(widths, c).zip(sums.chunks_exact_mut(4)).enumerate() {
        let vals = rem.min(wc.len() * bs);
        let body = payload.get(off..).unwrap_or(&[]);
        let bytes = body_len(wc, bs, vals, group, body).unwrap_or(0);
        rem -= vals;
        let p = payload.get(off..off + bytes).unwrap_or(&[]);
        off += bytes;
        put_le32(s, chunk_sum(u as u32, wc, p));
    }
}

/// A validated archive: header, width bytes, payload and (version 2) chunk CRCs.
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
    /// Version 2: the chunk CRCs (4 bytes LE per chunk of `2^chunk_shift` blocks); empty for
    /// version 1.
    pub sums: &'a [u8],
    /// The extension (version 3): the shape and the missing values' runs.
    pub ext: Missing<'a>,
}

impl ArchiveView<'_> {
    /// The length of block `b`.
    pub fn block_len(&self, b: usize) -> usize {
        let bs = self.header.block_size as usize;
        self.n.saturating_sub(b.saturating_mul(bs)).min(bs)
    }
}

/// Validates an archive: header (and its CRC), `ceil(n/bs)` width bytes present (so a hostile
/// `n` is bounded by the archive's own length), every width <= 64, a payload of exactly the
/// implied size, then (version 2) the chunk CRCs and every chunk's CRC.
pub fn parse(archive: &[u8]) -> Result<ArchiveView<'_>, Error> {
    parse_with(archive, Verify::Checksums)
}

/// [`parse`]; with [`Verify::Skip`] no CRC is checked (every structural check still runs).
pub fn parse_with(archive: &[u8], verify: Verify) -> Result<ArchiveView<'_>, Error> {
    let view = parse_structure(archive, verify)?;
    if verify == Verify::Checksums {
        verify_chunks(&view)?;
    }
    Ok(view)
}

/// Checks every chunk CRC of a (structurally valid) view; version 1 views have none.
pub fn verify_chunks(view: &ArchiveView<'_>) -> Result<(), Error> {
    if view.header.version == FORMAT_VERSION_V1 {
        return Ok(());
    }
    let bs = view.header.block_size as usize;
    let group = view.header.head_group();
    let c = (1usize << view.header.chunk_shift.min(31)).max(1);
    let (mut off, mut rem) = (0usize, view.n);
    for (u, (wc, s)) in pieces(view.widths, c)
        .zip(view.sums.chunks_exact(4))
        .enumerate()
    {
        let vals = rem.min(wc.len() * bs);
        let (bytes, sum) = chunk_walk(
            u as u32,
            wc,
            bs,
            vals,
            group,
            view.payload.get(off..).unwrap_or(&[]),
        )?;
        rem -= vals;
        off += bytes;
        if sum != le32(s) {
            return Err(Error::ChecksumMismatch {
                what: "blocks",
                chunk: u as u32,
            });
        }
    }
    Ok(())
}

/// The error [`parse_structure`] reports for a view from [`parse_frame`]`(.., false)` whose
/// body is not exactly the size its widths (and head trailers) imply, or `None`.
pub(crate) fn body_error(view: &ArchiveView<'_>) -> Option<Error> {
    let bs = view.header.block_size as usize;
    match body_len(
        view.widths,
        bs,
        view.n,
        view.header.head_group(),
        view.payload,
    ) {
        Err(e) => Some(e),
        Ok(t) if t > view.payload.len() => Some(Error::Truncated),
        Ok(t) if t < view.payload.len() => Some(Error::Corrupt("trailing bytes after the payload")),
        Ok(_) => None,
    }
}

/// The structure of an archive ([`parse`] without the chunk CRCs; the header CRC is checked
/// under [`Verify::Checksums`]).
pub(crate) fn parse_structure(archive: &[u8], verify: Verify) -> Result<ArchiveView<'_>, Error> {
    parse_frame(archive, verify, true)
}

/// `parse_structure`; with `body == false` the payload's length is not walked (the sums are
/// still split off the end; the count is still bounded by the width bytes present): for a
/// caller that walks every length itself and checks that the walk ends exactly at the end of
/// the payload (the decoders), or that only sizes its output from the view's `n`.
pub fn parse_frame(archive: &[u8], verify: Verify, body: bool) -> Result<ArchiveView<'_>, Error> {
    frame(Header::read_with(archive, verify)?, archive, body)
}

/// [`parse_frame`] with the header already read (and checked) from `archive`.
pub(crate) fn frame(header: Header, archive: &[u8], body: bool) -> Result<ArchiveView<'_>, Error> {
    if header.layout == LAYOUT_INTERP {
        return Err(Error::NeedsScratch);
    }
    // Version 3: the extension at the end (validated when the header was read).
    let (archive, ext) = if header.version == FORMAT_VERSION_V3 {
        let (before, section, _) = missing::split(archive)?;
        let shape = if header.ext & FLAG_SHAPE != 0 {
            1 + 8 * usize::from(header.rank)
        } else {
            0
        };
        // The count (8 bytes) precedes the runs (`missing::Missing::parse`).
        let count = if header.missing { 8 } else { 0 };
        let runs = section.get(shape + count..).ok_or(Error::Truncated)?;
        if body && header.missing {
            Missing::check(header.dtype, header.n, header.missing_count, runs)?;
        }
        (before, Missing { runs })
    } else {
        (archive, Missing::default())
    };
    let rest = archive.get(header.header_len()..).ok_or(Error::Truncated)?;
    let bs = u64::from(header.block_size.max(1));
    // `ceil(n/bs) > rest.len()` (more width bytes than bytes left), as `n > rest.len()·bs`:
    // no 64-bit division (a library routine on 32-bit targets); the product fits (bs <= 4096).
    if header.n > (rest.len() as u64).saturating_mul(bs) {
        return Err(Error::Truncated);
    }
    let n = usize::try_from(header.n).map_err(|_| Error::Corrupt("element count"))?;
    let nb = n.div_ceil(header.block_size.max(1) as usize); // <= rest.len()
    let (widths, payload) = rest.split_at_checked(nb).ok_or(Error::Truncated)?;
    let sums = if header.version == FORMAT_VERSION_V1 {
        0
    } else {
        sums_len(nb, header.chunk_shift)
    };
    // n <= nb·bs <= rest.len()·4096: in usize range.
    let body = if body {
        body_len(widths, bs as usize, n, header.head_group(), payload)?
    } else {
        payload.len().saturating_sub(sums)
    };
    if payload.len() < sums {
        return Err(Error::Truncated);
    }
    let total = (body as u64).saturating_add(sums as u64);
    if total > payload.len() as u64 {
        return Err(Error::Truncated);
    }
    if total < payload.len() as u64 {
        return Err(Error::Corrupt("trailing bytes after the payload"));
    }
    // total == len >= sums
    let (payload, sums) = payload
        .split_at_checked(payload.len().saturating_sub(sums))
        .ok_or(Error::Truncated)?;
    Ok(ArchiveView {
        header,
        n,
        widths,
        payload,
        sums,
        ext,
    })
}

/// The array's shape stored in `archive` ([`Shape::NONE`] for archives without one: versions 1
/// and 2, and version 3 without [`FLAG_SHAPE`]); the archive's header and extension are
/// validated as [`Header::read_with`] does.
pub fn read_shape(archive: &[u8], verify: Verify) -> Result<Shape, Error> {
    let h = Header::read_with(archive, verify)?;
    if h.ext & FLAG_SHAPE == 0 {
        return Ok(Shape::NONE);
    }
    Ok(read_extension(&h, archive, verify)?.0)
}

/// The shape and missing-value count of a version 3 `archive` (the header's flags say what
/// its extension holds), validated whole (shape and every run; the extension's CRC checked
/// under [`Verify::Checksums`]). Kept out of line: version 2 readers (firmware) do not carry
/// its frame.
#[inline(never)]
#[cold]
fn read_extension(header: &Header, archive: &[u8], verify: Verify) -> Result<(Shape, u64), Error> {
    let (_, section, sum) = missing::split(archive)?;
    if verify == Verify::Checksums && crate::crc::hash(section) != sum {
        return Err(Error::ChecksumMismatch {
            what: "extension",
            chunk: 0,
        });
    }
    let (shape, _, count) = Missing::parse(header.ext, header.dtype, header.n, section)?;
    Ok((shape, count))
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    /// Bytes of the test bodies (no allocation: the crate is `no_std`).
    const BUF: usize = 1 << 16;

    /// Writes into `body` a body for `widths` by the per-block rule the fast paths of
    /// [`body_len`] and [`chunk_walk`] must equal — each block `ceil(len·w/8)` bytes, each head
    /// group followed by its trailer (width byte `hw(k)`, then `ceil(cnt·hw/8)` bytes) — and
    /// returns its length.
    fn body_for(
        widths: &[u8],
        bs: usize,
        n: usize,
        group: usize,
        hw: impl Fn(usize) -> u8,
        body: &mut [u8; BUF],
    ) -> usize {
        // Appends `count` filler bytes (or, for a trailer, its width byte `first` then filler).
        fn put(body: &mut [u8; BUF], len: &mut usize, first: Option<u8>, count: usize, salt: u8) {
            for j in 0..count {
                body[*len] = match (j, first) {
                    (0, Some(h)) => h,
                    _ => (j as u8).wrapping_mul(31) ^ salt,
                };
                *len += 1;
            }
        }
        let mut len = 0;
        let mut rem = n;
        for (k, g) in widths.chunks(group.max(1)).enumerate() {
            for (i, &w) in g.iter().enumerate() {
                let vals = rem.min(bs);
                put(body, &mut len, None, bits::payload_len(w, vals), i as u8);
                rem -= vals;
            }
            if group > 0 {
                let h = hw(k);
                put(body, &mut len, Some(h), bits::trailer_len(h, g.len()), 0x5a);
            }
        }
        len
    }

    #[test]
    #[cfg_attr(miri, ignore = "400 bodies up to 64 KiB: too slow for Miri")]
    fn fast_lengths_equal_the_per_block_rule() {
        // A 64-bit LCG (Knuth's MMIX constants); its high bits are random enough here.
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            seed >> 24
        };
        let mut body = [0u8; BUF];
        let mut widths = [0u8; 90];
        for case in 0..400 {
            let bs = [8usize, 16, 128, 1024, 7, 100][case % 6];
            let group = [0usize, 1, 4, 32][(case / 6) % 4];
            // At most 8·bs payload bytes per block and 9 trailer bytes per block: within BUF.
            let most = (BUF / (8 * bs + 9)).min(widths.len());
            let nb = 1 + (next() as usize) % most;
            let n = bs * (nb - 1) + 1 + (next() as usize % bs);
            let widths = &mut widths[..nb];
            for w in widths.iter_mut() {
                *w = (next() % 65) as u8;
            }
            let want = body_for(
                widths,
                bs,
                n,
                group,
                |k| ((k * 7 + case) % 65) as u8,
                &mut body,
            );
            let body = &body[..want];
            assert_eq!(
                body_len(widths, bs, n, group, body),
                Ok(want),
                "case {case}"
            );
            let (len, sum) = chunk_walk(9, widths, bs, n, group, body).unwrap();
            assert_eq!(len, want, "case {case}");
            assert_eq!(sum, chunk_sum(9, widths, body), "case {case}");
            // A body one byte short fails the walk (body_len reads only the trailer width
            // bytes; its callers compare the total with what is present).
            if want > 0 {
                assert!(chunk_walk(9, widths, bs, n, group, &body[..want - 1]).is_err());
            }
            widths[nb / 2] = 65;
            assert_eq!(
                body_len(widths, bs, n, group, body),
                Err(Error::Corrupt("width above 64"))
            );
            assert!(chunk_walk(9, widths, bs, n, group, body).is_err());
        }
    }

    /// The header checks decide in integers as in f64 arithmetic, on every kind of number
    /// (zeros of both signs, subnormals, infinities, NaN, negatives) and on quantizer bounds
    /// at, just above and just below the bound, where the NOA product's rounding decides.
    #[test]
    fn check_numbers_match_the_f64_checks() {
        use crate::bits::tests::{SPECIAL_F64, spread_f64, xorshift};
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let special = SPECIAL_F64;
        let pick = |s: &mut u64, center: i64| {
            let r = xorshift(s);
            if r.is_multiple_of(4) {
                special[(r >> 8) as usize % special.len()]
            } else {
                spread_f64(s, center)
            }
        };
        let (mut refused, mut above) = (0u32, 0u32);
        let n = if cfg!(miri) { 100 } else { 200_000 };
        for i in 0..n {
            let (cr, cv) = [(1023 - 20, 1023 + 30), (511, 512 - 52), (1535, 1535)][i % 3];
            let (requested, value_base) = (pick(&mut s, cr), pick(&mut s, cv));
            let mode = if i % 4 == 0 { Mode::Abs } else { Mode::Noa };
            let mut h = Header {
                version: FORMAT_VERSION,
                layout: 0,
                chunk_shift: 0,
                dtype: DType::F32,
                mode,
                block_size: 128,
                n: (i % 5 != 0) as u64,
                quant_eb: 0.0,
                value_base,
                requested,
                strict: true,
                ext: 0,
                missing: false,
                missing_count: 0,
                rank: 0,
            };
            let b = h.bound().to_bits();
            let r = xorshift(&mut s);
            h.quant_eb = match r % 6 {
                0 => f64::from_bits(b),
                1 => f64::from_bits(b.wrapping_add(1)),
                2 => f64::from_bits(b.wrapping_sub(1)),
                3 => -f64::from_bits(b),
                4 => special[(r >> 8) as usize % special.len()],
                _ => pick(&mut s, 1023),
            };
            let want = h.numbers_in_f64();
            assert_eq!(h.numbers_in_integers(), want, "{h:?}");
            refused += u32::from(want.is_err());
            above += u32::from(matches!(
                want,
                Err(Error::Implausible { what }) if what.starts_with("quantizer")
            ));
        }
        assert!(
            cfg!(miri) || (refused > 20_000 && above > 10_000 && refused < n as u32 - 20_000),
            "{refused} refused, {above} with the quantizer bound above"
        );
    }
}
