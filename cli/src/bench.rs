//! `fzpack bench`: ratio, quality and speed per codec, setting and path.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fzpack::DType;
use fzpack::pernix::{BitWidth, BlockSize};

use crate::CodecArg;
use crate::codec::{self, Engines, ModeArg, PathKind, Setting, Wrap};
use crate::data;
use crate::fail::{Fail, Kind};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Raw .f32/.f64 files [default: built-in generated climate and seismic fields].
    files: Vec<PathBuf>,
    /// Dimensions for every file (e.g. 2161x4320) [default: from names like x_2161x4320.f32].
    #[arg(long)]
    dims: Option<String>,
    /// Print a JSON array instead of a table.
    #[arg(long)]
    json: bool,
    /// A finer range of settings (SZp bounds 1e-1..1e-6 of the range, PERNIX bits 1..=24).
    #[arg(long)]
    sweep: bool,
    /// Draw the rate-distortion curve (PSNR vs bits/value) per codec into this SVG file.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Only this codec.
    #[arg(long, value_enum)]
    codec: Option<CodecArg>,
    /// Threads of the parallel path [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Minimum measuring time per timing, in seconds (the best repetition is reported).
    #[arg(long, default_value_t = 0.05)]
    min_time: f64,
    /// Overwrite an existing --plot file.
    #[arg(long)]
    force: bool,
}

/// One result line.
#[derive(Clone, Debug)]
pub struct Row {
    pub file: String,
    pub codec: &'static str,
    pub path: &'static str,
    pub setting: String,
    pub ratio: f64,
    pub bits_per_value: f64,
    pub max_abs_err: f64,
    pub bound: f64,
    pub err_over_bound: f64,
    pub psnr_db: f64,
    pub compress_gbps: f64,
    pub decompress_gbps: f64,
    /// Compress speed over the scalar path's, same run.
    pub compress_vs_scalar: f64,
    /// Decompress speed over the scalar path's, same run.
    pub decompress_vs_scalar: f64,
    pub identical: bool,
}

struct Dataset {
    name: String,
    values: Values,
}

enum Values {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

fn load(args: &BenchArgs) -> Result<Vec<Dataset>, Fail> {
    if args.files.is_empty() {
        return Ok(vec![
            Dataset {
                name: "builtin:climate_1024x2048.f32".into(),
                values: Values::F32(data::climate_field(1024, 2048)),
            },
            Dataset {
                name: "builtin:seismic_1048576.f32".into(),
                values: Values::F32(data::seismic_trace(1 << 20)),
            },
        ]);
    }
    let dims = match &args.dims {
        Some(s) => Some(data::parse_dims(s).map_err(|m| Fail::new(Kind::Usage, m))?),
        None => None,
    };
    let mut out = Vec::new();
    for f in &args.files {
        let dtype = data::dtype_from_name(f).ok_or_else(|| {
            Fail::new(
                Kind::Input,
                format!("{}: extension must be .f32 or .f64", f.display()),
            )
        })?;
        let bytes = data::read_file(f)?;
        let values = match dtype {
            DType::F32 => Values::F32(load_t(f, &bytes)?),
            DType::F64 => Values::F64(load_t(f, &bytes)?),
        };
        let n = match &values {
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
        };
        if let Some(d) = dims.clone().or_else(|| data::dims_from_name(f)) {
            let p: usize = d.iter().product();
            if p != n {
                return Err(Fail::new(
                    Kind::Input,
                    format!(
                        "{}: dims {} give {p} values, the file holds {n}",
                        f.display(),
                        d.iter()
                            .map(|x| x.to_string())
                            .collect::<Vec<_>>()
                            .join("x")
                    ),
                ));
            }
        }
        let name = f
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| f.display().to_string());
        out.push(Dataset { name, values });
    }
    Ok(out)
}

fn load_t<T: Wrap>(f: &Path, bytes: &[u8]) -> Result<Vec<T>, Fail> {
    let v: Vec<T> = data::values_of(f, bytes)?;
    data::check_finite(f, &v)?;
    Ok(v)
}

