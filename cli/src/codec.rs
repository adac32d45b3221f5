//! The codecs as the CLI names them: the codec, path, mode and layout arguments, one setting
//! type, the engines of each path, decoded values of either type and an archive's bound. No
//! codec is run here (`dispatch.rs` does that).

use fzpack::par::Parallel;
use fzpack::pernix::{Backend, BitWidth, BlockSize, Dispatcher, Verify};
use fzpack::{DType, Element};

use crate::fail::{Fail, Kind};

/// The largest `--threads`: 4 per core, and never above 1024 (a pool that size is pure
/// overhead; a typo like 100000 fails at once instead of spawning threads).
pub fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (4 * cores).min(1024)
}

/// The codec of `--codec`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CodecArg {
    /// SZp: every value within an error bound (--abs E or --rel R).
    Szp,
    /// PERNIX: fixed-rate blocks of --bits bits per value.
    Pernix,
}

/// The checksum policy of `--no-verify`.
pub fn verify_of(no_verify: bool) -> Verify {
    if no_verify {
        Verify::Skip
    } else {
        Verify::Checksums
    }
}

/// Which implementation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    /// The portable scalar reference, one thread.
    Scalar,
    /// The fastest SIMD kernel of this CPU, one thread.
    Simd,
    /// The rayon driver over the fastest kernel.
    Parallel,
}

impl PathKind {
    pub const ALL: [PathKind; 3] = [PathKind::Scalar, PathKind::Simd, PathKind::Parallel];
    pub fn name(self) -> &'static str {
        match self {
            PathKind::Scalar => "scalar",
            PathKind::Simd => "simd",
            PathKind::Parallel => "parallel",
        }
    }
}

/// SZp error-bound mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// Absolute bound.
    Abs,
    /// Bound relative to the value range (max - min).
    Noa,
}

/// SZp block layout of the native archive (`docs/szp-archive.md` §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LayoutArg {
    /// Block heads stored apart (layout 1): smaller archives on smooth or offset data.
    Heads,
    /// The FZGPUModules stage layout (layout 0; what `.fzm` holds).
    Fzgm,
    /// The interpolation layout (layout 2): values predicted from decoded neighbours over the
    /// array's shape, in tiles, codes entropy-coded. Several times smaller on smooth fields,
    /// slower than the block layouts; the compressed-domain operations, `.fzm`, the GPU and
    /// the bounded-memory stream of a pipe do not take it.
    Interp,
}

impl LayoutArg {
    /// The layout native SZp archives get when `--layout` is not given.
    pub const DEFAULT: LayoutArg = LayoutArg::Heads;

    /// The core's layout.
    pub fn layout(self) -> fzpack::szp::Layout {
        match self {
            LayoutArg::Heads => fzpack::szp::Layout::Heads,
            LayoutArg::Fzgm => fzpack::szp::Layout::Fzgm,
            LayoutArg::Interp => fzpack::szp::Layout::Interp,
        }
    }

    /// The name `--layout` takes.
    pub fn name(self) -> &'static str {
        match self {
            LayoutArg::Heads => "heads",
            LayoutArg::Fzgm => "fzgm",
            LayoutArg::Interp => "interp",
        }
    }
}

/// A codec and its parameters.
#[derive(Clone, Copy, Debug)]
pub enum Setting {
    Szp {
        mode: ModeArg,
        eb: f64,
        block: u32,
        layout: LayoutArg,
    },
    Pernix {
        bits: BitWidth,
        block: BlockSize,
    },
}

impl Setting {
    /// The codec's name in tables, JSON rows and plots: `szp` (the block-head layout, the
    /// default), `szp-fzgm` (the stage layout), `szp-interp` (the interpolation layout) or
    /// `pernix`.
    pub fn codec(&self) -> &'static str {
        match self {
            Setting::Szp {
                layout: LayoutArg::Fzgm,
                ..
            } => "szp-fzgm",
            Setting::Szp {
                layout: LayoutArg::Interp,
                ..
            } => "szp-interp",
            Setting::Szp { .. } => "szp",
            Setting::Pernix { .. } => "pernix",
        }
    }
    pub fn label(&self) -> String {
        match self {
            Setting::Szp { mode, eb, .. } => match mode {
                ModeArg::Abs => format!("abs={eb:e}"),
                ModeArg::Noa => format!("noa={eb:e}"),
            },
            Setting::Pernix { bits, .. } => format!("bits={}", bits.get()),
        }
    }
}

