//! A declared `max_abs` (`Config::with_max_abs`) is checked on the kernels' fast statistics
//! pass: the archive is the scalar reference's byte for byte on every path (scalar, portable,
//! AVX2, AVX-512 where the CPU has them) and every thread count, the plan and its `|x|` bound
//! are the reference's, and an input that breaks the promise (a value above `max_abs`, a NaN,
//! an infinity) is refused with the reference's error naming the same first bad index.

use std::sync::Arc;

use fzpack::Element;
use fzpack::par::Parallel;
use fzpack_core::szp::engine::{self, Serial};
use fzpack_core::szp::{self, Config, Error, Kernel, Layout};

fn pool(threads: usize) -> Arc<fzpack::par::rayon::ThreadPool> {
    Arc::new(
        fzpack::par::rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap(),
    )
}

/// A random walk with a slow wave on top (signed values, both extremes reached mid-array).
fn walk<T: Element>(n: usize, seed: u64) -> Vec<T> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut acc = 0.0f64;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            acc += (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            T::from_f64(acc + (i as f64 * 0.003).sin() * 40.0)
        })
        .collect()
}

fn mag<T: Element>(x: &[T]) -> f64 {
    x.iter().map(|v| v.to_f64().abs()).fold(0.0, f64::max)
}

fn paths() -> Vec<Kernel> {
    Kernel::ALL
        .into_iter()
        .filter(|p| p.is_available())
        .collect()
}

/// The core error of a std-facade error.
fn core_err(e: fzpack::Error) -> Error {
    match e {
        fzpack::Error::Szp(e) => e,
        fzpack::Error::NonFinite { index } => Error::NonFinite { index },
        other => panic!("not an SZp error: {other}"),
    }
}

/// Every way to compress `x` under `cfg` gives `want` (the archive or the error): each path on
/// one thread (the path-selected entry point and the engine with the `Serial` join), and the
/// rayon driver on each path with 1, 2 and 5 threads and small grains (so that the statistics
/// pass splits). The plan and bound of `plan_on` match the scalar reference's on every path.
fn check_all<T: Element>(x: &[T], cfg: &Config, want: &Result<Vec<u8>, Error>, what: &str) {
    let plan_ref = engine::plan_on(Kernel::Scalar, &Serial, x, cfg);
    match (&plan_ref, want) {
        (Ok((_, bound)), Ok(_)) => assert_eq!(Some(*bound), cfg.max_abs, "{what}"),
        (Err(a), Err(b)) => assert_eq!(a, b, "{what}"),
        _ => panic!("{what}: plan {plan_ref:?} vs archive {want:?}"),
    }
    let pools: Vec<_> = [1, 2, 5].into_iter().map(pool).collect();
    for path in paths() {
        let tag = format!("{what} {path:?} {cfg:?}");
        assert_eq!(
            engine::plan_on(path, &Serial, x, cfg),
            plan_ref,
            "plan: {tag}"
        );
        let cap = szp::max_compressed_len(x.len(), cfg.block_size, T::DTYPE).unwrap();
        let mut out = vec![0u8; cap];
        let serial = szp::compress_with(path, x, cfg, &mut out).map(|n| out[..n].to_vec());
        assert_eq!(&serial, want, "compress_with: {tag}");
        let mut out = vec![0u8; cap];
        let eng = engine::compress_on(path, &Serial, x, cfg, &mut out).map(|n| out[..n].to_vec());
        assert_eq!(&eng, want, "engine Serial: {tag}");
        for p in &pools {
            for min_chunk in [0usize, 256] {
                let par = Parallel::with_pool(p.clone()).min_chunk_bytes(min_chunk);
                assert_eq!(
                    p.install(|| engine::plan_on(
                        path,
                        &fzpack::par::RayonJoin::for_job(&par, size_of_val(x)),
                        x,
                        cfg
                    )),
                    plan_ref,
                    "rayon plan: {tag} threads={}",
                    p.current_num_threads()
                );
                let got = fzpack::szp::Encoder::new(cfg)
                    .kernel(path)
                    .threads(&par)
                    .to_vec(x)
                    .map_err(core_err);
                assert!(
                    &got == want,
                    "rayon: {tag} threads={} chunk={min_chunk}: {:?}",
                    p.current_num_threads(),
                    got.as_ref().map(|v| v.len())
                );
            }
        }
    }
}

/// ABS configs with `max_abs = m` (block sizes, layouts, strict or not), and NOA where `n`
/// values can have a range.
fn configs(m: f64, n: usize) -> Vec<Config> {
    let mut v = vec![
        Config::abs(1e-2).with_max_abs(m),
        Config::abs(1e-3).with_block_size(37).with_max_abs(m),
        Config::abs(0.5).with_block_size(1).with_max_abs(m),
        Config::abs(1e-4)
            .with_block_size(4096)
            .with_max_abs(m)
            .with_layout(Layout::Heads),
        Config::abs(1e-2).with_max_abs(m).with_layout(Layout::Heads),
        Config::abs(1e-2).with_max_abs(m).stage_compatible(),
    ];
    if n >= 2 {
        v.push(Config::noa(1e-3).with_max_abs(m));
    }
    v
}

