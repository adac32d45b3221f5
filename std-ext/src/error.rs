//! The fzpack error type: core's small `Copy` error enums wrapped with `std` context.

use std::fmt;
use std::io;

use crate::DType;

/// Any error of the fzpack std facade.
///
/// It wraps the core errors ([`fzpack_core::pernix::Error`], [`fzpack_core::szp::Error`];
/// the core's `.pnx` stream errors become the matching variant here: a kernel error,
/// `NonFinite`, `DTypeMismatch`, or [`Error::Corrupt`] / [`Error::InvalidArgument`] with their
/// message), I/O errors, and the checks this crate adds (non-finite input,
/// malformed containers). It implements [`std::error::Error`], so `?` into `Box<dyn Error>` or
/// `anyhow`-style types works.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A PERNIX core error (bad bit width, block size, backend, buffer or scale).
    Pernix(fzpack_core::pernix::Error),
    /// An SZp core error (bad bound or block size, non-finite input, corrupt archive, ...).
    Szp(fzpack_core::szp::Error),
    /// An I/O error of a reader or writer adaptor.
    Io(io::Error),
    /// A NaN or infinity where the codec needs finite values; `index` is the first one.
    NonFinite {
        /// Index of the first non-finite element.
        index: usize,
    },
    /// A container that is truncated, has a bad magic/version, or inconsistent fields.
    Corrupt(String),
    /// The data holds one element type, the caller asked for another.
    DTypeMismatch {
        /// The element type stored in the container.
        stored: DType,
        /// The element type requested.
        requested: DType,
    },
    /// A caller argument outside what this crate accepts (e.g. zero threads).
    InvalidArgument(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Pernix(e) => write!(f, "PERNIX: {e}"),
            Error::Szp(e) => write!(f, "SZp: {e}"),
            Error::Io(e) => write!(f, "I/O: {e}"),
            Error::NonFinite { index } => {
                write!(f, "non-finite value (NaN or infinity) at index {index}")
            }
            Error::Corrupt(what) => write!(f, "corrupt archive: {what}"),
            Error::DTypeMismatch { stored, requested } => write!(
                f,
                "element type mismatch: the archive holds {stored}, {requested} was requested"
            ),
            Error::InvalidArgument(what) => write!(f, "invalid argument: {what}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<fzpack_core::pernix::Error> for Error {
    fn from(e: fzpack_core::pernix::Error) -> Self {
        Error::Pernix(e)
    }
}

impl From<fzpack_core::szp::Error> for Error {
    fn from(e: fzpack_core::szp::Error) -> Self {
        Error::Szp(e)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Io(e) => e,
            Error::Corrupt(_) | Error::DTypeMismatch { .. } => {
                io::Error::new(io::ErrorKind::InvalidData, e)
            }
            Error::Szp(
                fzpack_core::szp::Error::Truncated
                | fzpack_core::szp::Error::BadMagic
                | fzpack_core::szp::Error::UnsupportedVersion { .. }
                | fzpack_core::szp::Error::DTypeMismatch
                | fzpack_core::szp::Error::Corrupt(_)
                | fzpack_core::szp::Error::ChecksumMismatch { .. }
                | fzpack_core::szp::Error::UnsupportedLayout { .. }
                | fzpack_core::szp::Error::Implausible { .. },
            ) => io::Error::new(io::ErrorKind::InvalidData, e),
            other => io::Error::new(io::ErrorKind::InvalidInput, other),
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
