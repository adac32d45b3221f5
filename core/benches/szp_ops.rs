//! Compressed-domain `szp::ops::add` vs decompress-add-compress on the fastest path, single
//! thread, one criterion run so the ratio is measured side by side: f32 at every block size
//! class (32, 128, 512, 1024, 4096), f64 at 128, and wide widths (f64 at a 1e-12 relative bound:
//! widths ~27) at 128 and 1024. Both operands are compressed with the same plain
//! `Config::abs(eb)`: the grid rule makes them addable without a declared `max_abs`. A real field from `../shared/data` when present
//! (`proj_egm96_geoid_721x1440.f32`, split into two halves), a generated smooth field plus
//! noise otherwise. Throughput is GB/s of float data of one operand.
//! Run: `cargo bench -p fzpack-core --bench szp_ops`.

#![allow(missing_docs)] // criterion_group! generates undocumented public functions

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fzpack_core::szp::{self, Config, SzpFloat, ops};

mod common;
use common::generated;

fn fields() -> (String, Vec<f64>, Vec<f64>) {
    let path = common::data_dir().join("proj_egm96_geoid_721x1440.f32");
    if let Ok(bytes) = std::fs::read(&path) {
        let v: Vec<f64> = bytes
            .chunks_exact(4)
            .map(|c| f64::from(common::le_f32(c)))
            .collect();
        let h = v.len() / 2;
        return ("geoid halves".into(), v[..h].to_vec(), v[h..2 * h].to_vec());
    }
    (
        "generated".into(),
        generated(1 << 19, 1),
        generated(1 << 19, 2),
    )
}

fn bench_type<T: SzpFloat>(
    c: &mut Criterion,
    label: &str,
    name: &str,
    bs: u32,
    eb_rel: f64,
    full: bool,
) {
    let (_, a64, b64) = fields();
    let a: Vec<T> = a64.iter().map(|&x| T::from_f64(x)).collect();
    let b: Vec<T> = b64.iter().map(|&x| T::from_f64(x)).collect();
    let mag = a64.iter().chain(&b64).map(|x| x.abs()).fold(0.0, f64::max);
    let lo = a64
        .iter()
        .chain(&b64)
        .copied()
        .fold(f64::INFINITY, f64::min);
    let eb = (mag.max(mag - lo)) * eb_rel;
    let cfg = Config::abs(eb).with_block_size(bs);
    let cfg2 = Config::abs(2.0 * eb).with_block_size(bs);
    let n = a.len();
    let cap = szp::max_compressed_len(n, bs, T::DTYPE).unwrap();
    let (mut za, mut zb) = (vec![0u8; cap], vec![0u8; cap]);
    let la = szp::compress(&a, &cfg, &mut za).unwrap();
    let lb = szp::compress(&b, &cfg, &mut zb).unwrap();
    let (za, zb) = (za[..la].to_vec(), zb[..lb].to_vec());
    let mut out = vec![0u8; cap];
    let lc = ops::add(&za, &zb, &mut out).unwrap();
    let view = szp::blocks::parse(&za).unwrap();
    let wmax = view.widths.iter().max().copied().unwrap_or(0);
    let wmean = view.widths.iter().map(|&w| f64::from(w)).sum::<f64>() / view.widths.len() as f64;
    println!(
        "szp_ops {label} bs={bs} {name}: n={n} eb={eb:.3e} archives {la}+{lb} -> {lc} B, ratio {:.2}, widths mean {wmean:.1} max {wmax}",
        (n * size_of::<T>()) as f64 / la as f64
    );
    let (mut da, mut db) = (vec![T::default(); n], vec![T::default(); n]);
    let mut g = c.benchmark_group(format!("szp_ops_{label}_bs{bs}"));
    g.throughput(Throughput::Bytes((n * size_of::<T>()) as u64));
    common::configure(&mut g, 200, 1000);
    g.bench_function("ops_add", |bch| {
        bch.iter(|| ops::add(black_box(&za), black_box(&zb), &mut out).unwrap())
    });
    g.bench_function("decompress_add_compress", |bch| {
        bch.iter(|| {
            szp::decompress(black_box(&za), &mut da).unwrap();
            szp::decompress(black_box(&zb), &mut db).unwrap();
            for (x, y) in da.iter_mut().zip(&db) {
                *x = T::from_f64(x.to_f64() + y.to_f64());
            }
            szp::compress(&da, &cfg2, &mut out).unwrap()
        })
    });
    if full {
        g.bench_function("decompress_one", |bch| {
            bch.iter(|| szp::decompress(black_box(&za), &mut da).unwrap())
        });
        g.bench_function("compress_one", |bch| {
            bch.iter(|| szp::compress(black_box(&a), &cfg, &mut out).unwrap())
        });
        g.bench_function("ops_stats", |bch| {
            bch.iter(|| ops::stats(black_box(&za)).unwrap())
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let (name, _, _) = fields();
    for bs in [32, 128, 512, 1024, 4096] {
        bench_type::<f32>(c, "f32", &name, bs, 1e-4, bs == 128);
    }
    bench_type::<f64>(c, "f64", &name, 128, 1e-6, false);
    bench_type::<f64>(c, "f64wide", &name, 128, 1e-12, false);
    bench_type::<f64>(c, "f64wide", &name, 1024, 1e-12, false);
}

criterion_group!(szp_ops, benches);
criterion_main!(szp_ops);
