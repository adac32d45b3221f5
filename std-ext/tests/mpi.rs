//! Compressed MPI collectives (feature `mpi`; run under `mpirun -np R`, see `scripts/mpi.sh`;
//! as a single process it is a 1-rank run): compressed allreduce vs `MPI_Allreduce` of the raw
//! floats, the `R · eb` bound per element against the exact sum, identical results on every
//! rank (checked by an allgather of a hash), for the default pipeline chunk and for chunks small
//! enough that every ring step carries many messages; reduce-scatter segments; bcast/allgather
//! bounds; and uniform errors for mismatched lengths and chunk sizes, a rank with a non-finite
//! input, and a rank that fails in the middle of the pipeline (no hang). One test: MPI is
//! initialized once.
#![cfg(feature = "mpi")]

use fzpack::mpi::Pipeline;
use fzpack::szp::Config;
use mpi::collective::SystemOperation;
use mpi::traits::*;

fn field(n: usize, rank: i32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as f32 * 0.01).sin() * 50.0 + (i % 7) as f32 * 0.1) * (rank + 1) as f32)
        .collect()
}

/// The error `e` of a collective in which the last rank failed: that rank's own message
/// (containing `own`) there, `rank {last}{elsewhere}` on every other rank.
fn blames_last(e: &str, rank: i32, size: i32, own: &str, elsewhere: &str) {
    if rank == size - 1 {
        assert!(e.contains(own), "{e}");
    } else {
        assert!(e.contains(&format!("rank {}{elsewhere}", size - 1)), "{e}");
    }
}

fn same_everywhere<C: Communicator>(w: &C, v: &[f32]) -> bool {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for x in v {
        h = (h ^ u64::from(x.to_bits())).wrapping_mul(0x100_0000_01b3);
    }
    let mut all = vec![0u64; w.size() as usize];
    w.all_gather_into(&h, &mut all[..]);
    all.iter().all(|&x| x == h)
}

#[test]
fn compressed_collectives() {
    let universe = mpi::initialize().expect("MPI init");
    let w = universe.world();
    let (rank, size) = (w.rank(), w.size());
    let cases = [
        (0usize, 1e-3, 0usize),
        (1, 1e-3, 0),
        (1000, 1e-2, 0),
        (100_003, 1e-3, 0),
        (100_003, 1e-3, 997),
        (5, 1e-3, 1),
        (70_001, 1e-2, 4096),
    ];
    for &(n, eb, chunk) in &cases {
        let mine = field(n, rank);
        let got = if chunk == 0 {
            fzpack::mpi::allreduce_sum(&w, &mine, eb).expect("allreduce")
        } else {
            let pipe = Pipeline { chunk };
            fzpack::mpi::allreduce_sum_pipelined(&w, &mine, &Config::abs(eb), &pipe)
                .expect("allreduce, small chunks")
        };
        assert_eq!(got.len(), n);
        let mut raw = vec![0f32; n];
        w.all_reduce_into(&mine[..], &mut raw[..], SystemOperation::sum());
        let bound = f64::from(size) * eb;
        let all: Vec<Vec<f32>> = (0..size).map(|r| field(n, r)).collect();
        for i in 0..n {
            let exact: f64 = all.iter().map(|f| f64::from(f[i])).sum();
            let e = (f64::from(got[i]) - exact).abs();
            assert!(e <= bound, "rank {rank} element {i}: {e} > {bound}");
            let e_raw = (f64::from(got[i]) - f64::from(raw[i])).abs();
            assert!(
                e_raw <= bound + exact.abs() * 1e-6,
                "vs MPI_Allreduce at {i}: {e_raw}"
            );
        }
        assert!(same_everywhere(&w, &got), "results differ across ranks");
        // Reduce-scatter: my segment of the same sum, same bound.
        let pipe = Pipeline {
            chunk: if chunk == 0 { 1 << 18 } else { chunk },
        };
        let seg = fzpack::mpi::reduce_scatter_sum_pipelined(&w, &mine, &Config::abs(eb), &pipe)
            .expect("reduce-scatter");
        let r = rank as usize * n / size as usize..(rank as usize + 1) * n / size as usize;
        assert_eq!(seg.len(), r.len(), "segment length");
        for (j, i) in r.enumerate() {
            let exact: f64 = all.iter().map(|f| f64::from(f[i])).sum();
            let e = (f64::from(seg[j]) - exact).abs();
            assert!(
                e <= bound,
                "reduce-scatter rank {rank} element {i}: {e} > {bound}"
            );
        }
    }
    // bcast and allgather.
    let data = field(700_000, 2);
    let b = fzpack::mpi::bcast(&w, 0, if rank == 0 { &data } else { &[] }, 1e-3).unwrap();
    assert!(
        b.iter()
            .zip(&data)
            .all(|(x, y)| f64::from(x - y).abs() <= 1e-3 + 1e-9)
    );
    assert!(same_everywhere(&w, &b));
    let len = |r: i32| 100 + 300_000 * r as usize;
    let g = fzpack::mpi::allgather(&w, &field(len(rank), rank), 1e-3).unwrap();
    let want: Vec<f32> = (0..size).flat_map(|r| field(len(r), r)).collect();
    assert_eq!(g.len(), want.len());
    assert!(
        g.iter()
            .zip(&want)
            .all(|(x, y)| f64::from(x - y).abs() <= 1e-3)
    );
    assert!(same_everywhere(&w, &g));
    if size > 1 {
        // Mismatched lengths: every rank gets the error, nobody hangs.
        let r = fzpack::mpi::allreduce_sum(&w, &field(10 + rank as usize, rank), 1e-3);
        let msg = r.expect_err("mismatched lengths").to_string();
        assert!(msg.contains("values"), "{msg}");
        // A failing rank (a NaN on the last rank): its error there, its message elsewhere.
        let mut v = field(64, rank);
        if rank == size - 1 {
            v[3] = f32::NAN;
        }
        let e = fzpack::mpi::allreduce_sum(&w, &v, 1e-3)
            .expect_err("failed rank")
            .to_string();
        blames_last(&e, rank, size, "non-finite", "");
        // Different pipeline chunks: every rank gets the error.
        let pipe = Pipeline {
            chunk: 1000 + rank as usize,
        };
        let e =
            fzpack::mpi::allreduce_sum_pipelined(&w, &field(64, rank), &Config::abs(1e-3), &pipe)
                .expect_err("mismatched chunks")
                .to_string();
        assert!(e.contains("pipeline chunks"), "{e}");
        // A rank that fails in the middle of the pipeline (a value above the declared max_abs in
        // its last chunk): its error there, its rank's message on every other rank, no hang.
        let mut v = field(50_000, rank);
        if rank == size - 1 {
            v[49_990] = 1e6;
        }
        let cfg = Config::abs(1e-3).with_max_abs(1e3);
        let e = fzpack::mpi::allreduce_sum_pipelined(&w, &v, &cfg, &Pipeline { chunk: 1000 })
            .expect_err("failed mid-pipeline")
            .to_string();
        blames_last(&e, rank, size, "max_abs", " failed");
        // The communicator still works afterwards.
        let ok = fzpack::mpi::allreduce_sum(&w, &field(64, rank), 1e-3).unwrap();
        assert!(same_everywhere(&w, &ok));
    }
    if rank == 0 {
        println!("mpi collectives: ranks={size} ok");
    }
}
