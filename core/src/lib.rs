//! # fzpack-core
//!
//! `#![no_std]`, allocation-free lossy compressors for scientific floating-point data:
//!
//! * [`pernix`]: PERNIX fixed-size block packing, byte-compatible with the C/C++ library
//!   pc2/pernix (same blocks, same decoded values, same status codes).
//! * [`szp`]: SZp error-bounded compression (fZ-light).
//!
//! Every API works on caller-provided slices, validates sizes once at its entry before writing
//! anything, and reports failures as small `Copy` error enums. Nothing here allocates or panics
//! on user data. SIMD kernels live under [`arch`] behind runtime-checked proof tokens; the
//! portable scalar paths ([`pernix::scalar`]) are the references every other path must match
//! byte for byte.
//!
//! ```
//! use fzpack_core::szp::{self, Config, DType};
//!
//! let data: [f32; 1000] = core::array::from_fn(|i| (i as f32 * 0.01).sin() * 40.0);
//! // |x - x'| <= 1e-3, every element; the block-head layout (`Layout::DEFAULT`), or the stage
//! // layout in builds without the feature `layout-heads`.
//! let cfg = Config::abs(1e-3);
//! let mut archive = [0u8; 8192];
//! assert!(szp::max_compressed_len(data.len(), cfg.block_size, DType::F32).unwrap() <= 8192);
//! let len = szp::compress(&data, &cfg, &mut archive)?;
//! let mut back = [0f32; 1000];
//! szp::decompress(&archive[..len], &mut back)?;
//! assert!(data.iter().zip(&back).all(|(x, y)| (x - y).abs() <= 1e-3));
//! # Ok::<(), szp::Error>(())
//! ```
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)
)]

pub mod arch;
mod bits;
mod crc;
pub mod pernix;
pub mod szp;
#[cfg(test)]
mod target_fpu;
pub mod types;
