//! What both codecs and every kernel share: PERNIX bit widths and block sizes, the code range
//! of a width, and the sealed element-type traits with their per-type hooks.
//!
//! This module depends on nothing else in the crate; [`crate::arch`] depends on it (never on
//! [`crate::pernix`] or [`crate::szp`]), and the codec modules depend on both. The typed
//! constructors (`BitWidth::new`, `BlockSize::new` with [`crate::pernix::Error`]) are added by
//! [`crate::pernix`].

/// The seal of [`PernixFloat`] and [`SzpFloat`], and their per-type hooks: kernels with one
/// function per element type select it by matching `Sealed::floats` (each impl names its own
/// type, so there is no run-time type test and no pointer cast).
pub(crate) mod sealed {
    /// A slice of an element type, by its concrete type.
    pub enum Floats<'a> {
        /// `f32` values.
        F32(&'a [f32]),
        /// `f64` values.
        F64(&'a [f64]),
    }

    /// A mutable slice of an element type, by its concrete type.
    pub enum FloatsMut<'a> {
        /// `f32` values.
        F32(&'a mut [f32]),
        /// `f64` values.
        F64(&'a mut [f64]),
    }

    /// A slice and a scalar (a kernel's scale) of an element type, by their concrete type.
    pub enum Scaled<'a> {
        /// `f32` values and scale.
        F32(&'a [f32], f32),
        /// `f64` values and scale.
        F64(&'a [f64], f64),
    }

    /// A mutable slice and a scalar of an element type, by their concrete type.
    pub enum ScaledMut<'a> {
        /// `f32` values and scale.
        F32(&'a mut [f32], f32),
        /// `f64` values and scale.
        F64(&'a mut [f64], f64),
    }

    /// Implemented for `f32` and `f64` only.
    pub trait Sealed: Sized {
        /// `s` as a slice of its concrete type.
        fn floats(s: &[Self]) -> Floats<'_>;
        /// `s` as a mutable slice of its concrete type.
        fn floats_mut(s: &mut [Self]) -> FloatsMut<'_>;
        /// `s` and `x` as their concrete type (the PERNIX kernels' values and scale).
        fn scaled(s: &[Self], x: Self) -> Scaled<'_>;
        /// `s` and `x` as their concrete type, `s` mutable.
        fn scaled_mut(s: &mut [Self], x: Self) -> ScaledMut<'_>;
    }

    macro_rules! seal {
        ($t:ty, $v:ident) => {
            impl Sealed for $t {
                #[inline(always)]
                fn floats(s: &[Self]) -> Floats<'_> {
                    Floats::$v(s)
                }
                #[inline(always)]
                fn floats_mut(s: &mut [Self]) -> FloatsMut<'_> {
                    FloatsMut::$v(s)
                }
                #[inline(always)]
                fn scaled(s: &[Self], x: Self) -> Scaled<'_> {
                    Scaled::$v(s, x)
                }
                #[inline(always)]
                fn scaled_mut(s: &mut [Self], x: Self) -> ScaledMut<'_> {
                    ScaledMut::$v(s, x)
                }
            }
        };
    }
    seal!(f32, F32);
    seal!(f64, F64);
}

/// A PERNIX bit width, 1..=24.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitWidth(u8);

impl BitWidth {
    /// The smallest bit width, 1.
    pub const MIN: BitWidth = BitWidth(1);
    /// The largest bit width, 24.
    pub const MAX: BitWidth = BitWidth(24);

    /// `bits` as a width if it is in 1..=24 (`pernix::BitWidth::new` gives the typed error).
    pub const fn checked(bits: u8) -> Option<BitWidth> {
        if bits >= 1 && bits <= 24 {
            Some(BitWidth(bits))
        } else {
            None
        }
    }

    /// The width in bits.
    pub const fn get(self) -> u8 {
        self.0
    }

    /// Every valid bit width, 1 to 24.
    pub fn all() -> impl Iterator<Item = BitWidth> {
        (1..=24).map(BitWidth)
    }

    /// `pernix_is_valid_bit_width`.
    pub const fn is_valid(bits: u8) -> bool {
        bits >= 1 && bits <= 24
    }
}

