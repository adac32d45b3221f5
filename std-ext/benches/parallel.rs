//! The rayon driver against one thread: PERNIX block streams, PERNIX runs of blocks and SZp, at
//! 64 MiB (where parallelism must pay) and 64 KiB (where the minimum chunk keeps it serial).
//!
//! `cargo bench -p fzpack --bench parallel`; set `FZPACK_BENCH_QUICK=1` for a short run.
#![allow(missing_docs)] // criterion_group! generates undocumented public functions

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use fzpack::par::Parallel;
use fzpack::pernix::{
    Backend, BitWidth, BlockSize, Decoder, Dispatcher, Encoder, elements_per_block,
};

fn field(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (i as f32 * 0.001).sin() * 100.0 + (i % 17) as f32 * 0.01)
        .collect()
}

fn drivers() -> Vec<(&'static str, Dispatcher)> {
    vec![
        ("serial", Dispatcher::new(Backend::Auto).unwrap()),
        (
            "parallel",
            Dispatcher::with_parallel(Backend::Auto, Parallel::new()).unwrap(),
        ),
    ]
}

fn stream(c: &mut Criterion) {
    let bs = BlockSize::B64;
    for (label, bytes) in [("64MiB", 64usize << 20), ("64KiB", 64 << 10)] {
        let x = field(bytes / 4);
        let mut g = c.benchmark_group(format!("pernix_stream_f32_{label}"));
        g.throughput(Throughput::Bytes(bytes as u64));
        for bits in [8u8, 16] {
            let bits = BitWidth::new(bits).unwrap();
            let serial = Dispatcher::new(Backend::Auto).unwrap();
            let archive = Encoder::new(bits, bs)
                .dispatcher(&serial)
                .to_vec(&x)
                .unwrap();
            let mut out = vec![0u8; archive.len()];
            let mut back = vec![0f32; x.len()];
            for (name, d) in drivers() {
                let enc = Encoder::new(bits, bs).dispatcher(&d);
                let dec = Decoder::new().dispatcher(&d);
                g.bench_function(
                    BenchmarkId::new(format!("compress_{name}"), bits.get()),
                    |b| b.iter(|| enc.into_slice(black_box(&x), &mut out).unwrap()),
                );
                g.bench_function(
                    BenchmarkId::new(format!("decompress_{name}"), bits.get()),
                    |b| b.iter(|| dec.into_slice(black_box(&archive), &mut back).unwrap()),
                );
            }
        }
        g.finish();
    }
}

fn runs(c: &mut Criterion) {
    let bs = BlockSize::B64;
    let bits = BitWidth::new(12).unwrap();
    let e = elements_per_block(bits, bs);
    let blocks = (64usize << 20) / 4 / e;
    let x = field(blocks * e);
    let mut out = vec![0u8; blocks * 64];
    let mut back = vec![0f32; blocks * e];
    let mut g = c.benchmark_group("pernix_blocks_f32_64MiB");
    g.throughput(Throughput::Bytes((blocks * e * 4) as u64));
    for (name, d) in drivers() {
        g.bench_function(format!("compress_{name}"), |b| {
            b.iter(|| {
                d.compress_blocks(bits, bs, black_box(&x), 20.0, &mut out, blocks)
                    .unwrap()
            })
        });
        g.bench_function(format!("decompress_{name}"), |b| {
            b.iter(|| {
                d.decompress_blocks(bits, bs, black_box(&out), 0.05, &mut back, blocks, true)
                    .unwrap()
            })
        });
    }
    g.finish();
}

/// SZp serial (best single-thread path) against the rayon driver, warm: every iteration writes
/// into the same reused buffers (`*_into`), so page faults of fresh allocations are not timed.
fn szp(c: &mut Criterion) {
    use fzpack::szp::{Config, Decoder, Encoder};
    let par = Parallel::new();
    for (label, bytes) in [("64MiB", 64usize << 20), ("64KiB", 64 << 10)] {
        let x = field(bytes / 4);
        let mut g = c.benchmark_group(format!("szp_f32_{label}"));
        g.throughput(Throughput::Bytes(bytes as u64));
        for eb in [1e-3, 1e-5] {
            let cfg = Config::noa(eb);
            let (serial, parallel) = (
                Encoder::new(&cfg).serial(),
                Encoder::new(&cfg).threads(&par),
            );
            let (dserial, dparallel) = (Decoder::new().serial(), Decoder::new().threads(&par));
            let archive = serial.to_vec(&x).unwrap();
            let mut out = Vec::new();
            let mut back: Vec<f32> = Vec::new();
            g.bench_function(BenchmarkId::new("compress_serial", eb), |b| {
                b.iter(|| serial.into_vec(black_box(&x), &mut out).unwrap())
            });
            g.bench_function(BenchmarkId::new("compress_parallel", eb), |b| {
                b.iter(|| parallel.into_vec(black_box(&x), &mut out).unwrap())
            });
            g.bench_function(BenchmarkId::new("decompress_serial", eb), |b| {
                b.iter(|| dserial.into_vec(black_box(&archive), &mut back).unwrap())
            });
            g.bench_function(BenchmarkId::new("decompress_parallel", eb), |b| {
                b.iter(|| dparallel.into_vec(black_box(&archive), &mut back).unwrap())
            });
        }
        g.finish();
    }
}

/// Memory-bandwidth reference: copying 64 MiB with one thread and with the rayon pool.
fn memcpy(c: &mut Criterion) {
    use fzpack::par::rayon::prelude::*;
    let src = vec![1u8; 64 << 20];
    let mut dst = vec![0u8; 64 << 20];
    let mut g = c.benchmark_group("memcpy_64MiB");
    g.throughput(Throughput::Bytes(src.len() as u64));
    g.bench_function("serial", |b| {
        b.iter(|| dst.copy_from_slice(black_box(&src)))
    });
    g.bench_function("parallel", |b| {
        b.iter(|| {
            dst.par_chunks_mut(1 << 20)
                .zip(src.par_chunks(1 << 20))
                .for_each(|(d, s)| d.copy_from_slice(s))
        })
    });
    g.finish();
}

fn config() -> Criterion {
    let quick = std::env::var_os("FZPACK_BENCH_QUICK").is_some();
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(if quick { 200 } else { 1000 }))
        .measurement_time(Duration::from_millis(if quick { 500 } else { 3000 }))
}

criterion_group! { name = benches; config = config(); targets = memcpy, stream, runs, szp }
criterion_main!(benches);
