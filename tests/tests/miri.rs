//! Small cases of every portable path, sized for Miri (`scripts/miri.sh` runs this file under
//! `cargo +nightly miri test`, where code runs about a thousand times slower): PERNIX scalar
//! blocks, the SZp engine on the scalar and portable paths in both block layouts, the archive
//! parsers (SZp header and blocks, `.fzm`, `.pnx` streams) on valid, truncated and bit-flipped
//! input, the SZp operations, and the fuzz targets' seed corpora. Natively it is one more quick
//! test of the same promises; the full-size tests live in the other files.
//!
//! Under Miri CPU detection reports no SIMD features (`fzpack_core::arch`), so `Auto` and
//! `Kernel::best()` resolve to the portable code; the `core::arch` kernels are not run here.

use fzpack_core::pernix::{Backend, BitWidth, BlockSize, Dispatcher, elements_per_block};
use fzpack_core::szp::{self, Config, Error, Kernel, Layout, SzpFloat, fzm, ops};

/// A smooth field with some noise: `n` values from a 64-bit LCG.
fn field(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|i| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (i as f64 * 0.07).sin() * 40.0 + ((s >> 40) as f64 / (1u64 << 24) as f64) - 0.5
        })
        .collect()
}

/// Byte positions to damage in an archive of `len` bytes: all of them natively; under Miri
/// every byte of the first 48 (the headers) and every 13th after (each decode is ~1000x
/// slower there).
fn positions(len: usize) -> impl Iterator<Item = usize> {
    (0..len).filter(move |&i| !cfg!(miri) || i < 48 || i % 13 == 0 || i + 1 == len)
}

/// The paths this build runs (under Miri: scalar and portable).
fn paths() -> Vec<Kernel> {
    let v: Vec<Kernel> = Kernel::ALL
        .into_iter()
        .filter(|p| p.is_available())
        .collect();
    if cfg!(miri) {
        assert_eq!(
            v,
            [Kernel::Scalar, Kernel::Portable],
            "Miri runs the portable paths only"
        );
    }
    v
}

fn encode_on<T: SzpFloat>(path: Kernel, data: &[T], cfg: &Config) -> Result<Vec<u8>, Error> {
    let cap = szp::max_compressed_len(data.len(), cfg.block_size, T::DTYPE).unwrap();
    // A canary past the capacity: nothing may be written beyond the slice given.
    let mut out = vec![0xA5u8; cap + 16];
    let len = szp::compress_with(path, data, cfg, &mut out[..cap])?;
    assert!(
        out[cap..].iter().all(|&b| b == 0xA5),
        "wrote past the output"
    );
    out.truncate(len);
    Ok(out)
}

fn configs() -> Vec<Config> {
    let mut v = Vec::new();
    for layout in [Layout::Fzgm, Layout::Heads] {
        v.push(Config::abs(1e-2).with_block_size(32).with_layout(layout));
        v.push(Config::noa(1e-3).with_block_size(7).with_layout(layout));
        v.push(
            Config::abs(0.5)
                .with_block_size(16)
                .stage_compatible()
                .with_layout(layout),
        );
    }
    v
}

/// Every path writes the scalar reference's bytes; every decode meets the bound; the header
/// parses; the streaming encoder equals the one-shot one; unverified and verified decodes agree.
fn szp_case<T: SzpFloat>(x: &[T]) {
    for cfg in configs() {
        let want = match encode_on(Kernel::Scalar, x, &cfg) {
            // NOA of a constant field: no range to be relative to.
            Err(Error::ZeroRange) if cfg.mode == szp::Mode::Noa => continue,
            r => r.unwrap(),
        };
        let h = szp::header(&want).unwrap();
        assert_eq!(h.n, x.len() as u64);
        let view = szp::blocks::parse(&want).unwrap();
        assert_eq!(view.n, x.len());
        for path in paths() {
            let got = encode_on(path, x, &cfg).unwrap();
            assert!(
                got == want,
                "{}: bytes differ from the scalar reference",
                path.name()
            );
            let mut out = vec![T::default(); x.len() + 3];
            let n = szp::decompress_with(path, &want, &mut out, szp::Verify::Checksums).unwrap();
            assert_eq!(n, x.len());
            for (i, (a, b)) in x.iter().zip(&out).enumerate() {
                let err = (a.to_f64() - b.to_f64()).abs();
                let slack = if cfg.strict {
                    0.0
                } else {
                    a.to_f64().abs() * 1e-6 + 1e-30
                };
                assert!(err <= h.bound() + slack, "{}: element {i}", path.name());
            }
            let mut raw = vec![T::default(); x.len()];
            assert_eq!(
                szp::decompress_with(szp::Kernel::best(), &want, &mut raw, szp::Verify::Skip),
                Ok(x.len())
            );
            assert!(
                raw.iter()
                    .zip(&out)
                    .all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits())
            );
            // Too small an output is an error, never a write past it.
            let mut short = vec![T::default(); x.len() - 1];
            assert!(szp::decompress_with(path, &want, &mut short, szp::Verify::Checksums).is_err());
        }
        if cfg.strict && cfg.mode == szp::Mode::Abs {
            let mag = x.iter().map(|v| v.to_f64().abs()).fold(0.0, f64::max);
            let c = cfg.with_max_abs(mag);
            let one = encode_on(Kernel::Scalar, x, &c).unwrap();
            let mut buf = vec![0u8; one.len() + 64];
            let mut enc = szp::StreamEncoder::<T>::new(&mut buf, x.len(), &c).unwrap();
            for b in x.chunks(c.block_size as usize) {
                enc.push_block(b).unwrap();
            }
            let len = enc.finish().unwrap();
            assert!(buf[..len] == one[..], "streamed archive differs");
        }
    }
}

