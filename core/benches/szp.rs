//! SZp throughput: scalar reference vs the AVX2 / AVX-512 paths, f32 and f64, several block
//! sizes, at eb = 1e-3 of the value range (NOA). Real fields from `../shared/data` when present
//! (`proj_egm96_geoid_721x1440.f32`, `de421_moon_cheb_27408x3x13.f64`), a generated smooth
//! field plus noise otherwise. Throughput is GB/s of float data (input for compress, output for
//! decompress). Run: `cargo bench -p fzpack-core --bench szp`.

#![allow(missing_docs)] // criterion_group! generates undocumented public functions

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fzpack_core::szp::{self, Config, Path, SzpFloat};

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
criterion_main!(szp_benches);
