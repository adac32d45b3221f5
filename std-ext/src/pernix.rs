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

/// Magic bytes that open a PERNIX block stream.
pub const STREAM_MAGIC: [u8; 4] = *b"FZPX";
/// The stream format version this crate writes and reads.
pub const STREAM_VERSION: u8 = 1;
/// Length of the stream header in bytes.
pub const STREAM_HEADER_LEN: usize = 24;

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
}

impl StreamHeader {
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

    /// Total stream length in bytes, `None` on overflow.
    pub fn stream_len(&self) -> Option<usize> {
        self.blocks()?
            .checked_mul(self.frame_len())?
            .checked_add(STREAM_HEADER_LEN)
    }

    /// Whether values are sign-extended on decoding (every width but 1).
    pub fn sign_values(&self) -> bool {
        self.bits.get() > 1
    }

    /// The 24 header bytes.
    pub fn to_bytes(&self) -> [u8; STREAM_HEADER_LEN] {
        let mut h = [0u8; STREAM_HEADER_LEN];
        h[..4].copy_from_slice(&STREAM_MAGIC);
        h[4] = STREAM_VERSION;
        h[5] = match self.dtype {
            DType::F32 => 1,
            DType::F64 => 2,
        };
        h[6] = self.bits.get();
        h[7] = u8::from(self.sign_values());
        h[8..12].copy_from_slice(&(self.block_size.bytes() as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.n.to_le_bytes());
        h
    }

    /// Parses and validates the header at the start of `bytes` (the rest is not checked).
    pub fn parse(bytes: &[u8]) -> FzResult<Self> {
        let corrupt = |w: &str| Err(FzError::Corrupt(format!("PERNIX stream: {w}")));
        let Some(h) = bytes.get(..STREAM_HEADER_LEN) else {
            return corrupt("shorter than its 24-byte header");
        };
        if h[..4] != STREAM_MAGIC {
            return corrupt("bad magic (not a PERNIX block stream)");
        }
        if h[4] != STREAM_VERSION {
            return Err(FzError::Corrupt(format!(
                "PERNIX stream: unsupported version {} (this build reads {STREAM_VERSION})",
                h[4]
            )));
        }
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
        let header = StreamHeader {
            dtype,
            bits,
            block_size,
            n: u64::from_le_bytes(h[16..24].try_into().expect("8 bytes")),
        };
        if h[7] != u8::from(header.sign_values()) || h[12..16] != [0; 4] {
            return corrupt("reserved flag bits set");
        }
        Ok(header)
    }
}

/// The scale written for a block whose largest magnitude is `bmax`, and its inverse.
///
/// `scale_from_bmax`, except when `1 / scale` overflows (tiny subnormal `bmax`): then the
/// `bmax = 0` scale (machine epsilon) is used, which quantizes the block to zeros within the bound.
pub fn block_scales<T: Element>(bmax: T, bits: BitWidth) -> std::result::Result<(T, T), FzError> {
    let scale = scale_from_bmax(bmax, bits)?;
    match inverse_scale(scale) {
        Ok(inv) if inv.is_positive_finite() => Ok((scale, inv)),
        _ => {
            let s = scale_from_bmax(T::ZERO, bits)?;
            Ok((s, inverse_scale(s)?))
        }
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

fn compress_frames<T: Element>(
    kernel: &CoreDispatcher,
    bits: BitWidth,
    bs: BlockSize,
    input: &[T],
    first_index: usize,
    out: &mut [u8],
) -> FzResult<()> {
    let e = elements_per_block(bits, bs);
    let frame = T::BYTES + bs.bytes();
    for (k, (vals, fr)) in input.chunks(e).zip(out.chunks_exact_mut(frame)).enumerate() {
        let Some(bmax) = T::max_abs_finite(vals) else {
            let j = vals.iter().position(|v| !v.is_finite()).unwrap_or(0);
            return Err(FzError::NonFinite {
                index: first_index + k * e + j,
            });
        };
        let (scale, inv) = block_scales(bmax, bits)?;
        let (s, blk) = fr.split_at_mut(T::BYTES);
        scale.write_le(s);
        if vals.len() == e {
            kernel.compress_block(bits, bs, vals, inv, blk)?;
        } else {
            let mut tmp = vec![T::ZERO; e];
            tmp[..vals.len()].copy_from_slice(vals);
            kernel.compress_block(bits, bs, &tmp, inv, blk)?;
        }
    }
    Ok(())
}

fn decompress_frames<T: Element>(
    kernel: &CoreDispatcher,
    h: &StreamHeader,
    frames: &[u8],
    first_block: usize,
    out: &mut [T],
) -> FzResult<()> {
    let e = h.elements_per_block();
    let sign = h.sign_values();
    for (k, (fr, vals)) in frames
        .chunks_exact(h.frame_len())
        .zip(out.chunks_mut(e))
        .enumerate()
    {
        let (s, blk) = fr.split_at(T::BYTES);
        let scale = T::read_le(s);
        if !scale.is_positive_finite() {
            return Err(FzError::Corrupt(format!(
                "PERNIX stream: block {} has scale {scale:?}, not finite and positive",
                first_block + k
            )));
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

    /// As [`CoreDispatcher::compress_blocks`]; the parallel backend splits the run into chunks
    /// of whole blocks.
    pub fn compress_blocks<T: Element>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[T],
        inverse_scale: T,
        output: &mut [u8],
        blocks: usize,
    ) -> std::result::Result<(), fzpack_core::pernix::Error> {
        #[cfg(feature = "rayon")]
        if let Some(par) = &self.par {
            let e = elements_per_block(bits, block_size);
            let bs = block_size.bytes();
            if let Some(per) = par.units_per_task(blocks, e * T::BYTES) {
                let (n_in, n_out) = checked_run(e, bs, blocks)?;
                if !inverse_scale.is_positive_finite() {
                    return Err(fzpack_core::pernix::Error::InvalidArgument);
                }
                let (Some(input), Some(output)) = (input.get(..n_in), output.get_mut(..n_out))
                else {
                    return Err(fzpack_core::pernix::Error::InvalidArgument);
                };
                let k = self.kernel;
                return par.zip_chunks(input, per * e, output, per * bs, |_, a, b| {
                    k.compress_blocks(bits, block_size, a, inverse_scale, b, a.len() / e)
                });
            }
        }
        self.kernel
            .compress_blocks(bits, block_size, input, inverse_scale, output, blocks)
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

    /// As [`CoreDispatcher::decompress_blocks`]; the parallel backend splits the run.
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
        #[cfg(feature = "rayon")]
        if let Some(par) = &self.par {
            let e = elements_per_block(bits, block_size);
            let bs = block_size.bytes();
            if let Some(per) = par.units_per_task(blocks, e * T::BYTES) {
                let (n_out, n_in) = checked_run(e, bs, blocks)?;
                if !scale.is_positive_finite() {
                    return Err(fzpack_core::pernix::Error::InvalidArgument);
                }
                let (Some(input), Some(output)) = (input.get(..n_in), output.get_mut(..n_out))
                else {
                    return Err(fzpack_core::pernix::Error::InvalidArgument);
                };
                let k = self.kernel;
                return par.zip_chunks(input, per * bs, output, per * e, |_, a, b| {
                    k.decompress_blocks(bits, block_size, a, scale, b, a.len() / bs, sign_values)
                });
            }
        }
        self.kernel
            .decompress_blocks(bits, block_size, input, scale, output, blocks, sign_values)
    }

    /// Compresses `input` into a PERNIX block stream (one scale per block from the block's
    /// largest magnitude, [`block_scales`]). Non-finite values are an error naming the first.
    pub fn compress_stream<T: Element>(
        &self,
        input: &[T],
        bits: BitWidth,
        block_size: BlockSize,
    ) -> FzResult<Vec<u8>> {
        let h = StreamHeader {
            dtype: T::TYPE,
            bits,
            block_size,
            n: input.len() as u64,
        };
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
        let h = StreamHeader {
            dtype: T::TYPE,
            bits,
            block_size,
            n: input.len() as u64,
        };
        let len = h
            .stream_len()
            .ok_or_else(|| FzError::InvalidArgument("input too large".into()))?;
        let Some(out) = out.get_mut(..len) else {
            return Err(FzError::InvalidArgument(format!(
                "output buffer of {} bytes, the stream needs {len}",
                out.len()
            )));
        };
        let (head, body) = out.split_at_mut(STREAM_HEADER_LEN);
        head.copy_from_slice(&h.to_bytes());
        self.compress_frames_any(input, bits, block_size, 0, body)?;
        Ok(len)
    }

    /// Compresses whole frames (scale + block) of `input` into `body`, serially or with the
    /// parallel driver; `first_index` is the global index of `input[0]` (for error messages).
    pub(crate) fn compress_frames_any<T: Element>(
        &self,
        input: &[T],
        bits: BitWidth,
        block_size: BlockSize,
        first_index: usize,
        body: &mut [u8],
    ) -> FzResult<()> {
        #[cfg(feature = "rayon")]
        if let Some(par) = &self.par {
            let e = elements_per_block(bits, block_size);
            let frame = T::BYTES + block_size.bytes();
            let blocks = input.len().div_ceil(e);
            if let Some(per) = par.units_per_task(blocks, e * T::BYTES) {
                let k = self.kernel;
                return par.zip_chunks(input, per * e, body, per * frame, |i, a, b| {
                    compress_frames(&k, bits, block_size, a, first_index + i * per * e, b)
                });
            }
        }
        compress_frames(&self.kernel, bits, block_size, input, first_index, body)
    }

    /// Decompresses a PERNIX block stream of element type `T`.
    pub fn decompress_stream<T: Element>(&self, stream: &[u8]) -> FzResult<Vec<T>> {
        let h = check_stream::<T>(stream)?;
        let n = h.n as usize; // checked by check_stream
        let mut out = vec![T::ZERO; n];
        self.decompress_body(&h, &stream[STREAM_HEADER_LEN..], 0, &mut out)?;
        Ok(out)
    }

    /// [`Dispatcher::decompress_stream`] into a caller buffer of at least `n` values; returns
    /// the number of values written.
    pub fn decompress_stream_into<T: Element>(
        &self,
        stream: &[u8],
        out: &mut [T],
    ) -> FzResult<usize> {
        let h = check_stream::<T>(stream)?;
        let n = h.n as usize;
        let Some(out) = out.get_mut(..n) else {
            return Err(FzError::InvalidArgument(format!(
                "output buffer of {} values, the stream holds {n}",
                out.len()
            )));
        };
        self.decompress_body(&h, &stream[STREAM_HEADER_LEN..], 0, out)?;
        Ok(n)
    }

    /// Decodes whole frames of `body` into `out` (`out.len()` values).
    pub(crate) fn decompress_body<T: Element>(
        &self,
        h: &StreamHeader,
        body: &[u8],
        first_block: usize,
        out: &mut [T],
    ) -> FzResult<()> {
        #[cfg(feature = "rayon")]
        if let Some(par) = &self.par {
            let e = h.elements_per_block();
            let blocks = out.len().div_ceil(e);
            if let Some(per) = par.units_per_task(blocks, e * T::BYTES) {
                let k = self.kernel;
                let frame = h.frame_len();
                return par.zip_chunks(body, per * frame, out, per * e, |i, a, b| {
                    decompress_frames(&k, h, a, first_block + i * per, b)
                });
            }
        }
        decompress_frames(&self.kernel, h, body, first_block, out)
    }
}

#[cfg(feature = "rayon")]
fn checked_run(
    e: usize,
    bs: usize,
    blocks: usize,
) -> std::result::Result<(usize, usize), fzpack_core::pernix::Error> {
    if blocks == 0 {
        return Err(fzpack_core::pernix::Error::InvalidArgument);
    }
    match (e.checked_mul(blocks), bs.checked_mul(blocks)) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(fzpack_core::pernix::Error::InvalidArgument),
    }
}

/// Parses the header of `stream` and checks its dtype and exact length.
fn check_stream<T: Element>(stream: &[u8]) -> FzResult<StreamHeader> {
    let h = StreamHeader::parse(stream)?;
    if h.dtype != T::TYPE {
        return Err(FzError::DTypeMismatch {
            stored: h.dtype,
            requested: T::TYPE,
        });
    }
    let Some(len) = h.stream_len() else {
        return Err(FzError::Corrupt(format!(
            "PERNIX stream: n = {} is too large",
            h.n
        )));
    };
    if stream.len() != len {
        return Err(FzError::Corrupt(format!(
            "PERNIX stream: {} bytes, the header (n = {}, {} bits, {}-byte blocks) needs {len}",
            stream.len(),
            h.n,
            h.bits.get(),
            h.block_size.bytes()
        )));
    }
    Ok(h)
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
pub fn stream_scales(stream: &[u8]) -> FzResult<Vec<f64>> {
    let h = StreamHeader::parse(stream)?;
    let len = h
        .stream_len()
        .ok_or_else(|| FzError::Corrupt("PERNIX stream: n too large".into()))?;
    if stream.len() != len {
        return Err(FzError::Corrupt(format!(
            "PERNIX stream: {} bytes, the header needs {len}",
            stream.len()
        )));
    }
    Ok(stream[STREAM_HEADER_LEN..]
        .chunks_exact(h.frame_len())
        .map(|f| match h.dtype {
            DType::F32 => f32::read_le(f) as f64,
            DType::F64 => f64::read_le(f),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout_and_hostile_streams() {
        let x: Vec<f32> = (0..100).map(|i| i as f32 - 50.0).collect();
        let s = compress_vec(&x, BitWidth::new(16).unwrap(), BlockSize::B64).unwrap();
        // 100 values, E = 32, 4 frames of 4 + 64 bytes
        assert_eq!(s.len(), 24 + 4 * 68);
        assert_eq!(&s[..8], b"FZPX\x01\x01\x10\x01");
        assert_eq!(u32::from_le_bytes(s[8..12].try_into().unwrap()), 64);
        assert_eq!(u64::from_le_bytes(s[16..24].try_into().unwrap()), 100);
        assert_eq!(
            f32::from_le_bytes(s[24..28].try_into().unwrap()),
            50.0 / 32767.0
        );
        let corrupt = |at: usize, v: u8| {
            let mut b = s.clone();
            b[at] = v;
            decompress_vec::<f32>(&b).unwrap_err()
        };
        for (at, v) in [
            (0, b'X'),
            (4, 2),
            (5, 9),
            (6, 0),
            (6, 25),
            (7, 0),
            (8, 65),
            (12, 1),
        ] {
            assert!(
                matches!(corrupt(at, v), FzError::Corrupt(_)),
                "byte {at} = {v}"
            );
        }
        assert!(matches!(
            decompress_vec::<f64>(&s).unwrap_err(),
            FzError::DTypeMismatch { .. }
        ));
        for cut in [0, 23, 24, s.len() - 1] {
            assert!(decompress_vec::<f32>(&s[..cut]).is_err());
        }
        let mut long = s.clone();
        long.push(0);
        assert!(decompress_vec::<f32>(&long).is_err());
        // a huge n with a tiny body is rejected without allocating
        let mut huge = s.clone();
        huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decompress_vec::<f32>(&huge).is_err());
        huge[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(decompress_vec::<f32>(&huge).is_err());
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
