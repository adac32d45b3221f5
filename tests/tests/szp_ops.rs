//! `fzpack_core::szp::ops`: compressed-domain add/sub/negate/scale/sum and statistics against
//! the scalar reference (bytes) and the float reference (decompress, operate, compare within
//! the recorded bound; strict inputs also against the original data), on generated and real
//! fields (`../shared/data` when present), every block-size class, mismatched grids, overflow
//! edges, and hostile archives into every operation (errors, never panics).

use fzpack_core::szp::{self, Config, DType, Error, Layout, SzpFloat, ops};
use fzpack_tests::ops_checks::{
    check_against_floats, decode_f64, encode, linear_checked, reseal, szp_ops,
};
use proptest::prelude::*;

/// Block sizes: 1, small odd, powers of two around the default, the one-pass chunk limit and
/// above (two-pass), and the maximum.
const SIZES: [u32; 9] = [1, 7, 32, 128, 129, 512, 513, 1000, 4096];

fn field(n: usize, seed: u64, scale: f64) -> Vec<f64> {
    let mut s = seed | 1;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let noise = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            let t = i as f64 * 0.003;
            scale * ((t + seed as f64).sin() + 0.3 * (5.0 * t).cos()) + 0.05 * scale * noise
        })
        .collect()
}

fn to<T: SzpFloat>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_f64(x)).collect()
}

fn back<T: SzpFloat>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64()).collect()
}

/// Every operation on `a`, `b` (same length) compressed on one grid (the stage layout).
fn check_all<T: SzpFloat>(a: &[T], b: &[T], eb: f64, bs: u32) {
    check_all_in::<T>(a, b, eb, bs, Layout::Fzgm);
}

/// [`check_all`] in block layout `layout`: results keep the inputs' layout.
fn check_all_in<T: SzpFloat>(a: &[T], b: &[T], eb: f64, bs: u32, layout: Layout) {
    let mag = a
        .iter()
        .chain(b)
        .map(|x| x.to_f64().abs())
        .fold(0.0, f64::max);
    let cfg = Config::abs(eb)
        .with_block_size(bs)
        .with_max_abs(mag)
        .with_layout(layout);
    let za = encode(a, &cfg).unwrap();
    let zb = encode(b, &cfg).unwrap();
    let (oa, ob) = (back(a), back(b));
    type Case<'a> = (Vec<&'a [u8]>, Vec<i64>, Vec<Vec<f64>>);
    let cases: [Case<'_>; 6] = [
        (vec![&za, &zb], vec![1, 1], vec![oa.clone(), ob.clone()]),
        (vec![&za, &zb], vec![1, -1], vec![oa.clone(), ob.clone()]),
        (vec![&za], vec![-1], vec![oa.clone()]),
        (vec![&za], vec![3], vec![oa.clone()]),
        (vec![&za], vec![0], vec![oa.clone()]),
        (
            vec![&za, &zb, &za, &zb],
            vec![1, 1, 1, 1],
            vec![oa.clone(), ob.clone(), oa.clone(), ob.clone()],
        ),
    ];
    for (ars, cs, orig) in &cases {
        let r = linear_checked(ars, cs).unwrap_or_else(|e| panic!("bs {bs} {cs:?}: {e}"));
        assert_eq!(szp::header(&r).unwrap().layout, layout.code());
        check_against_floats(ars, cs, &r, Some(orig));
    }
    // The named entry points are the linear forms above, byte for byte.
    let cap = ops::max_output_len(a.len(), bs).unwrap();
    let mut o1 = vec![0u8; cap];
    let l = ops::add(&za, &zb, &mut o1).unwrap();
    assert!(o1[..l] == linear_checked(&[&za, &zb], &[1, 1]).unwrap()[..]);
    let l = ops::sub(&za, &zb, &mut o1).unwrap();
    assert!(o1[..l] == linear_checked(&[&za, &zb], &[1, -1]).unwrap()[..]);
    let l = ops::negate(&za, &mut o1).unwrap();
    assert!(o1[..l] == linear_checked(&[&za], &[-1]).unwrap()[..]);
    let l = ops::scale_int(&za, -5, &mut o1).unwrap();
    assert!(o1[..l] == linear_checked(&[&za], &[-5]).unwrap()[..]);
    let l = ops::sum(&[&za, &zb, &zb], &mut o1).unwrap();
    assert!(o1[..l] == linear_checked(&[&za, &zb, &zb], &[1, 1, 1]).unwrap()[..]);
    // a - a is exactly zero, width 0 everywhere (block-head layout: only the trailers' zero
    // width bytes).
    let l = ops::sub(&za, &za, &mut o1).unwrap();
    let v = szp::blocks::parse(&o1[..l]).unwrap();
    assert!(v.widths.iter().all(|&w| w == 0));
    let groups = match layout {
        Layout::Fzgm => 0,
        Layout::Heads => v.widths.len().div_ceil(v.header.head_group()),
        Layout::Interp => unreachable!("ops refuse the interpolation layout"),
    };
    assert_eq!(v.payload.len(), groups);
    assert!(v.payload.iter().all(|&b| b == 0));
    check_stats(&za);
    // Results are inputs again (stats and ops of a result).
    let r = linear_checked(&[&za, &zb], &[2, -1]).unwrap();
    check_stats(&r);
    let rr = linear_checked(&[&r, &za], &[1, -1]).unwrap();
    check_against_floats(&[&r, &za], &[1, -1], &rr, None);
}

