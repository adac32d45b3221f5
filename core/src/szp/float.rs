//! The element types of SZp (`f32`, `f64`).

use super::DType;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// An SZp element type: `f32` or `f64` (sealed).
pub trait SzpFloat: Copy + PartialOrd + Default + sealed::Sealed + 'static {
    /// The element type tag.
    const DTYPE: DType;
    /// Exact widening to f64.
    fn to_f64(self) -> f64;
    /// Conversion from f64 (round to nearest even for f32).
    fn from_f64(v: f64) -> Self;
}

impl SzpFloat for f32 {
    const DTYPE: DType = DType::F32;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl SzpFloat for f64 {
    const DTYPE: DType = DType::F64;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
}
