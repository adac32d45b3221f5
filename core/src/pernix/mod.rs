//! PERNIX block packing, byte-compatible with the C/C++ library pc2/pernix.
//!
//! A value `x` is quantized with an inverse scale `inv` to an N-bit integer
//! (`q = round_half_even(clamp(x·inv, lo, hi))`, NaN → 0) and the integers are packed
//! LSB-first into fixed blocks of 64 (the interchange format), 128, 256, 512 or 1024 bytes.
//! A block of `BS` bytes holds `floor(BS·8 / N)` values; unused tail bits are zero.
//! Decompression multiplies the (optionally sign-extended) integers by the forward `scale`.
//! The byte-level rules are in the project's `specs/pernix.md`.
//!
//! # Round trip (the C example of the PERNIX documentation, in Rust)
//!
//! ```
//! use fzpack_core::pernix::{
//!     decompression_scale_from_bmax, elements_per_block, inverse_scale, Backend, BitWidth,
//!     BlockSize, Dispatcher,
//! };
//!
//! let bits = BitWidth::new(16)?;
//! let block = BlockSize::B64;
//! const N: usize = 32; // elements_per_block(16, 64)
//! assert_eq!(elements_per_block(bits, block), N);
//!
//! let mut input = [0f32; N];
//! for (i, x) in input.iter_mut().enumerate() {
//!     *x = (i as f32 - 16.0) * 0.125;
//! }
//! let bmax = input.iter().fold(0f32, |m, x| m.max(x.abs()));
//! let scale = decompression_scale_from_bmax(bmax, bits)?;
//! let inv = inverse_scale(scale)?;
//!
//! let dispatcher = Dispatcher::new(Backend::Fallback)?;
//! let mut compressed = [0u8; 64];
//! dispatcher.compress_block(bits, block, &input, inv, &mut compressed)?;
//! let mut restored = [0f32; N];
//! dispatcher.decompress_block(bits, block, &compressed, scale, &mut restored, true)?;
//! for (x, y) in input.iter().zip(&restored) {
//!     assert!((x - y).abs() <= scale);
//! }
//! # Ok::<(), fzpack_core::pernix::Error>(())
//! ```
//!
//! # The C++ `pernix::Dispatcher` example, in Rust (f32, `sin`, `Backend::Auto`)
//!
//! ```
//! use fzpack_core::pernix::{compression_scale_from_bmax, scale_from_bmax, Backend, BitWidth,
//!     BlockSize, Dispatcher};
//!
//! let bits = BitWidth::new(16)?;
//! let mut input = [0f64; 32];
//! for (i, x) in input.iter_mut().enumerate() {
//!     *x = libm::sin(i as f64 * 0.25);
//! }
//! let bmax = input.iter().fold(0f64, |m, x| m.max(x.abs()));
//! let scale = scale_from_bmax(bmax, bits)?;
//! let inv = compression_scale_from_bmax(bmax, bits)?;
//! let d = Dispatcher::new(Backend::Auto)?;
//! let mut block = [0u8; 64];
//! d.compress_block(bits, BlockSize::B64, &input, inv, &mut block)?;
//! let mut out = [0f64; 32];
//! d.decompress_block(bits, BlockSize::B64, &block, scale, &mut out, true)?;
//! assert!(input.iter().zip(&out).all(|(a, b)| (a - b).abs() <= scale / 2.0 + 1e-15));
//! # Ok::<(), fzpack_core::pernix::Error>(())
//! ```

pub mod scalar;
pub mod stream;

mod types;

pub use crate::types::{BitWidth, BlockSize, PernixFloat, Run, Verify, elements_per_block};
pub use types::{Backend, Error, Status, compressed_block_size, status_string};

