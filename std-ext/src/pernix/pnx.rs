//! The `.pnx` block stream on `std`: the core's [`StreamWriter`]/[`StreamReader`] (which alone
//! know the byte layout) driven over whole chunks, serially or on the rayon pool (bytes
//! identical for every thread count), its errors in the facade's [`Error`](crate::Error), and
//! inspection that iterates the scales instead of collecting them.

use fzpack_core::pernix::Verify;
use fzpack_core::pernix::stream::{
    Scratch, StreamError, StreamHeader, StreamReader, StreamWriter, block_error_bound_of,
};

use super::Dispatcher;
use crate::element::Element;
use crate::{Error as FzError, Result as FzResult};

impl From<StreamError> for FzError {
    fn from(e: StreamError) -> Self {
        match e {
            StreamError::NonFinite { index } => FzError::NonFinite { index },
            StreamError::DTypeMismatch { stored, requested } => {
                FzError::DTypeMismatch { stored, requested }
            }
            StreamError::Kernel(e) => FzError::Pernix(e),
            StreamError::Buffer | StreamError::NoScale => {
                FzError::InvalidArgument(format!("PERNIX stream: {e}"))
            }
            _ => FzError::Corrupt(format!("PERNIX stream: {e}")),
        }
    }
}

impl Dispatcher {
    /// Encodes the chunks of the stream `h` that hold `input`, from chunk `first_unit`, into
    /// `out` (their [`StreamHeader::unit_span`] bytes): whole chunks per task on the parallel
    /// driver, each task with its own scratch (one chunk's worth, reused for its chunks).
    pub(super) fn encode_units<T: Element>(
        &self,
        h: &StreamHeader,
        input: &[T],
        first_unit: usize,
        out: &mut [u8],
    ) -> FzResult<()> {
        h.expect::<T>()?;
        let w = StreamWriter::new(self.core(), *h);
        let uv = h.unit_values().max(1);
        let (e, bs) = (h.elements_per_block(), h.block_size.bytes());
        let units = input.len().div_ceil(uv);
        let (bytes, _) = h.unit_span(first_unit..first_unit + units);
        let Some(out) = out.get_mut(..bytes.len()) else {
            return Err(FzError::InvalidArgument(format!(
                "stream buffer of {} bytes, the chunks need {}",
                out.len(),
                bytes.len()
            )));
        };
        let per = (uv, h.unit_len().unwrap_or(usize::MAX));
        self.on_chunks(units, uv * T::BYTES, input, out, per, |u, a, b| {
            let vals = a.len().min(uv).div_ceil(e) * e;
            let mut scaled = vec![T::ZERO; vals];
            let mut blocks = vec![0u8; vals / e * bs];
            let scratch = Scratch::new(&mut scaled, &mut blocks);
            Ok(w.units_at(first_unit + u, a, b, scratch)?)
        })
    }

    /// Decodes the chunks from `first_unit` that `body` holds (exactly their bytes) into `out`
    /// (exactly their values); each chunk is verified once, right after it is decoded (from
    /// cache), in this call: `Ok` means every chunk matched its checksum.
    pub(super) fn decode_units<T: Element>(
        &self,
        h: &StreamHeader,
        body: &[u8],
        first_unit: usize,
        out: &mut [T],
        verify: Verify,
    ) -> FzResult<()> {
        h.expect::<T>()?;
        let r = StreamReader::new(self.core(), *h, verify);
        let (uv, e) = (h.unit_values().max(1), h.elements_per_block());
        let ul = h.unit_len().unwrap_or(usize::MAX).max(1);
        let units = body.len().div_ceil(ul);
        let (bytes, vals) = h.unit_span(first_unit..first_unit + units);
        if bytes.len() != body.len() || vals.len() != out.len() {
            return Err(FzError::InvalidArgument(format!(
                "units from {first_unit}: {} bytes and {} values given, the stream has {} and {}",
                body.len(),
                out.len(),
                bytes.len(),
                vals.len()
            )));
        }
        let units = out.len().div_ceil(uv);
        self.on_chunks(units, uv * T::BYTES, body, out, (ul, uv), |u, a, b| {
            // one block of values for a partial last block (only the stream's last chunk)
            let mut tail = if b.len() % e == 0 {
                Vec::new()
            } else {
                vec![T::ZERO; e]
            };
            Ok(r.units_at(first_unit + u, a, b, &mut tail)?)
        })
    }
}

/// Parses the header of a PERNIX block stream (its CRC verified); the rest is not looked at.
pub fn stream_header(stream: &[u8]) -> FzResult<StreamHeader> {
    Ok(StreamHeader::parse(stream, Verify::Checksums)?)
}

/// What [`inspect`] found in a whole stream: its header and, over its blocks, the scale range
/// and the worst error bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inspection {
    /// The header.
    pub header: StreamHeader,
    /// Number of blocks.
    pub blocks: usize,
    /// Smallest and largest block scale (`None` for an empty stream).
    pub scale_range: Option<(f64, f64)>,
    /// The largest per-block error bound ([`block_error_bound`](super::block_error_bound)),
    /// `0` for an empty stream: every decoded value is within it.
    pub max_error_bound: f64,
}

/// Checks a whole stream without decoding it and summarizes its scales (`fzpack info`): the
/// header, the exact length, every scale (finite and positive) and, with
/// [`Verify::Checksums`], every chunk CRC (one pass: a decoder verifies each chunk itself, so
/// only inspection needs this). The scales are iterated, never collected.
pub fn inspect(stream: &[u8], verify: Verify) -> FzResult<Inspection> {
    let h = StreamHeader::check(stream, verify)?;
    if verify == Verify::Checksums {
        h.verify_chunks(stream)?;
    }
    let mut range: Option<(f64, f64)> = None;
    let mut worst = 0f64;
    let mut blocks = 0;
    for (k, s) in h.scales(stream).enumerate() {
        if !(s.is_finite() && s > 0.0) {
            return Err(StreamError::BadScale { block: k, scale: s }.into());
        }
        range = Some(range.map_or((s, s), |(lo, hi)| (lo.min(s), hi.max(s))));
        worst = worst.max(block_error_bound_of(h.dtype, s, h.bits));
        blocks += 1;
    }
    Ok(Inspection {
        header: h,
        blocks,
        scale_range: range,
        max_error_bound: worst,
    })
}
