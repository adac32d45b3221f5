//! The hand-written AVX2 SZp kernels (`core/src/arch/x86_64/avx2/szp.rs`, path `Avx2`, token
//! `Bmi2`) against the scalar reference: every block width 1..=64 (the packer and decoder
//! handle 1..=24, the scan levels below 2²⁹; everything else goes to the portable kernels),
//! every block size class (1, below/at/above one 8-value step, multiples and non-multiples of
//! 8, up to 4096 where the decoder's i32 condition `len·2^(w−1) < 2³¹` fails), partial last
//! blocks, rounding ties and near-ties, strict and stage-compatible plans, configured
//! `max_abs`, and non-finite inputs (same error). Each case must give the reference's result,
//! bytes and decoded bits, and must not write past its output.
//!
//! The features are narrowed as on an AVX2-only machine: the detected set without the
//! AVX-512 bits must still offer the AVX2 path (and not the AVX-512 one). On a CPU without
//! AVX2 + BMI2 every test prints `skipped: <why>` and checks that the path is refused.

use fzpack_core::arch::CpuFeatures;
use fzpack_core::szp::{self, Config, Error, Kernel, Layout, SzpFloat};

/// Whether the AVX2 path runs here; prints why not.
fn avx2() -> bool {
    let f = CpuFeatures::detect();
    let avx512 = CpuFeatures::AVX512F
        | CpuFeatures::AVX512DQ
        | CpuFeatures::AVX512BW
        | CpuFeatures::AVX512VL
        | CpuFeatures::AVX512VBMI;
    let narrowed = f.without(avx512);
    assert!(!Kernel::Avx512.is_available_with(narrowed));
    assert_eq!(
        Kernel::Avx2.is_available_with(narrowed),
        Kernel::Avx2.is_available()
    );
    if Kernel::Avx2.is_available() {
        true
    } else {
        println!(
            "skipped: this CPU lacks AVX2 + BMI2 (features {:#x})",
            f.bits()
        );
        let mut out = [0u8; 256];
        assert_eq!(
            szp::compress_with(Kernel::Avx2, &[1.0f32; 4], &Config::abs(0.1), &mut out),
            Err(Error::UnsupportedPath)
        );
        false
    }
}

/// Compares the AVX2 path with the reference on `data` under `cfg`; returns the archive.
fn check<T: SzpFloat>(data: &[T], cfg: &Config, what: &str) -> Vec<u8> {
    let cap = szp::max_compressed_len(data.len(), cfg.block_size, T::DTYPE).unwrap();
    let mut reference = vec![0u8; cap];
    let r = szp::compress_with(szp::Kernel::Scalar, data, cfg, &mut reference);
    let mut out = vec![0xA5u8; cap + 64];
    let got = szp::compress_with(Kernel::Avx2, data, cfg, &mut out[..cap]);
    assert_eq!(got, r, "{what}: result differs");
    assert!(out[cap..].iter().all(|&b| b == 0xA5), "{what}: wrote past");
    let Ok(len) = r else { return Vec::new() };
    assert_eq!(out[..len], reference[..len], "{what}: bytes differ");
    // An output of exactly the archive's length (the sizing pass, in-place tails).
    let mut exact = vec![0u8; len];
    assert_eq!(
        szp::compress_with(Kernel::Avx2, data, cfg, &mut exact),
        Ok(len),
        "{what}: exact-length output"
    );
    assert_eq!(exact, reference[..len], "{what}: exact-length bytes differ");
    if len > 48 {
        let mut short = vec![0u8; len - 1];
        assert!(
            matches!(
                szp::compress_with(Kernel::Avx2, data, cfg, &mut short),
                Err(Error::OutputTooSmall { .. })
            ),
            "{what}: one byte short"
        );
    }
    let mut back_ref = vec![T::from_f64(0.0); data.len()];
    szp::decompress_with(
        szp::Kernel::Scalar,
        &reference[..len],
        &mut back_ref,
        szp::Verify::Checksums,
    )
    .unwrap();
    let mut back = vec![T::from_f64(-7.5); data.len() + 9];
    let n = szp::decompress_with(
        Kernel::Avx2,
        &reference[..len],
        &mut back,
        szp::Verify::Checksums,
    )
    .unwrap();
    assert_eq!(n, data.len(), "{what}");
    assert!(
        back[n..].iter().all(|x| x.to_f64() == -7.5),
        "{what}: decoder wrote past"
    );
    for (i, (a, b)) in back.iter().zip(&back_ref).enumerate() {
        assert_eq!(
            a.to_f64().to_bits(),
            b.to_f64().to_bits(),
            "{what}: value {i} differs"
        );
    }
    reference.truncate(len);
    reference
}

