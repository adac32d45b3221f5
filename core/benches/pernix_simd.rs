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
use fzpack_core::pernix::{
    Backend, BitWidth, BlockSize, Dispatcher, PernixFloat, compression_scale_from_bmax,
    elements_per_block, scale_from_bmax,
};
use std::hint::black_box;
use std::time::Duration;

const SIZES: [(&str, usize); 2] = [("32KiB", 32 << 10), ("64MiB", 64 << 20)];

fn list(var: &str) -> Option<Vec<String>> {
    std::env::var(var)
        .ok()
        .map(|s| s.split(',').map(|x| x.trim().to_string()).collect())
}

fn widths() -> Vec<u8> {
    list("FZPACK_BENCH_WIDTHS")
        .map(|v| v.iter().filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 4, 8, 12, 16, 20, 24])
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

fn field<T: PernixFloat>(n: usize, from: fn(f64) -> T) -> Vec<T> {
    (0..n)
        .map(|i| {
            let x = i as f64;
            from(0.8 * (x * 0.001).sin() + 0.2 * (x * 0.37).cos())
        })
        .collect()
}

fn configure(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    let quick = std::env::var_os("FZPACK_BENCH_QUICK").is_some();
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(if quick { 50 } else { 150 }))
        .measurement_time(Duration::from_millis(if quick { 150 } else { 400 }));
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

fn bench_type<T: PernixFloat>(c: &mut Criterion, name: &str, from: fn(f64) -> T, one: T) {
    let ds = dispatchers();
    for (size_name, bytes) in sizes() {
        for n in widths() {
            let Ok(bits) = BitWidth::new(n) else { continue };
            let epb = elements_per_block(bits, BlockSize::B64);
            let blocks = (bytes / T::BYTES / epb).max(1);
            let input = field(blocks * epb, from);
            let inv = compression_scale_from_bmax(one, bits).unwrap();
            let scale = scale_from_bmax(one, bits).unwrap();
            let mut packed = vec![0u8; blocks * 64];
            let mut out = vec![T::ZERO; blocks * epb];
            let float_bytes = (blocks * epb * T::BYTES) as u64;
            for op in ["compress", "decompress"] {
                let mut group =
                    c.benchmark_group(format!("pernix_simd/{name}/{op}/{size_name}/N{n}"));
                configure(&mut group);
                group.throughput(Throughput::BytesDecimal(float_bytes));
                for d in &ds {
                    let id = BenchmarkId::from_parameter(d.backend().name());
                    if op == "compress" {
                        group.bench_function(id, |b| {
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
                    } else {
                        d.compress_blocks(bits, BlockSize::B64, &input, inv, &mut packed, blocks)
                            .unwrap();
                        group.bench_function(id, |b| {
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
                }
                group.finish();
            }
        }
    }
}

fn benches(c: &mut Criterion) {
    bench_memcpy(c);
    bench_type::<f32>(c, "f32", |x| x as f32, 1.0);
    bench_type::<f64>(c, "f64", |x| x, 1.0);
}

criterion_group!(pernix_simd, benches);

/// Best-of-rounds seconds per call of each closure (batches of `reps` calls), taking turns.
fn best_of(rounds: usize, reps: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; fs.len()];
    for _ in 0..rounds {
        for (b, f) in best.iter_mut().zip(fs.iter_mut()) {
            let t = std::time::Instant::now();
            for _ in 0..reps {
                f();
            }
            *b = b.min(t.elapsed().as_secs_f64() / reps as f64);
        }
    }
    best
}

fn quick_type<T: PernixFloat>(name: &str, from: fn(f64) -> T, one: T, rounds: usize) {
    let ds = dispatchers();
    for (size_name, bytes) in sizes() {
        let reps = (64 << 20) / bytes.max(1) / 8 + 1;
        for n in widths() {
            let Ok(bits) = BitWidth::new(n) else { continue };
            let epb = elements_per_block(bits, BlockSize::B64);
            let blocks = (bytes / T::BYTES / epb).max(1);
            let input = field(blocks * epb, from);
            let inv = compression_scale_from_bmax(one, bits).unwrap();
            let scale = scale_from_bmax(one, bits).unwrap();
            let float_bytes = (blocks * epb * T::BYTES) as f64;
            let mut packed = vec![0u8; blocks * 64];
            ds[0]
                .compress_blocks(bits, BlockSize::B64, &input, inv, &mut packed, blocks)
                .unwrap();
            let mut outs: Vec<Vec<T>> = ds.iter().map(|_| vec![T::ZERO; blocks * epb]).collect();
            let mut packs: Vec<Vec<u8>> = ds.iter().map(|_| vec![0u8; blocks * 64]).collect();
            let src = vec![1u8; float_bytes as usize];
            let mut dst = vec![0u8; float_bytes as usize];
            let mut fs: Vec<Box<dyn FnMut()>> = Vec::new();
            for (d, o) in ds.iter().zip(outs.iter_mut()) {
                let p = &packed;
                fs.push(Box::new(move || {
                    d.decompress_blocks(bits, BlockSize::B64, black_box(p), scale, o, blocks, true)
                        .unwrap();
                }));
            }
            for (d, o) in ds.iter().zip(packs.iter_mut()) {
                let x = &input;
                fs.push(Box::new(move || {
                    d.compress_blocks(bits, BlockSize::B64, black_box(x), inv, o, blocks)
                        .unwrap();
                }));
            }
            fs.push(Box::new(|| dst.copy_from_slice(black_box(&src))));
            let mut refs: Vec<&mut dyn FnMut()> = fs.iter_mut().map(|f| &mut **f as _).collect();
            let t = best_of(rounds, reps, &mut refs);
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
        let rounds = std::env::var("FZPACK_PERNIX_ROUNDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(30);
        quick_type::<f32>("f32", |x| x as f32, 1.0, rounds);
        quick_type::<f64>("f64", |x| x, 1.0, rounds);
        return;
    }
    pernix_simd();
    Criterion::default().configure_from_args().final_summary();
}
