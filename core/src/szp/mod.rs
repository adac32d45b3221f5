//! SZp error-bounded compression (fZ-light, SC'24), as the FZGPUModules SZp stage encodes it.
//!
//! Per block of `block_size` values: `q = round_half_away(x / (2·eb))` in f64, a 1-D delta that
//! restarts at every block (`d₀ = q₀`), zigzag, and LSB-first packing at the block's width
//! `w = bits(max u)` (0..=64); one width byte per block. Decoding is `x' = T((q·2)·eb)`.
//! The byte rules are in the project's `specs/szp.md` §1.
//!
//! # The error-bound promise
//!
//! With the default [`Config`] (`strict`), **every reconstructed element satisfies
//! `|x − x'| ≤ bound`** exactly as computed in f64 from the input and output values, where the
//! bound is `error_bound` (ABS) or `error_bound · (max − min)` (NOA). The f32 rounding of the
//! result and the f64 rounding of the quantizer can each add a fraction of an ulp, so the encoder
//! quantizes with a slightly tighter bound `eb' = bound − (M + bound)·(2⁻²⁴ + 2⁻⁵⁰)` (f32;
//! `2⁻⁵⁰` alone for f64) for a magnitude `M ≥ max|x|` that depends only on what the caller
//! states — the declared `max_abs`, else `2¹⁸·bound` (f32; `2⁴⁰·bound` for f64) when the data
//! fits below it, so archives of different fields with the same bound share one quantizer grid
//! and can be added by [`ops`] ([`blocks::grid_magnitude`] gives the fallbacks for larger data)
//! — records `eb'` in the archive (it is what decoders use), and checks
//! every element before its block is written: the reference and portable kernels check the
//! reconstruction itself; the x86 SIMD kernels check, per element, a sufficient condition the
//! planner's tightening proves (`|x| ≤ M` and the rounding fraction of `x/(2eb')` within a
//! threshold just above ½, `strict_by_fraction` in `arch/x86_64/szp.rs`) and give any block
//! that fails it the exact check. A violation (never observed) would be
//! [`Error::BoundViolated`]. If `eb'` is not positive — the bound is below the data's float
//! precision — compression fails with [`Error::BoundBelowPrecision`]; the tightening also keeps
//! every reconstruction below the point where the element type rounds to infinity (its
//! maximum plus half an ulp), and data too close to that for any bound is
//! [`Error::RangeOverflow`].
//!
//! [`Config::stage_compatible`] turns the tightening off and quantizes with the bound itself,
//! exactly as FZGPUModules does; then the guarantee is FZGPUModules' own: `|x − x'| ≤ bound` in
//! exact arithmetic, plus up to half an ulp of `x'` for f32 (spec §1.8).
//!
//! # Block layouts
//!
//! [`Config::abs`] and [`Config::noa`] write the block-head layout ([`Layout::Heads`]:
//! smaller archives at the same speed), or the stage layout in builds without the feature
//! `layout-heads` ([`Layout::DEFAULT`]). The FZGPUModules stage layout ([`Layout::Fzgm`]) is
//! what FZGPUModules reads and what `.fzm` containers hold ([`fzm::write`] writes it whatever
//! the config says); ask for it in an fzpack archive with `cfg.with_layout(Layout::Fzgm)`, or
//! [`Config::stage_compatible`] (the stage's quantizer and layout). Every decoder, CPU and GPU,
//! reads both (the layout is in the header).
//!
//! # Errors, not panics
//!
//! Non-finite input ([`Error::NonFinite`], first index), a bound that is not finite and
//! positive, a block size outside 1..=4096, quantized levels of 2⁶² or more
//! ([`Error::LevelOverflow`], first index), NOA on a constant field ([`Error::ZeroRange`]: no
//! relative bound exists; use ABS), and an output slice that is too small are errors; nothing is
//! written past the output slice. Decoders treat every archive as untrusted: see
//! [`decompress`].
//!
//! # Example
//!
//! ```
//! use fzpack_core::szp::{self, Config, DType};
//!
//! let data: [f32; 1000] = core::array::from_fn(|i| (i as f32 * 0.01).sin() * 40.0);
//! let cfg = Config::abs(1e-3);
//! let mut archive = [0u8; 9000];
//! assert!(szp::max_compressed_len(data.len(), cfg.block_size, DType::F32).unwrap() <= archive.len());
//! let len = szp::compress(&data, &cfg, &mut archive)?;
//! let mut back = [0f32; 1000];
//! let n = szp::decompress(&archive[..len], &mut back)?;
//! assert_eq!(n, 1000);
//! assert!(data.iter().zip(&back).all(|(a, b)| ((*a as f64) - (*b as f64)).abs() <= 1e-3));
//! # Ok::<(), szp::Error>(())
//! ```