/// Forward (decompression) scale for a block whose largest magnitude is `bmax`:
/// `bmax / (2^(N−1) − 1)` (denominator 1 for N = 1), one IEEE division in `T`.
///
/// `bmax == ±0` gives machine epsilon of `T` (`2^-23` for f32, `2^-52` for f64), exactly as
/// upstream. Errors: [`Error::InvalidArgument`] when `bmax` is negative or not finite.
pub fn scale_from_bmax<T: PernixFloat>(bmax: T, bits: BitWidth) -> Result<T, Error> {
    if !bmax.is_finite() || bmax < T::ZERO {
        return Err(Error::InvalidArgument);
    }
    if bmax == T::ZERO {
        return Ok(T::EPSILON);
    }
    Ok(bmax.div(T::quantization_levels(bits)))
}

/// Alias of [`scale_from_bmax`] under the name the PERNIX documentation uses.
pub fn decompression_scale_from_bmax<T: PernixFloat>(bmax: T, bits: BitWidth) -> Result<T, Error> {
    scale_from_bmax(bmax, bits)
}

/// Inverse scale `1 / scale` (one IEEE division in `T`), the value compression takes.
///
/// Errors: [`Error::InvalidArgument`] when `scale` is not finite or `<= 0`. As upstream, the
/// result is not checked: a subnormal scale can give `+inf`, which compression then rejects.
pub fn inverse_scale<T: PernixFloat>(scale: T) -> Result<T, Error> {
    if !scale.is_positive_finite() {
        return Err(Error::InvalidArgument);
    }
    Ok(T::ONE.div(scale))
}

/// `inverse_scale(scale_from_bmax(bmax, bits))`: the inverse scale for compression.
pub fn compression_scale_from_bmax<T: PernixFloat>(bmax: T, bits: BitWidth) -> Result<T, Error> {
    inverse_scale(scale_from_bmax(bmax, bits)?)
}

/// The kernel family a [`Dispatcher`] resolved to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    /// The portable scalar reference ([`scalar`]).
    Scalar,
    /// x86_64 AVX2 kernels.
    #[cfg(target_arch = "x86_64")]
    Avx2(x86::Avx2),
    /// x86_64 BMI2 backend (AVX2 + BMI2).
    #[cfg(target_arch = "x86_64")]
    Bmi2(x86::Bmi2),
    /// x86_64 AVX-512 VBMI kernels.
    #[cfg(target_arch = "x86_64")]
    Avx512(x86::Avx512Vbmi),
    /// aarch64 NEON kernels.
    #[cfg(target_arch = "aarch64")]
    Neon(arm::Neon),
}

/// `scalar::$f(args)` or `token.$f(args)` for the kernel `$kernel` resolved to.
macro_rules! on_kernel {
    ($kernel:expr, $f:ident($($arg:expr),*)) => {
        match $kernel {
            Kernel::Scalar => scalar::$f($($arg),*),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(t) => t.$f($($arg),*),
            #[cfg(target_arch = "x86_64")]
            Kernel::Bmi2(t) => t.$f($($arg),*),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(t) => t.$f($($arg),*),
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon(t) => t.$f($($arg),*),
        }
    };
}

#[cfg(target_arch = "aarch64")]
use crate::arch::aarch64 as arm;

#[cfg(target_arch = "x86_64")]
use crate::arch::x86_64 as x86;

impl Kernel {
    /// The fastest kernel for `features`: AVX-512 VBMI, AVX2, BMI2 (x86_64) or NEON (aarch64),
    /// then scalar. With the `force-scalar` feature, always scalar.
    #[allow(unused_variables)] // `features` is unused off x86_64 and aarch64
    fn auto(features: crate::arch::CpuFeatures) -> Kernel {
        if cfg!(feature = "force-scalar") {
            return Kernel::Scalar;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(t) = x86::Avx512Vbmi::new(features) {
                return Kernel::Avx512(t);
            }
            if let Some(t) = x86::Avx2::new(features) {
                return Kernel::Avx2(t);
            }
            if let Some(t) = x86::Bmi2::new(features) {
                return Kernel::Bmi2(t);
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if let Some(t) = arm::Neon::new(features) {
                return Kernel::Neon(t);
            }
        }
        Kernel::Scalar
    }
}

/// A PERNIX dispatcher: the backend is resolved once, at creation, and stays fixed.
///
/// All methods validate their arguments before writing anything: too-short slices, a zero block
/// count and a scale that is not finite and positive give [`Error::InvalidArgument`]. Bit width
/// and block size are validated by constructing [`BitWidth`] and [`BlockSize`].
///
/// Compression reads `elements_per_block · blocks` values and writes exactly
/// `block_size · blocks` bytes; decompression reads `block_size · blocks` bytes and writes
/// `elements_per_block · blocks` values. Longer slices are fine; the extra part is untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatcher {
    kernel: Kernel,
}

