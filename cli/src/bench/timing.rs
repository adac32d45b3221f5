//! The kernels a bench row runs and how they are timed: the clocks (wall and CPU), best of
//! repetitions, calls that take turns, the memcpy reference, and the warm and end-to-end
//! timing of each codec on one path.

use std::hint::black_box;
use std::time::Instant;

use fzpack::arch::CpuFeatures;
use fzpack::pernix::{self, Backend, BitWidth, BlockSize, Dispatcher, Verify};
use fzpack::szp::{self, Config};

use super::args::IsaArg;
use crate::codec::{Engines, PathKind, Wrap};
use crate::fail::{Fail, Kind, lib};

/// The kernels of the simd and parallel rows, from the (possibly narrowed) CPU features.
pub struct Kernels {
    pub isa: &'static str,
    pub szp: szp::Kernel,
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

/// [`szp::Kernel::best`] for the features `f`.
fn best_szp_path(f: CpuFeatures) -> szp::Kernel {
    [szp::Kernel::Avx512, szp::Kernel::Avx2, szp::Kernel::Neon]
        .into_iter()
        .find(|p| p.is_available_with(f))
        .unwrap_or(szp::Kernel::Scalar)
}

pub fn backend_name(b: Backend) -> &'static str {
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
    pub fn new(isa: Option<IsaArg>, eng: &Engines) -> Result<Self, Fail> {
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

    pub fn szp_path(&self, p: PathKind) -> szp::Kernel {
        match p {
            PathKind::Scalar => szp::Kernel::Scalar,
            _ => self.szp,
        }
    }

    pub fn pernix(&self, p: PathKind) -> &Dispatcher {
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

impl Cpu {
    /// The clock of `path`'s rows: the process's on the parallel path, the thread's elsewhere.
    fn of(path: PathKind) -> Cpu {
        if path == PathKind::Parallel {
            Cpu::Process
        } else {
            Cpu::Thread
        }
    }
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
pub struct Secs {
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
    pub fn gbps(self, bytes: f64) -> (f64, f64) {
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
pub fn memcpy_gbps(src: &[u8], min_time: f64) -> (f64, f64) {
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
pub fn load1() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

pub struct Run<'a> {
    pub eng: &'a Engines,
    pub ks: &'a [Kernels],
    pub paths: &'a [PathKind],
    pub min_time: f64,
    pub e2e: bool,
    pub memcpy: (f64, f64),
}

/// One bench cell: a dataset's values (named `file` in errors), the scalar path's archive and
/// decoded bytes that every path's outputs are checked against, the path, and the kernels
/// timed on it in turns.
pub struct Case<'a, T> {
    pub file: &'a str,
    pub values: &'a [T],
    pub reference: &'a [u8],
    pub ref_bits: &'a [u8],
    pub path: PathKind,
    pub ks: &'a [&'a Kernels],
}

/// Compress and decompress times of one path, whether the outputs equal the references, and
/// (PERNIX) the decompress time without checksum verification.
pub struct Timed {
    pub tc: Secs,
    pub td: Secs,
    pub td_noverify: Option<Secs>,
    pub same: bool,
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

/// The timings of SZp with `cfg` on the cell's path, one per kernel.
pub fn time_szp<T: Wrap>(c: &Case<T>, cfg: &Config, r: &Run) -> Result<Vec<Timed>, Fail> {
    let (file, values, path, ks) = (c.file, c.values, c.path, c.ks);
    let (reference, ref_bits) = (c.reference, c.ref_bits);
    let par = &r.eng.par;
    let clock = Cpu::of(path);
    let e = |e| lib(file, e);
    // The builders on the cell's path (a `Parallel` is an `Arc` clone: nothing to time).
    let encoder = |p: szp::Kernel| {
        let enc = szp::Encoder::new(cfg).kernel(p);
        match path {
            PathKind::Parallel => enc.threads(par),
            _ => enc.serial(),
        }
    };
    let decoder = |p: szp::Kernel| {
        let dec = szp::Decoder::new().kernel(p);
        match path {
            PathKind::Parallel => dec.threads(par),
            _ => dec.serial(),
        }
    };
    let decompress = |p: szp::Kernel, v: &mut Vec<T>, verify: bool| {
        let verify = if verify {
            szp::Verify::Checksums
        } else {
            szp::Verify::Skip
        };
        decoder(p)
            .verify(verify)
            .into_vec(reference, v)
            .map(|_| ())
            .map_err(e)
    };
    if r.e2e {
        return ks
            .iter()
            .map(|k| {
                let p = k.szp_path(path);
                let (enc, dec) = (encoder(p), decoder(p));
                let c = best_time(r.min_time, false, clock, || enc.to_vec(values).map_err(e))?;
                let d = best_time(r.min_time, false, clock, || {
                    dec.to_vec::<T>(reference).map_err(e)
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
    // lzbench times it. (`Encoder::into_vec` re-zeroes a reused Vec's tail on every call;
    // --e2e times the allocating API.)
    let compress = |p: szp::Kernel, out: &mut SliceArchive| {
        out.len = encoder(p).into_slice(values, &mut out.buf).map_err(e)?;
        Ok(())
    };
    let paths: Vec<szp::Kernel> = ks.iter().map(|k| k.szp_path(path)).collect();
    // The interpolation layout's archive can exceed the block layouts' worst case (values
    // stored exactly cost their bytes plus a code): the reference's length covers it, since
    // the bytes do not depend on the kernel or threads.
    let cap = szp::max_compressed_len(values.len(), cfg.block_size, T::TYPE)
        .ok_or_else(|| Fail::new(Kind::Input, format!("{file}: input too large")))?
        .max(reference.len());
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

/// The timings of PERNIX with `bits` and `block` on the cell's path, one per kernel.
pub fn time_pernix<T: Wrap>(
    c: &Case<T>,
    (bits, block): (BitWidth, BlockSize),
    r: &Run,
) -> Result<Vec<Timed>, Fail> {
    let (file, values, path, ks) = (c.file, c.values, c.path, c.ks);
    let (reference, ref_bits) = (c.reference, c.ref_bits);
    let clock = Cpu::of(path);
    let e = |e| lib(file, e);
    if r.e2e {
        return ks
            .iter()
            .map(|k| {
                let d = k.pernix(path);
                let enc = pernix::Encoder::new(bits, block).dispatcher(d);
                let dec = pernix::Decoder::new().dispatcher(d);
                let skip = dec.clone().verify(Verify::Skip);
                let c = best_time(r.min_time, false, clock, || enc.to_vec(values).map_err(e))?;
                let dd = best_time(r.min_time, false, clock, || {
                    dec.to_vec::<T>(reference).map_err(e)
                })?;
                let (tn, _) = best_time(r.min_time, false, clock, || {
                    skip.to_vec::<T>(reference).map_err(e)
                })?;
                Ok(e2e_timed(c, dd, tn, reference, ref_bits))
            })
            .collect();
    }
    let h = pernix::Encoder::new(bits, block).header::<T>(values.len() as u64);
    let len = h
        .stream_len()
        .ok_or_else(|| Fail::new(Kind::Input, format!("{file}: input too large")))?;
    let compress = |d: &Dispatcher, out: &mut Vec<u8>| {
        pernix::Encoder::new(bits, block)
            .dispatcher(d)
            .into_slice(values, out)
            .map(|_| ())
            .map_err(e)
    };
    let decode = |d: &Dispatcher, v: &mut Vec<T>, verify: bool| {
        let verify = if verify {
            Verify::Checksums
        } else {
            Verify::Skip
        };
        pernix::Decoder::new()
            .dispatcher(d)
            .verify(verify)
            .into_slice(reference, v)
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
