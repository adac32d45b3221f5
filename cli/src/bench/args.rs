//! The bench's command line and what it selects: the settings, paths and datasets.

use std::path::{Path, PathBuf};

use fzpack::DType;
use fzpack::pernix::{BitWidth, BlockSize};

use crate::codec::{CodecArg, LayoutArg, ModeArg, PathKind, Setting, Values, Wrap};
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
    pub json: bool,
    /// A finer range of settings (SZp bounds 1e-1..1e-6 of the range, PERNIX bits 1..=24).
    #[arg(long)]
    sweep: bool,
    /// PERNIX bit widths, e.g. `4-24` or `4,8,12` (overrides the default and --sweep).
    #[arg(long)]
    bits: Option<String>,
    /// PERNIX bytes per block (64, 128, 256, 512, 1024).
    #[arg(long, default_value_t = 64)]
    pernix_block: u32,
    /// SZp bounds relative to the value range, e.g. `1e-2,1e-3,1e-4` (overrides the default
    /// and --sweep).
    #[arg(long)]
    eb: Option<String>,
    /// Add a generated random-walk f32 field of this many values (`16777216`, `16Mi`: 64 MiB),
    /// the running sum of standard normals; without files, it replaces the built-in fields.
    #[arg(long, value_name = "VALUES")]
    random_walk: Option<String>,
    /// Draw the rate-distortion curve (PSNR vs bits/value) per codec into this SVG file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// SZp layouts to measure (comma-separated; `fzgm` rows are named `szp-fzgm`, `interp`
    /// rows `szp-interp`) [default: heads,interp, the interpolation layout on the simd path
    /// only (its tile codec has no SIMD kernels: the scalar path would time the same code) and
    /// left out under --isa; with --plot: heads,fzgm,interp, so the plot compares them].
    #[arg(long, value_enum, value_delimiter = ',')]
    layout: Vec<LayoutArg>,
    /// Only this codec.
    #[arg(long, value_enum)]
    codec: Option<CodecArg>,
    /// Only these paths (comma-separated) [default: scalar,simd,parallel].
    #[arg(long, value_enum, value_delimiter = ',')]
    paths: Vec<PathArg>,
    /// Threads of the parallel path [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Narrow the detected CPU features to this ISA: the simd and parallel rows run what a CPU
    /// with only it would get (scalar = no SIMD kernels). An ISA this CPU lacks is an error.
    /// Several (`--isa avx512,avx2`) are measured side by side, setting by setting.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub isa: Vec<IsaArg>,
    /// Time the allocating API (szp::compress, decompress_stream, ...: a fresh output per
    /// repetition, page faults included) instead of warm reused buffers.
    #[arg(long)]
    pub e2e: bool,
    /// Minimum measuring time per timing, in seconds (the best repetition is reported).
    #[arg(long, default_value_t = 0.05)]
    pub min_time: f64,
    /// Overwrite an existing --plot file.
    #[arg(long)]
    pub force: bool,
}

/// `--paths` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum PathArg {
    Scalar,
    Simd,
    Parallel,
}

impl PathArg {
    fn kind(self) -> PathKind {
        match self {
            PathArg::Scalar => PathKind::Scalar,
            PathArg::Simd => PathKind::Simd,
            PathArg::Parallel => PathKind::Parallel,
        }
    }
}

/// `--isa` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum IsaArg {
    /// No SIMD kernels (the scalar reference paths).
    Scalar,
    /// x86_64 AVX2 + BMI2 (AVX-512 masked off).
    Avx2,
    /// x86_64 AVX-512 F/DQ/BW/VL + VBMI.
    Avx512,
    /// aarch64 NEON.
    Neon,
}

/// A field to measure: its name in the rows and its values.
pub struct Dataset {
    pub name: String,
    pub values: Values,
    /// Its dimensions (C order, slowest first), when known: the interpolation layout predicts
    /// over them (the block layouts are 1-D and do not store them here).
    pub dims: Option<Vec<usize>>,
}

/// `16777216`, `16Mi`, `64Ki`.
fn parse_count(s: &str) -> Result<usize, Fail> {
    let t = s.trim();
    let (num, mul) = if let Some(n) = t.strip_suffix("Mi") {
        (n, 1usize << 20)
    } else if let Some(n) = t.strip_suffix("Ki") {
        (n, 1 << 10)
    } else {
        (t, 1)
    };
    num.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .filter(|&n| n > 0 && n <= 1 << 32)
        .ok_or_else(|| {
            Fail::new(
                Kind::Usage,
                format!("--random-walk {s:?}: expected a value count in 1..=4Gi (e.g. 16Mi)"),
            )
        })
}

