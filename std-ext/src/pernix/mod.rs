//! PERNIX for `std`: the core's [`fzpack_core::pernix`] block API, a [`Dispatcher`] that also
//! serves [`Backend::FallbackStdpar`] (the rayon driver), and the **PERNIX block stream**
//! (`.pnx`): a self-describing container with one scale per block (layout in
//! `docs/pernix-stream.md`), whose byte rules live in the core's [`stream`] module.
//!
//! * `dispatcher`: the [`Dispatcher`] (block API of the C ABI, the rayon split);
//! * `pnx`: the core stream writer/reader driven over whole chunks, [`inspect`];
//! * `door`: the front door, [`Encoder`]/[`Decoder`] and [`compress`]/[`decompress`].
//!
//! ```
//! use fzpack::pernix::{self, BitWidth, BlockSize};
//!
//! let values: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.1).cos() * 40.0).collect();
//! let stream = pernix::compress(&values, BitWidth::new(16)?, BlockSize::B64)?;
//! let back: Vec<f64> = pernix::decompress(&stream)?;
//! assert_eq!(back.len(), values.len());
//! // each block's error is at most half its scale: 40 / (2^15 - 1) / 2
//! assert!(values.iter().zip(&back).all(|(a, b)| (a - b).abs() <= 40.0 / 32767.0 / 2.0 + 1e-12));
//! # Ok::<(), fzpack::Error>(())
//! ```

mod dispatcher;
mod door;
mod pnx;
#[cfg(test)]
mod tests;

pub use fzpack_core::pernix::stream::{
    self, CHUNK_SUM_LEN, CHUNK_TARGET_BYTES, STREAM_HEADER_LEN, STREAM_HEADER_LEN_V2, STREAM_MAGIC,
    STREAM_VERSION, STREAM_VERSION_V1, StreamError, StreamHeader, block_error_bound,
    block_error_bound_of, block_scales,
};
pub use fzpack_core::pernix::{
    Backend, BitWidth, BlockSize, Error, FRAME_LOOKAHEAD, FramesError, PernixFloat, Run, Status,
    Verify, compressed_block_size, compression_scale_from_bmax, decompression_scale_from_bmax,
    elements_per_block, inverse_scale, scalar, scale_from_bmax, status_string,
};

pub use dispatcher::{CoreDispatcher, Dispatcher, default_dispatcher};
pub(crate) use door::batch_units;
pub use door::{Decoder, Encoder, compress, decompress};
pub use pnx::{Inspection, inspect, stream_header};
