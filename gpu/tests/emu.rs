//! The kernels' logic (gpu/kernels/szp_warp.cuh run on the CPU by the host shim) against
//! fzpack-core, byte for byte: archives (both block layouts, chunk CRCs sealed by the device
//! CRC logic), decoded bits and errors, on generated fields (every block size class, boundary
//! lengths, widths 0..=64) and on the real fields of ../shared/data when present.
#![cfg(feature = "host-kernels")]

use std::path::PathBuf;

use fzpack_core::szp::{self, Config, SzpFloat};
use fzpack_gpu::emu::{self, EmuFloat};

fn core_compress<T: SzpFloat>(x: &[T], cfg: &Config) -> Result<Vec<u8>, szp::Error> {
    let max = szp::max_compressed_len(x.len(), cfg.block_size, T::DTYPE).unwrap_or(0);
    let mut out = vec![0u8; max];
    let len = szp::compress_with(szp::Kernel::Scalar, x, cfg, &mut out)?;
    out.truncate(len);
    Ok(out)
}

fn core_decompress<T: SzpFloat + Default + Copy>(a: &[u8], n: usize) -> Vec<T> {
    let mut out = vec![T::default(); n];
    let got = szp::decompress(a, &mut out).unwrap();
    out.truncate(got);
    out
}

fn bits<T: SzpFloat>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

