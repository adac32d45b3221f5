//! Criterion benchmark of the PERNIX SIMD backends, side by side with the scalar path and a
//! `memcpy` baseline of the same buffer size, in one run.
//!
//! Per backend × bit width × f32/f64 × compress/decompress, 64-byte blocks, in cache (32 KiB
//! of floats) and out of cache (64 MiB of floats). Throughput is bytes of float data (input
//! floats for compress, output floats for decompress); the memcpy baseline counts bytes copied.
//!
//! ```text
//! cargo bench -p fzpack-core --bench pernix_simd
//! FZPACK_BENCH_BACKENDS=avx512vbmi,avx2 FZPACK_BENCH_WIDTHS=8,12 FZPACK_BENCH_SIZES=32KiB \
//!     cargo bench -p fzpack-core --bench pernix_simd -- f32
//! ```
//! Environment: `FZPACK_BENCH_BACKENDS` (names as `Backend::name`: fallback, avx2, bmi2,
//! avx512vbmi; default: all available), `FZPACK_BENCH_WIDTHS` (default 1,4,8,12,16,20,24),
//! `FZPACK_BENCH_SIZES` (32KiB, 64MiB; default both), `FZPACK_BENCH_QUICK=1` (shorter
//! measurement for smoke runs).
//!
//! `FZPACK_PERNIX_QUICK=1` instead prints a side-by-side table for loaded machines: every
//! backend's decompress and compress and a `memcpy` of the output's bytes take turns (a batch
//! of calls each per round, best of `FZPACK_PERNIX_ROUNDS` rounds, default 30), reported in
//! GB/s and as a ratio to that memcpy. Same `FZPACK_BENCH_*` filters.

#![allow(missing_docs)] // criterion_group! generates undocumented public functions

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use fzpack_core::pernix::{Backend, Dispatcher, PernixFloat};
use fzpack_core::szp::SzpFloat;
use std::hint::black_box;

mod common;
use common::{Case, SIZES, WIDTHS, list};

fn widths() -> Vec<u8> {
    list("FZPACK_BENCH_WIDTHS")
        .map(|v| v.iter().filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| WIDTHS.to_vec())
}

fn sizes() -> Vec<(&'static str, usize)> {
    let want = list("FZPACK_BENCH_SIZES");
    SIZES
        .into_iter()
        .filter(|(n, _)| want.as_ref().is_none_or(|w| w.iter().any(|x| x == n)))
        .collect()
}

fn dispatchers() -> Vec<Dispatcher> {
    let want = list("FZPACK_BENCH_BACKENDS");
    [
        Backend::Fallback,
        Backend::X86Avx2,
        Backend::X86Bmi2,
        Backend::X86Avx512Vbmi,
    ]
    .into_iter()
    .filter(|b| {
        want.as_ref()
            .is_none_or(|w| w.iter().any(|x| x == b.name()))
    })
    .filter_map(|b| match Dispatcher::new(b) {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("pernix_simd: skipping {}: {e}", b.name());
            None
        }
    })
    .collect()
}

fn configure(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    common::configure(group, common::quick_or(50, 150), common::quick_or(150, 400));
}

fn bench_memcpy(c: &mut Criterion) {
    for (size_name, bytes) in sizes() {
        let mut group = c.benchmark_group(format!("pernix_simd/memcpy/{size_name}"));
        configure(&mut group);
        let src = vec![1u8; bytes];
        let mut dst = vec![0u8; bytes];
        group.throughput(Throughput::BytesDecimal(bytes as u64));
        group.bench_function("copy", |b| {
            b.iter(|| dst.copy_from_slice(black_box(&src)));
        });
        group.finish();
    }
}

fn bench_type<T: PernixFloat + SzpFloat>(c: &mut Criterion, name: &str) {
    let ds = dispatchers();
    for (size_name, bytes) in sizes() {
        for n in widths() {
            let Some(case) = Case::<T>::new(n, bytes) else {
                continue;
            };
            let mut packed = case.packed();
            let mut out = case.values();
            for op in ["compress", "decompress"] {
                let mut group =
                    c.benchmark_group(format!("pernix_simd/{name}/{op}/{size_name}/N{n}"));
                configure(&mut group);
                group.throughput(Throughput::BytesDecimal(case.float_bytes() as u64));
                for d in &ds {
                    let id = BenchmarkId::from_parameter(d.backend().name());
                    if op == "compress" {
                        group.bench_function(id, |b| b.iter(|| case.compress(d, &mut packed)));
                    } else {
                        case.compress(d, &mut packed);
                        group.bench_function(id, |b| {
                            b.iter(|| case.decompress(d, &packed, &mut out))
                        });
                    }
                }
                group.finish();
            }
        }
    }
}

fn benches(c: &mut Criterion) {
    bench_memcpy(c);
    bench_type::<f32>(c, "f32");
    bench_type::<f64>(c, "f64");
}

criterion_group!(pernix_simd, benches);

fn quick_type<T: PernixFloat + SzpFloat>(name: &str, rounds: usize) {
    let ds = dispatchers();
    for (size_name, bytes) in sizes() {
        let reps = (64 << 20) / bytes.max(1) / 8 + 1;
        for n in widths() {
            let Some(case) = Case::<T>::new(n, bytes) else {
                continue;
            };
            let float_bytes = case.float_bytes() as f64;
            let mut packed = case.packed();
            case.compress(&ds[0], &mut packed);
            let mut outs: Vec<Vec<T>> = ds.iter().map(|_| case.values()).collect();
            let mut packs: Vec<Vec<u8>> = ds.iter().map(|_| case.packed()).collect();
            let mut fs: Vec<Box<dyn FnMut()>> = Vec::new();
            for (d, o) in ds.iter().zip(outs.iter_mut()) {
                let (c, p) = (&case, &packed);
                fs.push(Box::new(move || c.decompress(d, p, o)));
            }
            for (d, o) in ds.iter().zip(packs.iter_mut()) {
                let c = &case;
                fs.push(Box::new(move || c.compress(d, o)));
            }
            let t = common::best_of_with_memcpy(rounds, reps, case.float_bytes(), &mut fs);
            let gbs = |s: f64| float_bytes / s / 1e9;
            let m = gbs(t[2 * ds.len()]);
            print!("| {name} {size_name} N{n} |");
            for (i, d) in ds.iter().enumerate() {
                print!(
                    " {} d {:.1} ({:.2} M) c {:.1} ({:.2} M) |",
                    d.backend().name(),
                    gbs(t[i]),
                    gbs(t[i]) / m,
                    gbs(t[ds.len() + i]),
                    gbs(t[ds.len() + i]) / m
                );
            }
            println!(" memcpy {m:.1} GB/s |");
        }
    }
}

fn main() {
    if std::env::var_os("FZPACK_PERNIX_QUICK").is_some() {
        let rounds = common::env_or("FZPACK_PERNIX_ROUNDS", 30);
        quick_type::<f32>("f32", rounds);
        quick_type::<f64>("f64", rounds);
        return;
    }
    pernix_simd();
    Criterion::default().configure_from_args().final_summary();
}
