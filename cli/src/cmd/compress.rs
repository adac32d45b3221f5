//! `fzpack compress`: a raw little-endian f32/f64 file or a NumPy `.npy` file (or standard
//! input) to an SZp archive, an `.fzm` container or a PERNIX block stream. `.npy` is read
//! (values brought to C order; see `npy.rs`); the shape (the header's, or `--dims` for a raw
//! input) is recorded in a native SZp archive, with missing values (NaN, ±inf) kept exactly;
//! other known containers are refused unless `--raw`; SZp and PERNIX are streamed in batches;
//! a pipe in SZp ABS mode with `--max-abs` is streamed in bounded windows. There is no default
//! bound or rate: SZp needs `--abs`/`--rel` (or `--eb` with `--mode`), PERNIX `--bits`.

use std::path::{Path, PathBuf};

use fzpack::pernix::{self, BitWidth, BlockSize};
use fzpack::{DType, Element};
use fzpack_cli::container;

use crate::codec::{CodecArg, Engines, LayoutArg, ModeArg, PathKind, Setting};
use crate::data;
use crate::dispatch;
use crate::fail::{Fail, Kind, lib};
use crate::files::{self, Input, Output};
use crate::gpu::{self, GpuElem};
use crate::npy;
use crate::szpcli;
use crate::szpstream;
use crate::ui::{bar, name, report, spinner};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DTypeArg {
    F32,
    F64,
}

