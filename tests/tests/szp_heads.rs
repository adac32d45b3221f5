//! The block-head layout (`Layout::Heads`, header byte 6 = 1): every path writes the scalar
//! reference's bytes and decodes its bits, on data with offsets, constant runs and wide
//! ranges, every block size class (head groups of 32 and fewer blocks), both types; the strict
//! bound holds; constant blocks cost their width byte only; the streaming encoder writes the
//! same archive; golden archives are frozen; corrupt trailers and bit flips are errors.

use fzpack_core::szp::{self, Config, DType, Error, Kernel, Layout, StreamEncoder, SzpFloat};

fn encode_on<T: SzpFloat>(path: Kernel, data: &[T], cfg: &Config) -> Result<Vec<u8>, Error> {
    let cap = szp::max_compressed_len(data.len(), cfg.block_size, T::DTYPE).unwrap();
    let mut out = vec![0xA5u8; cap + 16];
    let len = szp::compress_with(path, data, cfg, &mut out[..cap])?;
    assert!(
        out[cap..].iter().all(|&b| b == 0xA5),
        "wrote past the output"
    );
    out.truncate(len);
    Ok(out)
}

fn decode_on<T: SzpFloat>(path: Kernel, archive: &[u8]) -> Result<Vec<T>, Error> {
    let n = szp::header(archive)?.n as usize;
    let mut out = vec![T::from_f64(-7.25); n];
    assert_eq!(
        szp::decompress_with(path, archive, &mut out, szp::Verify::Checksums)?,
        n
    );
    Ok(out)
}

/// Smooth data on a large offset with flat runs and a jump: where the layout matters.
fn field(n: usize, seed: u64, offset: f64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let noise = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            if (i / 900) % 4 == 1 {
                return offset; // constant run
            }
            let jump = if i > n / 2 { -2.0 * offset } else { 0.0 };
            offset + jump + (i as f64 * 0.003).sin() * 40.0 + noise * 0.2
        })
        .collect()
}

fn bits<T: SzpFloat>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

fn check_paths<T: SzpFloat>(x: &[T], cfg: &Config) {
    let reference = encode_on(Kernel::Scalar, x, cfg);
    let Ok(a) = &reference else {
        for path in Kernel::ALL.into_iter().filter(|p| p.is_available()) {
            assert_eq!(
                encode_on(path, x, cfg).err(),
                reference.clone().err(),
                "{}",
                path.name()
            );
        }
        return;
    };
    assert_eq!(a[6], 1, "layout byte");
    let y: Vec<T> = decode_on(Kernel::Scalar, a).unwrap();
    let bound = szp::header(a).unwrap().bound();
    for (i, (u, v)) in x.iter().zip(&y).enumerate() {
        let e = (u.to_f64() - v.to_f64()).abs();
        assert!(e <= bound, "element {i}: error {e} above {bound} ({cfg:?})");
    }
    for path in Kernel::ALL.into_iter().filter(|p| p.is_available()) {
        let b = encode_on(path, x, cfg).unwrap();
        assert!(
            *a == b,
            "{}: bytes differ from the reference ({cfg:?}, n={})",
            path.name(),
            x.len()
        );
        let z: Vec<T> = decode_on(path, a).unwrap();
        assert_eq!(
            bits(&y),
            bits(&z),
            "{}: decoded bits differ ({cfg:?})",
            path.name()
        );
    }
}

