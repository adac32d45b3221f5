//! The bench's rows and how they are shown: JSON, the aligned table with its footer, and
//! the rate-distortion series of the plot.

use std::fmt::Write as _;

use super::plot::Series;
use crate::fail::{Fail, Kind};

/// One result line. The JSON keys of the first fields (through `identical_to_scalar`) are the
/// stable ones; the later fields were added after them.
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
    pub threads: usize,
    pub e2e: bool,
    pub isa: String,
    /// (dataset, bytes, memcpy GB/s by wall clock, by CPU time) per dataset.
    pub copies: Vec<(String, usize, f64, f64)>,
    pub load: (Option<f64>, Option<f64>),
}

pub fn ratio(x: f64) -> String {
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
            "Timing: end-to-end (--e2e): the allocating API (szp Encoder/Decoder to_vec, \
             compress_stream/decompress_stream): every repetition gets a fresh output, page \
             faults included."
        );
    } else {
        let _ = writeln!(
            o,
            "Timing: warm, reused buffers (SZp compresses into a slice allocated once, \
             szp Encoder::into_slice; the rest uses the into_vec / *_stream_into \
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
