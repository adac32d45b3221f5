//! fzpack-gpu: SZp compression and decompression on an NVIDIA GPU, writing exactly the archive
//! bytes of [`fzpack_core::szp`] (the fzpack archive, either block layout: the stage layout
//! `Layout::Fzgm`, whose bytes 52.. are the FZGPUModules stage output, and the block-head layout
//! `Layout::Heads`).
//!
//! # Selecting it
//!
//! Through the `fzpack` facade with its `cuda` feature (`fzpack::gpu`, this crate), explicitly:
//! `fzpack::gpu::Gpu::new(0)?` then [`Gpu::compress`] / [`Gpu::decompress`] (host slices) or
//! [`Gpu::compress_device`] / [`Gpu::decompress_device`] (device buffers). Nothing falls back to
//! the CPU: without a driver, NVRTC or device, [`Gpu::new`] returns [`Error::NoDriver`],
//! [`Error::NoNvrtc`] or [`Error::NoDevice`], and a caller that wants the CPU calls
//! `fzpack::szp` itself.
//!
//! # How it runs
//!
//! The CUDA C sources in `kernels/` (inside this package) are embedded ([`KERNEL_SOURCE`]) and
//! compiled with NVRTC at run time, once per CUDA context ([`Gpu::new`]). The driver (`libcuda`)
//! and NVRTC (`libnvrtc`) are loaded dynamically by cudarc, so this crate builds and its tests
//! run on machines without CUDA: every entry point checks for the libraries first and returns
//! [`Error::NoDriver`], [`Error::NoNvrtc`] or [`Error::NoDevice`] instead of panicking. Where
//! NVRTC is absent but the driver is present, `FZPACK_GPU_PTX=<file>` loads PTX compiled
//! elsewhere ([`compile_ptx`] writes it).
//!
//! Compression: a statistics pass (min, max, max|x|, first non-finite or out-of-range index)
//! feeds the same plan resolution as the CPU (bound tightening of strict configs, NOA range), so
//! the quantizer bound and the header are byte-identical to core's; then one encode kernel does
//! widths, the block-offset scan (decoupled look-back, whose costs include the head trailers of
//! the block-head layout) and word-level packing in a single pass, and a CRC kernel seals the
//! chunks on the device. Only 40 bytes of statistics and 16 bytes of result (payload size, first
//! strict violation) travel to the host.
//!
//! Decompression never copies the archive to the host: the header (52 bytes) is read back and
//! checked there; the width bytes (stage layout) or the head-group walk (block-head layout: a
//! trailer's position depends on every earlier trailer, so one warp walks the groups, reading
//! one byte per group in sequence) are checked on the device (16 bytes back), the error chosen
//! as core's parse does; then the decode, then every chunk CRC on the device. See
//! `kernels/szp.cu` for the kernel design.
//!
//! # Errors
//!
//! The same [`fzpack_core::szp::Error`] values as core, with the same first indices, wrapped in
//! [`Error::Szp`]; device-side output must have room for
//! [`max_compressed_len`](fzpack_core::szp::max_compressed_len) bytes (the size is known only
//! after the kernel ran).

use core::fmt;

use fzpack_core::szp::{self, Config, DType, Plan};

mod device;
#[cfg(feature = "host-kernels")]
pub mod emu;
mod frame;

pub use device::{Gpu, GpuFloat};

/// The shared warp/tile logic (`kernels/szp_warp.cuh`).
pub const KERNEL_HEADER: &str = include_str!("../kernels/szp_warp.cuh");
/// The kernels (`kernels/szp.cu`).
pub const KERNEL_BODY: &str = include_str!("../kernels/szp.cu");
/// The complete NVRTC translation unit: `FZPACK_JIT` defined, the header, then the kernels.
pub const KERNEL_SOURCE: &str = concat!(
    "#define FZPACK_JIT 1\n",
    include_str!("../kernels/szp_warp.cuh"),
    "\n",
    include_str!("../kernels/szp.cu")
);

/// Every kernel entry point in [`KERNEL_SOURCE`].
pub const KERNEL_NAMES: &[&str] = &[
    "szp_stats_f32",
    "szp_stats_f64",
    "szp_stats_final",
    "szp_level_f32",
    "szp_level_f64",
    "szp_encode_f32_v1",
    "szp_encode_f32_v2",
    "szp_encode_f32_v4",
    "szp_encode_f32_v8",
    "szp_encode_f32_g",
    "szp_encode_f64_v1",
    "szp_encode_f64_v2",
    "szp_encode_f64_v4",
    "szp_encode_f64_v8",
    "szp_encode_f64_g",
    "szp_dec_check",
    "szp_decode_f32_k16",
    "szp_decode_f32_k4",
    "szp_decode_f32_k1",
    "szp_decode_f64_k16",
    "szp_decode_f64_k4",
    "szp_decode_f64_k1",
    "szp_dec_walk",
    "szp_decode_heads_f32",
    "szp_decode_heads_f64",
    "szp_crc_chunks",
];