pub fn load(args: &BenchArgs) -> Result<Vec<Dataset>, Fail> {
    let walk = match &args.random_walk {
        Some(s) => Some(parse_count(s)?),
        None => None,
    };
    if args.files.is_empty() && walk.is_none() {
        return Ok(vec![
            Dataset {
                name: "builtin:climate_1024x2048.f32".into(),
                values: Values::F32(data::climate_field(1024, 2048)),
                dims: Some(vec![1024, 2048]),
            },
            Dataset {
                name: "builtin:seismic_1048576.f32".into(),
                values: Values::F32(data::seismic_trace(1 << 20)),
                dims: None,
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
        let n = values.len();
        let shape = dims.clone().or_else(|| data::dims_from_name(f));
        if let Some(d) = &shape {
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
        out.push(Dataset {
            name,
            values,
            dims: shape,
        });
    }
    if let Some(n) = walk {
        out.push(Dataset {
            name: format!("builtin:random_walk_{n}.f32"),
            values: Values::F32(data::random_walk(n)),
            dims: None,
        });
    }
    Ok(out)
}

/// A file's values; missing values (NaN, ±inf) are kept: SZp stores them exactly, and the
/// PERNIX settings leave such a file out (`run`).
fn load_t<T: Wrap>(f: &Path, bytes: &[u8]) -> Result<Vec<T>, Fail> {
    data::values_of(f, bytes)
}

/// `4-24` or `4,8,12` (ranges inclusive, mixable: `1,4-6`).
fn parse_bits(s: &str) -> Result<Vec<BitWidth>, Fail> {
    let bad = || {
        Fail::new(
            Kind::Usage,
            format!("--bits {s:?}: expected widths 1..=24 like 4-24 or 4,8,12"),
        )
    };
    let mut out = Vec::new();
    for part in s.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let a: u8 = a.trim().parse().map_err(|_| bad())?;
        let b: u8 = b.trim().parse().map_err(|_| bad())?;
        if a > b {
            return Err(bad());
        }
        for w in a..=b {
            out.push(BitWidth::new(w).map_err(|_| bad())?);
        }
    }
    Ok(out)
}

/// `1e-2,1e-3` (each in (0, 1]).
fn parse_ebs(s: &str) -> Result<Vec<f64>, Fail> {
    s.split(',')
        .map(|p| {
            p.trim()
                .parse::<f64>()
                .ok()
                .filter(|e| e.is_finite() && *e > 0.0 && *e <= 1.0)
                .ok_or_else(|| {
                    Fail::new(
                        Kind::Usage,
                        format!("--eb {s:?}: expected bounds in (0, 1] like 1e-2,1e-3"),
                    )
                })
        })
        .collect()
}

/// The paths a setting is timed on: `paths`, except for the interpolation layout in a run
/// that did not name its layouts, which is timed on the simd path alone when `paths` has it
/// (the tile codec runs the same code on every kernel, so the scalar row would repeat it, and
/// the default run keeps about its length).
pub fn paths_for(args: &BenchArgs, s: &Setting, paths: &[PathKind]) -> Vec<PathKind> {
    let default_interp = args.layout.is_empty()
        && matches!(
            s,
            Setting::Szp {
                layout: LayoutArg::Interp,
                ..
            }
        );
    if default_interp && paths.contains(&PathKind::Simd) {
        vec![PathKind::Simd]
    } else {
        paths.to_vec()
    }
}

/// The paths of `--paths`, in the order scalar, simd, parallel (all three by default).
pub fn paths(args: &BenchArgs) -> Vec<PathKind> {
    if args.paths.is_empty() {
        PathKind::ALL.to_vec()
    } else {
        PathKind::ALL
            .into_iter()
            .filter(|p| args.paths.iter().any(|a| a.kind() == *p))
            .collect()
    }
}

pub fn settings(args: &BenchArgs) -> Result<Vec<Setting>, Fail> {
    let mut s = Vec::new();
    let want = |c: CodecArg| args.codec.is_none_or(|x| x == c);
    if want(CodecArg::Szp) {
        let rels: Vec<f64> = if let Some(e) = &args.eb {
            parse_ebs(e)?
        } else if args.sweep {
            (2..=12).map(|k| 10f64.powf(-(k as f64) / 2.0)).collect()
        } else {
            vec![1e-2, 1e-3, 1e-4]
        };
        // The interpolation layout joins the default run (one path, `paths_for`), except
        // under --isa: its tile codec has no kernels for an ISA to narrow.
        let layouts = match (&args.layout[..], &args.plot, args.isa.is_empty()) {
            ([], Some(_), true) => vec![LayoutArg::Heads, LayoutArg::Fzgm, LayoutArg::Interp],
            ([], Some(_), false) => vec![LayoutArg::Heads, LayoutArg::Fzgm],
            ([], None, true) => vec![LayoutArg::DEFAULT, LayoutArg::Interp],
            ([], None, false) => vec![LayoutArg::DEFAULT],
            (l, ..) => l.to_vec(),
        };
        for layout in layouts {
            for &eb in &rels {
                s.push(Setting::Szp {
                    mode: ModeArg::Noa,
                    eb,
                    block: 128,
                    layout,
                });
            }
        }
    }
    if want(CodecArg::Pernix) {
        let bits: Vec<BitWidth> = if let Some(b) = &args.bits {
            parse_bits(b)?
        } else {
            let w: Vec<u8> = if args.sweep {
                (1..=24).collect()
            } else {
                vec![4, 8, 12, 16, 20, 24]
            };
            w.into_iter()
                .filter_map(|b| BitWidth::new(b).ok())
                .collect()
        };
        let block = BlockSize::checked(args.pernix_block).ok_or_else(|| {
            Fail::new(
                Kind::Usage,
                format!(
                    "--pernix-block {} is not a PERNIX block size (64, 128, 256, 512, 1024)",
                    args.pernix_block
                ),
            )
        })?;
        for bits in bits {
            s.push(Setting::Pernix { bits, block });
        }
    }
    Ok(s)
}