impl From<DTypeArg> for DType {
    fn from(d: DTypeArg) -> DType {
        match d {
            DTypeArg::F32 => DType::F32,
            DTypeArg::F64 => DType::F64,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// fzpack's own archive (.szp) or PERNIX block stream (.pnx).
    Native,
    /// FZGPUModules .fzm container (SZp only).
    Fzm,
}

#[derive(clap::Args, Debug)]
pub struct CompressArgs {
    /// Input: a raw little-endian file (.f32 / .f64, or give --dtype) or a NumPy .npy file
    /// (float32/float64, either byte order, C or Fortran order); `-` reads standard input.
    input: PathBuf,
    /// Output file [default: INPUT.szp, INPUT.fzm or INPUT.pnx; standard output for input `-`];
    /// `-` writes to standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Element type [default: from the .npy header, or from the name: `.f32`/`.f64`, or
    /// `_f32`/`_f64` before the extension]. A name whose type disagrees is refused unless --raw.
    #[arg(long, value_enum)]
    dtype: Option<DTypeArg>,
    /// Dimensions of a raw input, slowest first as numpy's shape, e.g. 2161,4320 or 2161x4320
    /// (C order, last fastest): their product must be the value count; a native SZp archive
    /// records them (1 to 8). For a .npy input the header gives them (a different --dims is an
    /// error).
    #[arg(long)]
    dims: Option<String>,
    /// Compress on the GPU (device 0; SZp, native archive). Needs a build with the `cuda`
    /// feature and a CUDA driver and device; never falls back to the CPU.
    #[arg(long)]
    gpu: bool,
    /// Codec.
    #[arg(long, value_enum, default_value = "szp")]
    codec: CodecArg,
    /// SZp: absolute error bound E: every decoded value is within E of the original. SZp
    /// needs a bound (--abs, --rel or --eb with --mode); there is no default.
    #[arg(long, value_name = "E")]
    abs: Option<f64>,
    /// SZp: error bound relative to the value range: every decoded value is within
    /// R × (max − min) of the original (NOA mode).
    #[arg(long, value_name = "R")]
    rel: Option<f64>,
    /// SZp error bound, the long form: `--eb E --mode abs` is `--abs E`, `--eb R --mode noa`
    /// is `--rel R`. Needs --mode (there is no default mode).
    #[arg(long)]
    eb: Option<f64>,
    /// SZp error-bound mode of --eb: abs or noa (relative to the value range).
    #[arg(long, value_enum)]
    mode: Option<ModeArg>,
    /// PERNIX bits per value (1..=24). PERNIX needs it: there is no default rate.
    #[arg(long)]
    bits: Option<u8>,
    /// Block size: SZp values per block (1..=4096, default 128); PERNIX bytes per block
    /// (64, 128, 256, 512, 1024; default 64).
    #[arg(long)]
    block_size: Option<u32>,
    /// Worker threads [default: all cores; at most 4 per core, 1024 in all].
    #[arg(long)]
    threads: Option<usize>,
    /// Container: native or fzm (SZp only).
    #[arg(long, value_enum, default_value = "native")]
    format: FormatArg,
    /// SZp (native archive): declare a bound M on |x|. The strict bound is then tightened
    /// for M instead of the data, so archives of different fields with the same bound and M
    /// share one quantizer grid (addable with `add`/`sum`); a value above M is an error.
    #[arg(long)]
    max_abs: Option<f64>,
    /// SZp (native archive): block layout. `heads` stores each block's first level apart
    /// (smaller on smooth or offset data); `fzgm` is the FZGPUModules stage layout (the one
    /// `.fzm` holds); `interp` predicts each value from decoded neighbours over the shape
    /// (.npy header or --dims; else one dimension) in tiles with entropy-coded codes: several
    /// times smaller on smooth fields, slower, CPU only. Compressed-domain
    /// `add`/`sum`/`scale`/`stats` take both block layouts (not `interp`), as long as the
    /// archives combined share one layout; `info` shows an archive's [default: heads].
    #[arg(long, value_enum)]
    layout: Option<LayoutArg>,
    /// SZp (native archive, block layouts): quantize f32 data with a step that is itself an
    /// f32 (the bound rounded down to 24 significant bits, a tightening below 2^-23 relative):
    /// microcontrollers without an f64 FPU then decode each value with one f32 multiply.
    /// Every decoder reads the archive.
    #[arg(long)]
    f32_step: bool,
    /// Overwrite an existing output.
    #[arg(long)]
    force: bool,
    /// Read the input as raw floats even when its first bytes are those of a known container
    /// (NumPy .npy, HDF5, netCDF, zstd, gzip, an fzpack archive), which is read (.npy) or
    /// refused otherwise; also skips the check of the name's type against --dtype.
    #[arg(long)]
    raw: bool,
}

/// `cfg` with `--f32-step` applied.
fn step(a: &CompressArgs, cfg: fzpack::szp::Config) -> fzpack::szp::Config {
    if a.f32_step { cfg.with_f32_step() } else { cfg }
}

fn setting_from(a: &CompressArgs) -> Result<Setting, Fail> {
    let usage = |m: String| Fail::new(Kind::Usage, m);
    Ok(match a.codec {
        CodecArg::Pernix => {
            if a.eb.is_some() || a.mode.is_some() || a.abs.is_some() || a.rel.is_some() {
                return Err(usage(
                    "--abs, --rel, --eb and --mode are SZp options; PERNIX takes --bits \
                     (fixed rate)"
                        .into(),
                ));
            }
            let b = a.bits.ok_or_else(|| usage(NO_RATE.into()))?;
            let bits =
                BitWidth::new(b).map_err(|_| usage(format!("--bits {b} is outside 1..=24")))?;
            let bs = a.block_size.unwrap_or(64);
            let block = BlockSize::new(bs).map_err(|_| {
                usage(format!(
                    "--block-size {bs} is not a PERNIX block size (64, 128, 256, 512, 1024)"
                ))
            })?;
            if a.format == FormatArg::Fzm {
                return Err(usage("--format fzm is for SZp only".into()));
            }
            if a.max_abs.is_some() || a.f32_step {
                return Err(usage("--max-abs and --f32-step are SZp options".into()));
            }
            Setting::Pernix { bits, block }
        }
        CodecArg::Szp => {
            if a.bits.is_some() {
                return Err(usage(
                    "--bits is a PERNIX option; SZp takes an error bound (--abs E or --rel R)"
                        .into(),
                ));
            }
            let (mode, eb, flag) = szp_bound(a)?;
            if !(eb.is_finite() && eb > 0.0) {
                return Err(usage(format!("{flag} {eb} must be finite and > 0")));
            }
            if let Some(m) = a.max_abs {
                if !(m.is_finite() && m >= 0.0) {
                    return Err(usage(format!("--max-abs {m} must be finite and >= 0")));
                }
                if a.format == FormatArg::Fzm {
                    return Err(usage(
                        "--max-abs is for the native SZp archive (--format native)".into(),
                    ));
                }
            }
            let block = a.block_size.unwrap_or(128);
            if !(1..=4096).contains(&block) {
                return Err(usage(format!(
                    "--block-size {block} is outside 1..=4096 for SZp"
                )));
            }
            if a.layout == Some(LayoutArg::Interp) && a.block_size.is_some() {
                return Err(usage(
                    "--block-size sets the block layouts' values per block; the interp layout \
                     has no blocks (its tiles follow the shape): drop --block-size"
                        .into(),
                ));
            }
            if a.f32_step && (a.format == FormatArg::Fzm || a.layout == Some(LayoutArg::Interp)) {
                return Err(usage(
                    "--f32-step is for the native SZp archive's block layouts (heads, fzgm)".into(),
                ));
            }
            if let Some(l @ (LayoutArg::Heads | LayoutArg::Interp)) = a.layout
                && a.format == FormatArg::Fzm
            {
                return Err(usage(format!(
                    "--layout {} is for the native SZp archive (.fzm holds the fzgm layout)",
                    l.name()
                )));
            }
            Setting::Szp {
                mode,
                eb,
                block,
                layout: a.layout.unwrap_or(LayoutArg::DEFAULT),
            }
        }
    })
}

/// What `compress` says when SZp is given no bound.
pub const NO_BOUND: &str = "a bound is required: --abs E or --rel R (fzpack has no default \
     bound, like SZ3 and ZFP); --abs E keeps every value within E, --rel R within R × (max − \
     min); the long form is --eb X --mode abs|noa";

/// What `compress` says when PERNIX is given no rate.
pub const NO_RATE: &str = "PERNIX needs --bits N (1..=24 bits per value; fzpack has no default \
     rate, like ZFP's fixed-rate mode)";

/// The SZp bound of `--abs E`, `--rel R` or `--eb X --mode M`: exactly one form, and no
/// default (a missing bound or a `--eb` without `--mode` is a usage error). Returns the mode,
/// the bound and the flag that gave it (for messages).
fn szp_bound(a: &CompressArgs) -> Result<(ModeArg, f64, &'static str), Fail> {
    let usage = |m: String| Fail::new(Kind::Usage, m);
    match (a.abs, a.rel, a.eb, a.mode) {
        (Some(e), None, None, None) => Ok((ModeArg::Abs, e, "--abs")),
        (None, Some(r), None, None) => Ok((ModeArg::Noa, r, "--rel")),
        (None, None, Some(e), Some(m)) => Ok((m, e, "--eb")),
        (None, None, None, _) => Err(usage(NO_BOUND.into())),
        (None, None, Some(_), None) => Err(usage(
            "--eb needs --mode abs|noa (fzpack has no default mode); or write --abs E \
             (absolute) or --rel R (relative to the value range)"
                .into(),
        )),
        _ => Err(usage(
            "give the bound once: --abs E, --rel R, or --eb X --mode abs|noa (not two of them, \
             and --mode only with --eb)"
                .into(),
        )),
    }
}

/// A library error, with non-finite inputs named by index and value; `codec` says which
/// codec refused them (and SZp's native archive is named as the one that keeps them).
fn input_err<T: Element>(nm: &str, codec: &str, values: &[T], e: fzpack::Error) -> Fail {
    let index = match &e {
        fzpack::Error::NonFinite { index } => Some(*index),
        fzpack::Error::Szp(fzpack::szp::Error::NonFinite { index }) => Some(*index),
        _ => None,
    };
    match index.and_then(|i| values.get(i).map(|v| (i, v))) {
        Some((i, v)) => Fail::new(
            Kind::Input,
            format!(
                "{nm}: value at index {i} is {v:?}; {codec} needs finite values (a native SZp \
                 archive keeps NaN and ±inf exactly: --codec szp --format native)"
            ),
        ),
        None => lib(nm, e),
    }
}

/// The check `compress` runs on its input's first bytes: a known container (NumPy, HDF5,
/// netCDF, zstd, gzip, an fzpack archive) is not raw floats, so it is refused unless `--raw`;
/// NumPy `.npy` passes when `npy_ok` (the caller then reads its header).
fn raw_head(nm: &str, npy_ok: bool) -> impl Fn(&[u8]) -> Result<(), Fail> + '_ {
    move |head: &[u8]| match container::foreign_magic(head) {
        None => Ok(()),
        Some(_) if npy_ok && head.starts_with(npy::MAGIC) => Ok(()),
        Some(what) => {
            let hint = if what.contains("fzpack") || what.contains("FZGPUModules") {
                "to get the values back, run `fzpack decompress` on it"
            } else if what.contains("NumPy") {
                "a .npy file is read from a file or a pipe, but not in the bounded-memory stream \
                 of a pipe with --abs E --max-abs M; give it as a file"
            } else if what.contains("compressed") {
                "decompress it first (e.g. `zstd -d` / `gunzip`) and compress the raw values"
            } else {
                "fzpack does not read this container; extract the variable's raw \
                 little-endian values and compress those"
            };
            Err(Fail::new(
                Kind::Input,
                format!(
                    "{nm}: this is {what}, not raw little-endian floats (its first bytes are \
                     that format's magic number); read as floats its header would become \
                     garbage values. {hint}, or give --raw to compress the bytes as raw floats \
                     anyway"
                ),
            ))
        }
    }
}

/// The element type a name says: `.f32`/`.f64`, or `_f32`/`_f64` at the end of the stem
/// (`t_f32.bin`, `t_2161x4320_f64.dat`).
fn dtype_in_name(path: &Path) -> Option<DType> {
    data::dtype_from_name(path).or_else(|| {
        let stem = path.file_stem()?.to_str()?;
        if stem.ends_with("_f32") {
            Some(DType::F32)
        } else if stem.ends_with("_f64") {
            Some(DType::F64)
        } else {
            None
        }
    })
}

/// The element type of a raw input: `--dtype`, or the name's; a name that says the other type
/// is refused unless `--raw` (an f64 file named `.f32` would be read as garbage).
fn raw_dtype(a: &CompressArgs) -> Result<DType, Fail> {
    let named = dtype_in_name(&a.input);
    match (a.dtype.map(DType::from), named) {
        (Some(d), Some(n)) if d != n && !a.raw => Err(Fail::new(
            Kind::Input,
            format!(
                "{}: the name says {n} but --dtype is {d}; rename the file, fix --dtype, or give \
                 --raw to read it as {d} anyway",
                a.input.display()
            ),
        )),
        (Some(d), _) => Ok(d),
        (None, Some(n)) => Ok(n),
        (None, None) => Err(Fail::new(
            Kind::Input,
            format!(
                "{}: cannot tell the element type from the name; give --dtype f32|f64",
                a.input.display()
            ),
        )),
    }
}

/// The size check of a raw input, with the remainder named.
fn raw_count(nm: &str, len: usize, dtype: DType) -> Result<usize, Fail> {
    let r = len % dtype.size();
    if r != 0 {
        return Err(Fail::new(
            Kind::Input,
            format!(
                "{nm}: size {len} bytes is not a multiple of the {}-byte {dtype} element size \
                 (remainder {r} bytes): wrong --dtype, or a truncated file or one with a header?",
                dtype.size()
            ),
        ));
    }
    Ok(len / dtype.size())
}

/// `--dims` checked against the value count `n` that `has` (the input, the archive) holds.
pub(crate) fn check_dims(nm: &str, dims: &[usize], n: usize, has: &str) -> Result<(), Fail> {
    let prod = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if prod != Some(n) {
        return Err(Fail::new(
            Kind::Input,
            format!(
                "{nm}: --dims {} holds {} values but the {has} has {n}",
                npy::shape_str(dims),
                prod.map_or("too many".to_string(), |p| p.to_string())
            ),
        ));
    }
    Ok(())
}

pub fn run(a: CompressArgs) -> Result<(), Fail> {
    let setting = setting_from(&a)?;
    let nm = name(&a.input);
    let dims = match &a.dims {
        Some(s) => Some(data::parse_dims(s).map_err(|m| Fail::new(Kind::Usage, m))?),
        None => None,
    };
    if a.gpu && (!matches!(setting, Setting::Szp { .. }) || a.format != FormatArg::Native) {
        return Err(Fail::new(
            Kind::Usage,
            "--gpu compresses SZp into the native archive (--codec szp --format native)",
        ));
    }
    if a.gpu
        && let Setting::Szp {
            layout: LayoutArg::Interp,
            ..
        } = setting
    {
        return Err(Fail::new(
            Kind::Usage,
            "--gpu: the GPU does not run the interp layout (layout 2, the interpolation \
             tiles); drop --gpu to compress it on the CPU, or give --layout heads or fzgm",
        ));
    }
    let gpu = gpu::open(a.gpu)?;
    let ext = match (setting, a.format) {
        (Setting::Pernix { .. }, _) => "pnx",
        (_, FormatArg::Fzm) => "fzm",
        _ => "szp",
    };
    let out_path = a.output.clone().unwrap_or_else(|| {
        if a.input.as_os_str() == "-" {
            return PathBuf::from("-");
        }
        let mut s = a.input.as_os_str().to_owned();
        s.push(".");
        s.push(ext);
        PathBuf::from(s)
    });
    let eng = Engines::new(a.threads)?;
    if let (
        Setting::Szp {
            mode: ModeArg::Abs,
            eb,
            block,
            layout,
        },
        FormatArg::Native,
        Some(m),
        None,
    ) = (setting, a.format, a.max_abs, &gpu)
    {
        let (file, regular) = files::open_source(&a.input)?;
        if !regular && layout == LayoutArg::Interp {
            return Err(Fail::new(
                Kind::Usage,
                "--layout interp: the interpolation layout needs the whole array (its tiles \
                 span the shape), so a pipe with --abs and --max-abs, streamed in bounded \
                 memory, cannot be written in it; give the input as a file, drop --max-abs \
                 (the pipe is then read whole), or give --layout heads or fzgm",
            ));
        }
        if !regular {
            // A pipe or device with a fixed grid: streamed in bounded memory.
            if dims.is_some() {
                return Err(Fail::new(
                    Kind::Usage,
                    "--dims is checked against the value count, which a stream streamed with \
                     --max-abs does not know in advance; give the input as a file",
                ));
            }
            let dtype = raw_dtype(&a)?;
            let cfg = step(
                &a,
                szpcli::config(ModeArg::Abs, eb, block, layout).with_max_abs(m),
            );
            return compress_stream(&a, file, dtype, &cfg, &setting, &eng, &out_path);
        }
    }
    let input = if a.raw {
        Input::open(&a.input)?
    } else {
        Input::open_checked(&a.input, raw_head(&nm, true))?
    };
    let bytes = input.bytes();
    let npy_head = if !a.raw && bytes.starts_with(npy::MAGIC) {
        Some(npy::parse(bytes).map_err(|m| Fail::new(Kind::Input, format!("{nm}: {m}")))?)
    } else {
        None
    };
    let (dtype, n, shape) = match &npy_head {
        Some(h) => {
            if let Some(d) = a.dtype.map(DType::from)
                && d != h.dtype
            {
                return Err(Fail::new(
                    Kind::Input,
                    format!("{nm}: the .npy header says {} but --dtype is {d}", h.dtype),
                ));
            }
            let n = h
                .count()
                .ok_or_else(|| Fail::new(Kind::Input, format!("{nm}: .npy shape overflows")))?;
            if let Some(d) = &dims
                && *d != h.shape
            {
                return Err(Fail::new(
                    Kind::Input,
                    format!(
                        "{nm}: --dims {} disagrees with the .npy shape {}",
                        npy::shape_str(d),
                        npy::shape_str(&h.shape)
                    ),
                ));
            }
            (h.dtype, n, Some(h.shape.clone()))
        }
        None => {
            let dtype = raw_dtype(&a)?;
            let n = raw_count(&nm, bytes.len(), dtype)?;
            if let Some(d) = &dims {
                check_dims(&nm, d, n, "input")?;
            }
            (dtype, n, dims.clone())
        }
    };
    // A native SZp archive records the shape; the GPU's archives (format version 2), PERNIX
    // streams and .fzm containers have no field for it.
    let stores_shape = matches!(
        (setting, a.format),
        (Setting::Szp { .. }, FormatArg::Native)
    ) && gpu.is_none();
    if let Some(s) = &shape
        && stores_shape
    {
        szpcli::check_rank(&nm, s)?;
    }
    let mut out = Output::create(&out_path, a.force, &[&input])?;
    let src = Source {
        bytes,
        npy: npy_head.as_ref(),
        shape: shape.as_deref(),
        gpu: gpu.as_ref(),
    };
    match dtype {
        DType::F32 => compress_t::<f32>(&a, &src, &setting, &eng, &mut out)?,
        DType::F64 => compress_t::<f64>(&a, &src, &setting, &eng, &mut out)?,
    };
    let written = out.written();
    let to_stdout = out.is_stdout();
    out.finish(a.force)?;
    let raw = (n * dtype.size()) as u64;
    let stats = ratio_stats(raw, written, n as u64);
    let line = format!(
        "{} -> {}: {} {} values, {} -> {} bytes, {stats} ({} {}{})",
        a.input.display(),
        out_path.display(),
        n,
        dtype,
        raw,
        written,
        setting.codec(),
        setting.label(),
        if gpu.is_some() { ", GPU" } else { "" }
    );
    report(if to_stdout { Path::new("-") } else { &out_path }, &line);
    if let Some(s) = shape {
        // On stderr, so that a script reading the report line sees the same line as before.
        let from = match &npy_head {
            Some(h) if h.fortran && s.len() > 1 => {
                "from the .npy header; Fortran order, reordered to C order"
            }
            Some(_) => "from the .npy header",
            None => "--dims",
        };
        let shape = npy::shape_str(&s);
        if s.is_empty() {
            eprintln!("{nm}: shape {shape} ({from}): one value, no shape to store");
        } else if stores_shape {
            eprintln!("{nm}: shape {shape} ({from}), stored in the archive");
        } else {
            eprintln!(
                "{nm}: shape {shape} ({from}); the {} holds the values flat in C order (it has \
                 no field for the shape): give --dims {shape} to `fzpack decompress -o \
                 NAME.npy`",
                match (setting, a.format) {
                    (Setting::Pernix { .. }, _) => "PERNIX stream",
                    (_, FormatArg::Fzm) => ".fzm container",
                    _ => "GPU's archive (format version 2)",
                }
            );
        }
    } else if let Setting::Szp {
        layout: LayoutArg::Interp,
        ..
    } = setting
        && n > 1
    {
        // The layout predicts across dimensions: a flat input is predicted as one, which on
        // a 2-D grid gives up most of what it is for (a 721x1440 geoid at 1e-3: 25.6 vs 41.1).
        let hint = match data::dims_from_name(&a.input) {
            Some(d) if d.iter().product::<usize>() == n && d.len() > 1 => {
                format!(" (the file name says {})", npy::shape_str(&d))
            }
            _ => String::new(),
        };
        eprintln!(
            "{nm}: no shape given: the interp layout predicted it as one dimension; give \
             --dims D0xD1..{hint} or a .npy for the ratio it is built for"
        );
    }
    Ok(())
}

/// The input of [`compress_t`]: its bytes, the `.npy` header when it has one, the GPU when
/// `--gpu`.
struct Source<'a> {
    bytes: &'a [u8],
    npy: Option<&'a npy::Header>,
    /// The array's shape (from the `.npy` header or `--dims`), recorded in a native SZp
    /// archive.
    shape: Option<&'a [usize]>,
    gpu: Option<&'a gpu::Device>,
}