fn settings(args: &BenchArgs) -> Vec<Setting> {
    let mut s = Vec::new();
    let want = |c: CodecArg| args.codec.is_none_or(|x| x == c);
    if want(CodecArg::Szp) && crate::szpcli::available() {
        let rels: Vec<f64> = if args.sweep {
            (2..=12).map(|k| 10f64.powf(-(k as f64) / 2.0)).collect()
        } else {
            vec![1e-2, 1e-3, 1e-4]
        };
        for eb in rels {
            s.push(Setting::Szp {
                mode: ModeArg::Noa,
                eb,
                block: 128,
            });
        }
    }
    if want(CodecArg::Pernix) {
        let bits: Vec<u8> = if args.sweep {
            (1..=24).collect()
        } else {
            vec![4, 8, 12, 16, 20, 24]
        };
        for b in bits {
            s.push(Setting::Pernix {
                bits: BitWidth::new(b).expect("valid"),
                block: BlockSize::B64,
            });
        }
    }
    s
}

/// Best wall time of `f` over repetitions lasting at least `min_time` (at least 2 runs).
fn best_time(min_time: f64, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut best = f64::INFINITY;
    for rep in 0.. {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
        if (rep >= 1 && start.elapsed().as_secs_f64() >= min_time) || rep >= 200 {
            break;
        }
    }
    best
}

