//! The one-shot SZp entry points for a kernel choice ([`Kernel`]) and a way to run block
//! ranges ([`Join`]: [`Serial`] here, rayon in the `fzpack` crate): [`compress_on`],
//! [`decompress_on`], [`plan_on`] and friends, each a shorthand over the archive layer
//! ([`super::archive`]), whose writer and reader run the block loops of `super::ranges`.

use super::archive::{self, ArchiveReader, ArchiveWriter};
use super::blocks::Plan;
use super::ranges::{self, on_path, plan};
pub use super::ranges::{Join, Serial};
use super::{Config, Error, Kernel, Verify};
use crate::arch::szp::SzpKernel;
use crate::types::SzpFloat;

/// The largest archive `plan` can produce for inputs with `|x| <= max_abs` (at most
/// [`super::max_compressed_len`]; usually far less): a buffer this long needs no sizing pass, and the
/// parallel driver splits inside it.
/// With missing values it allows a run record per value; [`worst_len_for`] is exact for an input.
pub fn worst_len(plan: &Plan, max_abs: f64) -> usize {
    archive::worst_len(plan, max_abs)
}

/// [`worst_len`] for `input` (the plan's values): the extension (version 3: shape, missing
/// values) counted exactly, by a scan of `input` when some value is missing.
pub fn worst_len_for<T: SzpFloat>(plan: &Plan, max_abs: f64, input: &[T]) -> Result<usize, Error> {
    archive::worst_len_for(plan, max_abs, input)
}

/// Bytes of the extension (version 3: shape, missing values; 0 for version 2) of `input`
/// under `plan`.
pub fn extension_len<T: SzpFloat>(plan: &Plan, input: &[T]) -> Result<usize, Error> {
    super::missing::extension_len(plan.ext_flags(), &plan.shape, input)
}

/// Compresses with kernel `k`, ranges run by `j`: plan once, then the archive writer's
/// one-shot path ([`ArchiveWriter::write_all`]).
pub(crate) fn compress<K: SzpKernel, T: SzpFloat, J: Join>(
    k: K,
    j: &J,
    input: &[T],
    cfg: &Config,
    out: &mut [u8],
) -> Result<usize, Error> {
    // On the reference kernel of a target without an f64 FPU, a declared `max_abs` may take no
    // pass over the data ([`ranges::plan_declaring`]): the blocks then check themselves as
    // they are encoded, and an error is put in the validated path's order.
    let (plan, max_abs, unchecked) = ranges::plan_declaring(k, j, input, cfg)?;
    let mut q = ranges::quant(&plan, max_abs);
    if unchecked {
        q.unchecked = Some(crate::bits::AbsLimit::new(max_abs).below_bits());
    }
    ArchiveWriter::with_quant(&plan, q)
        .write_all_on(k, j, input, out)
        .map_err(|e| {
            if unchecked {
                ranges::declared_error(input, cfg, e)
            } else {
                e
            }
        })
}

/// Decompresses an archive with kernel `k`, ranges run by `j`, checksums as `verify` says:
/// the archive reader ([`ArchiveReader`]) with every block in one batch.
pub(crate) fn decompress<K: SzpKernel, T: SzpFloat, J: Join>(
    k: K,
    j: &J,
    archive: &[u8],
    out: &mut [T],
    verify: Verify,
) -> Result<usize, Error> {
    ArchiveReader::for_token(archive, verify)?.read_all_on(k, j, out)
}

// ---------------------------------------------------------------------------------------
// The public, path-selected API.

/// [`super::compress`] on `path` with block ranges run by `join` (e.g. [`Serial`], or the
/// `fzpack` crate's rayon driver). The bytes are the same for every path and every `join`.
/// [`Error::UnsupportedPath`] if this CPU cannot run `path`.
pub fn compress_on<T: SzpFloat, J: Join>(
    path: Kernel,
    join: &J,
    input: &[T],
    cfg: &Config,
    out: &mut [u8],
) -> Result<usize, Error> {
    on_path!(path, k => compress(k, join, input, cfg, out))
}

/// [`compress_on`] with a plan from [`plan_on`] (so that a caller can size `out` with
/// [`worst_len`] first).
pub fn compress_planned_on<T: SzpFloat, J: Join>(
    path: Kernel,
    join: &J,
    plan: &Plan,
    max_abs: f64,
    input: &[T],
    out: &mut [u8],
) -> Result<usize, Error> {
    if plan.n != input.len() || plan.dtype != T::DTYPE {
        return Err(Error::Corrupt("plan is for another input"));
    }
    ArchiveWriter::begin(path, plan, max_abs).write_all(join, input, out)
}

/// [`super::decompress`] on `path` with block ranges run by `join`.
pub fn decompress_on<T: SzpFloat, J: Join>(
    path: Kernel,
    join: &J,
    archive: &[u8],
    out: &mut [T],
) -> Result<usize, Error> {
    on_path!(path, k => decompress(k, join, archive, out, Verify::Checksums))
}

/// [`decompress_on`] with an explicit [`Verify`] choice (the parallel driver verifies the chunk
/// CRCs in parallel, each chunk right before it is decoded).
pub fn decompress_verify_on<T: SzpFloat, J: Join>(
    path: Kernel,
    join: &J,
    archive: &[u8],
    out: &mut [T],
    verify: Verify,
) -> Result<usize, Error> {
    on_path!(path, k => decompress(k, join, archive, out, verify))
}

/// The plan of `input` (statistics pass on `path`, split by `join`) and a bound on `|x|`
/// (the data's largest magnitude, or the configured `max_abs`): what
/// [`ArchiveWriter::begin`] needs.
pub fn plan_on<T: SzpFloat, J: Join>(
    path: Kernel,
    join: &J,
    input: &[T],
    cfg: &Config,
) -> Result<(Plan, f64), Error> {
    on_path!(path, k => plan(k, join, input, cfg))
}