fn check_stats(archive: &[u8]) {
    let s = ops::stats(archive).unwrap();
    let d = decode_f64(archive).unwrap();
    assert_eq!(s.n, d.len());
    let exact: f64 = d.iter().sum();
    let tol = d.iter().map(|x| x.abs()).sum::<f64>() * 1e-6 + 1e-300;
    assert!(
        (s.sum() - exact).abs() <= tol,
        "level sum {} vs decoded sum {exact}",
        s.sum()
    );
    assert_eq!(ops::value_sum(archive).unwrap(), s.sum());
    assert_eq!(ops::mean(archive).unwrap(), s.mean());
    assert_eq!(ops::min_max_levels(archive).unwrap(), s.min_max_levels);
    if let Some((lo, hi)) = s.min_max() {
        let dlo = d.iter().copied().fold(f64::INFINITY, f64::min);
        let dhi = d.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!((lo, hi), (dlo, dhi));
    } else {
        assert!(d.is_empty());
    }
}

#[test]
fn every_block_size_f32_and_f64() {
    for &bs in &SIZES {
        for n in [0usize, 1, bs as usize, 3 * bs as usize + 5, 9000] {
            let a = field(n, 3, 40.0);
            let b = field(n, 11, 25.0);
            check_all::<f32>(&to(&a), &to(&b), 1e-3, bs);
            check_all::<f64>(&a, &b, 1e-6, bs);
        }
    }
}

#[test]
fn block_head_layout_every_block_size() {
    for &bs in &[1u32, 7, 32, 37, 128, 129, 512, 1024, 2048, 4096] {
        for n in [0usize, 1, bs as usize, 3 * bs as usize + 5, 9000] {
            let a = field(n, 3, 40.0);
            let b = field(n, 11, 25.0);
            check_all_in::<f32>(&to(&a), &to(&b), 1e-3, bs, Layout::Heads);
            check_all_in::<f64>(&a, &b, 1e-6, bs, Layout::Heads);
        }
    }
    // Far from zero (large heads, small deltas), and noise at a tiny bound (wide blocks).
    let a: Vec<f64> = field(7000, 2, 1.0).iter().map(|x| x + 3e3).collect();
    let b: Vec<f64> = field(7000, 9, 1.0).iter().map(|x| x - 2e3).collect();
    for &bs in &[32u32, 128, 4096] {
        check_all_in::<f32>(&to(&a), &to(&b), 1e-2, bs, Layout::Heads);
        check_all_in::<f64>(&a, &b, 1e-9, bs, Layout::Heads);
        let (wa, wb) = (field(6000, 5, 1e6), field(6000, 7, 1e6));
        check_all_in::<f64>(&wa, &wb, 1e-6, bs, Layout::Heads);
    }
}

