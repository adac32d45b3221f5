//! The PERNIX block stream (`.pnx`): a self-describing container for a whole array, one scale
//! per block, in checksummed chunks (layout in the project's `docs/pernix-stream.md`).
//!
//! This module alone knows where the header, the frames (scale + block) and the chunk CRCs go.
//! It is `no_std` and allocation-free: [`StreamWriter`] encodes whole chunks of values into a
//! caller slice and seals each chunk's CRC right after encoding it (its bytes still in cache);
//! [`StreamReader`] decodes whole chunks into a caller slice and verifies each chunk's CRC once,
//! right after decoding it. Both work a batch of chunks at a time, and their `*_at` forms take
//! any chunk range, so a parallel driver (the `fzpack` crate's rayon driver) splits the chunks
//! over threads with the same bytes.
//!
//! ```
//! use fzpack_core::pernix::{Backend, BitWidth, BlockSize, Dispatcher, Verify};
//! use fzpack_core::pernix::stream::{Scratch, StreamHeader, StreamReader, StreamWriter};
//!
//! let x: [f32; 100] = core::array::from_fn(|i| i as f32 - 50.0);
//! let h = StreamHeader::new::<f32>(BitWidth::new(16)?, BlockSize::B64, 100);
//! let d = Dispatcher::new(Backend::Auto)?;
//! let mut stream = [0u8; 308];
//! assert_eq!(h.stream_len(), Some(308));
//! let mut w = StreamWriter::new(&d, h);
//! let at = h.write(&mut stream)?;
//! let (mut scaled, mut blocks) = ([0f32; 128], [0u8; 256]);
//! w.batch(&x, &mut stream[at..], Scratch::new(&mut scaled, &mut blocks))?;
//! let h = StreamHeader::check(&stream, Verify::Checksums)?;
//! let mut back = [0f32; 100];
//! let mut tail = [0f32; 32];
//! StreamReader::new(&d, h, Verify::Checksums).batch(&stream[32..], &mut back, &mut tail)?;
//! assert!(x.iter().zip(&back).all(|(a, b)| (a - b).abs() <= 50.0 / 32767.0));
//! # Ok::<(), fzpack_core::pernix::stream::StreamError>(())
//! ```

use core::fmt;
use core::ops::Range;

use super::{
    BitWidth, BlockSize, Dispatcher, Error, FramesError, PernixFloat, Run, Verify,
    elements_per_block, inverse_scale, scale_from_bmax,
};
use crate::types::sealed::{Floats, FloatsMut};
use crate::types::{DType, SzpFloat};

/// Magic bytes that open a PERNIX block stream.
pub const STREAM_MAGIC: [u8; 4] = *b"FZPX";
/// The stream format version written (2: checksummed chunks). Version 1 streams are still read.
pub const STREAM_VERSION: u8 = 2;
/// The first stream version (no checksums), still read.
pub const STREAM_VERSION_V1: u8 = 1;
/// Length of the version 1 stream header in bytes (also the prefix every version shares).
pub const STREAM_HEADER_LEN: usize = 24;
/// Length of the version 2 stream header in bytes.
pub const STREAM_HEADER_LEN_V2: usize = 32;
/// Bytes of the checksum that closes every chunk of a version 2 stream.
pub const CHUNK_SUM_LEN: usize = 4;
/// Frame bytes per chunk the writer aims at (version 2): 64 KiB, so a chunk is verified while
/// it is in cache and a flipped bit is located to 64 KiB.
pub const CHUNK_TARGET_BYTES: usize = 64 << 10;
/// Frames per decoding unit of a version 1 stream (which has no chunks).
const V1_UNIT_FRAMES: usize = 1024;

/// An element type of a stream: `f32` or `f64` (both core element traits).
pub trait StreamFloat: PernixFloat + SzpFloat {}
impl<T: PernixFloat + SzpFloat> StreamFloat for T {}

/// Why a stream could not be written or read. Small and `Copy`; [`fmt::Display`] words it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StreamError {
    /// Fewer bytes than the header of this version (`need` bytes).
    ShortHeader {
        /// Header bytes needed.
        need: usize,
    },
    /// Not the stream magic.
    BadMagic,
    /// A version this build does not read.
    UnsupportedVersion(u8),
    /// The version 2 header CRC does not match.
    HeaderChecksum,
    /// An unknown element type code.
    UnknownDType(u8),
    /// A bit width outside 1..=24.
    BitWidth(u8),
    /// A block size PERNIX does not have.
    BlockSize(u32),
    /// Flag or reserved bits that must be zero (or the sign flag wrong for the width).
    ReservedBits,
    /// A version 2 header with zero frames per chunk.
    ZeroChunkFrames,
    /// A value count whose stream length overflows.
    TooLarge {
        /// The value count.
        n: u64,
    },
    /// The stream is not exactly as long as its header says.
    Length {
        /// Bytes present.
        len: usize,
        /// The header.
        header: StreamHeader,
    },
    /// A chunk's CRC does not match its bytes (blocks and values of the chunk given).
    ChunkChecksum {
        /// The chunk index.
        chunk: usize,
        /// Its blocks.
        blocks: (usize, usize),
        /// Its values.
        values: (usize, usize),
    },
    /// A block whose scale is not finite and positive (the scale widened to `f64`).
    BadScale {
        /// The block index.
        block: usize,
        /// The stored scale.
        scale: f64,
    },
    /// A NaN or infinity in the input (the first one's index).
    NonFinite {
        /// Index of the first non-finite value.
        index: usize,
    },
    /// No scale decodes a block maximum finitely (not reached for finite input).
    NoScale,
    /// The stream holds another element type.
    DTypeMismatch {
        /// Stored.
        stored: DType,
        /// Requested.
        requested: DType,
    },
    /// A caller slice (input, output or scratch) does not fit the chunks asked for.
    Buffer,
    /// A PERNIX kernel error.
    Kernel(Error),
}

