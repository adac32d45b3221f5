//! Every SZp path (scalar reference, portable kernels, AVX2, AVX-512 where the CPU has them)
//! writes the scalar path's bytes and decodes to the scalar path's bits: every block size on
//! small inputs, lengths around block boundaries, f32/f64, ABS/NOA, widths up to 64, dirty
//! output buffers, and the same errors for bad input.

use fzpack_core::szp::{self, Config, Error, Kernel, Layout, SzpFloat};

fn field(n: usize, seed: u64, scale: f64) -> Vec<f64> {
    let mut s = seed | 1;
    let mut walk = 0.0;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            walk += ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * scale;
            walk + (i as f64 * 0.01).sin() * scale * 10.0
        })
        .collect()
}

/// [`check_one`] in `cfg`'s layout and, for the default (block-head) layout, in the stage
/// layout too.
fn check<T: SzpFloat>(data: &[T], cfg: &Config) {
    check_one(data, cfg);
    if cfg.layout == Layout::Heads {
        check_one(data, &cfg.with_layout(Layout::Fzgm));
    }
}

fn check_one<T: SzpFloat>(data: &[T], cfg: &Config) {
    let cap = szp::max_compressed_len(data.len(), cfg.block_size, T::DTYPE).unwrap();
    let mut reference = vec![0u8; cap];
    let r = szp::compress_with(szp::Kernel::Scalar, data, cfg, &mut reference);
    let paths: Vec<Kernel> = Kernel::ALL
        .iter()
        .copied()
        .filter(|p| p.is_available())
        .collect();
    let mut back_ref = vec![T::from_f64(0.0); data.len()];
    if let Ok(len) = r {
        szp::decompress_with(
            szp::Kernel::Scalar,
            &reference[..len],
            &mut back_ref,
            szp::Verify::Checksums,
        )
        .unwrap();
    }
    for p in paths {
        let mut out = vec![0xC3u8; cap + 8];
        let got = szp::compress_with(p, data, cfg, &mut out[..cap]);
        assert!(out[cap..].iter().all(|&b| b == 0xC3));
        assert_eq!(got, r, "{p:?} result differs");
        let Ok(len) = got else { continue };
        assert_eq!(out[..len], reference[..len], "{p:?} bytes differ");
        let mut back = vec![T::from_f64(-3.5); data.len() + 2];
        let n = szp::decompress_with(p, &out[..len], &mut back, szp::Verify::Checksums).unwrap();
        assert_eq!(n, data.len());
        assert!(back[n..].iter().all(|x| x.to_f64() == -3.5));
        for (a, b) in back.iter().zip(&back_ref) {
            assert_eq!(
                a.to_f64().to_bits(),
                b.to_f64().to_bits(),
                "{p:?} decoded bits differ"
            );
        }
    }
    // The default entry points agree too.
    let mut out = vec![0u8; cap];
    assert_eq!(szp::compress(data, cfg, &mut out), r);
}

#[test]
fn every_block_size_on_small_inputs() {
    let d = field(300, 7, 1.0);
    let d32: Vec<f32> = d.iter().map(|&x| x as f32).collect();
    for bs in 1..=300u32 {
        check(&d32, &Config::abs(1e-2).with_block_size(bs));
    }
    for bs in [301, 512, 1000, 2048, 4095, 4096] {
        check(&d32, &Config::noa(1e-3).with_block_size(bs));
        check(&d, &Config::noa(1e-5).with_block_size(bs));
    }
}