#[test]
fn szp_engine_round_trips_on_the_portable_paths() {
    let x = field(90, 1);
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    szp_case::<f32>(&x32);
    szp_case::<f64>(&x);
    // A constant field, a single value and an empty input.
    szp_case::<f32>(&[3.25f32; 40]);
    for path in paths() {
        let a = encode_on(path, &[1.5f64], &Config::abs(1e-3)).unwrap();
        let mut o = [0f64; 1];
        assert_eq!(szp::decompress(&a, &mut o), Ok(1));
        assert!((o[0] - 1.5).abs() <= 1e-3);
        assert!(encode_on::<f32>(path, &[], &Config::abs(1e-3)).is_ok());
        // A missing value is stored exactly on every path (the same bytes), and a bound of
        // 0 names no index.
        let mut bad = x32.clone();
        bad[77] = f32::NAN;
        let a = encode_on(path, &bad, &Config::abs(1e-2)).unwrap();
        assert_eq!(
            Ok(a.clone()),
            encode_on(Kernel::Scalar, &bad, &Config::abs(1e-2))
        );
        let mut o = [0f32; 90];
        assert_eq!(szp::decompress(&a, &mut o), Ok(90));
        assert!(o[77].is_nan() && (o[76] - bad[76]).abs() <= 1e-2);
        assert_eq!(
            encode_on(path, &bad, &Config::abs(0.0)),
            Err(Error::InvalidErrorBound)
        );
    }
}

/// Every truncation and a bit flip in every byte of small archives (both layouts, both
/// versions' parsers): an error or a bounded decode, never UB or a panic.
#[test]
fn szp_parsers_on_truncated_and_flipped_archives() {
    let x: Vec<f32> = field(60, 2).iter().map(|&v| v as f32).collect();
    for layout in [Layout::Fzgm, Layout::Heads] {
        let cfg = Config::abs(1e-2).with_block_size(16).with_layout(layout);
        let a = encode_on(Kernel::Scalar, &x, &cfg).unwrap();
        let mut out = vec![0f32; 64];
        let mut out64 = vec![0f64; 64];
        for cut in positions(a.len()) {
            assert!(szp::decompress(&a[..cut], &mut out).is_err(), "cut {cut}");
            let _ = szp::header(&a[..cut]);
            let _ =
                szp::decompress_with(szp::Kernel::best(), &a[..cut], &mut out, szp::Verify::Skip);
        }
        for i in positions(a.len()) {
            let mut b = a.clone();
            b[i] ^= 1 << (i % 8);
            assert!(
                szp::decompress(&b, &mut out).is_err(),
                "flip in byte {i} passed"
            );
            if let Ok(n) =
                szp::decompress_with(szp::Kernel::best(), &b, &mut out, szp::Verify::Skip)
            {
                assert!(n <= out.len());
            }
            let _ = szp::decompress_with(szp::Kernel::best(), &b, &mut out64, szp::Verify::Skip);
            let _ = szp::blocks::parse(&b);
        }
        // Re-sealed forgeries reach the decoder behind the checksums.
        for i in [8usize, 20, 40, a.len() / 2, a.len() - 9] {
            let mut b = a.clone();
            b[i] = b[i].wrapping_add(0x35);
            if fzpack_tests::ops_checks::reseal(&mut b) {
                if let Ok(n) = szp::decompress(&b, &mut out) {
                    assert!(n <= out.len());
                }
                let _ = ops::stats(&b);
            }
        }
    }
}

