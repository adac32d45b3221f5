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
use crate::types::sealed::{Floats, FloatsMut};
use crate::types::{BitWidth, BlockSize, PernixFloat};

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

impl Neon {
    /// Compresses whole blocks with the NEON kernels; same contract as
    /// [`crate::pernix::scalar::compress`] (lengths checked by the caller; the shorter side
    /// decides the number of blocks, nothing panics).
    pub fn compress<T: PernixFloat>(
        self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[T],
        inverse_scale: T,
        output: &mut [u8],
    ) {
        let bs = block_size.bytes();
        let inv = inverse_scale.to_bits_u64();
        match T::floats(input) {
            // SAFETY: the token proves the CPU supports NEON.
            Floats::F32(x) => unsafe {
                pernix::compress_f32(bits, bs, x, f32::from_bits(inv as u32), output)
            },
            // SAFETY: the token proves the CPU supports NEON.
            Floats::F64(x) => unsafe {
                pernix::compress_f64(bits, bs, x, f64::from_bits(inv), output)
            },
        }
    }

    /// Decompresses whole blocks with the NEON kernels; same contract as
    /// [`crate::pernix::scalar::decompress`].
    pub fn decompress<T: PernixFloat>(
        self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[u8],
        scale: T,
        output: &mut [T],
        sign_values: bool,
    ) {
        let n = usize::from(bits.get());
        let bs = block_size.bytes();
        let signed = sign_values && n > 1;
        let s = scale.to_bits_u64();
        match T::floats_mut(output) {
            // SAFETY: the token proves the CPU supports NEON.
            FloatsMut::F32(out) => unsafe {
                pernix::decompress_f32(n, bs, input, f32::from_bits(s as u32), out, signed)
            },
            // SAFETY: the token proves the CPU supports NEON.
            FloatsMut::F64(out) => unsafe {
                pernix::decompress_f64(n, bs, input, f64::from_bits(s), out, signed)
            },
        }
    }
}