impl StreamError {
    /// Whether the error is about the stream bytes (corrupt or foreign data), as opposed to the
    /// caller's arguments or input values.
    pub const fn is_corrupt(&self) -> bool {
        !matches!(
            self,
            StreamError::NonFinite { .. }
                | StreamError::NoScale
                | StreamError::DTypeMismatch { .. }
                | StreamError::Buffer
                | StreamError::Kernel(_)
        )
    }
}

impl From<Error> for StreamError {
    fn from(e: Error) -> Self {
        StreamError::Kernel(e)
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            StreamError::ShortHeader { need } => write!(f, "shorter than its {need}-byte header"),
            StreamError::BadMagic => f.write_str("bad magic (not a PERNIX block stream)"),
            StreamError::UnsupportedVersion(v) => {
                write!(f, "unsupported version {v} (this build reads 1 and 2)")
            }
            StreamError::HeaderChecksum => {
                f.write_str("header checksum mismatch (the header is damaged)")
            }
            StreamError::UnknownDType(d) => write!(f, "unknown dtype code {d}"),
            StreamError::BitWidth(b) => write!(f, "bit width {b} outside 1..=24"),
            StreamError::BlockSize(b) => write!(f, "block size {b} unsupported"),
            StreamError::ReservedBits => f.write_str("reserved flag bits set"),
            StreamError::ZeroChunkFrames => f.write_str("zero frames per chunk"),
            StreamError::TooLarge { n } => write!(f, "n = {n} is too large"),
            StreamError::Length { len, header: h } => write!(
                f,
                "{len} bytes, the header (n = {}, {} bits, {}-byte blocks, v{}) needs {}",
                h.n,
                h.bits.get(),
                h.block_size.bytes(),
                h.version,
                h.stream_len().unwrap_or(usize::MAX)
            ),
            StreamError::ChunkChecksum {
                chunk,
                blocks,
                values,
            } => write!(
                f,
                "checksum mismatch in chunk {chunk} (blocks {}..{}, values {}..{}); the \
                 archive is damaged",
                blocks.0, blocks.1, values.0, values.1
            ),
            StreamError::BadScale { block, scale } => {
                write!(
                    f,
                    "block {block} has scale {scale:?}, not finite and positive"
                )
            }
            StreamError::NonFinite { index } => {
                write!(f, "non-finite value (NaN or infinity) at index {index}")
            }
            StreamError::NoScale => f.write_str("no PERNIX scale decodes a block finitely"),
            StreamError::DTypeMismatch { stored, requested } => {
                write!(f, "the stream holds {stored}, {requested} was requested")
            }
            StreamError::Buffer => {
                f.write_str("a buffer does not fit the chunks (input, output or scratch)")
            }
            StreamError::Kernel(e) => write!(f, "{e}"),
        }
    }
}

/// The CRC-32 (IEEE, as in gzip and `.fzm`) of chunk `unit`'s index and bytes: the index makes
/// a swapped or repeated chunk fail too.
fn unit_sum(unit: u64, bytes: &[u8]) -> u32 {
    let mut h = crate::crc::Crc32::new();
    h.update(&unit.to_le_bytes());
    h.update(bytes);
    h.finalize()
}

/// `bytes[at..at + N]` as an array (zeros past the end: callers check lengths first).
fn le<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    if let Some(s) = bytes.get(at..at + N) {
        a.copy_from_slice(s);
    }
    a
}

/// The value of type `T` in the little-endian bytes `bytes[..T::BYTES]`.
fn read_scale<T: PernixFloat>(bytes: &[u8]) -> T {
    let b = bytes
        .iter()
        .take(T::BYTES)
        .rev()
        .fold(0u64, |b, &x| (b << 8) | u64::from(x));
    T::from_bits_u64(b)
}

/// Writes `v` little-endian into `out[..T::BYTES]`.
fn write_scale<T: PernixFloat>(v: T, out: &mut [u8]) {
    let b = v.to_bits_u64().to_le_bytes();
    for (o, x) in out.iter_mut().zip(b.iter().take(T::BYTES)) {
        *o = *x;
    }
}

/// The fixed header of a PERNIX block stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamHeader {
    /// Element type of the values.
    pub dtype: DType,
    /// Bit width of every block.
    pub bits: BitWidth,
    /// Block size of every block.
    pub block_size: BlockSize,
    /// Number of values (the last block is padded with zeros).
    pub n: u64,
    /// Format version: [`STREAM_VERSION`] (checksummed chunks) or [`STREAM_VERSION_V1`].
    pub version: u8,
    /// Frames per checksummed chunk (version 2, at least 1); 0 in a version 1 stream.
    pub chunk_frames: u32,
}

