//! `std::io` adaptors: write raw little-endian values into a compressor, read raw values out
//! of a decompressor.
//!
//! * [`PernixWriter`] / [`PernixReader`]: PERNIX block streams, truly streaming (memory is a
//!   bounded batch of blocks).
//! * [`SzpWriter`] / [`SzpReader`]: fzpack SZp archives, through the core's archive layer
//!   (in parallel with feature `rayon`). The header holds `n` and the width bytes precede the
//!   payload, so on a plain `Write` the writer holds the compressed parts until
//!   [`SzpWriter::finish`] (an ABS bound with `max_abs`: encoded a batch at a time as values
//!   arrive), or the values themselves (NOA needs the value range first); the chunk CRCs
//!   follow the payload, so the reader reads the whole archive, then decodes and verifies it a
//!   batch at a time.
//!
//! ```
//! use std::io::{Read, Write};
//! use fzpack::io::{PernixReader, PernixWriter};
//! use fzpack::pernix::{BitWidth, BlockSize};
//!
//! let values: Vec<f32> = (0..5000).map(|i| i as f32 * 0.5).collect();
//! let raw = fzpack::values_to_le_bytes(&values);
//! let mut w = PernixWriter::<_, f32>::new(Vec::new(), BitWidth::new(20)?, BlockSize::B128, 5000)?;
//! for piece in raw.chunks(999) {
//!     w.write_all(piece)?;
//! }
//! let stream = w.finish()?;
//! let mut r = PernixReader::new(&stream[..])?;
//! let mut back = Vec::new();
//! r.read_to_end(&mut back)?;
//! assert_eq!(back.len(), raw.len());
//! # Ok::<(), fzpack::Error>(())
//! ```

use std::io::{self, Read, Write};

use crate::element::{DType, Element};
use crate::pernix::{
    BitWidth, BlockSize, Decoder, Dispatcher, Encoder, STREAM_HEADER_LEN, STREAM_HEADER_LEN_V2,
    STREAM_VERSION_V1, StreamHeader, Verify, batch_units, default_dispatcher,
};
use crate::szp::Config;
use crate::{Error, Result};
use fzpack_core::szp::archive::{ArchiveReader, ArchiveWriter, ReaderPos};
use fzpack_core::szp::{Kernel, engine};

/// Raw bytes of values per SZp batch: whole checksum chunks of about 8 MiB, big enough to split
/// across the pool, small enough to stay a fixed cost.
const BATCH_BYTES: usize = 8 << 20;

/// A writer's `finish` check: no bytes of a partial `T` left over.
fn no_partial_value<T: Element>(pending: &[u8]) -> Result<()> {
    if pending.is_empty() {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{} trailing bytes do not form a whole {}",
        pending.len(),
        T::TYPE
    )))
}

/// A `Write` adaptor that turns raw little-endian values of `T` into a PERNIX block stream
/// (current version, checksummed chunks) written to `inner`. The value count `n` is part of the
/// header, so it is given up front; [`PernixWriter::finish`] checks that exactly `n` values
/// arrived and pads the last block. Memory is one batch of whole chunks.
#[derive(Debug)]
pub struct PernixWriter<W: Write, T: Element> {
    inner: W,
    header: StreamHeader,
    encoder: Encoder,
    pending: Vec<u8>,
    values: Vec<T>,
    frames: Vec<u8>,
    /// Values already encoded (a multiple of the unit size until the end).
    written: u64,
}

impl<W: Write, T: Element> PernixWriter<W, T> {
    /// Writes the header for `n` values to `inner` and returns the adaptor (default
    /// dispatcher).
    pub fn new(inner: W, bits: BitWidth, block_size: BlockSize, n: u64) -> Result<Self> {
        Self::with_dispatcher(inner, bits, block_size, n, default_dispatcher().clone())
    }

