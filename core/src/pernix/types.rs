//! PERNIX parameter types, statuses and backends with the C numeric values.

use core::fmt;

use crate::types::{BitWidth, BlockSize, PernixFloat, Run};

/// Declares [`Error`] and [`Status`] (`Ok` plus one status per error) from one list of
/// `(doc) Name = C value, C enumerator name, description;` — so the C values and names are
/// written once.
macro_rules! statuses {
    ($($(#[$doc:meta])* $name:ident = $code:literal, $c_name:literal, $what:literal;)*) => {
        /// A PERNIX error. The discriminants are the C `pernix_status` values.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum Error {
            $($(#[$doc])* $name = $code,)*
        }

        /// The C `pernix_status` enum, `Ok` included, with its numeric values.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum Status {
            /// Success (0).
            Ok = 0,
            $(#[doc = concat!("See [`Error::", stringify!($name), "`].")] $name = $code,)*
        }

        impl Error {
            /// The status this error corresponds to.
            pub const fn status(self) -> Status {
                match self {
                    $(Error::$name => Status::$name,)*
                }
            }

            /// What the error means (for [`fmt::Display`]).
            const fn what(self) -> &'static str {
                match self {
                    $(Error::$name => $what,)*
                }
            }
        }

        impl Status {
            /// The status with numeric value `code`, if there is one.
            pub const fn from_code(code: i32) -> Option<Status> {
                Some(match code {
                    0 => Status::Ok,
                    $($code => Status::$name,)*
                    _ => return None,
                })
            }

            /// The C enumerator name, e.g. `"PERNIX_STATUS_INVALID_ARGUMENT"`.
            pub const fn name(self) -> &'static str {
                match self {
                    Status::Ok => "PERNIX_STATUS_OK",
                    $(Status::$name => $c_name,)*
                }
            }
        }
    };
}

statuses! {
    /// A null pointer, a slice that is too short, a zero block count or an invalid scale (−1).
    InvalidArgument = -1, "PERNIX_STATUS_INVALID_ARGUMENT",
        "invalid argument (null or short buffer, zero blocks, or a scale that is not finite and positive)";
    /// A bit width outside 1..=24 (−2).
    UnsupportedBitWidth = -2, "PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH",
        "unsupported bit width (valid: 1..=24)";
    /// An unknown backend value, or a backend of another architecture (−3).
    UnsupportedBackend = -3, "PERNIX_STATUS_UNSUPPORTED_BACKEND",
        "unsupported backend (unknown value or another architecture)";
    /// A block size other than 64, 128, 256, 512 or 1024 bytes (−4).
    UnsupportedBlockSize = -4, "PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE",
        "unsupported block size (valid: 64, 128, 256, 512, 1024 bytes)";
    /// A backend this build or this CPU cannot serve (−5).
    UnsupportedImplementation = -5, "PERNIX_STATUS_UNSUPPORTED_IMPLEMENTATION",
        "backend not available in this build or on this CPU";
    /// A C dispatcher handle could not be allocated (−6; only the C ABI returns it).
    OutOfMemory = -6, "PERNIX_STATUS_OUT_OF_MEMORY", "out of memory";
}

impl Error {
    /// The C `pernix_status` value.
    pub const fn code(self) -> i32 {
        self as i32
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.status().name(), self.what())
    }
}

impl Status {
    /// The numeric C value.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The status of a result: `Ok` or the error's status.
    pub const fn of<T>(result: &Result<T, Error>) -> Status {
        match result {
            Ok(_) => Status::Ok,
            Err(e) => e.status(),
        }
    }
}

/// `pernix_status_string`: the enumerator name for `code`, or `"PERNIX_STATUS_UNKNOWN"`.
pub const fn status_string(code: i32) -> &'static str {
    match Status::from_code(code) {
        Some(s) => s.name(),
        None => "PERNIX_STATUS_UNKNOWN",
    }
}

/// A PERNIX backend, with the C `pernix_backend` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Backend {
    /// Resolve once to the fastest available backend (0).
    Auto = 0,
    /// The portable scalar path, always available (1; C alias `FALLBACK_SCALAR`).
    Fallback = 1,
    /// x86_64 AVX2 (2).
    X86Avx2 = 2,
    /// x86_64 AVX2 + BMI2 (3).
    X86Bmi2 = 3,
    /// x86_64 AVX-512 F/DQ/BW/VL/VBMI (4).
    X86Avx512Vbmi = 4,
    /// aarch64 NEON (5).
    Arm64Neon = 5,
    /// aarch64 SVE2 (6).
    Arm64Sve = 6,
    /// The C library's parallel fallback (7); served by the `fzpack` crate's rayon driver.
    FallbackStdpar = 7,
    /// The C library's experimental portable-SIMD fallback (8); never built.
    FallbackSimd = 8,
}

impl Backend {
    /// Every backend value, in numeric order.
    pub const ALL: [Backend; 9] = [
        Backend::Auto,
        Backend::Fallback,
        Backend::X86Avx2,
        Backend::X86Bmi2,
        Backend::X86Avx512Vbmi,
        Backend::Arm64Neon,
        Backend::Arm64Sve,
        Backend::FallbackStdpar,
        Backend::FallbackSimd,
    ];

