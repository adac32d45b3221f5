//! `fzpack bench`: ratio, quality and speed per codec, setting and path.
//!
//! By default the codec is timed on warm, reused buffers (SZp compresses into a slice of the
//! format's worst case allocated once, `compress_with` / `compress_par_slice`; decodes and
//! PERNIX use the `*_into` / `*_stream_into` variants; one output buffer per path reused by
//! every repetition, as lzbench and pcodec's bench do); `--e2e` times the allocating API a
//! user of `compress_vec` sees. A warm single-thread `memcpy` of the same size (M) is measured
//! in the same run and every row carries its ratio to it. `--isa` narrows the detected CPU
//! features, so the `simd` and `parallel` rows run the kernels a CPU with only that ISA would
//! get; with several, each path's kernels take turns call by call (so do the verified and
//! unverified decodes), so their ratios come from the same moments of the run.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fzpack::DType;
use fzpack::arch::CpuFeatures;
use fzpack::pernix::{self, Backend, BitWidth, BlockSize, Dispatcher, StreamHeader, Verify};
use fzpack::szp::{self, Config};

use crate::codec::{self, CodecArg, Engines, LayoutArg, ModeArg, PathKind, Setting, Wrap};
use crate::data;
use crate::dispatch;
use crate::fail::{Fail, Kind, lib};
use crate::plot::Series;

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
    plot: Option<PathBuf>,
    /// SZp block layouts to measure (comma-separated; `fzgm` rows are named `szp-fzgm`)
    /// [default: heads; with --plot: heads,fzgm, so the plot compares them].
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
    threads: Option<usize>,
    /// Narrow the detected CPU features to this ISA: the simd and parallel rows run what a CPU
    /// with only it would get (scalar = no SIMD kernels). An ISA this CPU lacks is an error.
    /// Several (`--isa avx512,avx2`) are measured side by side, setting by setting.
    #[arg(long, value_enum, value_delimiter = ',')]
    isa: Vec<IsaArg>,
    /// Time the allocating API (compress_vec, decompress_stream, ...: a fresh output per
    /// repetition, page faults included) instead of warm reused buffers.
    #[arg(long)]
    e2e: bool,
    /// Minimum measuring time per timing, in seconds (the best repetition is reported).
    #[arg(long, default_value_t = 0.05)]
    min_time: f64,
    /// Overwrite an existing --plot file.
    #[arg(long)]
    force: bool,
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

/// One result line. The JSON keys of the first fields (through `identical_to_scalar`) are the
/// stable ones; later fields were added for issue #15.
#[derive(Clone, Debug, serde::Serialize)]
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
    /// Compress speed over the scalar path's, same run (null without a scalar row).
    pub compress_vs_scalar: f64,
    /// Decompress speed over the scalar path's, same run.
    pub decompress_vs_scalar: f64,
    #[serde(rename = "identical_to_scalar")]
    pub identical: bool,
    /// The kernel that ran (`scalar`, `portable`, `avx2`, `bmi2`, `avx512`, `neon`).
    pub kernel: &'static str,
    /// The ISA the features were narrowed to (`--isa`), or `detected`.
    pub isa: &'static str,
    /// Threads of this row (1 except on the parallel path).
    pub threads: usize,
    /// `warm` (reused output buffers) or `e2e` (the allocating API).
    pub timing: &'static str,
    pub values: usize,
    pub raw_bytes: usize,
    /// Warm single-thread memcpy of `raw_bytes` in this run (M), GB/s.
    pub memcpy_gbps: f64,
    pub compress_vs_memcpy: f64,
    pub decompress_vs_memcpy: f64,
    /// Speed over the simd row of the same setting (null without one).
    pub compress_vs_simd: f64,
    pub decompress_vs_simd: f64,
    /// Decompress without checksum verification (`Verify::Skip`: the PERNIX chunk CRCs, the
    /// SZp v2 chunk CRCs; the structure is still checked).
    pub decompress_noverify_gbps: Option<f64>,
    /// 1-minute load average when the row was measured (null where unknown).
    pub load1: Option<f64>,
    /// Speeds by CPU time instead of the wall clock (best repetition): the thread's CPU time
    /// on single-thread paths (what an otherwise idle core gives; on a loaded machine the
    /// wall clock also counts the time spent waiting for a core), the process's CPU time
    /// summed over threads on the parallel path (its total work: `threads` × this over the
    /// simd row's is the speedup bound on free cores).
    pub compress_cpu_gbps: f64,
    pub decompress_cpu_gbps: f64,
    pub decompress_noverify_cpu_gbps: Option<f64>,
    /// The memcpy of `memcpy_gbps` by thread CPU time (M_cpu) and the speeds over it.
    pub memcpy_cpu_gbps: f64,
    pub compress_cpu_vs_memcpy: f64,
    pub decompress_cpu_vs_memcpy: f64,
    /// Block size: SZp values per block, PERNIX bytes per block.
    pub block: u32,
}