/// A PERNIX block size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum BlockSize {
    /// 64 bytes, the documented interchange format.
    B64 = 64,
    /// 128 bytes.
    B128 = 128,
    /// 256 bytes.
    B256 = 256,
    /// 512 bytes.
    B512 = 512,
    /// 1024 bytes.
    B1024 = 1024,
}

impl BlockSize {
    /// Every block size, smallest first.
    pub const ALL: [BlockSize; 5] = [
        BlockSize::B64,
        BlockSize::B128,
        BlockSize::B256,
        BlockSize::B512,
        BlockSize::B1024,
    ];

    /// `bytes` as a block size if it is one of the five (`pernix::BlockSize::new` gives the
    /// typed error).
    pub const fn checked(bytes: u32) -> Option<BlockSize> {
        match bytes {
            64 => Some(BlockSize::B64),
            128 => Some(BlockSize::B128),
            256 => Some(BlockSize::B256),
            512 => Some(BlockSize::B512),
            1024 => Some(BlockSize::B1024),
            _ => None,
        }
    }

    /// The size in bytes.
    pub const fn bytes(self) -> usize {
        self as usize
    }

    /// `pernix_is_valid_block_size`.
    pub const fn is_valid(bytes: u32) -> bool {
        BlockSize::checked(bytes).is_some()
    }
}

/// `floor(block_size · 8 / bits)`: the number of values in one block.
pub const fn elements_per_block(bits: BitWidth, block_size: BlockSize) -> usize {
    // `bits` is never 0 (BitWidth's invariant); `checked_div` lets the compiler drop the
    // division-by-zero panic path, which the firmware build proves absent.
    match (block_size.bytes() * 8).checked_div(bits.get() as usize) {
        Some(v) => v,
        None => 0,
    }
}

/// One run of PERNIX blocks: what every block call needs besides the data and the scale —
/// the argument the dispatchers, the scalar path and every SIMD entry point take (instead of
/// the C ABI's long parameter lists).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Bits per value.
    pub bits: BitWidth,
    /// Bytes per block.
    pub block_size: BlockSize,
    /// Number of blocks.
    pub blocks: usize,
    /// Decode codes as two's-complement signed values (the upstream default, `true`; never
    /// for N = 1).
    pub sign_values: bool,
}

impl Run {
    /// `blocks` blocks of `block_size` bytes at `bits` bits, signed values.
    pub const fn new(bits: BitWidth, block_size: BlockSize, blocks: usize) -> Run {
        Run {
            bits,
            block_size,
            blocks,
            sign_values: true,
        }
    }

    /// This run with `blocks` blocks.
    pub const fn with_blocks(self, blocks: usize) -> Run {
        Run { blocks, ..self }
    }

    /// This run with `sign_values` set.
    pub const fn with_sign_values(self, sign_values: bool) -> Run {
        Run {
            sign_values,
            ..self
        }
    }

    /// Values per block ([`elements_per_block`]).
    pub const fn values_per_block(&self) -> usize {
        elements_per_block(self.bits, self.block_size)
    }

    /// Whether decoding sign-extends: `sign_values` and N > 1.
    pub const fn signed(&self) -> bool {
        self.sign_values && self.bits.get() > 1
    }
}

