//! What the core benches share (`mod common;` in each): the generated fields and the real ones
//! of `../shared/data`, the PERNIX cases, the environment knobs, the group timing and the
//! best-of-rounds timer of the side-by-side tables.

// Each bench uses a part of this module.
#![allow(dead_code)]

use std::hint::black_box;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, Instant};

use criterion::BenchmarkGroup;
use criterion::measurement::WallTime;
use fzpack_core::pernix::{
    BitWidth, BlockSize, Dispatcher, PernixFloat, compression_scale_from_bmax, elements_per_block,
    scale_from_bmax,
};
use fzpack_core::szp::SzpFloat;

/// The bit widths the PERNIX benches measure by default.
pub const WIDTHS: [u8; 7] = [1, 4, 8, 12, 16, 20, 24];

/// The PERNIX buffer sizes (bytes of floats): in cache and out of cache.
pub const SIZES: [(&str, usize); 2] = [("32KiB", 32 << 10), ("64MiB", 64 << 20)];

/// The environment variable `var` parsed as a `T`, else `default`.
pub fn env_or<T: FromStr>(var: &str, default: T) -> T {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The comma-separated items of the environment variable `var` (trimmed), if it is set.
pub fn list(var: &str) -> Option<Vec<String>> {
    std::env::var(var)
        .ok()
        .map(|s| s.split(',').map(|x| x.trim().to_string()).collect())
}

/// `quick` when `FZPACK_BENCH_QUICK` is set (shorter measurement for smoke runs), else `full`.
pub fn quick_or(quick: u64, full: u64) -> u64 {
    if std::env::var_os("FZPACK_BENCH_QUICK").is_some() {
        quick
    } else {
        full
    }
}

/// A group's timing: 10 samples, `warm_ms` of warm-up and `measure_ms` of measurement.
pub fn configure(group: &mut BenchmarkGroup<'_, WallTime>, warm_ms: u64, measure_ms: u64) {
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(warm_ms))
        .measurement_time(Duration::from_millis(measure_ms));
}

/// The project's data folder, `../shared/data`.
pub fn data_dir() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

/// A little-endian f32 (`b` holds 4 bytes).
pub fn le_f32(b: &[u8]) -> f32 {
    f32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// A little-endian f64 (`b` holds 8 bytes).
pub fn le_f64(b: &[u8]) -> f64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    f64::from_le_bytes(a)
}

/// The SZp benches' generated field when `../shared/data` is absent: a smooth field plus
/// xorshift noise, `250 + 20·(sin t + cos 3.1t) + 0.02·noise` at `t = i·1e-3 + seed` (the
/// noise stream seeded by `seed` too).
pub fn generated(n: usize, seed: u64) -> Vec<f64> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64 ^ seed;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let noise = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            let t = i as f64 * 1e-3 + seed as f64;
            250.0 + 20.0 * (t.sin() + (3.1 * t).cos()) + 0.02 * noise
        })
        .collect()
}

/// Best-of-`rounds` seconds per call of each closure (batches of `reps` calls), taking turns.
pub fn best_of(rounds: usize, reps: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; fs.len()];
    for _ in 0..rounds {
        for (b, f) in best.iter_mut().zip(fs.iter_mut()) {
            let t = Instant::now();
            for _ in 0..reps {
                f();
            }
            *b = b.min(t.elapsed().as_secs_f64() / reps as f64);
        }
    }
    best
}

/// [`best_of`] of the closures `fs` and, last, of a `memcpy` of `bytes` bytes: the baseline
/// of the side-by-side tables.
pub fn best_of_with_memcpy(
    rounds: usize,
    reps: usize,
    bytes: usize,
    fs: &mut [Box<dyn FnMut() + '_>],
) -> Vec<f64> {
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    let mut copy = || dst.copy_from_slice(black_box(&src));
    let mut refs: Vec<&mut dyn FnMut()> = fs.iter_mut().map(|f| &mut **f as _).collect();
    refs.push(&mut copy);
    best_of(rounds, reps, &mut refs)
}

/// One PERNIX case of the benches: whole 64-byte blocks at `bits` bits of a smooth field in
/// [-1, 1] with some small-scale texture (like upstream's benchmark data), with the scales of
/// `bmax = 1`.
pub struct Case<T> {
    /// Bits per value.
    pub bits: BitWidth,
    /// Number of 64-byte blocks.
    pub blocks: usize,
    /// The values, `blocks` blocks of them.
    pub input: Vec<T>,
    /// The compression (inverse) scale.
    pub inv: T,
    /// The decompression scale.
    pub scale: T,
}

impl<T: PernixFloat + SzpFloat> Case<T> {
    /// The case of about `bytes` bytes of floats (at least one block) at `n` bits, `None` when
    /// `n` is not a PERNIX bit width.
    pub fn new(n: u8, bytes: usize) -> Option<Self> {
        let bits = BitWidth::new(n).ok()?;
        let epb = elements_per_block(bits, BlockSize::B64);
        let blocks = (bytes / T::BYTES / epb).max(1);
        let input = (0..blocks * epb)
            .map(|i| {
                let x = i as f64;
                T::from_f64(0.8 * (x * 0.001).sin() + 0.2 * (x * 0.37).cos())
            })
            .collect();
        Some(Case {
            bits,
            blocks,
            input,
            inv: compression_scale_from_bmax(T::ONE, bits).unwrap(),
            scale: scale_from_bmax(T::ONE, bits).unwrap(),
        })
    }

    /// Bytes of the case's floats (the throughput of both directions).
    pub fn float_bytes(&self) -> usize {
        self.input.len() * T::BYTES
    }

    /// A zeroed buffer of the compressed blocks.
    pub fn packed(&self) -> Vec<u8> {
        vec![0u8; self.blocks * 64]
    }

    /// A zeroed buffer of the decompressed values.
    pub fn values(&self) -> Vec<T> {
        vec![T::ZERO; self.input.len()]
    }

    /// Compresses the case's values into `packed` with `d`.
    pub fn compress(&self, d: &Dispatcher, packed: &mut [u8]) {
        d.compress_blocks(
            self.bits,
            BlockSize::B64,
            black_box(&self.input),
            self.inv,
            packed,
            self.blocks,
        )
        .unwrap()
    }

    /// Decompresses `packed` into `out` with `d` (signed values).
    pub fn decompress(&self, d: &Dispatcher, packed: &[u8], out: &mut [T]) {
        d.decompress_blocks(
            self.bits,
            BlockSize::B64,
            black_box(packed),
            self.scale,
            out,
            self.blocks,
            true,
        )
        .unwrap()
    }
}
