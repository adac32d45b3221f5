//! # fzpack
//!
//! The std facade of fzpack, over the `no_std` core ([`fzpack_core`]):
//!
//! * [`szp`]: SZp error-bounded compression, one [`szp::Encoder`] and one [`szp::Decoder`]
//!   (kernel, threads, checksum choice; sinks into a `Vec`, a slice or a writer) and the
//!   shorthands [`szp::compress`] / [`szp::decompress`];
//! * [`pernix`]: PERNIX block packing: the block API of a runtime-dispatched
//!   [`pernix::Dispatcher`], and `.pnx` streams through [`pernix::Encoder`] / [`pernix::Decoder`]
//!   and the shorthands [`pernix::compress`] / [`pernix::decompress`];
//! * [`archive`]: what kind of archive a byte string is, its structural check and its description;
//! * [`ops`]: arithmetic on SZp archives without decompressing them;
//! * [`io`] adaptors: `std::io::Write` compressors and `std::io::Read` decompressors for SZp
//!   archives and PERNIX block streams;
//! * [`Error`], one `std::error::Error` type wrapping the core error enums;
//! * the rayon multi-block driver ([`par`], feature `rayon`, on by default), which also serves
//!   [`pernix::Backend::FallbackStdpar`];
//! * the element vocabulary: [`Element`] (`f32`, `f64`), [`DType`], [`Verify`], and the
//!   core's [`types`] and [`arch`] (CPU feature detection, [`arch::CpuFeatures`]);
//! * nothing else: the `fzpack` command-line tool is its own crate, `fzpack-cli` (`cli/`).
//!
//! Every path produces the bytes of the core's scalar reference.
//!
//! ```
//! use fzpack::szp::{self, Config};
//!
//! let data: Vec<f64> = (0..100_000).map(|i| (i as f64 * 1e-3).sin() * 300.0).collect();
//! let cfg = Config::noa(1e-4); // 1e-4 of the value range
//! let archive = szp::compress(&data, &cfg)?;
//! let back: Vec<f64> = szp::decompress(&archive)?;
//! let range = 600.0;
//! assert!(data.iter().zip(&back).all(|(x, y)| (x - y).abs() <= 1e-4 * range));
//! assert!(archive.len() < data.len() * 8 / 3);
//! # Ok::<(), fzpack::Error>(())
//! ```

pub use fzpack_core::{arch, types};

pub mod archive;
mod element;
mod error;
pub mod io;
/// Compressed MPI collectives (feature `mpi`).
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod ops;
#[cfg(feature = "rayon")]
pub mod par;
pub mod pernix;
pub mod szp;
mod tiles;
/// SZp on an NVIDIA GPU (feature `cuda`): the [`fzpack_gpu`] crate, same archive bytes as [`szp`].
#[cfg(feature = "cuda")]
pub use fzpack_gpu as gpu;

pub use element::{DType, Element, values_from_le_bytes, values_to_le_bytes};
pub use error::{Error, Result};
pub use fzpack_core::types::Verify;

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