impl Dispatcher {
    /// Resolves `backend` for this build and CPU.
    ///
    /// * [`Backend::Auto`] picks the fastest available backend: AVX-512 VBMI, AVX2, BMI2 on
    ///   x86_64, NEON on aarch64, then the scalar path (always the scalar path with the
    ///   `force-scalar` cargo feature).
    /// * [`Backend::Fallback`] is always available.
    /// * A backend of another architecture gives [`Error::UnsupportedBackend`] (−3).
    /// * [`Backend::Arm64Sve`] is [`Error::UnsupportedImplementation`] on aarch64: Rust 1.95/1.96
    ///   have no stable SVE/SVE2 intrinsics, so no SVE2 kernels are built.
    /// * A backend of this architecture that this build or CPU cannot serve, and the optional
    ///   fallbacks `FallbackStdpar`/`FallbackSimd` (served by the `fzpack` std facade, not by
    ///   the core), give [`Error::UnsupportedImplementation`] (−5).
    pub fn new(backend: Backend) -> Result<Self, Error> {
        Self::with_features(backend, crate::arch::CpuFeatures::detect())
    }

    /// [`Dispatcher::new`] for the CPU features `features` instead of the detected ones.
    ///
    /// `features` can only narrow what the CPU has (a [`crate::arch::CpuFeatures`] comes from
    /// detection, optionally with features removed), so this is how tests and benchmarks
    /// select a slower path, e.g. `Auto` without AVX-512.
    pub fn with_features(
        backend: Backend,
        features: crate::arch::CpuFeatures,
    ) -> Result<Self, Error> {
        #[allow(unused_variables)] // `features` is unused off x86_64 and aarch64
        let f = features;
        match backend {
            Backend::Auto => Ok(Self {
                kernel: Kernel::auto(f),
            }),
            Backend::Fallback => Ok(Self {
                kernel: Kernel::Scalar,
            }),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx2 => Self::token(x86::Avx2::new(f), Kernel::Avx2),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Bmi2 => Self::token(x86::Bmi2::new(f), Kernel::Bmi2),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx512Vbmi => Self::token(x86::Avx512Vbmi::new(f), Kernel::Avx512),
            #[cfg(not(target_arch = "x86_64"))]
            Backend::X86Avx2 | Backend::X86Bmi2 | Backend::X86Avx512Vbmi => {
                Err(Error::UnsupportedBackend)
            }
            #[cfg(target_arch = "aarch64")]
            Backend::Arm64Neon => Self::token(arm::Neon::new(f), Kernel::Neon),
            // No SVE2 kernels: SVE/SVE2 intrinsics are not stable in Rust 1.95/1.96.
            #[cfg(target_arch = "aarch64")]
            Backend::Arm64Sve => Err(Error::UnsupportedImplementation),
            #[cfg(not(target_arch = "aarch64"))]
            Backend::Arm64Neon | Backend::Arm64Sve => Err(Error::UnsupportedBackend),
            Backend::FallbackStdpar | Backend::FallbackSimd => {
                Err(Error::UnsupportedImplementation)
            }
        }
    }

