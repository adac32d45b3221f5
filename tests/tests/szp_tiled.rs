//! The interpolation layout (`Layout::Interp`, layout code 2) end to end: the bound on every
//! finite value for f32 and f64, ABS and NOA, shapes of rank 1 to 5; missing values restored
//! bit for bit; the same bytes from the core's serial codec and the facade on any thread
//! count; the ratio against the block-head layout on smooth data; every structural rule of
//! the archive (truncation, trailing bytes, byte flips caught by the tile CRCs, forged
//! lengths) an error and never a panic; the paths that refuse the layout by name.

use fzpack::par::Parallel;
use fzpack::szp::{self as fz, Decoder, Encoder};
use fzpack_core::szp::tiled;
use fzpack_core::szp::{
    self, Config, Error, FLAG_MISSING, FLAG_SHAPE, LAYOUT_INTERP, Layout, Shape, SzpFloat, Verify,
};

/// A smooth 2-D field with some noise (and, with `holes`, NaN "land" and ±inf).
fn field(rows: usize, cols: usize, holes: bool) -> Vec<f64> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    (0..rows * cols)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let (r, c) = ((i / cols) as f64, (i % cols) as f64);
            let v = (r * 0.031).sin() * 40.0 + (c * 0.017).cos() * 25.0 + (s % 1000) as f64 * 1e-3;
            if holes && (i / cols) % 50 < 7 && i % cols < 90 {
                f64::NAN
            } else if holes && i % 4099 == 11 {
                f64::NEG_INFINITY
            } else {
                v
            }
        })
        .collect()
}

fn cfg_interp(cfg: Config, shape: &[u64]) -> Config {
    cfg.with_layout(Layout::Interp)
        .with_shape(Shape::new(shape).unwrap())
}

use fzpack_tests::golden::{tiled_compress as core_compress, tiled_decompress as core_decompress};

/// Every finite value within the header's bound, every missing value bit for bit.
fn check_bound<T: SzpFloat>(x: &[T], y: &[T], a: &[u8]) {
    let bound = szp::header(a).unwrap().bound();
    assert_eq!(x.len(), y.len());
    for (i, (&u, &v)) in x.iter().zip(y).enumerate() {
        if u.to_f64().is_finite() {
            let e = (u.to_f64() - v.to_f64()).abs();
            assert!(e <= bound, "value {i}: error {e} above the bound {bound}");
        } else {
            assert_eq!(u.bits(), v.bits(), "missing value {i} changed");
        }
    }
}

#[test]
fn round_trips_hold_the_bound_for_every_type_mode_and_rank() {
    let x = field(300, 280, true);
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let shapes: [&[u64]; 5] = [
        &[84000],
        &[300, 280],
        &[20, 15, 280],
        &[4, 5, 15, 280],
        &[2, 2, 5, 15, 280],
    ];
    for shape in shapes {
        for base in [Config::abs(1e-2), Config::noa(1e-4), Config::abs(0.5)] {
            let cfg = cfg_interp(base, shape);
            let a = core_compress(&x32, &cfg).unwrap();
            assert_eq!(a[6], LAYOUT_INTERP);
            assert_eq!(
                a[5] & (FLAG_SHAPE | FLAG_MISSING),
                FLAG_SHAPE | FLAG_MISSING
            );
            assert_eq!(szp::shape(&a).unwrap().dims(), shape);
            let y: Vec<f32> = core_decompress(&a, Verify::Checksums).unwrap();
            check_bound(&x32, &y, &a);
            let a = core_compress(&x, &cfg).unwrap();
            let y: Vec<f64> = core_decompress(&a, Verify::Checksums).unwrap();
            check_bound(&x, &y, &a);
        }
    }
}

#[test]
fn the_facade_writes_the_core_bytes_on_any_thread_count() {
    let x: Vec<f32> = field(700, 530, true).iter().map(|&v| v as f32).collect();
    let cfg = cfg_interp(Config::noa(1e-3), &[700, 530]);
    let reference = core_compress(&x, &cfg).unwrap();
    for threads in [1, 2, 3] {
        let par = Parallel::with_threads(threads)
            .unwrap()
            .min_chunk_bytes(4096);
        let a = Encoder::new(&cfg).threads(&par).to_vec(&x).unwrap();
        assert_eq!(a, reference, "{threads} threads");
        let y: Vec<f32> = Decoder::new().threads(&par).to_vec(&a).unwrap();
        let z: Vec<f32> = core_decompress(&a, Verify::Checksums).unwrap();
        assert!(y.iter().zip(&z).all(|(u, v)| u.to_bits() == v.to_bits()));
        check_bound(&x, &y, &a);
    }
    assert_eq!(Encoder::new(&cfg).serial().to_vec(&x).unwrap(), reference);
    let mut slice = vec![0u8; reference.len()];
    assert_eq!(
        Encoder::new(&cfg).into_slice(&x, &mut slice).unwrap(),
        reference.len()
    );
    assert_eq!(slice, reference);
    let mut short = vec![0u8; reference.len() - 1];
    assert!(matches!(
        Encoder::new(&cfg).into_slice(&x, &mut short),
        Err(fzpack::Error::Szp(Error::OutputTooSmall { .. }))
    ));
}

