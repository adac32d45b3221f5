//! Input files, built-in fields and error statistics for the CLI.

use std::path::Path;

use fzpack::{DType, Element};

use crate::fail::{Fail, Kind};

/// Element type from a file name's extension (`.f32` / `.f64`).
pub fn dtype_from_name(path: &Path) -> Option<DType> {
    match path.extension()?.to_str()? {
        "f32" => Some(DType::F32),
        "f64" => Some(DType::F64),
        _ => None,
    }
}

/// Dimensions from a name like `name_2161x4320.f32` (the last `_`-separated part).
pub fn dims_from_name(path: &Path) -> Option<Vec<usize>> {
    let stem = path.file_stem()?.to_str()?;
    let last = stem.rsplit('_').next()?;
    let dims: Option<Vec<usize>> = last.split('x').map(|d| d.parse().ok()).collect();
    dims.filter(|d| !d.is_empty() && d.iter().all(|&x| x > 0))
}

/// Parses `--dims 2161x4320` (or `2161,4320`).
pub fn parse_dims(s: &str) -> Result<Vec<usize>, String> {
    s.split(['x', ','])
        .map(|d| {
            d.trim()
                .parse::<usize>()
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("bad dimension {d:?} in --dims {s:?}"))
        })
        .collect()
}

/// Reads a whole file, with a friendly error for a missing one.
pub fn read_file(path: &Path) -> Result<Vec<u8>, Fail> {
    std::fs::read(path).map_err(|e| {
        let what = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            _ => e.to_string(),
        };
        Fail::new(Kind::Io, format!("cannot read {}: {what}", path.display()))
    })
}

/// Decodes raw little-endian values of `T`; errors name the file.
pub fn values_of<T: Element>(path: &Path, bytes: &[u8]) -> Result<Vec<T>, Fail> {
    fzpack::values_from_le_bytes(bytes).ok_or_else(|| {
        Fail::new(
            Kind::Input,
            format!(
                "{}: size {} bytes is not a multiple of the {}-byte {} element size",
                path.display(),
                bytes.len(),
                T::BYTES,
                T::TYPE
            ),
        )
    })
}

/// The number of missing values (NaN, ±inf) in `a`, and the first index where `b` does not
/// keep one of them exactly (a NaN for a NaN, the same infinity), or decodes a finite value
/// of `a` to a non-finite one.
pub fn missing_mismatch<T: Element>(a: &[T], b: &[T]) -> (usize, Option<usize>) {
    let mut count = 0;
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let (x, y) = (x.to_f64(), y.to_f64());
        if x.is_finite() {
            if !y.is_finite() {
                return (count, Some(i));
            }
            continue;
        }
        count += 1;
        let kept = if x.is_nan() { y.is_nan() } else { x == y };
        if !kept {
            return (count, Some(i));
        }
    }
    (count, None)
}

/// Writes `bytes` to `path` safely ([`crate::files::Output`]: regular files only, a unique
/// temporary file renamed at the end; refuses to overwrite without `force`).
pub fn write_output(path: &Path, bytes: &[u8], force: bool) -> Result<(), Fail> {
    let mut out = crate::files::Output::create(path, force, &[])?;
    out.write_all(bytes)?;
    out.finish(force)
}

/// Quality of a reconstruction.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quality {
    /// Largest absolute error.
    pub max_abs_err: f64,
    /// Root mean square error.
    pub rmse: f64,
    /// Peak signal-to-noise ratio in dB (value range as the peak); `inf` when lossless.
    pub psnr_db: f64,
    /// Index of the largest error.
    pub argmax: usize,
}

