//! aarch64 kernels: NEON (Advanced SIMD) for PERNIX compress and decompress and for the SZp
//! hot loops.
//!
//! NEON is architectural on aarch64 (every `aarch64-*` Rust target has the `neon` target
//! feature), so [`Neon`] is available wherever this module is compiled; it is still a proof
//! token built from a [`CpuFeatures`] value, so `CpuFeatures::without(CpuFeatures::NEON)` and
//! the `force-scalar` feature select the scalar path exactly as on x86_64.
//!
//! SVE2 is not implemented: Rust 1.95/1.96 have no stable SVE/SVE2 intrinsics (the
//! `core::arch::aarch64` SVE types and intrinsics are not available on stable; only the
//! `sve`/`sve2` *target features* are), so `Backend::Arm64Sve` keeps returning
//! `UNSUPPORTED_IMPLEMENTATION` (−5) on aarch64.
//!
//! Every kernel reproduces the scalar reference ([`crate::pernix::scalar`]) byte for byte,
//! including NaN (→ code 0), ±inf and values far outside the code range (saturated): the
//! scaled value is clamped in the float domain with `fmax`/`fmin` (which return NaN when an
//! operand is NaN) and converted with `fcvtns` (round to nearest, ties to even, independent of
//! FPCR's rounding mode), which turns NaN into 0 — exactly the fallback's answer.

use crate::arch::CpuFeatures;
use crate::arch::generic::pernix::pernix_entry_points;

mod neon;

use neon::pernix;

/// Proof that NEON (Advanced SIMD) is usable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Neon(());

impl Neon {
    /// The token, if `features` has NEON.
    pub const fn new(features: CpuFeatures) -> Option<Self> {
        if features.neon() {
            Some(Self(()))
        } else {
            None
        }
    }
}

pernix_entry_points!(Neon, pernix, "NEON");
