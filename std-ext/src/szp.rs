//! SZp for `std`: everything of [`fzpack_core::szp`], `Vec` helpers, and (feature `rayon`) the
//! parallel encoder and decoder.
//!
//! The parallel encoder and decoder are the core's one archive driver
//! ([`fzpack_core::szp::engine`]) with a rayon [`engine::Join`]: the statistics pass runs
//! split across the pool and the plan is resolved once; each task then encodes its range of
//! blocks on the chosen path straight into the output (width bytes in their final place, the
//! payload at the range's worst-case offset, moved down once per split), and the decoder
//! splits at block boundaries whose payload offsets are sums of the width bytes' costs. Output
//! pages are first written by the task that owns them. Bytes are identical to the core's
//! serial encoder for every thread count.
//!
//! ```
//! use fzpack::szp::{self, Config};
//!
//! let data: Vec<f32> = (0..100_000).map(|i| (i as f32 * 0.001).sin() * 40.0).collect();
//! let archive = szp::compress_vec(&data, &Config::noa(1e-4))?;
//! let back: Vec<f32> = szp::decompress_vec(&archive)?;
//! let bound = szp::header(&archive)?.bound();
//! assert!(data.iter().zip(&back).all(|(a, b)| (*a as f64 - *b as f64).abs() <= bound));
//! # Ok::<(), fzpack::Error>(())
//! ```

pub use fzpack_core::szp::*;

use crate::element::Element;
#[cfg(feature = "rayon")]
use crate::par::Parallel;
use crate::{Error as FzError, Result as FzResult};

/// Compresses `input` into an fzpack SZp archive on the fastest path of this CPU
/// ([`Kernel::best`]); with feature `rayon`, in parallel on the global pool for inputs of at
/// least two minimum chunks (the bytes do not depend on it).
pub fn compress_vec<T: Element>(input: &[T], cfg: &Config) -> FzResult<Vec<u8>> {
    let mut out = Vec::new();
    compress_into(input, cfg, &mut out)?;
    Ok(out)
}

/// [`compress_vec`] into `out` (cleared first; its capacity is reused, so a loop over many
/// inputs allocates once). Returns the archive length (`out.len()`).
pub fn compress_into<T: Element>(input: &[T], cfg: &Config, out: &mut Vec<u8>) -> FzResult<usize> {
    #[cfg(feature = "rayon")]
    {
        compress_par_into(input, cfg, &Parallel::new(), Kernel::best(), out)
    }
    #[cfg(not(feature = "rayon"))]
    {
        compress_path_into(input, cfg, Kernel::best(), out)
    }
}

/// Compresses on one thread with the fastest path of this CPU ([`Kernel::best`]) into a `Vec`.
pub fn compress_serial_vec<T: Element>(input: &[T], cfg: &Config) -> FzResult<Vec<u8>> {
    compress_path_vec(input, cfg, Kernel::best())
}

/// Compresses on one thread on `path` into a `Vec` ([`Error::UnsupportedPath`] if this CPU
/// cannot run it).
pub fn compress_path_vec<T: Element>(input: &[T], cfg: &Config, path: Kernel) -> FzResult<Vec<u8>> {
    let mut out = Vec::new();
    compress_path_into(input, cfg, path, &mut out)?;
    Ok(out)
}

/// [`compress_path_vec`] into `out` (capacity reused); returns the archive length. Each call
/// grows `out` back to the plan's worst case and zeroes that tail (see [`compress_par_slice`]);
/// [`compress_with`] into a slice allocated once avoids it.
pub fn compress_path_into<T: Element>(
    input: &[T],
    cfg: &Config,
    path: Kernel,
    out: &mut Vec<u8>,
) -> FzResult<usize> {
    compress_planned_into(input, cfg, path, &engine::Serial, out)
}

