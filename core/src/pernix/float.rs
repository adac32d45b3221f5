//! The element types PERNIX works on (`f32`, `f64`) and their exact quantization arithmetic.

use super::BitWidth;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// An element type of PERNIX: `f32` or `f64` (sealed).
///
/// The methods implement the upstream scalar fallback arithmetic exactly; they are public so that
/// other paths (SIMD kernels, the C ABI, tests) can share one definition.
pub trait PernixFloat: Copy + PartialOrd + Default + sealed::Sealed + 'static {
    /// `0.0`.
    const ZERO: Self;
    /// `1.0`.
    const ONE: Self;
    /// Machine epsilon (`FLT_EPSILON` / `DBL_EPSILON`): the scale helpers' answer for bmax = 0.
    const EPSILON: Self;
    /// Size in bytes.
    const BYTES: usize;

    /// Whether the value is neither NaN nor infinite.
    fn is_finite(self) -> bool;
    /// Whether the value is finite and `> 0`.
    fn is_positive_finite(self) -> bool;
    /// One IEEE division in `Self`.
    fn div(self, rhs: Self) -> Self;
    /// `quantization_levels(N)` in `Self`: 1 for N = 1, else `2^(N−1) − 1`.
    fn quantization_levels(bits: BitWidth) -> Self;
    /// The upstream fallback quantizer: `s = x·inv` (one multiply in `Self`); NaN → 0; clamp to
    /// `[lo, hi]` in `Self`; round half to even. Returns the code as `i32` in `[lo, hi]`.
    ///
    /// `lo`/`hi` must be a PERNIX code range (`|lo|, |hi| <= 2^23`).
    fn quantize(self, inverse_scale: Self, lo: i32, hi: i32) -> i32 {
        self.quantize_bits(inverse_scale, lo, hi) as i32
    }
    /// [`PernixFloat::quantize`] as the two's-complement bits of the code (reduce them to the low
    /// N bits to store them). Computed without a float-to-int conversion, so it vectorizes.
    fn quantize_bits(self, inverse_scale: Self, lo: i32, hi: i32) -> u32;
    /// `Self(v) · scale`: the exact integer conversion then one multiply in `Self`.
    fn dequantize(v: i32, scale: Self) -> Self;
    /// The raw IEEE bits, widened to `u64`.
    fn to_bits_u64(self) -> u64;
    /// The value with raw IEEE bits `bits` (the low `8·BYTES` bits).
    fn from_bits_u64(bits: u64) -> Self;
}

/// Round half to even and return the two's-complement bits, without a float-to-int conversion.
///
/// Adding `M = 1.5·2^p` (p = 23 for f32, 52 for f64) to `|c| <= 2^(p−1)` lands in `[2^p, 2^(p+1))`
/// where representable values are exactly the integers, so the default rounding mode rounds `c`
/// half to even; the result's bits minus `M`'s bits are then the rounded integer in two's
/// complement. f32 codes wider than 23 bits (|c| up to 2^23) go through f64, which is exact.
macro_rules! round_to_code_bits {
    (f32, $c:expr, $hi:expr) => {{
        const M32: f32 = 12_582_912.0; // 1.5·2^23
        if $hi < (1 << 22) {
            ($c + M32).to_bits().wrapping_sub(M32.to_bits())
        } else {
            round_to_code_bits!(f64, $c as f64, $hi)
        }
    }};
    (f64, $c:expr, $hi:expr) => {{
        const M64: f64 = 6_755_399_441_055_744.0; // 1.5·2^52
        ($c + M64).to_bits().wrapping_sub(M64.to_bits()) as u32
    }};
}

macro_rules! impl_float {
    ($t:tt, $bits:ty) => {
        impl PernixFloat for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const EPSILON: Self = <$t>::EPSILON;
            const BYTES: usize = core::mem::size_of::<$t>();

            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn is_positive_finite(self) -> bool {
                <$t>::is_finite(self) && self > 0.0
            }
            #[inline(always)]
            fn div(self, rhs: Self) -> Self {
                self / rhs
            }
            #[inline(always)]
            fn quantization_levels(bits: BitWidth) -> Self {
                match bits.get() {
                    1 => 1.0,
                    n => ((1u32 << (n - 1)) - 1) as $t,
                }
            }
            #[inline(always)]
            fn quantize_bits(self, inverse_scale: Self, lo: i32, hi: i32) -> u32 {
                let s = self * inverse_scale;
                // std::clamp(s, lo, hi) in the element type, then NaN → 0.
                let (lo_f, hi_f) = (lo as $t, hi as $t);
                let c = if s < lo_f {
                    lo_f
                } else if hi_f < s {
                    hi_f
                } else {
                    s
                };
                let c = if s.is_nan() { 0.0 } else { c };
                round_to_code_bits!($t, c, hi)
            }
            #[inline(always)]
            fn dequantize(v: i32, scale: Self) -> Self {
                v as $t * scale
            }
            #[inline(always)]
            fn to_bits_u64(self) -> u64 {
                self.to_bits() as u64
            }
            #[inline(always)]
            fn from_bits_u64(bits: u64) -> Self {
                <$t>::from_bits(bits as $bits)
            }
        }
    };
}

impl_float!(f32, u32);
impl_float!(f64, u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_half_to_even() {
        // spec §2 (measured upstream): 0.5→0, 1.5→2, 2.5→2, −0.5→0, −1.5→−2, −2.5→−2.
        for (x, q) in [
            (0.5, 0),
            (1.5, 2),
            (2.5, 2),
            (-0.5, 0),
            (-1.5, -2),
            (-2.5, -2),
        ] {
            assert_eq!(PernixFloat::quantize(x as f32, 1.0, -128, 127), q, "{x}");
            assert_eq!(PernixFloat::quantize(x, 1.0, -128, 127), q, "{x}");
        }
        // The largest values below a tie must not round up.
        let below = f32::from_bits(0.5f32.to_bits() - 1);
        assert_eq!(below.quantize(1.0, -8, 7), 0);
        assert_eq!((8388607.5f64).quantize(1.0, -8388608, 8388607), 8388607);
        assert_eq!((-6291455.5f32).quantize(1.0, -8388608, 8388607), -6291456);
    }

    #[test]
    fn non_finite_and_out_of_range_follow_the_fallback() {
        assert_eq!(f32::NAN.quantize(1.0, -128, 127), 0);
        assert_eq!(f32::INFINITY.quantize(1.0, -128, 127), 127);
        assert_eq!(f32::NEG_INFINITY.quantize(1.0, -128, 127), -128);
        assert_eq!(3e9f32.quantize(1.0, -128, 127), 127);
        assert_eq!(f64::NAN.quantize(2.0, 0, 1), 0);
        assert_eq!((-0.7f64).quantize(1.0, 0, 1), 0);
        assert_eq!((0.5f64).quantize(1.0, 0, 1), 0);
        assert_eq!((0.51f64).quantize(1.0, 0, 1), 1);
        // 0 · inf is NaN → 0.
        assert_eq!(0.0f32.quantize(f32::INFINITY, -2, 1), 0);
    }

    #[test]
    fn levels() {
        assert_eq!(f32::quantization_levels(BitWidth::new(1).unwrap()), 1.0);
        assert_eq!(f32::quantization_levels(BitWidth::new(8).unwrap()), 127.0);
        assert_eq!(
            f64::quantization_levels(BitWidth::new(24).unwrap()),
            8388607.0
        );
    }
}
