//! Compressed allreduce vs raw `MPI_Allreduce` (feature `mpi`). Rank r reduces the field scaled
//! by r+1 (a generated field when `--input` is absent); prints one line
//! `allreduce: ranks=R n=N max_err=X bound=Y raw_ms=A compressed_ms=B ratio=C`, where max_err
//! is the largest error over every rank's result against the exact (f64) sum of the ranks'
//! inputs, bound = R · eb (ABS), and ratio = raw_ms / compressed_ms. Each time is the fastest
//! of `--reps` runs (default 3), each run between barriers.
//!
//! `--mode abs` takes `--eb` as the absolute bound of every rank's compression; `--mode noa`
//! takes it relative to the value range of the field (`eb · (max − min)`, then ABS).
//! `--chunk V` sets the pipeline chunk (values per archive and message).
//!
//! ```sh
//! cargo build --release -p fzpack --features mpi --example allreduce
//! mpirun -np 4 target/release/examples/allreduce --eb 1e-3 --mode abs [--input F] [--n N] \
//!     [--dtype f32|f64] [--chunk V] [--reps K]
//! ```

#[cfg(feature = "mpi")]
mod common;
#[cfg(feature = "mpi")]
use common::opt;

#[cfg(feature = "mpi")]
fn main() {
    if let Err(e) = run() {
        eprintln!("allreduce: {e}");
        std::process::exit(1);
    }
}

#[cfg(not(feature = "mpi"))]
fn main() {
    eprintln!("allreduce: build with --features mpi");
    std::process::exit(2);
}

#[cfg(feature = "mpi")]
struct Opts {
    input: Option<String>,
    n: usize,
    eb: f64,
    noa: bool,
    chunk: usize,
    reps: usize,
}

#[cfg(feature = "mpi")]
fn run() -> Result<(), Box<dyn std::error::Error>> {
    let noa = match opt("--mode").as_deref() {
        None | Some("abs") => false,
        Some("noa") => true,
        Some(m) => return Err(format!("--mode {m}: abs or noa").into()),
    };
    let o = Opts {
        input: opt("--input"),
        n: opt("--n").map_or(Ok(1 << 24), |s| s.parse())?,
        eb: opt("--eb").unwrap_or("1e-3".into()).parse()?,
        noa,
        chunk: opt("--chunk").map_or(Ok(fzpack::mpi::DEFAULT_CHUNK), |s| s.parse())?,
        reps: opt("--reps").map_or(Ok(3), |s| s.parse::<usize>())?.max(1),
    };
    match opt("--dtype").as_deref().unwrap_or("f32") {
        "f64" => go::<f64>(&o),
        _ => go::<f32>(&o),
    }
}

#[cfg(feature = "mpi")]
fn go<T: fzpack::Element + mpi::traits::Equivalence>(
    o: &Opts,
) -> Result<(), Box<dyn std::error::Error>> {
    use fzpack::mpi::Pipeline;
    use fzpack::szp::Config;
    use mpi::collective::SystemOperation;
    use mpi::traits::*;
    use std::time::Instant;
    let universe = mpi::initialize().ok_or("MPI init failed")?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let base: Vec<f64> = match &o.input {
        Some(p) => {
            let bytes = std::fs::read(p)?;
            let v: Vec<T> = fzpack::values_from_le_bytes(&bytes).ok_or("input length")?;
            v.iter().map(|x| x.to_f64()).collect()
        }
        None => (0..o.n)
            .map(|i| {
                let t = i as f64 * 1e-4;
                100.0 * t.sin()
                    + 30.0 * (7.3 * t).cos()
                    + ((i * 2_654_435_761) % 1000) as f64 * 1e-4
            })
            .collect(),
    };
    let eb = if o.noa {
        let (lo, hi) = base
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
                (l.min(x), h.max(x))
            });
        o.eb * (hi - lo).max(f64::MIN_POSITIVE)
    } else {
        o.eb
    };
    let mine: Vec<T> = base
        .iter()
        .map(|&x| T::from_f64(x * f64::from(rank + 1)))
        .collect();
    let pipe = Pipeline { chunk: o.chunk };
    let cfg = Config::abs(eb);
    let mut raw = vec![T::from_f64(0.0); mine.len()];
    let (mut raw_ms, mut comp_ms) = (f64::INFINITY, f64::INFINITY);
    let mut got = vec![T::from_f64(0.0); mine.len()];
    for _ in 0..o.reps {
        world.barrier();
        let t = Instant::now();
        world.all_reduce_into(&mine[..], &mut raw[..], SystemOperation::sum());
        world.barrier();
        raw_ms = raw_ms.min(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        fzpack::mpi::allreduce_sum_into(&world, &mine, &cfg, &pipe, &mut got)?;
        world.barrier();
        comp_ms = comp_ms.min(t.elapsed().as_secs_f64() * 1e3);
    }
    // Exact sum of the ranks' inputs (each rank's input is T(base·(r+1))).
    let mut max_err = 0f64;
    for (i, g) in got.iter().enumerate() {
        let exact: f64 = (1..=size)
            .map(|k| T::from_f64(base[i] * f64::from(k)).to_f64())
            .sum();
        max_err = max_err.max((g.to_f64() - exact).abs());
    }
    let mut worst = 0f64;
    world.all_reduce_into(&max_err, &mut worst, SystemOperation::max());
    let bound = f64::from(size) * eb;
    if rank == 0 {
        println!(
            "allreduce: ranks={size} n={} max_err={worst:.3e} bound={bound:.3e} raw_ms={raw_ms:.1} compressed_ms={comp_ms:.1} ratio={:.2}",
            got.len(),
            raw_ms / comp_ms
        );
    }
    if max_err > bound {
        return Err(format!("max_err {max_err} above the bound {bound}").into());
    }
    Ok(())
}