#[test]
fn every_path_writes_the_reference_bytes() {
    let skipped: Vec<_> = Kernel::ALL
        .into_iter()
        .filter(|p| !p.is_available())
        .map(|p| p.name())
        .collect();
    if !skipped.is_empty() {
        println!("skipped: paths this CPU cannot run: {skipped:?}");
    }
    for (k, &n) in [0usize, 1, 2, 127, 129, 4095, 4097, 33 * 128 + 5, 70_000]
        .iter()
        .enumerate()
    {
        for offset in [0.0, 1234.5, -3.0e5] {
            let x = field(n, k as u64, offset);
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            for bs in [1u32, 7, 32, 128, 1000, 1024, 4096] {
                for cfg in [
                    Config::abs(1e-2).with_block_size(bs),
                    Config::noa(1e-4).with_block_size(bs),
                ] {
                    let cfg = cfg.with_layout(Layout::Heads);
                    check_paths(&x32, &cfg);
                    if bs == 128 || bs == 7 {
                        check_paths(&x, &cfg);
                        check_paths(&x, &cfg.stage_compatible().with_layout(Layout::Heads));
                    }
                }
            }
        }
    }
}

#[test]
fn heads_beat_the_stage_layout_on_offset_data_and_constant_blocks_cost_a_byte() {
    let x: Vec<f32> = field(100_000, 9, 5000.0)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let cfg = Config::abs(1e-2);
    let fzgm = encode_on(Kernel::best(), &x, &cfg.with_layout(Layout::Fzgm)).unwrap();
    let heads = encode_on(Kernel::best(), &x, &cfg.with_layout(Layout::Heads)).unwrap();
    assert!(
        (heads.len() as f64) < 0.8 * fzgm.len() as f64,
        "heads {} vs stage {} bytes",
        heads.len(),
        fzgm.len()
    );
    // All-constant input: every block has width 0; the body is one trailer per group (all
    // heads equal: the first delta is the level, the others 0).
    let c = vec![77.0f32; 128 * 64];
    let a = encode_on(
        Kernel::best(),
        &c,
        &Config::abs(0.5).with_layout(Layout::Heads),
    )
    .unwrap();
    let v = szp::blocks::parse(&a).unwrap();
    assert!(v.widths.iter().all(|&w| w == 0));
    let level = szp::blocks::quantize(77.0f32, v.header.quant_eb);
    let hw = 64 - ((level << 1) ^ (level >> 63)).leading_zeros() as usize;
    assert_eq!(
        v.payload.len(),
        2 * (1 + (32 * hw).div_ceil(8)),
        "two groups of 32"
    );
    let back: Vec<f32> = decode_on(Kernel::best(), &a).unwrap();
    assert!(back.iter().all(|&b| (b - 77.0).abs() <= 0.5));
}

#[test]
fn streaming_equals_one_shot() {
    let d: Vec<f32> = field(5000, 5, 300.0).iter().map(|&v| v as f32).collect();
    for bs in [1u32, 37, 128, 4096] {
        let cfg = Config::abs(1e-3)
            .with_block_size(bs)
            .with_max_abs(1000.0)
            .with_layout(Layout::Heads);
        let one = encode_on(Kernel::Scalar, &d, &cfg).unwrap();
        let mut buf = vec![0x5Au8; szp::max_compressed_len(d.len(), bs, DType::F32).unwrap()];
        let mut enc = StreamEncoder::<f32>::new(&mut buf, d.len(), &cfg).unwrap();
        for block in d.chunks(bs as usize) {
            enc.push_block(block).unwrap();
        }
        let len = enc.finish().unwrap();
        assert!(buf[..len] == one[..], "bs {bs}: streamed archive differs");
    }
}

