//! The quantizer of the entropy-coded chunk codec ([`crate::szp::entropy::levels_checked`])
//! compiled for AVX-512 (F, DQ, BW, VL): the portable SZp kernel's quantizer and strict check
//! (`entropy::levels_run`), the very same source, compiled where the compiler may vectorize
//! the f64 ↔ i64 conversions SSE2 lacks. The same IEEE-754 operations on the same values in
//! the same order per element, and Rust's conversion rules whatever the ISA, so the same
//! levels and the same first violation as the portable path (the entropy tests compare both
//! on adversarial values).

use super::Avx512Vbmi;
use crate::types::SzpFloat;

impl Avx512Vbmi {
    /// `entropy::levels_run` compiled for AVX-512: the levels of `values` at quantizer bound
    /// `eb` into `levels`, and the index of the first value whose reconstruction misses
    /// `bound` (when given).
    pub(crate) fn entropy_levels<T: SzpFloat>(
        self,
        values: &[T],
        eb: f64,
        bound: Option<f64>,
        levels: &mut [i64],
    ) -> Option<usize> {
        // SAFETY: the token (`self`) proves the CPU supports AVX-512 F, DQ, BW and VL.
        unsafe { levels_avx512(values, eb, bound, levels) }
    }
}

/// `entropy::levels_run` under AVX-512.
///
/// # Safety
/// The CPU must support AVX-512 F, DQ, BW and VL (an [`Avx512Vbmi`] token proves it).
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
unsafe fn levels_avx512<T: SzpFloat>(
    values: &[T],
    eb: f64,
    bound: Option<f64>,
    levels: &mut [i64],
) -> Option<usize> {
    crate::szp::entropy::levels_run(values, eb, bound, levels)
}