#[test]
fn a_flat_input_is_stored_as_one_dimension_and_empty_inputs_work() {
    let x: Vec<f64> = (0..100_000).map(|i| (i as f64 * 1e-3).sin()).collect();
    let cfg = Config::abs(1e-4).with_layout(Layout::Interp);
    let a = fz::compress(&x, &cfg).unwrap();
    assert_eq!(szp::shape(&a).unwrap().dims(), &[100_000]);
    assert_eq!(a[5] & FLAG_MISSING, 0, "no missing value, no runs");
    let y: Vec<f64> = fz::decompress(&a).unwrap();
    check_bound(&x, &y, &a);
    let e = fz::compress::<f32>(&[], &cfg).unwrap();
    assert!(fz::decompress::<f32>(&e).unwrap().is_empty());
    let one = fz::compress(&[2.5f32], &cfg).unwrap();
    check_bound(&[2.5f32], &fz::decompress::<f32>(&one).unwrap(), &one);
}

#[test]
fn smooth_fields_are_smaller_than_in_the_block_head_layout() {
    let x: Vec<f32> = field(512, 512, false).iter().map(|&v| v as f32).collect();
    for rel in [1e-2, 1e-3, 1e-4] {
        let heads = fz::compress(&x, &Config::noa(rel)).unwrap();
        let interp = fz::compress(&x, &cfg_interp(Config::noa(rel), &[512, 512])).unwrap();
        assert!(
            interp.len() < heads.len(),
            "rel {rel}: interp {} bytes, heads {}",
            interp.len(),
            heads.len()
        );
    }
}

#[test]
fn missing_values_cost_little_and_come_back_exactly() {
    let mut x: Vec<f32> = field(400, 400, false).iter().map(|&v| v as f32).collect();
    let cfg = cfg_interp(Config::abs(1e-2), &[400, 400]);
    let clean = fz::compress(&x, &cfg).unwrap().len();
    for (i, v) in x.iter_mut().enumerate() {
        if (i / 400) % 40 < 10 && i % 400 < 150 {
            *v = f32::NAN;
        }
    }
    x[7] = f32::INFINITY;
    x[20_000] = f32::from_bits(0x7fc0_1234); // NaNs with payloads, signalling, negative
    x[20_001] = f32::from_bits(0x7f80_0001);
    x[30_000] = f32::from_bits(0xffc0_0000);
    let a = fz::compress(&x, &cfg).unwrap();
    let y: Vec<f32> = fz::decompress(&a).unwrap();
    check_bound(&x, &y, &a);
    // 15 % of the values missing: the runs and stand-ins cost less than 5 % of the archive
    assert!(
        a.len() < clean + clean / 20 + 2000,
        "{} vs {clean}",
        a.len()
    );
}

#[test]
fn every_damage_is_an_error_never_a_panic() {
    let x: Vec<f32> = field(300, 300, true).iter().map(|&v| v as f32).collect();
    let a = fz::compress(&x, &cfg_interp(Config::abs(1e-2), &[300, 300])).unwrap();
    let sparse = (a.len() / 400).max(1);
    let dense = (0..400)
        .chain((400..a.len() - 200).step_by(sparse))
        .chain(a.len() - 200..a.len());
    for cut in dense.clone() {
        assert!(
            core_decompress::<f32>(&a[..cut], Verify::Checksums).is_err(),
            "cut at {cut}"
        );
        assert!(fz::decompress::<f32>(&a[..cut]).is_err(), "cut at {cut}");
    }
    let mut long = a.clone();
    long.push(0);
    assert!(fz::decompress::<f32>(&long).is_err());
    // every byte flip is caught by a CRC (header, table entry's tile, extension)
    for i in dense {
        let mut b = a.clone();
        b[i] ^= 0x20;
        assert!(fz::decompress::<f32>(&b).is_err(), "flip at {i} passed");
        // without the CRCs: values or an error, never a panic
        let _ = core_decompress::<f32>(&b, Verify::Skip);
    }
    assert!(matches!(
        fz::decompress::<f64>(&a),
        Err(fzpack::Error::DTypeMismatch { .. })
    ));
}