impl StreamHeader {
    /// The header the writer uses for `n` values of `T`: the current version, chunks of about
    /// [`CHUNK_TARGET_BYTES`].
    pub fn new<T: StreamFloat>(bits: BitWidth, block_size: BlockSize, n: u64) -> Self {
        StreamHeader {
            dtype: T::DTYPE,
            bits,
            block_size,
            n,
            version: STREAM_VERSION,
            chunk_frames: CHUNK_TARGET_BYTES.div_ceil(block_size.bytes()) as u32,
        }
    }

    /// Values per block.
    pub fn elements_per_block(&self) -> usize {
        elements_per_block(self.bits, self.block_size)
    }

    /// Number of blocks (frames): `ceil(n / elements_per_block)`.
    pub fn blocks(&self) -> Option<usize> {
        let n = usize::try_from(self.n).ok()?;
        Some(n.div_ceil(self.elements_per_block()))
    }

    /// Bytes of one frame: the scale (4 or 8 bytes) and the block.
    pub fn frame_len(&self) -> usize {
        self.dtype.size() + self.block_size.bytes()
    }

    /// Header bytes of this version (24 or 32).
    pub fn header_len(&self) -> usize {
        if self.version == STREAM_VERSION_V1 {
            STREAM_HEADER_LEN
        } else {
            STREAM_HEADER_LEN_V2
        }
    }

    /// Frames per unit: a checksummed chunk (version 2), or 1024 frames (version 1).
    pub fn unit_frames(&self) -> usize {
        if self.version == STREAM_VERSION_V1 {
            V1_UNIT_FRAMES
        } else {
            (self.chunk_frames as usize).max(1)
        }
    }

    /// Bytes after the frames of a unit (the chunk checksum; 0 in version 1).
    pub fn unit_sum_len(&self) -> usize {
        if self.version == STREAM_VERSION_V1 {
            0
        } else {
            CHUNK_SUM_LEN
        }
    }

    /// Bytes of a whole unit (the last one may be shorter), `None` on overflow.
    pub fn unit_len(&self) -> Option<usize> {
        self.unit_frames()
            .checked_mul(self.frame_len())?
            .checked_add(self.unit_sum_len())
    }

    /// Values of a whole unit.
    pub fn unit_values(&self) -> usize {
        self.unit_frames().saturating_mul(self.elements_per_block())
    }

    /// Number of units (chunks): `ceil(blocks / unit_frames)`.
    pub fn units(&self) -> Option<usize> {
        Some(self.blocks()?.div_ceil(self.unit_frames()))
    }

    /// Total stream length in bytes, `None` on overflow.
    pub fn stream_len(&self) -> Option<usize> {
        self.blocks()?
            .checked_mul(self.frame_len())?
            .checked_add(self.units()?.checked_mul(self.unit_sum_len())?)?
            .checked_add(self.header_len())
    }

    /// Whether values are sign-extended on decoding (every width but 1).
    pub fn sign_values(&self) -> bool {
        self.bits.get() > 1
    }

    /// Writes the header ([`StreamHeader::header_len`] bytes) to the start of `out`; returns
    /// its length.
    pub fn write(&self, out: &mut [u8]) -> Result<usize, StreamError> {
        let len = self.header_len();
        let h = out.get_mut(..len).ok_or(StreamError::Buffer)?;
        let mut b = [0u8; STREAM_HEADER_LEN_V2];
        b[..4].copy_from_slice(&STREAM_MAGIC);
        b[4] = self.version;
        b[5] = match self.dtype {
            DType::F32 => 1,
            DType::F64 => 2,
        };
        b[6] = self.bits.get();
        b[7] = u8::from(self.sign_values());
        b[8..12].copy_from_slice(&(self.block_size.bytes() as u32).to_le_bytes());
        b[16..24].copy_from_slice(&self.n.to_le_bytes());
        if self.version != STREAM_VERSION_V1 {
            b[12..16].copy_from_slice(&self.chunk_frames.to_le_bytes());
            let sum = crate::crc::hash(&b[..28]);
            b[28..32].copy_from_slice(&sum.to_le_bytes());
        }
        h.copy_from_slice(b.get(..len).ok_or(StreamError::Buffer)?);
        Ok(len)
    }