pub mod archive;
pub mod blocks;
pub mod engine;
pub mod entropy;
pub mod fzm;
pub mod interp;
mod kernel;
pub mod missing;
pub mod ops;
mod ranges;
pub mod scalar;
mod stream;
pub mod tiled;

pub use crate::types::{DType, SzpFloat, Verify};
pub use blocks::{ArchiveView, Header, Plan};
pub use kernel::{Kernel, compress_with, decompress_with};
pub use missing::Missing;
pub use stream::StreamEncoder;

use core::fmt;

/// Bytes of the fzpack SZp archive header this crate writes (format version 2: the 48 bytes of
/// version 1 and the header's CRC-32; see `docs/szp-archive.md`).
pub const HEADER_LEN: usize = 52;
/// Bytes of a version 1 header (still read).
pub const HEADER_LEN_V1: usize = 48;
/// Archive magic.
pub const MAGIC: [u8; 4] = *b"FZSZ";
/// Archive format version written by this crate (2: checksummed). Version 1 is still read.
pub const FORMAT_VERSION: u8 = 2;
/// The first archive format version (no checksums), still read.
pub const FORMAT_VERSION_V1: u8 = 1;
/// Archive format version 3: version 2 with an extension section after the chunk CRCs that
/// holds the array's shape and/or the missing (non-finite) values, stored exactly. Written
/// only for archives that carry one of them ([`Config::with_shape`], or input with NaN or
/// ±inf); every other archive stays version 2, byte for byte.
pub const FORMAT_VERSION_V3: u8 = 3;
/// Header flag (byte 5) bit of version 3: the extension holds the missing values.
pub const FLAG_MISSING: u8 = 2;
/// Header flag (byte 5) bit of version 3: the extension holds the array's shape.
pub const FLAG_SHAPE: u8 = 4;
/// Dimensions an archive's shape holds at most (0 in builds without the crate feature
/// `missing-and-shape`).
pub const MAX_RANK: usize = if cfg!(feature = "missing-and-shape") {
    8
} else {
    0
};

/// The dimensions of the array an archive holds (C order: slowest-varying first, as NumPy's
/// `shape`), or none ([`Shape::NONE`]: a flat run of values). Their product is the value count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Shape {
    rank: u8,
    dims: [u64; MAX_RANK],
}

impl Shape {
    /// No shape (a flat run of values).
    pub const NONE: Shape = Shape {
        rank: 0,
        dims: [0; MAX_RANK],
    };

    /// The shape with dimensions `dims` (1 to [`MAX_RANK`] of them; an empty slice is
    /// [`Shape::NONE`]); more is [`Error::InvalidShape`].
    pub fn new(dims: &[u64]) -> Result<Shape, Error> {
        if dims.len() > MAX_RANK {
            return Err(Error::InvalidShape);
        }
        let mut s = Shape::NONE;
        for (d, &v) in s.dims.iter_mut().zip(dims) {
            *d = v;
        }
        s.rank = dims.len() as u8;
        Ok(s)
    }

    /// The dimensions (empty for [`Shape::NONE`]).
    pub fn dims(&self) -> &[u64] {
        self.dims.get(..usize::from(self.rank)).unwrap_or_default()
    }

    /// The number of dimensions (0 for [`Shape::NONE`]).
    pub const fn rank(&self) -> usize {
        self.rank as usize
    }

    /// Whether this is [`Shape::NONE`].
    pub const fn is_none(&self) -> bool {
        self.rank == 0
    }

