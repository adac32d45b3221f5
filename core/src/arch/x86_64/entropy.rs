//! The entropy-coded chunk codec's quantizer and encoder compiled for wider ISAs, behind proof
//! tokens: the very same source as the portable path, compiled where the compiler may use
//! more. The quantizer and strict check ([`crate::szp::entropy::levels_checked`], the portable
//! SZp kernel's) for AVX-512 F, DQ, BW and VL, where the f64 ↔ i64 conversions SSE2 lacks
//! vectorize; the chunk encoder ([`crate::szp::entropy::encode_chunk_rows`]) for AVX2 and
//! BMI2 (`bzhi`, `shlx`, `shrx` for the bit fields). The same IEEE-754 and integer operations
//! on the same values, and Rust's conversion rules whatever the ISA, so the same levels, first
//! violation and bytes as the portable path (the entropy tests compare both).

use super::Avx512Vbmi;
use crate::szp::{Error, entropy};
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

impl super::Bmi2 {
    /// `szp::entropy::encode_chunk_rows` compiled for AVX2 and BMI2 (the same bytes).
    pub(crate) fn entropy_encode(
        self,
        levels: &[i64],
        row: usize,
        out: &mut [u8],
    ) -> Result<usize, Error> {
        // SAFETY: the token (`self`) proves the CPU supports AVX2 and BMI2.
        unsafe { encode_bmi2(levels, row, out) }
    }
}

/// `entropy::encode_rows_body` under AVX2 and BMI2.
///
/// # Safety
/// The CPU must support AVX2 and BMI2 (a [`super::Bmi2`] token proves it).
#[target_feature(enable = "avx2,bmi2")]
unsafe fn encode_bmi2(levels: &[i64], row: usize, out: &mut [u8]) -> Result<usize, Error> {
    entropy::encode_rows_body(levels, row, out)
}
