//! Forged but well-formed SZp archives (every CRC recomputed) whose numbers no encoder writes:
//! each is refused with `Error::Implausible` by every decoder path (scalar reference, portable,
//! AVX2, AVX-512 where the CPU has them, the parallel driver, with and without CRC checks), by
//! `szp::header` (what `fzpack info` shows) and by the compressed-domain operations; and the
//! errors that name a range overflow instead of a precision problem (data near the element
//! type's maximum, results that would be infinite).

use fzpack_core::szp::{self, Config, DType, Error, Kernel, Layout, SzpFloat, Verify, ops};
use fzpack_tests::checks::test_parallel;
use fzpack_tests::ops_checks::{encode, linear_checked};

fn field(n: usize, scale: f64) -> Vec<f64> {
    (0..n)
        .map(|i| scale * ((i as f64 * 0.013).sin() + 0.25 * (i as f64 * 0.31).cos()))
        .collect()
}

fn to<T: SzpFloat>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_f64(x)).collect()
}

fn paths() -> Vec<Kernel> {
    Kernel::ALL
        .into_iter()
        .filter(|p| p.is_available())
        .collect()
}

/// Writes the f64 `v` at header offset `at` and recomputes the header CRC (version 2).
fn put_f64(a: &mut [u8], at: usize, v: f64) {
    a[at..at + 8].copy_from_slice(&v.to_le_bytes());
    let sum = szp::fzm::crc32(&a[..szp::HEADER_LEN_V1]);
    a[szp::HEADER_LEN_V1..szp::HEADER_LEN].copy_from_slice(&sum.to_le_bytes());
}

/// Header offsets of the quantizer bound, the value range and the requested bound.
const EB: usize = 24;
const BASE: usize = 32;
const REQ: usize = 40;

/// Decodes `a` (dtype `T`) on every available path, with and without the CRC checks, and with
/// the parallel driver; returns each result (`Ok` holds the values as f64).
fn decode_everywhere<T: SzpFloat + fzpack::Element>(
    a: &[u8],
) -> Vec<(String, Result<Vec<f64>, Error>)> {
    let n = szp::blocks::parse_frame(a, Verify::Skip, false).map_or(0, |v| v.n);
    let mut res = Vec::new();
    for p in paths() {
        for verify in [Verify::Checksums, Verify::Skip] {
            let mut out = vec![T::from_f64(0.0); n];
            let r = szp::decompress_with(p, a, &mut out, verify)
                .map(|_| out.iter().map(|x| x.to_f64()).collect());
            res.push((format!("{p:?} {verify:?}"), r));
        }
    }
    let par = fzpack::szp::Decoder::new()
        .threads(&test_parallel())
        .to_vec::<T>(a)
        .map_err(|e| match e {
            fzpack::Error::Szp(e) => e,
            other => panic!("not an SZp error: {other}"),
        });
    res.push((
        "parallel".into(),
        par.map(|v| v.iter().map(|x| x.to_f64()).collect()),
    ));
    res
}

/// Every forgery of the header's numbers of a valid archive `a` (f32 or f64, either layout,
/// ABS or NOA): `Implausible` from the header reader, every decoder and the operations.
fn header_forgeries_of<T: SzpFloat + fzpack::Element>(a: &[u8]) {
    let h = szp::header(a).unwrap();
    let mut cases: Vec<(&str, Vec<(usize, f64)>)> = vec![
        ("negative requested bound", vec![(REQ, -h.requested)]),
        (
            "quantizer bound above the bound",
            vec![(EB, h.bound() * 2.0)],
        ),
        ("negative value range", vec![(BASE, -1.0)]),
    ];
    match h.mode {
        szp::Mode::Noa => {
            cases.push(("relative bound 0", vec![(REQ, 0.0)]));
            cases.push(("value range 0", vec![(BASE, 0.0)]));
            cases.push((
                "bound x range overflows",
                vec![(REQ, 10.0), (BASE, f64::MAX)],
            ));
        }
        szp::Mode::Abs => cases.push(("requested bound below eb", vec![(REQ, h.quant_eb * 0.999)])),
    }
    for (what, patches) in cases {
        let mut f = a.to_vec();
        for (at, v) in patches {
            put_f64(&mut f, at, v);
        }
        assert!(
            matches!(szp::header(&f), Err(Error::Implausible { .. })),
            "{what}: header {:?}",
            szp::header(&f)
        );
        for (how, r) in decode_everywhere::<T>(&f) {
            assert!(
                matches!(r, Err(Error::Implausible { .. })),
                "{what}: {how}: {:?}",
                r.map(|v| v.len())
            );
        }
        let mut out = vec![0u8; a.len() * 2 + 1024];
        assert!(matches!(
            ops::add(&f, a, &mut out),
            Err(Error::Implausible { .. })
        ));
        assert!(matches!(ops::stats(&f), Err(Error::Implausible { .. })));
    }
}