/// Compares compress (bytes or error) and decompress (bits) of emu and core; returns the
/// archive length when it compressed.
fn check<T: EmuFloat + Copy>(x: &[T], cfg: &Config, what: &str) -> Option<usize> {
    let want = core_compress(x, cfg);
    let got = emu::compress(x, cfg);
    match (&want, &got) {
        (Ok(a), Ok(b)) => {
            assert!(
                a == b,
                "{what}: archives differ (len {} vs {})",
                a.len(),
                b.len()
            );
            let back: Vec<T> = emu::decompress(b).unwrap();
            let reference: Vec<T> = core_decompress(a, x.len());
            assert_eq!(bits(&back), bits(&reference), "{what}: decoded bits differ");
            if cfg.strict {
                let bound = szp::header(a).unwrap().bound();
                for (i, (u, v)) in x.iter().zip(&back).enumerate() {
                    let e = (u.to_f64() - v.to_f64()).abs();
                    assert!(e <= bound, "{what}: bound missed at {i}: {e} > {bound}");
                }
            }
            Some(a.len())
        }
        (Err(a), Err(fzpack_gpu::Error::Szp(b))) => {
            assert_eq!(a, b, "{what}: errors differ");
            None
        }
        // Missing values (NaN, ±inf): the core stores them (archive format 3), the device
        // refuses them, naming the first.
        (Ok(_), Err(fzpack_gpu::Error::Szp(szp::Error::NonFinite { index }))) => {
            assert!(x[*index].is_missing(), "{what}: {index} is not missing");
            assert!(
                x[..*index].iter().all(|v| !v.is_missing()),
                "{what}: not the first"
            );
            None
        }
        _ => panic!("{what}: core {want:?} vs emu {got:?}"),
    }
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn fields(n: usize, seed: u64) -> Vec<(&'static str, Vec<f64>)> {
    let mut r = Rng(seed | 1);
    vec![
        (
            "smooth",
            (0..n)
                .map(|i| (i as f64 * 0.013).sin() * 37.0 + 2.0)
                .collect(),
        ),
        (
            "noise",
            (0..n).map(|_| r.unit() * 2000.0 - 1000.0).collect(),
        ),
        ("zeros", vec![0.0; n]),
        (
            "steps",
            (0..n).map(|i| ((i / 50) % 3) as f64 * 0.25).collect(),
        ),
        (
            "spiky",
            (0..n)
                .map(|i| if i % 97 == 3 { 1.0e6 } else { (i % 7) as f64 })
                .collect(),
        ),
    ]
}

const BLOCK_SIZES: &[u32] = &[
    1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 100, 128, 129, 200, 256, 257, 1000, 4096,
];

#[test]
fn generated_fields_match_core_byte_for_byte() {
    let mut archives = 0;
    for &bs in BLOCK_SIZES {
        // Lengths around block, chunk (32) and tile (8 warps × K blocks) boundaries.
        for n in [
            0usize,
            1,
            31,
            33,
            bs as usize - 1,
            bs as usize,
            bs as usize * 9 + 5,
            5000,
        ] {
            for (name, f) in fields(n, u64::from(bs) * 7919 + n as u64) {
                let f32s: Vec<f32> = f.iter().map(|&v| v as f32).collect();
                for (i, cfg) in [
                    Config::abs(1e-3),
                    Config::abs(0.5),
                    Config::noa(1e-4),
                    Config::abs(1e-2).stage_compatible(),
                    Config::noa(1e-3).with_max_abs(2e6),
                    Config::abs(1e-3).with_f32_step(),
                ]
                .into_iter()
                .enumerate()
                {
                    // Both layouts, alternating over the configs (all of them on two classes).
                    let layout = if (i + bs as usize).is_multiple_of(2) || bs == 128 || bs == 4096 {
                        szp::Layout::Heads
                    } else {
                        szp::Layout::Fzgm
                    };
                    let cfg = cfg.with_block_size(bs).with_layout(layout);
                    let what = format!("{name} n={n} bs={bs} {cfg:?}");
                    archives += check(&f32s, &cfg, &format!("f32 {what}")).is_some() as usize;
                    archives += check(&f, &cfg, &format!("f64 {what}")).is_some() as usize;
                }
            }
        }
    }
    println!("{archives} archives byte-identical to fzpack-core");
    assert!(archives > 1000);
}

#[test]
fn every_width_up_to_64() {
    // f64 levels near ±2^62 alternate: zigzagged deltas reach 64 bits.
    let big = 4.0e18;
    for bs in [32u32, 33, 128, 300] {
        for scale in [1.0, 1e-3, 1e-6, 1e-9, 1e-12, 1e-15, 1e-18] {
            let x: Vec<f64> = (0..700)
                .map(|i| if i % 2 == 0 { big * scale } else { -big * scale } + (i % 5) as f64)
                .collect();
            let cfg = Config::abs(0.5).with_block_size(bs).stage_compatible();
            let len = check(&x, &cfg, &format!("alternating scale={scale} bs={bs}"));
            assert!(len.is_some());
        }
    }
    // Widths 1..=64 each appear: pairs (0, 2^(w-1)) quantized at eb = 0.5 (levels = values).
    for w in 1..=62u32 {
        let v = (1u64 << (w - 1)) as f64;
        let x: Vec<f64> = (0..96).map(|i| if i % 3 == 1 { v } else { 0.0 }).collect();
        let cfg = Config::abs(0.5).with_block_size(96).stage_compatible();
        let a = emu::compress(&x, &cfg).unwrap();
        assert!(a[48] as u32 >= w, "width {} for 2^{}", a[48], w - 1);
        check(&x, &cfg, &format!("width {w}"));
    }
}

#[test]
fn errors_match_core() {
    let mut x: Vec<f32> = (0..3000).map(|i| i as f32 * 0.1).collect();
    for cfg in [
        Config::abs(0.0),
        Config::abs(f64::NAN),
        Config::abs(1e-3).with_block_size(0),
        Config::abs(1e-3).with_block_size(4097),
        Config::abs(1e-3).with_max_abs(-1.0),
        Config::abs(1e-3).with_max_abs(10.0),
        Config::abs(1e-30),
        Config::abs(1e-17).stage_compatible(),
    ] {
        assert!(
            check(&x, &cfg, &format!("{cfg:?}")).is_none(),
            "{cfg:?} must fail"
        );
    }
    x[1234] = f32::NAN;
    x[2000] = f32::INFINITY;
    assert!(check(&x, &Config::abs(1e-3), "nan").is_none());
    assert!(check(&x, &Config::abs(1e-3).with_max_abs(5.0), "nan after over").is_none());
    let c = vec![3.5f64; 100];
    assert!(check(&c, &Config::noa(1e-3), "zero range").is_none());
    assert!(check(&c, &Config::abs(1e-3), "constant abs").is_some());
    let big: Vec<f64> = (0..100)
        .map(|i| if i == 77 { 1e300 } else { 1.0 })
        .collect();
    assert!(
        check(
            &big,
            &Config::abs(1e-3).stage_compatible(),
            "level overflow"
        )
        .is_none()
    );
}

#[test]
fn corrupt_archives_rejected_like_core() {
    let x: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.05).cos()).collect();
    let a = core_compress(&x, &Config::abs(1e-4)).unwrap();
    let mut bad = a.clone();
    bad[48] = 65;
    let mut out = vec![0f32; 1000];
    assert_eq!(
        emu::decompress::<f32>(&bad).unwrap_err(),
        fzpack_gpu::Error::Szp(szp::decompress(&bad, &mut out).unwrap_err())
    );
    assert!(emu::decompress::<f32>(&a[..a.len() - 1]).is_err());
    assert_eq!(
        emu::decompress::<f64>(&a).unwrap_err(),
        fzpack_gpu::Error::Szp(szp::Error::DTypeMismatch)
    );
}