struct Dataset {
    name: String,
    values: Values,
}

enum Values {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
        }
    }
    fn bytes(&self) -> &[u8] {
        match self {
            Values::F32(v) => bytemuck::cast_slice(v),
            Values::F64(v) => bytemuck::cast_slice(v),
        }
    }
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

fn load(args: &BenchArgs) -> Result<Vec<Dataset>, Fail> {
    let walk = match &args.random_walk {
        Some(s) => Some(parse_count(s)?),
        None => None,
    };
    if args.files.is_empty() && walk.is_none() {
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
        let n = values.len();
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
    if let Some(n) = walk {
        out.push(Dataset {
            name: format!("builtin:random_walk_{n}.f32"),
            values: Values::F32(data::random_walk(n)),
        });
    }
    Ok(out)
}

fn load_t<T: Wrap>(f: &Path, bytes: &[u8]) -> Result<Vec<T>, Fail> {
    let v: Vec<T> = data::values_of(f, bytes)?;
    data::check_finite(f, &v)?;
    Ok(v)
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

fn settings(args: &BenchArgs) -> Result<Vec<Setting>, Fail> {
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
        let layouts = match (&args.layout[..], &args.plot) {
            ([], Some(_)) => vec![LayoutArg::Heads, LayoutArg::Fzgm],
            ([], None) => vec![LayoutArg::DEFAULT],
            (l, _) => l.to_vec(),
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

/// The kernels of the simd and parallel rows, from the (possibly narrowed) CPU features.
struct Kernels {
    isa: &'static str,
    szp: szp::Path,
    pernix_scalar: Dispatcher,
    pernix_simd: Dispatcher,
    pernix_par: Dispatcher,
}

fn feature_names(f: CpuFeatures) -> String {
    let names = [
        (CpuFeatures::AVX2, "avx2"),
        (CpuFeatures::BMI2, "bmi2"),
        (CpuFeatures::AVX512F, "avx512f"),
        (CpuFeatures::AVX512DQ, "avx512dq"),
        (CpuFeatures::AVX512BW, "avx512bw"),
        (CpuFeatures::AVX512VL, "avx512vl"),
        (CpuFeatures::AVX512VBMI, "avx512vbmi"),
        (CpuFeatures::NEON, "neon"),
        (CpuFeatures::SVE2, "sve2"),
    ];
    let have: Vec<&str> = names
        .iter()
        .filter(|(m, _)| f.has(*m))
        .map(|(_, n)| *n)
        .collect();
    if have.is_empty() {
        "none".into()
    } else {
        have.join(", ")
    }
}

/// The detected features narrowed to `isa`, or the error for an ISA this CPU lacks.
fn narrow(isa: Option<IsaArg>, f: CpuFeatures) -> Result<(&'static str, CpuFeatures), Fail> {
    const AVX512: u32 = CpuFeatures::AVX512F
        | CpuFeatures::AVX512DQ
        | CpuFeatures::AVX512BW
        | CpuFeatures::AVX512VL
        | CpuFeatures::AVX512VBMI;
    let arch = std::env::consts::ARCH;
    let lacks = |name: &str, what: &str, want_arch: &str| {
        let why = if arch != want_arch {
            format!("{name} is an ISA of {want_arch}; this build runs on {arch}")
        } else {
            format!("this CPU lacks {what} (detected: {})", feature_names(f))
        };
        Fail::new(Kind::Usage, format!("--isa {name}: {why}"))
    };
    match isa {
        None => Ok(("detected", f)),
        Some(IsaArg::Scalar) => Ok(("scalar", CpuFeatures::none())),
        Some(IsaArg::Avx2) if cfg!(target_arch = "x86_64") && f.avx2_bmi2() => {
            Ok(("avx2", f.without(AVX512)))
        }
        Some(IsaArg::Avx2) => Err(lacks("avx2", "AVX2 + BMI2", "x86_64")),
        Some(IsaArg::Avx512) if cfg!(target_arch = "x86_64") && f.avx512_vbmi() => {
            Ok(("avx512", f))
        }
        Some(IsaArg::Avx512) => Err(lacks("avx512", "AVX-512 F/DQ/BW/VL + VBMI", "x86_64")),
        Some(IsaArg::Neon) if cfg!(target_arch = "aarch64") && f.neon() => {
            Ok(("neon", f.without(CpuFeatures::SVE2)))
        }
        Some(IsaArg::Neon) => Err(lacks("neon", "NEON", "aarch64")),
    }
}

/// [`szp::Path::best`] for the features `f`.
fn best_szp_path(f: CpuFeatures) -> szp::Path {
    [szp::Path::Avx512, szp::Path::Avx2, szp::Path::Neon]
        .into_iter()
        .find(|p| p.is_available_with(f))
        .unwrap_or(szp::Path::Scalar)
}

fn backend_name(b: Backend) -> &'static str {
    match b {
        Backend::Fallback => "scalar",
        Backend::X86Avx2 => "avx2",
        Backend::X86Bmi2 => "bmi2",
        Backend::X86Avx512Vbmi => "avx512",
        Backend::Arm64Neon => "neon",
        Backend::Arm64Sve => "sve",
        _ => "other",
    }
}

impl Kernels {
    fn new(isa: Option<IsaArg>, eng: &Engines) -> Result<Self, Fail> {
        let (name, f) = narrow(isa, CpuFeatures::detect())?;
        let usage = |e: pernix::Error| Fail::new(Kind::Usage, e.to_string());
        let backend = pernix::CoreDispatcher::with_features(Backend::Auto, f)
            .map_err(usage)?
            .backend();
        Ok(Kernels {
            isa: name,
            szp: best_szp_path(f),
            pernix_scalar: Dispatcher::new(Backend::Fallback).map_err(usage)?,
            pernix_simd: Dispatcher::new(backend).map_err(usage)?,
            pernix_par: Dispatcher::with_parallel(backend, eng.par.clone()).map_err(usage)?,
        })
    }

    fn szp_path(&self, p: PathKind) -> szp::Path {
        match p {
            PathKind::Scalar => szp::Path::Scalar,
            _ => self.szp,
        }
    }

    fn pernix(&self, p: PathKind) -> &Dispatcher {
        match p {
            PathKind::Scalar => &self.pernix_scalar,
            PathKind::Simd => &self.pernix_simd,
            PathKind::Parallel => &self.pernix_par,
        }
    }
}

/// Which CPU-time clock a timing also reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cpu {
    /// The calling thread's CPU time (single-thread paths: the time it ran, not the time it
    /// waited for a core on a loaded machine).
    Thread,
    /// The whole process's CPU time, summed over threads (the parallel path: its total work).
    Process,
}

/// CPU seconds of `clock` (NaN where unavailable).
fn cpu_now(clock: Cpu) -> f64 {
    let id = match clock {
        Cpu::Thread => libc::CLOCK_THREAD_CPUTIME_ID,
        Cpu::Process => libc::CLOCK_PROCESS_CPUTIME_ID,
    };
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // `id` is one of the clock ids libc defines; clock_gettime writes nothing but `ts`.
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    if rc == 0 {
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    } else {
        f64::NAN
    }
}

/// The best wall time and the best CPU time of repetitions (seconds).
#[derive(Clone, Copy, Debug)]
struct Secs {
    wall: f64,
    cpu: f64,
}

impl Secs {
    /// No time yet (every measured one is shorter).
    const NEVER: Secs = Secs {
        wall: f64::INFINITY,
        cpu: f64::INFINITY,
    };

    /// `bytes` per second in GB/s, by the wall clock and by CPU time.
    fn gbps(self, bytes: f64) -> (f64, f64) {
        (bytes / self.wall / 1e9, bytes / self.cpu / 1e9)
    }
}

/// Best wall time (and best CPU time of `clock`) of `f` over repetitions lasting at least
/// `min_time` (at least 2 timed runs, after one untimed warm-up run when `warm_up`). Only the
/// call is timed: the previous result is dropped after the clocks stop. Returns the times and
/// the last result.
fn best_time<R>(
    min_time: f64,
    warm_up: bool,
    clock: Cpu,
    mut f: impl FnMut() -> Result<R, Fail>,
) -> Result<(Secs, R), Fail> {
    let mut last = if warm_up { Some(f()?) } else { None };
    let start = Instant::now();
    let mut best = Secs::NEVER;
    for rep in 0.. {
        last = Some(time_one(&mut best, clock, &mut f)?);
        if (rep >= 1 && start.elapsed().as_secs_f64() >= min_time) || rep >= 200 {
            break;
        }
    }
    match last {
        Some(r) => Ok((best, r)),
        None => unreachable!("the loop runs at least once"),
    }
}

/// One timed call of `f`, folded into `best`.
fn time_one<R>(
    best: &mut Secs,
    clock: Cpu,
    f: &mut impl FnMut() -> Result<R, Fail>,
) -> Result<R, Fail> {
    let c = cpu_now(clock);
    let t = Instant::now();
    let r = black_box(f()?);
    best.wall = best.wall.min(t.elapsed().as_secs_f64());
    best.cpu = best.cpu.min(cpu_now(clock) - c);
    Ok(r)
}

/// One timed call of [`best_time_turns`]: writes into the shared buffer.
type Turn<'a, B> = Box<dyn FnMut(&mut B) -> Result<(), Fail> + 'a>;

/// [`best_time`] of calls that take turns, one repetition each (for `n·min_time` in all, `n`
/// calls), all writing into `buf`: the verified and the unverified decode, and the same call
/// on each `--isa`, so that a drift in the machine's speed (another job, the clock, the
/// caches' state) falls on all of them alike and the ratios read off them (the verification
/// cost, AVX2 over AVX-512) come from the same moments. Timing them one after the other moved
/// the verification cost by ±5 points and AVX2 ÷ AVX-512 by ±0.1 between runs on a quiet
/// machine. One output buffer for all keeps the working set of a single call (two 64 MiB
/// outputs taking turns fall out of a large L3 that one stays partly in, and the figures
/// would no longer compare with M). Returns the best times in the order of `fs`.
fn best_time_turns<B>(
    min_time: f64,
    clock: Cpu,
    buf: &mut B,
    fs: &mut [Turn<'_, B>],
) -> Result<Vec<Secs>, Fail> {
    for f in fs.iter_mut() {
        f(buf)?; // warm-up of each
    }
    let start = Instant::now();
    let mut best = vec![Secs::NEVER; fs.len()];
    for rep in 0.. {
        for (f, b) in fs.iter_mut().zip(best.iter_mut()) {
            time_one(b, clock, &mut || f(buf))?;
        }
        if (rep >= 1 && start.elapsed().as_secs_f64() >= fs.len() as f64 * min_time) || rep >= 200 {
            break;
        }
    }
    Ok(best)
}

/// A warm single-thread memcpy of `src.len()` bytes (destination allocated and touched
/// first), GB/s by the wall clock and by thread CPU time, best of repetitions.
fn memcpy_gbps(src: &[u8], min_time: f64) -> (f64, f64) {
    let mut dst = vec![0u8; src.len()];
    let r = best_time(min_time.max(0.02), true, Cpu::Thread, || {
        black_box(&mut dst[..]).copy_from_slice(black_box(src));
        Ok(())
    });
    match r {
        Ok((t, ())) => t.gbps(src.len() as f64),
        Err(_) => (f64::NAN, f64::NAN),
    }
}

/// The 1-minute load average (Linux), for the record.
fn load1() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

struct Run<'a> {
    eng: &'a Engines,
    ks: &'a [Kernels],
    paths: &'a [PathKind],
    min_time: f64,
    e2e: bool,
    memcpy: (f64, f64),
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
    let kernels: Vec<Kernels> = if args.isa.is_empty() {
        vec![Kernels::new(None, &eng)?]
    } else {
        let mut ks = Vec::new();
        for (i, isa) in args.isa.iter().enumerate() {
            if !args.isa[..i].contains(isa) {
                ks.push(Kernels::new(Some(*isa), &eng)?);
            }
        }
        ks
    };
    let settings = settings(&args)?;
    let datasets = load(&args)?;
    let paths: Vec<PathKind> = if args.paths.is_empty() {
        PathKind::ALL.to_vec()
    } else {
        PathKind::ALL
            .into_iter()
            .filter(|p| args.paths.iter().any(|a| a.kind() == *p))
            .collect()
    };
    let total = (datasets.len() * settings.len()) as u64;
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{msg:>24} [{bar:30}] {pos}/{len}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let load_start = load1();
    let mut rows = Vec::new();
    let mut copies = Vec::new();
    for ds in &datasets {
        let before = memcpy_gbps(ds.values.bytes(), args.min_time);
        let mut r = Run {
            eng: &eng,
            ks: &kernels,
            paths: &paths,
            min_time: args.min_time,
            e2e: args.e2e,
            memcpy: before,
        };
        let first = rows.len();
        for s in &settings {
            pb.set_message(format!("{} {}", s.codec(), s.label()));
            match &ds.values {
                Values::F32(v) => bench_one(&ds.name, v, s, &r, &mut rows)?,
                Values::F64(v) => bench_one(&ds.name, v, s, &r, &mut rows)?,
            }
            pb.inc(1);
        }
        // M is the better of a copy before and after the dataset's rows (the machine is
        // shared: the faster one is the closer to the real copy speed).
        let after = memcpy_gbps(ds.values.bytes(), args.min_time);
        r.memcpy = (before.0.max(after.0), before.1.max(after.1));
        let (m, mc) = r.memcpy;
        for row in &mut rows[first..] {
            row.memcpy_gbps = m;
            row.compress_vs_memcpy = row.compress_gbps / m;
            row.decompress_vs_memcpy = row.decompress_gbps / m;
            row.memcpy_cpu_gbps = mc;
            row.compress_cpu_vs_memcpy = row.compress_cpu_gbps / mc;
            row.decompress_cpu_vs_memcpy = row.decompress_cpu_gbps / mc;
        }
        copies.push((ds.name.clone(), ds.values.bytes().len(), m, mc));
    }
    pb.finish_and_clear();
    let foot = Footer {
        threads: eng.par.threads(),
        e2e: args.e2e,
        isa: kernels.iter().map(|k| k.isa).collect::<Vec<_>>().join(", "),
        copies,
        load: (load_start, load1()),
    };
    // With `--plot -` the SVG is standard output's payload: the table goes to stderr.
    let plot_stdout = args.plot.as_ref().is_some_and(|p| p.as_os_str() == "-");
    let text = if args.json {
        format!("{}\n", to_json(&rows)?)
    } else {
        table(&rows, &foot)
    };
    if plot_stdout {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    if let Some(p) = &args.plot {
        let svg = crate::plot::svg(rd_series(&rows));
        crate::data::write_output(p, svg.as_bytes(), args.force)?;
        eprintln!("fzpack: wrote {}", p.display());
    }
    Ok(())
}

/// Compress and decompress times of one path, whether the outputs equal the references, and
/// (PERNIX) the decompress time without checksum verification.
struct Timed {
    tc: Secs,
    td: Secs,
    td_noverify: Option<Secs>,
    same: bool,
}

/// The three timings of one kernel on the allocating API (`--e2e`), and whether its archive
/// and values equal the reference's.
fn e2e_timed<T: Wrap>(
    (tc, arch): (Secs, Vec<u8>),
    (td, dec): (Secs, Vec<T>),
    tn: Secs,
    reference: &[u8],
    ref_bits: &[u8],
) -> Timed {
    Timed {
        tc,
        td,
        td_noverify: Some(tn),
        same: arch == reference && fzpack::values_to_le_bytes(&dec) == ref_bits,
    }
}

/// Warm timing of one path on the kernels `ks`: `compress(k, archive)` of every kernel in
/// turns, each into its own (small) archive buffer, then the unverified and verified decodes
/// (`decode(k, values, verify)`) of every kernel in turns into one output buffer
/// ([`best_time_turns`]); then each kernel's archive and values, checked after the timing
/// (the output buffer is shared).
#[allow(clippy::too_many_arguments)] // the run, its kernels and the reference
fn time_warm<T: Wrap, K: Copy, A: AsRef<[u8]>>(
    r: &Run,
    clock: Cpu,
    ks: &[K],
    mut archs: Vec<A>,
    mut dec: Vec<T>,
    compress: impl Fn(K, &mut A) -> Result<(), Fail> + Copy,
    decode: impl Fn(K, &mut Vec<T>, bool) -> Result<(), Fail> + Copy,
    reference: &[u8],
    ref_bits: &[u8],
) -> Result<Vec<Timed>, Fail> {
    let mut fs: Vec<Turn<'_, Vec<A>>> = Vec::new();
    for (i, &k) in ks.iter().enumerate() {
        fs.push(Box::new(move |a: &mut Vec<A>| compress(k, &mut a[i])));
    }
    let tcs = best_time_turns(r.min_time, clock, &mut archs, &mut fs)?;
    let mut fs: Vec<Turn<'_, Vec<T>>> = Vec::new();
    for &k in ks {
        fs.push(Box::new(move |v: &mut Vec<T>| decode(k, v, false)));
        fs.push(Box::new(move |v: &mut Vec<T>| decode(k, v, true)));
    }
    let tds = best_time_turns(r.min_time, clock, &mut dec, &mut fs)?;
    let mut out = Vec::with_capacity(ks.len());
    for (i, (arch, &k)) in archs.iter().zip(ks).enumerate() {
        decode(k, &mut dec, true)?;
        out.push(Timed {
            tc: tcs[i],
            td: tds[2 * i + 1],
            td_noverify: Some(tds[2 * i]),
            same: arch.as_ref() == reference && fzpack::values_to_le_bytes(&dec) == ref_bits,
        });
    }
    Ok(out)
}

/// An SZp archive written into a slice allocated once: the buffer (the format's worst case)
/// and the archive's length.
struct SliceArchive {
    buf: Vec<u8>,
    len: usize,
}

impl AsRef<[u8]> for SliceArchive {
    fn as_ref(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }
}

#[allow(clippy::too_many_arguments)]
fn time_szp<T: Wrap>(
    file: &str,
    values: &[T],
    cfg: &Config,
    path: PathKind,
    ks: &[&Kernels],
    r: &Run,
    reference: &[u8],
    ref_bits: &[u8],
) -> Result<Vec<Timed>, Fail> {
    let par = &r.eng.par;
    let clock = if path == PathKind::Parallel {
        Cpu::Process
    } else {
        Cpu::Thread
    };
    let e = |e| lib(file, e);
    let decompress = |p: szp::Path, v: &mut Vec<T>, verify: bool| {
        let verify = if verify {
            szp::Verify::Checksums
        } else {
            szp::Verify::Skip
        };
        match path {
            PathKind::Parallel => szp::decompress_par_into_verify(reference, par, p, v, verify),
            _ => szp::decompress_path_into_verify(reference, p, v, verify),
        }
        .map(|_| ())
        .map_err(e)
    };
    if r.e2e {
        return ks
            .iter()
            .map(|k| {
                let p = k.szp_path(path);
                let c = best_time(r.min_time, false, clock, || {
                    match path {
                        PathKind::Parallel => szp::compress_par_with(values, cfg, par, p),
                        _ => szp::compress_path_vec(values, cfg, p),
                    }
                    .map_err(e)
                })?;
                let d = best_time(r.min_time, false, clock, || {
                    match path {
                        PathKind::Parallel => szp::decompress_par_with::<T>(reference, par, p),
                        _ => szp::decompress_path_vec(reference, p),
                    }
                    .map_err(e)
                })?;
                let (tn, _) = best_time(r.min_time, false, clock, || {
                    let mut v: Vec<T> = Vec::new();
                    decompress(p, &mut v, false).map(|_| v)
                })?;
                Ok(e2e_timed(c, d, tn, reference, ref_bits))
            })
            .collect();
    }
    // Into a slice of the format's worst case, allocated and touched once: the codec, as
    // lzbench times it. (`compress_*_into` re-zero a reused Vec's tail on every call; --e2e
    // times the allocating API.)
    let compress = |p: szp::Path, out: &mut SliceArchive| {
        out.len = match path {
            PathKind::Parallel => szp::compress_par_slice(values, cfg, par, p, &mut out.buf),
            _ => szp::compress_with(p, values, cfg, &mut out.buf).map_err(Into::into),
        }
        .map_err(e)?;
        Ok(())
    };
    let paths: Vec<szp::Path> = ks.iter().map(|k| k.szp_path(path)).collect();
    let cap = szp::max_compressed_len(values.len(), cfg.block_size, T::TYPE.into())
        .ok_or_else(|| Fail::new(Kind::Input, format!("{file}: input too large")))?;
    let archs: Vec<SliceArchive> = (0..ks.len())
        .map(|_| SliceArchive {
            buf: vec![0u8; cap],
            len: 0,
        })
        .collect();
    time_warm(
        r,
        clock,
        &paths,
        archs,
        Vec::new(),
        compress,
        decompress,
        reference,
        ref_bits,
    )
}

#[allow(clippy::too_many_arguments)]
fn time_pernix<T: Wrap>(
    file: &str,
    values: &[T],
    bits: BitWidth,
    block: BlockSize,
    path: PathKind,
    ks: &[&Kernels],
    r: &Run,
    reference: &[u8],
    ref_bits: &[u8],
) -> Result<Vec<Timed>, Fail> {
    let clock = if path == PathKind::Parallel {
        Cpu::Process
    } else {
        Cpu::Thread
    };
    let e = |e| lib(file, e);
    if r.e2e {
        return ks
            .iter()
            .map(|k| {
                let d = k.pernix(path);
                let c = best_time(r.min_time, false, clock, || {
                    d.compress_stream(values, bits, block).map_err(e)
                })?;
                let dd = best_time(r.min_time, false, clock, || {
                    d.decompress_stream::<T>(reference).map_err(e)
                })?;
                let (tn, _) = best_time(r.min_time, false, clock, || {
                    d.decompress_stream_with::<T>(reference, Verify::Skip)
                        .map_err(e)
                })?;
                Ok(e2e_timed(c, dd, tn, reference, ref_bits))
            })
            .collect();
    }
    let h = StreamHeader::new::<T>(bits, block, values.len() as u64);
    let len = h
        .stream_len()
        .ok_or_else(|| Fail::new(Kind::Input, format!("{file}: input too large")))?;
    let compress = |d: &Dispatcher, out: &mut Vec<u8>| {
        d.compress_stream_into(values, bits, block, out)
            .map(|_| ())
            .map_err(e)
    };
    let decode = |d: &Dispatcher, v: &mut Vec<T>, verify: bool| {
        let verify = if verify {
            Verify::Checksums
        } else {
            Verify::Skip
        };
        d.decompress_stream_into_with(reference, v, verify)
            .map(|_| ())
            .map_err(e)
    };
    let kernels: Vec<&Dispatcher> = ks.iter().map(|k| k.pernix(path)).collect();
    let archs = vec![vec![0u8; len]; ks.len()];
    let dec = vec![T::ZERO; values.len()];
    time_warm(
        r, clock, &kernels, archs, dec, compress, decode, reference, ref_bits,
    )
}

fn bench_one<T: Wrap>(
    file: &str,
    values: &[T],
    s: &Setting,
    r: &Run,
    rows: &mut Vec<Row>,
) -> Result<(), Fail> {
    let raw_bytes = values.len() * T::BYTES;
    let raw = raw_bytes as f64;
    let reference = dispatch::compress(file, values, s, PathKind::Scalar, r.eng, false)?;
    let dec = dispatch::decompress(file, &reference, PathKind::Scalar, r.eng)?;
    let ref_bits = dec.to_le_bytes();
    let dec = T::unwrap(dec).ok_or_else(|| {
        Fail::new(
            Kind::Corrupt,
            format!("{file}: decoded element type differs"),
        )
    })?;
    let q = data::quality(values, &dec);
    let bound = dispatch::bound(file, &reference)?;
    let (worst, _) = codec::worst_ratio(values, &dec, &bound);
    drop(dec);
    let first = rows.len();
    // Every path times all --isa kernels in turns ([`best_time_turns`]); rows keep the order
    // ISA by ISA, path by path.
    let mut timed: Vec<(usize, usize, Row)> = Vec::new();
    for (j, &path) in r.paths.iter().enumerate() {
        // The scalar path does not depend on --isa: measured once.
        let ks: Vec<&Kernels> = match path {
            PathKind::Scalar => r.ks.iter().take(1).collect(),
            _ => r.ks.iter().collect(),
        };
        let ts = match *s {
            Setting::Szp {
                mode,
                eb,
                block,
                layout,
            } => {
                let cfg = crate::szpcli::config(mode, eb, block, layout);
                time_szp(file, values, &cfg, path, &ks, r, &reference, &ref_bits)?
            }
            Setting::Pernix { bits, block } => time_pernix(
                file, values, bits, block, path, &ks, r, &reference, &ref_bits,
            )?,
        };
        for (i, (k, t)) in ks.iter().zip(ts).enumerate() {
            let kernel = match (path, s) {
                (PathKind::Scalar, _) => "scalar",
                (_, Setting::Szp { .. }) => k.szp.name(),
                (_, Setting::Pernix { .. }) => backend_name(k.pernix(path).kernel_backend()),
            };
            timed.push((
                i,
                j,
                Row {
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
                    compress_gbps: t.tc.gbps(raw).0,
                    decompress_gbps: t.td.gbps(raw).0,
                    compress_vs_scalar: f64::NAN,
                    decompress_vs_scalar: f64::NAN,
                    identical: t.same,
                    kernel,
                    isa: k.isa,
                    threads: if path == PathKind::Parallel {
                        r.eng.par.threads()
                    } else {
                        1
                    },
                    timing: if r.e2e { "e2e" } else { "warm" },
                    values: values.len(),
                    raw_bytes,
                    memcpy_gbps: r.memcpy.0,
                    compress_vs_memcpy: f64::NAN,
                    decompress_vs_memcpy: f64::NAN,
                    compress_vs_simd: f64::NAN,
                    decompress_vs_simd: f64::NAN,
                    decompress_noverify_gbps: t.td_noverify.map(|tn| tn.gbps(raw).0),
                    load1: load1(),
                    compress_cpu_gbps: t.tc.gbps(raw).1,
                    decompress_cpu_gbps: t.td.gbps(raw).1,
                    decompress_noverify_cpu_gbps: t.td_noverify.map(|tn| tn.gbps(raw).1),
                    memcpy_cpu_gbps: r.memcpy.1,
                    compress_cpu_vs_memcpy: f64::NAN,
                    decompress_cpu_vs_memcpy: f64::NAN,
                    block: match *s {
                        Setting::Szp { block, .. } => block,
                        Setting::Pernix { block, .. } => block.bytes() as u32,
                    },
                },
            ));
        }
    }
    timed.sort_by_key(|&(i, j, _)| (i, j));
    rows.extend(timed.into_iter().map(|(_, _, row)| row));
    let group = &mut rows[first..];
    let speeds = |group: &[Row], p: PathKind, isa: Option<&str>| {
        group
            .iter()
            .find(|x| x.path == p.name() && isa.is_none_or(|i| x.isa == i))
            .map_or((f64::NAN, f64::NAN), |x| {
                (x.compress_gbps, x.decompress_gbps)
            })
    };
    let (c0, d0) = speeds(group, PathKind::Scalar, None);
    let simd: Vec<(f64, f64)> = group
        .iter()
        .map(|x| speeds(group, PathKind::Simd, Some(x.isa)))
        .collect();
    for (x, (c1, d1)) in group.iter_mut().zip(simd) {
        x.compress_vs_scalar = x.compress_gbps / c0;
        x.decompress_vs_scalar = x.decompress_gbps / d0;
        x.compress_vs_simd = x.compress_gbps / c1;
        x.decompress_vs_simd = x.decompress_gbps / d1;
    }
    Ok(())
}

/// The rows as a JSON array, one object per line (serde_json; non-finite numbers are null).
pub fn to_json(rows: &[Row]) -> Result<String, Fail> {
    let mut o = String::from("[\n");
    for (i, r) in rows.iter().enumerate() {
        let line = serde_json::to_string(r)
            .map_err(|e| Fail::new(Kind::Io, format!("JSON output: {e}")))?;
        o.push_str("  ");
        o.push_str(&line);
        if i + 1 < rows.len() {
            o.push(',');
        }
        o.push('\n');
    }
    o.push(']');
    Ok(o)
}

/// The rate-distortion curves of the rows: one per file and codec (named `CODEC FILE`,
/// dashed but for SZp), one point per setting. Quality does not depend on the path, so the
/// first row of each setting is used, whichever paths `--paths` kept.
pub fn rd_series(rows: &[Row]) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    for r in rows {
        let id = (r.file.as_str(), r.codec, r.setting.as_str());
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        if !r.psnr_db.is_finite() || !r.bits_per_value.is_finite() {
            continue;
        }
        let label = format!("{} {}", r.codec, r.file);
        let point = (r.bits_per_value, r.psnr_db);
        match series.iter_mut().find(|c| c.label == label) {
            Some(c) => c.points.push(point),
            None => series.push(Series {
                dashed: !label.starts_with("szp"),
                label,
                points: vec![point],
            }),
        }
    }
    series
}

/// What the table footer states about the run.
pub struct Footer {
    threads: usize,
    e2e: bool,
    isa: String,
    /// (dataset, bytes, memcpy GB/s by wall clock, by CPU time) per dataset.
    copies: Vec<(String, usize, f64, f64)>,
    load: (Option<f64>, Option<f64>),
}

fn ratio(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "-".into()
    }
}

/// The rows as an aligned text table with a footer that says how it was measured.
pub fn table(rows: &[Row], foot: &Footer) -> String {
    let head = [
        "file",
        "codec",
        "path",
        "kernel",
        "setting",
        "ratio",
        "bits/val",
        "max_err",
        "bound",
        "err/bnd",
        "PSNR dB",
        "comp GB/s",
        "(x)",
        "/M",
        "cpu/M",
        "dec GB/s",
        "(x)",
        "/M",
        "cpu/M",
        "same",
    ];
    let cells: Vec<[String; 20]> = rows
        .iter()
        .map(|r| {
            [
                r.file.clone(),
                r.codec.to_string(),
                r.path.to_string(),
                r.kernel.to_string(),
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
                ratio(r.compress_vs_scalar),
                ratio(r.compress_vs_memcpy),
                ratio(r.compress_cpu_vs_memcpy),
                format!("{:.3}", r.decompress_gbps),
                ratio(r.decompress_vs_scalar),
                ratio(r.decompress_vs_memcpy),
                ratio(r.decompress_cpu_vs_memcpy),
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
            if k < 5 {
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
    if foot.e2e {
        let _ = writeln!(
            o,
            "Timing: end-to-end (--e2e): the allocating API (compress_vec/decompress_vec, \
             compress_stream/decompress_stream): every repetition gets a fresh output, page \
             faults included."
        );
    } else {
        let _ = writeln!(
            o,
            "Timing: warm, reused buffers (SZp compresses into a slice allocated once, \
             compress_with / compress_par_slice; the rest uses the *_into / *_stream_into \
             variants; one output buffer per path reused by every repetition, as lzbench and \
             pcodec's bench do); \
             the --isa kernels of a path, and verified and unverified decodes, take turns \
             call by call; --e2e times the allocating API."
        );
    }
    for (name, bytes, m, mc) in &foot.copies {
        let _ = writeln!(
            o,
            "M = warm single-thread memcpy of {bytes} bytes ({name}): {m:.2} GB/s by the wall \
             clock, {mc:.2} GB/s by CPU time, same run."
        );
    }
    let f = |x: Option<f64>| x.map_or("?".into(), |v| format!("{v:.2}"));
    let _ = writeln!(
        o,
        "GB/s of uncompressed float data, best of repeated runs; (x) = speed over the scalar \
         path in this run; /M = speed over M; cpu/M = the same by CPU time (thread CPU \
         time; the parallel path's summed over its threads, i.e. its work); parallel = {} threads; isa = {}; same = bytes \
         and decoded values identical to the scalar path; load average (1 min) {} -> {}",
        foot.threads,
        foot.isa,
        f(foot.load.0),
        f(foot.load.1)
    );
    o
}