#[test]
fn a_flipped_tile_byte_names_its_tile() {
    let x: Vec<f32> = field(600, 600, false).iter().map(|&v| v as f32).collect();
    let a = fz::compress(&x, &cfg_interp(Config::abs(1e-3), &[600, 600])).unwrap();
    let view = tiled::parse(&a, Verify::Checksums).unwrap();
    assert_eq!(view.tiles(), 9);
    let mut b = a.clone();
    let last = a.len() - 8 - 1 - 8 * 2 - 20; // inside the last tile, before the extension
    b[last] ^= 1;
    assert_eq!(
        core_decompress::<f32>(&b, Verify::Checksums),
        Err(Error::ChecksumMismatch {
            what: "tile",
            chunk: 8
        })
    );
}

#[test]
fn the_block_paths_refuse_the_layout_by_name() {
    let x = [1.0f32, 2.0, 3.0];
    let cfg = Config::abs(1e-3).with_layout(Layout::Interp);
    let mut out = [0u8; 4096];
    assert_eq!(szp::compress(&x, &cfg, &mut out), Err(Error::NeedsScratch));
    assert_eq!(
        szp::StreamEncoder::<f32>::new(&mut out, 3, &cfg.with_max_abs(10.0)).err(),
        Some(Error::NeedsScratch)
    );
    let a = fz::compress(&x, &cfg).unwrap();
    let mut back = [0f32; 3];
    assert_eq!(szp::decompress(&a, &mut back), Err(Error::NeedsScratch));
    assert!(Error::NeedsScratch.to_string().contains("szp::tiled"));
}

#[test]
fn compressed_domain_operations_refuse_the_layout_by_name() {
    let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
    let a = fz::compress(&x, &Config::abs(1e-2).with_layout(Layout::Interp)).unwrap();
    let b = fz::compress(&x, &Config::abs(1e-2)).unwrap();
    let mut out = vec![0u8; 1 << 16];
    for r in [
        szp::ops::add(&a, &a, &mut out).map(|_| ()),
        szp::ops::add(&b, &a, &mut out).map(|_| ()),
        szp::ops::stats(&a).map(|_| ()),
    ] {
        match r {
            Err(Error::OpsUnsupported { what }) => assert!(what.contains("interpolation")),
            other => panic!("expected OpsUnsupported, got {other:?}"),
        }
    }
}

/// The layout's bytes are frozen: archives written now (f32 2-D with missing values at an
/// ABS bound, f64 3-D at a NOA bound, f32 1-D across two tiles) are reproduced byte for byte
/// by the core's serial codec and by the facade on two threads, and decode within their
/// bounds. `FZPACK_BLESS=1` rewrites them (a format change: bump the version instead).
#[test]
fn golden_interp_archives_are_stable() {
    let dir = fzpack_tests::vectors::workspace_root().join("tests/golden/szp");
    let f = field(120, 150, true);
    let x32: Vec<f32> = f.iter().map(|&v| v as f32).collect();
    let x64: Vec<f64> = field(30, 600, false);
    let long: Vec<f32> = (0..70_000)
        .map(|i| ((i as f32) * 0.002).sin() * 9.0 + ((i * 7919) % 13) as f32 * 1e-3)
        .collect();
    let par = Parallel::with_threads(2).unwrap().min_chunk_bytes(4096);
    let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
        {
            let cfg = cfg_interp(Config::abs(1e-2), &[120, 150]);
            let a = core_compress(&x32, &cfg).unwrap();
            (
                "interp_missing_f32_2d.v3.szp",
                a,
                Encoder::new(&cfg).threads(&par).to_vec(&x32).unwrap(),
            )
        },
        {
            let cfg = cfg_interp(Config::noa(1e-4), &[30, 20, 30]);
            let a = core_compress(&x64, &cfg).unwrap();
            (
                "interp_noa_f64_3d.v3.szp",
                a,
                Encoder::new(&cfg).threads(&par).to_vec(&x64).unwrap(),
            )
        },
        {
            let cfg = Config::abs(1e-3).with_layout(Layout::Interp);
            let a = core_compress(&long, &cfg).unwrap();
            (
                "interp_f32_1d.v3.szp",
                a,
                Encoder::new(&cfg).threads(&par).to_vec(&long).unwrap(),
            )
        },
    ];
    for (name, bytes, facade) in cases {
        assert!(
            bytes == facade,
            "{name}: the facade's bytes differ from the core's"
        );
        let want = fzpack_tests::golden::check_or_bless(&dir, name, &bytes);
        assert_eq!(
            (want[4], want[6]),
            (3, LAYOUT_INTERP),
            "{name}: version, layout"
        );
        match szp::header(&want).unwrap().dtype {
            szp::DType::F32 => {
                let y: Vec<f32> = fz::decompress(&want).unwrap();
                let x = if name.contains("1d") { &long } else { &x32 };
                check_bound(x, &y, &want);
            }
            szp::DType::F64 => {
                let y: Vec<f64> = fz::decompress(&want).unwrap();
                check_bound(&x64, &y, &want);
            }
        }
    }
}
