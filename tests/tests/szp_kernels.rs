//! The hand-written AVX-512 VBMI SZp kernels at their edges
//! (`core/src/arch/x86_64/avx512/szp.rs`): every block width 1..=40 (the packer and decoder handle 1..=24, wider blocks go to the
//! portable kernels), levels whose prefix sums leave i32 (the decoder's exact-i32 condition
//! `len·2^(w−1) < 2^31`, false for long blocks), partial last steps, and input that flags the
//! near-tie fallback in some blocks only. Each case must give the scalar reference's bytes and
//! decoded bits on every path. On a CPU without AVX-512 VBMI the test says so: the other paths
//! are still compared.

use fzpack_core::arch::CpuFeatures;
use fzpack_core::szp::{self, Config, Kernel, SzpFloat};

fn check<T: SzpFloat>(data: &[T], cfg: &Config, what: &str) {
    let cap = szp::max_compressed_len(data.len(), cfg.block_size, T::DTYPE).unwrap();
    let mut reference = vec![0u8; cap];
    let len = szp::compress_with(szp::Kernel::Scalar, data, cfg, &mut reference)
        .unwrap_or_else(|e| panic!("{what}: scalar: {e:?}"));
    let mut back_ref = vec![T::from_f64(0.0); data.len()];
    szp::decompress_with(
        szp::Kernel::Scalar,
        &reference[..len],
        &mut back_ref,
        szp::Verify::Checksums,
    )
    .unwrap();
    for p in Kernel::ALL.into_iter().filter(|p| p.is_available()) {
        let mut out = vec![0x5Au8; cap + 64];
        let got = szp::compress_with(p, data, cfg, &mut out[..cap]);
        assert_eq!(got, Ok(len), "{what}: {p:?}");
        assert!(
            out[cap..].iter().all(|&b| b == 0x5A),
            "{what}: {p:?} wrote past"
        );
        assert_eq!(out[..len], reference[..len], "{what}: {p:?} bytes differ");
        let mut back = vec![T::from_f64(7.25); data.len() + 17];
        let n =
            szp::decompress_with(p, &reference[..len], &mut back, szp::Verify::Checksums).unwrap();
        assert_eq!(n, data.len());
        assert!(
            back[n..].iter().all(|x| x.to_f64() == 7.25),
            "{what}: {p:?} wrote past"
        );
        for (i, (a, b)) in back.iter().zip(&back_ref).enumerate() {
            assert_eq!(
                a.to_f64().to_bits(),
                b.to_f64().to_bits(),
                "{what}: {p:?} value {i} differs"
            );
        }
    }
}

fn report() {
    let vbmi = CpuFeatures::detect().has(CpuFeatures::AVX512VBMI);
    let paths: Vec<&str> = Kernel::ALL
        .iter()
        .filter(|p| p.is_available())
        .map(|p| p.name())
        .collect();
    println!(
        "szp kernels: paths compared {paths:?}; AVX-512 VBMI kernels {}",
        if vbmi {
            "exercised"
        } else {
            "NOT exercised (no AVX-512 VBMI on this CPU)"
        }
    );
}

#[test]
fn every_width_and_the_decoders_i32_limit() {
    report();
    // eb = 0.5: levels are the integers themselves (2·eb = 1), so every width is reachable.
    for w in 1..=40u32 {
        let l = 1i64 << (w - 1).saturating_sub(1); // zigzag(±l) has w bits (w >= 2)
        for bs in [16u32, 23, 128, 4096] {
            for n in [1usize, 15, 17, bs as usize, 2 * bs as usize + 9] {
                // Alternating ±l: wide deltas, small levels (for w = 1 a descending ramp: deltas
                // of -1 zigzag to 1).
                let alt: Vec<f64> = (0..n)
                    .map(|i| {
                        if w == 1 {
                            -((i % bs as usize) as f64)
                        } else {
                            ((i % 2) as i64 * l) as f64
                        }
                    })
                    .collect();
                // A ramp: level i·l, whose prefix sums pass 2^31 for long blocks.
                let ramp: Vec<f64> = (0..n)
                    .map(|i| ((i as i64 % bs as i64) * l) as f64)
                    .collect();
                let cfg = Config::abs(0.5).with_block_size(bs).stage_compatible();
                let what = format!("w={w} bs={bs} n={n}");
                check(&alt, &cfg, &format!("{what} alternating f64"));
                check(&ramp, &cfg, &format!("{what} ramp f64"));
                if (l as f64) * (bs as f64) < 16_777_216.0 {
                    let a32: Vec<f32> = alt.iter().map(|&x| x as f32).collect();
                    let r32: Vec<f32> = ramp.iter().map(|&x| x as f32).collect();
                    check(&a32, &cfg, &format!("{what} alternating f32"));
                    check(&r32, &cfg, &format!("{what} ramp f32"));
                }
            }
        }
    }
}