/// Frozen bytes (`FZPACK_BLESS=1` rewrites them on a deliberate format change).
#[test]
fn golden_heads_archives_are_stable() {
    let dir = fzpack_tests::vectors::workspace_root().join("tests/golden/szp");
    let x: Vec<f64> = field(3000, 3, 700.0);
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let cases = [
        (
            "heads_abs_f32_bs128.v2.szp",
            encode_on(
                Kernel::Scalar,
                &x32,
                &Config::abs(1e-2).with_layout(Layout::Heads),
            ),
            DType::F32,
        ),
        (
            "heads_noa_f64_bs7.v2.szp",
            encode_on(
                Kernel::Scalar,
                &x,
                &Config::noa(1e-5)
                    .with_block_size(7)
                    .with_layout(Layout::Heads),
            ),
            DType::F64,
        ),
    ];
    for (name, bytes, dtype) in cases {
        let bytes = bytes.unwrap();
        let want = fzpack_tests::golden::check_or_bless(&dir, name, &bytes);
        assert_eq!((want[4], want[6]), (2, 1), "{name}: version and layout");
        let h = szp::header(&want).unwrap();
        assert_eq!(h.dtype, dtype);
        let bound = h.bound();
        let err = match dtype {
            DType::F32 => {
                let y: Vec<f32> = decode_on(Kernel::Scalar, &want).unwrap();
                x32.iter()
                    .zip(&y)
                    .map(|(a, b)| f64::from((a - b).abs()))
                    .fold(0.0, f64::max)
            }
            DType::F64 => {
                let y: Vec<f64> = decode_on(Kernel::Scalar, &want).unwrap();
                x.iter()
                    .zip(&y)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max)
            }
        };
        assert!(err <= bound, "{name}: error {err} above {bound}");
    }
}

#[test]
fn corrupt_trailers_and_bit_flips_are_errors() {
    let d: Vec<f32> = field(20_000, 21, 900.0).iter().map(|&v| v as f32).collect();
    let good = encode_on(
        Kernel::best(),
        &d,
        &Config::abs(1e-3)
            .with_block_size(64)
            .with_layout(Layout::Heads),
    )
    .unwrap();
    let mut out = vec![0f32; d.len()];
    // Every single bit flip is caught by a CRC (or a structural check).
    let mut s = 11u64;
    for k in 0..3000 {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut a = good.clone();
        let at = (s >> 33) as usize % a.len();
        a[at] ^= 1 << ((s >> 20) % 8);
        assert!(
            szp::decompress(&a, &mut out).is_err(),
            "flip {k} at byte {at} undetected"
        );
        // Unverified decoding of a corrupt archive returns, never panics or overruns.
        let _ = szp::decompress_with(szp::Kernel::best(), &a, &mut out, szp::Verify::Skip);
    }
    // A head width above 64 in the first trailer: a structural error even unverified.
    let v = szp::blocks::parse(&good).unwrap();
    let bs = 64usize;
    let first: usize = v.widths[..32]
        .iter()
        .map(|&w| szp::blocks::block_payload_len(w, bs))
        .sum();
    let at = good.len() - v.sums.len() - v.payload.len() + first;
    let mut a = good.clone();
    a[at] = 65;
    assert_eq!(
        szp::decompress_with(szp::Kernel::best(), &a, &mut out, szp::Verify::Skip),
        Err(Error::Corrupt("head width above 64"))
    );
    // Truncations: errors.
    for cut in [1usize, 2, 5, 40, good.len() / 2] {
        assert!(szp::decompress(&good[..good.len() - cut], &mut out).is_err());
        assert!(
            szp::decompress_with(
                szp::Kernel::best(),
                &good[..good.len() - cut],
                &mut out,
                szp::Verify::Skip
            )
            .is_err()
        );
    }
    // The compressed-domain statistics take the layout: min/max are the decode's.
    let st = szp::ops::stats(&good).expect("stats of a block-head archive");
    let mut dec = vec![0f32; st.n];
    szp::decompress(&good, &mut dec).unwrap();
    let lo = dec
        .iter()
        .map(|&x| f64::from(x))
        .fold(f64::INFINITY, f64::min);
    let hi = dec
        .iter()
        .map(|&x| f64::from(x))
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(st.min_max(), (st.n > 0).then_some((lo, hi)));
    let sum: f64 = dec.iter().map(|&x| f64::from(x)).sum();
    assert!(
        (st.sum() - sum).abs()
            <= 1e-6 * dec.iter().map(|&x| f64::from(x).abs()).sum::<f64>() + 1e-300
    );
}