#[test]
fn block_head_layout_overflow_and_mismatch() {
    let eb = 1.0;
    let big = 2f64.powi(62) * 2.0 * 0.6;
    // Block 2's head (index 256) is the big level: the result head overflows there.
    let a: Vec<f64> = (0..700)
        .map(|i| if i == 256 { big } else { i as f64 })
        .collect();
    let cfg = Config::abs(eb)
        .with_max_abs(big)
        .stage_compatible()
        .with_layout(Layout::Heads);
    let za = encode(&a, &cfg).unwrap();
    assert_eq!(
        linear_checked(&[&za, &za], &[1, 1]),
        Err(Error::LevelOverflow { index: 256 })
    );
    // Inside a block.
    let a2: Vec<f64> = (0..700)
        .map(|i| if i == 300 { big } else { i as f64 })
        .collect();
    let za2 = encode(&a2, &cfg).unwrap();
    assert_eq!(
        linear_checked(&[&za2, &za2], &[1, 1]),
        Err(Error::LevelOverflow { index: 300 })
    );
    assert_eq!(
        linear_checked(&[&za2], &[i64::MAX]),
        Err(Error::LevelOverflow { index: 1 })
    );
    let r = linear_checked(&[&za2, &za2], &[1, -1]).unwrap();
    assert_eq!(ops::stats(&r).unwrap().min_max_levels, Some((0, 0)));
    let r = linear_checked(&[&za], &[-1]).unwrap();
    check_against_floats(&[&za], &[-1], &r, None);
    // A layout 0 and a layout 1 archive of the same grid do not combine.
    let f = field(1000, 1, 10.0);
    let c0 = Config::abs(1e-3).with_max_abs(20.0);
    let z0 = encode(&to::<f32>(&f), &c0.with_layout(Layout::Fzgm)).unwrap();
    let z1 = encode(&to::<f32>(&f), &c0.with_layout(Layout::Heads)).unwrap();
    let mut out = vec![0u8; 20000];
    for r in [
        ops::add(&z0, &z1, &mut out),
        ops::sub(&z1, &z0, &mut out),
        ops::sum(&[&z1, &z1, &z0], &mut out),
    ] {
        assert!(
            matches!(r, Err(Error::OpsMismatch { what }) if what.starts_with("block layout")),
            "{r:?}"
        );
    }
    // Too-small outputs report the exact need in this layout too.
    let r = linear_checked(&[&z1, &z1], &[1, 1]).unwrap();
    for cap in [0usize, 60, r.len() / 2, r.len() - 2, r.len() - 1] {
        let mut out = vec![0u8; cap];
        assert_eq!(
            ops::add(&z1, &z1, &mut out),
            Err(Error::OutputTooSmall { needed: r.len() })
        );
    }
}

#[test]
fn wide_blocks_and_large_levels() {
    // Noise at a tiny bound: widths in the 30s..50s, both one-pass and two-pass blocks.
    for &bs in &[64u32, 4096] {
        let a = field(6000, 5, 1e6);
        let b = field(6000, 7, 1e6);
        check_all::<f64>(&a, &b, 1e-6, bs);
    }
}

#[test]
fn real_fields_when_present() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("skipped: ../shared/data absent (generated fields cover the rest)");
        return;
    };
    let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    let mut done = 0;
    for p in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "f32"))
        .take(4)
    {
        let bytes = std::fs::read(p).unwrap();
        let v: Vec<f32> = bytes
            .chunks_exact(4)
            .take(1 << 18)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .filter(|x| x.is_finite())
            .collect();
        let h = v.len() / 2;
        let (a, b) = (&v[..h], &v[h..2 * h]);
        let mag = v.iter().map(|x| f64::from(x.abs())).fold(0.0, f64::max);
        let range = v.iter().fold(f32::MIN, |m, &x| m.max(x)) as f64
            - v.iter().fold(f32::MAX, |m, &x| m.min(x)) as f64;
        let eb = (range * 1e-4).max(mag * 1e-6).max(1e-30);
        check_all::<f32>(a, b, eb, 128);
        done += 1;
    }
    for p in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "f64"))
        .take(1)
    {
        let bytes = std::fs::read(p).unwrap();
        let v: Vec<f64> = bytes
            .chunks_exact(8)
            .take(1 << 17)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .filter(|x| x.is_finite())
            .collect();
        let h = v.len() / 2;
        let mag = v.iter().map(|x| x.abs()).fold(0.0, f64::max);
        check_all::<f64>(&v[..h], &v[h..2 * h], (mag * 1e-7).max(1e-300), 256);
        done += 1;
    }
    assert!(done > 0, "no .f32/.f64 field in {}", dir.display());
}