#[test]
fn near_ties_in_some_blocks_only() {
    report();
    // A smooth field with exact half-integer levels planted in a few blocks: those blocks
    // take the exact fallback, their neighbours the fast scan.
    let eb = 0.01;
    for bs in [16u32, 128, 1000] {
        let mut d: Vec<f64> = (0..5000).map(|i| (i as f64 * 0.003).sin() * 3.0).collect();
        for k in [5usize, 700, 2500, 4999] {
            d[k] = (k as f64 + 0.5) * 2.0 * eb;
        }
        let d32: Vec<f32> = d.iter().map(|&x| x as f32).collect();
        let cfg = Config::abs(eb).with_block_size(bs).stage_compatible();
        check(&d, &cfg, &format!("ties f64 bs={bs}"));
        check(
            &d,
            &Config::abs(eb).with_block_size(bs),
            &format!("ties strict f64 bs={bs}"),
        );
        check(
            &d32,
            &Config::noa(1e-3).with_block_size(bs),
            &format!("noa f32 bs={bs}"),
        );
    }
}

#[test]
fn scalar_one_pass_and_two_pass_encoders_agree() {
    // The scalar path (`compress_with(Kernel::Scalar, ..)`) encodes each block in one pass with the zigzagged values parked
    // in the output slice when 8·len bytes are free at the block's offset, else with the
    // two-pass block encoder; an output slice of exactly the archive's length forces the
    // two-pass encoder for the last blocks. Same bytes either way, every width.
    for (scale, eb) in [(1.0, 1e-1), (1.0, 1e-5), (1e6, 1e-9), (1e9, 1e-3)] {
        let d: Vec<f64> = (0..3000)
            .map(|i| ((i as f64) * 0.01).sin() * scale + (i % 7) as f64 * scale * 1e-3)
            .collect();
        for bs in [1u32, 9, 128, 4096] {
            let cfg = Config::abs(eb).with_block_size(bs);
            let cap = szp::max_compressed_len(d.len(), bs, szp::DType::F64).unwrap();
            let mut big = vec![0u8; cap];
            let len = szp::compress_with(szp::Kernel::Scalar, &d, &cfg, &mut big).unwrap();
            let mut tight = vec![0xEEu8; len + 3];
            assert_eq!(
                szp::compress_with(szp::Kernel::Scalar, &d, &cfg, &mut tight[..len]),
                Ok(len)
            );
            assert_eq!(tight[..len], big[..len], "scale {scale} eb {eb} bs {bs}");
            assert!(tight[len..].iter().all(|&b| b == 0xEE));
        }
    }
}

#[test]
fn config_errors_match_the_reference_on_every_path() {
    // Found by the GPU executor's tests: the SIMD plans validated the config by planning an
    // empty input, whose strict tightening with a large max_abs failed (BoundBelowPrecision)
    // where the reference reports the field's own error (ZeroRange for one value under NOA).
    let cases: [(&[f32], Config); 3] = [
        (&[1.0], Config::noa(1e-3).with_max_abs(2e6)),
        (&[1.0, 2.0], Config::noa(1e-3).with_max_abs(2e6)),
        (&[1.0, 2.0], Config::abs(-1.0)),
    ];
    for (data, cfg) in cases {
        let mut r = vec![0u8; 256];
        let want = szp::compress_with(szp::Kernel::Scalar, data, &cfg, &mut r);
        for p in Kernel::ALL.into_iter().filter(|p| p.is_available()) {
            let mut out = vec![0u8; 256];
            assert_eq!(
                szp::compress_with(p, data, &cfg, &mut out),
                want,
                "{p:?} {cfg:?}"
            );
        }
        let mut out = vec![0u8; 256];
        assert_eq!(
            szp::compress_with(szp::Kernel::Portable, data, &cfg, &mut out),
            want,
            "portable {cfg:?}"
        );
    }
}