    /// A dispatcher on the token `t` (wrapped by `kernel`), or
    /// [`Error::UnsupportedImplementation`] when this CPU has none.
    #[allow(dead_code)] // no SIMD token on some targets
    fn token<K>(t: Option<K>, kernel: fn(K) -> Kernel) -> Result<Self, Error> {
        t.map(|t| Self { kernel: kernel(t) })
            .ok_or(Error::UnsupportedImplementation)
    }

    /// The concrete backend this dispatcher resolved to (never [`Backend::Auto`]).
    pub fn backend(&self) -> Backend {
        match self.kernel {
            Kernel::Scalar => Backend::Fallback,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(_) => Backend::X86Avx2,
            #[cfg(target_arch = "x86_64")]
            Kernel::Bmi2(_) => Backend::X86Bmi2,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(_) => Backend::X86Avx512Vbmi,
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon(_) => Backend::Arm64Neon,
        }
    }

    /// Compresses the `run.blocks` blocks of `input` (`run.values_per_block()` values each)
    /// into `run.block_size` bytes each of `output`: the one compression path of the
    /// dispatcher (the upstream-named methods below call it).
    pub fn compress_run<T: PernixFloat>(
        &self,
        run: Run,
        input: &[T],
        inverse_scale: T,
        output: &mut [u8],
    ) -> Result<(), Error> {
        let per = (run.values_per_block(), run.block_size.bytes());
        let (input, output) = run.slices(inverse_scale, input, output, per)?;
        on_kernel!(self.kernel, compress(run, input, inverse_scale, output));
        Ok(())
    }

    /// Decompresses the `run.blocks` blocks of `input` into `run.values_per_block()` values
    /// each of `output`, sign-extending each N-bit integer when `run.sign_values` (never for
    /// N = 1): the one decompression path of the dispatcher.
    pub fn decompress_run<T: PernixFloat>(
        &self,
        run: Run,
        input: &[u8],
        scale: T,
        output: &mut [T],
    ) -> Result<(), Error> {
        let per = (run.block_size.bytes(), run.values_per_block());
        let (input, output) = run.slices(scale, input, output, per)?;
        on_kernel!(self.kernel, decompress(run, input, scale, output));
        Ok(())
    }

