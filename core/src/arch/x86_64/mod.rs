//! x86_64 PERNIX kernels: AVX2, BMI2 and AVX-512 VBMI.
//!
//! Each backend is a zero-sized **proof token** ([`Avx2`], [`Bmi2`], [`Avx512Vbmi`]) that can
//! only be constructed from a [`CpuFeatures`] value saying the ISA is usable (and
//! [`CpuFeatures`] itself only comes from detection or from narrowing a detected set with
//! [`CpuFeatures::without`]). Holding a token is what makes calling the `#[target_feature]`
//! kernels sound.
//!
//! The AVX-512 kernels take the bit width at run time: the per-width byte shuffles, bit
//! offsets and store masks come from tables computed at compile time by `const fn`s
//! (module `tables`), so there is one kernel per (element type, operation) rather than 24. Widths
//! 1, 8, 16 and 24 have dedicated paths (test-into-mask, sign/zero-extending loads, byte
//! gathers). Runs of blocks whose bit streams join seamlessly (N divides 8·BS and a block holds
//! whole 16-value steps) are walked as one stream. The AVX2 decompressor is runtime-N too; the
//! AVX2 compressor is const-generic in N (one `match`), because its group assembly needs
//! constant shifts to be fast. `X86Bmi2` runs the AVX2 kernels (upstream's BMI2 backend
//! requires AVX2 too); a separate `pdep`/`pext` variant was not written.
//!
//! Rounding: the AVX-512 conversions use embedded round-to-nearest-even (independent of
//! MXCSR); the AVX2 conversions use MXCSR, like the scalar path's rounding, i.e. they assume
//! the default floating-point environment that Rust requires.
//!
//! Every kernel reproduces the scalar reference ([`crate::pernix::scalar`]) exactly,
//! including NaN (→ code 0), ±inf and values far outside the code range (clamped): the float
//! is clamped in the float domain (`vmaxps lo, s` then `vminps hi, ·`, an operand order that
//! propagates NaN), then converted with round-half-even. A NaN converts to the integer
//! indefinite `0x8000_0000`, whose low N ≤ 24 bits are zero, i.e. code 0, exactly the fallback's
//! answer — so NaN costs no extra instruction. Finite clamped values are in `[lo, hi]`, where
//! the conversion is exact up to the rounding, so the code equals `rint_half_even(clamp(s))`.

use crate::arch::CpuFeatures;
use crate::arch::generic::pernix::pernix_entry_points;

mod avx2;
pub(crate) mod avx512;
pub(crate) mod compiled;
pub(crate) mod szp;
pub(crate) mod tables;

/// How far ahead the streaming kernels prefetch: bytes of input, and bytes of output.
///
/// On the KVM guests these numbers come from (Sapphire Rapids class), the hardware prefetchers
/// alone left a 64 MiB `.pnx` decode at N = 24 at 6–7 GB/s against 19 GB/s in cache; one read
/// prefetch of the input and one write prefetch of the output per 64-byte step, this far
/// ahead, gave 10–13 GB/s. In cache they cost nothing visible.
pub(crate) const PREFETCH_IN: usize = 2048;
/// See [`PREFETCH_IN`].
pub(crate) const PREFETCH_OUT: usize = 8192;

/// Prefetches the cache line at `p + PREFETCH_IN` bytes for reading (`p` may be any address:
/// a prefetch never faults, and the address is formed with wrapping arithmetic).
#[inline(always)]
pub(crate) fn prefetch_in<T>(p: *const T) {
    use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
    let at = p.cast::<i8>().wrapping_add(PREFETCH_IN);
    // SAFETY: `prefetcht0` needs only SSE (part of x86_64), reads nothing the program sees and never faults, whatever the address.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(at) }
}

/// Prefetches the cache line at `p + PREFETCH_OUT` bytes for writing (`prefetchw`, the
/// line in exclusive state, so the store that follows needs no read for ownership; on a CPU
/// without it, a read prefetch). As [`prefetch_in`], any address.
#[inline(always)]
pub(crate) fn prefetch_out<T>(p: *const T) {
    use core::arch::x86_64::{_MM_HINT_ET0, _mm_prefetch};
    let at = p.cast::<i8>().wrapping_add(PREFETCH_OUT);
    // SAFETY: as in `prefetch_in`: a prefetch never faults, whatever the address.
    unsafe { _mm_prefetch::<_MM_HINT_ET0>(at) }
}

/// Declares a zero-sized proof token constructible only from features passing `$check`.
macro_rules! token {
    ($(#[$doc:meta])* $name:ident, $check:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name(());

        impl $name {
            #[doc = concat!("The token, if `features` has ", $what, ".")]
            pub const fn new(features: CpuFeatures) -> Option<Self> {
                if features.$check() { Some(Self(())) } else { None }
            }
        }
    };
}

token!(
    /// Proof that AVX2 is usable on this CPU (and enabled by the OS).
    Avx2, avx2, "AVX2"
);
token!(
    /// Proof that AVX2 **and** BMI2 are usable (the upstream BMI2 backend's requirement).
    Bmi2, avx2_bmi2, "AVX2 and BMI2"
);
token!(
    /// Proof that AVX-512 F, DQ, BW, VL and VBMI are usable (and the OS saves ZMM state), and
    /// AVX2, which every AVX-512 CPU has and the fused frame loop uses.
    Avx512Vbmi, avx512_vbmi_avx2, "all five AVX-512 subsets and AVX2"
);

impl Bmi2 {
    /// The AVX2 token that this token implies.
    pub const fn avx2(self) -> Avx2 {
        Avx2(())
    }
}

impl Avx512Vbmi {
    /// The AVX2 token that this token implies (its check includes AVX2).
    pub const fn avx2(self) -> Avx2 {
        Avx2(())
    }
}

pernix_entry_points!(Avx2, avx2, "AVX2");

impl Avx2 {
    /// Decompresses `run.blocks` frames (scale, then block) of `frames` into `output` in one
    /// fused loop; the contract of `avx2::decompress_frames` (lengths checked by the caller,
    /// `Err(k)` at the first frame whose scale is not finite and positive).
    pub(crate) fn decompress_frames<T: crate::types::PernixFloat>(
        self,
        run: crate::types::Run,
        frames: &[u8],
        output: &mut [T],
    ) -> Result<(), usize> {
        use crate::types::sealed::FloatsMut;
        match T::floats_mut(output) {
            // SAFETY: the token proves the CPU supports AVX2.
            FloatsMut::F32(o) => unsafe { avx2::decompress_frames(run, frames, o) },
            // SAFETY: the token proves the CPU supports AVX2.
            FloatsMut::F64(o) => unsafe { avx2::decompress_frames(run, frames, o) },
        }
    }
}
pernix_entry_points!(Avx512Vbmi, avx512, "AVX-512 VBMI");
// Upstream's BMI2 backend requires AVX2 as well; here it runs the AVX2 kernels (whose speed
// does not depend on `pdep`/`pext`), which its token proves usable.
pernix_entry_points!(Bmi2, avx2, "AVX2 (the BMI2 backend's)");
