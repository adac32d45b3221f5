//! SZp throughput: scalar reference vs the AVX2 / AVX-512 paths, f32 and f64, several block
//! sizes, at eb = 1e-3 of the value range (NOA). Real fields from `../shared/data` when present
//! (`proj_egm96_geoid_721x1440.f32`, `de421_moon_cheb_27408x3x13.f64`), a generated smooth
//! field plus noise otherwise. Throughput is GB/s of float data (input for compress, output for
//! decompress). Run: `cargo bench -p fzpack-core --bench szp`.
//!
//! `FZPACK_SZP_LAYOUT=1 cargo bench -p fzpack-core --bench szp` compares the two block layouts
//! side by side: for each f32 field of `../shared/data` (or the generated one) at an
//! ABS bound of 1e-3 and 1e-4 of its range, block size 128, the ratio of each layout and, per
//! path, the block-head layout's compress and decompress speed over the stage layout's (the
//! four calls take turns; best of `FZPACK_SZP_ROUNDS`, default 15; `FZPACK_SZP_FIELDS=a,b`
//! keeps the fields whose names contain `a` or `b`).
//!
//! `FZPACK_SZP_QUICK=1 cargo bench -p fzpack-core --bench szp` instead runs a short
//! side-by-side table for loaded machines: the paths (and a `memcpy` of the same bytes) take
//! turns, one call each per round, and each cell is the best of the rounds (default 40,
//! `FZPACK_SZP_ROUNDS`); ratios between cells of one run are the figures to read.

#![allow(missing_docs)] // criterion_group! generates undocumented public functions

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group};
use fzpack_core::szp::{self, Config, Kernel, Layout, SzpFloat};

mod common;
use common::{best_of, le_f32, le_f64};

fn load<T: SzpFloat>(file: &str, size: usize, from: fn(&[u8]) -> T) -> (String, Vec<T>) {
    match std::fs::read(common::data_dir().join(file)) {
        Ok(bytes) => (
            file.to_string(),
            bytes.chunks_exact(size).map(from).collect(),
        ),
        Err(_) => (
            "generated".to_string(),
            common::generated(1 << 20, 0)
                .into_iter()
                .map(T::from_f64)
                .collect(),
        ),
    }
}

/// The f32 field of the criterion and quick runs.
fn geoid() -> (String, Vec<f32>) {
    load("proj_egm96_geoid_721x1440.f32", 4, le_f32)
}

/// The f64 field of the criterion and quick runs.
fn moon() -> (String, Vec<f64>) {
    load("de421_moon_cheb_27408x3x13.f64", 8, le_f64)
}

/// The SIMD paths of this CPU (the portable one left out).
fn fast_paths() -> Vec<Kernel> {
    Kernel::ALL
        .into_iter()
        .filter(|p| p.is_available() && *p != Kernel::Portable)
        .collect()
}

fn bench_type<T: SzpFloat>(c: &mut Criterion, label: &str, name: &str, data: &[T], sizes: &[u32]) {
    let bytes = std::mem::size_of_val(data) as u64;
    for &bs in sizes {
        let cfg = Config::noa(1e-3).with_block_size(bs);
        let cap = szp::max_compressed_len(data.len(), bs, T::DTYPE).unwrap();
        let mut archive = vec![0u8; cap];
        let len = szp::compress_with(szp::Kernel::Scalar, data, &cfg, &mut archive).unwrap();
        println!(
            "szp {label} bs={bs} {name}: n={} archive={} B ratio={:.3}",
            data.len(),
            len,
            bytes as f64 / len as f64
        );
        let archive = archive[..len].to_vec();
        let mut g = c.benchmark_group(format!("szp_{label}_bs{bs}"));
        g.throughput(Throughput::Bytes(bytes));
        common::configure(&mut g, 300, 1200);
        let mut out = vec![0u8; cap];
        let mut back = vec![T::default(); data.len()];
        for p in Kernel::ALL.into_iter().filter(|p| p.is_available()) {
            g.bench_function(format!("compress/{}", p.name()), |b| {
                b.iter(|| szp::compress_with(p, black_box(data), &cfg, &mut out).unwrap())
            });
            g.bench_function(format!("decompress/{}", p.name()), |b| {
                b.iter(|| {
                    szp::decompress_with(p, black_box(&archive), &mut back, szp::Verify::Checksums)
                        .unwrap()
                })
            });
        }
        g.finish();
    }
}

fn benches(c: &mut Criterion) {
    let (name32, d32) = geoid();
    bench_type(c, "f32", &name32, &d32, &[32, 128, 1024]);
    let (name64, d64) = moon();
    bench_type(c, "f64", &name64, &d64, &[128]);
}

criterion_group!(szp_benches, benches);