    /// As [`PernixWriter::new`] with an explicit dispatcher (e.g. a serial one).
    pub fn with_dispatcher(
        mut inner: W,
        bits: BitWidth,
        block_size: BlockSize,
        n: u64,
        dispatcher: Dispatcher,
    ) -> Result<Self> {
        let header = StreamHeader::new::<T>(bits, block_size, n);
        if header.stream_len().is_none() {
            return Err(Error::InvalidArgument(format!("n = {n} is too large")));
        }
        let mut head = [0u8; STREAM_HEADER_LEN_V2];
        let at = header.write(&mut head)?;
        inner.write_all(&head[..at])?;
        Ok(PernixWriter {
            inner,
            header,
            encoder: Encoder::new(bits, block_size).dispatcher(&dispatcher),
            pending: Vec::new(),
            values: Vec::new(),
            frames: Vec::new(),
            written: 0,
        })
    }

    /// Compresses the buffered values (whole units only unless `last`).
    fn flush_values(&mut self, last: bool) -> Result<()> {
        let uv = self.header.unit_values();
        let take = if last {
            self.values.len()
        } else {
            self.values.len() / uv * uv
        };
        if take == 0 {
            return Ok(());
        }
        let first = (self.written / uv as u64) as usize;
        let units = take.div_ceil(uv);
        let (bytes, _) = self.header.unit_span(first..first + units);
        self.frames.resize(bytes.len(), 0);
        self.encoder
            .units(&self.header, &self.values[..take], first, &mut self.frames)?;
        self.inner.write_all(&self.frames)?;
        self.values.drain(..take);
        self.written += take as u64;
        Ok(())
    }

    /// Finishes the stream (the last, padded block) and returns the inner writer.
    ///
    /// Errors if more or fewer than `n` values were written, or on a trailing partial value.
    pub fn finish(mut self) -> Result<W> {
        no_partial_value::<T>(&self.pending)?;
        let total = self.written + self.values.len() as u64;
        if total != self.header.n {
            return Err(Error::InvalidArgument(format!(
                "{total} values written, the header announced {}",
                self.header.n
            )));
        }
        self.flush_values(true)?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: Write, T: Element> Write for PernixWriter<W, T> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        let room = self.header.n - (self.written + self.values.len() as u64);
        let incoming = ((self.pending.len() + rest.len()) / T::BYTES) as u64;
        if incoming > room {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("more than the announced {} values", self.header.n),
            ));
        }
        if !self.pending.is_empty() {
            let need = T::BYTES - self.pending.len();
            let k = need.min(rest.len());
            self.pending.extend_from_slice(&rest[..k]);
            rest = &rest[k..];
            if self.pending.len() == T::BYTES {
                self.values.push(T::read_le(&self.pending));
                self.pending.clear();
            }
        }
        let whole = rest.len() / T::BYTES * T::BYTES;
        self.values
            .extend(rest[..whole].chunks_exact(T::BYTES).map(T::read_le));
        self.pending.extend_from_slice(&rest[whole..]);
        if self.values.len() >= batch_units(&self.header) * self.header.unit_values() {
            self.flush_values(false)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A `Read` adaptor over a PERNIX block stream (version 1 or 2): yields the decoded values as
/// raw little-endian bytes of the stream's element type ([`PernixReader::header`]). Every chunk
/// is verified against its checksum before its values are yielded (unless
/// [`PernixReader::verify`] says otherwise); memory is one batch of chunks.
#[derive(Debug)]
pub struct PernixReader<R: Read> {
    inner: R,
    header: StreamHeader,
    decoder: Decoder,
    units_done: usize,
    units: usize,
    out: Vec<u8>,
    pos: usize,
    frames: Vec<u8>,
}

impl<R: Read> PernixReader<R> {
    /// Reads and validates the header (default dispatcher).
    pub fn new(inner: R) -> Result<Self> {
        Self::with_dispatcher(inner, default_dispatcher().clone())
    }

    /// As [`PernixReader::new`] with an explicit dispatcher.
    pub fn with_dispatcher(mut inner: R, dispatcher: Dispatcher) -> Result<Self> {
        let eof = |e: io::Error| match e.kind() {
            io::ErrorKind::UnexpectedEof => {
                Error::Corrupt("PERNIX stream: shorter than its header".into())
            }
            _ => Error::Io(e),
        };
        let mut h = [0u8; STREAM_HEADER_LEN_V2];
        inner.read_exact(&mut h[..STREAM_HEADER_LEN]).map_err(eof)?;
        let len = if h[..4] == crate::pernix::STREAM_MAGIC && h[4] != STREAM_VERSION_V1 {
            inner.read_exact(&mut h[STREAM_HEADER_LEN..]).map_err(eof)?;
            STREAM_HEADER_LEN_V2
        } else {
            STREAM_HEADER_LEN
        };
        let header = StreamHeader::parse(&h[..len], Verify::Checksums)?;
        let units = header
            .units()
            .ok_or_else(|| Error::Corrupt(format!("PERNIX stream: n = {} too large", header.n)))?;
        Ok(PernixReader {
            inner,
            header,
            decoder: Decoder::new().dispatcher(&dispatcher),
            units_done: 0,
            units,
            out: Vec::new(),
            pos: 0,
            frames: Vec::new(),
        })
    }

    /// Verify the chunk checksums (the default) or skip them.
    pub fn verify(mut self, verify: Verify) -> Self {
        self.decoder = self.decoder.verify(verify);
        self
    }

    /// The stream header.
    pub fn header(&self) -> &StreamHeader {
        &self.header
    }

    fn refill(&mut self) -> Result<()> {
        let k = (self.units - self.units_done).min(batch_units(&self.header));
        let range = self.units_done..self.units_done + k;
        let (bytes, vals) = self.header.unit_span(range.clone());
        self.frames.resize(bytes.len(), 0);
        self.inner
            .read_exact(&mut self.frames)
            .map_err(|e| match e.kind() {
                io::ErrorKind::UnexpectedEof => Error::Corrupt("PERNIX stream: truncated".into()),
                _ => Error::Io(e),
            })?;
        match self.header.dtype {
            DType::F32 => self.decode::<f32>(vals.len(), range)?,
            DType::F64 => self.decode::<f64>(vals.len(), range)?,
        }
        self.units_done += k;
        self.pos = 0;
        Ok(())
    }

    fn decode<T: Element>(&mut self, values: usize, units: std::ops::Range<usize>) -> Result<()> {
        let mut v = vec![T::ZERO; values];
        self.decoder
            .units(&self.header, &self.frames, units.start, &mut v)?;
        self.out.resize(values * T::BYTES, 0);
        for (o, x) in self.out.chunks_exact_mut(T::BYTES).zip(&v) {
            x.write_le(o);
        }
        Ok(())
    }
}

impl<R: Read> Read for PernixReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.out.len() {
            if self.units_done == self.units {
                return Ok(0);
            }
            self.refill()?;
        }
        let k = buf.len().min(self.out.len() - self.pos);
        buf[..k].copy_from_slice(&self.out[self.pos..self.pos + k]);
        self.pos += k;
        Ok(k)
    }
}

