//! FZM interop: the single-stage `.fzm` writer matches the Python reference vector of the spec
//! (`../shared/specs/fzm_szp_vector.py`, output committed as `tests/golden/szp/spec_example.fzm`
//! and regenerated here with python3 when it is available), the reader decodes it, round trips
//! on both types, and hostile archives give errors.

use fzpack_core::szp::{self, Config, DType, Error, Mode, fzm};

const EXAMPLE: [f32; 10] = [0.0, 0.1, 0.25, -0.3, 1.0, 1.05, 0.95, 2.0, 5.5, -1.2];
const GOLDEN: &[u8] = include_bytes!("../golden/szp/spec_example.fzm");

fn write<T: szp::SzpFloat>(data: &[T], cfg: &Config) -> Result<Vec<u8>, Error> {
    let cap = fzm::max_fzm_len(data.len(), cfg.block_size, T::DTYPE).unwrap();
    let mut out = vec![0x5Au8; cap + 32];
    let len = fzm::write(data, cfg, &mut out[..cap])?;
    assert!(
        out[cap..].iter().all(|&b| b == 0x5A),
        "wrote past the output"
    );
    assert_eq!(len % 16, 0);
    out.truncate(len);
    Ok(out)
}

#[test]
fn crc32_matches_zlib() {
    assert_eq!(fzm::crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(
        fzm::crc32(b"The quick brown fox jumps over the lazy dog"),
        0x414F_A339
    );
}

#[test]
fn writer_matches_the_python_reference_vector_byte_for_byte() {
    let cfg = Config::abs(0.05).with_block_size(4).stage_compatible();
    let ours = write(&EXAMPLE, &cfg).unwrap();
    assert_eq!(ours.len(), 608);
    assert_eq!(
        &ours[592..602],
        &[0x04, 0x05, 0x08, 0x20, 0xb4, 0x14, 0x04, 0x0b, 0x6e, 0x85]
    );
    assert_eq!(
        u32::from_le_bytes(ours[72..76].try_into().unwrap()),
        0x761c_7033
    );
    assert_eq!(
        u32::from_le_bytes(ours[76..80].try_into().unwrap()),
        0x2be6_99b4
    );
    assert_eq!(ours, GOLDEN, "differs from the committed reference vector");

    // Regenerate the vector from the spec's own script when python3 is present.
    let script = fzpack_tests::vectors::workspace_root().join("../shared/specs/fzm_szp_vector.py");
    let out = std::env::temp_dir().join(format!("fzpack_szp_ref_{}.fzm", std::process::id()));
    match std::process::Command::new("python3")
        .arg(&script)
        .arg(&out)
        .output()
    {
        Ok(o) if o.status.success() => {
            let py = std::fs::read(&out).unwrap();
            let _ = std::fs::remove_file(&out);
            assert_eq!(ours, py, "differs from fzm_szp_vector.py's output");
        }
        _ => println!(
            "skipped: python3 or {} not available; compared with the committed golden file",
            script.display()
        ),
    }
}

#[test]
fn reader_decodes_the_reference_vector() {
    let c = fzm::config(GOLDEN).unwrap();
    assert_eq!(
        (c.dtype, c.mode, c.block_size, c.n),
        (DType::F32, Mode::Abs, 4, 10)
    );
    assert_eq!(c.error_bound, 0.05);
    let mut out = [9f32; 12];
    assert_eq!(fzm::read(GOLDEN, &mut out).unwrap(), 10);
    for (x, y) in EXAMPLE.iter().zip(&out) {
        assert!((x - y).abs() as f64 <= 0.05 + 1e-7, "{x} vs {y}");
    }
    assert_eq!(out[10..], [9.0, 9.0]);
    // Same values as the fzpack archive of the same stage output.
    let mut a = vec![0u8; 200];
    let cfg = Config::abs(0.05).with_block_size(4).stage_compatible();
    let len = szp::compress(&EXAMPLE, &cfg, &mut a).unwrap();
    let mut b = [0f32; 10];
    szp::decompress(&a[..len], &mut b).unwrap();
    assert_eq!(
        b.map(f32::to_bits),
        <[f32; 10]>::try_from(&out[..10]).unwrap().map(f32::to_bits)
    );
    // The fzpack v2 archive: header, the same stage output, one chunk CRC.
    assert_eq!(&a[szp::HEADER_LEN..len - 4], &GOLDEN[592..602]);
}

#[test]
fn round_trips_keep_the_strict_bound() {
    for bs in [1u32, 3, 128, 4096] {
        for n in [0usize, 1, 127, 128, 129, 1000] {
            let d32: Vec<f32> = (0..n)
                .map(|i| ((i as f32) * 0.37).sin() * 90.0 + 3.0)
                .collect();
            let cfg = if n >= 2 {
                Config::noa(1e-3)
            } else {
                Config::abs(1e-3)
            }
            .with_block_size(bs);
            let a = write(&d32, &cfg).unwrap();
            let h = fzm::header(&a).unwrap();
            assert_eq!(h.n as usize, n);
            let mut back = vec![0f32; n];
            assert_eq!(fzm::read(&a, &mut back).unwrap(), n);
            let range = d32.iter().cloned().fold(f32::MIN, f32::max) as f64
                - d32.iter().cloned().fold(f32::MAX, f32::min) as f64;
            let bound = if n >= 2 { 1e-3 * range } else { 1e-3 };
            for (x, y) in d32.iter().zip(&back) {
                assert!(((*x as f64) - (*y as f64)).abs() <= bound);
            }
            let d64: Vec<f64> = d32.iter().map(|&x| x as f64 * 1.5).collect();
            let a = write(&d64, &Config::abs(1e-6).with_block_size(bs)).unwrap();
            let mut back = vec![0f64; n];
            fzm::read(&a, &mut back).unwrap();
            assert!(d64.iter().zip(&back).all(|(x, y)| (x - y).abs() <= 1e-6));
            assert_eq!(
                fzm::read::<f32>(&a, &mut [0f32; 1000]),
                Err(Error::DTypeMismatch)
            );
        }
    }
}

#[test]
fn output_too_small_writes_nothing_past_it() {
    let cfg = Config::abs(0.05).with_block_size(4).stage_compatible();
    for cap in 0..608 {
        let mut out = vec![0xEEu8; 700];
        assert_eq!(
            fzm::write(&EXAMPLE, &cfg, &mut out[..cap]),
            Err(Error::OutputTooSmall { needed: 608 })
        );
        assert!(out.iter().all(|&b| b == 0xEE));
    }
}

fn patched(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut a = GOLDEN.to_vec();
    f(&mut a);
    a
}

/// Re-seals both CRCs so structural checks (not the CRC) are what reject the archive.
fn reseal(a: &mut [u8]) {
    let hs = 592;
    let comp = u64::from_le_bytes(a[16..24].try_into().unwrap()) as usize;
    if a.len() >= hs + comp {
        let c = fzm::crc32(&a[hs..hs + comp]);
        a[72..76].copy_from_slice(&c.to_le_bytes());
    }
    a[76..80].fill(0);
    let c = fzm::crc32(&a[..hs]);
    a[76..80].copy_from_slice(&c.to_le_bytes());
}

#[test]
fn malformed_archives_are_errors() {
    let mut out = [0f32; 64];
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("short core", GOLDEN[..40].to_vec()),
        ("short header", GOLDEN[..500].to_vec()),
        ("short payload", GOLDEN[..600].to_vec()),
        ("magic", patched(|a| a[0] ^= 1)),
        ("version", patched(|a| a[5] = 2)),
        ("header crc", patched(|a| a[100] ^= 0x40)),
        ("data crc", patched(|a| a[595] ^= 0x01)),
        (
            "two stages",
            patched(|a| {
                a[32] = 2;
                reseal(a)
            }),
        ),
        (
            "stage type",
            patched(|a| {
                a[80] = 36;
                reseal(a)
            }),
        ),
        (
            "width 65",
            patched(|a| {
                a[592] = 65;
                reseal(a)
            }),
        ),
        (
            "huge n",
            patched(|a| {
                a[80 + 40 + 8..80 + 40 + 16].copy_from_slice(&(1u64 << 60).to_le_bytes());
                reseal(a)
            }),
        ),
        (
            "payload shorter than widths",
            patched(|a| {
                a[594] = 64;
                reseal(a)
            }),
        ),
        (
            "bad eb",
            patched(|a| {
                a[80 + 40 + 16..80 + 40 + 24].copy_from_slice(&f64::NAN.to_le_bytes());
                reseal(a)
            }),
        ),
        (
            "segment past end",
            patched(|a| {
                a[336 + 96] = 200;
                reseal(a)
            }),
        ),
        (
            "compressed size",
            patched(|a| {
                a[16] = 0xff;
                reseal(a)
            }),
        ),
        (
            "block size",
            patched(|a| {
                a[80 + 44..80 + 48].copy_from_slice(&5000u32.to_le_bytes());
                reseal(a)
            }),
        ),
    ];
    for (what, a) in &cases {
        let r = fzm::read(a, &mut out);
        assert!(r.is_err(), "{what}: accepted");
        println!("{what}: {}", r.unwrap_err());
    }
    // Block size 0 means 128 (upstream quirk): decodes as one block of 10 with the 4-block
    // widths, which no longer match the payload -> an error, not a panic.
    let a = patched(|a| {
        a[80 + 44..80 + 48].fill(0);
        reseal(a)
    });
    assert_eq!(fzm::config(&a).unwrap().block_size, 128);
    assert!(fzm::read(&a, &mut out).is_err());
    // Every truncation and every single-bit flip: an error or a clean decode, never a panic.
    for cut in 0..GOLDEN.len() {
        assert!(fzm::read(&GOLDEN[..cut], &mut out).is_err());
    }
    for bit in 0..GOLDEN.len() * 8 {
        let mut a = GOLDEN.to_vec();
        a[bit / 8] ^= 1 << (bit % 8);
        let _ = fzm::read(&a, &mut out);
        reseal(&mut a);
        let _ = fzm::read(&a, &mut out);
    }
}