    /// Parses and validates the header at the start of `bytes` (version 1 or 2; the version 2
    /// header checksum is verified unless `verify` is [`Verify::Skip`]). The rest of the
    /// stream is not looked at.
    pub fn parse(bytes: &[u8], verify: Verify) -> Result<Self, StreamError> {
        if bytes.len() < STREAM_HEADER_LEN {
            return Err(StreamError::ShortHeader {
                need: STREAM_HEADER_LEN,
            });
        }
        if le::<4>(bytes, 0) != STREAM_MAGIC {
            return Err(StreamError::BadMagic);
        }
        let [version, dtype, bits, flags] = le::<4>(bytes, 4);
        if version != STREAM_VERSION && version != STREAM_VERSION_V1 {
            return Err(StreamError::UnsupportedVersion(version));
        }
        let v1 = version == STREAM_VERSION_V1;
        if !v1 {
            let Some(h) = bytes.get(..STREAM_HEADER_LEN_V2) else {
                return Err(StreamError::ShortHeader {
                    need: STREAM_HEADER_LEN_V2,
                });
            };
            let stored = u32::from_le_bytes(le(h, 28));
            if verify == Verify::Checksums && h.get(..28).map(crate::crc::hash) != Some(stored) {
                return Err(StreamError::HeaderChecksum);
            }
        }
        let dtype = match dtype {
            1 => DType::F32,
            2 => DType::F64,
            d => return Err(StreamError::UnknownDType(d)),
        };
        let bits = BitWidth::checked(bits).ok_or(StreamError::BitWidth(bits))?;
        let bs = u32::from_le_bytes(le(bytes, 8));
        let block_size = BlockSize::checked(bs).ok_or(StreamError::BlockSize(bs))?;
        let field12 = u32::from_le_bytes(le(bytes, 12));
        let (chunk_frames, reserved_ok) = if v1 {
            (0, field12 == 0)
        } else {
            (field12, le::<4>(bytes, 24) == [0; 4])
        };
        let header = StreamHeader {
            dtype,
            bits,
            block_size,
            n: u64::from_le_bytes(le(bytes, 16)),
            version,
            chunk_frames,
        };
        if flags != u8::from(header.sign_values()) || !reserved_ok {
            return Err(StreamError::ReservedBits);
        }
        if !v1 && chunk_frames == 0 {
            return Err(StreamError::ZeroChunkFrames);
        }
        if header.stream_len().is_none() {
            return Err(StreamError::TooLarge { n: header.n });
        }
        Ok(header)
    }

    /// Parses the header of a complete stream and checks that `stream` is exactly
    /// [`StreamHeader::stream_len`] bytes long (so `n` is bounded by the bytes present before
    /// anything is sized from it). The chunks are not verified: the reader does that.
    pub fn check(stream: &[u8], verify: Verify) -> Result<Self, StreamError> {
        let h = Self::parse(stream, verify)?;
        if Some(stream.len()) != h.stream_len() {
            return Err(StreamError::Length {
                len: stream.len(),
                header: h,
            });
        }
        Ok(h)
    }

    /// [`StreamError::DTypeMismatch`] unless the stream holds values of type `T`.
    pub fn expect<T: StreamFloat>(&self) -> Result<(), StreamError> {
        if self.dtype != T::DTYPE {
            return Err(StreamError::DTypeMismatch {
                stored: self.dtype,
                requested: T::DTYPE,
            });
        }
        Ok(())
    }

    /// The byte range (in the stream) and the value range of units `units`.
    pub fn unit_span(&self, units: Range<usize>) -> (Range<usize>, Range<usize>) {
        let n = usize::try_from(self.n).unwrap_or(usize::MAX);
        let len = self.stream_len().unwrap_or(usize::MAX);
        let ul = self.unit_len().unwrap_or(usize::MAX);
        let at = |u: usize| {
            u.saturating_mul(ul)
                .saturating_add(self.header_len())
                .min(len)
        };
        let val = |u: usize| u.saturating_mul(self.unit_values()).min(n);
        (
            at(units.start)..at(units.end),
            val(units.start)..val(units.end),
        )
    }

    /// The scales of the blocks of a complete, checked stream `stream`, in block order,
    /// widened to `f64` (exact): for inspection and error bounds, one at a time (nothing is
    /// collected).
    pub fn scales<'a>(&self, stream: &'a [u8]) -> impl Iterator<Item = f64> + 'a {
        let (fl, ul, size) = (
            self.frame_len(),
            self.unit_len().unwrap_or(usize::MAX),
            self.dtype.size(),
        );
        let sl = self.unit_sum_len();
        let f32s = self.dtype == DType::F32;
        stream
            .get(self.header_len()..)
            .unwrap_or(&[])
            .chunks(ul)
            .flat_map(move |unit| {
                let frames = unit.get(..unit.len().saturating_sub(sl)).unwrap_or(&[]);
                frames.chunks_exact(fl).map(move |f| {
                    if f32s {
                        f64::from(read_scale::<f32>(f))
                    } else {
                        read_scale::<f64>(f.get(..size).unwrap_or(&[]))
                    }
                })
            })
    }

    /// Verifies every chunk CRC of a complete, checked stream without decoding (for
    /// inspection: a decoder verifies each chunk itself, after decoding it).
    pub fn verify_chunks(&self, stream: &[u8]) -> Result<(), StreamError> {
        if self.unit_sum_len() == 0 {
            return Ok(());
        }
        let ul = self.unit_len().unwrap_or(usize::MAX);
        let body = stream.get(self.header_len()..).unwrap_or(&[]);
        for (unit, bytes) in body.chunks(ul).enumerate() {
            let split = bytes.len().saturating_sub(CHUNK_SUM_LEN);
            let (frames, sum) = bytes.split_at(split);
            self.verify_unit(unit, frames, sum, 0)?;
        }
        Ok(())
    }

    /// Checks chunk `unit`'s `frames` against its stored `sum`; `values` (the chunk's decoded
    /// count, 0 if unknown) names the values in the error.
    fn verify_unit(
        &self,
        unit: usize,
        frames: &[u8],
        sum: &[u8],
        values: usize,
    ) -> Result<(), StreamError> {
        if unit_sum(unit as u64, frames) == u32::from_le_bytes(le(sum, 0)) {
            return Ok(());
        }
        let (uf, uv) = (self.unit_frames(), self.unit_values());
        let b0 = unit.saturating_mul(uf);
        let v0 = unit.saturating_mul(uv);
        let values = if values == 0 {
            (frames.len() / self.frame_len()).saturating_mul(self.elements_per_block())
        } else {
            values
        };
        let n = usize::try_from(self.n).unwrap_or(usize::MAX);
        Err(StreamError::ChunkChecksum {
            chunk: unit,
            blocks: (b0, b0 + frames.len() / self.frame_len()),
            values: (v0, (v0 + values).min(n)),
        })
    }
}