    /// The product of the dimensions (`None` on overflow; 1 for [`Shape::NONE`]).
    pub fn count(&self) -> Option<u64> {
        self.dims().iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }
}
/// Block layout code of the version 2 header (byte 6) for [`Layout::Fzgm`].
pub const LAYOUT_FZGM: u8 = 0;
/// Block layout code of the version 2 header (byte 6) for [`Layout::Heads`]. Other values are
/// [`Error::UnsupportedLayout`].
pub const LAYOUT_HEADS: u8 = 1;
/// Layout code of the header (byte 6) for [`Layout::Interp`] (format version 3 only).
pub const LAYOUT_INTERP: u8 = 2;

/// How blocks are laid out in an fzpack SZp archive (`docs/szp-archive.md` §3).
///
/// The default is [`Layout::Heads`] (smaller archives at the same speed), in builds without the
/// feature `layout-heads` [`Layout::Fzgm`] (the only layout they write): see
/// [`Layout::DEFAULT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Layout {
    /// The FZGPUModules stage layout: a block's first delta is its absolute first level, so
    /// the block's width covers it (layout code 0; what `.fzm` holds). Ask for it with
    /// [`Config::with_layout`] or [`Config::stage_compatible`].
    #[cfg_attr(not(feature = "layout-heads"), default)]
    Fzgm,
    /// The block-head layout: a block's deltas start from its own first level (the *head*,
    /// `d_0 = 0`), so its width covers only in-block deltas; the heads of every group of
    /// blocks follow the group's payloads, delta-coded at their own width (layout code 1).
    /// Smaller archives on smooth or offset data (a 1201×2401 terrain model: 7.4 vs 4.5 at
    /// 1e-3 of its range). Needs the crate feature `layout-heads` (on by default); without it
    /// a config asking for it, and an archive in it, are [`Error::UnsupportedLayout`].
    #[cfg_attr(feature = "layout-heads", default)]
    Heads,
    /// The interpolation layout, built for ratio: values predicted from the *decoded* values
    /// of their neighbours in SZ3's multilevel interpolation order over the array's shape, in
    /// independent tiles ([`tiled`], [`interp`]); codes entropy-coded, values the prediction
    /// cannot reach stored exactly (layout code 2, always format version 3 with the shape).
    /// On the project's fields 0.97 / 1.05 / 1.07 × SZ3's ratio and 4.8 / 2.3 / 1.7 × that of
    /// [`Layout::Heads`] at rel 1e-2 / 1e-3 / 1e-4, at about a tenth of its speed
    /// (BENCHMARKS.md, "SZp interpolation layout"). Its encoder and decoder need the caller's scratch ([`tiled`]); the
    /// block paths ([`compress`], [`decompress`], the streaming encoder, [`ops`]) refuse it
    /// ([`Error::NeedsScratch`], [`Error::OpsUnsupported`]); the `fzpack` facade, CLI and
    /// Python bindings supply the scratch.
    Interp,
}

impl Layout {
    /// The layout [`Config::abs`] and [`Config::noa`] write: [`Layout::Heads`], or
    /// [`Layout::Fzgm`] in builds without the feature `layout-heads`.
    pub const DEFAULT: Layout = if cfg!(feature = "layout-heads") {
        Layout::Heads
    } else {
        Layout::Fzgm
    };

    /// The header's layout code (byte 6).
    pub const fn code(self) -> u8 {
        match self {
            Layout::Fzgm => LAYOUT_FZGM,
            Layout::Heads => LAYOUT_HEADS,
            Layout::Interp => LAYOUT_INTERP,
        }
    }
    /// The layout of code `code`.
    /// `None` for unknown codes, and for [`Layout::Heads`] in builds without the feature
    /// `layout-heads`.
    pub const fn from_code(code: u8) -> Option<Layout> {
        match code {
            LAYOUT_FZGM => Some(Layout::Fzgm),
            LAYOUT_HEADS if cfg!(feature = "layout-heads") => Some(Layout::Heads),
            LAYOUT_INTERP => Some(Layout::Interp),
            _ => None,
        }
    }
}
/// Values per checksum chunk the writer aims at: a chunk holds `2^s` blocks, `s` the smallest
/// with `2^s · block_size >= 16384` (64 KiB of f32), so a chunk is verified while in cache.
pub const CHUNK_TARGET_VALUES: usize = 16384;

/// Largest accepted block size.
pub const MAX_BLOCK_SIZE: u32 = 4096;

/// Error-bound mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Absolute: `|x − x'| ≤ error_bound` (code 0).
    Abs,
    /// Relative to the value range: `|x − x'| ≤ error_bound · (max − min)` (code 2).
    Noa,
}