#[test]
fn mismatches_name_the_field() {
    let a = field(1000, 1, 10.0);
    let cfg = Config::abs(1e-3).with_max_abs(20.0);
    let za = encode(&to::<f32>(&a), &cfg).unwrap();
    let z64 = encode(&a, &cfg).unwrap();
    let short = encode(&to::<f32>(&a[..999]), &cfg).unwrap();
    let bs = encode(&to::<f32>(&a), &cfg.with_block_size(64)).unwrap();
    let grid = encode(&to::<f32>(&a), &cfg.with_max_abs(30.0)).unwrap();
    // Data-dependent tightening: the same ABS bound without max_abs is another grid.
    let strict_data = encode(&to::<f32>(&a), &Config::abs(1e-3)).unwrap();
    let mut out = vec![0u8; 20000];
    let what = |r: Result<usize, Error>| match r {
        Err(Error::OpsMismatch { what }) => what,
        other => panic!("expected a mismatch, got {other:?}"),
    };
    assert_eq!(what(ops::add(&za, &z64, &mut out)), "dtype");
    assert_eq!(what(ops::add(&za, &short, &mut out)), "length");
    assert_eq!(what(ops::sub(&za, &bs, &mut out)), "block size");
    assert_eq!(what(ops::add(&za, &grid, &mut out)), "quantizer bound");
    assert_eq!(
        what(ops::sum(&[&za, &za, &strict_data], &mut out)),
        "quantizer bound"
    );
    assert_eq!(what(ops::sum(&[], &mut out)), "archive count (none given)");
    let many: Vec<&[u8]> = vec![&za; ops::MAX_TERMS + 1];
    assert_eq!(
        what(ops::sum(&many, &mut out)),
        "archive count (at most 64 per call)"
    );
    assert_eq!(
        what(ops::linear(&[&za], &[1, 2], &mut out)),
        "coefficient count"
    );
    let msg = Error::OpsMismatch { what: "block size" }.to_string();
    assert!(msg.contains("block size"), "{msg}");
    // 64 terms are fine.
    let many: Vec<&[u8]> = vec![&za; ops::MAX_TERMS];
    let r = linear_checked(&many, &[1; ops::MAX_TERMS]).unwrap();
    check_against_floats(&many, &[1; ops::MAX_TERMS], &r, None);
}

#[test]
fn noa_archives_add_when_their_grids_match() {
    let a = field(2000, 2, 10.0);
    let za = encode(&a, &Config::noa(1e-4)).unwrap();
    let r = linear_checked(&[&za, &za], &[1, 1]).unwrap();
    let h = szp::header(&r).unwrap();
    assert_eq!(h.mode, szp::Mode::Abs);
    assert_eq!(h.bound(), 2.0 * szp::header(&za).unwrap().bound());
    check_against_floats(&[&za, &za], &[1, 1], &r, Some(&[a.clone(), a.clone()]));
}

