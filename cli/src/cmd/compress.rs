//! `fzpack compress`: a raw little-endian f32/f64 file (or standard input) to an SZp archive,
//! an `.fzm` container or a PERNIX block stream. Inputs that are known containers are refused
//! unless `--raw`; SZp and PERNIX are streamed in batches; a pipe in SZp ABS mode with
//! `--max-abs` is streamed in bounded windows.

use std::path::{Path, PathBuf};

use fzpack::pernix::{BitWidth, BlockSize, StreamHeader};
use fzpack::{DType, Element};
use fzpack_cli::container;

use crate::codec::{CodecArg, Engines, LayoutArg, ModeArg, PathKind, Setting, Wrap};
use crate::data;
use crate::dispatch;
use crate::fail::{Fail, Kind, lib};
use crate::files::{self, Input, Output};
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
    /// Raw little-endian input file (.f32 / .f64, or give --dtype); `-` reads standard input.
    input: PathBuf,
    /// Output file [default: INPUT.szp, INPUT.fzm or INPUT.pnx; standard output for input `-`];
    /// `-` writes to standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Element type [default: from the extension].
    #[arg(long, value_enum)]
    dtype: Option<DTypeArg>,
    /// Codec.
    #[arg(long, value_enum, default_value = "szp")]
    codec: CodecArg,
    /// SZp error bound (absolute, or relative to the value range with --mode noa) [default:
    /// 1e-3].
    #[arg(long)]
    eb: Option<f64>,
    /// SZp error-bound mode [default: noa].
    #[arg(long, value_enum)]
    mode: Option<ModeArg>,
    /// PERNIX bits per value (1..=24) [default: 16].
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
    /// `.fzm` holds). Compressed-domain `add`/`sum`/`scale`/`stats` take both, as long as the
    /// archives combined share one layout; `info` shows an archive's [default: heads].
    #[arg(long, value_enum)]
    layout: Option<LayoutArg>,
    /// Overwrite an existing output.
    #[arg(long)]
    force: bool,
    /// Read the input as raw floats even when its first bytes are those of a known container
    /// (NumPy .npy, HDF5, netCDF, zstd, gzip, an fzpack archive), which is refused otherwise.
    #[arg(long)]
    raw: bool,
}

