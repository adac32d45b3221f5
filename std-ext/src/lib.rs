//! # fzpack
//!
//! The std facade of fzpack: everything of [`fzpack_core`] re-exported, plus
//!
//! * `Vec`-returning helpers ([`pernix::compress`], [`szp::compress_vec`], …) that pick the
//!   fastest kernel of the running CPU with no setup;
//! * [`io`] adaptors: `std::io::Write` compressors and `std::io::Read` decompressors for SZp
//!   archives and PERNIX block streams;
//! * [`Error`], one `std::error::Error` type wrapping the core error enums;
//! * the rayon multi-block driver ([`par`], feature `rayon`, on by default), which also serves
//!   [`pernix::Backend::FallbackStdpar`];
//! * nothing else: the `fzpack` command-line tool is its own crate, `fzpack-cli` (`cli/`).
//!
//! Every path produces the bytes of the core's scalar reference.
//!
//! ```
//! use fzpack::szp::{self, Config, Layout};
//!
//! let data: Vec<f64> = (0..100_000).map(|i| (i as f64 * 1e-3).sin() * 300.0).collect();
//! let cfg = Config::noa(1e-4).with_layout(Layout::Heads); // 1e-4 of the value range
//! let archive = szp::compress_vec(&data, &cfg)?;
//! let back: Vec<f64> = szp::decompress_vec(&archive)?;
//! let range = 600.0;
//! assert!(data.iter().zip(&back).all(|(x, y)| (x - y).abs() <= 1e-4 * range));
//! assert!(archive.len() < data.len() * 8 / 3);
//! # Ok::<(), fzpack::Error>(())
//! ```

pub use fzpack_core::*;

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
/// SZp on an NVIDIA GPU (feature `cuda`): the [`fzpack_gpu`] crate, same archive bytes as [`szp`].
#[cfg(feature = "cuda")]
pub use fzpack_gpu as gpu;

pub use element::{DType, Element, values_from_le_bytes, values_to_le_bytes};
pub use error::{Error, Result};
