//! Missing values (NaN, ±inf) and shapes in SZp archives (format version 3): exact round trips
//! of every non-finite bit pattern on every kernel, the same bytes from every kernel, thread
//! count and batch size, the bound on every finite value, NOA over the finite range, the ratio
//! against the same field with its missing values set to 0, corruption of the extension,
//! shapes, version 2 for archives that need neither, and the writers that refuse them.

use fzpack_core::szp::archive::ArchiveReader;
use fzpack_core::szp::{
    self, Config, DType, Error, FLAG_MISSING, FLAG_SHAPE, Kernel, Layout, Shape, StreamEncoder,
    SzpFloat, Verify,
};

fn encode_on<T: SzpFloat>(k: Kernel, data: &[T], cfg: &Config) -> Result<Vec<u8>, Error> {
    let mut out = vec![0u8; 64 + data.len() * 40];
    let len = szp::compress_with(k, data, cfg, &mut out)?;
    out.truncate(len);
    Ok(out)
}

fn decode_on<T: SzpFloat>(k: Kernel, a: &[u8], verify: Verify) -> Result<Vec<T>, Error> {
    let n = szp::header(a)?.n as usize;
    let mut out = vec![T::from_f64(0.0); n];
    szp::decompress_with(k, a, &mut out, verify)?;
    Ok(out)
}

/// A smooth field with NaN land (runs of several lengths), ±inf, and NaNs with payloads
/// (quiet and signalling, both signs) sprinkled in; returns f64 bit patterns to build either
/// type from.
fn field_with_missing(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let x = i as f64;
            let v = (x * 0.013).sin() * 40.0 + (x * 0.0021).cos() * 7.0;
            if (i / 300) % 3 == 1 && i % 300 < 170 {
                f64::NAN // "land": long runs
            } else if i % 977 == 5 {
                f64::INFINITY
            } else if i % 1231 == 9 {
                f64::NEG_INFINITY
            } else {
                v
            }
        })
        .collect()
}

fn as_f32(x: &[f64]) -> Vec<f32> {
    let mut v: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    // NaNs with payloads: a quiet one with a payload, a signalling one, a negative one.
    for (i, p) in [
        (1001usize, 0x7fc0_1234u32),
        (2002, 0x7f80_0001),
        (3003, 0xffc0_0000),
    ] {
        if i < v.len() {
            v[i] = f32::from_bits(p);
        }
    }
    v
}

fn as_f64(x: &[f64]) -> Vec<f64> {
    let mut v = x.to_vec();
    for (i, p) in [
        (1001usize, 0x7ff8_0000_dead_beefu64),
        (2002, 0x7ff0_0000_0000_0001),
        (3003, 0xfff8_0000_0000_0000),
    ] {
        if i < v.len() {
            v[i] = f64::from_bits(p);
        }
    }
    v
}

/// Missing values keep their bit patterns; every finite value is within the bound.
fn check_values<T: SzpFloat>(x: &[T], y: &[T], bound: f64) {
    assert_eq!(x.len(), y.len());
    for (i, (a, b)) in x.iter().zip(y).enumerate() {
        if a.is_missing() {
            assert_eq!(a.bits(), b.bits(), "missing value {i} changed");
        } else {
            assert!(!b.is_missing(), "finite value {i} decoded as missing");
            let e = (a.to_f64() - b.to_f64()).abs();
            assert!(e <= bound, "value {i}: error {e} above {bound}");
        }
    }
}

fn kernels() -> Vec<Kernel> {
    Kernel::ALL
        .into_iter()
        .filter(|k| k.is_available())
        .collect()
}

fn round_trip_everywhere<T: SzpFloat + fzpack::Element>(
    data: &[T],
    cfg: &Config,
    bound: f64,
) -> Vec<u8> {
    let want = encode_on(Kernel::Scalar, data, cfg).unwrap();
    assert_eq!(want[4], 3, "format version");
    assert_ne!(want[5] & FLAG_MISSING, 0, "missing flag");
    for k in kernels() {
        let got = encode_on(k, data, cfg).unwrap();
        assert!(
            got == want,
            "{}: archive differs from the scalar reference",
            k.name()
        );
        for v in [Verify::Checksums, Verify::Skip] {
            let y: Vec<T> = decode_on(k, &want, v).unwrap();
            check_values(data, &y, bound);
        }
    }
    // The facade (rayon on every thread, the best kernel) writes the same bytes.
    assert!(
        fzpack::szp::compress(data, cfg).unwrap() == want,
        "parallel bytes differ"
    );
    let y: Vec<T> = fzpack::szp::decompress(&want).unwrap();
    check_values(data, &y, bound);
    want
}

