//! The builders' `into_vec` sinks equal `to_vec` byte for byte, reuse the caller's capacity,
//! and every thread count writes the same archive on every available path; unavailable paths
//! are errors on the parallel driver too.

use std::sync::Arc;

use fzpack::par::Parallel;
use fzpack::szp::{self, Config, Error, Kernel};

fn pool(threads: usize) -> Arc<fzpack::par::rayon::ThreadPool> {
    Arc::new(
        fzpack::par::rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap(),
    )
}

fn field(n: usize) -> Vec<f32> {
    let mut walk = 0f32;
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            walk += ((s >> 40) as f32 / (1u64 << 24) as f32) - 0.5;
            walk
        })
        .collect()
}

#[test]
fn into_equals_vec_and_reuses_capacity() {
    let cfg = Config::abs(1e-2);
    let mut archive = Vec::new();
    let mut back: Vec<f32> = Vec::new();
    for n in [0usize, 1, 127, 128, 129, 70_000, 300_000] {
        let x = field(n);
        let v = szp::compress(&x, &cfg).unwrap();
        let len = szp::Encoder::new(&cfg).into_vec(&x, &mut archive).unwrap();
        assert_eq!(len, archive.len());
        assert_eq!(archive, v, "n={n}");
        assert_eq!(
            szp::Encoder::new(&cfg)
                .kernel(Kernel::Scalar)
                .serial()
                .to_vec(&x)
                .unwrap(),
            v
        );
        let d: Vec<f32> = szp::decompress(&v).unwrap();
        assert_eq!(szp::Decoder::new().into_vec(&v, &mut back).unwrap(), n);
        assert_eq!(
            back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            d.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }
    // A second call of the same size reuses the allocation.
    let x = field(200_000);
    szp::Encoder::new(&cfg).into_vec(&x, &mut archive).unwrap();
    let (p, cap) = (archive.as_ptr(), archive.capacity());
    szp::Encoder::new(&cfg).into_vec(&x, &mut archive).unwrap();
    assert_eq!((archive.as_ptr(), archive.capacity()), (p, cap));
    let a = archive.clone();
    szp::Decoder::new().into_vec(&a, &mut back).unwrap();
    let q = back.as_ptr();
    szp::Decoder::new().into_vec(&a, &mut back).unwrap();
    assert_eq!(back.as_ptr(), q);
    // Errors leave the output empty.
    let mut bad = x.clone();
    bad[150_000] = f32::MAX; // a level the bound cannot hold
    let r = szp::Encoder::new(&cfg).into_vec(&bad, &mut archive);
    assert!(r.is_err());
    assert!(archive.is_empty());
}

#[test]
fn every_thread_count_and_path_writes_the_same_bytes() {
    let x = field(600_000);
    let cfg = Config::abs(1e-2).with_block_size(64);
    let reference = szp::Encoder::new(&cfg)
        .kernel(Kernel::Scalar)
        .serial()
        .to_vec(&x)
        .unwrap();
    let back: Vec<f32> = szp::Decoder::new()
        .kernel(Kernel::Scalar)
        .serial()
        .to_vec(&reference)
        .unwrap();
    for threads in 1..=4 {
        let par = Parallel::with_pool(pool(threads)).min_chunk_bytes(4096);
        for path in Kernel::ALL {
            let r = szp::Encoder::new(&cfg)
                .kernel(path)
                .threads(&par)
                .to_vec(&x);
            if !path.is_available() {
                assert!(
                    matches!(r, Err(fzpack::Error::Szp(Error::UnsupportedPath))),
                    "{path:?}: {r:?}"
                );
                continue;
            }
            assert_eq!(r.unwrap(), reference, "{path:?} threads={threads}");
            let d: Vec<f32> = szp::Decoder::new()
                .kernel(path)
                .threads(&par)
                .to_vec(&reference)
                .unwrap();
            assert!(
                d.iter().zip(&back).all(|(a, b)| a.to_bits() == b.to_bits()),
                "{path:?} threads={threads}"
            );
        }
    }
}

#[test]
fn the_plans_worst_case_bounds_every_archive() {
    use szp::engine::{self, Serial};
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for _ in 0..200 {
        let scale = 2f64.powi((next() % 60) as i32 - 30);
        let n = (next() % 3000) as usize + 2;
        let x: Vec<f64> = (0..n)
            .map(|_| ((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * scale)
            .collect();
        let bs = (next() % 200 + 1) as u32;
        let eb = scale * 2f64.powi(-((next() % 40) as i32));
        for cfg in [
            Config::abs(eb).with_block_size(bs),
            Config::noa(1e-4).with_block_size(bs).stage_compatible(),
        ] {
            let Ok((plan, max_abs)) = engine::plan_on(Kernel::Scalar, &Serial, &x, &cfg) else {
                continue;
            };
            let worst = engine::worst_len(&plan, max_abs);
            let a = szp::Encoder::new(&cfg)
                .kernel(Kernel::Scalar)
                .serial()
                .to_vec(&x)
                .unwrap();
            assert!(a.len() <= worst, "{} > {worst} {cfg:?}", a.len());
            // A buffer of exactly the worst case is always enough, on every path.
            for path in Kernel::ALL.into_iter().filter(|p| p.is_available()) {
                let mut out = vec![0u8; worst];
                let len =
                    szp::engine::compress_planned_on(path, &Serial, &plan, max_abs, &x, &mut out)
                        .unwrap();
                assert_eq!(out[..len], a[..]);
            }
        }
    }
}

/// The parallel slice encoder writes the `Vec` API's archive at the start of the slice on every
/// path and thread count, into the format's worst case, the plan's worst case or exactly the
/// archive's length; one byte less is `OutputTooSmall` naming the length, with nothing written.
#[test]
fn par_slice_equals_vec_and_fails_cleanly() {
    use szp::engine::{self, Serial};
    let x = field(300_000);
    for cfg in [
        Config::noa(1e-3),
        Config::abs(1e-2).with_block_size(64).stage_compatible(),
    ] {
        let reference = szp::Encoder::new(&cfg)
            .kernel(Kernel::Scalar)
            .serial()
            .to_vec(&x)
            .unwrap();
        let (plan, max_abs) = engine::plan_on(Kernel::Scalar, &Serial, &x, &cfg).unwrap();
        let lens = [
            szp::max_compressed_len(x.len(), cfg.block_size, szp::DType::F32).unwrap(),
            engine::worst_len(&plan, max_abs),
            reference.len(),
        ];
        for threads in [1, 2, 3] {
            let par = Parallel::with_pool(pool(threads)).min_chunk_bytes(4096);
            for path in Kernel::ALL.into_iter().filter(|p| p.is_available()) {
                for len in lens {
                    let mut out = vec![0xA5u8; len + 7];
                    let n = szp::Encoder::new(&cfg)
                        .kernel(path)
                        .threads(&par)
                        .into_slice(&x, &mut out[..len])
                        .unwrap_or_else(|e| panic!("{path:?} threads={threads} len={len}: {e}"));
                    assert_eq!(n, reference.len());
                    assert!(
                        out[..n] == reference[..],
                        "{path:?} threads={threads} len={len}"
                    );
                    assert!(
                        out[len..].iter().all(|&b| b == 0xA5),
                        "wrote past the slice"
                    );
                }
                let mut short = vec![0xA5u8; reference.len() - 1];
                let e = szp::Encoder::new(&cfg)
                    .kernel(path)
                    .threads(&par)
                    .into_slice(&x, &mut short)
                    .unwrap_err();
                let needed = match e {
                    fzpack::Error::Szp(Error::OutputTooSmall { needed }) => needed,
                    other => panic!("{path:?}: {other}"),
                };
                assert_eq!(needed, reference.len(), "{path:?}");
                assert!(
                    short.iter().all(|&b| b == 0xA5),
                    "{path:?}: wrote on failure"
                );
            }
        }
    }
}
