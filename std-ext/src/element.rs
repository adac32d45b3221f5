//! The element types fzpack works on and their little-endian byte forms.

use fzpack_core::pernix::PernixFloat;
use fzpack_core::szp::SzpFloat;

pub use fzpack_core::types::DType;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// An element type of fzpack (`f32` or `f64`; sealed): what every helper of this crate is
/// generic over.
///
/// It combines the core's [`PernixFloat`] and [`SzpFloat`] (whose `to_f64`/`from_f64` it uses).
pub trait Element:
    PernixFloat + SzpFloat + Send + Sync + std::fmt::Debug + sealed::Sealed + 'static
{
    /// The runtime tag of this type.
    const TYPE: DType;
    /// `|self|`.
    fn abs_val(self) -> Self;
    /// Writes the little-endian bytes into `out[..Self::BYTES]`.
    fn write_le(self, out: &mut [u8]);
    /// Reads a value from the little-endian bytes `bytes[..Self::BYTES]`.
    fn read_le(bytes: &[u8]) -> Self;
    /// The largest magnitude of `values` (`0` for an empty slice), or `None` if any value is
    /// NaN or infinite. One branch-free pass over the IEEE bits (it vectorizes).
    fn max_abs_finite(values: &[Self]) -> Option<Self>;
    /// `out[i] = values[i] · factor`, one IEEE multiply each (it vectorizes); `out` as long as
    /// `values`.
    fn scale_into(values: &[Self], factor: Self, out: &mut [Self]);
}

macro_rules! impl_element {
    ($t:ty, $u:ty, $d:expr, $n:expr) => {
        impl Element for $t {
            const TYPE: DType = $d;
            #[inline(always)]
            fn abs_val(self) -> Self {
                self.abs()
            }
            #[inline(always)]
            fn write_le(self, out: &mut [u8]) {
                out[..$n].copy_from_slice(&self.to_le_bytes());
            }
            #[inline(always)]
            fn read_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; $n];
                b.copy_from_slice(&bytes[..$n]);
                <$t>::from_le_bytes(b)
            }
            #[inline]
            fn max_abs_finite(values: &[Self]) -> Option<Self> {
                // |x| as unsigned bits orders like |x| for non-NaN values; NaN and ±inf have
                // the largest bit patterns (exponent all ones), so one integer max finds both.
                const ABS: $u = <$u>::MAX >> 1;
                const INF: $u = <$t>::INFINITY.to_bits();
                let m = values.iter().fold(0, |m: $u, x| m.max(x.to_bits() & ABS));
                if m >= INF {
                    None
                } else {
                    Some(<$t>::from_bits(m))
                }
            }
            #[inline]
            fn scale_into(values: &[Self], factor: Self, out: &mut [Self]) {
                for (o, &x) in out.iter_mut().zip(values) {
                    *o = x * factor;
                }
            }
        }
    };
}

impl_element!(f32, u32, DType::F32, 4);
impl_element!(f64, u64, DType::F64, 8);

/// Decodes raw little-endian bytes into values; `None` if the length is not a multiple of the
/// element size.
///
/// ```
/// let v = fzpack::values_from_le_bytes::<f32>(&1.5f32.to_le_bytes()).unwrap();
/// assert_eq!(v, [1.5]);
/// ```
pub fn values_from_le_bytes<T: Element>(bytes: &[u8]) -> Option<Vec<T>> {
    if !bytes.len().is_multiple_of(T::BYTES) {
        return None;
    }
    Some(bytes.chunks_exact(T::BYTES).map(T::read_le).collect())
}

/// Encodes values as raw little-endian bytes.
///
/// ```
/// assert_eq!(fzpack::values_to_le_bytes(&[1.0f64]), 1.0f64.to_le_bytes());
/// ```
pub fn values_to_le_bytes<T: Element>(values: &[T]) -> Vec<u8> {
    let mut out = vec![0u8; values.len() * T::BYTES];
    for (o, v) in out.chunks_exact_mut(T::BYTES).zip(values) {
        v.write_le(o);
    }
    out
}
