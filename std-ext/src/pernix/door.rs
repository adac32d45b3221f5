//! The PERNIX front door for `.pnx` streams: [`Encoder`] and [`Decoder`] builders with their
//! sinks, and the one-call shorthands [`compress`] and [`decompress`].

use std::io::Write;

use fzpack_core::pernix::stream::StreamHeader;
use fzpack_core::pernix::{BitWidth, BlockSize, Verify};

use super::{Dispatcher, default_dispatcher};
use crate::element::Element;
#[cfg(feature = "rayon")]
use crate::par::Parallel;
use crate::{Error as FzError, Result as FzResult};

/// Stream bytes a [`Encoder::write_to`] batch aims at: large enough for the parallel driver to
/// split, small enough to bound memory.
pub(crate) const BATCH_BYTES: usize = 8 << 20;

/// Whole chunks per batch of about [`BATCH_BYTES`] values for a header.
pub(crate) fn batch_units(h: &StreamHeader) -> usize {
    (BATCH_BYTES / (h.unit_values().max(1) * h.dtype.size())).max(1)
}

/// Compresses values into a PERNIX block stream (current version, checksummed chunks; one
/// scale per block from the block's largest magnitude, [`block_scales`](super::block_scales)).
/// Non-finite values are an error naming the first.
///
/// ```
/// use fzpack::pernix::{BitWidth, BlockSize, Decoder, Encoder, Verify};
///
/// let x: Vec<f32> = (0..10_000).map(|i| (i as f32 * 0.01).sin()).collect();
/// let enc = Encoder::new(BitWidth::new(12)?, BlockSize::B64);
/// let stream = enc.to_vec(&x)?;
/// let mut again = Vec::new();
/// assert_eq!(enc.serial().into_vec(&x, &mut again)?, stream.len());
/// assert_eq!(again, stream);
/// let back: Vec<f32> = Decoder::new().verify(Verify::Checksums).to_vec(&stream)?;
/// assert_eq!(back.len(), x.len());
/// # Ok::<(), fzpack::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Encoder {
    bits: BitWidth,
    block_size: BlockSize,
    dispatcher: Dispatcher,
}

impl Encoder {
    /// An encoder of `bits`-bit blocks of `block_size` bytes on the default dispatcher (the
    /// parallel driver on rayon's global pool with feature `rayon`, else the calling thread).
    pub fn new(bits: BitWidth, block_size: BlockSize) -> Self {
        Encoder {
            bits,
            block_size,
            dispatcher: default_dispatcher().clone(),
        }
    }

    /// Runs on `d` (any backend, serial or parallel).
    pub fn dispatcher(mut self, d: &Dispatcher) -> Self {
        self.dispatcher = d.clone();
        self
    }

    /// Runs on the parallel driver `par` (this encoder's kernel).
    #[cfg(feature = "rayon")]
    pub fn threads(mut self, par: &Parallel) -> Self {
        self.dispatcher = self.dispatcher.on_pool(par);
        self
    }

    /// Runs on the calling thread (this encoder's kernel).
    pub fn serial(mut self) -> Self {
        self.dispatcher = self.dispatcher.to_serial();
        self
    }

    /// The header of a stream of `n` values of `T`.
    pub fn header<T: Element>(&self, n: u64) -> StreamHeader {
        StreamHeader::new::<T>(self.bits, self.block_size, n)
    }

    /// The stream length for `n` values of `T`.
    fn len_for<T: Element>(&self, n: usize) -> FzResult<(StreamHeader, usize)> {
        let h = self.header::<T>(n as u64);
        let len = h
            .stream_len()
            .ok_or_else(|| FzError::InvalidArgument("input too large".into()))?;
        Ok((h, len))
    }

    /// The stream of `input`, in a new `Vec`.
    pub fn to_vec<T: Element>(&self, input: &[T]) -> FzResult<Vec<u8>> {
        let mut out = Vec::new();
        self.into_vec(input, &mut out)?;
        Ok(out)
    }

    /// The stream of `input` in `out` (its contents replaced, its capacity reused); returns
    /// the length.
    pub fn into_vec<T: Element>(&self, input: &[T], out: &mut Vec<u8>) -> FzResult<usize> {
        let (_, len) = self.len_for::<T>(input.len())?;
        out.clear();
        out.resize(len, 0);
        self.into_slice(input, out)
    }

    /// The stream of `input` at the start of `out` (at least
    /// [`StreamHeader::stream_len`] bytes); returns the length.
    pub fn into_slice<T: Element>(&self, input: &[T], out: &mut [u8]) -> FzResult<usize> {
        let (h, len) = self.len_for::<T>(input.len())?;
        let Some(out) = out.get_mut(..len) else {
            return Err(FzError::InvalidArgument(format!(
                "output buffer of {} bytes, the stream needs {len}",
                out.len()
            )));
        };
        let at = h.write(out)?;
        self.dispatcher.encode_units(&h, input, 0, &mut out[at..])?;
        Ok(len)
    }

    /// Writes the stream of `input` to `w`, a batch of whole chunks (about 8 MiB of values) at
    /// a time; returns the bytes written.
    pub fn write_to<T: Element>(&self, input: &[T], mut w: impl Write) -> FzResult<u64> {
        let (h, len) = self.len_for::<T>(input.len())?;
        let mut head = [0u8; fzpack_core::pernix::stream::STREAM_HEADER_LEN_V2];
        let at = h.write(&mut head)?;
        w.write_all(&head[..at])?;
        let per = batch_units(&h) * h.unit_values().max(1);
        let mut buf = Vec::new();
        for (k, vals) in input.chunks(per.max(1)).enumerate() {
            let u0 = k * batch_units(&h);
            let (bytes, _) = h.unit_span(u0..u0 + vals.len().div_ceil(h.unit_values().max(1)));
            buf.resize(bytes.len(), 0);
            self.dispatcher.encode_units(&h, vals, u0, &mut buf)?;
            w.write_all(&buf)?;
        }
        Ok(len as u64)
    }

