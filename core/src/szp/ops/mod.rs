//! Arithmetic on SZp archives without decompressing them (hZCCL / HoSZp style).
//!
//! Two archives on the same quantizer grid — same element type, length, block size and the
//! same recorded quantizer bound `eb` (`error_bound` of the SZpConfig, bit for bit) — hold
//! integer levels `q` with `x' = T((q·2)·eb)`. The levels of `c₁·a + c₂·b + …` are
//! `c₁·q_a + c₂·q_b + …`, and because every block's delta coding is linear
//! (`d₀ = q₀`, `dᵢ = qᵢ − qᵢ₋₁`), the per-block deltas combine the same way. Every operation
//! here is integer work on the payload: unpack each input block's zigzag deltas, combine them,
//! zigzag, recompute the block width, pack. No float round trip, no allocation; the caller
//! gives the output buffer ([`max_output_len`] is always enough).
//!
//! Both block layouts: in the block-head layout (layout 1) every block's first delta is 0 in
//! every input, so deltas combine as above; the result's block heads are `Σ cⱼ·hⱼ` (checked,
//! 2⁶² is [`Error::LevelOverflow`]) and each result head group is followed by its trailer.
//! Inputs of different layouts are [`Error::OpsMismatch`] (`"block layout (…)"`, naming both).
//!
//! # The result and its bound
//!
//! The output is a valid fzpack archive on the same grid (same `eb`, dtype, length, block
//! size), always in ABS mode, with the strict flag set when every input had it, and with the
//! requested bound `Σ |cⱼ| · boundⱼ` where `boundⱼ` is input `j`'s absolute bound
//! ([`Header::bound`](super::Header::bound): the requested ABS bound, or requested × value range for NOA). For strict
//! inputs every element of the result's decoding meets
//! `|Σ cⱼ·xⱼ − x'| ≤ Σ |cⱼ| · boundⱼ` against the original data `xⱼ`, and it differs from
//! `Σ cⱼ·decompress(aⱼ)` by at most that bound as well (see `docs/szp-archive.md`,
//! "Compressed-domain operations", for the derivation).
//!
//! # Paths
//!
//! [`linear`] runs on [`Kernel::best`]; [`linear_on`] names the path. One or two inputs with
//! coefficients ±1 take the AVX-512 combines on [`Kernel::Avx512`]
//! (`arch::x86_64::avx512::ops`, behind its proof token); every other case and path, the
//! portable scalar code, which is the AVX-512 kernels' reference (same bytes, same errors).
//! [`linear_reference`] takes the exact per-element path for every block. The module's
//! pieces: `input` (parsing, grid checks, chunk CRCs just ahead of the combine), `engine`
//! (the chunk and run driver, head groups, CRC sealing), `block` (one block on each path) and
//! `stats`; the bit I/O is the codec's own (`crate::bits`).
//!
//! # Errors, never panics or wraps
//!
//! Inputs that differ in a grid field are [`Error::OpsMismatch`] naming the field (`"dtype"`,
//! `"length"`, `"block size"`, `"quantizer bound"`); a result level of magnitude 2⁶² or more is
//! [`Error::LevelOverflow`] and one whose reconstruction is not finite in the element type
//! [`Error::ResultOverflow`], each with the index of the first such element (64-bit levels
//! never wrap); an input whose header numbers or levels no encoder writes is
//! [`Error::Implausible`], as its decoder finds it; every input is parsed and
//! validated as untrusted (as [`super::blocks::parse`] does, CRCs included: a corrupt input is
//! [`Error::ChecksumMismatch`]; each chunk's CRC is checked right before its blocks are
//! combined, so no result is built from an unchecked byte); `.fzm` inputs are [`Error::OpsUnsupported`]; a too-small
//! output is [`Error::OutputTooSmall`] with the exact length needed. Results are version 2
//! archives (checksummed) whatever the inputs' versions.
//!
//! # Addable archives
//!
//! The grid of a strict archive depends only on what the user states
//! ([`super::blocks::grid_magnitude`]): the bound and dtype — every field with
//! `max|x| ≤ 2^18·bound` (f32; `2^40·bound` for f64) compressed with `Config::abs(bound)` gets
//! the same grid — or a declared `Config::abs(eb).with_max_abs(M)` (the same grid for every
//! field with `|x| ≤ M`). Fields above `2^k·bound` fall back to the next power of two of their
//! `max|x|` and add only with archives of the same power (or declare `max_abs`).
//!
//! ```
//! use fzpack_core::szp::{self, ops, Config, DType};
//!
//! let a: [f32; 300] = core::array::from_fn(|i| (i as f32 * 0.1).sin());
//! let b: [f32; 300] = core::array::from_fn(|i| (i as f32 * 0.07).cos());
//! let cfg = Config::abs(1e-3).with_max_abs(2.0); // same grid for every |x| <= 2
//! let (mut za, mut zb, mut zc) = ([0u8; 4096], [0u8; 4096], [0u8; 4096]);
//! let la = szp::compress(&a, &cfg, &mut za)?;
//! let lb = szp::compress(&b, &cfg, &mut zb)?;
//! let lc = ops::add(&za[..la], &zb[..lb], &mut zc)?;
//! assert_eq!(szp::header(&zc[..lc])?.bound(), 2e-3);
//! let mut c = [0f32; 300];
//! szp::decompress(&zc[..lc], &mut c)?;
//! assert!((0..300).all(|i| (f64::from(a[i]) + f64::from(b[i]) - f64::from(c[i])).abs() <= 2e-3));
//! # Ok::<(), szp::Error>(())
//! ```