impl Mode {
    /// The SZpConfig `eb_mode` code: 0 (ABS) or 2 (NOA).
    pub const fn code(self) -> u8 {
        match self {
            Mode::Abs => 0,
            Mode::Noa => 2,
        }
    }
    /// The mode with code `code`.
    pub const fn from_code(code: u8) -> Option<Mode> {
        match code {
            0 => Some(Mode::Abs),
            2 => Some(Mode::Noa),
            _ => None,
        }
    }
}

/// Compression settings. There is no default: a bound is always given ([`Config::abs`],
/// [`Config::noa`]), as in every fzpack front end (CLI `--abs`/`--rel`, Python `eb`, the C
/// ABI's `error_bound`), and as SZ3 and ZFP require.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// ABS or NOA.
    pub mode: Mode,
    /// The bound: absolute (ABS) or a fraction of the value range (NOA).
    pub error_bound: f64,
    /// Values per block, 1..=4096 (default 128).
    pub block_size: u32,
    /// A known bound on `|x|` (e.g. an ADC's full scale). When set, the tightening of the bound
    /// uses it instead of the data's maximum, values above it are [`Error::ValueOutOfRange`],
    /// and the streaming encoder (which cannot look ahead) requires it.
    pub max_abs: Option<f64>,
    /// Keep the strict promise (default; see the module docs). `false` quantizes exactly as
    /// FZGPUModules does.
    pub strict: bool,
    /// The block layout of the archive (default [`Layout::DEFAULT`]: [`Layout::Heads`]).
    pub layout: Layout,
    /// The array's dimensions, stored in the archive (default [`Shape::NONE`]: none stored).
    /// Their product must be the value count ([`Error::InvalidShape`] otherwise).
    pub shape: Shape,
    /// Quantize f32 data with a step that is itself an f32 (default `false`; see
    /// [`Config::with_f32_step`]).
    pub f32_step: bool,
}

impl Config {
    /// An absolute bound, block size 128, strict, the block-head layout ([`Layout::DEFAULT`]).
    pub const fn abs(error_bound: f64) -> Config {
        Config {
            mode: Mode::Abs,
            error_bound,
            block_size: 128,
            max_abs: None,
            strict: true,
            layout: Layout::DEFAULT,
            shape: Shape::NONE,
            f32_step: false,
        }
    }
    /// A bound relative to the value range (`max − min`), block size 128, strict, the
    /// block-head layout ([`Layout::DEFAULT`]).
    pub const fn noa(error_bound: f64) -> Config {
        Config {
            mode: Mode::Noa,
            error_bound,
            block_size: 128,
            max_abs: None,
            strict: true,
            layout: Layout::DEFAULT,
            shape: Shape::NONE,
            f32_step: false,
        }
    }
    /// This config with another block size.
    pub const fn with_block_size(self, block_size: u32) -> Config {
        Config { block_size, ..self }
    }
    /// This config with another block layout.
    pub const fn with_layout(self, layout: Layout) -> Config {
        Config { layout, ..self }
    }
    /// This config storing the array's shape (C order; the product of the dimensions must be
    /// the value count). The archive is then format version 3.
    pub const fn with_shape(self, shape: Shape) -> Config {
        Config { shape, ..self }
    }
    /// This config with a known bound on `|x|`.
    pub const fn with_max_abs(self, max_abs: f64) -> Config {
        Config {
            max_abs: Some(max_abs),
            ..self
        }
    }
    /// This config quantizing f32 data with a step `2·eb` that is itself an f32: the bound
    /// the quantizer uses (and the archive records) is rounded down to 24 significant bits, a
    /// tightening of less than `2⁻²³` relative, which costs no measurable ratio. The archive
    /// is an ordinary one that every decoder reads; what changes is that a decoder can then
    /// reconstruct each value with one f32 multiply (`q as f32 · step`, equal to the f64 rule
    /// bit for bit), which the decoder for targets without an f64 FPU (Cortex-M4F, RV32 with
    /// F) does: there it decodes in about half the instructions (`docs/firmware.md`). A bound
    /// whose step would be below f32's least normal or above its largest finite value keeps
    /// the general reconstruction. f64 data and the interpolation layout ignore this setting.
    pub const fn with_f32_step(self) -> Config {
        Config {
            f32_step: true,
            ..self
        }
    }
    /// This config writing what the FZGPUModules stage writes: its quantizer (no tightening;
    /// the guarantee is then `bound` plus up to half an ulp of the f32 result) and its block
    /// layout ([`Layout::Fzgm`]). A non-strict block-head archive is
    /// `.stage_compatible().with_layout(Layout::Heads)`.
    pub const fn stage_compatible(self) -> Config {
        Config {
            strict: false,
            layout: Layout::Fzgm,
            ..self
        }
    }
}

