//! The rayon driver writes exactly the serial bytes: PERNIX runs of blocks and PERNIX block
//! streams, over many sizes, thread counts and chunk sizes, f32 and f64.

use std::sync::Arc;

use fzpack::Element;
use fzpack::par::Parallel;
use fzpack::pernix::{self, Backend, BitWidth, BlockSize, Dispatcher, elements_per_block};

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
            T::from_f64((i as f64 * 0.013).sin() * 300.0 + noise * (1.0 + (i % 97) as f64))
        })
        .collect()
}

fn check_streams<T: Element>() {
    let serial = Dispatcher::new(Backend::Fallback).unwrap();
    let sizes = [0usize, 1, 7, 31, 32, 33, 255, 1000, 4097, 20_000, 65_537];
    for threads in [1, 2, 3, 4, 7] {
        let p = pool(threads);
        for min_chunk in [0usize, 64, 5000] {
            let par = Parallel::with_pool(p.clone()).min_chunk_bytes(min_chunk);
            let d = Dispatcher::with_parallel(Backend::Auto, par).unwrap();
            assert_eq!(d.backend(), Backend::FallbackStdpar);
            for (k, &n) in sizes.iter().enumerate() {
                let x = field::<T>(n, k as u64);
                for (bits, bs) in [(1u8, 64u32), (5, 64), (12, 128), (16, 64), (23, 1024)] {
                    let (bits, bs) = (BitWidth::new(bits).unwrap(), BlockSize::new(bs).unwrap());
                    let enc = pernix::Encoder::new(bits, bs);
                    let a = enc.clone().dispatcher(&serial).to_vec(&x).unwrap();
                    let b = enc.dispatcher(&d).to_vec(&x).unwrap();
                    assert_eq!(
                        a, b,
                        "n={n} threads={threads} chunk={min_chunk} {bits:?} {bs:?}"
                    );
                    let dec = pernix::Decoder::new();
                    let ya: Vec<T> = dec.clone().dispatcher(&serial).to_vec(&a).unwrap();
                    let yb: Vec<T> = dec.dispatcher(&d).to_vec(&a).unwrap();
                    assert_eq!(
                        ya.iter().map(|v| v.to_bits_u64()).collect::<Vec<_>>(),
                        yb.iter().map(|v| v.to_bits_u64()).collect::<Vec<_>>()
                    );
                }
            }
        }
    }
}

#[test]
fn streams_f32_serial_equals_parallel() {
    check_streams::<f32>();
}

#[test]
fn streams_f64_serial_equals_parallel() {
    check_streams::<f64>();
}

#[test]
fn runs_of_blocks_serial_equals_parallel() {
    let serial = Dispatcher::new(Backend::Fallback).unwrap();
    for threads in [1, 2, 5] {
        let d = Dispatcher::with_parallel(
            Backend::Auto,
            Parallel::with_pool(pool(threads)).min_chunk_bytes(0),
        )
        .unwrap();
        for blocks in [1usize, 2, 3, 17, 100] {
            for bits in [1u8, 3, 8, 13, 24] {
                let bits = BitWidth::new(bits).unwrap();
                let bs = BlockSize::B256;
                let e = elements_per_block(bits, bs);
                let x = field::<f32>(e * blocks, blocks as u64);
                let inv = 1.0 / (300.0 / 127.0);
                let mut a = vec![0xAAu8; 256 * blocks];
                let mut b = vec![0x55u8; 256 * blocks];
                serial
                    .compress_blocks(bits, bs, &x, inv, &mut a, blocks)
                    .unwrap();
                d.compress_blocks(bits, bs, &x, inv, &mut b, blocks)
                    .unwrap();
                assert_eq!(a, b);
                let mut ya = vec![1.0f32; e * blocks];
                let mut yb = vec![2.0f32; e * blocks];
                serial
                    .decompress_blocks(bits, bs, &a, 0.5, &mut ya, blocks, true)
                    .unwrap();
                d.decompress_blocks(bits, bs, &a, 0.5, &mut yb, blocks, true)
                    .unwrap();
                assert_eq!(ya, yb);
            }
        }
    }
}

#[test]
fn fallback_stdpar_resolves_and_errors_match_the_core() {
    let d = Dispatcher::new(Backend::FallbackStdpar).unwrap();
    assert_eq!(d.backend(), Backend::FallbackStdpar);
    assert_ne!(d.kernel_backend(), Backend::FallbackStdpar);
    let bits = BitWidth::new(8).unwrap();
    let mut out = [0u8; 64];
    // zero blocks, short buffers, bad scale: InvalidArgument as in the core
    assert_eq!(
        d.compress_blocks(bits, BlockSize::B64, &[0f32; 64], 1.0, &mut out, 0),
        Err(fzpack::pernix::Error::InvalidArgument)
    );
    assert_eq!(
        d.compress_blocks(bits, BlockSize::B64, &[0f32; 10], 1.0, &mut out, 1),
        Err(fzpack::pernix::Error::InvalidArgument)
    );
    assert_eq!(
        d.compress_blocks(bits, BlockSize::B64, &[0f32; 64], f32::NAN, &mut out, 1),
        Err(fzpack::pernix::Error::InvalidArgument)
    );
    assert_eq!(
        Dispatcher::new(Backend::FallbackSimd).unwrap_err(),
        fzpack::pernix::Error::UnsupportedImplementation
    );
}

#[test]
fn first_non_finite_index_is_deterministic() {
    let mut x = field::<f32>(50_000, 9);
    x[31_234] = f32::NAN;
    x[45_000] = f32::INFINITY;
    for threads in [1, 2, 4] {
        let d = Dispatcher::with_parallel(
            Backend::Auto,
            Parallel::with_pool(pool(threads)).min_chunk_bytes(0),
        )
        .unwrap();
        let err = pernix::Encoder::new(BitWidth::new(8).unwrap(), BlockSize::B64)
            .dispatcher(&d)
            .to_vec(&x)
            .unwrap_err();
        assert!(
            matches!(err, fzpack::Error::NonFinite { index: 31_234 }),
            "{err}"
        );
    }
}
