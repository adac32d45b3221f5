//! An independent, deliberately naive model of the PERNIX format (spec §1–§3), bit by bit,
//! with `std`'s `round_ties_even`. The exhaustive tests compare every fzpack path against it.

use fzpack_core::pernix::{BitWidth, BlockSize, PernixFloat, elements_per_block};

/// A float type the model can evaluate with std's rounding.
pub trait ModelFloat: PernixFloat + std::fmt::Debug {
    /// `self * inv` in the element type.
    fn mul(self, rhs: Self) -> Self;
    /// `std` round half to even.
    fn rte(self) -> Self;
    /// NaN test.
    fn nan(self) -> bool;
    /// Exact conversion from an integer code (|v| < 2^24).
    fn from_i64(v: i64) -> Self;
    /// Truncating conversion of an integral value.
    fn to_i64(self) -> i64;
}

macro_rules! model_float {
    ($t:ty) => {
        impl ModelFloat for $t {
            fn mul(self, rhs: Self) -> Self {
                self * rhs
            }
            fn rte(self) -> Self {
                self.round_ties_even()
            }
            fn nan(self) -> bool {
                self.is_nan()
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn to_i64(self) -> i64 {
                self as i64
            }
        }
    };
}
model_float!(f32);
model_float!(f64);

/// The code of `x`: `s = x·inv`; NaN → 0; clamp(s, lo, hi); round half to even.
pub fn quantize<T: ModelFloat>(x: T, inv: T, bits: u32) -> i64 {
    let (lo, hi) = if bits == 1 {
        (0i64, 1i64)
    } else {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    };
    let s = x.mul(inv);
    if s.nan() {
        return 0;
    }
    let (lo_f, hi_f) = (T::from_i64(lo), T::from_i64(hi));
    let c = if s < lo_f {
        lo_f
    } else if hi_f < s {
        hi_f
    } else {
        s
    };
    c.rte().to_i64()
}

/// Compresses `blocks` blocks with the model into a fresh vector.
pub fn compress<T: ModelFloat>(
    bits: BitWidth,
    bs: BlockSize,
    input: &[T],
    inv: T,
    blocks: usize,
) -> Vec<u8> {
    let n = u32::from(bits.get());
    let epb = elements_per_block(bits, bs);
    let mut out = vec![0u8; bs.bytes() * blocks];
    for b in 0..blocks {
        let block = &mut out[b * bs.bytes()..(b + 1) * bs.bytes()];
        for i in 0..epb {
            let q = quantize(input[b * epb + i], inv, n) as u64 & ((1u64 << n) - 1);
            for k in 0..n as usize {
                if q >> k & 1 == 1 {
                    let bit = i * n as usize + k;
                    block[bit / 8] |= 1 << (bit % 8);
                }
            }
        }
    }
    out
}

/// Decompresses `blocks` blocks with the model.
pub fn decompress<T: ModelFloat>(
    bits: BitWidth,
    bs: BlockSize,
    input: &[u8],
    scale: T,
    blocks: usize,
    sign_values: bool,
) -> Vec<T> {
    let n = bits.get() as usize;
    let epb = elements_per_block(bits, bs);
    let mut out = Vec::with_capacity(epb * blocks);
    for b in 0..blocks {
        let block = &input[b * bs.bytes()..(b + 1) * bs.bytes()];
        for i in 0..epb {
            let mut raw = 0i64;
            for k in 0..n {
                let bit = i * n + k;
                raw |= i64::from(block[bit / 8] >> (bit % 8) & 1) << k;
            }
            if sign_values && n > 1 && raw >> (n - 1) & 1 == 1 {
                raw -= 1 << n;
            }
            out.push(T::from_i64(raw).mul(scale));
        }
    }
    out
}