/// Plans once, sizes `out` to the plan's worst case ([`engine::worst_len`]: usually a small
/// multiple of the archive, so reusing `out` re-zeroes little), then encodes on `join`.
/// The reference path gets the format's worst case (its one-pass encoder parks 8 bytes per
/// value in the output).
fn compress_planned_into<T: Element, J: engine::Join>(
    input: &[T],
    cfg: &Config,
    path: Kernel,
    join: &J,
    out: &mut Vec<u8>,
) -> FzResult<usize> {
    let (plan, max_abs) = match engine::plan_on(path, join, input, cfg) {
        Ok(p) => p,
        Err(e) => return finish(out, Err(e)),
    };
    let cap = if path == Kernel::Scalar {
        worst_len::<T>(input.len(), cfg)?
    } else {
        engine::worst_len(&plan, max_abs)
    };
    prepare(out, cap, 0u8);
    let r = engine::compress_planned_on(path, join, &plan, max_abs, input, out);
    finish(out, r)
}

/// The archive's worst-case length, or the block-size error.
fn worst_len<T: Element>(n: usize, cfg: &Config) -> FzResult<usize> {
    max_compressed_len(n, cfg.block_size, T::TYPE).ok_or(FzError::Szp(Error::InvalidBlockSize))
}

/// Makes `out` exactly `len` elements of `zero`, reusing its capacity; a fresh allocation is
/// zeroed lazily by the allocator, so its pages are first touched by whoever writes them.
fn prepare<E: Clone + Copy>(out: &mut Vec<E>, len: usize, zero: E) {
    if out.capacity() < len {
        *out = vec![zero; len];
    } else {
        out.resize(len, zero);
        out.truncate(len);
    }
}

/// Truncates `out` to the written length (or empties it on error).
fn finish(out: &mut Vec<u8>, r: Result<usize, Error>) -> FzResult<usize> {
    match r {
        Ok(len) => {
            out.truncate(len);
            Ok(len)
        }
        Err(e) => {
            out.clear();
            Err(e.into())
        }
    }
}

/// Decompresses an fzpack SZp archive (parallel with feature `rayon`), verifying its checksums
/// (version 2; [`decompress_vec_verify`] with [`Verify::Skip`] skips them).
///
/// The value count comes from the header and is bounded by the archive itself (one width byte
/// per block), so at most `block_size` values are allocated per archive byte.
pub fn decompress_vec<T: Element>(archive: &[u8]) -> FzResult<Vec<T>> {
    decompress_vec_verify(archive, Verify::Checksums)
}

/// [`decompress_vec`] with an explicit [`Verify`] choice.
pub fn decompress_vec_verify<T: Element>(archive: &[u8], verify: Verify) -> FzResult<Vec<T>> {
    let mut out = Vec::new();
    decompress_into_verify(archive, &mut out, verify)?;
    Ok(out)
}

/// [`decompress_vec`] into `out` (resized to the value count, capacity reused); returns the
/// number of values.
pub fn decompress_into<T: Element>(archive: &[u8], out: &mut Vec<T>) -> FzResult<usize> {
    decompress_into_verify(archive, out, Verify::Checksums)
}

/// [`decompress_into`] with an explicit [`Verify`] choice.
pub fn decompress_into_verify<T: Element>(
    archive: &[u8],
    out: &mut Vec<T>,
    verify: Verify,
) -> FzResult<usize> {
    #[cfg(feature = "rayon")]
    {
        decompress_par_into_verify(archive, &Parallel::new(), Kernel::best(), out, verify)
    }
    #[cfg(not(feature = "rayon"))]
    {
        decompress_path_into_verify(archive, Kernel::best(), out, verify)
    }
}

/// Decompresses on one thread with the fastest path of this CPU into a `Vec`.
pub fn decompress_serial_vec<T: Element>(archive: &[u8]) -> FzResult<Vec<T>> {
    decompress_path_vec(archive, Kernel::best())
}

/// Decompresses on one thread on `path` into a `Vec`.
pub fn decompress_path_vec<T: Element>(archive: &[u8], path: Kernel) -> FzResult<Vec<T>> {
    decompress_path_vec_verify(archive, path, Verify::Checksums)
}

/// [`decompress_path_vec`] with an explicit [`Verify`] choice.
pub fn decompress_path_vec_verify<T: Element>(
    archive: &[u8],
    path: Kernel,
    verify: Verify,
) -> FzResult<Vec<T>> {
    let mut out = Vec::new();
    decompress_path_into_verify(archive, path, &mut out, verify)?;
    Ok(out)
}