/// The ratio and bits per value of `n` values, `raw` bytes, compressed into `written` bytes.
fn ratio_stats(raw: u64, written: u64, n: u64) -> String {
    if n == 0 {
        "ratio n/a, bits/value n/a (no values)".to_string()
    } else {
        format!(
            "ratio {:.3}, {:.3} bits/value",
            raw as f64 / written as f64,
            written as f64 * 8.0 / n as f64
        )
    }
}

/// `compress` of a pipe or device in SZp ABS mode with `--max-abs`: streamed by windows
/// ([`szpstream::compress_stream`]), so memory stays bounded whatever the input's length.
fn compress_stream(
    a: &CompressArgs,
    file: std::fs::File,
    dtype: DType,
    cfg: &fzpack::szp::Config,
    setting: &Setting,
    eng: &Engines,
    out_path: &Path,
) -> Result<(), Fail> {
    use std::io::Read;
    let nm = name(&a.input);
    let mut head = Vec::new();
    (&file)
        .take(4096)
        .read_to_end(&mut head)
        .map_err(|e| Fail::new(Kind::Io, format!("cannot read {nm}: {e}")))?;
    if !a.raw {
        raw_head(&nm, false)(&head)?;
    }
    let mut src = std::io::Cursor::new(head).chain(file);
    let mut out = Output::create(out_path, a.force, &[])?;
    let spool_dir = if out.is_stdout() {
        std::env::temp_dir()
    } else {
        match out_path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    };
    let pb = spinner("compressing");
    let n = match dtype {
        DType::F32 => {
            szpstream::compress_stream::<f32>(&mut src, &nm, cfg, &eng.par, &spool_dir, &mut out)
        }
        DType::F64 => {
            szpstream::compress_stream::<f64>(&mut src, &nm, cfg, &eng.par, &spool_dir, &mut out)
        }
    };
    pb.finish_and_clear();
    let n = n?;
    let written = out.written();
    let to_stdout = out.is_stdout();
    out.finish(a.force)?;
    let raw = n * dtype.size() as u64;
    let stats = ratio_stats(raw, written, n);
    let line = format!(
        "{} -> {}: {n} {dtype} values, {raw} -> {written} bytes, {stats} ({} {}, streamed)",
        a.input.display(),
        out_path.display(),
        setting.codec(),
        setting.label()
    );
    report(if to_stdout { Path::new("-") } else { out_path }, &line);
    Ok(())
}