    /// Encodes a piece of a stream with header `h` (from [`Encoder::header`]): the chunks from
    /// `first_unit` that hold `input` (values from `first_unit · unit_values`, whole chunks
    /// except at the end of the stream) into `out` (their [`StreamHeader::unit_span`] bytes).
    /// How a stream is written piece by piece with bounded memory.
    pub fn units<T: Element>(
        &self,
        h: &StreamHeader,
        input: &[T],
        first_unit: usize,
        out: &mut [u8],
    ) -> FzResult<()> {
        self.dispatcher.encode_units(h, input, first_unit, out)
    }
}

/// Decompresses PERNIX block streams (versions 1 and 2). Each chunk is verified once, right
/// after it is decoded, while its bytes are in cache ([`Verify::Skip`] skips the CRCs; the
/// structural checks always run).
#[derive(Clone, Debug)]
pub struct Decoder {
    dispatcher: Dispatcher,
    verify: Verify,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A verifying decoder on the default dispatcher.
    pub fn new() -> Self {
        Decoder {
            dispatcher: default_dispatcher().clone(),
            verify: Verify::Checksums,
        }
    }

    /// Runs on `d` (any backend, serial or parallel).
    pub fn dispatcher(mut self, d: &Dispatcher) -> Self {
        self.dispatcher = d.clone();
        self
    }

    /// Runs on the parallel driver `par` (this decoder's kernel).
    #[cfg(feature = "rayon")]
    pub fn threads(mut self, par: &Parallel) -> Self {
        self.dispatcher = self.dispatcher.on_pool(par);
        self
    }

    /// Runs on the calling thread (this decoder's kernel).
    pub fn serial(mut self) -> Self {
        self.dispatcher = self.dispatcher.to_serial();
        self
    }

    /// Verify the checksums (the default) or skip them.
    pub fn verify(mut self, verify: Verify) -> Self {
        self.verify = verify;
        self
    }

    /// The header of a complete stream, its exact length checked (and its CRC, unless
    /// skipped); the chunks are verified as they are decoded.
    pub fn header(&self, stream: &[u8]) -> FzResult<StreamHeader> {
        Ok(StreamHeader::check(stream, self.verify)?)
    }

    /// The values of `stream`, in a new `Vec`.
    pub fn to_vec<T: Element>(&self, stream: &[u8]) -> FzResult<Vec<T>> {
        let mut out = Vec::new();
        self.into_vec(stream, &mut out)?;
        Ok(out)
    }

    /// The values of `stream` in `out` (resized to the count, capacity reused); returns the
    /// count.
    pub fn into_vec<T: Element>(&self, stream: &[u8], out: &mut Vec<T>) -> FzResult<usize> {
        let h = self.header(stream)?;
        h.expect::<T>()?;
        out.clear();
        out.resize(h.n as usize, T::ZERO); // the exact length check bounds n by the bytes
        self.decode(&h, stream, out)
    }

    /// The values of `stream` at the start of `out` (at least `n` values); returns `n`.
    pub fn into_slice<T: Element>(&self, stream: &[u8], out: &mut [T]) -> FzResult<usize> {
        let h = self.header(stream)?;
        h.expect::<T>()?;
        let n = h.n as usize;
        let Some(out) = out.get_mut(..n) else {
            return Err(FzError::InvalidArgument(format!(
                "output buffer of {} values, the stream holds {n}",
                out.len()
            )));
        };
        self.decode(&h, stream, out)
    }

    fn decode<T: Element>(
        &self,
        h: &StreamHeader,
        stream: &[u8],
        out: &mut [T],
    ) -> FzResult<usize> {
        let body = &stream[h.header_len()..];
        self.dispatcher.decode_units(h, body, 0, out, self.verify)?;
        Ok(out.len())
    }

    /// Decodes a piece of a stream with header `h`: the chunks from `first_unit` that `body`
    /// holds (exactly their [`StreamHeader::unit_span`] bytes) into `out` (exactly their
    /// values). Every chunk is verified right after it is decoded, in this call, so `Ok` means
    /// every chunk matched its checksum (after an error `out` is unspecified). How a stream is
    /// read piece by piece with bounded memory.
    pub fn units<T: Element>(
        &self,
        h: &StreamHeader,
        body: &[u8],
        first_unit: usize,
        out: &mut [T],
    ) -> FzResult<()> {
        self.dispatcher
            .decode_units(h, body, first_unit, out, self.verify)
    }
}

/// Compresses `input` into a PERNIX block stream: `Encoder::new(bits, block_size).to_vec(input)`.
pub fn compress<T: Element>(
    input: &[T],
    bits: BitWidth,
    block_size: BlockSize,
) -> FzResult<Vec<u8>> {
    Encoder::new(bits, block_size).to_vec(input)
}

/// Decompresses a PERNIX block stream of `T`, verifying it: `Decoder::new().to_vec(stream)`.
pub fn decompress<T: Element>(stream: &[u8]) -> FzResult<Vec<T>> {
    Decoder::new().to_vec(stream)
}