    /// Compresses one block: `elements_per_block(bits, block_size)` values of `input` into the
    /// first `block_size` bytes of `output`.
    pub fn compress_block<T: PernixFloat>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[T],
        inverse_scale: T,
        output: &mut [u8],
    ) -> Result<(), Error> {
        self.compress_run(Run::new(bits, block_size, 1), input, inverse_scale, output)
    }

    /// Compresses `blocks` consecutive independent blocks ([`Dispatcher::compress_run`] in the
    /// C ABI's parameter order).
    pub fn compress_blocks<T: PernixFloat>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[T],
        inverse_scale: T,
        output: &mut [u8],
        blocks: usize,
    ) -> Result<(), Error> {
        let run = Run::new(bits, block_size, blocks);
        self.compress_run(run, input, inverse_scale, output)
    }

    /// Decompresses one block of `block_size` bytes into `elements_per_block` values.
    /// `sign_values` sign-extends each N-bit integer (never for N = 1).
    pub fn decompress_block<T: PernixFloat>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[u8],
        scale: T,
        output: &mut [T],
        sign_values: bool,
    ) -> Result<(), Error> {
        let run = Run::new(bits, block_size, 1).with_sign_values(sign_values);
        self.decompress_run(run, input, scale, output)
    }

    /// Decompresses `blocks` consecutive independent blocks ([`Dispatcher::decompress_run`]
    /// in the C ABI's parameter order).
    #[allow(clippy::too_many_arguments)] // mirrors the C ABI's parameter list
    pub fn decompress_blocks<T: PernixFloat>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[u8],
        scale: T,
        output: &mut [T],
        blocks: usize,
        sign_values: bool,
    ) -> Result<(), Error> {
        let run = Run::new(bits, block_size, blocks).with_sign_values(sign_values);
        self.decompress_run(run, input, scale, output)
    }

    /// Decompresses `run.blocks` *frames* (a block stream's body: each frame is the block's
    /// scale, `T::BYTES` little-endian, then the block's `run.block_size` bytes) from the
    /// start of `frames` into `run.values_per_block()` values each of `output`, sign-extended
    /// when `run.sign_values`.
    ///
    /// The same values as one [`Dispatcher::decompress_block`] per frame, in one call: the
    /// kernels see the bytes after each block (the next frame), so every block but the last of
    /// `frames` takes their in-place loads (they read ahead at most [`FRAME_LOOKAHEAD`] bytes
    /// and never decode them) instead of the bounds-checked tail path. That tail path on every
    /// 64-byte block made the AVX2 stream decoder slower than the scalar one on Zen 1.
    ///
    /// Errors: [`FramesError::Invalid`] (`InvalidArgument`) when `run.blocks` is 0 or
    /// `frames`/`output` are too short; [`FramesError::Scale`] at the first frame whose scale
    /// is not finite and positive (the frames before it are decoded; the values of that frame
    /// and later are unspecified).
    pub fn decompress_frames<T: PernixFloat>(
        &self,
        run: Run,
        frames: &[u8],
        output: &mut [T],
    ) -> Result<(), FramesError> {
        let (bs, e) = (run.block_size.bytes(), run.values_per_block());
        let fl = bs + T::BYTES;
        let invalid = FramesError::Invalid(Error::InvalidArgument);
        let (Some(n_in), Some(n_out)) = (fl.checked_mul(run.blocks), e.checked_mul(run.blocks))
        else {
            return Err(invalid);
        };
        let (true, Some(output)) = (
            run.blocks > 0 && frames.len() >= n_in,
            output.get_mut(..n_out),
        ) else {
            return Err(invalid);
        };
        // AVX2, the BMI2 backend and AVX-512 VBMI: one fused loop over the frames. The AVX-512
        // kernels are per call (tables, masks, a 16-lane tail): on 64-byte frames, one call
        // each, they decoded 1.5-2.3x slower than this loop on a Sapphire Rapids core,
        // while their whole-run speed is kept for block runs.
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = match self.kernel {
                Kernel::Avx2(t) => Some(t),
                Kernel::Bmi2(t) => Some(t.avx2()),
                Kernel::Avx512(t) => Some(t.avx2()),
                _ => None,
            };
            if let Some(t) = avx2 {
                return t
                    .decompress_frames(run, frames, output)
                    .map_err(|frame| FramesError::Scale { frame });
            }
        }
        let one = run.with_blocks(1);
        for (k, out) in output.chunks_exact_mut(e).enumerate() {
            let at = k * fl; // < n_in <= frames.len()
            let head = frames.get(at..at + T::BYTES).ok_or(invalid)?;
            let bits = head
                .iter()
                .rev()
                .fold(0u64, |b, &x| (b << 8) | u64::from(x));
            let scale = T::from_bits_u64(bits);
            if !scale.is_positive_finite() {
                return Err(FramesError::Scale { frame: k });
            }
            let end = (at + fl + FRAME_LOOKAHEAD).min(frames.len());
            let block = frames.get(at + T::BYTES..end).ok_or(invalid)?;
            on_kernel!(self.kernel, decompress(one, block, scale, out));
        }
        Ok(())
    }
}

/// Bytes past a block that the kernels may load (never decode) when they are present: what
/// [`Dispatcher::decompress_frames`] hands them of the next frame.
pub const FRAME_LOOKAHEAD: usize = 32;

/// Why [`Dispatcher::decompress_frames`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FramesError {
    /// The run or a length is invalid.
    Invalid(Error),
    /// Frame `frame` (counted from the first of the call) has a scale that is not finite and
    /// positive; the frames before it are decoded.
    Scale {
        /// The frame's index in the call.
        frame: usize,
    },
}
