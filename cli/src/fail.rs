//! CLI errors: a message and an exit code by kind.

use std::fmt;

/// What went wrong, which decides the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A file could not be read or written (exit 3).
    Io,
    /// The input data is unusable: wrong size, NaN/inf, bad dims, unknown dtype (exit 4).
    Input,
    /// An archive is corrupt or not an fzpack archive (exit 5).
    Corrupt,
    /// `verify` found an element outside the error bound (exit 6).
    Bound,
    /// The output exists and `--force` was not given (exit 7).
    Exists,
    /// A bad option value (exit 2, like clap's usage errors).
    Usage,
}

/// A CLI failure.
#[derive(Debug)]
pub struct Fail {
    pub kind: Kind,
    pub msg: String,
}

impl Fail {
    pub fn new(kind: Kind, msg: impl Into<String>) -> Self {
        Fail {
            kind,
            msg: msg.into(),
        }
    }

    pub fn exit_code(&self) -> u8 {
        match self.kind {
            Kind::Usage => 2,
            Kind::Io => 3,
            Kind::Input => 4,
            Kind::Corrupt => 5,
            Kind::Bound => 6,
            Kind::Exists => 7,
        }
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

/// A library error in the context of `what` (a file name).
pub fn lib(what: &str, e: fzpack::Error) -> Fail {
    let kind = match &e {
        fzpack::Error::Corrupt(_) | fzpack::Error::DTypeMismatch { .. } => Kind::Corrupt,
        fzpack::Error::Io(_) => Kind::Io,
        fzpack::Error::NonFinite { .. } => Kind::Input,
        fzpack::Error::Szp(s) => {
            use fzpack::szp::Error as E;
            match s {
                E::Truncated
                | E::BadMagic
                | E::UnsupportedVersion { .. }
                | E::DTypeMismatch
                | E::Corrupt(_)
                | E::ChecksumMismatch { .. }
                | E::UnsupportedLayout { .. }
                | E::Implausible { .. } => Kind::Corrupt,
                E::NonFinite { .. }
                | E::ValueOutOfRange { .. }
                | E::LevelOverflow { .. }
                | E::ResultOverflow { .. }
                | E::RangeOverflow
                | E::ZeroRange
                | E::BoundBelowPrecision => Kind::Input,
                _ => Kind::Usage,
            }
        }
        _ => Kind::Usage,
    };
    Fail::new(kind, format!("{what}: {e}"))
}