fn setting_from(a: &CompressArgs) -> Result<Setting, Fail> {
    let usage = |m: String| Fail::new(Kind::Usage, m);
    Ok(match a.codec {
        CodecArg::Pernix => {
            if a.eb.is_some() || a.mode.is_some() {
                return Err(usage(
                    "--eb and --mode are SZp options; PERNIX takes --bits (fixed rate)".into(),
                ));
            }
            let b = a.bits.unwrap_or(16);
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
            if a.max_abs.is_some() {
                return Err(usage("--max-abs is an SZp option".into()));
            }
            Setting::Pernix { bits, block }
        }
        CodecArg::Szp => {
            if a.bits.is_some() {
                return Err(usage(
                    "--bits is a PERNIX option; SZp takes --eb and --mode (error bound)".into(),
                ));
            }
            let eb = a.eb.unwrap_or(1e-3);
            if !(eb.is_finite() && eb > 0.0) {
                return Err(usage(format!("--eb {eb} must be finite and > 0")));
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
            if a.layout == Some(LayoutArg::Heads) && a.format == FormatArg::Fzm {
                return Err(usage(
                    "--layout heads is for the native SZp archive (.fzm holds the fzgm layout)"
                        .into(),
                ));
            }
            Setting::Szp {
                mode: a.mode.unwrap_or(ModeArg::Noa),
                eb,
                block,
                layout: a.layout.unwrap_or(LayoutArg::DEFAULT),
            }
        }
    })
}

/// A library error, with non-finite inputs named by index and value.
fn input_err<T: Element>(nm: &str, values: &[T], e: fzpack::Error) -> Fail {
    let index = match &e {
        fzpack::Error::NonFinite { index } => Some(*index),
        fzpack::Error::Szp(fzpack::szp::Error::NonFinite { index }) => Some(*index),
        _ => None,
    };
    match index.and_then(|i| values.get(i).map(|v| (i, v))) {
        Some((i, v)) => Fail::new(
            Kind::Input,
            format!("{nm}: value at index {i} is {v:?}; the codecs need finite values"),
        ),
        None => lib(nm, e),
    }
}

/// The check `compress` runs on its input's first bytes: a known container (NumPy, HDF5,
/// netCDF, zstd, gzip, an fzpack archive) is not raw floats, so it is refused unless `--raw`.
fn raw_head(nm: &str) -> impl Fn(&[u8]) -> Result<(), Fail> + '_ {
    move |head: &[u8]| match container::foreign_magic(head) {
        None => Ok(()),
        Some(what) => {
            let hint = if what.contains("fzpack") || what.contains("FZGPUModules") {
                "to get the values back, run `fzpack decompress` on it"
            } else if what.contains("NumPy") {
                "fzpack does not read .npy files yet; write the array's raw values (e.g. \
                 `a.astype('<f4').tofile('x.f32')`) and compress those"
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

pub fn run(a: CompressArgs) -> Result<(), Fail> {
    let setting = setting_from(&a)?;
    let nm = name(&a.input);
    let regular = std::fs::metadata(&a.input).is_ok_and(|m| m.is_file());
    if a.dtype.is_none() && !a.raw && regular {
        // A container named e.g. x.npy: say what it is rather than asking for --dtype (only
        // a regular file is peeked at: a pipe's bytes would be consumed).
        if let Ok((head, _)) = files::read_head(&a.input, 16) {
            raw_head(&nm)(&head)?;
        }
    }
    let dtype: DType = match a.dtype {
        Some(d) => d.into(),
        None => data::dtype_from_name(&a.input).ok_or_else(|| {
            Fail::new(
                Kind::Input,
                format!(
                    "{}: cannot tell the element type from the name; give --dtype f32|f64",
                    a.input.display()
                ),
            )
        })?,
    };
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
    ) = (setting, a.format, a.max_abs)
    {
        let (file, regular) = files::open_source(&a.input)?;
        if !regular {
            // A pipe or device with a fixed grid: streamed in bounded memory.
            let cfg = szpcli::config(ModeArg::Abs, eb, block, layout).with_max_abs(m);
            return compress_stream(&a, file, dtype, &cfg, &setting, &eng, &out_path);
        }
    }
    let input = if a.raw {
        Input::open(&a.input)?
    } else {
        Input::open_checked(&a.input, raw_head(&nm))?
    };
    let mut out = Output::create(&out_path, a.force, &[&input])?;
    let bytes = input.bytes();
    match dtype {
        DType::F32 => compress_t::<f32>(&a, bytes, &setting, &eng, &mut out)?,
        DType::F64 => compress_t::<f64>(&a, bytes, &setting, &eng, &mut out)?,
    };
    let written = out.written();
    let to_stdout = out.is_stdout();
    out.finish(a.force)?;
    let n = bytes.len() / dtype.size();
    let stats = ratio_stats(bytes.len() as u64, written, n as u64);
    let line = format!(
        "{} -> {}: {} {} values, {} -> {} bytes, {stats} ({} {})",
        a.input.display(),
        out_path.display(),
        n,
        dtype,
        bytes.len(),
        written,
        setting.codec(),
        setting.label()
    );
    report(if to_stdout { Path::new("-") } else { &out_path }, &line);
    Ok(())
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
        raw_head(&nm)(&head)?;
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

fn compress_t<T: Wrap>(
    a: &CompressArgs,
    bytes: &[u8],
    setting: &Setting,
    eng: &Engines,
    out: &mut Output,
) -> Result<(), Fail> {
    let (input, format) = (a.input.as_path(), a.format);
    let nm = name(input);
    // Size checked before anything is encoded; the mapped bytes are used in place.
    let owned;
    let values: &[T] = match T::view(bytes) {
        Some(v) => v,
        None => {
            owned = data::values_of::<T>(input, bytes)?;
            &owned
        }
    };
    match *setting {
        Setting::Pernix { bits, block } => {
            // Streamed in batches of whole checksummed chunks: memory is one batch.
            let h = StreamHeader::new::<T>(bits, block, values.len() as u64);
            let units = h
                .units()
                .filter(|_| h.stream_len().is_some())
                .ok_or_else(|| Fail::new(Kind::Input, format!("{nm}: input too large")))?;
            out.write_all(&h.to_bytes())?;
            let d = eng.pernix(PathKind::Parallel);
            let pb = bar(bytes.len() as u64, "compressing");
            let mut buf = Vec::new();
            for (u0, span, vals) in dispatch::pnx_batches::<T>(&h, units) {
                buf.resize(span.len(), 0u8);
                d.compress_stream_units(&h, &values[vals.clone()], u0, &mut buf)
                    .map_err(|e| {
                        // indices in errors are global already
                        input_err(&nm, values, e)
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
            let mut cfg = szpcli::config(mode, eb, block, layout);
            if let Some(m) = a.max_abs {
                cfg = cfg.with_max_abs(m);
            }
            let r = szpstream::compress(values, &cfg, &eng.par, out, |e| {
                input_err(&nm, values, e.into())
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