/// Both element types, strict and stage-compatible.
fn check_all(d: &[f64], cfg: Config, what: &str) {
    let d32: Vec<f32> = d.iter().map(|&x| x as f32).collect();
    for cfg in [cfg, cfg.with_layout(Layout::Fzgm), cfg.stage_compatible()] {
        check(d, &cfg, what);
        check(&d32, &cfg, what);
    }
}

/// The largest width byte of an archive (the header, then one width per block).
fn max_width(archive: &[u8], blocks: usize) -> u8 {
    let h = szp::header(archive).unwrap().header_len();
    archive[h..h + blocks].iter().copied().max().unwrap_or(0)
}

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// A random walk plus a slow wave (the fast path's usual input).
fn field(n: usize, seed: u64, scale: f64) -> Vec<f64> {
    let mut next = xorshift(seed);
    let mut walk = 0.0;
    (0..n)
        .map(|i| {
            walk += ((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * scale;
            walk + (i as f64 * 0.01).sin() * scale * 10.0
        })
        .collect()
}

/// Block sizes of every class the kernels distinguish.
const SIZES: [u32; 14] = [1, 2, 7, 8, 9, 15, 16, 17, 31, 64, 100, 128, 1024, 4096];

#[test]
fn every_width_1_to_64_and_every_block_size_class() {
    if !avx2() {
        return;
    }
    // eb = 0.5: levels are the integers themselves (2·eb = 1). Alternating 0, l = 2^(w−2)
    // gives deltas ±l whose zigzag has exactly w bits; w = 1 is a descending ramp (deltas −1
    // zigzag to 1).
    for w in 1..=64u32 {
        let l = 2f64.powi(w.saturating_sub(2) as i32);
        for bs in SIZES {
            let b = bs as usize;
            for n in [1usize, 9, b, 2 * b + 5] {
                let d: Vec<f64> = (0..n)
                    .map(|i| match w {
                        1 => -((i % b) as f64),
                        // Levels near ±2^62 (alternating 0, 2^62 would overflow the
                        // planner's level bound): deltas of ±8e18 zigzag to 64 bits.
                        64 => 4.0e18 - ((i % 2) as f64) * 8.0e18,
                        _ => ((i % 2) as f64) * l,
                    })
                    .collect();
                let what = format!("w={w} bs={bs} n={n}");
                check(&d, &Config::abs(0.5).with_block_size(bs), &what);
                // Stage-compatible plans keep eb = 0.5 (strict ones tighten it slightly).
                let a = check(
                    &d,
                    &Config::abs(0.5).with_block_size(bs).stage_compatible(),
                    &what,
                );
                assert!(!a.is_empty(), "{what}: the reference refused it");
                if b >= 2 && n >= 2 {
                    assert_eq!(max_width(&a, n.div_ceil(b)), w as u8, "{what}: width");
                }
                if w <= 24 {
                    let d32: Vec<f32> = d.iter().map(|&x| x as f32).collect();
                    check(&d32, &Config::abs(0.5).with_block_size(bs), &what);
                }
            }
        }
    }
}

#[test]
fn smooth_fields_at_the_usual_bounds() {
    if !avx2() {
        return;
    }
    for (seed, scale) in [(3u64, 1.0), (5, 1e-3), (7, 1e6)] {
        for bs in [8u32, 32, 128, 1000, 1024, 4096] {
            let n = 3 * bs as usize + 13;
            let d = field(n, seed + u64::from(bs), scale);
            for eb in [1e-2, 1e-3, 1e-4, 1e-6] {
                let what = format!("scale={scale} bs={bs} noa {eb}");
                check_all(&d, Config::noa(eb).with_block_size(bs), &what);
                check_all(&d, Config::abs(eb * scale).with_block_size(bs), &what);
            }
        }
    }
}

#[test]
fn lengths_around_the_step_and_block_edges() {
    if !avx2() {
        return;
    }
    for bs in [8u32, 24, 128] {
        let b = bs as usize;
        for n in [0usize, 1, 2, 7, 8, 9, b - 1, b, b + 1, 2 * b + 7, 5 * b + 3] {
            let d = field(n, n as u64 + 11, 1.0);
            let what = format!("bs={bs} n={n}");
            check_all(&d, Config::abs(1e-3).with_block_size(bs), &what);
            if n >= 2 {
                check_all(&d, Config::noa(1e-4).with_block_size(bs), &what);
            }
        }
    }
}

#[test]
fn ties_and_near_ties() {
    if !avx2() {
        return;
    }
    // Values on and next to the half-integer grid of x / (2·eb): the rounding fast path must
    // recompute exactly wherever half-even and half-away could differ; only some blocks tie.
    for eb in [0.05, 0.1, 0.25, 1.0 / 3.0, 1e-3, 0.5] {
        let mut d = Vec::new();
        for k in -400i32..400 {
            let t = (f64::from(k) + 0.5) * 2.0 * eb;
            d.push(t);
            d.push(f64::from_bits(t.to_bits() + 1));
            d.push(f64::from_bits(t.to_bits().wrapping_sub(1)));
            d.push(f64::from(k) * 2.0 * eb);
        }
        // A stretch of tie-free values so that some blocks take the fast path.
        d.extend((0..500).map(|i| f64::from(i) * 2.0 * eb));
        for bs in [1u32, 7, 8, 16, 128, 4096] {
            check_all(
                &d,
                Config::abs(eb).with_block_size(bs),
                &format!("eb={eb} bs={bs}"),
            );
        }
    }
    let ex: [f32; 10] = [0.0, 0.1, 0.25, -0.3, 1.0, 1.05, 0.95, 2.0, 5.5, -1.2];
    check(&ex, &Config::abs(0.05).with_block_size(4), "spec example");
}

#[test]
fn non_finite_inputs_give_the_reference_error() {
    if !avx2() {
        return;
    }
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for at in [0usize, 1, 7, 8, 9, 500, 999] {
            let mut d = field(1000, 17, 1.0);
            d[at] = bad;
            for bs in [1u32, 8, 128, 4096] {
                let what = format!("{bad} at {at} bs={bs}");
                check_all(&d, Config::abs(1e-3).with_block_size(bs), &what);
                check_all(&d, Config::noa(1e-3).with_block_size(bs), &what);
            }
        }
    }
    // f32 values that overflow nothing but are huge, next to tiny ones.
    let d: Vec<f64> = (0..300)
        .map(|i| if i % 5 == 0 { 3.0e38 } else { 1e-30 })
        .collect();
    check_all(&d, Config::noa(1e-3).with_block_size(16), "huge");
}

/// The scan's cheap strict check compares `|x|` with the plan's magnitude instead of
/// reconstructing every lane. The plan refuses data above a declared `max_abs`, so values just
/// at it, and rough data at bounds down to the f32 precision limit, must give the reference's
/// result and bytes. (The planner's tightening keeps the fraction threshold above ½, so the
/// flagged-block path is reached only by the core unit test
/// `scan_flags_what_the_threshold_cannot_prove`.)
#[test]
fn strict_check_at_the_declared_magnitude_and_precision_limit() {
    if !avx2() {
        return;
    }
    let mut d: Vec<f64> = (0..999).map(|i| (f64::from(i) * 0.37).sin()).collect();
    d[500] = 1.0;
    for bs in [16u32, 128] {
        let cfg = Config::abs(1e-3).with_block_size(bs).with_max_abs(1.0);
        check_all(&d, cfg, &format!("at max_abs bs={bs}"));
    }
    // Bounds from well above to just above f32 precision at magnitude ~1e3 (ulp 2^-14).
    let rough: Vec<f64> = field(5000, 43, 50.0).iter().map(|x| 1e3 + x).collect();
    for eb in [1e-1, 1e-2, 1e-3, 2e-4, 1.0e-4, 6.2e-5] {
        for bs in [8u32, 100] {
            check_all(
                &rough,
                Config::abs(eb).with_block_size(bs),
                &format!("eb {eb} bs={bs}"),
            );
        }
    }
}

#[test]
fn configured_max_abs_and_wide_levels() {
    if !avx2() {
        return;
    }
    let d = field(2000, 23, 1.0);
    let m = d.iter().fold(0f64, |a, &x| a.max(x.abs()));
    for bs in [8u32, 128] {
        // A generous max_abs moves the scan's tie slack, or (huge) turns it off.
        for f in [1.0, 4.0, 1e12] {
            let cfg = Config::abs(1e-3).with_block_size(bs).with_max_abs(m * f);
            check_all(&d, cfg, &format!("max_abs×{f} bs={bs}"));
        }
    }
    // Levels around the scan's i32 limit 2^29 and above.
    for lvl in [5.0e8, 5.4e8, 6.0e8, 4.0e9] {
        let d: Vec<f64> = (0..777).map(|i| lvl + f64::from(i % 13)).collect();
        check_all(
            &d,
            Config::abs(0.5).with_block_size(64),
            &format!("level {lvl}"),
        );
    }
}

#[test]
fn random_magnitudes_and_bounds() {
    if !avx2() {
        return;
    }
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    for _ in 0..400 {
        let scale = 2f64.powi((next() % 80) as i32 - 40);
        let eb = scale * 2f64.powi(-((next() % 40) as i32));
        let n = (next() % 600) as usize;
        let d: Vec<f64> = (0..n)
            .map(|_| ((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * scale)
            .collect();
        let bs = (next() % 300 + 1) as u32;
        check_all(&d, Config::abs(eb).with_block_size(bs), "random");
    }
}