#[test]
fn missing_values_round_trip_exactly_on_every_kernel_and_layout() {
    let base = field_with_missing(50_000);
    for layout in [Layout::Heads, Layout::Fzgm] {
        for bs in [128u32, 64, 7] {
            let cfg = Config::abs(1e-3).with_block_size(bs).with_layout(layout);
            round_trip_everywhere(&as_f32(&base), &cfg, 1e-3);
            round_trip_everywhere(&as_f64(&base), &cfg, 1e-3);
        }
    }
    let h = szp::header(&encode_on(Kernel::Scalar, &as_f32(&base), &Config::abs(1e-3)).unwrap())
        .unwrap();
    let count = base.iter().filter(|v| !v.is_finite()).count() as u64;
    assert_eq!(
        h.missing_count,
        count + 2,
        "count (with the patterned NaNs)"
    );
}

#[test]
fn noa_uses_the_range_of_the_finite_values() {
    let data = as_f64(&field_with_missing(20_000));
    let finite: Vec<f64> = data.iter().copied().filter(|v| v.is_finite()).collect();
    let range = finite.iter().cloned().fold(f64::MIN, f64::max)
        - finite.iter().cloned().fold(f64::MAX, f64::min);
    let a = round_trip_everywhere(&data, &Config::noa(1e-4), 1e-4 * range);
    let h = szp::header(&a).unwrap();
    assert_eq!(h.value_base, range);
}

#[test]
fn all_missing_inputs_and_blocks_cost_almost_nothing() {
    let n = 1 << 16;
    let x = vec![f32::NAN; n];
    let a = round_trip_everywhere(&x, &Config::abs(1e-2), 1e-2);
    // 512 width bytes, one run, header, CRCs: far below a bit per value.
    assert!(a.len() < n / 64, "{} bytes for {n} NaNs", a.len());
    let x = vec![f64::NEG_INFINITY; 1000];
    round_trip_everywhere(&x, &Config::abs(1e-2), 1e-2);
}

/// A field with a land mask stores smaller than the same field with land set to 0 (no jumps at
/// the coast), on a grid from the shared data when present and on a synthetic one always.
#[test]
fn ratio_with_missing_values_beats_filling_them_with_zero() {
    let mut fields: Vec<(String, Vec<f32>)> = Vec::new();
    let synth: Vec<f32> = (0..400 * 500)
        .map(|i| {
            let (r, c) = ((i / 500) as f32, (i % 500) as f32);
            let v = 280.0 + 10.0 * (r * 0.02).sin() + 3.0 * (c * 0.05).cos();
            if ((r - 200.0).powi(2) + (c - 250.0).powi(2)) < 120.0f32.powi(2) {
                f32::NAN
            } else {
                v
            }
        })
        .collect();
    fields.push(("synthetic disc".into(), synth));
    let dir = fzpack_tests::vectors::workspace_root().join("../shared/data");
    let read = |name: &str| {
        std::fs::read(dir.join(name)).ok().map(|b| {
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect::<Vec<f32>>()
        })
    };
    // Levitus ocean temperature: 44.5 % NaN (land and below the sea floor) as published.
    match read("ferret_levitus_temp_20x180x360.f32") {
        Some(v) => fields.push(("levitus temperature".into(), v)),
        None => println!("skipped: ../shared/data absent, no Levitus field (synthetic only)"),
    }
    // ETOPO5 relief with the sea masked as missing (a land mask).
    if let Some(v) = read("ferret_etopo5_2161x4320.f32") {
        let masked = v
            .iter()
            .map(|&x| if x < 0.0 { f32::NAN } else { x })
            .collect();
        fields.push(("etopo5, sea masked".into(), masked));
    }
    for (name, x) in fields {
        let zeroed: Vec<f32> = x
            .iter()
            .map(|&v| if v.is_nan() { 0.0 } else { v })
            .collect();
        for eb in [1e-1, 1e-2] {
            let cfg = Config::abs(eb);
            let a = fzpack::szp::compress(&x, &cfg).unwrap();
            let b = fzpack::szp::compress(&zeroed, &cfg).unwrap();
            println!(
                "{name} eb {eb}: {} bytes with NaN, {} with 0",
                a.len(),
                b.len()
            );
            assert!(
                a.len() <= b.len(),
                "{name} eb {eb}: {} > {}",
                a.len(),
                b.len()
            );
            let y: Vec<f32> = fzpack::szp::decompress(&a).unwrap();
            check_values(&x, &y, eb);
        }
    }
}