/// An SZp error. Variants with an `index` name the first offending element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `block_size` is not in 1..=4096.
    InvalidBlockSize,
    /// The error bound (or `max_abs`) is not finite and positive; for NOA also when
    /// `error_bound · (max − min)` overflows to infinity or underflows to 0.
    InvalidErrorBound,
    /// A NaN or infinite input value where none can be stored: the `.fzm` stage format and a
    /// writer whose value count is not known up front (one-shot compression and the streaming
    /// encoder store them exactly).
    NonFinite {
        /// Element index.
        index: usize,
    },
    /// `|x|` exceeds the configured `max_abs`.
    ValueOutOfRange {
        /// Element index.
        index: usize,
    },
    /// `|x / (2·eb)|` reaches 2⁶²: the quantized level would not fit.
    LevelOverflow {
        /// Element index.
        index: usize,
    },
    /// NOA bound on a field whose values are all equal: the range is 0.
    ZeroRange,
    /// The bound is below what the float precision of the data can deliver.
    BoundBelowPrecision,
    /// A reconstructed value would miss the bound (a safety net; not expected to occur).
    BoundViolated {
        /// Element index.
        index: usize,
    },
    /// The output slice is too small; `needed` bytes or elements would do.
    OutputTooSmall {
        /// Required length.
        needed: usize,
    },
    /// The archive ends before its header, widths or payload do.
    Truncated,
    /// Not an fzpack SZp archive.
    BadMagic,
    /// An archive format version this build does not read.
    UnsupportedVersion {
        /// The version found.
        version: u8,
    },
    /// The archive holds the other element type.
    DTypeMismatch,
    /// The archive is inconsistent.
    Corrupt(&'static str),
    /// The streaming encoder needs an ABS bound and `max_abs`.
    StreamingNeedsAbsAndMaxAbs,
    /// A streamed block has the wrong length.
    BlockLength {
        /// The length expected for this block.
        expected: usize,
    },
    /// `finish` was called before all blocks were pushed, or a block came after the last.
    StreamState,
    /// The requested [`Kernel`] does not run on this CPU (or target).
    UnsupportedPath,
    /// Archives given to one [`ops`] operation differ in `what` (e.g. `"quantizer bound"`).
    OpsMismatch {
        /// The differing field.
        what: &'static str,
    },
    /// A CRC-32 of a version 2 archive does not match its bytes: `what` is `"header"` or
    /// `"blocks"` (then `chunk` is the index of the checksum chunk, blocks
    /// `[chunk·C, chunk·C + C)`).
    ChecksumMismatch {
        /// `"header"` or `"blocks"`.
        what: &'static str,
        /// The chunk index (0 for the header).
        chunk: u32,
    },
    /// An input that [`ops`] does not take: `what` names it (e.g. `.fzm` archives).
    OpsUnsupported {
        /// What is not supported.
        what: &'static str,
    },
    /// A version 2 archive whose block layout (header byte 6) this build does not read.
    UnsupportedLayout {
        /// The layout code found.
        layout: u8,
    },
    /// A well-formed archive (its checksums match) whose numbers no encoder writes: `what`
    /// names them (a bound that is not finite, negative, or below the quantizer bound; a level
    /// whose value is not finite in the element type). Decoders reject it rather than emit
    /// values the format cannot hold.
    Implausible {
        /// What is impossible.
        what: &'static str,
    },
    /// The data's magnitude (or the declared `max_abs`) is so close to the element type's
    /// largest finite value that a reconstruction within the bound could round to infinity:
    /// the value range overflows the quantizer.
    RangeOverflow,
    /// A shape of more than [`MAX_RANK`] dimensions, or whose product is not the value count.
    InvalidShape,
    /// The archive needs a crate feature this build leaves out (`"missing-and-shape"`: a format
    /// 3 archive, holding missing values or a shape).
    FeatureOff {
        /// The feature's name.
        feature: &'static str,
    },
    /// A compressed-domain operation's result at `index` is not finite in the element type
    /// (e.g. doubling values near `f32::MAX`).
    ResultOverflow {
        /// Element index.
        index: usize,
    },
    /// The interpolation layout ([`Layout::Interp`]) asked of a path that has no scratch for
    /// it: the block compressors, decoders and streaming encoder. [`tiled`] takes the
    /// caller's scratch; the `fzpack` facade, CLI and Python bindings supply it.
    NeedsScratch,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::InvalidBlockSize => write!(f, "block size must be 1..=4096"),
            Error::InvalidErrorBound => {
                write!(
                    f,
                    "the error bound (for NOA: bound x value range) must be finite and > 0"
                )
            }
            Error::NonFinite { index } => write!(
                f,
                "non-finite value (NaN or infinity) at index {index}: missing values are \
                 stored by .szp archives of a known length, not by .fzm or an open-ended stream"
            ),
            Error::ValueOutOfRange { index } => {
                write!(f, "value at index {index} exceeds the configured max_abs")
            }
            Error::LevelOverflow { index } => {
                write!(
                    f,
                    "value at index {index} is too large for the bound (quantized level >= 2^62)"
                )
            }
            Error::ZeroRange => write!(
                f,
                "NOA bound on a constant field (value range 0): use an ABS bound"
            ),
            Error::BoundBelowPrecision => write!(
                f,
                "the error bound is below the float precision of the data"
            ),
            Error::BoundViolated { index } => {
                write!(f, "reconstruction would miss the bound at index {index}")
            }
            Error::OutputTooSmall { needed } => write!(f, "output too small: {needed} needed"),
            Error::Truncated => write!(f, "archive is truncated"),
            Error::BadMagic => write!(f, "not an fzpack SZp archive (bad magic)"),
            Error::UnsupportedVersion { version } => {
                write!(f, "unsupported SZp archive version {version}")
            }
            Error::DTypeMismatch => {
                write!(f, "archive element type differs from the requested one")
            }
            Error::Corrupt(what) => write!(f, "corrupt SZp archive: {what}"),
            Error::StreamingNeedsAbsAndMaxAbs => {
                write!(f, "streaming needs an ABS bound and max_abs")
            }
            Error::BlockLength { expected } => {
                write!(f, "block of wrong length ({expected} expected)")
            }
            Error::StreamState => write!(f, "stream finished early or fed past its last block"),
            Error::UnsupportedPath => write!(f, "the requested SZp path does not run on this CPU"),
            Error::OpsMismatch { what } => write!(f, "archives differ in {what}"),
            Error::ChecksumMismatch { what: "header", .. } => {
                write!(f, "corrupt SZp archive: header checksum mismatch")
            }
            Error::ChecksumMismatch { what, chunk } => {
                write!(
                    f,
                    "corrupt SZp archive: checksum mismatch in the {what} of chunk {chunk}"
                )
            }
            Error::OpsUnsupported { what } => {
                write!(f, "compressed-domain operations do not support {what}")
            }
            Error::NeedsScratch => write!(
                f,
                "the interpolation layout needs scratch memory: use szp::tiled with a Scratch \
                 (the fzpack facade, CLI and Python bindings supply it)"
            ),
            Error::UnsupportedLayout { layout } => {
                write!(f, "unsupported SZp block layout {layout}")
            }
            Error::Implausible { what } => write!(
                f,
                "corrupt SZp archive: {what} (its checksums match: it was written wrong or altered)"
            ),
            Error::RangeOverflow => write!(
                f,
                "the data's magnitude is too close to the element type's largest finite value: \
                 a reconstruction within the bound could overflow to infinity"
            ),
            Error::FeatureOff { feature } => write!(
                f,
                "the archive needs fzpack-core's feature `{feature}`, which this build leaves out"
            ),
            Error::InvalidShape => write!(
                f,
                "the shape's dimensions (at most {MAX_RANK}) must multiply to the number of values"
            ),
            Error::ResultOverflow { index } => write!(
                f,
                "the result at index {index} overflows the element type (it would be infinite)"
            ),
        }
    }
}