/// NVRTC options every compilation uses: no FMA contraction (the quantizer and reconstruction
/// must round exactly as the CPU reference), IEEE division, C++17.
pub const NVRTC_OPTIONS: &[&str] = &["--fmad=false", "--prec-div=true", "-std=c++17"];

/// An fzpack-gpu error.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// An SZp error, exactly as fzpack-core reports it for the same input.
    Szp(szp::Error),
    /// The CUDA driver library (`libcuda.so`) could not be loaded.
    NoDriver,
    /// NVRTC (`libnvrtc.so`) could not be loaded and no `FZPACK_GPU_PTX` file was given.
    NoNvrtc,
    /// The driver loaded but reports no usable device (or the ordinal is out of range).
    NoDevice,
    /// A CUDA driver call failed.
    Driver(String),
    /// NVRTC rejected the kernels (the log), or a PTX file could not be read.
    Compile(String),
    /// The input is too large for one launch (more than 2³¹ − 1 tiles).
    TooLarge,
    /// The interpolation layout ([`szp::Layout::Interp`], layout code 2): asked of the
    /// encoder, or found in an archive given to the decoder. The kernels run the block
    /// layouts only; the CPU (the `fzpack` facade) encodes and decodes this one.
    InterpLayout,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Szp(e) => write!(f, "{e}"),
            Error::NoDriver => write!(f, "no CUDA driver (libcuda.so could not be loaded)"),
            Error::NoNvrtc => write!(
                f,
                "no NVRTC (libnvrtc.so could not be loaded; set FZPACK_GPU_PTX to a PTX file)"
            ),
            Error::NoDevice => write!(f, "no CUDA device"),
            Error::Driver(e) => write!(f, "CUDA driver error: {e}"),
            Error::Compile(e) => write!(f, "kernel compilation failed: {e}"),
            Error::TooLarge => write!(f, "input too large for one kernel launch"),
            Error::InterpLayout => write!(
                f,
                "the GPU does not run the interpolation layout (interp, layout 2): compress \
                 and decompress it on the CPU (the fzpack facade), or use a block layout \
                 (heads, fzgm) on the GPU"
            ),
        }
    }
}

impl std::error::Error for Error {}

impl From<szp::Error> for Error {
    fn from(e: szp::Error) -> Self {
        Error::Szp(e)
    }
}