/// The scale written for a block whose largest magnitude is `bmax`, and its inverse.
///
/// `scale_from_bmax`, except
/// * when `1 / scale` overflows (tiny subnormal `bmax`): then the `bmax = 0` scale (machine
///   epsilon) is used, which quantizes the block to zeros within the bound;
/// * when a code of the block times `scale` would overflow to ±inf on decoding (`bmax` near
///   `T::MAX`): then the next smaller representable scale whose extreme codes decode finitely
///   is used (the values clamp to the top code, within the bound of [`block_error_bound`]).
///   The C ABI keeps upstream's exact helpers; only the stream does this.
pub fn block_scales<T: PernixFloat>(bmax: T, bits: BitWidth) -> Result<(T, T), StreamError> {
    let mut scale = scale_from_bmax(bmax, bits)?;
    let (lo, hi) = crate::types::code_range(u32::from(bits.get()));
    // Quantization is monotone, so the block's extreme codes are those of +bmax and -bmax:
    // both must decode finitely (bmax near T::MAX can round the scale up so that they do not).
    let neg = T::from_bits_u64(bmax.to_bits_u64() ^ (1u64 << (8 * T::BYTES - 1)));
    let decodes_finitely = |s: T| match inverse_scale(s) {
        Ok(inv) if inv.is_positive_finite() => [bmax, neg]
            .iter()
            .all(|&x| T::dequantize(x.quantize(inv, lo, hi), s).is_finite()),
        _ => true, // the subnormal case below
    };
    // The check (two quantize/dequantize round trips) is for blocks near the top of the range
    // only; skipping it elsewhere took most of the per-frame cost of stream compression.
    let near_max = bmax.to_bits_u64() > unchecked_bmax_limit::<T>();
    let mut steps = 0;
    while near_max && !decodes_finitely(scale) {
        // one ulp down (scale is finite and > 0 here); one or two steps suffice in practice
        scale = T::from_bits_u64(scale.to_bits_u64().wrapping_sub(1));
        steps += 1;
        if steps > 64 {
            return Err(StreamError::NoScale);
        }
    }
    match inverse_scale(scale) {
        Ok(inv) if inv.is_positive_finite() => Ok((scale, inv)),
        _ => {
            let s = scale_from_bmax(T::ZERO, bits)?;
            Ok((s, inverse_scale(s)?))
        }
    }
}

/// The IEEE bits of `T::MAX / 4`: block maxima up to it need no finiteness check in
/// [`block_scales`]. There |code| <= 2^(N-1) <= 2·levels (N > 1; codes 0..=1 for N = 1), so
/// |code · scale| <= 2·bmax·(1 + ε)² < T::MAX.
pub fn unchecked_bmax_limit<T: PernixFloat>() -> u64 {
    if T::BYTES == 4 {
        0x7E7F_FFFF
    } else {
        0x7FCF_FFFF_FFFF_FFFF
    }
}

/// The guaranteed absolute error of one decoded block, given its `scale` and width:
/// `scale / 2` (N > 1; the whole block range `scale` for N = 1, whose codes are 0 and 1 only
/// and clamp negatives to 0), plus two units of rounding of the block maximum in `T`.
pub fn block_error_bound<T: StreamFloat>(scale: T, bits: BitWidth) -> f64 {
    let s = scale.to_f64();
    let levels = T::quantization_levels(bits).to_f64();
    let eps = T::EPSILON.to_f64();
    let main = if bits.get() == 1 { s } else { s / 2.0 };
    main + 2.0 * eps * s * levels
}

/// [`block_error_bound`] for a scale read as `f64` from a stream of element type `dtype`
/// ([`StreamHeader::scales`]).
pub fn block_error_bound_of(dtype: DType, scale: f64, bits: BitWidth) -> f64 {
    match dtype {
        DType::F32 => block_error_bound(scale as f32, bits),
        DType::F64 => block_error_bound(scale, bits),
    }
}

/// The largest magnitude of `values` (`0` for an empty slice), or `None` if any value is NaN or
/// infinite: one branch-free pass over the IEEE bits (it vectorizes).
fn max_abs_finite<T: PernixFloat>(values: &[T]) -> Option<T> {
    macro_rules! max_abs {
        ($v:expr, $t:ty, $u:ty) => {{
            // |x| as unsigned bits orders like |x| for non-NaN values; NaN and ±inf have the
            // largest bit patterns (exponent all ones), so one integer max finds both.
            const ABS: $u = <$u>::MAX >> 1;
            const INF: $u = <$t>::INFINITY.to_bits();
            let m = $v.iter().fold(0, |m: $u, x| m.max(x.to_bits() & ABS));
            (m < INF).then_some(u64::from(m))
        }};
    }
    let bits = match T::floats(values) {
        Floats::F32(v) => max_abs!(v, f32, u32),
        Floats::F64(v) => max_abs!(v, f64, u64),
    }?;
    Some(T::from_bits_u64(bits))
}