/// Upper bound on the archive size for `n` values in either [`Layout`]: header, one width
/// byte per block, 8 bytes per value (width 64), at most 9 bytes per block of head trailers
/// ([`Layout::Heads`]: one width byte per group and 8 bytes per head) and the chunk CRCs.
/// `None` if it overflows `usize` or `block_size` is invalid.
pub fn max_compressed_len(n: usize, block_size: u32, dtype: DType) -> Option<usize> {
    let _ = dtype; // widths reach 64 for both types
    if block_size == 0 || block_size > MAX_BLOCK_SIZE {
        return None;
    }
    let nb = n.div_ceil(block_size as usize);
    HEADER_LEN
        .checked_add(nb.checked_mul(10)?)?
        .checked_add(n.checked_mul(8)?)?
        .checked_add(blocks::sums_len(nb, blocks::chunk_shift(block_size)))
}

/// Compresses `input` into `out` (the fzpack archive) and returns the archive length, on the
/// fastest path this CPU runs ([`Kernel::best`]); the bytes equal those of
/// [`compress_with`]`(Kernel::Scalar, ..)`, the scalar reference.
///
/// On targets without SIMD kernels (everything but x86_64 and aarch64: microcontrollers) this
/// is the scalar path, chosen at compile time: no other kernel, and none of their block buffers
/// on the stack, is linked.
pub fn compress<T: SzpFloat>(input: &[T], cfg: &Config, out: &mut [u8]) -> Result<usize, Error> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    return compress_with(Kernel::best(), input, cfg, out);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return scalar::compress(input, cfg, out);
}

