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
use fzpack_core::pernix::{Backend, Dispatcher, PernixFloat};
use fzpack_core::szp::SzpFloat;

mod common;
use common::{Case, SIZES, WIDTHS};

fn bench_type<T: PernixFloat + SzpFloat>(c: &mut Criterion, name: &str) {
    let d = Dispatcher::new(Backend::Fallback).unwrap();
    for (size_name, bytes) in SIZES {
        let mut group = c.benchmark_group(format!("pernix_scalar/{name}/{size_name}"));
        common::configure(
            &mut group,
            common::quick_or(100, 400),
            common::quick_or(300, 1200),
        );
        for n in WIDTHS {
            let case = Case::<T>::new(n, bytes).unwrap();
            let mut packed = case.packed();
            let mut out = case.values();
            group.throughput(Throughput::BytesDecimal(case.float_bytes() as u64));
            group.bench_function(BenchmarkId::new("compress", n), |b| {
                b.iter(|| case.compress(&d, &mut packed))
            });
            case.compress(&d, &mut packed);
            group.bench_function(BenchmarkId::new("decompress", n), |b| {
                b.iter(|| case.decompress(&d, &packed, &mut out))
            });
        }
        group.finish();
    }
}

fn benches(c: &mut Criterion) {
    bench_type::<f32>(c, "f32");
    bench_type::<f64>(c, "f64");
}

criterion_group!(pernix_scalar, benches);
criterion_main!(pernix_scalar);