#[test]
fn batches_of_every_size_patch_the_same_values() {
    let data = as_f32(&field_with_missing(70_000));
    let a = fzpack::szp::compress(&data, &Config::abs(1e-3)).unwrap();
    let whole: Vec<f32> = fzpack::szp::decompress(&a).unwrap();
    for verify in [Verify::Checksums, Verify::Skip] {
        let mut r = ArchiveReader::new(Kernel::best(), &a, verify).unwrap();
        let per = r.batch_blocks(1);
        let mut got = Vec::new();
        while !r.is_done() {
            let mut buf = vec![0f32; r.batch_len(per)];
            let n = r.batch(&szp::engine::Serial, per, &mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got.len(), whole.len());
        assert!(
            got.iter()
                .zip(&whole)
                .all(|(p, q)| p.to_bits() == q.to_bits())
        );
        // Detached and attached again between batches.
        let r = ArchiveReader::new(Kernel::best(), &a, verify).unwrap();
        let mut pos = r.detach();
        let mut got = Vec::new();
        while !pos.is_done() {
            let mut r = pos.attach(&a).unwrap();
            let mut buf = vec![0f32; r.batch_len(per)];
            let n = r.batch(&szp::engine::Serial, per, &mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
            pos = r.detach();
        }
        assert!(
            got.iter()
                .zip(&whole)
                .all(|(p, q)| p.to_bits() == q.to_bits())
        );
    }
}

#[test]
fn every_bit_flip_in_the_extension_is_detected() {
    let data = as_f32(&field_with_missing(4000));
    let cfg = Config::abs(1e-2).with_shape(Shape::new(&[40, 100]).unwrap());
    let a = encode_on(Kernel::Scalar, &data, &cfg).unwrap();
    let h = szp::header(&a).unwrap();
    assert_eq!(h.ext, FLAG_MISSING | FLAG_SHAPE);
    let ext = 1 + 16 + 8; // at least shape + footer
    for at in a.len() - ext - 20..a.len() {
        for bit in 0..8 {
            let mut b = a.clone();
            b[at] ^= 1 << bit;
            let r: Result<Vec<f32>, _> = decode_on(Kernel::best(), &b, Verify::Checksums);
            assert!(r.is_err(), "flip of bit {bit} of byte {at} not detected");
        }
    }
    // Truncated by the footer: an error, not a panic.
    for cut in 1..40 {
        let r: Result<Vec<f32>, _> = decode_on(Kernel::best(), &a[..a.len() - cut], Verify::Skip);
        assert!(r.is_err(), "cut {cut}");
    }
}

#[test]
fn shapes_round_trip_and_must_match_the_count() {
    let data: Vec<f64> = (0..6 * 7 * 8).map(|i| (i as f64).sqrt()).collect();
    let s = Shape::new(&[6, 7, 8]).unwrap();
    let a = fzpack::szp::compress(&data, &Config::abs(1e-3).with_shape(s)).unwrap();
    let h = szp::header(&a).unwrap();
    assert_eq!(
        (h.version, h.ext, szp::shape(&a).unwrap().dims()),
        (3, FLAG_SHAPE, &[6u64, 7, 8][..])
    );
    let y: Vec<f64> = fzpack::szp::decompress(&a).unwrap();
    check_values(&data, &y, 1e-3);
    let bad = Config::abs(1e-3).with_shape(Shape::new(&[6, 7, 9]).unwrap());
    assert!(matches!(
        fzpack::szp::compress(&data, &bad),
        Err(fzpack::Error::Szp(Error::InvalidShape))
    ));
    assert_eq!(Shape::new(&[1; 9]), Err(Error::InvalidShape));
    // Without shape or missing values the archive stays version 2, byte for byte the same.
    let plain = fzpack::szp::compress(&data, &Config::abs(1e-3)).unwrap();
    assert_eq!(plain[4], 2);
    assert_eq!(szp::shape(&plain).unwrap(), Shape::NONE);
    assert_eq!(&a[8..48], &plain[8..48]);
}

/// The streaming encoder writes what one-shot compression writes, missing values and shape
/// included, in both layouts and types; a buffer too small for the run records is an error
/// naming the length, never a wrong archive.
#[test]
fn streaming_equals_one_shot_with_missing_values_and_shapes() {
    fn stream<T: SzpFloat>(x: &[T], cfg: &Config, extra: usize) -> Result<Vec<u8>, Error> {
        let cap = StreamEncoder::<T>::max_len(x.len(), cfg)? + extra;
        let mut out = vec![0u8; cap];
        let mut enc = StreamEncoder::<T>::new(&mut out, x.len(), cfg)?;
        for b in x.chunks(cfg.block_size as usize) {
            enc.push_block(b)?;
        }
        let len = enc.finish()?;
        out.truncate(len);
        Ok(out)
    }
    let base = field_with_missing(9000);
    let (x32, x64) = (as_f32(&base), as_f64(&base));
    let shape = Shape::new(&[90, 100]).unwrap();
    for layout in [Layout::Heads, Layout::Fzgm] {
        for (bs, sh) in [(128u32, Shape::NONE), (64, shape), (7, shape)] {
            let cfg = Config::abs(1e-3)
                .with_max_abs(64.0)
                .with_block_size(bs)
                .with_layout(layout)
                .with_shape(sh);
            let extra = 30 * 9000;
            let s32 = stream(&x32, &cfg, extra).unwrap();
            assert!(
                s32 == encode_on(Kernel::Scalar, &x32, &cfg).unwrap(),
                "f32 bs {bs}"
            );
            let s64 = stream(&x64, &cfg, extra).unwrap();
            assert!(
                s64 == encode_on(Kernel::Scalar, &x64, &cfg).unwrap(),
                "f64 bs {bs}"
            );
            let y: Vec<f32> = fzpack::szp::decompress(&s32).unwrap();
            check_values(&x32, &y, 1e-3);
        }
    }
    // Without room for the records: an error that names a length, in push_block or finish.
    let cfg = Config::abs(1e-3).with_max_abs(64.0);
    let r = stream(&x32, &cfg, 0);
    let big = stream(&x32, &cfg, 30 * 9000).unwrap();
    match r {
        Ok(a) => assert!(a == big),
        Err(Error::OutputTooSmall { needed }) => assert!(needed > big.len() / 2, "{needed}"),
        Err(e) => panic!("{e}"),
    }
    // Shape only (no missing values): one-shot bytes too.
    let clean: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.01).sin()).collect();
    let cfg = cfg.with_shape(Shape::new(&[10, 100]).unwrap());
    assert!(stream(&clean, &cfg, 0).unwrap() == fzpack::szp::compress(&clean, &cfg).unwrap());
}