#[test]
fn fzm_write_read_and_malformed() {
    let x: Vec<f32> = field(50, 3).iter().map(|&v| v as f32).collect();
    let cfg = Config::abs(1e-2).with_block_size(16).stage_compatible();
    let cap = fzm::max_fzm_len(x.len(), 16, szp::DType::F32).unwrap();
    let mut a = vec![0u8; cap];
    let len = fzm::write(&x, &cfg, &mut a).unwrap();
    a.truncate(len);
    let h = fzm::header(&a).unwrap();
    assert_eq!(h.n, 50);
    let mut out = vec![0f32; 50];
    assert_eq!(fzm::read(&a, &mut out), Ok(50));
    for (p, q) in x.iter().zip(&out) {
        assert!((p - q).abs() <= 1.0e-2 + p.abs() * 1e-6);
    }
    for cut in positions(a.len()) {
        assert!(fzm::read(&a[..cut], &mut out).is_err(), "cut {cut}");
    }
    let mut o64 = vec![0f64; 50];
    for i in positions(a.len()) {
        let mut b = a.clone();
        b[i] ^= 0x10;
        let _ = fzm::header(&b);
        let _ = fzm::config(&b);
        let _ = fzm::read(&b, &mut out);
        let _ = fzm::read(&b, &mut o64);
    }
}

#[test]
fn szp_ops_on_small_archives() {
    for layout in [Layout::Fzgm, Layout::Heads] {
        let cfg = Config::abs(1e-2).with_block_size(16).with_layout(layout);
        let x: Vec<f32> = field(70, 4).iter().map(|&v| v as f32).collect();
        let y: Vec<f32> = field(70, 5).iter().map(|&v| v as f32 * 0.5).collect();
        let a = encode_on(Kernel::Scalar, &x, &cfg).unwrap();
        let b = encode_on(Kernel::Scalar, &y, &cfg).unwrap();
        for (arch, coeffs) in [
            (vec![&a[..], &b[..]], vec![1, 1]),
            (vec![&a[..], &b[..]], vec![1, -1]),
            (vec![&a[..]], vec![-1]),
            (vec![&a[..]], vec![3]),
            (vec![&a[..], &b[..], &a[..]], vec![1, 2, -1]),
        ] {
            let r = fzpack_tests::ops_checks::linear_checked(&arch, &coeffs).unwrap();
            let v = fzpack_tests::ops_checks::decode_f64(&r).unwrap();
            assert_eq!(v.len(), 70);
        }
        let cap = ops::max_output_len(70, 16).unwrap();
        let mut out = vec![0u8; cap];
        assert!(ops::add(&a, &b, &mut out).is_ok());
        assert!(ops::sub(&a, &b, &mut out).is_ok());
        assert!(ops::negate(&a, &mut out).is_ok());
        assert!(ops::scale_int(&a, -2, &mut out).is_ok());
        assert!(ops::sum(&[&a, &b], &mut out).is_ok());
        // Too small an output is an error.
        assert!(ops::add(&a, &b, &mut out[..10]).is_err());
        let s = ops::stats(&a).unwrap();
        assert_eq!(s.n, 70);
        assert!(ops::mean(&a).unwrap().is_some());
        assert!(ops::min_max_levels(&a).unwrap().is_some());
        // Mismatched inputs are errors.
        let c = encode_on(Kernel::Scalar, &x[..60], &cfg).unwrap();
        assert!(ops::add(&a, &c, &mut out).is_err());
    }
    // The fuzz target's check on a few derived inputs.
    for seed in 0..2u8 {
        let data: Vec<u8> = (0..120u32)
            .map(|i| {
                (i as u8)
                    .wrapping_mul(37)
                    .wrapping_add(seed.wrapping_mul(91))
                    ^ seed
            })
            .collect();
        fzpack_tests::ops_checks::szp_ops(&data);
    }
}