/// `out[i] = values[i] · factor`, one IEEE multiply each (it vectorizes).
fn scale_into<T: PernixFloat>(values: &[T], factor: T, out: &mut [T]) {
    let f = factor.to_bits_u64();
    match (T::floats(values), T::floats_mut(out)) {
        (Floats::F32(v), FloatsMut::F32(o)) => {
            let f = f32::from_bits(f as u32);
            for (o, &x) in o.iter_mut().zip(v) {
                *o = x * f;
            }
        }
        (Floats::F64(v), FloatsMut::F64(o)) => {
            let f = f64::from_bits(f);
            for (o, &x) in o.iter_mut().zip(v) {
                *o = x * f;
            }
        }
        _ => {} // one type: `values` and `out` are both `[T]`
    }
}

/// The writer's working memory, borrowed from the caller: `scaled` takes the values of a run of
/// whole frames times their inverse scales, `blocks` their blocks. With room for a chunk
/// (`unit_values` values and `unit_frames · block_size` bytes) every chunk goes through the
/// kernel as one block run; with less, frames go one at a time (same bytes). A stream whose
/// last block is partial needs `scaled` to hold one block (`elements_per_block` values) for it.
#[derive(Debug)]
pub struct Scratch<'a, T> {
    scaled: &'a mut [T],
    blocks: &'a mut [u8],
}

impl<'a, T> Scratch<'a, T> {
    /// Scratch from two caller slices.
    pub fn new(scaled: &'a mut [T], blocks: &'a mut [u8]) -> Self {
        Scratch { scaled, blocks }
    }
}

/// Encodes a stream a batch of whole chunks at a time into caller slices, sealing each chunk's
/// CRC right after its frames are written.
#[derive(Clone, Copy, Debug)]
pub struct StreamWriter<'d> {
    kernel: &'d Dispatcher,
    header: StreamHeader,
    next_unit: usize,
}

impl<'d> StreamWriter<'d> {
    /// A writer of the stream `header` on `kernel`, at its first chunk.
    pub fn new(kernel: &'d Dispatcher, header: StreamHeader) -> Self {
        StreamWriter {
            kernel,
            header,
            next_unit: 0,
        }
    }

    /// The header.
    pub fn header(&self) -> &StreamHeader {
        &self.header
    }

    /// The chunk the next [`StreamWriter::batch`] starts at.
    pub fn next_unit(&self) -> usize {
        self.next_unit
    }

    /// Encodes the next chunks: `input` holds whole chunks of values (the last chunk of the
    /// stream may be partial) and `out` receives their bytes (at least
    /// [`StreamHeader::unit_span`]'s length); returns the bytes written.
    pub fn batch<T: StreamFloat>(
        &mut self,
        input: &[T],
        out: &mut [u8],
        scratch: Scratch<'_, T>,
    ) -> Result<usize, StreamError> {
        let uv = self.header.unit_values().max(1);
        let units = input.len().div_ceil(uv);
        let (bytes, _) = self
            .header
            .unit_span(self.next_unit..self.next_unit + units);
        let out = out.get_mut(..bytes.len()).ok_or(StreamError::Buffer)?;
        self.units_at(self.next_unit, input, out, scratch)?;
        self.next_unit += units;
        Ok(bytes.len())
    }

    /// Encodes the chunks from `first_unit` that hold `input` (values from
    /// `first_unit · unit_values`, whole chunks except at the end of the stream) into `out`
    /// (their [`StreamHeader::unit_span`] bytes), in any order: a parallel driver calls this
    /// for disjoint chunk ranges.
    pub fn units_at<T: StreamFloat>(
        &self,
        first_unit: usize,
        input: &[T],
        out: &mut [u8],
        mut scratch: Scratch<'_, T>,
    ) -> Result<(), StreamError> {
        let h = &self.header;
        h.expect::<T>()?;
        let uv = h.unit_values().max(1);
        let ul = h.unit_len().ok_or(StreamError::Buffer)?;
        let sl = h.unit_sum_len();
        let e = h.elements_per_block();
        let (_, vals) = h.unit_span(first_unit..first_unit + input.len().div_ceil(uv));
        if vals.len() != input.len() {
            return Err(StreamError::Buffer);
        }
        for (k, (vals, dst)) in input.chunks(uv).zip(out.chunks_mut(ul)).enumerate() {
            let unit = first_unit + k;
            let frames_len = vals.len().div_ceil(e) * h.frame_len();
            let Some(dst) = dst.get_mut(..frames_len + sl) else {
                return Err(StreamError::Buffer);
            };
            let (frames, sum) = dst.split_at_mut(frames_len);
            self.frames(vals, unit * uv, frames, &mut scratch)?;
            if sl > 0 {
                sum.copy_from_slice(&unit_sum(unit as u64, frames).to_le_bytes());
            }
        }
        Ok(())
    }

