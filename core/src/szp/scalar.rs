//! The scalar SZp path (token `arch::generic::Reference`), a direct reading of the spec run
//! by the one archive driver ([`super::engine`]): the reference that other paths (parallel,
//! GPU) must match byte for byte. Callers reach it as
//! [`compress_with`](super::compress_with)`(Kernel::Scalar, ..)` and
//! [`decompress_with`](super::decompress_with)`(Kernel::Scalar, ..)`; targets without SIMD
//! kernels reach it through [`super::compress`] and [`super::decompress`], with nothing else
//! linked.

use super::engine::{self, Serial};
use super::{Config, DType, Error, SzpFloat};
use crate::arch::generic::Reference;

/// Compresses `input` into `out`; returns the archive length. See [`super::compress`].
#[cfg_attr(any(target_arch = "x86_64", target_arch = "aarch64"), allow(dead_code))]
pub(crate) fn compress<T: SzpFloat>(
    input: &[T],
    cfg: &Config,
    out: &mut [u8],
) -> Result<usize, Error> {
    engine::compress(Reference::new(), &Serial, input, cfg, out)
}

/// Decompresses an archive into `out`; returns the number of values. See
/// [`super::decompress`].
#[cfg_attr(any(target_arch = "x86_64", target_arch = "aarch64"), allow(dead_code))]
pub(crate) fn decompress<T: SzpFloat>(archive: &[u8], out: &mut [T]) -> Result<usize, Error> {
    engine::decompress(
        Reference::new(),
        &Serial,
        archive,
        out,
        super::Verify::Checksums,
    )
}

/// The element type an archive holds (without decoding it).
pub fn dtype(archive: &[u8]) -> Result<DType, Error> {
    Ok(super::Header::read(archive)?.dtype)
}
