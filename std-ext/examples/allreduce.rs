//! Compressed allreduce vs raw `MPI_Allreduce` (feature `mpi`). Rank r reduces the field scaled
//! by r+1 (a generated field when `--input` is absent); prints one line
//! `allreduce: ranks=R n=N max_err=X bound=Y raw_ms=A compressed_ms=B ratio=C`, where max_err
//! is against the exact (f64) sum of the ranks' inputs and ratio = raw_ms / compressed_ms.
//!
//! ```sh
//! cargo build --release -p fzpack --features mpi --example allreduce
//! mpirun -np 4 target/release/examples/allreduce --eb 1e-3 --mode abs [--input F] [--dtype f32|f64]
//! ```

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
fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let opt = |k: &str| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let eb: f64 = opt("--eb").unwrap_or("1e-3".into()).parse()?;
    if opt("--mode").is_some_and(|m| m != "abs") {
        return Err("only --mode abs is supported by the compressed allreduce".into());
    }
    let n: usize = opt("--n").map_or(Ok(1 << 24), |s| s.parse())?;
    match opt("--dtype").as_deref().unwrap_or("f32") {
        "f64" => go::<f64>(opt("--input"), n, eb),
        _ => go::<f32>(opt("--input"), n, eb),
    }
}

#[cfg(feature = "mpi")]
fn go<T: fzpack::Element + mpi::traits::Equivalence>(
    input: Option<String>,
    n: usize,
    eb: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    use mpi::collective::SystemOperation;
    use mpi::traits::*;
    use std::time::Instant;
    let universe = mpi::initialize().ok_or("MPI init failed")?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let base: Vec<f64> = match input {
        Some(p) => {
            let bytes = std::fs::read(&p)?;
            let v: Vec<T> = fzpack::values_from_le_bytes(&bytes).ok_or("input length")?;
            v.iter().map(|x| x.to_f64()).collect()
        }
        None => (0..n)
            .map(|i| {
                let t = i as f64 * 1e-4;
                100.0 * t.sin()
                    + 30.0 * (7.3 * t).cos()
                    + ((i * 2_654_435_761) % 1000) as f64 * 1e-4
            })
            .collect(),
    };
    let mine: Vec<T> = base
        .iter()
        .map(|&x| T::from_f64(x * f64::from(rank + 1)))
        .collect();
    let mut raw = vec![T::from_f64(0.0); mine.len()];
    world.barrier();
    let t = Instant::now();
    world.all_reduce_into(&mine[..], &mut raw[..], SystemOperation::sum());
    world.barrier();
    let raw_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let got = fzpack::mpi::allreduce_sum(&world, &mine, eb)?;
    world.barrier();
    let comp_ms = t.elapsed().as_secs_f64() * 1e3;
    // Exact sum of the ranks' inputs (each rank's input is T(base·(r+1))).
    let mut max_err = 0f64;
    for (i, g) in got.iter().enumerate() {
        let exact: f64 = (1..=size)
            .map(|k| T::from_f64(base[i] * f64::from(k)).to_f64())
            .sum();
        max_err = max_err.max((g.to_f64() - exact).abs());
    }
    let bound = f64::from(size) * eb;
    if rank == 0 {
        println!(
            "allreduce: ranks={size} n={} max_err={max_err:.3e} bound={bound:.3e} raw_ms={raw_ms:.1} compressed_ms={comp_ms:.1} ratio={:.2}",
            got.len(),
            raw_ms / comp_ms
        );
    }
    if max_err > bound {
        return Err(format!("max_err {max_err} above the bound {bound}").into());
    }
    Ok(())
}