    /// Frames (scale + block) of `input` into `out` (`ceil(len / E)` frames); `first_index` is
    /// the global index of `input[0]` (for errors).
    ///
    /// Every frame has its own scale, yet the whole frames go through the kernel as one block
    /// run: each frame's values are multiplied by its inverse scale first, then compressed
    /// with the inverse scale 1. That is the same bytes, since every kernel quantizes `x · inv`
    /// with one IEEE multiply (`PernixFloat::quantize`) and `(x · inv) · 1 = x · inv` exactly,
    /// NaN and ±inf included. One run call instead of one call per 64-byte frame: the per-call
    /// setup dominated (measured on a Sapphire Rapids core). The scalar backend keeps one call
    /// per frame.
    fn frames<T: StreamFloat>(
        &self,
        input: &[T],
        first_index: usize,
        out: &mut [u8],
        scratch: &mut Scratch<'_, T>,
    ) -> Result<(), StreamError> {
        let (bits, bs, kernel) = (self.header.bits, self.header.block_size, self.kernel);
        let e = elements_per_block(bits, bs);
        let frame = T::BYTES + bs.bytes();
        let scale_of = |k: usize, vals: &[T]| {
            let Some(bmax) = max_abs_finite(vals) else {
                let j = vals.iter().position(|v| !v.is_finite()).unwrap_or(0);
                return Err(StreamError::NonFinite {
                    index: first_index + k * e + j,
                });
            };
            block_scales(bmax, bits)
        };
        // The scalar kernel has no per-call setup to save, and the extra pass would cost it
        // (0.83x at N = 4): it takes every frame one at a time, as the last, partial frame does.
        let batched = if kernel.backend() == super::Backend::Fallback {
            0
        } else {
            (input.len() / e)
                .min(out.len() / frame)
                .min(scratch.scaled.len() / e)
                .min(scratch.blocks.len() / bs.bytes())
        };
        let (body, rest) = input.split_at(batched * e);
        let (head, rest_out) = out.split_at_mut(batched * frame);
        if batched > 0 {
            let scaled = scratch
                .scaled
                .get_mut(..body.len())
                .ok_or(StreamError::Buffer)?;
            for (k, ((vals, sv), fr)) in body
                .chunks_exact(e)
                .zip(scaled.chunks_exact_mut(e))
                .zip(head.chunks_exact_mut(frame))
                .enumerate()
            {
                // The frames are read here first: ask for the input ahead (the hardware
                // prefetchers alone left this loop at memory latency on the KVM guests
                // measured).
                for at in (0..vals.len()).step_by(64 / T::BYTES) {
                    crate::arch::prefetch_ahead(vals.as_ptr().wrapping_add(at));
                }
                let (scale, inv) = scale_of(k, vals)?;
                write_scale(scale, fr);
                scale_into(vals, inv, sv);
            }
            let blocks = scratch
                .blocks
                .get_mut(..batched * bs.bytes())
                .ok_or(StreamError::Buffer)?;
            kernel.compress_run(Run::new(bits, bs, batched), scaled, T::ONE, blocks)?;
            for (blk, fr) in blocks
                .chunks_exact(bs.bytes())
                .zip(head.chunks_exact_mut(frame))
            {
                if let Some(dst) = fr.get_mut(T::BYTES..) {
                    dst.copy_from_slice(blk);
                }
            }
        }
        for (k, (vals, fr)) in rest
            .chunks(e)
            .zip(rest_out.chunks_exact_mut(frame))
            .enumerate()
        {
            let (scale, inv) = scale_of(batched + k, vals)?;
            let (s, blk) = fr.split_at_mut(T::BYTES);
            write_scale(scale, s);
            if vals.len() == e {
                kernel.compress_block(bits, bs, vals, inv, blk)?;
            } else {
                // The last, partial frame: zero-padded to a whole block.
                let tmp = scratch.scaled.get_mut(..e).ok_or(StreamError::Buffer)?;
                let (a, b) = tmp.split_at_mut(vals.len());
                a.copy_from_slice(vals);
                b.fill(T::ZERO);
                kernel.compress_block(bits, bs, tmp, inv, blk)?;
            }
        }
        Ok(())
    }
}

/// Decodes a stream a batch of whole chunks at a time into caller slices, verifying each
/// chunk's CRC once, right after decoding it (from cache).
///
/// A chunk is decoded before its checksum is checked, but a corrupt chunk still fails as a
/// checksum mismatch, ahead of what the decoder itself rejects (a bad scale, say), since the
/// mismatch explains it. A call that returns `Ok` has verified every chunk it decoded; after
/// an error the output's contents are unspecified.
#[derive(Clone, Copy, Debug)]
pub struct StreamReader<'d> {
    kernel: &'d Dispatcher,
    header: StreamHeader,
    verify: Verify,
    next_unit: usize,
}

impl<'d> StreamReader<'d> {
    /// A reader of the stream `header` (from [`StreamHeader::check`] or
    /// [`StreamHeader::parse`]) on `kernel`, at its first chunk.
    pub fn new(kernel: &'d Dispatcher, header: StreamHeader, verify: Verify) -> Self {
        StreamReader {
            kernel,
            header,
            verify,
            next_unit: 0,
        }
    }