#[test]
fn stats_match_a_plain_scan() {
    let mut r = Rng(99);
    let x: Vec<f32> = (0..10_007)
        .map(|_| (r.unit() * 10.0 - 3.0) as f32)
        .collect();
    let (lo, hi, mag, nf, over) = emu::stats(&x, Some(6.5));
    let flo = x.iter().fold(f32::INFINITY, |a, &b| a.min(b)) as f64;
    let fhi = x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)) as f64;
    assert_eq!((lo, hi), (flo, fhi));
    assert_eq!(mag, flo.abs().max(fhi.abs()));
    assert_eq!(nf, u64::MAX);
    assert_eq!(over, x.iter().position(|v| v.abs() > 6.5).unwrap() as u64);
}

#[test]
fn lookback_sums_aggregates_up_to_the_nearest_inclusive_prefix() {
    let (agg, inc) = (emu::FLAG_AGGREGATE, emu::FLAG_INCLUSIVE);
    // Tile 0 inclusive 10, tiles 1..=70 aggregates of i bytes: the window crosses 32-tile steps.
    let mut st = vec![inc | 10];
    st.extend((1..=70u64).map(|i| agg | i));
    for tile in [0usize, 1, 2, 31, 32, 33, 64, 65, 71] {
        let want: u64 = if tile == 0 {
            0
        } else {
            10 + (1..tile as u64).sum::<u64>()
        };
        assert_eq!(emu::lookback(&st, tile), want, "tile {tile}");
    }
    // An inclusive prefix in the middle stops the sum there.
    st[40] = inc | 1000;
    assert_eq!(emu::lookback(&st, 50), 1000 + (41..50u64).sum::<u64>());
}

#[test]
fn tile_scan_is_an_exclusive_prefix_sum() {
    for count in [1usize, 5, 32, 33, 64, 128, 1000] {
        let mut c: Vec<u64> = (0..count as u64).map(|i| (i * 37) % 11).collect();
        let orig = c.clone();
        let total = emu::tile_scan(&mut c);
        assert_eq!(total, orig.iter().sum::<u64>());
        let mut run = 0;
        for (i, v) in orig.iter().enumerate() {
            assert_eq!(c[i], run);
            run += v;
        }
    }
}

/// `$FZPACK_DATA` (what scripts/gpu-check.sh carries to a GPU machine), else ../shared/data.
fn data_dir() -> Option<PathBuf> {
    let d = std::env::var_os("FZPACK_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"));
    d.is_dir().then_some(d)
}

fn read_values<T: SzpFloat>(path: &std::path::Path, size: usize, conv: fn(&[u8]) -> T) -> Vec<T> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(size)
        .map(conv)
        .collect()
}