#[test]
fn lengths_around_block_boundaries_and_all_widths() {
    for bs in [8u32, 128, 1024] {
        let b = bs as usize;
        for n in [
            0,
            1,
            2,
            b - 1,
            b,
            b + 1,
            2 * b - 1,
            2 * b,
            2 * b + 1,
            3 * b + 5,
        ] {
            for (scale, eb) in [(1.0, 1e-1), (1.0, 1e-4), (1e3, 1e-9), (1e15, 1e-3)] {
                let d = field(n, n as u64 + 3, scale);
                check(&d, &Config::abs(eb).with_block_size(bs));
                check(&d, &Config::abs(eb).with_block_size(bs).stage_compatible());
                let d32: Vec<f32> = d.iter().map(|&x| x as f32).collect();
                check(&d32, &Config::abs(eb.max(1e-3)).with_block_size(bs));
                if n >= 2 {
                    check(&d32, &Config::noa(1e-4).with_block_size(bs));
                }
            }
        }
    }
    // Width 64: levels of both signs near 2^62.
    let big: Vec<f64> = (0..300)
        .map(|i| if i % 2 == 0 { 4.0e18 } else { -4.0e18 })
        .collect();
    check(&big, &Config::abs(0.5).stage_compatible());
    check(&big, &Config::abs(0.5));
}

#[test]
fn bad_input_gives_the_same_error_on_every_path() {
    let mut d: Vec<f32> = (0..500).map(|i| i as f32).collect();
    d[333] = f32::NAN;
    for p in Kernel::ALL {
        let mut out = vec![0u8; 8192];
        if !p.is_available() {
            // No silent fallback: a path this CPU cannot run is an error, as in PERNIX.
            let ok: Vec<f32> = (0..500).map(|i| i as f32).collect();
            let r = szp::compress_with(p, &ok, &Config::abs(1e-2), &mut out);
            assert_eq!(r, Err(Error::UnsupportedPath), "{p:?}");
            let mut back = vec![0f32; 500];
            let a = szp::compress_with(Kernel::Scalar, &ok, &Config::abs(1e-2), &mut out).unwrap();
            assert_eq!(
                szp::decompress_with(p, &out[..a], &mut back, szp::Verify::Checksums),
                Err(Error::UnsupportedPath),
                "{p:?}"
            );
            continue;
        }
        // A missing value is stored, with the scalar reference's bytes.
        let mut want = vec![0u8; 8192];
        let w = szp::compress_with(Kernel::Scalar, &d, &Config::abs(1e-2), &mut want).unwrap();
        assert_eq!(
            szp::compress_with(p, &d, &Config::abs(1e-2), &mut out),
            Ok(w),
            "{p:?}"
        );
        assert_eq!(out[..w], want[..w], "{p:?}");
        let ok: Vec<f32> = (0..500).map(|i| i as f32).collect();
        let mut small = [0u8; 60];
        let r = szp::compress_with(p, &ok, &Config::abs(1e-2), &mut small);
        assert!(
            matches!(r, Err(Error::OutputTooSmall { .. })),
            "{p:?}: {r:?}"
        );
    }
}

/// Output slices of exactly the archive's length (no room for the worst case: the sizing
/// pass runs and the chunk CRCs are written at the very end of the slice while the payload is
/// encoded) give the same bytes on every path, and one byte less is `OutputTooSmall` naming
/// the length, with nothing written past the slice; several checksum chunks, both layouts.
#[test]
fn exactly_sized_outputs_give_the_same_archive() {
    let d = field(70_000, 17, 0.3);
    let d32: Vec<f32> = d.iter().map(|&v| v as f32).collect();
    for layout in [szp::Layout::Heads, szp::Layout::Fzgm] {
        let cfg = Config::noa(1e-3).with_layout(layout);
        let cap = szp::max_compressed_len(d32.len(), cfg.block_size, szp::DType::F32).unwrap();
        let mut full = vec![0u8; cap];
        let len = szp::compress_with(szp::Kernel::Scalar, &d32, &cfg, &mut full).unwrap();
        let full = &full[..len];
        // The reference goes through the same engine, so equal bytes alone would not catch a
        // misplaced CRC: the verified decoder recomputes every chunk's CRC from the bytes.
        let mut back = vec![0f32; d32.len()];
        szp::decompress(full, &mut back).expect("every chunk CRC matches");
        let range =
            d.iter().fold(f64::MIN, |a, &b| a.max(b)) - d.iter().fold(f64::MAX, |a, &b| a.min(b));
        let bound = 1e-3 * range;
        assert!(
            d32.iter()
                .zip(&back)
                .all(|(&x, &y)| (f64::from(x) - f64::from(y)).abs() <= bound * 1.001),
            "{layout:?}: bound missed"
        );
        for p in Kernel::ALL.into_iter().filter(|p| p.is_available()) {
            let mut buf = vec![0xA5u8; len + 64];
            let n = szp::compress_with(p, &d32, &cfg, &mut buf[..len]).unwrap();
            assert_eq!(n, len, "{p:?} {layout:?}");
            assert!(buf[..len] == *full, "{p:?} {layout:?}: bytes differ");
            assert!(
                buf[len..].iter().all(|&b| b == 0xA5),
                "{p:?}: wrote past the slice"
            );
            let mut buf = vec![0xA5u8; len + 64];
            assert_eq!(
                szp::compress_with(p, &d32, &cfg, &mut buf[..len - 1]),
                Err(Error::OutputTooSmall { needed: len }),
                "{p:?} {layout:?}"
            );
            assert!(
                buf[len - 1..].iter().all(|&b| b == 0xA5),
                "{p:?}: wrote past the slice"
            );
        }
    }
}