#[test]
fn overflow_is_an_error_never_a_wrap() {
    // A level of 0.6 * 2^62: doubling passes 2^62.
    let eb = 1.0;
    let big = 2f64.powi(62) * 2.0 * 0.6;
    let a: Vec<f64> = (0..300)
        .map(|i| if i == 137 { big } else { i as f64 })
        .collect();
    let cfg = Config::abs(eb).with_max_abs(big).stage_compatible();
    let za = encode(&a, &cfg).unwrap();
    assert_eq!(
        linear_checked(&[&za, &za], &[1, 1]),
        Err(Error::LevelOverflow { index: 137 })
    );
    assert_eq!(
        linear_checked(&[&za], &[i64::MAX]),
        Err(Error::LevelOverflow { index: 1 })
    );
    assert_eq!(
        linear_checked(&[&za], &[i64::MIN]),
        Err(Error::LevelOverflow { index: 1 })
    );
    assert!(linear_checked(&[&za], &[-1]).is_ok());
    assert!(linear_checked(&[&za, &za], &[1, -1]).is_ok());
    // f32: the sum's reconstruction leaves the f32 range.
    let m = f32::MAX as f64 * 0.75;
    let x: Vec<f32> = (0..50)
        .map(|i| if i == 20 { m as f32 } else { i as f32 })
        .collect();
    let cfg = Config::abs(1e32).with_max_abs(m);
    let zx = encode(&x, &cfg).unwrap();
    assert_eq!(
        linear_checked(&[&zx, &zx], &[1, 1]),
        Err(Error::ResultOverflow { index: 20 })
    );
    assert!(linear_checked(&[&zx, &zx], &[1, -1]).is_ok());
    // Scaling a tiny-level archive by a huge k: exact path, fine up to the limit.
    let one = encode(&[2.0f64; 10], &Config::abs(0.5).stage_compatible()).unwrap(); // q = 2
    let r = linear_checked(&[&one], &[(1i64 << 61) - 1]).unwrap();
    let s = ops::stats(&r).unwrap();
    assert_eq!(
        s.min_max_levels,
        Some((((1i64 << 61) - 1) * 2, ((1i64 << 61) - 1) * 2))
    );
    assert_eq!(
        linear_checked(&[&one], &[1i64 << 61]),
        Err(Error::LevelOverflow { index: 0 })
    );
}

#[test]
fn output_too_small_reports_the_exact_need() {
    let a = to::<f32>(&field(5000, 4, 3.0));
    let za = encode(&a, &Config::abs(1e-3).with_max_abs(10.0)).unwrap();
    let r = linear_checked(&[&za, &za], &[1, 1]).unwrap();
    for cap in [0usize, 10, 48, 60, r.len() / 2, r.len() - 1] {
        let mut out = vec![0u8; cap];
        assert_eq!(
            ops::add(&za, &za, &mut out),
            Err(Error::OutputTooSmall { needed: r.len() })
        );
    }
}

/// Valid archives of several shapes, then every single-byte corruption class into every op.
#[test]
fn hostile_archives_never_panic() {
    let base = to::<f32>(&field(700, 9, 5.0));
    let cfg = Config::abs(1e-2).with_max_abs(10.0).with_block_size(64);
    let za = encode(&base, &cfg).unwrap();
    let mut s = 0x1234_5678_9ABC_DEF1u64;
    // Both layouts (the block-head one: trailers, heads) as the corrupted input.
    let zh = encode(&base, &cfg.with_layout(Layout::Heads)).unwrap();
    for trial in 0..4000 {
        let za = if trial % 8 < 4 { &za } else { &zh };
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let mut bad = za.to_vec();
        match trial % 4 {
            0 => {
                let at = (s as usize) % bad.len();
                bad[at] ^= (s >> 32) as u8 | 1;
            }
            1 => bad.truncate((s as usize) % bad.len()),
            2 => {
                // Width bytes up to 64 with the payload left as is (length errors) or huge n.
                let at = szp::HEADER_LEN + (s as usize) % 11;
                bad[at] = (s >> 40) as u8 % 70;
            }
            _ => {
                bad[16..24].copy_from_slice(&((s >> 8) % 5000).to_le_bytes());
            }
        }
        // As corrupted (mostly checksum errors) and re-sealed (the code behind the CRCs).
        let mut sealed = bad.clone();
        let resealed = reseal(&mut sealed);
        for bad in [bad, sealed] {
            let _ = linear_checked(&[&bad, za], &[1, 1]);
            let _ = linear_checked(&[za, &bad], &[1, -1]);
            let _ = linear_checked(&[&bad], &[-1]);
            let _ = linear_checked(&[&bad], &[(s >> 3) as i64]);
            let _ = linear_checked(&[&bad, &bad, &bad], &[1, 1, 1]);
            let _ = ops::stats(&bad);
        }
        let _ = resealed;
    }
    // A corrupted input is a checksum error, never a result.
    let mut bad = za.clone();
    let at = bad.len() - 10;
    bad[at] ^= 0x10;
    assert!(matches!(
        ops::add(&bad, &za, &mut vec![0u8; 1 << 16]),
        Err(Error::ChecksumMismatch { .. })
    ));
    // Hand-made archives with width-64 blocks of arbitrary bits: levels wrap in the input's
    // decode (as the decoder computes them) and the op must still be an error or a valid result.
    let mut h = encode(
        &[0f64; 40],
        &Config::abs(1.0).with_block_size(8).stage_compatible(),
    )
    .unwrap();
    let nb = 5;
    for w in &mut h[szp::HEADER_LEN..szp::HEADER_LEN + nb] {
        *w = 64;
    }
    h.truncate(szp::HEADER_LEN + nb);
    h.extend((0..40 * 8).map(|i| (i as u8).wrapping_mul(167) ^ 0xF0));
    assert!(reseal(&mut h));
    szp::blocks::parse(&h).unwrap();
    for c in [1i64, -1, 2, i64::MIN] {
        let _ = linear_checked(&[&h], &[c]);
        let _ = linear_checked(&[&h, &h], &[c, 1]);
    }
    let _ = ops::stats(&h).unwrap();
    // The same in the block-head layout, with arbitrary 64-bit heads in the trailer.
    let mut h = encode(
        &[0f64; 40],
        &Config::abs(1.0)
            .with_block_size(8)
            .stage_compatible()
            .with_layout(Layout::Heads),
    )
    .unwrap();
    for w in &mut h[szp::HEADER_LEN..szp::HEADER_LEN + nb] {
        *w = 64;
    }
    h.truncate(szp::HEADER_LEN + nb);
    h.extend((0..40 * 8).map(|i| (i as u8).wrapping_mul(167) ^ 0xF0));
    h.push(64);
    h.extend((0..nb * 8).map(|i| (i as u8).wrapping_mul(73) ^ 0x3C));
    assert!(reseal(&mut h));
    szp::blocks::parse(&h).unwrap();
    for c in [1i64, -1, 2, i64::MIN] {
        let _ = linear_checked(&[&h], &[c]);
        let _ = linear_checked(&[&h, &h], &[c, 1]);
    }
    let _ = ops::stats(&h).unwrap();
}