#[test]
fn fzm_refuses_missing_values_with_their_index() {
    let mut x: Vec<f32> = (0..500).map(|i| i as f32).collect();
    x[77] = f32::INFINITY;
    let mut out = vec![0u8; 1 << 16];
    assert_eq!(
        szp::fzm::write(&x, &Config::abs(0.5).stage_compatible(), &mut out),
        Err(Error::NonFinite { index: 77 })
    );
}

/// Operations on archives with missing values: a missing value in any input gives a missing
/// value in the result (±inf as IEEE arithmetic gives it; NaN with the first NaN input's
/// pattern, quieted, or the canonical quiet NaN for `inf − inf`); every other value is the
/// combination within the summed bound; `stats` leaves missing values out and counts them.
#[test]
fn operations_propagate_missing_values_and_stats_leave_them_out() {
    let n = 20_000;
    let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.01).sin() * 5.0).collect();
    let mut y: Vec<f32> = (0..n).map(|i| (i as f32 * 0.003).cos() * 3.0).collect();
    let mut x = x;
    for i in (100..400).chain(5000..5003) {
        x[i] = f32::NAN;
    }
    x[7000] = f32::INFINITY;
    x[7001] = f32::INFINITY;
    y[7001] = f32::NEG_INFINITY; // inf - inf (with c = +1, +1): NaN
    y[7002] = f32::from_bits(0x7f80_0abc); // signalling NaN with a payload
    y[300..600].fill(f32::NEG_INFINITY);
    let cfg = Config::abs(1e-3).with_shape(Shape::new(&[100, 200]).unwrap());
    let a = fzpack::szp::compress(&x, &cfg).unwrap();
    let b = fzpack::szp::compress(&y, &cfg).unwrap();
    for (coeffs, name) in [([1i64, 1], "a+b"), ([2, -1], "2a-b"), ([0, 1], "0a+b")] {
        let mut out = vec![0u8; a.len() + b.len() + 4096];
        let len = szp::ops::linear(&[&a, &b], &coeffs, &mut out).unwrap();
        let r_ref = {
            let mut o = vec![0u8; out.len()];
            let l = szp::ops::linear_reference(&[&a, &b], &coeffs, &mut o).unwrap();
            o.truncate(l);
            o
        };
        assert!(
            out[..len] == r_ref[..],
            "{name}: path differs from the reference"
        );
        let h = szp::header(&out[..len]).unwrap();
        assert_eq!(
            szp::shape(&out[..len]).unwrap().dims(),
            &[100, 200],
            "{name}: kept"
        );
        let z: Vec<f32> = fzpack::szp::decompress(&out[..len]).unwrap();
        for i in 0..n {
            let (p, q) = (x[i], y[i]);
            let want = coeffs[0] as f32 * p + coeffs[1] as f32 * q;
            if p.is_missing() || q.is_missing() {
                assert!(z[i].is_missing(), "{name} {i}: {} not missing", z[i]);
                if want.is_infinite() {
                    assert_eq!(z[i], want, "{name} {i}");
                } else {
                    assert!(z[i].is_nan(), "{name} {i}");
                }
            } else {
                assert!(
                    (f64::from(z[i]) - f64::from(want)).abs() <= h.bound() + 1e-6,
                    "{name} {i}"
                );
            }
        }
        if name == "a+b" {
            assert_eq!(
                z[7001].to_bits(),
                0x7fc0_0000,
                "inf - inf: the canonical quiet NaN"
            );
            assert_eq!(z[7002].to_bits(), 0x7fc0_0abc, "the NaN's payload, quieted");
            assert_eq!(z[150].to_bits(), f32::NAN.to_bits());
        }
    }
    // stats: the missing values are left out and counted.
    let st = szp::ops::stats(&a).unwrap();
    let finite: Vec<f64> = x
        .iter()
        .filter(|v| !v.is_missing())
        .map(|&v| f64::from(v))
        .collect();
    assert_eq!(st.missing, (n - finite.len()) as u64);
    let mean = finite.iter().sum::<f64>() / finite.len() as f64;
    assert!(
        (st.mean().unwrap() - mean).abs() <= 1e-3 + 1e-9,
        "{:?} vs {mean}",
        st.mean()
    );
    let (lo, hi) = st.min_max().unwrap();
    let flo = finite.iter().cloned().fold(f64::MAX, f64::min);
    let fhi = finite.iter().cloned().fold(f64::MIN, f64::max);
    assert!((lo - flo).abs() <= 1e-3 && (hi - fhi).abs() <= 1e-3);
    let all = szp::ops::stats(
        &fzpack::szp::compress(&vec![f32::NAN; 1000], &cfg.with_shape(Shape::NONE)).unwrap(),
    )
    .unwrap();
    assert_eq!((all.missing, all.mean(), all.min_max()), (1000, None, None));
    // Shapes must agree.
    let flat = fzpack::szp::compress(&x, &Config::abs(1e-3)).unwrap();
    let mut out = vec![0u8; a.len() * 4];
    let e = szp::ops::linear(&[&a, &flat], &[1, 1], &mut out).unwrap_err();
    assert_eq!(e, Error::OpsMismatch { what: "shape" });
}

