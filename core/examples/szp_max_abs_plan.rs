//! Single-thread SZp compression with a declared `max_abs` (diagnostic): the planner's scalar
//! pass (`blocks::plan`, how a declared `max_abs` used to be planned) against the kernel's
//! statistics pass (`engine::plan_on`, how it is planned now), alternated round by round, with
//! the same compression without `max_abs` and a warm `memcpy` of the input's size in the same
//! run. Checks that both plans give the same archive.
//!
//! `cargo run --release -p fzpack-core --example szp_max_abs_plan -- [ROUNDS] [ETOPO5.f32]`
//! (default 9 rounds; `/work/shared/data/ferret_etopo5_2161x4320.f32` if present) plus a
//! 64 MiB f32 random walk.

use std::hint::black_box;
use std::time::Instant;

use fzpack_core::szp::engine::{self, Serial};
use fzpack_core::szp::{self, Config, DType, Kernel, blocks};

fn walk(n: usize) -> Vec<f32> {
    let (mut s, mut acc) = (0x9E37_79B9_7F4A_7C15u64, 0.0f64);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            acc += (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            acc as f32
        })
        .collect()
}

fn gbs(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e9
}

fn bench(name: &str, x: &[f32], rounds: usize) {
    let (lo, hi) = x.iter().fold((f64::MAX, f64::MIN), |(a, b), &v| {
        (a.min(v.into()), b.max(v.into()))
    });
    let m = lo.abs().max(hi.abs());
    let declared = Config::abs(1e-3 * (hi - lo)).with_max_abs(m);
    let plain = Config::abs(1e-3 * (hi - lo));
    let path = Kernel::best();
    let cap = szp::max_compressed_len(x.len(), 128, DType::F32).expect("size");
    let (mut a, mut b) = (vec![0u8; cap], vec![0u8; cap]);
    let bytes = size_of_val(x);
    let mut dst = vec![0f32; x.len()];
    // [memcpy, old, new, no max_abs, old plan only, new plan only]: seconds per round
    let mut t = vec![Vec::new(); 6];
    let time = |f: &mut dyn FnMut()| {
        let s = Instant::now();
        f();
        s.elapsed().as_secs_f64()
    };
    for _ in 0..rounds {
        t[0].push(time(&mut || dst.copy_from_slice(black_box(x))));
        black_box(&dst);
        let la = time(&mut || {
            let plan = blocks::plan(x, &declared).expect("plan");
            let n = engine::compress_planned_on(path, &Serial, &plan, m, x, &mut a).expect("old");
            black_box(n);
        });
        t[1].push(la);
        t[2].push(time(&mut || {
            black_box(engine::compress_on(path, &Serial, x, &declared, &mut b).expect("new"));
        }));
        t[3].push(time(&mut || {
            black_box(engine::compress_on(path, &Serial, x, &plain, &mut b).expect("plain"));
        }));
        t[4].push(time(&mut || {
            black_box(blocks::plan(x, &declared).expect("plan"));
        }));
        t[5].push(time(&mut || {
            black_box(engine::plan_on(path, &Serial, x, &declared).expect("plan"));
        }));
    }
    let old = blocks::plan(x, &declared).expect("plan");
    let na = engine::compress_planned_on(path, &Serial, &old, m, x, &mut a).expect("old");
    let nb = engine::compress_on(path, &Serial, x, &declared, &mut b).expect("new");
    assert!(a[..na] == b[..nb], "old and new archives differ");
    assert_eq!(
        engine::plan_on(path, &Serial, x, &declared).expect("plan"),
        (old, m)
    );
    println!(
        "{name}: {} MB f32, path {path:?}, 1 thread, ABS 1e-3·range, max_abs = max |x|, ratio {:.2}, {rounds} rounds alternated",
        bytes as f64 / 1e6,
        bytes as f64 / na as f64
    );
    let names = [
        "memcpy (warm)",
        "compress, max_abs, old (scalar plan)",
        "compress, max_abs, new (stats plan)",
        "compress, no max_abs",
        "plan only, old (blocks::plan)",
        "plan only, new (engine::plan_on)",
    ];
    for (n, v) in names.iter().zip(&mut t) {
        v.sort_by(f64::total_cmp);
        println!(
            "  {n:40} best {:7.3} GB/s  median {:7.3} GB/s",
            gbs(bytes, v[0]),
            gbs(bytes, v[v.len() / 2])
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(9);
    let etopo = args
        .get(2)
        .cloned()
        .unwrap_or_else(|| "/work/shared/data/ferret_etopo5_2161x4320.f32".into());
    match std::fs::read(&etopo) {
        Ok(raw) => {
            let x: Vec<f32> = raw
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            bench("etopo5", &x, rounds);
        }
        Err(e) => println!("etopo5: {etopo} not read ({e}); skipped"),
    }
    bench("random walk", &walk(16 << 20), rounds);
}