pub fn run(args: BenchArgs) -> Result<(), Fail> {
    if let Some(p) = &args.plot
        && p.exists()
        && !args.force
    {
        return Err(Fail::new(
            Kind::Exists,
            format!("{} already exists (use --force to overwrite)", p.display()),
        ));
    }
    if !(args.min_time.is_finite() && args.min_time >= 0.0) {
        return Err(Fail::new(Kind::Usage, "--min-time must be >= 0"));
    }
    let eng = Engines::new(args.threads)?;
    let datasets = load(&args)?;
    let settings = settings(&args);
    if args.codec == Some(CodecArg::Szp) && !crate::szpcli::available() {
        return Err(Fail::new(
            Kind::Usage,
            "SZp is not available in this build yet",
        ));
    }
    if !crate::szpcli::available() {
        eprintln!("fzpack: note: SZp is not available in this build; PERNIX only");
    }
    let total = (datasets.len() * settings.len()) as u64;
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{msg:>24} [{bar:30}] {pos}/{len}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut rows = Vec::new();
    for ds in &datasets {
        for s in &settings {
            pb.set_message(format!("{} {}", s.codec(), s.label()));
            match &ds.values {
                Values::F32(v) => bench_one(&ds.name, v, s, &eng, args.min_time, &mut rows)?,
                Values::F64(v) => bench_one(&ds.name, v, s, &eng, args.min_time, &mut rows)?,
            }
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    if args.json {
        println!("{}", to_json(&rows));
    } else {
        print!("{}", table(&rows, eng.par.threads()));
    }
    if let Some(p) = &args.plot {
        let svg = crate::plot::svg(&rows);
        crate::data::write_output(p, svg.as_bytes(), args.force)?;
        eprintln!("fzpack: wrote {}", p.display());
    }
    Ok(())
}

fn bench_one<T: Wrap>(
    file: &str,
    values: &[T],
    s: &Setting,
    eng: &Engines,
    min_time: f64,
    rows: &mut Vec<Row>,
) -> Result<(), Fail> {
    let raw = (values.len() * T::BYTES) as f64;
    let reference = codec::compress(file, values, s, PathKind::Scalar, eng, false)?;
    let dec = codec::decompress(file, &reference, PathKind::Scalar, eng)?;
    let ref_bits = dec.to_le_bytes();
    let dec = T::unwrap(dec).expect("same dtype");
    let q = data::quality(values, &dec);
    let bound = codec::bound(file, &reference)?;
    let (worst, _) = codec::worst_ratio(values, &dec, &bound);
    for path in PathKind::ALL {
        let mut out = Vec::new();
        let mut err = None;
        let tc = best_time(min_time, || {
            match codec::compress(file, values, s, path, eng, false) {
                Ok(a) => out = a,
                Err(e) => err = Some(e),
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        let mut same = out == reference;
        let mut decoded = None;
        let td = best_time(min_time, || {
            decoded = codec::decompress(file, &reference, path, eng).ok();
        });
        same &= decoded.map(|d| d.to_le_bytes()) == Some(ref_bits.clone());
        rows.push(Row {
            file: file.to_string(),
            codec: s.codec(),
            path: path.name(),
            setting: s.label(),
            ratio: raw / reference.len() as f64,
            bits_per_value: reference.len() as f64 * 8.0 / values.len().max(1) as f64,
            max_abs_err: q.max_abs_err,
            bound: bound.max(),
            err_over_bound: worst,
            psnr_db: q.psnr_db,
            compress_gbps: raw / tc / 1e9,
            decompress_gbps: raw / td / 1e9,
            compress_vs_scalar: 1.0,
            decompress_vs_scalar: 1.0,
            identical: same,
        });
    }
    let k = rows.len() - PathKind::ALL.len();
    let (c0, d0) = (rows[k].compress_gbps, rows[k].decompress_gbps);
    for r in &mut rows[k..] {
        r.compress_vs_scalar = r.compress_gbps / c0;
        r.decompress_vs_scalar = r.decompress_gbps / d0;
    }
    Ok(())
}

fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".into()
    }
}

fn esc(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

/// The rows as a JSON array of objects.
pub fn to_json(rows: &[Row]) -> String {
    let mut o = String::from("[\n");
    for (i, r) in rows.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {{\"file\": \"{}\", \"codec\": \"{}\", \"path\": \"{}\", \"setting\": \"{}\", \
             \"ratio\": {}, \"bits_per_value\": {}, \"max_abs_err\": {}, \"bound\": {}, \
             \"err_over_bound\": {}, \"psnr_db\": {}, \"compress_gbps\": {}, \
             \"decompress_gbps\": {}, \"compress_vs_scalar\": {}, \
             \"decompress_vs_scalar\": {}, \"identical_to_scalar\": {}}}{}",
            esc(&r.file),
            r.codec,
            r.path,
            esc(&r.setting),
            num(r.ratio),
            num(r.bits_per_value),
            num(r.max_abs_err),
            num(r.bound),
            num(r.err_over_bound),
            num(r.psnr_db),
            num(r.compress_gbps),
            num(r.decompress_gbps),
            num(r.compress_vs_scalar),
            num(r.decompress_vs_scalar),
            r.identical,
            if i + 1 < rows.len() { "," } else { "" }
        );
    }
    o.push(']');
    o
}

/// The rows as an aligned text table.
pub fn table(rows: &[Row], threads: usize) -> String {
    let head = [
        "file",
        "codec",
        "path",
        "setting",
        "ratio",
        "bits/val",
        "max_err",
        "bound",
        "err/bnd",
        "PSNR dB",
        "comp GB/s",
        "(x)",
        "dec GB/s",
        "(x)",
        "same",
    ];
    let cells: Vec<[String; 15]> = rows
        .iter()
        .map(|r| {
            [
                r.file.clone(),
                r.codec.to_string(),
                r.path.to_string(),
                r.setting.clone(),
                format!("{:.2}", r.ratio),
                format!("{:.3}", r.bits_per_value),
                format!("{:.3e}", r.max_abs_err),
                format!("{:.3e}", r.bound),
                format!("{:.3}", r.err_over_bound),
                if r.psnr_db.is_finite() {
                    format!("{:.2}", r.psnr_db)
                } else {
                    "inf".into()
                },
                format!("{:.3}", r.compress_gbps),
                format!("{:.2}", r.compress_vs_scalar),
                format!("{:.3}", r.decompress_gbps),
                format!("{:.2}", r.decompress_vs_scalar),
                if r.identical { "yes" } else { "NO" }.into(),
            ]
        })
        .collect();
    let mut w = head.map(str::len);
    for c in &cells {
        for (wi, s) in w.iter_mut().zip(c) {
            *wi = (*wi).max(s.len());
        }
    }
    let mut o = String::new();
    let line = |o: &mut String, c: &[String]| {
        for (k, s) in c.iter().enumerate() {
            if k < 4 {
                let _ = write!(o, "{s:<width$}  ", width = w[k]);
            } else {
                let _ = write!(o, "{s:>width$}  ", width = w[k]);
            }
        }
        let t = o.trim_end().len();
        o.truncate(t);
        o.push('\n');
    };
    line(&mut o, &head.map(String::from));
    for c in &cells {
        line(&mut o, c);
    }
    let _ = writeln!(
        o,
        "GB/s of uncompressed float data, best of repeated runs; (x) = speed over the scalar \
         path in this run; parallel = {threads} threads; same = bytes and decoded values \
         identical to the scalar path"
    );
    o
}