/// [`decompress_path_vec`] into `out` (capacity reused); returns the number of values.
pub fn decompress_path_into<T: Element>(
    archive: &[u8],
    path: Kernel,
    out: &mut Vec<T>,
) -> FzResult<usize> {
    decompress_path_into_verify(archive, path, out, Verify::Checksums)
}

/// [`decompress_path_into`] with an explicit [`Verify`] choice (each chunk's CRC is checked
/// right before the chunk is decoded).
pub fn decompress_path_into_verify<T: Element>(
    archive: &[u8],
    path: Kernel,
    out: &mut Vec<T>,
    verify: Verify,
) -> FzResult<usize> {
    let view = checked_view::<T>(archive, verify)?;
    decode_into(out, view.n, |o| {
        decompress_with_verify(path, archive, o, verify)
    })
}

/// Makes `out` `n` values long (capacity reused) and decodes into it with `decode`; empties
/// `out` on error (the decoding side of [`prepare`] and [`finish`]).
fn decode_into<T: Element>(
    out: &mut Vec<T>,
    n: usize,
    decode: impl FnOnce(&mut [T]) -> Result<usize, Error>,
) -> FzResult<usize> {
    prepare(out, n, T::ZERO);
    decode(out).map_err(|e| {
        out.clear();
        e.into()
    })
}

/// Reads `archive`'s frame (header and its CRC under `verify`, the count bounded by the width
/// bytes present, so `out` is never sized from a hostile count) and checks its element type
/// against `T`. The payload lengths and chunk CRCs are the decoder's: walking them here too
/// would read a cold archive twice.
fn checked_view<T: Element>(archive: &[u8], verify: Verify) -> FzResult<ArchiveView<'_>> {
    let view = blocks::parse_frame(archive, verify, false)?;
    let stored: crate::DType = view.header.dtype;
    if stored != T::TYPE {
        return Err(FzError::DTypeMismatch {
            stored,
            requested: T::TYPE,
        });
    }
    Ok(view)
}

/// Compresses `input` with the parallel driver `par` over the fastest path of this CPU.
/// Byte-identical to [`fzpack_core::szp::compress`]; inputs below two minimum chunks (or a
/// one-thread pool) run serially. See [`compress_par_with`].
#[cfg(feature = "rayon")]
pub fn compress_par<T: Element>(input: &[T], cfg: &Config, par: &Parallel) -> FzResult<Vec<u8>> {
    compress_par_with(input, cfg, par, Kernel::best())
}

/// Compresses `input` with the parallel driver on the kernels of `path`: the core's archive
/// driver ([`engine::compress_on`]) with `par`'s rayon `Join` — plan once (statistics split
/// across the pool), every task encodes its block range into its final place. The strict
/// per-element re-check runs in every task, as in the serial encoder.
#[cfg(feature = "rayon")]
pub fn compress_par_with<T: Element>(
    input: &[T],
    cfg: &Config,
    par: &Parallel,
    path: Kernel,
) -> FzResult<Vec<u8>> {
    let mut out = Vec::new();
    compress_par_into(input, cfg, par, path, &mut out)?;
    Ok(out)
}

/// [`compress_par_with`] into `out` (capacity reused); returns the archive length. Each call
/// zeroes the tail `out` grows by ([`compress_par_slice`] writes into a slice instead).
#[cfg(feature = "rayon")]
pub fn compress_par_into<T: Element>(
    input: &[T],
    cfg: &Config,
    par: &Parallel,
    path: Kernel,
    out: &mut Vec<u8>,
) -> FzResult<usize> {
    let Some(j) = par.join_for(size_of_val(input)) else {
        return compress_path_into(input, cfg, path, out);
    };
    par.install(|| compress_planned_into(input, cfg, path, &j, out))
}