#[test]
fn real_fields_match_core_byte_for_byte() {
    let Some(dir) = data_dir() else {
        println!("skipped: ../shared/data is not present; real-field checks need it");
        return;
    };
    let mut done = 0;
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    for p in names {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let configs = [
            Config::noa(1e-3),
            Config::abs(1e-2).with_block_size(64),
            Config::noa(1e-5).with_block_size(1024),
            Config::noa(1e-4).with_block_size(4096),
            Config::noa(1e-3).with_block_size(1),
            Config::noa(1e-3).with_block_size(2),
            Config::noa(1e-4).with_block_size(3),
        ];
        for cfg in configs
            .into_iter()
            .flat_map(|c| [szp::Layout::Fzgm, szp::Layout::Heads].map(|l| c.with_layout(l)))
        {
            // Large fields: a prefix keeps the CPU emulation quick (2 cores in CI); block
            // sizes 1..=3 run a warp per value or three, so a shorter one.
            let keep = if cfg.block_size <= 3 { 30_000 } else { 400_000 };
            if name.ends_with(".f32") {
                let x = read_values(&p, 4, |b| f32::from_le_bytes(b.try_into().unwrap()));
                let x = &x[..x.len().min(keep)];
                check(x, &cfg, &format!("{name} {cfg:?}"));
                done += 1;
            } else if name.ends_with(".f64") {
                let x = read_values(&p, 8, |b| f64::from_le_bytes(b.try_into().unwrap()));
                let x = &x[..x.len().min(keep)];
                check(x, &cfg, &format!("{name} {cfg:?}"));
                done += 1;
            }
        }
    }
    println!("{done} real-field runs compared with fzpack-core");
    assert!(done > 0);
}

/// The block-head layout across its geometry: head groups of 32, 16, 8 and 4 blocks (block
/// sizes up to 512, 1024, 2048, 4096), groups that span several encode tiles (block sizes
/// 129..=512: tiles of 16 or 8 blocks) or share one, a short last group, head widths from 0 to
/// 64 (levels near ±2^62), data far from zero (what the layout is for).
#[test]
fn block_head_layout_matches_core_byte_for_byte() {
    let mut r = Rng(7);
    let mut archives = 0;
    for &bs in &[
        1u32, 2, 3, 17, 64, 128, 200, 256, 300, 512, 1024, 2048, 4096,
    ] {
        let b = bs as usize;
        for n in [1usize, b * 31 + 1, b * 33 + 7, b * 100 + b / 2 + 1] {
            let far: Vec<f64> = (0..n)
                .map(|i| 5000.0 + (i as f64 * 0.001).sin() * 3.0 + r.unit() * 1e-3)
                .collect();
            let jumpy: Vec<f64> = (0..n)
                .map(|i| if (i / b).is_multiple_of(3) { 1.0e5 } else { -7.0 } + (i % 4) as f64)
                .collect();
            for (name, f) in [("far", far), ("jumpy", jumpy)] {
                let f32s: Vec<f32> = f.iter().map(|&v| v as f32).collect();
                for cfg in [Config::abs(1e-3), Config::noa(1e-5)] {
                    let cfg = cfg.with_block_size(bs).with_layout(szp::Layout::Heads);
                    let what = format!("{name} n={n} bs={bs} {cfg:?}");
                    archives += check(&f32s, &cfg, &format!("f32 {what}")).is_some() as usize;
                    archives += check(&f, &cfg, &format!("f64 {what}")).is_some() as usize;
                }
            }
        }
    }
    // Head deltas of every width up to 64: heads alternate ±2^k·(something) at eb = 0.5.
    for k in [0u32, 1, 7, 20, 40, 61] {
        let v = (1u64 << k) as f64;
        let x: Vec<f64> = (0..64 * 40)
            .map(|i| if (i / 64) % 2 == 0 { v } else { -v })
            .collect();
        let cfg = Config::abs(0.5)
            .with_block_size(64)
            .stage_compatible()
            .with_layout(szp::Layout::Heads);
        assert!(check(&x, &cfg, &format!("head width k={k}")).is_some());
    }
    println!("{archives} block-head archives byte-identical to fzpack-core");
    assert!(archives > 250);
}

