//! The rayon SZp driver writes exactly the core's serial archive and decodes the same values,
//! over many sizes, block sizes, bounds, thread counts and chunk sizes; errors match too.

use std::sync::Arc;

use fzpack::Element;
use fzpack::par::Parallel;
use fzpack::szp::{self, Config, Layout};

fn pool(threads: usize) -> Arc<fzpack::par::rayon::ThreadPool> {
    Arc::new(
        fzpack::par::rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap(),
    )
}

fn field<T: Element>(n: usize, seed: u64) -> Vec<T> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let noise = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            let flat = if (i / 700) % 3 == 0 { 0.0 } else { 1.0 };
            T::from_f64(flat * ((i as f64 * 0.011).sin() * 300.0 + noise * 5.0))
        })
        .collect()
}

fn bits<T: Element>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits_u64()).collect()
}

fn check<T: Element>() {
    let sizes = [0usize, 1, 2, 127, 128, 129, 1000, 4097, 30_001, 100_000];
    let cfgs = [
        Config::noa(1e-3),
        Config::abs(0.05).with_block_size(1),
        Config::abs(1e-2).with_block_size(37),
        Config::noa(1e-6).with_block_size(4096),
        Config::abs(2.0).stage_compatible(),
        // The block-head layout: head groups of 32 blocks (bs 1, 37, 128) and of 4 (bs 4096).
        Config::noa(1e-3).with_layout(Layout::Heads),
        Config::abs(0.05)
            .with_block_size(1)
            .with_layout(Layout::Heads),
        Config::abs(1e-2)
            .with_block_size(37)
            .with_layout(Layout::Heads),
        Config::noa(1e-6)
            .with_block_size(4096)
            .with_layout(Layout::Heads),
    ];
    let pools: Vec<_> = [1, 2, 5].into_iter().map(pool).collect();
    for (k, &n) in sizes.iter().enumerate() {
        let x = field::<T>(n, k as u64);
        for cfg in &cfgs {
            // the scalar reference of the core
            let serial = szp::Encoder::new(cfg)
                .kernel(szp::Kernel::Scalar)
                .serial()
                .to_vec(&x);
            let decoded: Option<Vec<T>> = serial.as_ref().ok().map(|a| {
                szp::Decoder::new()
                    .kernel(szp::Kernel::Scalar)
                    .serial()
                    .to_vec(a)
                    .unwrap()
            });
            for p in &pools {
                for min_chunk in [0usize, 100, 1 << 20] {
                    let par = Parallel::with_pool(p.clone()).min_chunk_bytes(min_chunk);
                    let mut runs = vec![(
                        "blocks",
                        szp::Encoder::new(cfg)
                            .kernel(szp::Kernel::Scalar)
                            .threads(&par)
                            .to_vec(&x),
                    )];
                    for path in szp::Kernel::ALL.into_iter().filter(|p| p.is_available()) {
                        runs.push((
                            path.name(),
                            szp::Encoder::new(cfg).kernel(path).threads(&par).to_vec(&x),
                        ));
                    }
                    for (what, got) in &runs {
                        match (&serial, got) {
                            (Ok(a), Ok(b)) => {
                                assert_eq!(a, b, "{what} n={n} {cfg:?} chunk={min_chunk}")
                            }
                            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                            _ => panic!("{what} n={n} {cfg:?}: serial {serial:?} vs {got:?}"),
                        }
                    }
                    if let (Ok(a), Some(ya)) = (&serial, &decoded) {
                        let yb: Vec<T> = szp::Decoder::new()
                            .kernel(szp::Kernel::Scalar)
                            .threads(&par)
                            .to_vec(a)
                            .unwrap();
                        assert_eq!(bits(ya), bits(&yb), "blocks n={n} {cfg:?}");
                        for path in szp::Kernel::ALL.into_iter().filter(|p| p.is_available()) {
                            let yc: Vec<T> = szp::Decoder::new()
                                .kernel(path)
                                .threads(&par)
                                .to_vec(a)
                                .unwrap();
                            assert_eq!(bits(ya), bits(&yc), "{} n={n} {cfg:?}", path.name());
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn f32_serial_equals_parallel() {
    check::<f32>();
}

#[test]
fn f64_serial_equals_parallel() {
    check::<f64>();
}

/// Inputs large enough that the join of the two top ranges moves megabytes of compressed bytes
/// down, in parallel waves (a large gap between worst case and actual size) and in many
/// waves or one serial copy (a small gap): the archive is still the serial one.
#[test]
fn large_inputs_move_the_same_bytes() {
    let n = 3 << 20;
    let mut acc = 0.0f64;
    let mut s = 7u64;
    let walk: Vec<f32> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            acc += (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            acc as f32
        })
        .collect();
    let path = szp::Kernel::best();
    for cfg in [
        Config::noa(1e-2),
        Config::noa(1e-6),
        Config::abs(1e-4).with_block_size(4096),
        Config::noa(1e-3).with_layout(Layout::Heads),
    ] {
        let serial = szp::Encoder::new(&cfg)
            .kernel(path)
            .serial()
            .to_vec(&walk)
            .unwrap();
        for threads in [2, 3] {
            let par = Parallel::with_pool(pool(threads));
            let got = szp::Encoder::new(&cfg)
                .kernel(path)
                .threads(&par)
                .to_vec(&walk)
                .unwrap();
            assert!(got == serial, "{cfg:?} threads={threads}");
        }
    }
}

#[test]
fn errors_name_the_same_index() {
    // Missing values are stored, with the same bytes on every thread count.
    let mut x = field::<f32>(200_000, 3);
    x[150_001] = f32::NAN;
    x[170_000] = f32::INFINITY;
    let serial = szp::Encoder::new(&Config::abs(1e-3))
        .serial()
        .to_vec(&x)
        .unwrap();
    for threads in [1, 2, 4] {
        let par = Parallel::with_pool(pool(threads)).min_chunk_bytes(0);
        let a = szp::Encoder::new(&Config::abs(1e-3))
            .threads(&par)
            .to_vec(&x)
            .unwrap();
        assert!(a == serial, "threads={threads}");
    }
    // max_abs exceeded, constant field under NOA
    let y = field::<f64>(50_000, 4);
    let par = Parallel::with_pool(pool(2)).min_chunk_bytes(0);
    let a = szp::Encoder::new(&Config::abs(1e-3).with_max_abs(10.0))
        .serial()
        .to_vec(&y)
        .unwrap_err();
    let b = szp::Encoder::new(&Config::abs(1e-3).with_max_abs(10.0))
        .threads(&par)
        .to_vec(&y)
        .unwrap_err();
    assert_eq!(a.to_string(), b.to_string());
    let c = vec![1.5f64; 50_000];
    assert!(matches!(
        szp::Encoder::new(&Config::noa(1e-3))
            .threads(&par)
            .to_vec(&c)
            .unwrap_err(),
        fzpack::Error::Szp(szp::Error::ZeroRange)
    ));
}

#[test]
fn hostile_archives_fail_in_parallel_too() {
    let x = field::<f32>(60_000, 5);
    let a = szp::Encoder::new(&Config::abs(1e-2))
        .serial()
        .to_vec(&x)
        .unwrap();
    let par = Parallel::with_pool(pool(2)).min_chunk_bytes(0);
    for cut in [0, 10, 47, 48, 60, a.len() / 2, a.len() - 1] {
        assert!(
            szp::Decoder::new()
                .threads(&par)
                .to_vec::<f32>(&a[..cut])
                .is_err(),
            "cut {cut}"
        );
    }
    let mut bad = a.clone();
    bad[szp::HEADER_LEN + 3] = 65; // width above 64
    assert!(
        szp::Decoder::new()
            .threads(&par)
            .to_vec::<f32>(&bad)
            .is_err()
    );
    // A flipped payload bit in any chunk is caught by the parallel decoder (chunks verified in
    // parallel, each before it is decoded), with the same error as the serial one; Skip decodes.
    let view = szp::blocks::parse(&a).unwrap();
    let chunks = view.sums.len() / 4;
    assert!(chunks >= 4, "{chunks} chunks");
    let start = szp::HEADER_LEN + view.widths.len();
    for k in 0..16 {
        let mut bad = a.clone();
        let at = start + k * view.payload.len() / 16;
        bad[at] ^= 0x20;
        let serial = szp::Decoder::new()
            .serial()
            .to_vec::<f32>(&bad)
            .unwrap_err();
        let parallel = szp::Decoder::new()
            .threads(&par)
            .to_vec::<f32>(&bad)
            .unwrap_err();
        assert!(
            matches!(
                serial,
                fzpack::Error::Szp(szp::Error::ChecksumMismatch { what: "blocks", .. })
            ),
            "{serial:?}"
        );
        assert_eq!(serial.to_string(), parallel.to_string());
        let skipped: Vec<f32> = szp::Decoder::new()
            .threads(&par)
            .verify(szp::Verify::Skip)
            .to_vec(&bad)
            .unwrap();
        assert_eq!(skipped.len(), x.len());
    }
    // Skip and Checksums agree on a good archive, serial and parallel.
    let full: Vec<f32> = szp::Decoder::new().threads(&par).to_vec(&a).unwrap();
    let skip: Vec<f32> = szp::Decoder::new()
        .threads(&par)
        .verify(szp::Verify::Skip)
        .to_vec(&a)
        .unwrap();
    let ser: Vec<f32> = szp::Decoder::new()
        .verify(szp::Verify::Skip)
        .to_vec(&a)
        .unwrap();
    assert!(full == skip && skip == ser);
    assert!(matches!(
        szp::Decoder::new()
            .threads(&par)
            .to_vec::<f64>(&a)
            .unwrap_err(),
        fzpack::Error::DTypeMismatch { .. }
    ));
}