#[test]
fn pernix_blocks_round_trip_on_the_scalar_path() {
    let ds: Vec<Dispatcher> = [Backend::Auto, Backend::Fallback]
        .into_iter()
        .map(|b| Dispatcher::new(b).unwrap())
        .collect();
    if cfg!(miri) {
        assert_eq!(ds[0], ds[1], "Auto is the scalar path under Miri");
    }
    for n in [3u8, 8, 13, 24] {
        let bits = BitWidth::new(n).unwrap();
        let bs = BlockSize::B64;
        let blocks = 2;
        let epb = elements_per_block(bits, bs);
        let x: Vec<f32> = field(epb * blocks, u64::from(n))
            .iter()
            .map(|&v| v as f32)
            .collect();
        let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let inv = 0.75f32;
        let mut want = vec![0u8; bs.bytes() * blocks];
        ds[1]
            .compress_blocks(bits, bs, &x, inv, &mut want, blocks)
            .unwrap();
        let mut got = vec![0x5Au8; bs.bytes() * blocks + 8];
        ds[0]
            .compress_blocks(bits, bs, &x, inv, &mut got, blocks)
            .unwrap();
        assert!(got[..want.len()] == want[..] && got[want.len()..].iter().all(|&b| b == 0x5A));
        let mut w64 = vec![0u8; bs.bytes() * blocks];
        ds[1]
            .compress_blocks(bits, bs, &x64, 0.75, &mut w64, blocks)
            .unwrap();
        for signed in [true, false] {
            let mut back = vec![0f32; epb * blocks];
            ds[0]
                .decompress_blocks(bits, bs, &want, 1.0 / inv, &mut back, blocks, signed)
                .unwrap();
            let mut back64 = vec![0f64; epb * blocks];
            ds[0]
                .decompress_blocks(bits, bs, &w64, 1.0 / 0.75, &mut back64, blocks, signed)
                .unwrap();
        }
        // Short slices are errors, not reads or writes past them.
        let mut short = vec![0u8; bs.bytes() * blocks - 1];
        assert!(
            ds[0]
                .compress_blocks(bits, bs, &x, inv, &mut short, blocks)
                .is_err()
        );
        assert!(
            ds[0]
                .compress_blocks(bits, bs, &x[1..], inv, &mut want, blocks)
                .is_err()
        );
    }
}

/// `.pnx` streams (the `fzpack` crate's reader): round trip, header and scales, every
/// truncation and a flip per byte of a small stream, verified and unverified.
#[test]
fn pnx_streams_round_trip_and_reject_damage() {
    use fzpack::pernix::{self as px, StreamHeader, Verify};
    let d = fzpack::pernix::Dispatcher::new(Backend::Fallback).unwrap();
    let x: Vec<f32> = field(200, 6).iter().map(|&v| v as f32).collect();
    let s = px::Encoder::new(BitWidth::new(12).unwrap(), BlockSize::B64)
        .dispatcher(&d)
        .to_vec(&x)
        .unwrap();
    let h = px::stream_header(&s).unwrap();
    assert_eq!(h.n, 200);
    let dec = px::Decoder::new().dispatcher(&d);
    let skip = dec.clone().verify(Verify::Skip);
    let back: Vec<f32> = dec.to_vec(&s).unwrap();
    assert_eq!(back.len(), 200);
    assert!(px::inspect(&s, Verify::Checksums).unwrap().blocks > 0);
    for cut in positions(s.len()) {
        assert!(dec.to_vec::<f32>(&s[..cut]).is_err(), "cut {cut}");
    }
    for i in positions(s.len()) {
        let mut b = s.clone();
        b[i] ^= 1 << (i % 8);
        let _ = StreamHeader::check(&b, Verify::Skip);
        let _ = px::inspect(&b, Verify::Skip);
        assert!(dec.to_vec::<f32>(&b).is_err(), "flip {i}");
        let _ = skip.to_vec::<f32>(&b);
        let _ = skip.to_vec::<f64>(&b);
    }
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = fzpack_tests::vectors::workspace_root()
        .join("fuzz/corpus")
        .join(target);
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .expect("seed corpus present")
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    let v: Vec<Vec<u8>> = v.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(!v.is_empty(), "{target}: no seeds");
    v
}

/// The fuzz targets' checks on their seed corpora (the regression inputs fuzzing found
/// included), with the portable paths.
#[test]
fn fuzz_seed_corpora() {
    for s in seeds("szp_decode_untrusted") {
        fzpack_tests::checks::szp_decode_untrusted(&s);
    }
    for s in seeds("fzm_decode_untrusted") {
        fzpack_tests::checks::fzm_decode_untrusted(&s);
    }
    use fzpack::pernix::{self as px, StreamHeader, Verify};
    let d = fzpack::pernix::Dispatcher::new(Backend::Fallback).unwrap();
    let dec = px::Decoder::new().dispatcher(&d);
    for s in seeds("pnx_stream_decode") {
        let _ = StreamHeader::check(&s, Verify::Checksums);
        let _ = px::inspect(&s, Verify::Skip);
        let _ = px::inspect(&s, Verify::Checksums);
        if let Ok(h) = StreamHeader::check(&s, Verify::Skip)
            && h.n <= 1 << 12
        {
            let _ = dec.clone().verify(Verify::Skip).to_vec::<f32>(&s);
            let _ = dec.to_vec::<f64>(&s);
        }
    }
}
