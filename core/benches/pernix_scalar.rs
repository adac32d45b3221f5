//! Criterion benchmark of the portable scalar PERNIX path (`Backend::Fallback`).
//!
//! Compress and decompress, f32 and f64, bit widths 1, 4, 8, 12, 16, 20, 24, 64-byte blocks,
//! in cache (32 KiB of floats) and out of cache (64 MiB of floats). Throughput is GB/s of
//! float data (input floats for compress, output floats for decompress).
//!
//! `cargo bench -p fzpack-core --bench pernix_scalar` (add `-- 'f32/decompress'` to filter;
//! `FZPACK_BENCH_QUICK=1` shortens measurement for smoke runs).

#![allow(missing_docs)] // criterion_group! generates undocumented public functions

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use fzpack_core::pernix::{
    Backend, BitWidth, BlockSize, Dispatcher, PernixFloat, compression_scale_from_bmax,
    elements_per_block, scale_from_bmax,
};
use std::hint::black_box;
use std::time::Duration;

const WIDTHS: [u8; 7] = [1, 4, 8, 12, 16, 20, 24];
const SIZES: [(&str, usize); 2] = [("32KiB", 32 << 10), ("64MiB", 64 << 20)];

fn field<T: PernixFloat>(n: usize, from: fn(f64) -> T) -> Vec<T> {
    // A smooth field in [-1, 1] with some small-scale texture, like upstream's benchmark data.
    (0..n)
        .map(|i| {
            let x = i as f64;
            from(0.8 * (x * 0.001).sin() + 0.2 * (x * 0.37).cos())
        })
        .collect()
}

fn bench_type<T: PernixFloat>(c: &mut Criterion, name: &str, from: fn(f64) -> T, one: T) {
    let d = Dispatcher::new(Backend::Fallback).unwrap();
    let quick = std::env::var_os("FZPACK_BENCH_QUICK").is_some();
    for (size_name, bytes) in SIZES {
        let mut group = c.benchmark_group(format!("pernix_scalar/{name}/{size_name}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(if quick { 100 } else { 400 }))
            .measurement_time(Duration::from_millis(if quick { 300 } else { 1200 }));
        for n in WIDTHS {
            let bits = BitWidth::new(n).unwrap();
            let epb = elements_per_block(bits, BlockSize::B64);
            let blocks = (bytes / T::BYTES / epb).max(1);
            let input = field(blocks * epb, from);
            let inv = compression_scale_from_bmax(one, bits).unwrap();
            let scale = scale_from_bmax(one, bits).unwrap();
            let mut packed = vec![0u8; blocks * 64];
            let mut out = vec![T::ZERO; blocks * epb];
            group.throughput(Throughput::BytesDecimal((blocks * epb * T::BYTES) as u64));
            group.bench_function(BenchmarkId::new("compress", n), |b| {
                b.iter(|| {
                    d.compress_blocks(
                        bits,
                        BlockSize::B64,
                        black_box(&input),
                        inv,
                        &mut packed,
                        blocks,
                    )
                    .unwrap()
                })
            });
            d.compress_blocks(bits, BlockSize::B64, &input, inv, &mut packed, blocks)
                .unwrap();
            group.bench_function(BenchmarkId::new("decompress", n), |b| {
                b.iter(|| {
                    d.decompress_blocks(
                        bits,
                        BlockSize::B64,
                        black_box(&packed),
                        scale,
                        &mut out,
                        blocks,
                        true,
                    )
                    .unwrap()
                })
            });
        }
        group.finish();
    }
}

fn benches(c: &mut Criterion) {
    bench_type::<f32>(c, "f32", |x| x as f32, 1.0);
    bench_type::<f64>(c, "f64", |x| x, 1.0);
}

criterion_group!(pernix_scalar, benches);
criterion_main!(pernix_scalar);
