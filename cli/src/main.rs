//! `fzpack`: compress, decompress, inspect, verify and benchmark scientific float files with
//! SZp and PERNIX. Usage: `docs/cli.md`.

mod bench;
mod codec;
mod data;
mod fail;
mod plot;
mod szpcli;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use fzpack::DType;
use fzpack::pernix::{BitWidth, BlockSize};
use indicatif::{ProgressBar, ProgressStyle};

use codec::{ArchiveKind, Decoded, Engines, ModeArg, PathKind, Setting, Wrap};
use fail::{Fail, Kind, lib};

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
        /// The archive (.szp, .fzm or .pnx).
        file: PathBuf,
    },
    /// Check an archive against the original: the error bound, max error, RMSE and PSNR.
    Verify(VerifyArgs),
    /// Measure ratio, quality and speed of every codec, setting and path.
    Bench(bench::BenchArgs),
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

/// The codec of `--codec`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CodecArg {
    /// SZp: every value within an error bound (--eb, --mode).
    Szp,
    /// PERNIX: fixed-rate blocks of --bits bits per value.
    Pernix,
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
    /// Raw little-endian input file (.f32 / .f64, or give --dtype).
    input: PathBuf,
    /// Output file [default: INPUT.szp, INPUT.fzm or INPUT.pnx].
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Element type [default: from the extension].
    #[arg(long, value_enum)]
    dtype: Option<DTypeArg>,
    /// Codec.
    #[arg(long, value_enum, default_value = "szp")]
    codec: CodecArg,
    /// SZp error bound (absolute, or relative to the value range with --mode noa).
    #[arg(long, default_value_t = 1e-3)]
    eb: f64,
    /// SZp error-bound mode.
    #[arg(long, value_enum, default_value = "noa")]
    mode: ModeArg,
    /// PERNIX bits per value (1..=24).
    #[arg(long, default_value_t = 16)]
    bits: u8,
    /// Block size: SZp values per block (1..=4096, default 128); PERNIX bytes per block
    /// (64, 128, 256, 512, 1024; default 64).
    #[arg(long)]
    block_size: Option<u32>,
    /// Worker threads [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Container: native or fzm (SZp only).
    #[arg(long, value_enum, default_value = "native")]
    format: FormatArg,
    /// Overwrite an existing output.
    #[arg(long)]
    force: bool,
}

