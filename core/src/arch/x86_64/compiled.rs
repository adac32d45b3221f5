//! Portable code compiled for wider ISAs behind proof tokens: a token's `compiled` runs a
//! closure inside a function whose target features the token proves, so the compiler may use
//! them for everything it inlines there. The closure is the portable source itself — the same
//! IEEE-754 and integer operations on the same values, and Rust's conversion and rounding rules
//! whatever the ISA (no fused multiply-add: Rust never contracts `a·b + c`) — so it computes
//! bit for bit what the portable path computes; callers' tests compare both. No codec is
//! imported here: the codecs hand their loops in (the entropy chunk codec's quantizer for
//! AVX-512, where the f64 ↔ i64 conversions SSE2 lacks vectorize, and its encoder for AVX2 and
//! BMI2: `bzhi`, `shlx`, `shrx` for the bit fields).

use super::{Avx512Vbmi, Bmi2};

impl Avx512Vbmi {
    /// Runs `f` compiled for AVX-512 F, DQ, BW and VL.
    #[inline(always)]
    pub(crate) fn compiled<R>(self, f: impl FnOnce() -> R) -> R {
        // SAFETY: the token (`self`) proves the CPU supports AVX-512 F, DQ, BW and VL.
        unsafe { avx512(f) }
    }
}

/// Runs `f` with AVX-512 F, DQ, BW and VL enabled.
///
/// # Safety
/// The CPU must support AVX-512 F, DQ, BW and VL (an [`Avx512Vbmi`] token proves it).
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

impl Bmi2 {
    /// Runs `f` compiled for AVX2 and BMI2.
    #[inline(always)]
    pub(crate) fn compiled<R>(self, f: impl FnOnce() -> R) -> R {
        // SAFETY: the token (`self`) proves the CPU supports AVX2 and BMI2.
        unsafe { avx2_bmi2(f) }
    }
}

/// Runs `f` with AVX2 and BMI2 enabled.
///
/// # Safety
/// The CPU must support AVX2 and BMI2 (a [`Bmi2`] token proves it).
#[target_feature(enable = "avx2,bmi2")]
unsafe fn avx2_bmi2<R>(f: impl FnOnce() -> R) -> R {
    f()
}