/// Result alias.
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// Whether the NVRTC library can be loaded on this machine.
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to dlopen the library names cudarc knows; no symbol is called.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Whether the CUDA driver library can be loaded on this machine.
pub fn driver_available() -> bool {
    // SAFETY: only tries to dlopen the library names cudarc knows; no symbol is called.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// The installed NVRTC's version `(major, minor)`.
pub fn nvrtc_version() -> Result<(i32, i32)> {
    if !nvrtc_available() {
        return Err(Error::NoNvrtc);
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present (checked above); both out-pointers are valid locals.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if r != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(Error::Compile(format!("nvrtcVersion: {r:?}")));
    }
    Ok((major, minor))
}

/// The virtual architectures the installed NVRTC compiles for (e.g. `[35, …, 80, 86, 89, 90]`).
pub fn nvrtc_supported_archs() -> Result<Vec<i32>> {
    use cudarc::nvrtc::sys;
    if !nvrtc_available() {
        return Err(Error::NoNvrtc);
    }
    let mut count = 0;
    // SAFETY: the library is present (checked above); `count` is a valid out-pointer.
    let r = unsafe { sys::nvrtcGetNumSupportedArchs(&mut count) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS || count < 0 {
        return Err(Error::Compile(format!("nvrtcGetNumSupportedArchs: {r:?}")));
    }
    let mut archs = vec![0i32; count as usize];
    // SAFETY: `archs` has the `count` slots NVRTC said it writes.
    let r = unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(Error::Compile(format!("nvrtcGetSupportedArchs: {r:?}")));
    }
    Ok(archs)
}

/// Compiles [`KERNEL_SOURCE`] to PTX for `arch` (e.g. `"compute_80"`, `"compute_90"`) with
/// NVRTC; returns the PTX text. Needs no GPU.
pub fn compile_ptx(arch: &str) -> Result<String> {
    if !nvrtc_available() {
        return Err(Error::NoNvrtc);
    }
    let mut options: Vec<String> = NVRTC_OPTIONS.iter().map(|s| s.to_string()).collect();
    options.push(format!("--gpu-architecture={arch}"));
    let opts = cudarc::nvrtc::CompileOptions {
        options,
        name: Some("szp.cu".into()),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(KERNEL_SOURCE, opts)
        .map_err(|e| Error::Compile(format!("{e:?}")))?;
    Ok(ptx.to_src())
}

/// Value statistics the plan needs (what the stats kernel and its host twin compute).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Minimum finite value.
    pub lo: f64,
    /// Maximum finite value.
    pub hi: f64,
    /// Largest finite magnitude.
    pub mag: f64,
    /// First non-finite index, or `u64::MAX`.
    pub first_nonfinite: u64,
    /// First finite index above `max_abs`, or `u64::MAX`.
    pub first_over: u64,
}

/// `max_abs` as the kernels take it: the configured value, or −1 for "none".
pub(crate) fn max_abs_arg(cfg: &Config) -> f64 {
    cfg.max_abs.unwrap_or(-1.0)
}

/// What the plan step decided.
pub(crate) enum Planned {
    /// Encode with this plan.
    Ok(Plan),
    /// Some level reaches 2⁶²: the first index must be searched with `2·quant_eb`.
    LevelOverflow(f64),
}

const LEVEL_LIMIT: f64 = 4_611_686_018_427_387_904.0; // 2^62

/// [`Error::InterpLayout`] when `cfg` asks for the interpolation layout: checked before
/// anything else, so the GPU's refusal names the layout (core's block paths say only that it
/// needs scratch).
pub(crate) fn refuse_interp(cfg: &Config) -> Result<()> {
    if cfg.layout == szp::Layout::Interp {
        return Err(Error::InterpLayout);
    }
    Ok(())
}

/// [`Error::InterpLayout`] when `archive` claims the interpolation layout (magic and layout
/// byte 6), checked on the raw bytes before the header is parsed: a version 3 header reads
/// its extension's frame at the archive's end, which the device path does not copy, and a
/// truncated or damaged archive of that layout is refused by its layout all the same.
pub(crate) fn refuse_interp_archive(archive: &[u8]) -> Result<()> {
    if szp::tiled::claims(archive) {
        return Err(Error::InterpLayout);
    }
    Ok(())
}

/// fzpack-core's `blocks::plan` from statistics instead of a slice: the same error order
/// (config, first bad value, bound resolution, level overflow) and the same `Plan`, built by
/// core's own `blocks::check_config` and `blocks::resolve` (checked against `blocks::plan` in
/// the tests).
pub(crate) fn plan_from_stats(
    dtype: DType,
    cfg: &Config,
    n: usize,
    s: &Stats,
) -> Result<Planned, szp::Error> {
    szp::blocks::check_config(cfg)?;
    if s.first_nonfinite != u64::MAX || s.first_over != u64::MAX {
        return Err(if s.first_nonfinite < s.first_over {
            szp::Error::NonFinite {
                index: s.first_nonfinite as usize,
            }
        } else {
            szp::Error::ValueOutOfRange {
                index: s.first_over as usize,
            }
        });
    }
    let range = if n == 0 { 0.0 } else { s.hi - s.lo };
    let mut plan = szp::blocks::resolve(dtype, cfg, n, range, cfg.max_abs.unwrap_or(s.mag))?;
    // The device writes version 2 archives (no extension): a shape is not stored, and input
    // with missing values is refused above.
    plan.shape = szp::Shape::NONE;
    let quant_eb = plan.quant_eb;
    if s.mag / (2.0 * quant_eb) >= LEVEL_LIMIT {
        return Ok(Planned::LevelOverflow(2.0 * quant_eb));
    }
    Ok(Planned::Ok(plan))
}

/// The encode variant for a block size: `(values per lane cached, blocks per warp)`; the
/// kernel suffix is `v{VPL}` (or `g` for the uncached general path).
pub(crate) fn encode_variant(bs: u32) -> (u32, u32, &'static str) {
    match bs {
        0..=32 => (1, 16, "v1"),
        33..=64 => (2, 8, "v2"),
        65..=128 => (4, 4, "v4"),
        129..=256 => (8, 2, "v8"),
        _ => (0, 1, "g"),
    }
}

/// The decode variant for a block size: `(blocks per warp, kernel suffix)`.
pub(crate) fn decode_variant(bs: u32) -> (u32, &'static str) {
    match bs {
        0..=32 => (16, "k16"),
        33..=256 => (4, "k4"),
        _ => (1, "k1"),
    }
}

/// Warps per CTA in every kernel (`FZ_WARPS`).
pub(crate) const WARPS: u32 = 8;