/// The engines of each path.
pub struct Engines {
    pub par: Parallel,
    scalar: Dispatcher,
    simd: Dispatcher,
    parallel: Dispatcher,
}

impl Engines {
    pub fn new(threads: Option<usize>) -> Result<Self, Fail> {
        let par = match threads {
            Some(t) if t == 0 || t > max_threads() => {
                return Err(Fail::new(
                    Kind::Usage,
                    format!(
                        "--threads {t} is outside 1..={} (4 per core, at most 1024)",
                        max_threads()
                    ),
                ));
            }
            Some(t) => {
                Parallel::with_threads(t).map_err(|e| Fail::new(Kind::Usage, e.to_string()))?
            }
            None => Parallel::new(),
        };
        let mk = |b| Dispatcher::new(b).map_err(|e| Fail::new(Kind::Usage, e.to_string()));
        Ok(Engines {
            scalar: mk(Backend::Fallback)?,
            simd: mk(Backend::Auto)?,
            parallel: Dispatcher::with_parallel(Backend::Auto, par.clone())
                .map_err(|e| Fail::new(Kind::Usage, e.to_string()))?,
            par,
        })
    }

    pub fn pernix(&self, path: PathKind) -> &Dispatcher {
        match path {
            PathKind::Scalar => &self.scalar,
            PathKind::Simd => &self.simd,
            PathKind::Parallel => &self.parallel,
        }
    }
}

/// Values of either type: decoded from an archive, or loaded to be measured.
pub enum Values {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Values {
    pub fn dtype(&self) -> DType {
        match self {
            Values::F32(_) => DType::F32,
            Values::F64(_) => DType::F64,
        }
    }
    pub fn len(&self) -> usize {
        match self {
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
        }
    }
    /// The values' bytes in place (native byte order).
    pub fn bytes(&self) -> &[u8] {
        match self {
            Values::F32(v) => bytemuck::cast_slice(v),
            Values::F64(v) => bytemuck::cast_slice(v),
        }
    }
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            Values::F32(v) => fzpack::values_to_le_bytes(v),
            Values::F64(v) => fzpack::values_to_le_bytes(v),
        }
    }
}

/// Trait to move a `Vec<T>` in and out of [`Values`], and to view raw bytes as values.
pub trait Wrap: Element + bytemuck::Pod {
    fn unwrap(d: Values) -> Option<Vec<Self>>;
    /// `bytes` as values in place: little-endian machines, aligned, whole elements.
    fn view(bytes: &[u8]) -> Option<&[Self]> {
        if cfg!(target_endian = "little") {
            bytemuck::try_cast_slice(bytes).ok()
        } else {
            None
        }
    }
    /// The values as their little-endian bytes in place (little-endian machines).
    fn as_le_bytes(v: &[Self]) -> Option<&[u8]> {
        cfg!(target_endian = "little").then(|| bytemuck::cast_slice(v))
    }
}
impl Wrap for f32 {
    fn unwrap(d: Values) -> Option<Vec<Self>> {
        match d {
            Values::F32(v) => Some(v),
            _ => None,
        }
    }
}
impl Wrap for f64 {
    fn unwrap(d: Values) -> Option<Vec<Self>> {
        match d {
            Values::F64(v) => Some(v),
            _ => None,
        }
    }
}

/// Per-element error bounds of an archive: either one bound for all, or per PERNIX block.
pub enum Bound {
    Uniform(f64),
    PerBlock { per: usize, bounds: Vec<f64> },
}

impl Bound {
    pub fn max(&self) -> f64 {
        match self {
            Bound::Uniform(b) => *b,
            Bound::PerBlock { bounds, .. } => bounds.iter().copied().fold(0.0, f64::max),
        }
    }
    pub fn at(&self, i: usize) -> f64 {
        match self {
            Bound::Uniform(b) => *b,
            Bound::PerBlock { per, bounds } => bounds[i / per],
        }
    }
}

/// The largest `|a_i - b_i| / bound_i` (≤ 1 when the bound holds) and its index, over the
/// finite values of `a` (missing values are checked apart: `data::missing_mismatch`).
pub fn worst_ratio<T: Element>(a: &[T], b: &[T], bound: &Bound) -> (f64, usize) {
    let mut worst = (0.0f64, 0usize);
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if !x.is_finite() {
            continue;
        }
        let e = (x.to_f64() - y.to_f64()).abs();
        let bi = bound.at(i);
        let r = if bi > 0.0 {
            e / bi
        } else if e == 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
        if r > worst.0 {
            worst = (r, i);
        }
    }
    worst
}