/// Error statistics of `b` against `a`, over the finite values of `a` (missing values, NaN
/// and ±inf, are checked apart: [`missing_mismatch`]).
pub fn quality<T: Element>(a: &[T], b: &[T]) -> Quality {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut max, mut arg, mut sq, mut n) = (0f64, 0usize, 0f64, 0usize);
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let (x, y) = (x.to_f64(), y.to_f64());
        if !x.is_finite() {
            continue;
        }
        n += 1;
        lo = lo.min(x);
        hi = hi.max(x);
        let e = (x - y).abs();
        if e > max {
            max = e;
            arg = i;
        }
        sq += e * e;
    }
    let rmse = (sq / n.max(1) as f64).sqrt();
    let range = if n == 0 { 0.0 } else { hi - lo };
    let psnr_db = if rmse == 0.0 {
        f64::INFINITY
    } else {
        20.0 * (range / rmse).log10()
    };
    Quality {
        max_abs_err: max,
        rmse,
        psnr_db,
        argmax: arg,
    }
}

/// A deterministic xorshift64* generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u = self.uniform().max(1e-300);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// A climate-like 2-D field (`ny x nx`, f32): a temperature-like offset plus a handful of
/// smooth planetary modes, an oblique wave and mild noise (after `specs/gen_fields.py`).
pub fn climate_field(ny: usize, nx: usize) -> Vec<f32> {
    let mut rng = Rng(0x5EED_C11A_7E00_0001);
    let modes = [
        (1.0, 1.0, 2.0, 0.3),
        (0.5, 3.0, 5.0, 1.1),
        (0.25, 7.0, 4.0, 2.0),
        (0.12, 13.0, 17.0, 0.7),
        (0.06, 29.0, 23.0, 1.9),
    ];
    let tau = std::f64::consts::TAU;
    // separable parts of each mode, precomputed per row and column
    let rows: Vec<[f64; 5]> = (0..ny)
        .map(|j| {
            let y = j as f64 / (ny.max(2) - 1) as f64;
            modes.map(|(a, ky, _, ph)| a * (tau * ky * y + ph).sin())
        })
        .collect();
    let cols: Vec<[f64; 5]> = (0..nx)
        .map(|i| {
            let x = 2.0 * i as f64 / (nx.max(2) - 1) as f64;
            modes.map(|(_, _, kx, ph)| (tau * kx * x - 0.5 * ph).cos())
        })
        .collect();
    let mut out = Vec::with_capacity(ny * nx);
    for (j, r) in rows.iter().enumerate() {
        let y = j as f64 / (ny.max(2) - 1) as f64;
        for (i, c) in cols.iter().enumerate() {
            let x = 2.0 * i as f64 / (nx.max(2) - 1) as f64;
            let mut f: f64 = r.iter().zip(c).map(|(a, b)| a * b).sum();
            f += 0.3 * (tau * (3.0 * x + 2.0 * y)).sin();
            f += 1e-3 * rng.normal();
            out.push((250.0 + 20.0 * f) as f32);
        }
    }
    out
}

/// A seismogram-like 1-D trace (f32): background microseism noise plus a few damped wave
/// trains (P and S arrivals) of decreasing frequency.
pub fn seismic_trace(n: usize) -> Vec<f32> {
    let mut rng = Rng(0x5EED_5E15_0000_0002);
    let mut ar = 0.0f64; // AR(1) coloured background noise
    let events = [
        (0.12, 900.0, 0.035, 0.0009),
        (0.31, 2500.0, 0.018, 0.0004),
        (0.55, 1600.0, 0.05, 0.0012),
        (0.78, 4000.0, 0.01, 0.0002),
    ];
    (0..n)
        .map(|i| {
            ar = 0.97 * ar + rng.normal();
            let mut v = 3.0 * ar;
            for (t0, amp, freq, decay) in events {
                let t = i as f64 - t0 * n as f64;
                if t >= 0.0 {
                    v += amp * (-decay * t).exp() * (std::f64::consts::TAU * freq * t).sin();
                }
            }
            v as f32
        })
        .collect()
}

/// A random-walk f32 field of `n` values: the running sum of standard normals (kept in f64,
/// rounded to f32 at the end), as `np.cumsum(rng.normal(size=n)).astype(np.float32)` computes it.
pub fn random_walk(n: usize) -> Vec<f32> {
    let mut rng = Rng(0x5EED_0000_0057_A1C0);
    let mut s = 0.0f64;
    (0..n)
        .map(|_| {
            s += rng.normal();
            s as f32
        })
        .collect()
}
