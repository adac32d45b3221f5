//! Single-thread SZp codec speeds on one field, as the collectives use the codec (ABS bound,
//! the shared grid, stage layout, pipeline-sized chunks): compress, compressed-domain add of
//! two archives, and decompress, in GB/s of float data, plus the compression ratio of one
//! archive and of the sum of two. Feeds `scripts/mpi-model.py`. Prints one line:
//! `codec: n=N eb=E chunk=V compress_gbs=C add_gbs=A decompress_gbs=D raw_add_gbs=S ratio=R ratio_sum2=Q`
//! (fastest of `--reps` passes, default 5).
//!
//! ```sh
//! cargo run --release -p fzpack --example codec_speeds -- [--input F | --n N] --eb 1e-4 \
//!     --mode noa [--chunk V] [--reps K]
//! ```

mod common;

use std::time::Instant;

use fzpack::szp::{self, Config, Layout};

use common::opt;

fn main() {
    if let Err(e) = run() {
        eprintln!("codec_speeds: {e}");
        std::process::exit(1);
    }
}

fn best<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    let mut t = f64::INFINITY;
    for _ in 0..reps {
        let s = Instant::now();
        f();
        t = t.min(s.elapsed().as_secs_f64());
    }
    t
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let x: Vec<f32> = match opt("--input") {
        Some(p) => fzpack::values_from_le_bytes(&std::fs::read(p)?).ok_or("input length")?,
        None => {
            let n: usize = opt("--n").map_or(Ok(1 << 23), |s| s.parse())?;
            (0..n)
                .map(|i| {
                    let t = i as f64 * 1e-4;
                    (100.0 * t.sin() + 30.0 * (7.3 * t).cos()) as f32
                })
                .collect()
        }
    };
    let chunk: usize = opt("--chunk").map_or(Ok(1 << 18), |s| s.parse())?;
    let reps: usize = opt("--reps").map_or(Ok(5), |s| s.parse::<usize>())?.max(1);
    let mut eb: f64 = opt("--eb").unwrap_or("1e-4".into()).parse()?;
    let (lo, hi) = x
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    if opt("--mode").as_deref() == Some("noa") {
        eb *= f64::from(hi) - f64::from(lo);
    }
    // The second operand: the field times two (rank 1 of the allreduce example).
    let y: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
    let max_abs = f64::from(lo.abs().max(hi.abs())) * 2.0;
    // The grid the collectives choose: the stated grid of `eb` where it covers max|x| (no
    // declared max_abs), else max_abs = max|x|.
    let stated = szp::blocks::grid_magnitude(szp::DType::F32, eb, 0.0);
    let base = if max_abs <= stated
        && szp::blocks::grid_magnitude(szp::DType::F32, eb, max_abs) == stated
    {
        Config::abs(eb)
    } else {
        Config::abs(eb).with_max_abs(max_abs)
    };
    let cfg = Config {
        layout: Layout::Fzgm,
        ..base
    };
    let parts: Vec<std::ops::Range<usize>> = {
        let k = x.len().div_ceil(chunk).max(1);
        (0..k)
            .map(|i| i * x.len() / k..(i + 1) * x.len() / k)
            .collect()
    };
    let comp = |v: &[f32]| -> Result<Vec<Vec<u8>>, fzpack::Error> {
        parts
            .iter()
            .map(|r| szp::Encoder::new(&cfg).serial().to_vec(&v[r.clone()]))
            .collect()
    };
    let (ax, ay) = (comp(&x)?, comp(&y)?);
    let sums: Vec<Vec<u8>> = ax
        .iter()
        .zip(&ay)
        .map(|(a, b)| fzpack::ops::add(a, b))
        .collect::<Result<_, _>>()?;
    let bytes = (x.len() * 4) as f64;
    let t_c = best(reps, || {
        let _ = comp(&x);
    });
    let t_a = best(reps, || {
        for (a, b) in ax.iter().zip(&ay) {
            let _ = fzpack::ops::add(a, b);
        }
    });
    let mut out = vec![0f32; x.len()];
    let t_d = best(reps, || {
        for (a, r) in sums.iter().zip(&parts) {
            let _ = szp::Decoder::new()
                .serial()
                .into_slice(a, &mut out[r.clone()]);
        }
    });
    let mut s = vec![0f32; x.len()];
    let t_s = best(reps, || {
        for ((o, a), b) in s.iter_mut().zip(&x).zip(&y) {
            *o = a + b;
        }
        std::hint::black_box(&s);
    });
    let size = |v: &[Vec<u8>]| v.iter().map(Vec::len).sum::<usize>() as f64;
    println!(
        "codec: n={} eb={eb:.4e} chunk={chunk} compress_gbs={:.2} add_gbs={:.2} decompress_gbs={:.2} raw_add_gbs={:.2} ratio={:.3} ratio_sum2={:.3}",
        x.len(),
        bytes / t_c / 1e9,
        bytes / t_a / 1e9,
        bytes / t_d / 1e9,
        bytes / t_s / 1e9,
        bytes / size(&ax),
        bytes / size(&sums)
    );
    Ok(())
}