/// Calls `$f::<N, G…>($args)` for the runtime bit width `$bits` (written `f::<_, G…>`).
#[allow(unused_macros)] // unused where the compact loop serves `compress`/`decompress`
macro_rules! with_width {
    ($bits:expr, $f:ident :: <_ $(, $g:ty)*>, ($($arg:expr),* $(,)?)) => {
        match $bits.get() {
            1 => $f::<1 $(, $g)*>($($arg),*), 2 => $f::<2 $(, $g)*>($($arg),*),
            3 => $f::<3 $(, $g)*>($($arg),*), 4 => $f::<4 $(, $g)*>($($arg),*),
            5 => $f::<5 $(, $g)*>($($arg),*), 6 => $f::<6 $(, $g)*>($($arg),*),
            7 => $f::<7 $(, $g)*>($($arg),*), 8 => $f::<8 $(, $g)*>($($arg),*),
            9 => $f::<9 $(, $g)*>($($arg),*), 10 => $f::<10 $(, $g)*>($($arg),*),
            11 => $f::<11 $(, $g)*>($($arg),*), 12 => $f::<12 $(, $g)*>($($arg),*),
            13 => $f::<13 $(, $g)*>($($arg),*), 14 => $f::<14 $(, $g)*>($($arg),*),
            15 => $f::<15 $(, $g)*>($($arg),*), 16 => $f::<16 $(, $g)*>($($arg),*),
            17 => $f::<17 $(, $g)*>($($arg),*), 18 => $f::<18 $(, $g)*>($($arg),*),
            19 => $f::<19 $(, $g)*>($($arg),*), 20 => $f::<20 $(, $g)*>($($arg),*),
            21 => $f::<21 $(, $g)*>($($arg),*), 22 => $f::<22 $(, $g)*>($($arg),*),
            23 => $f::<23 $(, $g)*>($($arg),*), _ => $f::<24 $(, $g)*>($($arg),*),
        }
    };
}
#[allow(unused_imports)] // unused where no backend unrolls by width
pub(crate) use with_width;

/// The code range `[lo, hi]` of bit width `N`: `[0, 1]` for N = 1, else `[−2^(N−1), 2^(N−1)−1]`.
pub const fn code_range(n: u32) -> (i32, i32) {
    if n == 1 {
        (0, 1)
    } else {
        (-(1 << (n - 1)), (1 << (n - 1)) - 1)
    }
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
                // C++ clamp(s, lo, hi) in the element type, then NaN → 0.
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

/// Element type of an archive or stream: `f32` or `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE binary32 (FZM DataType 8).
    F32,
    /// IEEE binary64 (FZM DataType 9).
    F64,
}

impl DType {
    /// The FZGPUModules DataType code: 8 (f32) or 9 (f64).
    pub const fn code(self) -> u8 {
        match self {
            DType::F32 => 8,
            DType::F64 => 9,
        }
    }
    /// The type with DataType `code`.
    pub const fn from_code(code: u8) -> Option<DType> {
        match code {
            8 => Some(DType::F32),
            9 => Some(DType::F64),
            _ => None,
        }
    }
    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F64 => 8,
        }
    }
    /// `"f32"` or `"f64"`.
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }
}

impl core::fmt::Display for DType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether a decoder verifies an archive's checksums (SZp format version 2, PERNIX streams
/// version 2; older versions have none). One type for both codecs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Verify {
    /// Verify the header CRC and every chunk CRC: the default.
    #[default]
    Checksums,
    /// Skip the CRCs, for callers that checksum the bytes elsewhere. Every structural check
    /// (header fields, layout, widths or scales, exact length) still runs.
    Skip,
}

/// An SZp element type: `f32` or `f64` (sealed).
pub trait SzpFloat: Copy + PartialOrd + Default + Send + Sync + sealed::Sealed + 'static {
    /// The element type tag.
    const DTYPE: DType;
    /// Exact widening to f64.
    fn to_f64(self) -> f64;
    /// Conversion from f64 (round to nearest even for f32).
    fn from_f64(v: f64) -> Self;
    /// The bit pattern, zero-extended (NaN payloads and signalling bits kept).
    fn bits(self) -> u64;
    /// The value of bit pattern `b` (its low `size_of::<Self>()` bytes).
    fn from_bits(b: u64) -> Self;
    /// Whether this is NaN or ±inf: a missing value.
    fn is_missing(self) -> bool;
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
    #[inline(always)]
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    #[inline(always)]
    fn from_bits(b: u64) -> Self {
        f32::from_bits(b as u32)
    }
    #[inline(always)]
    fn is_missing(self) -> bool {
        self.to_bits() & 0x7f80_0000 == 0x7f80_0000
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
    #[inline(always)]
    fn bits(self) -> u64 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_bits(b: u64) -> Self {
        f64::from_bits(b)
    }
    #[inline(always)]
    fn is_missing(self) -> bool {
        self.to_bits() & 0x7ff0_0000_0000_0000 == 0x7ff0_0000_0000_0000
    }
}

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
