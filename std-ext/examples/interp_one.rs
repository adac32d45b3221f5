//! The interpolation layout (`Layout::Interp`) through the facade on one field: what
//! `scripts/ratio-study.py` runs beside SZ3. Reads `NAME_D0x..xDk.f32|f64` (dims from the
//! name, C order), compresses at `REL × (max − min)` with the field's shape and decompresses,
//! best of `--reps` (default 3) after one warm-up, on `--threads` threads (default 1: the
//! calling thread), every finite value checked against the bound. Beside them, in the same
//! run, a warm `memcpy` of the field (what any codec call costs at least). Prints one line:
//! `ratio=R enc_gbs=E dec_gbs=D memcpy_gbs=M heads_ratio=H`.
//!
//! ```sh
//! cargo run --release -p fzpack --example interp_one -- FILE REL [--threads T] [--reps K]
//! ```

mod common;

use std::time::Instant;

use fzpack::Element;
use fzpack::par::Parallel;
use fzpack::szp::{Config, Decoder, Encoder, Layout, Shape};

use common::opt;

fn main() {
    if let Err(e) = run() {
        eprintln!("interp_one: {e}");
        std::process::exit(1);
    }
}

fn best<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    f();
    let mut t = f64::INFINITY;
    for _ in 0..reps {
        let s = Instant::now();
        f();
        t = t.min(s.elapsed().as_secs_f64());
    }
    t
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: interp_one FILE REL")?;
    let rel: f64 = args.get(2).ok_or("usage: interp_one FILE REL")?.parse()?;
    let reps: usize = opt("--reps").map_or(Ok(3), |r| r.parse())?;
    let threads: usize = opt("--threads").map_or(Ok(1), |r| r.parse())?;
    let stem = std::path::Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or("file name")?;
    let dims: Vec<u64> = stem
        .rsplit('_')
        .next()
        .ok_or("no dims in the file name")?
        .split('x')
        .map(|d| d.parse())
        .collect::<Result<_, _>>()?;
    let raw = std::fs::read(path)?;
    if path.ends_with(".f64") {
        one::<f64>(&raw, &dims, rel, reps, threads)
    } else {
        one::<f32>(&raw, &dims, rel, reps, threads)
    }
}

fn one<T: Element>(
    raw: &[u8],
    dims: &[u64],
    rel: f64,
    reps: usize,
    threads: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let x: Vec<T> = fzpack::values_from_le_bytes(raw).ok_or("input length")?;
    let cfg = Config::noa(rel)
        .with_layout(Layout::Interp)
        .with_shape(Shape::new(dims).map_err(fzpack::Error::from)?);
    let par = Parallel::with_threads(threads)?;
    let (enc, dec) = if threads <= 1 {
        (Encoder::new(&cfg).serial(), Decoder::new().serial())
    } else {
        (
            Encoder::new(&cfg).threads(&par),
            Decoder::new().threads(&par),
        )
    };
    let mut archive = Vec::new();
    let te = best(reps, || {
        enc.into_vec(&x, &mut archive).expect("compress");
    });
    let mut back: Vec<T> = Vec::new();
    let td = best(reps, || {
        dec.into_vec(&archive, &mut back).expect("decompress");
    });
    let bound = fzpack::szp::header(&archive)
        .map_err(fzpack::Error::from)?
        .bound();
    for (i, (a, b)) in x.iter().zip(&back).enumerate() {
        let (a, b) = (a.to_f64(), b.to_f64());
        if a.is_finite() && (a - b).abs() > bound {
            return Err(format!("value {i}: {a} -> {b} misses the bound {bound}").into());
        }
    }
    let mut copy = vec![T::ZERO; x.len()];
    let tm = best(reps, || {
        copy.copy_from_slice(std::hint::black_box(&x));
        std::hint::black_box(&copy);
    });
    let heads = fzpack::szp::compress(&x, &Config::noa(rel))?;
    let gb = raw.len() as f64 / 1e9;
    println!(
        "ratio={} enc_gbs={} dec_gbs={} memcpy_gbs={} heads_ratio={}",
        raw.len() as f64 / archive.len() as f64,
        gb / te,
        gb / td,
        gb / tm,
        raw.len() as f64 / heads.len() as f64
    );
    Ok(())
}