    /// The backend with C value `code`; unknown values are [`Error::UnsupportedBackend`].
    #[allow(clippy::indexing_slicing)] // index checked on the line above (a const fn)
    pub const fn from_code(code: i32) -> Result<Backend, Error> {
        if code >= 0 && (code as usize) < Self::ALL.len() {
            Ok(Self::ALL[code as usize])
        } else {
            Err(Error::UnsupportedBackend)
        }
    }

    /// The C value.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// A short lower-case name (`"avx2"`, `"fallback"`, …) for tables and logs.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Fallback => "fallback",
            Backend::X86Avx2 => "avx2",
            Backend::X86Bmi2 => "bmi2",
            Backend::X86Avx512Vbmi => "avx512vbmi",
            Backend::Arm64Neon => "neon",
            Backend::Arm64Sve => "sve2",
            Backend::FallbackStdpar => "stdpar",
            Backend::FallbackSimd => "fallback-simd",
        }
    }
}

impl BitWidth {
    /// Checks `bits` (1..=24); others are [`Error::UnsupportedBitWidth`].
    pub const fn new(bits: u8) -> Result<BitWidth, Error> {
        match BitWidth::checked(bits) {
            Some(b) => Ok(b),
            None => Err(Error::UnsupportedBitWidth),
        }
    }
}

impl BlockSize {
    /// Checks `bytes`; others are [`Error::UnsupportedBlockSize`].
    pub const fn new(bytes: u32) -> Result<BlockSize, Error> {
        match BlockSize::checked(bytes) {
            Some(b) => Ok(b),
            None => Err(Error::UnsupportedBlockSize),
        }
    }
}

impl Run {
    /// The exact slices of this run with the scale `scale`: the first `in_per · blocks` items
    /// of `input` and `out_per · blocks` items of `output` (`per` = `(in_per, out_per)`, the
    /// items per block of each side: values and bytes for compression, bytes and values for
    /// decompression). A zero block count, an overflowing size, a scale that is not finite and
    /// positive or a too-short slice is [`Error::InvalidArgument`].
    pub fn slices<'a, T: PernixFloat, I, O>(
        self,
        scale: T,
        input: &'a [I],
        output: &'a mut [O],
        (in_per, out_per): (usize, usize),
    ) -> Result<(&'a [I], &'a mut [O]), Error> {
        // Both tests evaluated before the branch: the smaller firmware code (thumbv7em).
        let scale_ok = scale.is_positive_finite();
        if self.blocks == 0 || !scale_ok {
            return Err(Error::InvalidArgument);
        }
        let (Some(n_in), Some(n_out)) = (
            in_per.checked_mul(self.blocks),
            out_per.checked_mul(self.blocks),
        ) else {
            return Err(Error::InvalidArgument);
        };
        match (input.get(..n_in), output.get_mut(..n_out)) {
            (Some(i), Some(o)) => Ok((i, o)),
            _ => Err(Error::InvalidArgument),
        }
    }
}

/// `pernix_compressed_block_size`: the interchange block size, 64 bytes.
pub const fn compressed_block_size() -> usize {
    64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::elements_per_block;

    #[test]
    fn c_values() {
        assert_eq!(Error::OutOfMemory.code(), -6);
        assert_eq!(status_string(0), "PERNIX_STATUS_OK");
        assert_eq!(
            status_string(-5),
            "PERNIX_STATUS_UNSUPPORTED_IMPLEMENTATION"
        );
        assert_eq!(status_string(7), "PERNIX_STATUS_UNKNOWN");
        for (i, b) in Backend::ALL.iter().enumerate() {
            assert_eq!(b.code(), i as i32);
            assert_eq!(Backend::from_code(i as i32), Ok(*b));
        }
        assert_eq!(Backend::from_code(99), Err(Error::UnsupportedBackend));
        assert_eq!(Backend::from_code(-1), Err(Error::UnsupportedBackend));
        for code in -6..=0 {
            assert_eq!(Status::from_code(code).map(Status::code), Some(code));
        }
    }

    #[test]
    fn widths_and_sizes() {
        assert_eq!(BitWidth::new(0), Err(Error::UnsupportedBitWidth));
        assert_eq!(BitWidth::new(25), Err(Error::UnsupportedBitWidth));
        assert_eq!(BitWidth::all().count(), 24);
        assert_eq!(BlockSize::new(96), Err(Error::UnsupportedBlockSize));
        assert_eq!(BlockSize::new(32), Err(Error::UnsupportedBlockSize));
        // A few cells of the spec's table (§1).
        let epb =
            |n, bs| elements_per_block(BitWidth::new(n).unwrap(), BlockSize::new(bs).unwrap());
        assert_eq!(epb(3, 64), 170);
        assert_eq!(epb(7, 1024), 1170);
        assert_eq!(epb(19, 128), 53);
        assert_eq!(epb(24, 1024), 341);
        assert_eq!(epb(1, 1024), 8192);
    }
}
