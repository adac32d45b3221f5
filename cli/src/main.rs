//! `fzpack`: compress, decompress, inspect, verify and benchmark scientific float files with
//! SZp and PERNIX. Usage: `docs/cli.md`.

mod bench;
mod codec;
mod data;
mod dispatch;
mod fail;
mod files;
mod ops;
mod plot;
mod szpcli;
mod szpstream;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use fzpack::pernix::{BitWidth, BlockSize, StreamHeader, Verify};
use fzpack::{DType, Element};
use fzpack_cli::container::{self, ArchiveKind};
use indicatif::{ProgressBar, ProgressStyle};

use codec::{CodecArg, Decoded, Engines, LayoutArg, ModeArg, PathKind, Setting, Wrap};
use dispatch::archive_head;
use fail::{Fail, Kind, lib};
use files::{Input, Output};

/// Error-bounded (SZp) and fixed-rate (PERNIX) lossy compression of raw f32/f64 files.
#[derive(Parser, Debug)]
#[command(name = "fzpack", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Compress a raw little-endian f32/f64 file.
    Compress(CompressArgs),
    /// Decompress an archive back to a raw little-endian file.
    Decompress(DecompressArgs),
    /// Describe an archive.
    Info {
        /// The archive (.szp, .fzm or .pnx); `-` reads standard input.
        file: PathBuf,
        /// Do not verify the .pnx / .szp v2 checksums (the structure is still checked).
        #[arg(long)]
        no_verify: bool,
    },
    /// Check an archive against the original: the error bound, max error, RMSE and PSNR.
    Verify(VerifyArgs),
    /// Measure ratio, quality and speed of every codec, setting and path.
    Bench(bench::BenchArgs),
    /// Add two SZp archives in the compressed domain (same dtype, length, block size and
    /// quantizer bound).
    Add {
        /// First archive.
        a: PathBuf,
        /// Second archive.
        b: PathBuf,
        /// Output archive.
        #[arg(short, long)]
        output: PathBuf,
        /// A - B instead of A + B.
        #[arg(long)]
        sub: bool,
        /// Replace an existing output (regular files only).
        #[arg(long)]
        force: bool,
    },
    /// Sum any number of SZp archives in the compressed domain.
    Sum {
        /// The archives.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Output archive.
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing output (regular files only).
        #[arg(long)]
        force: bool,
    },
    /// Multiply an SZp archive by an integer in the compressed domain.
    Scale {
        /// The archive.
        a: PathBuf,
        /// The integer factor.
        #[arg(long, allow_negative_numbers = true)]
        by: i64,
        /// Output archive.
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing output (regular files only).
        #[arg(long)]
        force: bool,
    },
    /// Sum, mean, min and max of an SZp archive from its quantized levels.
    Stats {
        /// The archive.
        a: PathBuf,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DTypeArg {
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    /// fzpack's own archive (.szp) or PERNIX block stream (.pnx).
    Native,
    /// FZGPUModules .fzm container (SZp only).
    Fzm,
}

#[derive(clap::Args, Debug)]
struct CompressArgs {
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

#[derive(clap::Args, Debug)]
struct DecompressArgs {
    /// The archive; `-` reads standard input.
    input: PathBuf,
    /// Output file [default: NAME.decoded.f32/.f64; standard output for input `-`]; `-` writes
    /// to standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Worker threads [default: all cores; at most 4 per core, 1024 in all].
    #[arg(long)]
    threads: Option<usize>,
    /// Overwrite an existing output.
    #[arg(long)]
    force: bool,
    /// Do not verify the .pnx / .szp v2 checksums (for data checksummed elsewhere; the
    /// structure is still checked).
    #[arg(long)]
    no_verify: bool,
}

#[derive(clap::Args, Debug)]
struct VerifyArgs {
    /// The original raw file.
    original: PathBuf,
    /// The archive made from it.
    archive: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    files::install_signal_cleanup();
    let r = match cli.cmd {
        Cmd::Compress(a) => compress(a),
        Cmd::Decompress(a) => decompress(a),
        Cmd::Info { file, no_verify } => info(&file, verify_of(no_verify)),
        Cmd::Verify(a) => verify(a),
        Cmd::Bench(a) => bench::run(a),
        Cmd::Add {
            a,
            b,
            output,
            sub,
            force,
        } => ops::add(&a, &b, &output, sub, force).map(|t| report(&output, &t)),
        Cmd::Sum {
            inputs,
            output,
            force,
        } => ops::sum(&inputs, &output, force).map(|t| report(&output, &t)),
        Cmd::Scale {
            a,
            by,
            output,
            force,
        } => ops::scale(&a, by, &output, force).map(|t| report(&output, &t)),
        Cmd::Stats { a, json } => ops::stats(&a, json).map(say),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("fzpack: error: {f}");
            ExitCode::from(f.exit_code())
        }
    }
}

/// Prints a subcommand's report line(s) to stdout.
fn say(text: String) {
    println!("{text}");
}

/// Prints the report of a command that wrote `output`: to stderr when the output is standard
/// output (`-o -`), so that stdout holds the payload and nothing else.
pub fn report(output: &Path, text: &str) {
    if output.as_os_str() == "-" {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn bar(len: u64, msg: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {bytes}/{total_bytes} ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(msg.to_string());
    pb
}

/// A spinner for work of unknown length.
pub fn spinner(msg: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(100));
    pb
}

fn name(p: &Path) -> String {
    p.display().to_string()
}

fn verify_of(no_verify: bool) -> Verify {
    if no_verify {
        Verify::Skip
    } else {
        Verify::Checksums
    }
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

/// Values per streamed batch: 16 MiB of raw data, so memory stays bounded and the parallel
/// driver still has enough to split.
const BATCH_BYTES: usize = 16 << 20;

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

fn compress(a: CompressArgs) -> Result<(), Fail> {
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
    let stats = if n == 0 {
        "ratio n/a, bits/value n/a (no values)".to_string()
    } else {
        format!(
            "ratio {:.3}, {:.3} bits/value",
            bytes.len() as f64 / written as f64,
            written as f64 * 8.0 / n as f64
        )
    };
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
    let stats = if n == 0 {
        "ratio n/a, bits/value n/a (no values)".to_string()
    } else {
        format!(
            "ratio {:.3}, {:.3} bits/value",
            raw as f64 / written as f64,
            written as f64 * 8.0 / n as f64
        )
    };
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
            let per = (BATCH_BYTES / (h.unit_values() * T::BYTES)).max(1);
            let d = eng.pernix(PathKind::Parallel);
            let pb = bar(bytes.len() as u64, "compressing");
            let mut buf = Vec::new();
            let mut u0 = 0;
            while u0 < units {
                let u1 = (u0 + per).min(units);
                let (span, vals) = h.unit_span(u0..u1);
                buf.resize(span.len(), 0u8);
                d.compress_stream_units(&h, &values[vals.clone()], u0, &mut buf)
                    .map_err(|e| {
                        // indices in errors are global already
                        input_err(&nm, values, e)
                    })?;
                out.write_all(&buf)?;
                pb.inc((vals.len() * T::BYTES) as u64);
                u0 = u1;
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

fn decompress(a: DecompressArgs) -> Result<(), Fail> {
    let nm = name(&a.input);
    let verify = verify_of(a.no_verify);
    let eng = Engines::new(a.threads)?;
    let input = Input::open_checked(&a.input, archive_head(&nm))?;
    let bytes = input.bytes();
    let summary = container::check(bytes, verify).map_err(|e| lib(&nm, e))?;
    let dtype = summary.dtype;
    let out_path = a.output.clone().unwrap_or_else(|| {
        if a.input.as_os_str() == "-" {
            return PathBuf::from("-");
        }
        let stem = a.input.with_extension("");
        let stem = if data::dtype_from_name(&stem).is_some() {
            stem.with_extension("")
        } else {
            stem
        };
        let mut s = stem.into_os_string();
        s.push(".decoded.");
        s.push(dtype.name());
        PathBuf::from(s)
    });
    let mut out = Output::create(&out_path, a.force, &[&input])?;
    match dtype {
        DType::F32 => decompress_t::<f32>(&nm, bytes, summary.kind, verify, &eng, &mut out)?,
        DType::F64 => decompress_t::<f64>(&nm, bytes, summary.kind, verify, &eng, &mut out)?,
    }
    let written = out.written();
    let to_stdout = out.is_stdout();
    out.finish(a.force)?;
    let line = format!(
        "{} -> {}: {} {} values ({} bytes)",
        a.input.display(),
        out_path.display(),
        written / dtype.size() as u64,
        dtype,
        written
    );
    report(if to_stdout { Path::new("-") } else { &out_path }, &line);
    Ok(())
}

fn decompress_t<T: Wrap>(
    nm: &str,
    bytes: &[u8],
    kind: ArchiveKind,
    verify: Verify,
    eng: &Engines,
    out: &mut Output,
) -> Result<(), Fail> {
    match kind {
        ArchiveKind::Pernix => {
            // Streamed in batches of whole chunks, each verified (in the call) before it is written.
            let h = StreamHeader::check(bytes, verify).map_err(|e| lib(nm, e))?;
            let units = h.units().unwrap_or(0);
            let per = (BATCH_BYTES / (h.unit_values() * T::BYTES)).max(1);
            let d = eng.pernix(PathKind::Parallel);
            let pb = bar(h.n * T::BYTES as u64, "decompressing");
            let mut buf: Vec<T> = Vec::new();
            let mut u0 = 0;
            while u0 < units {
                let u1 = (u0 + per).min(units);
                let (span, vals) = h.unit_span(u0..u1);
                buf.resize(vals.len(), T::ZERO);
                d.decompress_stream_units(&h, &bytes[span], u0, &mut buf, verify)
                    .map_err(|e| lib(nm, e))?;
                write_values(out, &buf)?;
                pb.inc((vals.len() * T::BYTES) as u64);
                u0 = u1;
            }
            pb.finish_and_clear();
            Ok(())
        }
        ArchiveKind::Szp => {
            // Validated whole by container::check; decoded a batch of blocks at a time.
            let pb = bar(out_len::<T>(bytes), "decompressing");
            let r = szpstream::decompress(
                bytes,
                &eng.par,
                out,
                szpstream::szp_fail(nm),
                |o, v: &[T]| {
                    pb.inc(size_of_val(v) as u64);
                    write_values(o, v)
                },
            );
            pb.finish_and_clear();
            r
        }
        ArchiveKind::Fzm => {
            let pb = spinner("decompressing");
            let d = dispatch::decompress(nm, bytes, PathKind::Parallel, eng);
            pb.finish_and_clear();
            let v = T::unwrap(d?).ok_or_else(|| Fail::new(Kind::Corrupt, "element type"))?;
            write_values(out, &v)
        }
    }
}

/// Decoded bytes of an SZp archive (for the progress bar).
fn out_len<T: Wrap>(bytes: &[u8]) -> u64 {
    fzpack::szp::header(bytes).map_or(0, |h| h.n.saturating_mul(T::BYTES as u64))
}

/// Writes values as little-endian bytes (in place on little-endian machines).
fn write_values<T: Wrap>(out: &mut Output, v: &[T]) -> Result<(), Fail> {
    match T::as_le_bytes(v) {
        Some(b) => out.write_all(b),
        None => out.write_all(&fzpack::values_to_le_bytes(v)),
    }
}

fn info(file: &Path, verify: Verify) -> Result<(), Fail> {
    let nm = name(file);
    // The head is checked before anything else is read (`info /dev/zero` stops at once); a
    // regular file is mapped, a pipe read (capped), and validated exactly as decompress does.
    let input = Input::open_checked(file, archive_head(&nm))?;
    let rows = container::describe(input.bytes(), verify).map_err(|e| lib(&nm, e))?;
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    println!("{}", file.display());
    for (k, v) in rows {
        println!("  {k:<w$}  {v}");
    }
    Ok(())
}

fn verify(a: VerifyArgs) -> Result<(), Fail> {
    let an = name(&a.archive);
    let archive = Input::open_checked(&a.archive, archive_head(&an))?;
    let abytes = archive.bytes();
    let eng = Engines::new(None)?;
    let decoded = dispatch::decompress(&an, abytes, PathKind::Parallel, &eng)?;
    let bound = dispatch::bound(&an, abytes)?;
    let original = Input::open(&a.original)?;
    let obytes = original.bytes();
    match decoded.dtype() {
        DType::F32 => verify_t::<f32>(&a, obytes, decoded, &bound),
        DType::F64 => verify_t::<f64>(&a, obytes, decoded, &bound),
    }
}

fn verify_t<T: Wrap>(
    a: &VerifyArgs,
    obytes: &[u8],
    decoded: Decoded,
    bound: &codec::Bound,
) -> Result<(), Fail> {
    let orig: Vec<T> = data::values_of(&a.original, obytes)?;
    let dec = T::unwrap(decoded).expect("dtype checked");
    if orig.len() != dec.len() {
        return Err(Fail::new(
            Kind::Input,
            format!(
                "{} has {} {} values, the archive {}",
                a.original.display(),
                orig.len(),
                T::TYPE,
                dec.len()
            ),
        ));
    }
    data::check_finite(&a.original, &orig)?;
    let q = data::quality(&orig, &dec);
    let (worst, at) = codec::worst_ratio(&orig, &dec, bound);
    println!("values      {}", orig.len());
    println!("max error   {:.6e} (at index {})", q.max_abs_err, q.argmax);
    println!(
        "bound       {:.6e}{}",
        bound.max(),
        match bound {
            codec::Bound::PerBlock { .. } => " (largest per-block bound)",
            codec::Bound::Uniform(_) => "",
        }
    );
    println!("err/bound   {worst:.4} (worst at index {at})");
    println!("RMSE        {:.6e}", q.rmse);
    println!("PSNR        {:.2} dB", q.psnr_db);
    if worst <= 1.0 {
        println!("OK: every value is within the bound");
        Ok(())
    } else {
        Err(Fail::new(
            Kind::Bound,
            format!(
                "bound violated: value {at} is off by {:.6e}, {worst:.4} times its bound {:.6e}",
                (orig[at].to_f64() - dec[at].to_f64()).abs(),
                bound.at(at)
            ),
        ))
    }
}
