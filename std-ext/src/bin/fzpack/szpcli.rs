//! SZp in the CLI (placeholder until the core's SZp API lands).

use fzpack::Element;

use crate::codec::{ArchiveKind, Decoded, Engines, ModeArg, PathKind};
use crate::fail::{Fail, Kind};

fn missing() -> Fail {
    Fail::new(Kind::Usage, "SZp is not available in this build yet")
}

pub fn available() -> bool {
    false
}

pub fn detect(_bytes: &[u8]) -> Option<ArchiveKind> {
    None
}

#[allow(clippy::too_many_arguments)]
pub fn compress<T: Element>(
    _name: &str,
    _values: &[T],
    _mode: ModeArg,
    _eb: f64,
    _block: u32,
    _path: PathKind,
    _eng: &Engines,
    _fzm: bool,
) -> Result<Vec<u8>, Fail> {
    Err(missing())
}

pub fn decompress(
    _name: &str,
    _bytes: &[u8],
    _k: ArchiveKind,
    _path: PathKind,
    _eng: &Engines,
) -> Result<Decoded, Fail> {
    Err(missing())
}

pub fn bound(_name: &str, _bytes: &[u8], _k: ArchiveKind) -> Result<f64, Fail> {
    Err(missing())
}

pub fn describe(
    _name: &str,
    _bytes: &[u8],
    _k: ArchiveKind,
) -> Result<Vec<(String, String)>, Fail> {
    Err(missing())
}
