//! PERNIX for `std`: everything of [`fzpack_core::pernix`], a [`Dispatcher`] that also serves
//! [`Backend::FallbackStdpar`] (the rayon driver), and the **PERNIX block stream**: a
//! self-describing container with one scale per block (layout in `docs/pernix-stream.md`).
//!
//! ```
//! use fzpack::pernix::{self, BitWidth, BlockSize};
//!
//! let values: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.1).cos() * 40.0).collect();
//! let stream = pernix::compress_vec(&values, BitWidth::new(16)?, BlockSize::B64)?;
//! let back: Vec<f64> = pernix::decompress_vec(&stream)?;
//! assert_eq!(back.len(), values.len());
//! // each block's error is at most half its scale: 40 / (2^15 - 1) / 2
//! assert!(values.iter().zip(&back).all(|(a, b)| (a - b).abs() <= 40.0 / 32767.0 / 2.0 + 1e-12));
//! # Ok::<(), fzpack::Error>(())
//! ```

use std::sync::OnceLock;

pub use fzpack_core::pernix::*;

use crate::element::{DType, Element};
#[cfg(feature = "rayon")]
use crate::par::Parallel;
use crate::{Error as FzError, Result as FzResult};

/// The core dispatcher (no parallel backend), for callers that want it explicitly.
pub type CoreDispatcher = fzpack_core::pernix::Dispatcher;

/// A PERNIX dispatcher for `std` programs: the core [`CoreDispatcher`] plus, for
/// [`Backend::FallbackStdpar`] (feature `rayon`), the rayon multi-block driver.
///
/// `Dispatcher::new(Backend::FallbackStdpar)` resolves the fastest kernel of this CPU (as
/// `Auto`) and spreads runs of blocks over the global rayon pool; its bytes are those of every
/// other backend. Every other backend behaves exactly as in the core.
///
/// ```
/// use fzpack::pernix::{Backend, BitWidth, BlockSize, Dispatcher, elements_per_block};
///
/// # let backend = if cfg!(feature = "rayon") { Backend::FallbackStdpar } else { Backend::Auto };
/// # if backend == Backend::FallbackStdpar {
/// let d = Dispatcher::new(Backend::FallbackStdpar)?;
/// assert_eq!(d.backend(), Backend::FallbackStdpar);
/// # }
/// let d = Dispatcher::new(backend)?;
/// let (bits, bs) = (BitWidth::new(8)?, BlockSize::B64);
/// let blocks = 1000;
/// let input = vec![0.25f32; elements_per_block(bits, bs) * blocks];
/// let mut out = vec![0u8; 64 * blocks];
/// d.compress_blocks(bits, bs, &input, 4.0, &mut out, blocks)?;
/// assert!(out.iter().all(|&b| b == 1));
/// # Ok::<(), fzpack::pernix::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Dispatcher {
    kernel: CoreDispatcher,
    #[cfg(feature = "rayon")]
    par: Option<Parallel>,
}

impl Dispatcher {
    /// Resolves `backend`. [`Backend::FallbackStdpar`] is served by the rayon driver (feature
    /// `rayon`; without it, [`Error::UnsupportedImplementation`] as in the core); every other
    /// value is resolved by the core.
    pub fn new(backend: Backend) -> std::result::Result<Self, fzpack_core::pernix::Error> {
        #[cfg(feature = "rayon")]
        if backend == Backend::FallbackStdpar {
            return Self::with_parallel(Backend::Auto, Parallel::new());
        }
        Ok(Dispatcher {
            kernel: CoreDispatcher::new(backend)?,
            #[cfg(feature = "rayon")]
            par: None,
        })
    }

    /// The rayon driver over the kernel `kernel_backend` (any backend the core resolves), with
    /// its own pool and chunk settings.
    #[cfg(feature = "rayon")]
    pub fn with_parallel(
        kernel_backend: Backend,
        par: Parallel,
    ) -> std::result::Result<Self, fzpack_core::pernix::Error> {
        Ok(Dispatcher {
            kernel: CoreDispatcher::new(kernel_backend)?,
            par: Some(par),
        })
    }

    /// The backend: [`Backend::FallbackStdpar`] for the parallel driver, otherwise the concrete
    /// core backend.
    pub fn backend(&self) -> Backend {
        #[cfg(feature = "rayon")]
        if self.par.is_some() {
            return Backend::FallbackStdpar;
        }
        self.kernel.backend()
    }

    /// The concrete per-block kernel backend (never `Auto` or `FallbackStdpar`).
    pub fn kernel_backend(&self) -> Backend {
        self.kernel.backend()
    }

    /// The core dispatcher that runs the blocks.
    pub fn core(&self) -> &CoreDispatcher {
        &self.kernel
    }

    /// The parallel driver settings, if this is the parallel backend.
    #[cfg(feature = "rayon")]
    pub fn parallel(&self) -> Option<&Parallel> {
        self.par.as_ref()
    }