fn compress_t<T: GpuElem>(
    a: &CompressArgs,
    src: &Source,
    setting: &Setting,
    eng: &Engines,
    out: &mut Output,
) -> Result<(), Fail> {
    let (input, format) = (a.input.as_path(), a.format);
    let nm = name(input);
    // Size checked before anything is encoded; the mapped bytes of a raw input are used in
    // place (an .npy file's values are copied: byte order and Fortran order are fixed first).
    let owned;
    let values: &[T] = match (src.npy, T::view(src.bytes)) {
        (Some(h), _) => {
            owned = npy::values::<T>(src.bytes, h)
                .map_err(|m| Fail::new(Kind::Input, format!("{nm}: {m}")))?;
            &owned
        }
        (None, Some(v)) => v,
        (None, None) => {
            owned = data::values_of::<T>(input, src.bytes)?;
            &owned
        }
    };
    if let (
        Some(d),
        Setting::Szp {
            mode,
            eb,
            block,
            layout,
        },
    ) = (src.gpu, *setting)
    {
        let mut cfg = step(a, szpcli::config(mode, eb, block, layout));
        if let Some(m) = a.max_abs {
            cfg = cfg.with_max_abs(m);
        }
        let pb = spinner("compressing on the GPU");
        let r = gpu::compress(d, &nm, values, &cfg);
        pb.finish_and_clear();
        return out.write_all(&r?);
    }
    match *setting {
        Setting::Pernix { bits, block } => {
            // Streamed in batches of whole checksummed chunks: memory is one batch.
            let d = pernix::Encoder::new(bits, block).dispatcher(eng.pernix(PathKind::Parallel));
            let h = d.header::<T>(values.len() as u64);
            let units = h
                .units()
                .filter(|_| h.stream_len().is_some())
                .ok_or_else(|| Fail::new(Kind::Input, format!("{nm}: input too large")))?;
            let mut head = [0u8; pernix::STREAM_HEADER_LEN_V2];
            let at = h.write(&mut head).map_err(|e| lib(&nm, e.into()))?;
            out.write_all(&head[..at])?;
            let pb = bar(size_of_val(values) as u64, "compressing");
            let mut buf = Vec::new();
            for (u0, span, vals) in dispatch::pnx_batches::<T>(&h, units) {
                buf.resize(span.len(), 0u8);
                d.units(&h, &values[vals.clone()], u0, &mut buf)
                    .map_err(|e| {
                        // indices in errors are global already
                        input_err(&nm, "PERNIX", values, e)
                    })?;
                out.write_all(&buf)?;
                pb.inc((vals.len() * T::BYTES) as u64);
            }
            pb.finish_and_clear();
            Ok(())
        }
        Setting::Szp {
            mode,
            eb,
            block,
            layout,
        } if format == FormatArg::Native => {
            // Streamed by block ranges: memory is the input map plus one batch.
            let pb = spinner("compressing");
            let mut cfg = step(a, szpcli::config(mode, eb, block, layout));
            if let Some(m) = a.max_abs {
                cfg = cfg.with_max_abs(m);
            }
            let cfg = szpcli::with_shape(&nm, cfg, src.shape)?;
            if layout == LayoutArg::Interp {
                // Tiles over the whole shape: the facade encodes them on the pool into one
                // archive (the block ranges of the streamed writer do not exist here).
                let r = fzpack::szp::Encoder::new(&cfg)
                    .threads(&eng.par)
                    .to_vec(values)
                    .map_err(|e| input_err(&nm, "SZp", values, e));
                pb.finish_and_clear();
                return out.write_all(&r?);
            }
            let r = szpstream::compress(values, &cfg, &eng.par, out, |e| {
                input_err(&nm, "SZp", values, e.into())
            });
            pb.finish_and_clear();
            r
        }
        _ => {
            let pb = spinner("compressing");
            let r = dispatch::compress(&nm, values, setting, PathKind::Simd, eng, true);
            pb.finish_and_clear();
            out.write_all(&r?)
        }
    }
}