#[test]
fn fuzz_entry_on_fixed_inputs() {
    // The fuzz target's check on a few deterministic byte strings.
    for seed in 0..40u64 {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let len = 4 + (seed as usize * 97) % 3000;
        let mut bytes: Vec<u8> = (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s as u8
            })
            .collect();
        if seed % 3 == 0 {
            // Smooth f32 values so that widths stay small.
            for (i, c) in bytes[4..].chunks_exact_mut(4).enumerate() {
                c.copy_from_slice(&((i as f32 * 0.01).sin() * 100.0).to_le_bytes());
            }
        }
        // Every operation (the entry runs the one that bits 3.. of the first byte choose).
        for op in 0..5u8 {
            bytes[0] = (bytes[0] & 7) | (op << 3);
            szp_ops(&bytes);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_fields_match_the_float_reference(
        a in proptest::collection::vec(-1e4f64..1e4, 0..3000),
        seed in any::<u64>(),
        bs_i in 0usize..SIZES.len(),
        eb_exp in -6i32..0,
        f32_ in any::<bool>(),
        heads in any::<bool>(),
    ) {
        let b = field(a.len(), seed, 1e3);
        let eb = 10f64.powi(eb_exp);
        let layout = if heads { Layout::Heads } else { Layout::Fzgm };
        if f32_ {
            check_all_in::<f32>(&to(&a), &to(&b), eb.max(1e-2), SIZES[bs_i], layout);
        } else {
            check_all_in::<f64>(&a, &b, eb, SIZES[bs_i], layout);
        }
    }
}

#[test]
fn dtype_is_recorded() {
    let z = encode(&[1f32, 2.0, 3.0], &Config::abs(0.1).with_max_abs(4.0)).unwrap();
    let r = linear_checked(&[&z, &z], &[1, 1]).unwrap();
    assert_eq!(szp::header(&r).unwrap().dtype, DType::F32);
    let mut out = [0f32; 3];
    szp::decompress(&r, &mut out).unwrap();
    assert!(
        out.iter()
            .zip([2f32, 4.0, 6.0])
            .all(|(x, y)| (x - y).abs() <= 0.2)
    );
}

/// Two different fields compressed with the same ABS bound, dtype and block size and
/// no declared `max_abs` — what `fzpack compress --eb E --mode abs` does, through the facade's
/// parallel and serial encoders — land on one grid and add; data above `2^18 · bound` (f32)
/// falls back to the next power of two of its `max|x|`: same power adds, another power is a
/// "quantizer bound" mismatch.
#[test]
fn same_abs_bound_archives_are_addable() {
    for bs in [1u32, 32, 128, 1000, 4096] {
        let a = to::<f32>(&field(60_000, 3, 40.0));
        let b = to::<f32>(&field(60_000, 8, 0.7)); // another magnitude entirely
        let cfg = Config::abs(1e-3).with_block_size(bs);
        let za = fzpack::szp::compress(&a, &cfg).unwrap();
        let zb = fzpack::szp::Encoder::new(&cfg).serial().to_vec(&b).unwrap();
        let (ha, hb) = (szp::header(&za).unwrap(), szp::header(&zb).unwrap());
        assert_eq!(
            ha.quant_eb.to_bits(),
            hb.quant_eb.to_bits(),
            "bs {bs}: one grid"
        );
        let zc = fzpack::ops::add(&za, &zb).unwrap();
        assert_eq!(szp::header(&zc).unwrap().bound(), 2e-3);
        let c: Vec<f32> = fzpack::szp::decompress(&zc).unwrap();
        for i in 0..a.len() {
            let e = (f64::from(a[i]) + f64::from(b[i]) - f64::from(c[i])).abs();
            assert!(e <= 2e-3, "bs {bs} [{i}]: error {e}");
        }
    }
    let a64 = field(5000, 5, 3.0);
    let b64 = field(5000, 6, 300.0); // max|x| below 2^40·1e-9 ≈ 1100
    let cfg = Config::abs(1e-9);
    let za = fzpack::szp::compress(&a64, &cfg).unwrap();
    let zb = fzpack::szp::compress(&b64, &cfg).unwrap();
    let c: Vec<f64> = fzpack::szp::decompress(&fzpack::ops::add(&za, &zb).unwrap()).unwrap();
    assert!((0..a64.len()).all(|i| (a64[i] + b64[i] - c[i]).abs() <= 2e-9));
    // Above 2^18·bound (262.1 at 1e-3): powers of two of max|x|.
    let grid = |scale: f64, seed: u64| {
        let x = to::<f32>(&field(3000, seed, scale));
        fzpack::szp::compress(&x, &Config::abs(1e-3)).unwrap()
    };
    let (p1, p2, p3) = (grid(300.0, 1), grid(400.0, 2), grid(900.0, 3));
    fzpack::ops::add(&p1, &p2).unwrap(); // both in (256, 512]
    assert!(matches!(
        fzpack::ops::add(&p1, &p3),
        Err(fzpack::Error::Szp(Error::OpsMismatch {
            what: "quantizer bound"
        }))
    ));
}

/// `.fzm` archives are refused by every operation with a clear error.
#[test]
fn fzm_archives_are_refused() {
    let x = to::<f32>(&field(500, 4, 2.0));
    let cfg = Config::abs(1e-3);
    let cap = szp::fzm::max_fzm_len(x.len(), 128, DType::F32).unwrap();
    let mut f = vec![0u8; cap];
    let len = szp::fzm::write(&x, &cfg, &mut f).unwrap();
    f.truncate(len);
    let z = encode(&x, &cfg).unwrap();
    let mut out = vec![0u8; 1 << 16];
    let want = Error::OpsUnsupported {
        what: ".fzm archives (decompress and recompress as fzpack .szp archives)",
    };
    assert_eq!(ops::add(&z, &f, &mut out), Err(want));
    assert_eq!(ops::add(&f, &z, &mut out), Err(want));
    assert_eq!(ops::stats(&f), Err(want));
    assert!(matches!(
        fzpack::ops::add(&f, &z),
        Err(fzpack::Error::Szp(Error::OpsUnsupported { .. }))
    ));
    assert!(
        ops::negate(&f, &mut out)
            .unwrap_err()
            .to_string()
            .contains(".fzm")
    );
}

/// The AVX-512 combines against their scalar reference, the portable path
/// (`ops::linear_on(Kernel::Portable, ..)`), byte for byte and error for error, on random
/// archives: both layouts, both dtypes, block sizes with the run kernel's unrolled sizes and
/// short last blocks, widths from 0 up past the 32-bit kernels' 24 (the 64-bit combine),
/// coefficient pairs ±1, and outputs cut short at random lengths.
#[test]
fn avx512_combines_match_the_portable_path_on_random_archives() {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let probe = encode(&[1.0f32; 10], &Config::abs(1e-3)).unwrap();
    if !szp::Kernel::Avx512.is_available() {
        assert_eq!(
            ops::linear_on(szp::Kernel::Avx512, &[&probe], &[1], &mut [0u8; 4096]),
            Err(Error::UnsupportedPath)
        );
        println!("no AVX-512 VBMI on this CPU: its combines are not run (checked: unavailable)");
        return;
    }
    let sizes = [1u32, 7, 32, 64, 100, 128, 129, 512, 4096];
    // Blocks seen at widths up to 24 (the 32-bit kernels) and 25..=56 (the 64-bit combine).
    let (mut narrow, mut wide) = (0usize, 0usize);
    for case in 0..120u64 {
        let bs = sizes[(next() % sizes.len() as u64) as usize];
        let n = (next() % 9000) as usize;
        // Noise relative to the bound sets the widths: 2^3 .. 2^45 levels.
        let rough = 10f64.powi((next() % 14) as i32 - 13);
        let layout = if case % 2 == 0 {
            Layout::Heads
        } else {
            Layout::Fzgm
        };
        let cfg = Config::abs(1e-14f64.max(rough * 1e-3))
            .with_block_size(bs)
            .with_max_abs(4.0)
            .with_layout(layout);
        let noisy = |seed: u64| -> Vec<f64> {
            field(n, seed, 1.0)
                .iter()
                .enumerate()
                .map(|(i, x)| x + rough * 1e3 * ((i as f64 * 1.7 + seed as f64).sin()))
                .collect()
        };
        let (a, b) = (noisy(next() % 1000), noisy(next() % 1000));
        let (za, zb) = if case % 3 == 0 {
            (encode(&to::<f32>(&a), &cfg), encode(&to::<f32>(&b), &cfg))
        } else {
            (encode(&a, &cfg), encode(&b, &cfg))
        };
        let (Ok(za), Ok(zb)) = (za, zb) else {
            continue; // a bound below the f32 precision: not an ops case
        };
        for &w in szp::blocks::parse(&za).unwrap().widths {
            match w {
                0..=24 => narrow += 1,
                25..=56 => wide += 1,
                _ => {}
            }
        }
        let cap = ops::max_output_len(n, bs).unwrap();
        let cases: [(&[&[u8]], &[i64]); 6] = [
            (&[&za, &zb], &[1, 1]),
            (&[&za, &zb], &[1, -1]),
            (&[&za, &zb], &[-1, 1]),
            (&[&za], &[1]),
            (&[&za], &[-1]),
            (&[&zb, &za], &[-1, -1]),
        ];
        for (ars, cs) in cases {
            let (mut x, mut y) = (vec![0u8; cap], vec![0u8; cap]);
            let rx = ops::linear_on(szp::Kernel::Avx512, ars, cs, &mut x);
            let ry = ops::linear_on(szp::Kernel::Portable, ars, cs, &mut y);
            assert_eq!(rx, ry, "case {case}: bs {bs} n {n} {cs:?}: results differ");
            let len = rx.unwrap();
            assert!(
                x[..len] == y[..len],
                "case {case}: bs {bs} n {n} {cs:?}: bytes differ"
            );
            for _ in 0..3 {
                let cut = (next() as usize) % (len + 1);
                assert_eq!(
                    ops::linear_on(szp::Kernel::Avx512, ars, cs, &mut x[..cut]),
                    ops::linear_on(szp::Kernel::Portable, ars, cs, &mut y[..cut]),
                    "case {case}: output of {cut} bytes"
                );
            }
        }
    }
    assert!(
        narrow > 1000 && wide > 1000,
        "the archives must reach both kernels' widths ({narrow} narrow, {wide} wide blocks)"
    );
}