    /// As [`CoreDispatcher::compress_block`].
    pub fn compress_block<T: Element>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[T],
        inverse_scale: T,
        output: &mut [u8],
    ) -> std::result::Result<(), fzpack_core::pernix::Error> {
        self.kernel
            .compress_block(bits, block_size, input, inverse_scale, output)
    }

    /// As [`CoreDispatcher::compress_blocks`] (the C ABI's parameter order); the same as
    /// [`Dispatcher::compress_run`] with `Run::new(bits, block_size, blocks)`.
    pub fn compress_blocks<T: Element>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[T],
        inverse_scale: T,
        output: &mut [u8],
        blocks: usize,
    ) -> std::result::Result<(), fzpack_core::pernix::Error> {
        self.compress_run(
            Run::new(bits, block_size, blocks),
            input,
            inverse_scale,
            output,
        )
    }

    /// Compresses the `run.blocks` blocks of `input` into `output`; the parallel backend
    /// splits the run into chunks of whole blocks (same bytes).
    pub fn compress_run<T: Element>(
        &self,
        run: Run,
        input: &[T],
        inverse_scale: T,
        output: &mut [u8],
    ) -> std::result::Result<(), fzpack_core::pernix::Error> {
        let k = self.kernel;
        let e = run.values_per_block();
        let per = (e, run.block_size.bytes());
        let (input, output) = run.slices(inverse_scale, input, output, per)?;
        self.on_chunks(run.blocks, e * T::BYTES, input, output, per, |_, a, b| {
            k.compress_run(run.with_blocks(a.len() / e), a, inverse_scale, b)
        })
    }

    /// As [`CoreDispatcher::decompress_block`].
    pub fn decompress_block<T: Element>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[u8],
        scale: T,
        output: &mut [T],
        sign_values: bool,
    ) -> std::result::Result<(), fzpack_core::pernix::Error> {
        self.kernel
            .decompress_block(bits, block_size, input, scale, output, sign_values)
    }

    /// As [`CoreDispatcher::decompress_blocks`] (the C ABI's parameter order); the same as
    /// [`Dispatcher::decompress_run`].
    #[allow(clippy::too_many_arguments)] // mirrors the C ABI's parameter list
    pub fn decompress_blocks<T: Element>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[u8],
        scale: T,
        output: &mut [T],
        blocks: usize,
        sign_values: bool,
    ) -> std::result::Result<(), fzpack_core::pernix::Error> {
        let run = Run::new(bits, block_size, blocks).with_sign_values(sign_values);
        self.decompress_run(run, input, scale, output)
    }

    /// Decompresses the `run.blocks` blocks of `input` into `output`; the parallel backend
    /// splits the run (same values).
    pub fn decompress_run<T: Element>(
        &self,
        run: Run,
        input: &[u8],
        scale: T,
        output: &mut [T],
    ) -> std::result::Result<(), fzpack_core::pernix::Error> {
        let k = self.kernel;
        let (e, bs) = (run.values_per_block(), run.block_size.bytes());
        let (input, output) = run.slices(scale, input, output, (bs, e))?;
        self.on_chunks(
            run.blocks,
            e * T::BYTES,
            input,
            output,
            (bs, e),
            |_, a, b| k.decompress_run(run.with_blocks(a.len() / bs), a, scale, b),
        )
    }

    /// Runs `f(first_unit, input, output)` once over all of `input` and `output` (first unit
    /// 0), or, with the parallel backend and `units` units of `unit_bytes` float bytes each to
    /// share, over chunks of whole units on the pool (`per`: input and output items per unit;
    /// the last chunk may hold a partial unit): the one split of the block runs and of the
    /// stream's chunks. The first error in unit order is returned (deterministic).
    fn on_chunks<I: Sync, O: Send, E: Send>(
        &self,
        units: usize,
        unit_bytes: usize,
        input: &[I],
        output: &mut [O],
        (in_per, out_per): (usize, usize),
        f: impl Fn(usize, &[I], &mut [O]) -> std::result::Result<(), E> + Sync + Send,
    ) -> std::result::Result<(), E> {
        #[cfg(feature = "rayon")]
        if let Some(par) = self.parallel()
            && let Some(per) = par.units_per_task(units, unit_bytes)
        {
            return par.zip_chunks(input, per * in_per, output, per * out_per, |i, a, b| {
                f(i * per, a, b)
            });
        }
        let _ = (units, unit_bytes, in_per, out_per);
        f(0, input, output)
    }
}

/// The dispatcher the free functions use: the parallel driver over the fastest kernel
/// (feature `rayon`), else `Backend::Auto`. Resolved once.
pub fn default_dispatcher() -> &'static Dispatcher {
    static D: OnceLock<Dispatcher> = OnceLock::new();
    D.get_or_init(|| {
        #[cfg(feature = "rayon")]
        let b = Backend::FallbackStdpar;
        #[cfg(not(feature = "rayon"))]
        let b = Backend::Auto;
        Dispatcher::new(b).expect("Auto and FallbackStdpar always resolve")
    })
}

/// Compresses `input` into a PERNIX block stream with [`default_dispatcher`].
pub fn compress_vec<T: Element>(
    input: &[T],
    bits: BitWidth,
    block_size: BlockSize,
) -> FzResult<Vec<u8>> {
    default_dispatcher().compress_stream(input, bits, block_size)
}

/// Decompresses a PERNIX block stream with [`default_dispatcher`].
pub fn decompress_vec<T: Element>(stream: &[u8]) -> FzResult<Vec<T>> {
    default_dispatcher().decompress_stream(stream)
}

/// Parses the header of a PERNIX block stream (alias of [`StreamHeader::parse`]).
pub fn stream_header(stream: &[u8]) -> FzResult<StreamHeader> {
    StreamHeader::parse(stream)
}