/// The version 3 layout is frozen: these archives (missing values of several patterns, a
/// shape; both layouts and types) must never change (`FZPACK_BLESS=1` rewrites them,
/// deliberately, on a format change), and decode on every kernel.
#[test]
fn golden_v3_archives_are_stable() {
    let dir = fzpack_tests::vectors::workspace_root().join("tests/golden/szp");
    let base = field_with_missing(4000);
    let x32 = as_f32(&base);
    let x64 = as_f64(&base);
    let shape = Shape::new(&[40, 100]).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "missing_shape_f32_bs128.v3.szp",
            encode_on(Kernel::Scalar, &x32, &Config::abs(1e-2).with_shape(shape)).unwrap(),
        ),
        (
            "missing_f64_noa_bs64_fzgm.v3.szp",
            encode_on(
                Kernel::Scalar,
                &x64,
                &Config::noa(1e-4)
                    .with_block_size(64)
                    .with_layout(Layout::Fzgm),
            )
            .unwrap(),
        ),
        (
            "shape_f32.v3.szp",
            encode_on(
                Kernel::Scalar,
                &x32.iter()
                    .map(|v| if v.is_missing() { 0.0 } else { *v })
                    .collect::<Vec<_>>(),
                &Config::abs(1e-3).with_shape(Shape::new(&[2, 20, 100]).unwrap()),
            )
            .unwrap(),
        ),
    ];
    for (name, bytes) in cases {
        let want = fzpack_tests::golden::check_or_bless(&dir, name, &bytes);
        assert_eq!(want[4], 3, "{name}: format version");
        let h = szp::header(&want).unwrap();
        for k in kernels() {
            match h.dtype {
                DType::F32 => {
                    let y: Vec<f32> = decode_on(k, &want, Verify::Checksums).unwrap();
                    assert_eq!(y.len(), 4000);
                    if name.starts_with("missing") {
                        check_values(&x32, &y, h.bound());
                    }
                }
                DType::F64 => {
                    let y: Vec<f64> = decode_on(k, &want, Verify::Checksums).unwrap();
                    check_values(&x64, &y, h.bound());
                }
            }
        }
    }
}