#[derive(clap::Args, Debug)]
struct DecompressArgs {
    /// The archive.
    input: PathBuf,
    /// Output file [default: the archive name with its extension replaced by .f32/.f64].
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Worker threads [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Overwrite an existing output.
    #[arg(long)]
    force: bool,
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
    let r = match cli.cmd {
        Cmd::Compress(a) => compress(a),
        Cmd::Decompress(a) => decompress(a),
        Cmd::Info { file } => info(&file),
        Cmd::Verify(a) => verify(a),
        Cmd::Bench(a) => bench::run(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("fzpack: error: {f}");
            ExitCode::from(f.exit_code())
        }
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

fn setting_from(a: &CompressArgs) -> Result<Setting, Fail> {
    let usage = |m: String| Fail::new(Kind::Usage, m);
    Ok(match a.codec {
        CodecArg::Pernix => {
            let bits = BitWidth::new(a.bits)
                .map_err(|_| usage(format!("--bits {} is outside 1..=24", a.bits)))?;
            let bs = a.block_size.unwrap_or(64);
            let block = BlockSize::new(bs).map_err(|_| {
                usage(format!(
                    "--block-size {bs} is not a PERNIX block size (64, 128, 256, 512, 1024)"
                ))
            })?;
            if a.format == FormatArg::Fzm {
                return Err(usage("--format fzm is for SZp only".into()));
            }
            Setting::Pernix { bits, block }
        }
        CodecArg::Szp => {
            if !(a.eb.is_finite() && a.eb > 0.0) {
                return Err(usage(format!("--eb {} must be finite and > 0", a.eb)));
            }
            let block = a.block_size.unwrap_or(128);
            if !(1..=4096).contains(&block) {
                return Err(usage(format!(
                    "--block-size {block} is outside 1..=4096 for SZp"
                )));
            }
            Setting::Szp {
                mode: a.mode,
                eb: a.eb,
                block,
            }
        }
    })
}

fn compress(a: CompressArgs) -> Result<(), Fail> {
    let setting = setting_from(&a)?;
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
    let out = a.output.clone().unwrap_or_else(|| {
        let mut s = a.input.as_os_str().to_owned();
        s.push(".");
        s.push(ext);
        PathBuf::from(s)
    });
    if out.exists() && !a.force {
        return Err(Fail::new(
            Kind::Exists,
            format!(
                "{} already exists (use --force to overwrite)",
                out.display()
            ),
        ));
    }
    let eng = Engines::new(a.threads)?;
    let bytes = data::read_file(&a.input)?;
    let archive = match dtype {
        DType::F32 => compress_t::<f32>(&a.input, &bytes, &setting, &eng, a.format)?,
        DType::F64 => compress_t::<f64>(&a.input, &bytes, &setting, &eng, a.format)?,
    };
    data::write_output(&out, &archive, a.force)?;
    let n = bytes.len() / dtype.size();
    println!(
        "{} -> {}: {} {} values, {} -> {} bytes, ratio {:.3}, {:.3} bits/value ({} {})",
        a.input.display(),
        out.display(),
        n,
        dtype,
        bytes.len(),
        archive.len(),
        bytes.len() as f64 / archive.len() as f64,
        archive.len() as f64 * 8.0 / n.max(1) as f64,
        setting.codec(),
        setting.label()
    );
    Ok(())
}

fn compress_t<T: Wrap>(
    input: &Path,
    bytes: &[u8],
    setting: &Setting,
    eng: &Engines,
    format: FormatArg,
) -> Result<Vec<u8>, Fail> {
    let nm = name(input);
    // Size and finiteness are checked before anything is written.
    let values: Vec<T> = data::values_of(input, bytes)?;
    data::check_finite(input, &values)?;
    match *setting {
        Setting::Pernix { bits, block } => {
            // Streamed through the io adaptor in pieces, so the bar moves on big files.
            let d = eng.pernix(PathKind::Parallel).clone();
            let mut w = fzpack::io::PernixWriter::<_, T>::with_dispatcher(
                Vec::new(),
                bits,
                block,
                values.len() as u64,
                d,
            )
            .map_err(|e| lib(&nm, e))?;
            let pb = bar(bytes.len() as u64, "compressing");
            for piece in bytes.chunks(16 << 20) {
                w.write_all(piece)
                    .map_err(|e| Fail::new(Kind::Input, format!("{nm}: {e}")))?;
                pb.inc(piece.len() as u64);
            }
            pb.finish_and_clear();
            w.finish().map_err(|e| lib(&nm, e))
        }
        _ => {
            let pb = spinner("compressing");
            // SZp: the single-thread best path, which the parallel encoder does not beat on a
            // 2-core machine yet (same bytes either way; BENCHMARKS.md, "Parallel driver").
            let r = codec::compress(
                &nm,
                &values,
                setting,
                PathKind::Simd,
                eng,
                format == FormatArg::Fzm,
            );
            pb.finish_and_clear();
            r
        }
    }
}

fn decompress(a: DecompressArgs) -> Result<(), Fail> {
    let nm = name(&a.input);
    let bytes = data::read_file(&a.input)?;
    let kind = codec::detect(&nm, &bytes)?;
    let eng = Engines::new(a.threads)?;
    let decoded = match kind {
        ArchiveKind::Pernix => {
            let d = eng.pernix(PathKind::Parallel).clone();
            let mut r = fzpack::io::PernixReader::with_dispatcher(&bytes[..], d)
                .map_err(|e| lib(&nm, e))?;
            let h = *r.header();
            let total = h.n * h.dtype.size() as u64;
            let pb = bar(total, "decompressing");
            let mut raw = Vec::with_capacity(total as usize);
            let mut buf = vec![0u8; 4 << 20];
            loop {
                let k = r
                    .read(&mut buf)
                    .map_err(|e| Fail::new(Kind::Corrupt, format!("{nm}: {e}")))?;
                if k == 0 {
                    break;
                }
                raw.extend_from_slice(&buf[..k]);
                pb.inc(k as u64);
            }
            pb.finish_and_clear();
            // A complete stream has no bytes after its last frame.
            let expect = h.stream_len().unwrap_or(usize::MAX);
            if bytes.len() != expect {
                return Err(Fail::new(
                    Kind::Corrupt,
                    format!(
                        "{nm}: corrupt archive: {} bytes, the header needs {expect}",
                        bytes.len()
                    ),
                ));
            }
            (h.dtype, raw)
        }
        _ => {
            let pb = spinner("decompressing");
            let d = codec::decompress(&nm, &bytes, PathKind::Parallel, &eng);
            pb.finish_and_clear();
            let d = d?;
            (d.dtype(), d.to_le_bytes())
        }
    };
    let (dtype, raw) = decoded;
    let out = a.output.clone().unwrap_or_else(|| {
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
    data::write_output(&out, &raw, a.force)?;
    println!(
        "{} -> {}: {} {} values ({} bytes)",
        a.input.display(),
        out.display(),
        raw.len() / dtype.size(),
        dtype,
        raw.len()
    );
    Ok(())
}

fn info(file: &Path) -> Result<(), Fail> {
    let bytes = data::read_file(file)?;
    let rows = codec::describe(&name(file), &bytes)?;
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    println!("{}", file.display());
    for (k, v) in rows {
        println!("  {k:<w$}  {v}");
    }
    Ok(())
}

fn verify(a: VerifyArgs) -> Result<(), Fail> {
    let an = name(&a.archive);
    let abytes = data::read_file(&a.archive)?;
    let eng = Engines::new(None)?;
    let decoded = codec::decompress(&an, &abytes, PathKind::Parallel, &eng)?;
    let bound = codec::bound(&an, &abytes)?;
    let obytes = data::read_file(&a.original)?;
    match decoded.dtype() {
        DType::F32 => verify_t::<f32>(&a, &obytes, decoded, &bound),
        DType::F64 => verify_t::<f64>(&a, &obytes, decoded, &bound),
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