fn quick_type<T: SzpFloat>(label: &str, data: &[T], sizes: &[u32], rounds: usize) {
    let bytes = std::mem::size_of_val(data) as f64;
    let paths = fast_paths();
    for &bs in sizes {
        for eb in [1e-2, 1e-3, 1e-4] {
            let cfg = Config::noa(eb).with_block_size(bs);
            let cap = szp::max_compressed_len(data.len(), bs, T::DTYPE).unwrap();
            let mut archive = vec![0u8; cap];
            let len = szp::compress_with(szp::Kernel::Scalar, data, &cfg, &mut archive).unwrap();
            archive.truncate(len);
            let mut outs: Vec<Vec<u8>> = paths.iter().map(|_| vec![0u8; cap]).collect();
            let mut backs: Vec<Vec<T>> = paths
                .iter()
                .map(|_| vec![T::default(); data.len()])
                .collect();
            let mut fs: Vec<Box<dyn FnMut()>> = Vec::new();
            for (p, o) in paths.iter().zip(outs.iter_mut()) {
                let p = *p;
                fs.push(Box::new(move || {
                    szp::compress_with(p, black_box(data), &cfg, o).unwrap();
                }));
            }
            for (p, b) in paths.iter().zip(backs.iter_mut()) {
                let (p, a) = (*p, &archive);
                fs.push(Box::new(move || {
                    szp::decompress_with(p, black_box(a), b, szp::Verify::Checksums).unwrap();
                }));
            }
            let t = common::best_of_with_memcpy(rounds, 1, bytes as usize, &mut fs);
            let gbs = |s: f64| bytes / s / 1e9;
            let np = paths.len();
            let m = gbs(t[2 * np]);
            print!("| {label} bs {bs} noa {eb:e} | {:.2} |", bytes / len as f64);
            for (i, p) in paths.iter().enumerate() {
                print!(
                    " {} {:.2} / {:.2} ({:.2} / {:.2} M) |",
                    p.name(),
                    gbs(t[i]),
                    gbs(t[np + i]),
                    gbs(t[i]) / m,
                    gbs(t[np + i]) / m
                );
            }
            let ix = |n: &str| paths.iter().position(|p| p.name() == n);
            if let (Some(a), Some(v)) = (ix("avx2"), ix("avx512")) {
                print!(
                    " avx2/avx512 {:.2} / {:.2} |",
                    t[v] / t[a],
                    t[np + v] / t[np + a]
                );
            }
            println!(" memcpy {m:.2} GB/s |");
        }
    }
}

fn quick() {
    let rounds = common::env_or("FZPACK_SZP_ROUNDS", 40);
    println!("| case | ratio | path c / d GB/s (c / d as × memcpy) | … |");
    quick_type("f32", &geoid().1, &[32, 128, 1024], rounds);
    quick_type("f64", &moon().1, &[128], rounds);
}

/// The f32 fields of `../shared/data` (the generated field when absent).
fn f32_fields() -> Vec<(String, Vec<f32>)> {
    let mut names: Vec<String> = std::fs::read_dir(common::data_dir())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".f32"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    if names.is_empty() {
        return vec![load::<f32>("absent", 4, |_| 0.0)];
    }
    names.iter().map(|n| load::<f32>(n, 4, le_f32)).collect()
}

fn layouts() {
    let rounds = common::env_or("FZPACK_SZP_ROUNDS", 15);
    let paths = fast_paths();
    println!(
        "| field | bound (× range) | ratio fzgm | ratio heads | heads/fzgm compress, decompress per path |"
    );
    println!("|---|---|---|---|---|");
    // `FZPACK_SZP_FIELDS=a,b`: only the fields whose names contain one of these.
    let only: Vec<String> = std::env::var("FZPACK_SZP_FIELDS")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    for (name, x) in f32_fields() {
        if !only.is_empty() && !only.iter().any(|o| name.contains(o.as_str())) {
            continue;
        }
        let finite = x.iter().all(|v| v.is_finite());
        let (lo, hi) = x
            .iter()
            .fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
        if !finite || hi <= lo {
            println!("| {name} | skipped: non-finite values or constant field | | | |");
            continue;
        }
        for rel in [1e-3, 1e-4] {
            let eb = rel * f64::from(hi - lo);
            let cfg = Config::abs(eb);
            let hcfg = cfg.with_layout(Layout::Heads);
            let cap = szp::max_compressed_len(x.len(), 128, szp::DType::F32).unwrap();
            let mut a = vec![0u8; cap];
            let mut b = vec![0u8; cap];
            let la = szp::compress(&x, &cfg, &mut a).unwrap();
            let lb = szp::compress(&x, &hcfg, &mut b).unwrap();
            a.truncate(la);
            b.truncate(lb);
            let bytes = (x.len() * 4) as f64;
            print!(
                "| {name} | {rel:e} | {:.2} | {:.2} |",
                bytes / la as f64,
                bytes / lb as f64
            );
            for &p in &paths {
                let mut oa = vec![0u8; cap];
                let mut ob = vec![0u8; cap];
                let mut ya = vec![0f32; x.len()];
                let mut yb = vec![0f32; x.len()];
                let t = best_of(
                    rounds,
                    1,
                    &mut [
                        &mut || {
                            szp::compress_with(p, black_box(&x), &cfg, &mut oa).unwrap();
                        },
                        &mut || {
                            szp::compress_with(p, black_box(&x), &hcfg, &mut ob).unwrap();
                        },
                        &mut || {
                            szp::decompress_with(p, black_box(&a), &mut ya, szp::Verify::Checksums)
                                .unwrap();
                        },
                        &mut || {
                            szp::decompress_with(p, black_box(&b), &mut yb, szp::Verify::Checksums)
                                .unwrap();
                        },
                    ],
                );
                print!(" {} {:.2}, {:.2} |", p.name(), t[0] / t[1], t[2] / t[3]);
            }
            println!();
        }
    }
}

fn main() {
    if std::env::var_os("FZPACK_SZP_LAYOUT").is_some() {
        layouts();
        return;
    }
    if std::env::var_os("FZPACK_SZP_QUICK").is_some() {
        quick();
        return;
    }
    szp_benches();
    Criterion::default().configure_from_args().final_summary();
}