/// An extension whose CRC matches but whose runs disagree with its count, or run past the
/// last value, is an error on every decoder and verify setting (the runs are checked as they
/// are patched), never wrong values.
#[test]
fn resealed_extensions_with_bad_runs_are_errors() {
    let data = as_f32(&field_with_missing(3000));
    let a = encode_on(Kernel::Scalar, &data, &Config::abs(1e-2)).unwrap();
    let foot = a.len() - 8;
    let l = u32::from_le_bytes(a[foot..foot + 4].try_into().unwrap()) as usize;
    let ext = foot - l;
    let reseal = |b: &mut Vec<u8>| {
        let sum = szp::fzm::crc32(&b[ext..foot]);
        b[foot + 4..foot + 8].copy_from_slice(&sum.to_le_bytes());
    };
    // The count (the first 8 bytes of the extension without a shape) off by one either way.
    for delta in [1i64, -1] {
        let mut b = a.clone();
        let c = u64::from_le_bytes(b[ext..ext + 8].try_into().unwrap());
        b[ext..ext + 8].copy_from_slice(&((c as i64 + delta) as u64).to_le_bytes());
        reseal(&mut b);
        for v in [Verify::Checksums, Verify::Skip] {
            let r: Result<Vec<f32>, _> = decode_on(Kernel::best(), &b, v);
            assert!(
                matches!(r, Err(Error::Corrupt(_))),
                "count {delta:+} {v:?}: {r:?}"
            );
        }
    }
    // The first run's gap pushed past the last value.
    let mut b = a.clone();
    b[ext + 8] = 0xff;
    b.insert(ext + 9, 0x7f);
    let foot = foot + 1;
    b[foot..foot + 4].copy_from_slice(&((l + 1) as u32).to_le_bytes());
    let sum = szp::fzm::crc32(&b[ext..foot]);
    b[foot + 4..foot + 8].copy_from_slice(&sum.to_le_bytes());
    for v in [Verify::Checksums, Verify::Skip] {
        let r: Result<Vec<f32>, _> = decode_on(Kernel::best(), &b, v);
        assert!(r.is_err(), "{v:?}: {r:?}");
    }
}