#[test]
fn ties_and_near_ties_quantize_exactly_as_the_division() {
    // Values on and next to the half-integer grid of x / (2·eb): the SIMD paths' reciprocal
    // fast path must fall back to the division wherever the rounding could differ.
    for eb in [0.05, 0.1, 0.25, 1.0 / 3.0, 1e-3, 0.5] {
        let mut d = Vec::new();
        for k in -600i32..600 {
            let t = (k as f64 + 0.5) * 2.0 * eb;
            d.push(t);
            d.push(f64::from_bits(t.to_bits() + 1));
            d.push(f64::from_bits(t.to_bits().wrapping_sub(1)));
            d.push(k as f64 * 2.0 * eb);
        }
        let d32: Vec<f32> = d.iter().map(|&x| x as f32).collect();
        for bs in [1u32, 7, 128] {
            check(&d, &Config::abs(eb).with_block_size(bs).stage_compatible());
            check(
                &d32,
                &Config::abs(eb).with_block_size(bs).stage_compatible(),
            );
            check(&d, &Config::abs(eb).with_block_size(bs));
            // The block-head layout: the SIMD leaves take each head from their scan's first
            // lane, which near a tie must give way to the exact quantize of the first value
            // (bs 1: every value is a head; bs 7 and 128 start blocks on ties and off them).
            let heads = Config::abs(eb)
                .with_block_size(bs)
                .with_layout(Layout::Heads);
            check(&d, &heads);
            check(&d32, &heads);
            check(&d, &heads.stage_compatible().with_layout(Layout::Heads));
        }
    }
    // The spec's example: 0.25 / 0.1 is exactly 2.5 in f64.
    let ex: [f32; 10] = [0.0, 0.1, 0.25, -0.3, 1.0, 1.05, 0.95, 2.0, 5.5, -1.2];
    check(
        &ex,
        &Config::abs(0.05).with_block_size(4).stage_compatible(),
    );
}

#[test]
fn random_magnitudes_and_bounds_agree_with_the_scalar_reference() {
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for _ in 0..300 {
        let scale = 2f64.powi((next() % 80) as i32 - 40);
        let eb = scale * 2f64.powi(-((next() % 50) as i32));
        let d: Vec<f64> = (0..200)
            .map(|_| ((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * scale)
            .collect();
        let bs = (next() % 64 + 1) as u32;
        check(&d, &Config::abs(eb).with_block_size(bs).stage_compatible());
        let d32: Vec<f32> = d.iter().map(|&x| x as f32).collect();
        check(
            &d32,
            &Config::abs(eb).with_block_size(bs).stage_compatible(),
        );
    }
}

#[test]
fn neon_is_the_best_path_on_aarch64() {
    // NEON is architectural on aarch64, so the checks above always ran the NEON path there.
    assert_eq!(Kernel::Neon.is_available(), cfg!(target_arch = "aarch64"));
    assert_eq!(Kernel::Neon.name(), "neon");
    if cfg!(target_arch = "aarch64") {
        assert_eq!(Kernel::best(), Kernel::Neon);
    } else {
        println!("not aarch64: the NEON path is not available here (checked: unavailable)");
    }
}