#[test]
fn forged_header_numbers_are_implausible_everywhere() {
    let f = field(3000, 40.0);
    for layout in [Layout::Fzgm, Layout::Heads] {
        for cfg in [
            Config::abs(1e-3).with_layout(layout),
            Config::noa(1e-4).with_layout(layout),
            Config::abs(1e-2).stage_compatible().with_layout(layout),
        ] {
            header_forgeries_of::<f32>(&encode(&to::<f32>(&f), &cfg).unwrap());
            header_forgeries_of::<f64>(&encode(&f, &cfg).unwrap());
        }
    }
}

/// The archive of `data` under `cfg` with the quantizer and requested bounds set to `eb` (a
/// consistent ABS header: `eb <= bound`), CRC recomputed.
fn with_bound(archive: &[u8], eb: f64) -> Vec<u8> {
    let mut f = archive.to_vec();
    put_f64(&mut f, EB, eb);
    put_f64(&mut f, REQ, eb);
    f
}

#[test]
fn huge_quantizer_bound_never_decodes_to_infinity() {
    // Almost every level is non-zero: with eb = 1e308 (f64: 2·eb is already infinite) or
    // 1e36 (f32), their values are not finite in the element type.
    let f = field(5000, 40.0);
    for layout in [Layout::Fzgm, Layout::Heads] {
        let cfg = Config::abs(1e-3).with_layout(layout);
        let a32 = encode(&to::<f32>(&f), &cfg).unwrap();
        let a64 = encode(&f, &cfg).unwrap();
        for (a, eb) in [(&a32, 1e308), (&a32, 1e36), (&a64, 1e308), (&a64, 1e305)] {
            let forged = with_bound(a, eb);
            assert!(
                szp::header(&forged).is_ok(),
                "the header itself is consistent"
            );
            let results = match szp::header(a).unwrap().dtype {
                DType::F32 => decode_everywhere::<f32>(&forged),
                DType::F64 => decode_everywhere::<f64>(&forged),
            };
            for (how, r) in results {
                assert_eq!(
                    r.map(|v| v.len()),
                    Err(Error::Implausible {
                        what: "a level whose value is not finite in the element type"
                    }),
                    "{layout:?} eb {eb}: {how}"
                );
            }
            // The operations refuse the input as its decoder does, even where the result
            // (a − a = 0) would be finite; the statistics too.
            // (With eb = 1e308 the result's bound 2e308 alone is not finite: one input.)
            let r = if eb < 1e307 {
                linear_checked(&[&forged, &forged], &[1, -1])
            } else {
                linear_checked(&[&forged], &[1])
            };
            assert!(matches!(r, Err(Error::Implausible { .. })), "{r:?}");
            assert!(matches!(
                ops::stats(&forged),
                Err(Error::Implausible { .. })
            ));
        }
    }
}

#[test]
fn large_but_finite_bounds_still_decode() {
    // A legitimate archive whose bound allows non-finite levels in principle (f32, eb 1e28:
    // 2^64·eb > f32::MAX) decodes on every path to the same finite values; so does a forged
    // bound of 1e308 on an archive whose levels are all 0.
    let f: Vec<f64> = field(4000, 1e33);
    let a = encode(&to::<f32>(&f), &Config::abs(1e28)).unwrap();
    assert!(szp::header(&a).unwrap().quant_eb > 1.9e19);
    let results = decode_everywhere::<f32>(&a);
    let first = results[0].1.clone().unwrap();
    assert!(first.iter().all(|x| x.is_finite()));
    for (x, y) in f.iter().zip(&first) {
        assert!((f64::from(*x as f32) - y).abs() <= 1e28);
    }
    for (how, r) in results {
        assert_eq!(r.as_ref(), Ok(&first), "{how}");
    }
    let zeros = encode(&[0f64; 700], &Config::abs(1e-3)).unwrap();
    for (how, r) in decode_everywhere::<f64>(&with_bound(&zeros, 1e308)) {
        assert_eq!(r, Ok(vec![0.0; 700]), "{how}");
    }
    assert!(linear_checked(&[&a, &a], &[1, -1]).is_ok());
}