/// [`compress_par_with`] into the caller's slice `out`; returns the archive length (the archive
/// is `out[..len]`). With `out` at least [`max_compressed_len`] (or [`engine::worst_len`] of
/// the plan) long nothing is sized twice; a shorter `out` costs a sizing pass and fails with
/// [`Error::OutputTooSmall`] (nothing written) when the archive does not fit.
///
/// The `Vec` variants ([`compress_par_into`]) must grow a reused `Vec` back from the last
/// archive's length to the plan's worst case on every call, and safe Rust zeroes those bytes:
/// megabytes per call at high ratios (about 24 MiB for a 64 MiB random walk at 1e-4, a fifth
/// of its compression time, as measured). A slice allocated once, an
/// output file's mapping or an MPI buffer has no such cost.
#[cfg(feature = "rayon")]
pub fn compress_par_slice<T: Element>(
    input: &[T],
    cfg: &Config,
    par: &Parallel,
    path: Kernel,
    out: &mut [u8],
) -> FzResult<usize> {
    let r = match par.join_for(size_of_val(input)) {
        Some(j) => par.install(|| engine::compress_on(path, &j, input, cfg, out)),
        None => compress_with(path, input, cfg, out),
    };
    r.map_err(Into::into)
}

/// The parallel encoder on the scalar reference kernels ([`compress_par_with`] on
/// [`Kernel::Scalar`]).
#[cfg(feature = "rayon")]
pub fn compress_par_blocks<T: Element>(
    input: &[T],
    cfg: &Config,
    par: &Parallel,
) -> FzResult<Vec<u8>> {
    compress_par_with(input, cfg, par, Kernel::Scalar)
}

/// Decompresses with the parallel driver `par` over the fastest path of this CPU. Same values
/// as [`fzpack_core::szp::decompress`]; the chunk CRCs are verified in parallel, each right
/// before its chunk is decoded.
#[cfg(feature = "rayon")]
pub fn decompress_par<T: Element>(archive: &[u8], par: &Parallel) -> FzResult<Vec<T>> {
    decompress_par_with(archive, par, Kernel::best())
}

/// [`decompress_par`] with an explicit [`Verify`] choice.
#[cfg(feature = "rayon")]
pub fn decompress_par_verify<T: Element>(
    archive: &[u8],
    par: &Parallel,
    verify: Verify,
) -> FzResult<Vec<T>> {
    let mut out = Vec::new();
    decompress_par_into_verify(archive, par, Kernel::best(), &mut out, verify)?;
    Ok(out)
}

/// [`decompress_par`] on the kernels of `path`: the core's driver ([`engine::decompress_on`])
/// with `par`'s rayon `Join`, splitting at block boundaries.
#[cfg(feature = "rayon")]
pub fn decompress_par_with<T: Element>(
    archive: &[u8],
    par: &Parallel,
    path: Kernel,
) -> FzResult<Vec<T>> {
    let mut out = Vec::new();
    decompress_par_into(archive, par, path, &mut out)?;
    Ok(out)
}

/// [`decompress_par_with`] into `out` (capacity reused); returns the number of values.
#[cfg(feature = "rayon")]
pub fn decompress_par_into<T: Element>(
    archive: &[u8],
    par: &Parallel,
    path: Kernel,
    out: &mut Vec<T>,
) -> FzResult<usize> {
    decompress_par_into_verify(archive, par, path, out, Verify::Checksums)
}

/// [`decompress_par_into`] with an explicit [`Verify`] choice.
#[cfg(feature = "rayon")]
pub fn decompress_par_into_verify<T: Element>(
    archive: &[u8],
    par: &Parallel,
    path: Kernel,
    out: &mut Vec<T>,
    verify: Verify,
) -> FzResult<usize> {
    let view = checked_view::<T>(archive, verify)?;
    let Some(j) = par.join_for(view.n.saturating_mul(T::BYTES)) else {
        return decompress_path_into_verify(archive, path, out, verify);
    };
    decode_into(out, view.n, |o| {
        par.install(|| engine::decompress_verify_on(path, &j, archive, o, verify))
    })
}

/// The parallel decoder on the scalar reference kernels ([`decompress_par_with`] on
/// [`Kernel::Scalar`]).
#[cfg(feature = "rayon")]
pub fn decompress_par_blocks<T: Element>(archive: &[u8], par: &Parallel) -> FzResult<Vec<T>> {
    decompress_par_with(archive, par, Kernel::Scalar)
}
