//! The public choice of an SZp implementation path. Each path is backed by a proof token of
//! [`crate::arch`] (the `SzpKernel` leaves); selecting a path this CPU cannot run is
//! [`Error::UnsupportedPath`], never a silent fallback (as in PERNIX).

use super::engine::{self, Serial};
use super::{Config, Error, SzpFloat, Verify};
use crate::arch::CpuFeatures;

/// An implementation path of the SZp codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// The portable scalar reference ([`super::scalar`], token `arch::generic::Reference`).
    Scalar,
    /// The portable vectorization-friendly kernels, compiled for the target's baseline
    /// (token `arch::generic::Portable`). Always available.
    Portable,
    /// x86_64 AVX2 (with BMI2): the portable kernels under AVX2 (token `arch::x86_64::Bmi2`).
    Avx2,
    /// x86_64 AVX-512 F/DQ/BW/VL + VBMI: hand-written kernels (token
    /// `arch::x86_64::Avx512Vbmi`).
    Avx512,
    /// aarch64 NEON (token `arch::aarch64::Neon`).
    Neon,
}

impl Kernel {
    /// Every path, slowest first.
    pub const ALL: [Kernel; 5] = [
        Kernel::Scalar,
        Kernel::Portable,
        Kernel::Avx2,
        Kernel::Avx512,
        Kernel::Neon,
    ];

    /// Whether this path runs on this CPU (detected once, [`CpuFeatures::detect`]).
    pub fn is_available(self) -> bool {
        self.is_available_with(CpuFeatures::detect())
    }

    /// Whether this path runs on a CPU with `f` (e.g. a detected set narrowed with
    /// [`CpuFeatures::without`]).
    pub fn is_available_with(self, f: CpuFeatures) -> bool {
        match self {
            Kernel::Scalar | Kernel::Portable => true,
            Kernel::Avx2 => cfg!(target_arch = "x86_64") && f.avx2_bmi2(),
            Kernel::Avx512 => cfg!(target_arch = "x86_64") && f.avx512_vbmi_avx2(),
            Kernel::Neon => cfg!(target_arch = "aarch64") && f.neon(),
        }
    }

    /// The fastest available path: AVX-512 VBMI, AVX2, NEON, then scalar. Inlined, so that on
    /// targets without SIMD paths (microcontrollers) it folds to `Scalar` and the portable
    /// kernels are not linked.
    #[inline]
    pub fn best() -> Kernel {
        if Kernel::Avx512.is_available() {
            Kernel::Avx512
        } else if Kernel::Avx2.is_available() {
            Kernel::Avx2
        } else if Kernel::Neon.is_available() {
            Kernel::Neon
        } else {
            Kernel::Scalar
        }
    }

    /// A short lower-case name (`scalar`, `portable`, `avx2`, `avx512`, `neon`).
    pub const fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Portable => "portable",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
            Kernel::Neon => "neon",
        }
    }
}

/// [`super::compress`] on a given path, on the calling thread. A path this CPU cannot run is
/// [`Error::UnsupportedPath`] (check [`Kernel::is_available`]). [`Kernel::Scalar`] is the
/// reference that every other path (parallel, GPU) matches byte for byte.
pub fn compress_with<T: SzpFloat>(
    kernel: Kernel,
    input: &[T],
    cfg: &Config,
    out: &mut [u8],
) -> Result<usize, Error> {
    engine::compress_on(kernel, &Serial, input, cfg, out)
}

/// [`super::decompress`] on a given path, on the calling thread, with an explicit [`Verify`]
/// choice ([`Verify::Skip`]: no CRCs, for callers that checksum the archive elsewhere; every
/// structural check still runs). Unavailable paths are errors as in [`compress_with`].
pub fn decompress_with<T: SzpFloat>(
    kernel: Kernel,
    archive: &[u8],
    out: &mut [T],
    verify: Verify,
) -> Result<usize, Error> {
    engine::decompress_verify_on(kernel, &Serial, archive, out, verify)
}
