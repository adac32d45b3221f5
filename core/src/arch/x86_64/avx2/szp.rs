//! SZp on AVX2: the portable block kernels ([`crate::arch::generic::szp`]) compiled under AVX2
//! and BMI2 — the driver's per-run loops run inside `#[target_feature]` functions
//! ([`target_runs!`](crate::arch::szp::target_runs)), where LLVM emits 256-bit code for the data-parallel passes (f64 division,
//! rounding, i64↔f64 conversions, zigzag, OR-reduction, scaling). Same bits as the reference.
//!
//! The token is [`Bmi2`] (AVX2 **and** BMI2, what this path has always required).

use crate::arch::generic::szp::{lane_stats, portable_block_methods};
use crate::arch::szp::{Stats, SzpKernel, target_runs};
use crate::arch::x86_64::Bmi2;
use crate::types::SzpFloat;

/// The portable statistics pass under AVX2.
#[target_feature(enable = "avx2,bmi2")]
fn stats<T: SzpFloat>(x: &[T]) -> Stats {
    lane_stats(x)
}

impl SzpKernel for Bmi2 {
    portable_block_methods!();
    target_runs!("avx2,bmi2");

    #[inline(always)]
    fn stats<T: SzpFloat>(self, x: &[T]) -> Stats {
        // SAFETY: the token proves AVX2 and BMI2 (and the OS YMM state).
        unsafe { stats(x) }
    }
}