/// The facade's default `Join` for the SZp archive layer: rayon's global pool with feature
/// `rayon`, else the calling thread.
#[cfg(feature = "rayon")]
fn szp_join(bytes: usize) -> crate::par::RayonJoin {
    crate::par::RayonJoin::for_job(&crate::par::Parallel::new(), bytes)
}
#[cfg(not(feature = "rayon"))]
fn szp_join(_bytes: usize) -> engine::Serial {
    engine::Serial
}

/// A `Write` adaptor turning raw little-endian values of `T` into an fzpack SZp archive
/// written to `inner` by [`SzpWriter::finish`], through the core's archive layer
/// ([`ArchiveWriter`]); the bytes equal the one-shot compressors'.
///
/// What the format forces it to buffer (`inner` is a plain, non-seekable `Write`):
/// * an ABS bound with a declared `max_abs` ([`Config::with_max_abs`]): the values are encoded
///   a batch of whole checksum chunks at a time as they arrive (memory: one batch of values);
///   the width bytes precede the payload in the archive and the header holds the count, so
///   the compressed widths, payload and chunk CRCs are held until `finish`;
/// * any other config: the values themselves are held until `finish` (NOA needs the value
///   range, and without `max_abs` the strict bound depends on the data's magnitude, before
///   the first block can be encoded), then compressed in one shot.
///
/// ```
/// use std::io::{Read, Write};
/// use fzpack::io::{SzpReader, SzpWriter};
/// use fzpack::szp::Config;
///
/// let raw = fzpack::values_to_le_bytes(&[1.0f64, 2.5, -3.0, 4.25]);
/// let mut w = SzpWriter::<_, f64>::new(Vec::new(), Config::abs(1e-6));
/// w.write_all(&raw)?;
/// let archive = w.finish()?;
/// let mut back = Vec::new();
/// SzpReader::new(&archive[..]).read_to_end(&mut back)?;
/// let v = fzpack::values_from_le_bytes::<f64>(&back).unwrap();
/// assert!((v[1] - 2.5).abs() <= 1e-6);
/// # Ok::<(), fzpack::Error>(())
/// ```
#[derive(Debug)]
pub struct SzpWriter<W: Write, T: Element> {
    inner: W,
    cfg: Config,
    /// The values not yet encoded (a batch's worth, or all of them without a fixed grid).
    values: Vec<T>,
    pending: Vec<u8>,
    /// The batched encoder (ABS with `max_abs`) and what it has written.
    batched: Option<Batched>,
}