/// Decompresses an fzpack archive into `out` and returns the number of values written.
///
/// Every archive is treated as untrusted: wrong magic, version, layout or type, widths above
/// 64, a header that claims more blocks than the archive has width bytes, a payload shorter or
/// longer than the widths imply, and an output slice shorter than `n` are errors; for version 2
/// the header CRC and every chunk CRC are checked ([`Error::ChecksumMismatch`]; each chunk before
/// it is decoded, so on that error `out` may hold the values of the chunks before it). Work is
/// proportional to the archive and output sizes.
/// Runs on [`Kernel::best`] (the scalar path, at compile time, on targets without SIMD
/// kernels); the decoded bits equal the scalar reference's. To skip the CRCs (for callers
/// that checksum the archive elsewhere) or pick a kernel: [`decompress_with`].
pub fn decompress<T: SzpFloat>(archive: &[u8], out: &mut [T]) -> Result<usize, Error> {
    // As in `compress`: the scalar path at compile time where no SIMD kernel exists.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    return decompress_with(Kernel::best(), archive, out, Verify::Checksums);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return scalar::decompress(archive, out);
}

/// Reads and validates an archive's header.
pub fn header(archive: &[u8]) -> Result<Header, Error> {
    Header::read(archive)
}

/// The array's shape an archive stores ([`Shape::NONE`] when it stores none: a flat run of
/// values); the header and extension are validated, checksums included.
pub fn shape(archive: &[u8]) -> Result<Shape, Error> {
    blocks::read_shape(archive, Verify::Checksums)
}

#[cfg(test)]
mod tests {
    use super::{Config, Error, LAYOUT_FZGM, LAYOUT_HEADS, Layout, compress};

    /// The default layout is the block-head layout where the build writes it, else the stage
    /// layout: a default config always compresses.
    #[test]
    fn the_default_layout_is_one_this_build_writes() -> Result<(), Error> {
        let want = if cfg!(feature = "layout-heads") {
            (Layout::Heads, LAYOUT_HEADS)
        } else {
            (Layout::Fzgm, LAYOUT_FZGM)
        };
        for cfg in [Config::abs(1e-3), Config::noa(1e-3)] {
            assert_eq!(cfg.layout, want.0);
            let mut out = [0u8; 4096];
            let x: [f32; 300] = core::array::from_fn(|i| i as f32 * 0.01);
            let len = compress(&x, &cfg, &mut out)?;
            assert!(len > 6);
            assert_eq!(out[6], want.1, "header byte 6");
        }
        assert_eq!(Layout::default(), want.0);
        assert_eq!(Config::abs(1.0).stage_compatible().layout, Layout::Fzgm);
        Ok(())
    }
}
