//! SZp on AVX2: the portable block kernels ([`crate::arch::generic::szp`]) compiled under AVX2
//! and BMI2 — the driver's per-range loop runs inside [`enter`]'s `#[target_feature]`
//! function, where LLVM emits 256-bit code for the data-parallel passes (f64 division,
//! rounding, i64↔f64 conversions, zigzag, OR-reduction, scaling). Same bits as the reference.
//!
//! The token is [`Bmi2`] (AVX2 **and** BMI2, what this path has always required).

use crate::arch::generic::szp::{
    Buffers, lane_stats, portable_decode, portable_encode, portable_width,
};
use crate::arch::szp::{BlockError, Quant, Stats, SzpKernel};
use crate::arch::x86_64::Bmi2;
use crate::types::SzpFloat;

/// Calls `f` with AVX2 and BMI2 enabled for everything inlined into it.
///
/// # Safety
/// The CPU must support AVX2 and BMI2.
#[target_feature(enable = "avx2,bmi2")]
unsafe fn enter<R>(f: impl FnOnce() -> R) -> R {
    f()
}

impl SzpKernel for Bmi2 {
    type Enc = Quant;
    type Scratch = Buffers;

    #[inline(always)]
    fn scratch(self) -> Buffers {
        Buffers::new()
    }
    #[inline(always)]
    fn encoder(self, q: Quant) -> Quant {
        q
    }
    #[inline(always)]
    fn enter<R>(self, f: impl FnOnce() -> R) -> R {
        // SAFETY: the token proves AVX2 and BMI2 (and the OS YMM state).
        unsafe { enter(f) }
    }
    #[inline(always)]
    fn stats<T: SzpFloat>(self, x: &[T]) -> Stats {
        // SAFETY: as in `enter`.
        unsafe { enter(|| lane_stats(x)) }
    }
    #[inline(always)]
    fn width<T: SzpFloat>(self, e: &Quant, block: &[T], s: &mut Buffers) -> u8 {
        portable_width(e.eb, block, s)
    }
    #[inline(always)]
    fn encode<T: SzpFloat>(
        self,
        e: &Quant,
        block: &[T],
        dst: &mut [u8],
        s: &mut Buffers,
    ) -> Result<u8, BlockError> {
        portable_encode(e, block, dst, s)
    }
    #[inline(always)]
    fn decode<T: SzpFloat>(self, eb: f64, w: u8, src: &[u8], out: &mut [T], s: &mut Buffers) {
        portable_decode(eb, w, src, out, &mut s.q)
    }
}