/// An [`SzpWriter`]'s batched encoder and the archive parts it holds until `finish`.
#[derive(Debug)]
struct Batched {
    w: ArchiveWriter,
    /// Values per batch (whole checksum chunks).
    per: usize,
    widths: Vec<u8>,
    payload: Vec<u8>,
    sums: Vec<u8>,
}

impl Batched {
    /// Encodes `values` (whole chunks, or the last batch), appending its parts.
    fn batch<T: Element>(&mut self, values: &[T]) -> Result<()> {
        let (w0, p0, s0) = (self.widths.len(), self.payload.len(), self.sums.len());
        let nb = values
            .len()
            .div_ceil(self.w.plan().block_size.max(1) as usize);
        self.widths.resize(w0 + nb, 0);
        self.payload.resize(p0 + self.w.batch_payload_len(nb), 0);
        self.sums.resize(s0 + self.w.batch_sums_len(nb), 0);
        let join = szp_join(size_of_val(values));
        let b = self.w.batch(
            &join,
            values,
            &mut self.widths[w0..],
            &mut self.payload[p0..],
            &mut self.sums[s0..],
        )?;
        self.payload.truncate(p0 + b.payload_len);
        Ok(())
    }
}

impl<W: Write, T: Element> SzpWriter<W, T> {
    /// A writer compressing with `cfg` into `inner`.
    pub fn new(inner: W, cfg: Config) -> Self {
        let batched = ArchiveWriter::open::<T>(Kernel::best(), &cfg)
            .ok()
            .map(|w| Batched {
                per: w.batch_blocks(BATCH_BYTES) * w.plan().block_size.max(1) as usize,
                w,
                widths: Vec::new(),
                payload: Vec::new(),
                sums: Vec::new(),
            });
        SzpWriter {
            inner,
            cfg,
            values: Vec::new(),
            pending: Vec::new(),
            batched,
        }
    }

    /// Encodes the full batches collected so far (batched mode).
    fn flush_batches(&mut self) -> Result<()> {
        let Some(b) = &mut self.batched else {
            return Ok(());
        };
        let whole = self.values.len() / b.per * b.per;
        for xs in self.values[..whole].chunks(b.per) {
            b.batch(xs)?;
        }
        self.values.drain(..whole);
        Ok(())
    }