    /// The header.
    pub fn header(&self) -> &StreamHeader {
        &self.header
    }

    /// Decodes the next chunks: `body` holds whole chunks (the bytes after the header, or a
    /// batch of them) and `out` receives their values (exactly the chunks' count). `tail`
    /// holds one block of values (`elements_per_block`) for a partial last block, else may be
    /// empty. Returns the values written.
    pub fn batch<T: StreamFloat>(
        &mut self,
        body: &[u8],
        out: &mut [T],
        tail: &mut [T],
    ) -> Result<usize, StreamError> {
        let ul = self.header.unit_len().ok_or(StreamError::Buffer)?.max(1);
        let units = body.len().div_ceil(ul);
        let (_, vals) = self
            .header
            .unit_span(self.next_unit..self.next_unit + units);
        let out = out.get_mut(..vals.len()).ok_or(StreamError::Buffer)?;
        self.units_at(self.next_unit, body, out, tail)?;
        self.next_unit += units;
        Ok(vals.len())
    }

    /// Verifies and decodes the chunks from `first_unit` that `body` holds (exactly their
    /// [`StreamHeader::unit_span`] bytes) into `out` (exactly their values), in any order: a
    /// parallel driver calls this for disjoint chunk ranges.
    pub fn units_at<T: StreamFloat>(
        &self,
        first_unit: usize,
        body: &[u8],
        out: &mut [T],
        tail: &mut [T],
    ) -> Result<(), StreamError> {
        let h = &self.header;
        h.expect::<T>()?;
        let uv = h.unit_values().max(1);
        let ul = h.unit_len().ok_or(StreamError::Buffer)?.max(1);
        let units = body.len().div_ceil(ul);
        let (bytes, vals) = h.unit_span(first_unit..first_unit + units);
        if bytes.len() != body.len() || vals.len() != out.len() {
            return Err(StreamError::Buffer);
        }
        let sl = h.unit_sum_len();
        let uf = h.unit_frames();
        for (k, (unit_bytes, vals)) in body.chunks(ul).zip(out.chunks_mut(uv)).enumerate() {
            let unit = first_unit + k;
            let split = unit_bytes.len().saturating_sub(sl);
            let (frames, sum) = unit_bytes.split_at(split);
            // Decode first, then checksum the chunk while its bytes are still in cache: a CRC
            // pass ahead of the decode reads the chunk from memory with nothing to overlap that
            // wait (on Sapphire Rapids it then ran at memory speed, not at its ~90 GB/s in
            // cache). Any bytes decode safely (fixed-size frames, every scale checked), a
            // mismatch still fails the call, and it is reported ahead of what the decoder
            // found, which it explains.
            let decoded = self.frames(frames, unit * uf, vals, tail);
            if sl > 0 && self.verify == Verify::Checksums {
                h.verify_unit(unit, frames, sum, vals.len())?;
            }
            decoded?;
        }
        Ok(())
    }

    /// Decodes the frames of `frames` into `out`; `first_block` names blocks in errors.
    fn frames<T: StreamFloat>(
        &self,
        frames: &[u8],
        first_block: usize,
        out: &mut [T],
        tail: &mut [T],
    ) -> Result<(), StreamError> {
        let (h, kernel) = (&self.header, self.kernel);
        let e = h.elements_per_block();
        let sign = h.sign_values();
        let fl = h.frame_len();
        let bad_scale = |k: usize, scale: T| StreamError::BadScale {
            block: first_block + k,
            scale: scale.to_f64(),
        };
        // The frames with a whole block of values, in one kernel call (it reads ahead into the
        // next frame instead of taking its bounds-checked tail path on every block).
        let whole = (frames.len() / fl).min(out.len() / e);
        if whole > 0 {
            let run = Run::new(h.bits, h.block_size, whole).with_sign_values(sign);
            let (o, _) = out.split_at_mut(whole * e);
            kernel
                .decompress_frames(run, frames, o)
                .map_err(|err| match err {
                    FramesError::Scale { frame } => {
                        bad_scale(frame, read_scale(frames.get(frame * fl..).unwrap_or(&[])))
                    }
                    FramesError::Invalid(e) => StreamError::Kernel(e),
                })?;
        }
        for (k, (fr, vals)) in frames
            .chunks_exact(fl)
            .zip(out.chunks_mut(e))
            .enumerate()
            .skip(whole)
        {
            let (s, blk) = fr.split_at(T::BYTES);
            let scale: T = read_scale(s);
            if !scale.is_positive_finite() {
                return Err(bad_scale(k, scale));
            }
            if vals.len() == e {
                kernel.decompress_block(h.bits, h.block_size, blk, scale, vals, sign)?;
            } else {
                let tmp = tail.get_mut(..e).ok_or(StreamError::Buffer)?;
                kernel.decompress_block(h.bits, h.block_size, blk, scale, tmp, sign)?;
                let got = tmp.get(..vals.len()).ok_or(StreamError::Buffer)?;
                vals.copy_from_slice(got);
            }
        }
        if frames.len() / fl < out.len().div_ceil(e) {
            return Err(StreamError::Buffer);
        }
        Ok(())
    }
}