#[test]
fn ops_result_that_would_be_infinite_is_named() {
    // Doubling values near f32::MAX: the levels are small (~2e6), the f32 result is infinite.
    let x: Vec<f32> = (0..300)
        .map(|i| f32::MAX * (0.9 + 0.0003 * (i % 7) as f32))
        .collect();
    let a = encode(&x, &Config::abs(1e32)).unwrap();
    let s = ops::stats(&a).unwrap();
    let (lo, hi) = s.min_max_levels.unwrap();
    assert!(lo > 0 && hi < 1 << 30, "levels {lo}..{hi}");
    let e = linear_checked(&[&a], &[2]).unwrap_err();
    assert_eq!(e, Error::ResultOverflow { index: 0 });
    let msg = e.to_string();
    assert!(msg.contains("overflows the element type"), "{msg}");
    assert!(!msg.contains("2^62"), "{msg}");
    // Levels of 2^62 and more are still LevelOverflow.
    let one = encode(&[2.0f64; 10], &Config::abs(0.5).stage_compatible()).unwrap();
    assert_eq!(
        linear_checked(&[&one], &[1i64 << 61]),
        Err(Error::LevelOverflow { index: 0 })
    );
}

#[test]
fn layout_mismatch_names_both_layouts() {
    let f = to::<f32>(&field(2000, 3.0));
    let cfg = Config::abs(1e-3).with_max_abs(20.0);
    let z0 = encode(&f, &cfg.with_layout(Layout::Fzgm)).unwrap();
    let z1 = encode(&f, &cfg.with_layout(Layout::Heads)).unwrap();
    let mut out = vec![0u8; 40000];
    for (a, b) in [(&z0, &z1), (&z1, &z0)] {
        let e = ops::add(a, b, &mut out).unwrap_err();
        assert!(matches!(e, Error::OpsMismatch { .. }));
        let msg = e.to_string();
        for word in ["layout", "`fzgm`", "`heads`"] {
            assert!(msg.contains(word), "{msg}");
        }
    }
}

/// Compresses and checks the strict promise on every path (same bytes as the scalar path).
fn roundtrip_everywhere<T: SzpFloat + fzpack::Element>(data: &[T], cfg: &Config) {
    let a = encode(data, cfg).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
    for p in paths() {
        let mut out = vec![0u8; a.len() + 4096];
        let len = szp::compress_with(p, data, cfg, &mut out).unwrap();
        assert_eq!(out[..len], a[..], "{p:?} bytes");
    }
    let bound = szp::header(&a).unwrap().bound();
    for (how, r) in decode_everywhere::<T>(&a) {
        let back = r.unwrap();
        for (x, y) in data.iter().zip(&back) {
            assert!(y.is_finite(), "{how}");
            assert!(
                (x.to_f64() - y).abs() <= bound,
                "{how}: {} vs {y}",
                x.to_f64()
            );
        }
    }
}

#[test]
fn data_at_the_type_maximum_compresses_or_names_the_range() {
    // f32::MAX in a field: every bound from about the f32 precision there (2e31) up is
    // supported; below it the bound is below the precision of the data.
    let mut x = to::<f32>(&field(1000, 1e30));
    x[17] = f32::MAX;
    x[400] = -f32::MAX;
    for eb in [3e31, 1e33, 1e36, 3e38] {
        roundtrip_everywhere(&x, &Config::abs(eb));
        roundtrip_everywhere(&x, &Config::abs(eb).with_layout(Layout::Heads));
    }
    assert_eq!(
        encode(&x, &Config::abs(1e30)),
        Err(Error::BoundBelowPrecision)
    );
    // A declared max_abs above f32::MAX counts as f32::MAX.
    roundtrip_everywhere(&x, &Config::abs(1e34).with_max_abs(1e40));
    assert_eq!(
        encode(&x, &Config::abs(1e-3).with_max_abs(1e40)),
        Err(Error::BoundBelowPrecision)
    );
    // f64 near f64::MAX: supported where a reconstruction cannot overflow; at f64::MAX itself
    // the quantizer's own rounding could (a distinct error, naming the range).
    let mut y = field(1000, 1e300);
    y[3] = 1.7e308;
    roundtrip_everywhere(&y, &Config::abs(1e307));
    y[5] = f64::MAX;
    let e = encode(&y, &Config::abs(1e307)).unwrap_err();
    assert_eq!(e, Error::RangeOverflow);
    assert!(e.to_string().contains("overflow to infinity"), "{e}");
    assert!(!e.to_string().contains("precision"), "{e}");
}