    /// Compresses everything written, writes the archive and returns the inner writer.
    pub fn finish(mut self) -> Result<W> {
        no_partial_value::<T>(&self.pending)?;
        if let Some(mut b) = self.batched.take() {
            if !self.values.is_empty() {
                b.batch(&self.values)?;
            }
            let frame = b.w.finish()?;
            for part in [&frame.header[..], &b.widths, &b.payload, &b.sums] {
                self.inner.write_all(part)?;
            }
        } else {
            let join = szp_join(size_of_val(&self.values[..]));
            let (plan, max_abs) = engine::plan_on(Kernel::best(), &join, &self.values, &self.cfg)?;
            let mut archive = vec![0u8; engine::worst_len_for(&plan, max_abs, &self.values)?];
            let len = ArchiveWriter::begin(Kernel::best(), &plan, max_abs).write_all(
                &join,
                &self.values,
                &mut archive,
            )?;
            self.inner.write_all(&archive[..len])?;
        }
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: Write, T: Element> Write for SzpWriter<W, T> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let whole = self.pending.len() / T::BYTES * T::BYTES;
        self.values
            .extend(self.pending[..whole].chunks_exact(T::BYTES).map(T::read_le));
        self.pending.drain(..whole);
        self.flush_batches().map_err(io::Error::from)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A `Read` adaptor over an fzpack SZp archive: yields the decoded values as raw
/// little-endian bytes of the archive's element type, decoded a batch of whole checksum
/// chunks at a time by the core's archive layer ([`ArchiveReader`]), each chunk's CRC checked
/// right after it is decoded, before its values are yielded.
///
/// The chunk CRCs follow the payload, so the whole archive is read from `inner` on the first
/// `read` (memory: the archive and one batch of values).
#[derive(Debug)]
pub struct SzpReader<R: Read> {
    inner: Option<R>,
    archive: Vec<u8>,
    at: Option<ReaderPos>,
    out: Vec<u8>,
    pos: usize,
}

impl<R: Read> SzpReader<R> {
    /// A reader over `inner` (nothing is read before the first `read`).
    pub fn new(inner: R) -> Self {
        SzpReader {
            inner: Some(inner),
            archive: Vec::new(),
            at: None,
            out: Vec::new(),
            pos: 0,
        }
    }

    fn load(&mut self, mut inner: R) -> Result<()> {
        inner.read_to_end(&mut self.archive)?;
        let r = ArchiveReader::new(Kernel::best(), &self.archive, Verify::Checksums)?;
        self.at = Some(r.detach());
        Ok(())
    }

    /// Decodes the next batch into `out`.
    fn next_batch(&mut self) -> Result<()> {
        let Some(at) = self.at else {
            return Ok(());
        };
        let mut r = at.attach(&self.archive)?;
        let per = r.batch_blocks(BATCH_BYTES);
        self.out = match r.header().dtype {
            DType::F32 => decode_batch::<f32>(&mut r, per)?,
            DType::F64 => decode_batch::<f64>(&mut r, per)?,
        };
        self.pos = 0;
        self.at = Some(r.detach());
        Ok(())
    }
}

/// The next batch of `r` (`per` blocks) as little-endian bytes.
fn decode_batch<T: Element>(r: &mut ArchiveReader<'_>, per: usize) -> Result<Vec<u8>> {
    let mut v = vec![T::default(); r.batch_len(per)];
    let join = szp_join(size_of_val(&v[..]));
    r.batch(&join, per, &mut v)?;
    Ok(crate::values_to_le_bytes(&v))
}

impl<R: Read> Read for SzpReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(inner) = self.inner.take() {
            self.load(inner)?;
        }
        while self.pos == self.out.len() && self.at.is_some_and(|a| !a.is_done()) {
            self.next_batch()?;
        }
        let k = buf.len().min(self.out.len() - self.pos);
        buf[..k].copy_from_slice(&self.out[self.pos..self.pos + k]);
        self.pos += k;
        Ok(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pernix::{Backend, compress as compress_vec};

    fn values(n: usize) -> Vec<f64> {
        (0..n).map(|i| (i as f64 * 0.37).sin() * 1e3).collect()
    }

    #[test]
    fn writer_and_reader_match_the_vec_helpers() {
        let (bits, bs) = (BitWidth::new(9).unwrap(), BlockSize::B128);
        for n in [0usize, 1, 113, 114, 5000, 300_001] {
            let x = values(n);
            let whole = compress_vec(&x, bits, bs).unwrap();
            let raw = crate::values_to_le_bytes(&x);
            let serial = Dispatcher::new(Backend::Fallback).unwrap();
            let mut w =
                PernixWriter::<_, f64>::with_dispatcher(Vec::new(), bits, bs, n as u64, serial)
                    .unwrap();
            for piece in raw.chunks(1237) {
                w.write_all(piece).unwrap();
            }
            let streamed = w.finish().unwrap();
            assert_eq!(streamed, whole, "n = {n}");
            let mut back = Vec::new();
            PernixReader::new(&streamed[..])
                .unwrap()
                .read_to_end(&mut back)
                .unwrap();
            let expect: Vec<f64> = crate::pernix::decompress(&whole).unwrap();
            assert_eq!(back, crate::values_to_le_bytes(&expect));
        }
    }

    #[test]
    fn szp_adaptors_round_trip_and_reject_garbage() {
        let x = values(10_000);
        let raw = crate::values_to_le_bytes(&x);
        let cfg = Config::noa(1e-5);
        let mut w = SzpWriter::<_, f64>::new(Vec::new(), cfg);
        for piece in raw.chunks(333) {
            w.write_all(piece).unwrap();
        }
        let archive = w.finish().unwrap();
        assert_eq!(archive, crate::szp::compress(&x, &cfg).unwrap());
        let mut back = Vec::new();
        SzpReader::new(&archive[..]).read_to_end(&mut back).unwrap();
        let y = crate::values_from_le_bytes::<f64>(&back).unwrap();
        let bound = crate::szp::header(&archive).unwrap().bound();
        assert!(x.iter().zip(&y).all(|(a, b)| (a - b).abs() <= bound));
        let err = SzpReader::new(&archive[..archive.len() - 1])
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let mut w = SzpWriter::<_, f32>::new(Vec::new(), cfg);
        w.write_all(&[1, 2, 3]).unwrap();
        assert!(w.finish().is_err());
    }

    /// ABS with `max_abs`: the writer encodes batch by batch as values arrive (three batches
    /// and a partial one here) and writes the one-shot bytes; the reader yields them a batch
    /// at a time and refuses a corrupted chunk before yielding its values.
    #[test]
    fn szp_batched_writer_equals_one_shot_and_reader_verifies() {
        let n = 3 * BATCH_BYTES / 4 + 1000;
        let x: Vec<f32> = (0..n).map(|i| (i as f32 * 1e-3).sin() * 100.0).collect();
        let cfg = Config::abs(1e-3).with_max_abs(100.0);
        let mut w = SzpWriter::<_, f32>::new(Vec::new(), cfg);
        assert!(w.batched.is_some());
        let raw = crate::values_to_le_bytes(&x);
        for piece in raw.chunks(1 << 20) {
            w.write_all(piece).unwrap();
            // Only part of a batch is ever held as values.
            assert!(w.values.len() * 4 <= BATCH_BYTES);
        }
        let archive = w.finish().unwrap();
        let want = {
            let (plan, m) = engine::plan_on(Kernel::Scalar, &engine::Serial, &x, &cfg).unwrap();
            let mut a = vec![0u8; engine::worst_len(&plan, m)];
            let len =
                engine::compress_on(Kernel::Scalar, &engine::Serial, &x, &cfg, &mut a).unwrap();
            a.truncate(len);
            a
        };
        assert!(archive == want);
        let mut back = Vec::new();
        SzpReader::new(&archive[..]).read_to_end(&mut back).unwrap();
        let mut one = vec![0f32; n];
        engine::decompress_on(Kernel::Scalar, &engine::Serial, &archive, &mut one).unwrap();
        assert!(back == crate::values_to_le_bytes(&one));
        // A flipped payload byte in the last chunk: an error, after the earlier batches.
        let mut bad = archive.clone();
        let at = bad.len() - 100;
        bad[at] ^= 1;
        let mut got = Vec::new();
        let err = SzpReader::new(&bad[..]).read_to_end(&mut got).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(got.len() >= BATCH_BYTES && got.len() < raw.len());
    }

    #[test]
    fn writer_checks_the_count_and_reader_the_length() {
        let (bits, bs) = (BitWidth::new(8).unwrap(), BlockSize::B64);
        let mut w = PernixWriter::<_, f32>::new(Vec::new(), bits, bs, 3).unwrap();
        w.write_all(&1f32.to_le_bytes()).unwrap();
        assert!(matches!(w.finish(), Err(Error::InvalidArgument(_))));
        let mut w = PernixWriter::<_, f32>::new(Vec::new(), bits, bs, 1).unwrap();
        assert!(w.write_all(&[0u8; 8]).is_err());
        let mut w = PernixWriter::<_, f32>::new(Vec::new(), bits, bs, 1).unwrap();
        w.write_all(&[0u8; 3]).unwrap();
        assert!(w.finish().is_err());

        let stream = compress_vec(&[1.0f32; 1000], bits, bs).unwrap();
        let mut r = PernixReader::new(&stream[..stream.len() - 1]).unwrap();
        let err = r.read_to_end(&mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(PernixReader::new(&stream[..10]).is_err());
    }
}
