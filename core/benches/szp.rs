//! SZp throughput: scalar reference vs the AVX2 / AVX-512 paths, f32 and f64, several block
//! sizes, at eb = 1e-3 of the value range (NOA). Real fields from `../shared/data` when present
//! (`proj_egm96_geoid_721x1440.f32`, `de421_moon_cheb_27408x3x13.f64`), a generated smooth
//! field plus noise otherwise. Throughput is GB/s of float data (input for compress, output for
//! decompress). Run: `cargo bench -p fzpack-core --bench szp`.
//!
//! `FZPACK_SZP_LAYOUT=1 cargo bench -p fzpack-core --bench szp` compares the two block layouts
//! side by side (issue #17): for each f32 field of `../shared/data` (or the generated one) at an
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
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use fzpack_core::szp::{self, Config, Layout, Path, SzpFloat};

fn generated(n: usize) -> Vec<f64> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let noise = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            let t = i as f64 * 1e-3;
            250.0 + 20.0 * (t.sin() + (3.1 * t).cos()) + 0.02 * noise
        })
        .collect()
}

fn load<T: SzpFloat>(file: &str, size: usize, from: fn(&[u8]) -> T) -> (String, Vec<T>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(file);
    match std::fs::read(&path) {
        Ok(bytes) => (
            file.to_string(),
            bytes.chunks_exact(size).map(from).collect(),
        ),
        Err(_) => (
            "generated".to_string(),
            generated(1 << 20).into_iter().map(T::from_f64).collect(),
        ),
    }
}

fn bench_type<T: SzpFloat>(c: &mut Criterion, label: &str, name: &str, data: &[T], sizes: &[u32]) {
    let bytes = std::mem::size_of_val(data) as u64;
    for &bs in sizes {
        let cfg = Config::noa(1e-3).with_block_size(bs);
        let cap = szp::max_compressed_len(data.len(), bs, T::DTYPE).unwrap();
        let mut archive = vec![0u8; cap];
        let len = szp::scalar::compress(data, &cfg, &mut archive).unwrap();
        println!(
            "szp {label} bs={bs} {name}: n={} archive={} B ratio={:.3}",
            data.len(),
            len,
            bytes as f64 / len as f64
        );
        let archive = archive[..len].to_vec();
        let mut g = c.benchmark_group(format!("szp_{label}_bs{bs}"));
        g.throughput(Throughput::Bytes(bytes));
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(300));
        g.measurement_time(Duration::from_millis(1200));
        let mut out = vec![0u8; cap];
        let mut back = vec![T::default(); data.len()];
        for p in Path::ALL.into_iter().filter(|p| p.is_available()) {
            g.bench_function(format!("compress/{}", p.name()), |b| {
                b.iter(|| szp::compress_with(p, black_box(data), &cfg, &mut out).unwrap())
            });
            g.bench_function(format!("decompress/{}", p.name()), |b| {
                b.iter(|| szp::decompress_with(p, black_box(&archive), &mut back).unwrap())
            });
        }
        g.finish();
    }
}

fn benches(c: &mut Criterion) {
    let (name32, d32) = load::<f32>("proj_egm96_geoid_721x1440.f32", 4, |b| {
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    });
    bench_type(c, "f32", &name32, &d32, &[32, 128, 1024]);
    let (name64, d64) = load::<f64>("de421_moon_cheb_27408x3x13.f64", 8, |b| {
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        f64::from_le_bytes(a)
    });
    bench_type(c, "f64", &name64, &d64, &[128]);
}

criterion_group!(szp_benches, benches);

/// Best-of-rounds seconds of `f`, for each closure, taking turns.
fn best_of(rounds: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; fs.len()];
    for _ in 0..rounds {
        for (b, f) in best.iter_mut().zip(fs.iter_mut()) {
            let t = std::time::Instant::now();
            f();
            *b = b.min(t.elapsed().as_secs_f64());
        }
    }
    best
}

fn quick_type<T: SzpFloat>(label: &str, data: &[T], sizes: &[u32], rounds: usize) {
    let bytes = std::mem::size_of_val(data) as f64;
    let paths: Vec<Path> = Path::ALL
        .into_iter()
        .filter(|p| p.is_available() && *p != Path::Portable)
        .collect();
    for &bs in sizes {
        for eb in [1e-2, 1e-3, 1e-4] {
            let cfg = Config::noa(eb).with_block_size(bs);
            let cap = szp::max_compressed_len(data.len(), bs, T::DTYPE).unwrap();
            let mut archive = vec![0u8; cap];
            let len = szp::scalar::compress(data, &cfg, &mut archive).unwrap();
            archive.truncate(len);
            let mut outs: Vec<Vec<u8>> = paths.iter().map(|_| vec![0u8; cap]).collect();
            let mut backs: Vec<Vec<T>> = paths
                .iter()
                .map(|_| vec![T::default(); data.len()])
                .collect();
            let src: Vec<u8> = vec![1u8; bytes as usize];
            let mut dst = vec![0u8; bytes as usize];
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
                    szp::decompress_with(p, black_box(a), b).unwrap();
                }));
            }
            fs.push(Box::new(|| dst.copy_from_slice(black_box(&src))));
            let mut refs: Vec<&mut dyn FnMut()> = fs.iter_mut().map(|f| &mut **f as _).collect();
            let t = best_of(rounds, &mut refs);
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
    let rounds = std::env::var("FZPACK_SZP_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    println!("| case | ratio | path c / d GB/s (c / d as × memcpy) | … |");
    let (_, d32) = load::<f32>("proj_egm96_geoid_721x1440.f32", 4, |b| {
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    });
    quick_type("f32", &d32, &[32, 128, 1024], rounds);
    let (_, d64) = load::<f64>("de421_moon_cheb_27408x3x13.f64", 8, |b| {
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        f64::from_le_bytes(a)
    });
    quick_type("f64", &d64, &[128], rounds);
}

/// The f32 fields of `../shared/data` (the generated field when absent).
fn f32_fields() -> Vec<(String, Vec<f32>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
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
    names
        .iter()
        .map(|n| load::<f32>(n, 4, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        .collect()
}

fn layouts() {
    let rounds = std::env::var("FZPACK_SZP_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let paths: Vec<Path> = Path::ALL
        .into_iter()
        .filter(|p| p.is_available() && *p != Path::Portable)
        .collect();
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
                    &mut [
                        &mut || {
                            szp::compress_with(p, black_box(&x), &cfg, &mut oa).unwrap();
                        },
                        &mut || {
                            szp::compress_with(p, black_box(&x), &hcfg, &mut ob).unwrap();
                        },
                        &mut || {
                            szp::decompress_with(p, black_box(&a), &mut ya).unwrap();
                        },
                        &mut || {
                            szp::decompress_with(p, black_box(&b), &mut yb).unwrap();
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