/// The warp-parallel chunk CRC (lane segments combined with crc32_combine) equals core's
/// `chunk_sum` for every message length around the 32-lane split, and the decoder's
/// verification names the first corrupt chunk as core does.
#[test]
fn chunk_crc_matches_core() {
    let mut r = Rng(3);
    let bytes: Vec<u8> = (0..70_000).map(|_| r.next() as u8).collect();
    for nw in [0usize, 1, 5, 31, 128] {
        for nbody in [0usize, 1, 3, 27, 28, 29, 60, 1000, 4096, 65_537] {
            let (w, b) = (&bytes[..nw], &bytes[nw..nw + nbody]);
            for u in [0u32, 1, 0xdead_beef] {
                assert_eq!(
                    emu::crc_chunk(u, w, b),
                    szp::blocks::chunk_sum(u, w, b),
                    "nw={nw} nbody={nbody} u={u}"
                );
            }
        }
    }
    for layout in [szp::Layout::Fzgm, szp::Layout::Heads] {
        let x: Vec<f32> = (0..100_000)
            .map(|i| (i as f32 * 0.003).sin() * 9.0)
            .collect();
        let cfg = Config::abs(1e-4).with_layout(layout);
        let a = core_compress(&x, &cfg).unwrap();
        // A payload bit in the third chunk (chunks of 128 blocks at block size 128).
        let h = szp::header(&a).unwrap();
        let nb = x.len().div_ceil(128);
        let mut pos = szp::HEADER_LEN + nb;
        let mut bad = a.clone();
        let mut found = false;
        while pos < a.len() - 4 * nb.div_ceil(128) {
            bad[pos] ^= 0x10;
            let mut out = vec![0f32; x.len()];
            let want = szp::decompress(&bad, &mut out).unwrap_err();
            if matches!(want, szp::Error::ChecksumMismatch { chunk: 2, .. }) {
                let got = emu::decompress::<f32>(&bad).unwrap_err();
                assert_eq!(got, fzpack_gpu::Error::Szp(want), "{layout:?}");
                found = true;
                break;
            }
            bad[pos] ^= 0x10;
            pos += 997;
        }
        assert!(found, "{layout:?}: no flip landed in chunk 2 ({h:?})");
    }
}