/// The per-block scales of a complete stream (for inspection and error bounds), as `f64`.
/// Checks the structure (header, exact length), not the chunk checksums ([`verify_stream`]).
pub fn stream_scales(stream: &[u8]) -> FzResult<Vec<f64>> {
    let h = StreamHeader::check(stream, Verify::Skip)?;
    let ul = h.unit_len().unwrap_or(usize::MAX);
    let sl = h.unit_sum_len();
    let mut out = Vec::with_capacity(h.blocks().unwrap_or(0));
    for unit in stream[h.header_len()..].chunks(ul) {
        let frames = &unit[..unit.len() - sl];
        out.extend(frames.chunks_exact(h.frame_len()).map(|f| match h.dtype {
            DType::F32 => f32::read_le(f) as f64,
            DType::F64 => f64::read_le(f),
        }));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// The PERNIX block stream (`.pnx`): header, checksummed chunks of frames, framing and
// validation (layout in `docs/pernix-stream.md`).
// ---------------------------------------------------------------------------------------------

/// Magic bytes that open a PERNIX block stream.
pub const STREAM_MAGIC: [u8; 4] = *b"FZPX";
/// The stream format version this crate writes (2: checksummed chunks). Version 1 streams are
/// still read.
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

/// The CRC-32 (IEEE, as in gzip and `.fzm`) of `unit`'s index and bytes: the index makes a
/// swapped or repeated chunk fail too.
fn unit_sum(unit: u64, bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&unit.to_le_bytes());
    h.update(bytes);
    h.finalize()
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
    /// The header [`Dispatcher::compress_stream`] writes for `n` values of `T`: the current
    /// version, chunks of about [`CHUNK_TARGET_BYTES`].
    pub fn new<T: Element>(bits: BitWidth, block_size: BlockSize, n: u64) -> Self {
        StreamHeader {
            dtype: T::TYPE,
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

    /// Frames per decoding unit: a checksummed chunk (version 2), or 1024 frames (version 1).
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

    /// The header bytes ([`StreamHeader::header_len`] of them).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut h = vec![0u8; self.header_len()];
        h[..4].copy_from_slice(&STREAM_MAGIC);
        h[4] = self.version;
        h[5] = match self.dtype {
            DType::F32 => 1,
            DType::F64 => 2,
        };
        h[6] = self.bits.get();
        h[7] = u8::from(self.sign_values());
        h[8..12].copy_from_slice(&(self.block_size.bytes() as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.n.to_le_bytes());
        if self.version != STREAM_VERSION_V1 {
            h[12..16].copy_from_slice(&self.chunk_frames.to_le_bytes());
            let sum = crc32fast::hash(&h[..28]);
            h[28..32].copy_from_slice(&sum.to_le_bytes());
        }
        h
    }

    /// Parses and validates the header at the start of `bytes` (version 1 or 2; the version 2
    /// header checksum is verified). The rest of the stream is not checked.
    pub fn parse(bytes: &[u8]) -> FzResult<Self> {
        Self::parse_with(bytes, Verify::Checksums)
    }

    /// [`StreamHeader::parse`], verifying the header checksum or not.
    pub fn parse_with(bytes: &[u8], verify: Verify) -> FzResult<Self> {
        let corrupt = |w: &str| Err(FzError::Corrupt(format!("PERNIX stream: {w}")));
        let Some(h) = bytes.get(..STREAM_HEADER_LEN) else {
            return corrupt("shorter than its 24-byte header");
        };
        if h[..4] != STREAM_MAGIC {
            return corrupt("bad magic (not a PERNIX block stream)");
        }
        let version = h[4];
        if version != STREAM_VERSION && version != STREAM_VERSION_V1 {
            return Err(FzError::Corrupt(format!(
                "PERNIX stream: unsupported version {version} (this build reads 1 and 2)"
            )));
        }
        let h = if version == STREAM_VERSION_V1 {
            h
        } else {
            let Some(h) = bytes.get(..STREAM_HEADER_LEN_V2) else {
                return corrupt("shorter than its 32-byte header");
            };
            let stored = u32::from_le_bytes([h[28], h[29], h[30], h[31]]);
            if verify == Verify::Checksums && crc32fast::hash(&h[..28]) != stored {
                return corrupt("header checksum mismatch (the header is damaged)");
            }
            h
        };
        let dtype = match h[5] {
            1 => DType::F32,
            2 => DType::F64,
            d => {
                return Err(FzError::Corrupt(format!(
                    "PERNIX stream: unknown dtype code {d}"
                )));
            }
        };
        let Ok(bits) = BitWidth::new(h[6]) else {
            return Err(FzError::Corrupt(format!(
                "PERNIX stream: bit width {} outside 1..=24",
                h[6]
            )));
        };
        let bs = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
        let Ok(block_size) = BlockSize::new(bs) else {
            return Err(FzError::Corrupt(format!(
                "PERNIX stream: block size {bs} unsupported"
            )));
        };
        let mut n = [0u8; 8];
        n.copy_from_slice(&h[16..24]);
        let (chunk_frames, reserved_ok) = if version == STREAM_VERSION_V1 {
            (0, h[12..16] == [0; 4])
        } else {
            (
                u32::from_le_bytes([h[12], h[13], h[14], h[15]]),
                h[24..28] == [0; 4],
            )
        };
        let header = StreamHeader {
            dtype,
            bits,
            block_size,
            n: u64::from_le_bytes(n),
            version,
            chunk_frames,
        };
        if h[7] != u8::from(header.sign_values()) || !reserved_ok {
            return corrupt("reserved flag bits set");
        }
        if version != STREAM_VERSION_V1 && chunk_frames == 0 {
            return corrupt("zero frames per chunk");
        }
        if header.stream_len().is_none() {
            return Err(FzError::Corrupt(format!(
                "PERNIX stream: n = {} is too large",
                header.n
            )));
        }
        Ok(header)
    }

    /// Parses the header of a complete stream and checks that `stream` is exactly
    /// [`StreamHeader::stream_len`] bytes long — before anything is allocated from `n`.
    pub fn check(stream: &[u8], verify: Verify) -> FzResult<Self> {
        let h = Self::parse_with(stream, verify)?;
        let len = h.stream_len().unwrap_or(usize::MAX); // Some: checked by parse
        if stream.len() != len {
            return Err(FzError::Corrupt(format!(
                "PERNIX stream: {} bytes, the header (n = {}, {} bits, {}-byte blocks, v{}) \
                 needs {len}",
                stream.len(),
                h.n,
                h.bits.get(),
                h.block_size.bytes(),
                h.version
            )));
        }
        Ok(h)
    }

    /// The byte range (in the stream) and the value range of units `units`.
    pub fn unit_span(
        &self,
        units: std::ops::Range<usize>,
    ) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
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
}

/// The scale written for a block whose largest magnitude is `bmax`, and its inverse.
///
/// `scale_from_bmax`, except
/// * when `1 / scale` overflows (tiny subnormal `bmax`): then the `bmax = 0` scale (machine
///   epsilon) is used, which quantizes the block to zeros within the bound;
/// * when a code of the block times `scale` would overflow to ±inf on decoding (`bmax` near
///   `T::MAX`): then the next smaller representable scale whose extreme codes decode finitely
///   is used (the values clamp to the top code, within the bound of
///   [`block_error_bound`]). The C ABI keeps upstream's exact helpers; only the stream does
///   this.
pub fn block_scales<T: Element>(bmax: T, bits: BitWidth) -> std::result::Result<(T, T), FzError> {
    let mut scale = scale_from_bmax(bmax, bits)?;
    let (lo, hi) = if bits.get() == 1 {
        (0, 1)
    } else {
        (-(1i32 << (bits.get() - 1)), (1i32 << (bits.get() - 1)) - 1)
    };
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
        scale = T::from_bits_u64(scale.to_bits_u64() - 1);
        steps += 1;
        if steps > 64 {
            return Err(FzError::InvalidArgument(format!(
                "no PERNIX scale decodes block maximum {bmax:?} finitely"
            )));
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
fn unchecked_bmax_limit<T: Element>() -> u64 {
    if T::BYTES == 4 {
        0x7E7F_FFFF
    } else {
        0x7FCF_FFFF_FFFF_FFFF
    }
}

/// The guaranteed absolute error of one decoded block, given its `scale` and width:
/// `scale / 2` (N > 1; the whole block range `scale` for N = 1, whose codes are 0 and 1 only
/// and clamp negatives to 0), plus two units of rounding of the block maximum in `T`.
pub fn block_error_bound<T: Element>(scale: T, bits: BitWidth) -> f64 {
    let s = scale.to_f64();
    let levels = T::quantization_levels(bits).to_f64();
    let eps = T::EPSILON.to_f64();
    let main = if bits.get() == 1 { s } else { s / 2.0 };
    main + 2.0 * eps * s * levels
}

/// The reused buffers of [`compress_frames`] (one per task, not per chunk): the values of the
/// whole frames times their inverse scales, and their blocks as one run.
struct FrameScratch<T> {
    scaled: Vec<T>,
    blocks: Vec<u8>,
}

impl<T> FrameScratch<T> {
    fn new() -> Self {
        FrameScratch {
            scaled: Vec::new(),
            blocks: Vec::new(),
        }
    }
}

/// Frames (scale + block) of `input` into `out` (`ceil(len / E)` frames); `first_index` is the
/// global index of `input[0]` (for error messages).
///
/// Every frame has its own scale, yet the whole frames go through the kernel as one block run:
/// each frame's values are multiplied by its inverse scale first, then compressed with the
/// inverse scale 1. That is the same bytes, since every kernel quantizes `x · inv` with one
/// IEEE multiply (`PernixFloat::quantize`) and `(x · inv) · 1 = x · inv` exactly, NaN and ±inf
/// included. One run call instead of one call per 64-byte frame: the per-call setup dominated
/// (measured on a Sapphire Rapids core). The scalar backend keeps one call per frame.
fn compress_frames<T: Element>(
    kernel: &CoreDispatcher,
    bits: BitWidth,
    bs: BlockSize,
    input: &[T],
    first_index: usize,
    out: &mut [u8],
    scratch: &mut FrameScratch<T>,
) -> FzResult<()> {
    let e = elements_per_block(bits, bs);
    let frame = T::BYTES + bs.bytes();
    let scale_of = |k: usize, vals: &[T]| {
        let Some(bmax) = T::max_abs_finite(vals) else {
            let j = vals.iter().position(|v| !v.is_finite()).unwrap_or(0);
            return Err(FzError::NonFinite {
                index: first_index + k * e + j,
            });
        };
        block_scales(bmax, bits)
    };
    // The scalar kernel has no per-call setup to save, and the extra pass would cost it
    // (0.83x at N = 4): it takes every frame one at a time, as the last, partial frame does.
    let batched = if kernel.backend() == Backend::Fallback {
        0
    } else {
        (input.len() / e).min(out.len() / frame)
    };
    let (body, rest) = input.split_at(batched * e);
    let (head, rest_out) = out.split_at_mut(batched * frame);
    if batched > 0 {
        let scaled = &mut scratch.scaled;
        scaled.resize(body.len(), T::ZERO);
        for (k, ((vals, sv), fr)) in body
            .chunks_exact(e)
            .zip(scaled.chunks_exact_mut(e))
            .zip(head.chunks_exact_mut(frame))
            .enumerate()
        {
            // The frames are read here first: ask for the input ahead (the hardware prefetchers
            // alone left this loop at memory latency on the KVM guests measured).
            for at in (0..vals.len()).step_by(64 / T::BYTES) {
                fzpack_core::arch::prefetch_ahead(vals.as_ptr().wrapping_add(at));
            }
            let (scale, inv) = scale_of(k, vals)?;
            scale.write_le(fr);
            T::scale_into(vals, inv, sv);
        }
        let blocks = &mut scratch.blocks;
        blocks.resize(batched * bs.bytes(), 0);
        kernel.compress_run(Run::new(bits, bs, batched), scaled, T::ONE, blocks)?;
        for (blk, fr) in blocks
            .chunks_exact(bs.bytes())
            .zip(head.chunks_exact_mut(frame))
        {
            fr[T::BYTES..].copy_from_slice(blk);
        }
    }
    for (k, (vals, fr)) in rest
        .chunks(e)
        .zip(rest_out.chunks_exact_mut(frame))
        .enumerate()
    {
        let (scale, inv) = scale_of(batched + k, vals)?;
        let (s, blk) = fr.split_at_mut(T::BYTES);
        scale.write_le(s);
        if vals.len() == e {
            kernel.compress_block(bits, bs, vals, inv, blk)?;
        } else {
            // The last, partial frame: zero-padded to a whole block.
            let mut tmp = vec![T::ZERO; e];
            tmp[..vals.len()].copy_from_slice(vals);
            kernel.compress_block(bits, bs, &tmp, inv, blk)?;
        }
    }
    Ok(())
}

/// Decodes the frames of `frames` into `out`; `first_block` names blocks in errors.
fn decompress_frames<T: Element>(
    kernel: &CoreDispatcher,
    h: &StreamHeader,
    frames: &[u8],
    first_block: usize,
    out: &mut [T],
) -> FzResult<()> {
    let e = h.elements_per_block();
    let sign = h.sign_values();
    let fl = h.frame_len();
    let bad_scale = |k: usize, scale: T| {
        FzError::Corrupt(format!(
            "PERNIX stream: block {} has scale {scale:?}, not finite and positive",
            first_block + k
        ))
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
                FramesError::Scale { frame } => bad_scale(
                    frame,
                    T::read_le(&frames[frame * fl..frame * fl + T::BYTES]),
                ),
                FramesError::Invalid(e) => e.into(),
            })?;
    }
    for (k, (fr, vals)) in frames
        .chunks_exact(fl)
        .zip(out.chunks_mut(e))
        .enumerate()
        .skip(whole)
    {
        let (s, blk) = fr.split_at(T::BYTES);
        let scale = T::read_le(s);
        if !scale.is_positive_finite() {
            return Err(bad_scale(k, scale));
        }
        if vals.len() == e {
            kernel.decompress_block(h.bits, h.block_size, blk, scale, vals, sign)?;
        } else {
            let mut tmp = vec![T::ZERO; e];
            kernel.decompress_block(h.bits, h.block_size, blk, scale, &mut tmp, sign)?;
            vals.copy_from_slice(&tmp[..vals.len()]);
        }
    }
    Ok(())
}

/// Encodes units (chunks) of `input` into `out`, serially; `first_unit` is the index of the
/// first one.
fn compress_units<T: Element>(
    kernel: &CoreDispatcher,
    h: &StreamHeader,
    input: &[T],
    first_unit: usize,
    out: &mut [u8],
) -> FzResult<()> {
    let uv = h.unit_values();
    let ul = h.unit_len().unwrap_or(usize::MAX);
    let e = h.elements_per_block();
    let sl = h.unit_sum_len();
    let mut scratch = FrameScratch::new();
    for (k, (vals, dst)) in input.chunks(uv).zip(out.chunks_mut(ul)).enumerate() {
        let unit = first_unit + k;
        let frames_len = vals.len().div_ceil(e) * h.frame_len();
        let Some(dst) = dst.get_mut(..frames_len + sl) else {
            return Err(FzError::InvalidArgument("stream buffer too short".into()));
        };
        let (frames, sum) = dst.split_at_mut(frames_len);
        let bs = h.block_size;
        compress_frames(kernel, h.bits, bs, vals, unit * uv, frames, &mut scratch)?;
        if sl > 0 {
            sum.copy_from_slice(&unit_sum(unit as u64, frames).to_le_bytes());
        }
    }
    Ok(())
}

/// Verifies and decodes units of `body` (starting at unit `first_unit`) into `out`, serially.
fn decompress_units<T: Element>(
    kernel: &CoreDispatcher,
    h: &StreamHeader,
    body: &[u8],
    first_unit: usize,
    out: &mut [T],
    verify: Verify,
) -> FzResult<()> {
    let uv = h.unit_values();
    let ul = h.unit_len().unwrap_or(usize::MAX);
    let sl = h.unit_sum_len();
    let uf = h.unit_frames();
    for (k, (unit_bytes, vals)) in body.chunks(ul).zip(out.chunks_mut(uv)).enumerate() {
        let unit = first_unit + k;
        let Some(split) = unit_bytes.len().checked_sub(sl) else {
            return Err(FzError::Corrupt("PERNIX stream: truncated chunk".into()));
        };
        let (frames, sum) = unit_bytes.split_at(split);
        // Decode first, then checksum the chunk while its bytes are still in cache: a CRC pass
        // ahead of the decode reads the chunk from memory with nothing to overlap that wait
        // (on Sapphire Rapids it then ran at memory speed, not at its ~90 GB/s in cache).
        // Any bytes decode safely (fixed-size frames, every
        // scale checked), a mismatch still fails the call, and it is reported ahead of what
        // the decoder found, which it explains.
        let decoded = decompress_frames(kernel, h, frames, unit * uf, vals);
        if sl > 0 && verify == Verify::Checksums {
            let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
            if unit_sum(unit as u64, frames) != stored {
                let b0 = unit * uf;
                return Err(FzError::Corrupt(format!(
                    "PERNIX stream: checksum mismatch in chunk {unit} (blocks {b0}..{}, values \
                     {}..{}); the archive is damaged",
                    b0 + frames.len() / h.frame_len(),
                    unit * uv,
                    unit * uv + vals.len()
                )));
            }
        }
        decoded?;
    }
    Ok(())
}

/// Stream framing on a [`Dispatcher`]: serial, or whole chunks per task on the parallel driver
/// (bytes identical for every thread count).
impl Dispatcher {
    /// Compresses `input` into a PERNIX block stream (one scale per block from the block's
    /// largest magnitude, [`block_scales`]; checksummed chunks). Non-finite values are an
    /// error naming the first.
    pub fn compress_stream<T: Element>(
        &self,
        input: &[T],
        bits: BitWidth,
        block_size: BlockSize,
    ) -> FzResult<Vec<u8>> {
        let h = StreamHeader::new::<T>(bits, block_size, input.len() as u64);
        let len = h
            .stream_len()
            .ok_or_else(|| FzError::InvalidArgument("input too large".into()))?;
        let mut out = vec![0u8; len];
        self.compress_stream_into(input, bits, block_size, &mut out)?;
        Ok(out)
    }

    /// [`Dispatcher::compress_stream`] into a caller buffer of at least
    /// [`StreamHeader::stream_len`] bytes; returns the bytes written.
    pub fn compress_stream_into<T: Element>(
        &self,
        input: &[T],
        bits: BitWidth,
        block_size: BlockSize,
        out: &mut [u8],
    ) -> FzResult<usize> {
        let h = StreamHeader::new::<T>(bits, block_size, input.len() as u64);
        let len = h
            .stream_len()
            .ok_or_else(|| FzError::InvalidArgument("input too large".into()))?;
        let Some(out) = out.get_mut(..len) else {
            return Err(FzError::InvalidArgument(format!(
                "output buffer of {} bytes, the stream needs {len}",
                out.len()
            )));
        };
        let (head, body) = out.split_at_mut(h.header_len());
        head.copy_from_slice(&h.to_bytes());
        self.compress_stream_units(&h, input, 0, body)?;
        Ok(len)
    }

    /// Encodes the units (chunks) of the stream `h` that hold `input`, starting at unit
    /// `first_unit` (`input` starts at value `first_unit · unit_values` and holds whole units
    /// except at the end of the stream), into `out` ([`StreamHeader::unit_span`] bytes). This
    /// is how a stream is written piece by piece with bounded memory.
    pub fn compress_stream_units<T: Element>(
        &self,
        h: &StreamHeader,
        input: &[T],
        first_unit: usize,
        out: &mut [u8],
    ) -> FzResult<()> {
        check_dtype::<T>(h)?;
        let (k, uv) = (self.core(), h.unit_values());
        let units = input.len().div_ceil(uv.max(1));
        let per = (uv, h.unit_len().unwrap_or(usize::MAX));
        self.on_chunks(units, uv * T::BYTES, input, out, per, |u, a, b| {
            compress_units(k, h, a, first_unit + u, b)
        })
    }

    /// Decompresses a PERNIX block stream of element type `T`, verifying its checksums.
    pub fn decompress_stream<T: Element>(&self, stream: &[u8]) -> FzResult<Vec<T>> {
        self.decompress_stream_with(stream, Verify::Checksums)
    }

    /// [`Dispatcher::decompress_stream`], verifying the checksums or not.
    pub fn decompress_stream_with<T: Element>(
        &self,
        stream: &[u8],
        verify: Verify,
    ) -> FzResult<Vec<T>> {
        let h = check_stream::<T>(stream, verify)?;
        let n = h.n as usize; // the exact length check bounds n by the bytes present
        let mut out = vec![T::ZERO; n];
        self.decompress_stream_units(&h, &stream[h.header_len()..], 0, &mut out, verify)?;
        Ok(out)
    }

    /// [`Dispatcher::decompress_stream`] into a caller buffer of at least `n` values; returns
    /// the number of values written.
    pub fn decompress_stream_into<T: Element>(
        &self,
        stream: &[u8],
        out: &mut [T],
    ) -> FzResult<usize> {
        self.decompress_stream_into_with(stream, out, Verify::Checksums)
    }

    /// [`Dispatcher::decompress_stream_into`], verifying the checksums or not.
    pub fn decompress_stream_into_with<T: Element>(
        &self,
        stream: &[u8],
        out: &mut [T],
        verify: Verify,
    ) -> FzResult<usize> {
        let h = check_stream::<T>(stream, verify)?;
        let n = h.n as usize;
        let Some(out) = out.get_mut(..n) else {
            return Err(FzError::InvalidArgument(format!(
                "output buffer of {} values, the stream holds {n}",
                out.len()
            )));
        };
        self.decompress_stream_units(&h, &stream[h.header_len()..], 0, out, verify)?;
        Ok(n)
    }

    /// Verifies and decodes the units (chunks) starting at unit `first_unit` of a stream with
    /// header `h` (from [`StreamHeader::check`] or a reader): `body` holds exactly those units'
    /// bytes and `out` their values ([`StreamHeader::unit_span`]). This is how a stream is read
    /// piece by piece with bounded memory; every unit is verified right after it is decoded, in
    /// this call, so `Ok` means every unit matched its checksum (after an error the contents of
    /// `out` are unspecified).
    pub fn decompress_stream_units<T: Element>(
        &self,
        h: &StreamHeader,
        body: &[u8],
        first_unit: usize,
        out: &mut [T],
        verify: Verify,
    ) -> FzResult<()> {
        check_dtype::<T>(h)?;
        let (k, uv) = (self.core(), h.unit_values());
        let ul = h.unit_len().unwrap_or(usize::MAX);
        let units = body.len().div_ceil(ul.max(1));
        let (bytes, vals) = h.unit_span(first_unit..first_unit + units);
        if bytes.len() != body.len() || vals.len() != out.len() || vals.start % uv.max(1) != 0 {
            return Err(FzError::InvalidArgument(format!(
                "units from {first_unit}: {} bytes and {} values given, the stream has {} and {}",
                body.len(),
                out.len(),
                bytes.len(),
                vals.len()
            )));
        }
        let units = out.len().div_ceil(uv.max(1));
        self.on_chunks(units, uv * T::BYTES, body, out, (ul, uv), |u, a, b| {
            decompress_units(k, h, a, first_unit + u, b, verify)
        })
    }
}

/// Parses the header of `stream` and checks its dtype and exact length.
fn check_stream<T: Element>(stream: &[u8], verify: Verify) -> FzResult<StreamHeader> {
    let h = StreamHeader::check(stream, verify)?;
    check_dtype::<T>(&h)?;
    Ok(h)
}

/// [`FzError::DTypeMismatch`] unless the stream `h` holds values of type `T`.
fn check_dtype<T: Element>(h: &StreamHeader) -> FzResult<()> {
    if h.dtype != T::TYPE {
        return Err(FzError::DTypeMismatch {
            stored: h.dtype,
            requested: T::TYPE,
        });
    }
    Ok(())
}

/// Verifies every checksum of a complete stream without decoding (`fzpack info`): the header,
/// the exact length and every chunk. Returns the header.
pub fn verify_stream(stream: &[u8]) -> FzResult<StreamHeader> {
    let h = StreamHeader::check(stream, Verify::Checksums)?;
    if h.unit_sum_len() == 0 {
        return Ok(h);
    }
    let ul = h.unit_len().unwrap_or(usize::MAX);
    let body = &stream[h.header_len()..];
    for (unit, bytes) in body.chunks(ul).enumerate() {
        let (frames, sum) = bytes.split_at(bytes.len() - CHUNK_SUM_LEN);
        let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
        if unit_sum(unit as u64, frames) != stored {
            return Err(FzError::Corrupt(format!(
                "PERNIX stream: checksum mismatch in chunk {unit}; the archive is damaged"
            )));
        }
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The version 1 form of a version 2 stream: 24-byte header, the frames without chunk
    /// checksums (what the version 1 writer produced for the same values).
    pub(crate) fn to_v1(v2: &[u8]) -> Vec<u8> {
        let h = StreamHeader::check(v2, Verify::Checksums).unwrap();
        let v1h = StreamHeader {
            version: STREAM_VERSION_V1,
            chunk_frames: 0,
            ..h
        };
        let mut out = v1h.to_bytes();
        for unit in v2[h.header_len()..].chunks(h.unit_len().unwrap()) {
            out.extend_from_slice(&unit[..unit.len() - CHUNK_SUM_LEN]);
        }
        out
    }

    #[test]
    fn header_layout_and_hostile_streams() {
        let x: Vec<f32> = (0..100).map(|i| i as f32 - 50.0).collect();
        let s = compress_vec(&x, BitWidth::new(16).unwrap(), BlockSize::B64).unwrap();
        // 100 values, E = 32, 4 frames of 4 + 64 bytes in one chunk (1024 frames per chunk)
        assert_eq!(s.len(), 32 + 4 * 68 + 4);
        assert_eq!(&s[..8], b"FZPX\x02\x01\x10\x01");
        assert_eq!(u32::from_le_bytes(s[8..12].try_into().unwrap()), 64);
        assert_eq!(u32::from_le_bytes(s[12..16].try_into().unwrap()), 1024);
        assert_eq!(u64::from_le_bytes(s[16..24].try_into().unwrap()), 100);
        assert_eq!(
            u32::from_le_bytes(s[28..32].try_into().unwrap()),
            crc32fast::hash(&s[..28])
        );
        assert_eq!(
            f32::from_le_bytes(s[32..36].try_into().unwrap()),
            50.0 / 32767.0
        );
        let v1 = to_v1(&s);
        assert_eq!(v1.len(), 24 + 4 * 68);
        assert_eq!(&v1[..8], b"FZPX\x01\x01\x10\x01");
        let a: Vec<f32> = decompress_vec(&s).unwrap();
        let b: Vec<f32> = decompress_vec(&v1).unwrap();
        assert_eq!(a, b);
        assert_eq!(stream_scales(&s).unwrap(), stream_scales(&v1).unwrap());
        for (stream, hdr) in [(&s, 32usize), (&v1, 24)] {
            let corrupt = |at: usize, v: u8| {
                let mut b = stream.clone();
                b[at] = v;
                decompress_vec::<f32>(&b).unwrap_err()
            };
            for (at, v) in [
                (0, b'X'),
                (4, 3),
                (5, 9),
                (6, 0),
                (6, 25),
                (7, 0),
                (8, 65),
                (12, 1),
                (hdr + 3, 0xFF),
            ] {
                assert!(
                    matches!(corrupt(at, v), FzError::Corrupt(_)),
                    "v{} byte {at} = {v}",
                    stream[4]
                );
            }
            assert!(matches!(
                decompress_vec::<f64>(stream).unwrap_err(),
                FzError::DTypeMismatch { .. }
            ));
            for cut in [0, 23, 24, 31, stream.len() - 1] {
                assert!(decompress_vec::<f32>(&stream[..cut]).is_err());
            }
            let mut long = stream.clone();
            long.push(0);
            assert!(decompress_vec::<f32>(&long).is_err());
        }
        // a huge n with a tiny body is rejected without allocating (v1: no header checksum)
        let mut huge = v1.clone();
        huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decompress_vec::<f32>(&huge).is_err());
        huge[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(decompress_vec::<f32>(&huge).is_err());
        // a block bit flip: the checksum names the chunk; skipping verification decodes it
        let mut flip = s.clone();
        flip[100] ^= 4;
        let e = decompress_vec::<f32>(&flip).unwrap_err();
        assert!(
            e.to_string().contains("checksum mismatch in chunk 0"),
            "{e}"
        );
        assert!(verify_stream(&flip).is_err() && verify_stream(&s).is_ok());
        let d = default_dispatcher();
        let y: Vec<f32> = d.decompress_stream_with(&flip, Verify::Skip).unwrap();
        assert_eq!(y.len(), 100);
        assert_ne!(y, a);
        // A chunk is decoded before its checksum is checked (from cache), but a corrupt chunk
        // still fails as a checksum mismatch, ahead of what the decoder itself rejects (here a
        // NaN scale in the second frame); without verification the scale is the error.
        let mut nan = s.clone();
        let fr1 = StreamHeader::check(&s, Verify::Checksums)
            .unwrap()
            .header_len()
            + 4
            + 64;
        nan[fr1..fr1 + 4].copy_from_slice(&f32::NAN.to_bits().to_le_bytes());
        let e = decompress_vec::<f32>(&nan).unwrap_err();
        assert!(
            e.to_string().contains("checksum mismatch in chunk 0"),
            "{e}"
        );
        let e = d
            .decompress_stream_with::<f32>(&nan, Verify::Skip)
            .unwrap_err();
        assert!(e.to_string().contains("block 1 has scale"), "{e}");
        // a header flip under Verify::Skip is still checked structurally
        let mut hflip = s.clone();
        hflip[17] ^= 1; // n + 256: more blocks than the bytes hold
        assert!(decompress_vec::<f32>(&hflip).is_err());
        assert!(
            d.decompress_stream_with::<f32>(&hflip, Verify::Skip)
                .is_err()
        );
    }

    /// The fast path of `block_scales`: at and just below `unchecked_bmax_limit` (`T::MAX / 4`,
    /// the worst case of the proof) and at scattered magnitudes below it, every width's extreme codes
    /// decode finitely with the scale it returns, and that scale is `scale_from_bmax`'s own
    /// (no step down was needed).
    #[test]
    fn block_scales_below_quarter_max_need_no_check() {
        fn check<T: Element>(quarter: T) {
            let mut b = quarter.to_bits_u64();
            let mut samples = Vec::new();
            for _ in 0..64 {
                samples.push(T::from_bits_u64(b));
                b -= 1; // the ulps just below the threshold
            }
            let mut b = quarter.to_bits_u64();
            while b > (1 << (8 * T::BYTES - 12)) {
                b -= b / 7 + 1; // then scattered down to small magnitudes
                samples.push(T::from_bits_u64(b));
            }
            for n in 1..=24u8 {
                let bits = BitWidth::new(n).unwrap();
                let (lo, hi) = if n == 1 {
                    (0, 1)
                } else {
                    (-(1i32 << (n - 1)), (1i32 << (n - 1)) - 1)
                };
                for &bmax in &samples {
                    let (scale, inv) = block_scales(bmax, bits).unwrap();
                    // (tiny maxima, whose inverse overflows, take the bmax = 0 scale)
                    let s0 = scale_from_bmax(bmax, bits).unwrap();
                    if matches!(inverse_scale(s0), Ok(i) if i.is_positive_finite()) {
                        assert_eq!(scale, s0);
                    }
                    let neg = T::from_bits_u64(bmax.to_bits_u64() ^ (1 << (8 * T::BYTES - 1)));
                    for x in [bmax, neg] {
                        let y = T::dequantize(x.quantize(inv, lo, hi), scale);
                        assert!(y.is_finite(), "N={n} bmax={bmax:?}: {y:?}");
                    }
                }
            }
        }
        let (l32, l64) = (unchecked_bmax_limit::<f32>(), unchecked_bmax_limit::<f64>());
        assert_eq!(f32::from_bits(l32 as u32), f32::MAX / 4.0);
        assert_eq!(f64::from_bits(l64), f64::MAX / 4.0);
        check::<f32>(f32::from_bits(l32 as u32));
        check::<f64>(f64::from_bits(l64));
    }

    #[test]
    fn chunks_split_and_stream_by_units() {
        // 64-byte blocks at 8 bits: E = 64, 1024 frames per chunk, 65536 values per chunk
        let x: Vec<f32> = (0..200_003)
            .map(|i| ((i % 977) as f32).sin() * 3.0)
            .collect();
        let (bits, bs) = (BitWidth::new(8).unwrap(), BlockSize::B64);
        let s = compress_vec(&x, bits, bs).unwrap();
        let h = StreamHeader::check(&s, Verify::Checksums).unwrap();
        assert_eq!(h.units(), Some(4));
        let serial = Dispatcher::new(Backend::Fallback).unwrap();
        assert_eq!(serial.compress_stream(&x, bits, bs).unwrap(), s);
        let whole: Vec<f32> = decompress_vec(&s).unwrap();
        let mut pieces = Vec::new();
        for u in 0..4 {
            let (bytes, vals) = h.unit_span(u..u + 1);
            let mut v = vec![0f32; vals.len()];
            serial
                .decompress_stream_units(&h, &s[bytes], u, &mut v, Verify::Checksums)
                .unwrap();
            pieces.extend(v);
        }
        assert_eq!(pieces, whole);
        // swapping two whole chunks of equal size is caught (the index is in the checksum)
        let (a, _) = h.unit_span(0..1);
        let (b, _) = h.unit_span(1..2);
        let mut swapped = s.clone();
        swapped[a.clone()].copy_from_slice(&s[b.clone()]);
        swapped[b].copy_from_slice(&s[a]);
        assert!(decompress_vec::<f32>(&swapped).is_err());
    }

    #[test]
    fn extreme_magnitudes_never_decode_to_infinity() {
        fn check<T: Element>(max: T, neg: T) {
            let x = vec![max, neg, max, T::ZERO, neg];
            for bits in BitWidth::all() {
                for bs in [BlockSize::B64, BlockSize::B1024] {
                    let s = compress_vec(&x, bits, bs).unwrap();
                    let y: Vec<T> = decompress_vec(&s).unwrap();
                    let scales = stream_scales(&s).unwrap();
                    for (a, b) in x.iter().zip(&y) {
                        assert!(b.is_finite(), "bits {}: {a:?} -> {b:?}", bits.get());
                        let bound = block_error_bound(scales[0], bits);
                        assert!(
                            (a.to_f64() - b.to_f64()).abs() <= bound,
                            "bits {}: {a:?} -> {b:?}, bound {bound}",
                            bits.get()
                        );
                    }
                }
            }
        }
        check(f32::MAX, -f32::MAX);
        check(f64::MAX, -f64::MAX);
    }

    #[test]
    fn bound_holds_for_every_width_and_tiny_blocks() {
        let mut x: Vec<f64> = (0..3000).map(|i| ((i * 7) % 101) as f64 - 50.3).collect();
        x[5] = 1e-310; // a subnormal block neighbour
        x.extend([1e-310, -2e-310, 0.0, 5e-320]);
        for bits in BitWidth::all() {
            let s = compress_vec(&x, bits, BlockSize::B128).unwrap();
            let y: Vec<f64> = decompress_vec(&s).unwrap();
            let scales = stream_scales(&s).unwrap();
            let e = elements_per_block(bits, BlockSize::B128);
            for (i, (a, b)) in x.iter().zip(&y).enumerate() {
                let bound = block_error_bound(scales[i / e], bits);
                assert!(
                    (a - b).abs() <= bound,
                    "bits {} i {i}: {a} vs {b}",
                    bits.get()
                );
            }
        }
    }
}