fn archives<T: Element>() {
    for (k, n) in [1usize, 2, 127, 1000, 4097, 30_001].into_iter().enumerate() {
        let x = walk::<T>(n, k as u64 + 1);
        let m = mag(&x);
        // The data's own magnitude (some value sits exactly at the bound) and a larger one.
        for m in [m, m * 1.5 + 1.0] {
            for cfg in configs(m, n) {
                let cap = szp::max_compressed_len(n, cfg.block_size, T::DTYPE).unwrap();
                let mut out = vec![0u8; cap];
                let want = szp::compress_with(szp::Kernel::Scalar, &x, &cfg, &mut out)
                    .map(|l| out[..l].to_vec());
                assert!(want.is_ok(), "n={n} {cfg:?}: {want:?}");
                check_all(&x, &cfg, &want, &format!("n={n}"));
                // The declared grid differs from the data's: the archive is not the one
                // without `max_abs` (so this test would see the bound ignored).
                let plain = Config {
                    max_abs: None,
                    ..cfg
                };
                let p = fzpack::szp::Encoder::new(&plain)
                    .kernel(Kernel::best())
                    .serial()
                    .to_vec(&x)
                    .unwrap();
                if cfg.strict && n > 2 && m > mag(&x) {
                    assert!(Ok(&p) != want.as_ref(), "n={n} {cfg:?}");
                }
            }
        }
    }
}

#[test]
fn f32_archives_match_on_every_path_and_thread_count() {
    archives::<f32>();
}

#[test]
fn f64_archives_match_on_every_path_and_thread_count() {
    archives::<f64>();
}

/// One input breaking the promise: values written at indices, and the error expected.
struct Bad {
    what: &'static str,
    put: Vec<(usize, f64)>,
    want: Option<Error>,
}

fn bad_cases(n: usize, m: f64) -> Vec<Bad> {
    let over = m * 1.01 + 1e-3;
    let mid = n / 2 + 1; // off the halves' split point, before `last`
    let last = n - 1;
    vec![
        Bad {
            what: "above max_abs (positive) mid-array",
            put: vec![(mid, over)],
            want: Some(Error::ValueOutOfRange { index: mid }),
        },
        Bad {
            what: "below -max_abs mid-array",
            put: vec![(mid, -over)],
            want: Some(Error::ValueOutOfRange { index: mid }),
        },
        Bad {
            what: "above max_abs at index 0",
            put: vec![(0, over)],
            want: Some(Error::ValueOutOfRange { index: 0 }),
        },
        Bad {
            what: "below -max_abs at the last index",
            put: vec![(last, -over)],
            want: Some(Error::ValueOutOfRange { index: last }),
        },
        Bad {
            what: "NaN mid-array (a missing value: stored)",
            put: vec![(mid, f64::NAN)],
            want: None,
        },
        Bad {
            what: "infinity at the last index (stored)",
            put: vec![(last, f64::INFINITY)],
            want: None,
        },
        Bad {
            what: "-infinity at index 0 (stored)",
            put: vec![(0, f64::NEG_INFINITY)],
            want: None,
        },
        Bad {
            what: "over-range before a NaN",
            put: vec![(mid, over), (last, f64::NAN)],
            want: Some(Error::ValueOutOfRange { index: mid }),
        },
        Bad {
            what: "NaN before an over-range value: the over-range value is named",
            put: vec![(mid, f64::NAN), (last, -over)],
            want: Some(Error::ValueOutOfRange { index: last }),
        },
        Bad {
            what: "two over-range values: the first is named",
            put: vec![(last, over * 3.0), (mid, -over)],
            want: Some(Error::ValueOutOfRange { index: mid }),
        },
        Bad {
            what: "exactly +max_abs and -max_abs are allowed",
            put: vec![(0, m), (last, -m)],
            want: None,
        },
    ]
}

fn bad_inputs<T: Element>() {
    for (k, n) in [7usize, 1000, 30_001].into_iter().enumerate() {
        let base = walk::<T>(n, k as u64 + 11);
        // A bound every value of the walk keeps, representable in `T`.
        let m = T::from_f64(mag(&base) * 1.25 + 0.5).to_f64();
        for case in bad_cases(n, m) {
            let mut x = base.clone();
            for &(i, v) in &case.put {
                x[i] = T::from_f64(v);
            }
            for cfg in configs(m, n) {
                let cap = szp::max_compressed_len(n, cfg.block_size, T::DTYPE).unwrap();
                let mut out = vec![0u8; cap];
                let want = szp::compress_with(szp::Kernel::Scalar, &x, &cfg, &mut out)
                    .map(|l| out[..l].to_vec());
                match case.want {
                    Some(e) => assert_eq!(want, Err(e), "n={n} {}", case.what),
                    None => assert!(want.is_ok(), "n={n} {}: {want:?}", case.what),
                }
                check_all(&x, &cfg, &want, &format!("n={n} {}", case.what));
            }
        }
    }
}

#[test]
fn f32_first_bad_index_matches_on_every_path_and_thread_count() {
    bad_inputs::<f32>();
}

#[test]
fn f64_first_bad_index_matches_on_every_path_and_thread_count() {
    bad_inputs::<f64>();
}