/// Hostile archives of both layouts (a byte changed anywhere — header, widths, payloads, head
/// trailers, CRCs — or cut short or extended) fail in the device path's validation with core's
/// own error: the host frame check, the body walk and the device CRC check choose it as
/// `szp::decompress` does.
#[test]
fn damaged_archives_fail_like_core_in_both_layouts() {
    let x: Vec<f32> = (0..40_000)
        .map(|i| 900.0 + (i as f32 * 0.002).sin() * 40.0 + (i % 13) as f32 * 0.01)
        .collect();
    let mut r = Rng(11);
    let mut cases = 0;
    for layout in [szp::Layout::Fzgm, szp::Layout::Heads] {
        for bs in [64u32, 128, 1000] {
            let cfg = Config::abs(1e-3).with_block_size(bs).with_layout(layout);
            let a = core_compress(&x, &cfg).unwrap();
            let mut variants: Vec<Vec<u8>> = Vec::new();
            for _ in 0..60 {
                let mut b = a.clone();
                let at = (r.next() as usize) % b.len();
                b[at] = match r.next() % 3 {
                    0 => b[at] ^ (1 << (r.next() % 8)),
                    1 => 65 + (r.next() % 100) as u8,
                    _ => r.next() as u8,
                };
                variants.push(b);
            }
            for cut in [1usize, 4, 5, 100] {
                variants.push(a[..a.len() - cut].to_vec());
            }
            let mut longer = a.clone();
            longer.extend_from_slice(&[0, 0, 0]);
            variants.push(longer);
            for b in variants {
                let mut out = vec![0f32; x.len()];
                let want = szp::decompress(&b, &mut out);
                let got = emu::decompress::<f32>(&b);
                match (want, got) {
                    (Err(w), Err(g)) => {
                        assert_eq!(g, fzpack_gpu::Error::Szp(w), "{layout:?} bs={bs}")
                    }
                    (Ok(_), Ok(v)) => assert_eq!(bits(&v), bits(&out), "{layout:?} bs={bs}"),
                    (w, g) => panic!("{layout:?} bs={bs}: core {w:?} vs emu {:?}", g.err()),
                }
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 2 * 3 * 65);
}

/// The block-head walk checks a group's width bytes before reading its trailer, as core's
/// `body_len` does: a width above 64 in a group whose trailer byte is also bad is "width above
/// 64", not "head width above 64".
#[test]
fn walk_reports_a_bad_width_before_its_groups_trailer() {
    let x: Vec<f32> = (0..20_000)
        .map(|i| 50.0 + (i as f32 * 0.01).sin())
        .collect();
    let cfg = Config::abs(1e-4).with_layout(szp::Layout::Heads);
    let mut a = core_compress(&x, &cfg).unwrap();
    let nb = x.len().div_ceil(128);
    let body = szp::HEADER_LEN + nb;
    a[szp::HEADER_LEN] = 65; // block 0's width
    for b in &mut a[body..body + 4096] {
        *b = 0xff; // every byte the walk could take for group 0's trailer
    }
    let mut out = vec![0f32; x.len()];
    let want = szp::decompress(&a, &mut out).unwrap_err();
    assert_eq!(want, szp::Error::Corrupt("width above 64"));
    assert_eq!(
        emu::decompress::<f32>(&a).unwrap_err(),
        fzpack_gpu::Error::Szp(want)
    );
}

/// An interpolation-layout archive of `x` shaped `dims`, as the `fzpack` facade (and so the
/// CLI and Python) writes it.
fn interp_archive(x: &[f32], dims: &[u64], cfg: &Config) -> Vec<u8> {
    let cfg = cfg
        .with_layout(szp::Layout::Interp)
        .with_shape(szp::Shape::new(dims).unwrap());
    // serial: the facade on this thread only (no pool: this test also runs under Miri)
    fzpack::szp::Encoder::new(&cfg).serial().to_vec(x).unwrap()
}

/// The interpolation layout is refused by name, never a panic or garbage: the encoder given
/// `Layout::Interp` (before any other check, a bad block size included) and the decoder given
/// a layout-2 archive (whole, truncated, or with its header CRC broken under the kernels'
/// validation) both return `Error::InterpLayout`, whose message names the layout.
#[test]
fn interpolation_layout_is_refused_by_name() {
    let x: Vec<f32> = (0..64 * 80)
        .map(|i| ((i / 80) as f32 * 0.1).sin() * ((i % 80) as f32 * 0.07).cos() * 5.0)
        .collect();
    for cfg in [Config::abs(1e-3), Config::noa(1e-3).with_block_size(0)] {
        let e = emu::compress(&x, &cfg.with_layout(szp::Layout::Interp)).unwrap_err();
        assert_eq!(e, fzpack_gpu::Error::InterpLayout);
        let msg = e.to_string();
        assert!(msg.contains("interp") && msg.contains("GPU"), "{msg}");
    }
    let a = interp_archive(&x, &[64, 80], &Config::abs(1e-3));
    assert_eq!(a[6], szp::LAYOUT_INTERP);
    assert_eq!(
        emu::decompress::<f32>(&a).unwrap_err(),
        fzpack_gpu::Error::InterpLayout
    );
    // a header alone is enough to name the layout
    assert_eq!(
        emu::decompress::<f32>(&a[..szp::HEADER_LEN]).unwrap_err(),
        fzpack_gpu::Error::InterpLayout
    );
    // the block layouts still run
    assert!(emu::compress(&x, &Config::abs(1e-3)).is_ok());
}
