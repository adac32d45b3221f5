//! Times the SZp parallel encoders against the single-threaded best path on 64 MiB (diagnostic):
//! `cargo run --release -p fzpack --example szp_phases`.
use std::time::Instant;

use fzpack::par::Parallel;
use fzpack::szp::{Config, Encoder, Kernel};

fn main() {
    let x: Vec<f32> = (0..16 << 20)
        .map(|i| (i as f32 * 0.001).sin() * 100.0 + (i % 17) as f32 * 0.01)
        .collect();
    let cfg = Config::noa(1e-3);
    let par = Parallel::new();
    let t = |name: &str, f: &dyn Fn()| {
        let mut best = f64::MAX;
        for _ in 0..5 {
            let s = Instant::now();
            f();
            best = best.min(s.elapsed().as_secs_f64());
        }
        println!(
            "{name:30} {:8.1} ms  {:6.3} GB/s",
            best * 1e3,
            64.0 * 1.048576e-3 / best
        );
    };
    t("serial best", &|| {
        Encoder::new(&cfg).serial().to_vec(&x).unwrap();
    });
    t("par chunks (best path)", &|| {
        Encoder::new(&cfg).threads(&par).to_vec(&x).unwrap();
    });
    t("par blocks (scalar kernels)", &|| {
        Encoder::new(&cfg)
            .kernel(Kernel::Scalar)
            .threads(&par)
            .to_vec(&x)
            .unwrap();
    });
    let ccfg = Config::abs(0.1).stage_compatible();
    t("serial stage-compatible abs", &|| {
        Encoder::new(&ccfg).serial().to_vec(&x).unwrap();
    });
    t("alloc 128 MiB zeroed", &|| {
        let v = vec![0u8; 128 << 20];
        std::hint::black_box(&v);
    });
}