use super::{DType, Error, Kernel};
#[cfg(target_arch = "x86_64")]
use crate::arch::{CpuFeatures, x86_64::Avx512Vbmi};
use block::Path;

mod block;
mod engine;
mod input;
mod stats;

pub use input::MAX_TERMS;
pub use stats::{Stats, mean, min_max_levels, stats, value_sum};

/// Archive bytes that always suffice for the result of an operation on archives of `n` values
/// and block size `block_size` (header, widths, 8 bytes per value) without missing values or a
/// shape (format 3 adds their extension: an operation that needs more answers
/// `OutputTooSmall { needed }` before writing); `None` on overflow or an invalid block size.
/// Equal to [`super::max_compressed_len`].
pub fn max_output_len(n: usize, block_size: u32) -> Option<usize> {
    super::max_compressed_len(n, block_size, DType::F64)
}

/// `a + b` (bound `bound_a + bound_b`). Returns the output archive length.
pub fn add(a: &[u8], b: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    linear(&[a, b], &[1, 1], out)
}

/// `a − b` (bound `bound_a + bound_b`).
pub fn sub(a: &[u8], b: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    linear(&[a, b], &[1, -1], out)
}

/// `−a` (bound `bound_a`).
pub fn negate(a: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    linear(&[a], &[-1], out)
}

/// `k·a` for an integer `k` (bound `|k| · bound_a`; `k = 0` gives exact zeros, bound 0).
pub fn scale_int(a: &[u8], k: i64, out: &mut [u8]) -> Result<usize, Error> {
    linear(&[a], &[k], out)
}

/// `Σ aⱼ` over 1..=[`MAX_TERMS`] archives (bound `Σ boundⱼ`).
pub fn sum(archives: &[&[u8]], out: &mut [u8]) -> Result<usize, Error> {
    const ONES: [i64; MAX_TERMS] = [1; MAX_TERMS];
    let k = archives.len().min(MAX_TERMS + 1);
    linear(archives, ONES.get(..k).unwrap_or(&ONES), out)
}

/// `Σ cⱼ·aⱼ` for integer coefficients (the general form of every operation above; bound
/// `Σ |cⱼ| · boundⱼ`). `archives` and `coeffs` must have the same length, 1..=[`MAX_TERMS`].
pub fn linear(archives: &[&[u8]], coeffs: &[i64], out: &mut [u8]) -> Result<usize, Error> {
    engine::run(archives, coeffs, out, path_of(Kernel::best())?)
}

/// [`linear`] on a given path: [`Kernel::Avx512`] combines one or two inputs with
/// coefficients ±1 with the AVX-512 kernels, every other available path with the portable
/// scalar code (the reference of the AVX-512 kernels: the same bytes and errors). A path this
/// CPU cannot run is [`Error::UnsupportedPath`], never a silent fallback.
pub fn linear_on(
    kernel: Kernel,
    archives: &[&[u8]],
    coeffs: &[i64],
    out: &mut [u8],
) -> Result<usize, Error> {
    engine::run(archives, coeffs, out, path_of(kernel)?)
}

/// How [`linear_on`] combines on `kernel`.
#[inline]
fn path_of(kernel: Kernel) -> Result<Path, Error> {
    if !kernel.is_available() {
        return Err(Error::UnsupportedPath);
    }
    #[cfg(target_arch = "x86_64")]
    if kernel == Kernel::Avx512 {
        return Avx512Vbmi::new(CpuFeatures::detect())
            .map(Path::Avx512)
            .ok_or(Error::UnsupportedPath);
    }
    Ok(Path::Scalar)
}

/// The scalar reference of [`linear`]: every block through exact per-element level arithmetic
/// (decode each input's levels by prefix sum, combine in `i128` with checks, re-delta). Same
/// bytes and errors as [`linear`]; for tests.
pub fn linear_reference(
    archives: &[&[u8]],
    coeffs: &[i64],
    out: &mut [u8],
) -> Result<usize, Error> {
    engine::run(archives, coeffs, out, Path::Exact)
}
