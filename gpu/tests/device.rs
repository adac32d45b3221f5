//! GPU tests: archives byte-identical to fzpack-core (generated and real fields, both element
//! types, ABS/NOA, every block-size class, both block layouts, chunk CRCs sealed on the device),
//! decoded bits identical, the bound held, the same errors (damaged archives of both layouts
//! validated and CRC-checked on the device). Without a CUDA device each test prints "skipped: no CUDA device" and passes; with
//! `FZPACK_REQUIRE_GPU=1` (as `scripts/gpu-check.sh` sets) a missing device, driver or NVRTC
//! is a failure.

use std::path::PathBuf;

use fzpack_core::szp::{self, Config, SzpFloat};
use fzpack_gpu::{Error, Gpu, GpuFloat};

fn gpu_or_skip() -> Option<Gpu> {
    let required = std::env::var_os("FZPACK_REQUIRE_GPU").is_some();
    match Gpu::new(0) {
        Ok(g) => Some(g),
        Err(e) if required => panic!("FZPACK_REQUIRE_GPU is set but the GPU is unusable: {e}"),
        Err(e @ (Error::NoDriver | Error::NoDevice)) => {
            println!("skipped: no CUDA device ({e})");
            None
        }
        Err(e @ Error::NoNvrtc) => {
            println!("skipped: no CUDA device usable: {e}");
            None
        }
        Err(e) => panic!("GPU present but unusable: {e}"),
    }
}

#[test]
fn no_device_is_a_typed_error_not_a_panic() {
    // Runs everywhere: either a usable GPU or one of the typed "not here" errors.
    match Gpu::new(0) {
        Ok(g) => println!("CUDA device present: {g:?}"),
        Err(e) => {
            assert!(
                matches!(e, Error::NoDriver | Error::NoDevice | Error::NoNvrtc),
                "unexpected {e:?}"
            );
            println!("skipped: no CUDA device ({e}); checked that Gpu::new returns it as an error");
        }
    }
    // An absurd ordinal is NoDevice (or NoDriver), never a panic.
    assert!(Gpu::new(1 << 20).is_err());
}

fn core_compress<T: SzpFloat>(x: &[T], cfg: &Config) -> Result<Vec<u8>, szp::Error> {
    let max = szp::max_compressed_len(x.len(), cfg.block_size, T::DTYPE).unwrap_or(0);
    let mut out = vec![0u8; max];
    let len = szp::compress_with(szp::Kernel::Scalar, x, cfg, &mut out)?;
    out.truncate(len);
    Ok(out)
}

fn bits<T: SzpFloat>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

fn check<T: GpuFloat + Copy>(gpu: &Gpu, x: &[T], cfg: &Config, what: &str) -> bool {
    let want = core_compress(x, cfg);
    let got = gpu.compress(x, cfg);
    match (&want, &got) {
        (Ok(a), Ok(b)) => {
            assert!(
                a == b,
                "{what}: archives differ (len {} vs {})",
                a.len(),
                b.len()
            );
            let back: Vec<T> = gpu.decompress(b).unwrap();
            let mut reference = vec![T::default(); x.len()];
            szp::decompress_with(
                szp::Kernel::Scalar,
                a,
                &mut reference,
                szp::Verify::Checksums,
            )
            .unwrap();
            assert_eq!(bits(&back), bits(&reference), "{what}: decoded bits differ");
            if cfg.strict {
                let bound = szp::header(a).unwrap().bound();
                for (i, (u, v)) in x.iter().zip(&back).enumerate() {
                    let e = (u.to_f64() - v.to_f64()).abs();
                    assert!(e <= bound, "{what}: bound missed at {i}: {e} > {bound}");
                }
            }
            true
        }
        (Err(a), Err(Error::Szp(b))) => {
            assert_eq!(a, b, "{what}: errors differ");
            false
        }
        _ => panic!("{what}: core {want:?} vs gpu {got:?}"),
    }
}

fn field(n: usize, kind: u32, seed: u64) -> Vec<f64> {
    let mut s = seed | 1;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let r = (s >> 11) as f64 / (1u64 << 53) as f64;
            match kind {
                0 => (i as f64 * 0.013).sin() * 37.0 + 2.0,
                1 => r * 2000.0 - 1000.0,
                2 => 0.0,
                _ => ((i / 50) % 3) as f64 * 0.25 + if i % 97 == 3 { 1e6 } else { 0.0 },
            }
        })
        .collect()
}

#[test]
fn generated_fields_match_core_byte_for_byte() {
    let Some(gpu) = gpu_or_skip() else { return };
    let mut done = 0;
    for bs in [
        1u32, 2, 3, 7, 31, 32, 33, 64, 100, 128, 129, 256, 257, 512, 1000, 2048, 4096,
    ] {
        for n in [1usize, 33, bs as usize * 9 + 5, 70_001] {
            for kind in 0..4 {
                let f = field(n, kind, u64::from(bs) * 31 + n as u64);
                let f32s: Vec<f32> = f.iter().map(|&v| v as f32).collect();
                for cfg in [
                    Config::abs(1e-3),
                    Config::noa(1e-4),
                    Config::abs(1e-2).stage_compatible(),
                    Config::noa(1e-3).with_max_abs(2e6),
                    Config::abs(1e-3).with_f32_step(),
                ]
                .into_iter()
                .flat_map(|c| [szp::Layout::Fzgm, szp::Layout::Heads].map(|l| c.with_layout(l)))
                {
                    let cfg = cfg.with_block_size(bs);
                    let what = format!("kind {kind} n={n} {cfg:?}");
                    done += check(&gpu, &f32s, &cfg, &format!("f32 {what}")) as usize;
                    done += check(&gpu, &f, &cfg, &format!("f64 {what}")) as usize;
                }
            }
        }
    }
    println!("{done} GPU archives byte-identical to fzpack-core");
    assert!(done > 1000);
}

#[test]
fn wide_deltas_and_many_tiles() {
    let Some(gpu) = gpu_or_skip() else { return };
    // Widths up to 64 (f64 levels near ±2^62 alternate), several thousand tiles.
    let x: Vec<f64> = (0..3_000_000)
        .map(|i| {
            let s = if i % 2 == 0 { 4.0e18 } else { -4.0e18 };
            s * [1.0, 1e-6, 1e-12][(i / 1000) % 3] + (i % 5) as f64
        })
        .collect();
    for bs in [32, 128, 300] {
        for l in [szp::Layout::Fzgm, szp::Layout::Heads] {
            let cfg = Config::abs(0.5)
                .with_block_size(bs)
                .stage_compatible()
                .with_layout(l);
            assert!(check(&gpu, &x, &cfg, &format!("wide bs={bs} {l:?}")));
        }
    }
}

#[test]
fn errors_match_core() {
    let Some(gpu) = gpu_or_skip() else { return };
    let mut x: Vec<f32> = (0..300_000).map(|i| i as f32 * 0.001).collect();
    for cfg in [
        Config::abs(0.0),
        Config::abs(1e-3).with_block_size(0),
        Config::abs(1e-3).with_max_abs(10.0),
        Config::abs(1e-30),
        Config::abs(1e-17).stage_compatible(),
    ] {
        assert!(
            !check(&gpu, &x, &cfg, &format!("{cfg:?}")),
            "{cfg:?} must fail"
        );
    }
    x[123_456] = f32::NAN;
    x[200_000] = f32::INFINITY;
    assert!(!check(&gpu, &x, &Config::abs(1e-3), "nan"));
    let c = vec![3.5f64; 1000];
    assert!(!check(&gpu, &c, &Config::noa(1e-3), "zero range"));
    let empty: [f32; 0] = [];
    assert!(check(&gpu, &empty, &Config::abs(1e-3), "empty"));

    let y: Vec<f32> = (0..10_000).map(|i| (i as f32 * 0.05).cos()).collect();
    let a = core_compress(&y, &Config::abs(1e-4)).unwrap();
    let mut bad = a.clone();
    bad[48 + 10] = 65;
    let mut out = vec![0f32; y.len()];
    assert_eq!(
        gpu.decompress::<f32>(&bad).unwrap_err(),
        Error::Szp(
            szp::decompress_with(szp::Kernel::Scalar, &bad, &mut out, szp::Verify::Checksums)
                .unwrap_err()
        )
    );
    assert_eq!(
        gpu.decompress::<f32>(&a[..a.len() - 1]).unwrap_err(),
        Error::Szp(szp::Error::Truncated)
    );
    let mut long = a.clone();
    long.push(0);
    assert!(matches!(
        gpu.decompress::<f32>(&long).unwrap_err(),
        Error::Szp(szp::Error::Corrupt(_))
    ));
    assert_eq!(
        gpu.decompress::<f64>(&a).unwrap_err(),
        Error::Szp(szp::Error::DTypeMismatch)
    );
}

#[test]
fn device_buffers_and_streams() {
    let Some(gpu) = gpu_or_skip() else { return };
    let x: Vec<f32> = (0..1_000_003)
        .map(|i| (i as f32 * 1e-3).sin() * 9.0)
        .collect();
    let cfg = Config::noa(1e-3);
    let want = core_compress(&x, &cfg).unwrap();
    let g2 = gpu.with_new_stream().unwrap();
    for g in [&gpu, &g2] {
        let s = g.stream();
        let d_in = s.clone_htod(&x).unwrap();
        let max = szp::max_compressed_len(x.len(), cfg.block_size, szp::DType::F32).unwrap();
        // Dirty output: every archive byte must be written by the kernels.
        let mut d_out = s.clone_htod(&vec![0xA5u8; max]).unwrap();
        let len = g
            .compress_device(&d_in.as_view(), &cfg, &mut d_out.as_view_mut())
            .unwrap();
        assert_eq!(len, want.len());
        let got = s.clone_dtoh(&d_out.slice(0..len)).unwrap();
        assert!(got == want, "device-buffer archive differs from core");
        let mut d_back = s.clone_htod(&vec![f32::NAN; x.len()]).unwrap();
        let n = g
            .decompress_device(&d_out.slice(0..len), &mut d_back.as_view_mut())
            .unwrap();
        assert_eq!(n, x.len());
        let back = s.clone_dtoh(&d_back).unwrap();
        let mut reference = vec![0f32; x.len()];
        szp::decompress_with(
            szp::Kernel::Scalar,
            &want,
            &mut reference,
            szp::Verify::Checksums,
        )
        .unwrap();
        assert_eq!(bits(&back), bits(&reference));
        // Too small an output is core's OutputTooSmall, before any work.
        let mut small = s.alloc_zeros::<u8>(100).unwrap();
        assert_eq!(
            g.compress_device(&d_in.as_view(), &cfg, &mut small.as_view_mut())
                .unwrap_err(),
            Error::Szp(szp::Error::OutputTooSmall { needed: max })
        );
    }
}

/// `$FZPACK_DATA` (what scripts/gpu-check.sh carries to a GPU machine), else ../shared/data.
fn data_dir() -> Option<PathBuf> {
    let d = std::env::var_os("FZPACK_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"));
    d.is_dir().then_some(d)
}

#[test]
fn real_fields_match_core_byte_for_byte() {
    let Some(gpu) = gpu_or_skip() else { return };
    let Some(dir) = data_dir() else {
        println!("skipped: ../shared/data is not present; real-field GPU checks need it");
        return;
    };
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    let mut done = 0;
    for p in names {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&p).unwrap();
        for cfg in [
            Config::noa(1e-3),
            Config::abs(1e-2).with_block_size(64),
            Config::noa(1e-5).with_block_size(1024),
            Config::noa(1e-4).with_block_size(17),
            Config::noa(1e-4).with_block_size(4096),
            Config::noa(1e-3).with_block_size(1),
            Config::noa(1e-3).with_block_size(2),
            Config::noa(1e-3).with_block_size(3),
        ]
        .into_iter()
        .flat_map(|c| [szp::Layout::Fzgm, szp::Layout::Heads].map(|l| c.with_layout(l)))
        {
            let what = format!("{name} {cfg:?}");
            if name.ends_with(".f32") {
                let x: Vec<f32> = bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect();
                check(&gpu, &x, &cfg, &what);
                done += 1;
            } else if name.ends_with(".f64") {
                let x: Vec<f64> = bytes
                    .chunks_exact(8)
                    .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
                    .collect();
                check(&gpu, &x, &cfg, &what);
                done += 1;
            }
        }
    }
    println!("{done} real-field GPU runs compared with fzpack-core");
    assert!(done > 0);
}

#[test]
fn input_over_4_gib() {
    let Some(gpu) = gpu_or_skip() else { return };
    if std::env::var_os("FZPACK_GPU_BIG").is_none() {
        println!("skipped: set FZPACK_GPU_BIG=1 for the > 4 GiB input (scripts/gpu-check.sh does)");
        return;
    }
    // 1.1·2^30 f32 values = 4.4 GB: indices and byte offsets past 2^32.
    let n = (1usize << 30) + (1usize << 27);
    let x: Vec<f32> = (0..n)
        .map(|i| ((i % 1_000_003) as f32 * 1e-4).sin() * 3.0)
        .collect();
    let cfg = Config::abs(1e-3);
    let a = gpu.compress(&x, &cfg).unwrap();
    let want = core_compress(&x, &cfg).unwrap();
    assert!(a == want, "archives differ on the > 4 GiB input");
    let back: Vec<f32> = gpu.decompress(&a).unwrap();
    let mut reference = vec![0f32; n];
    szp::decompress_with(
        szp::Kernel::Scalar,
        &want,
        &mut reference,
        szp::Verify::Checksums,
    )
    .unwrap();
    assert!(
        back == reference,
        "decoded values differ on the > 4 GiB input"
    );
}

/// Damaged archives of both layouts (a byte changed anywhere, cut short, extended): the device
/// validation (header and lengths on the host, width/trailer walk and chunk CRCs on the device)
/// reports core's error.
#[test]
fn damaged_archives_fail_like_core_in_both_layouts() {
    let Some(gpu) = gpu_or_skip() else { return };
    let x: Vec<f32> = (0..200_000)
        .map(|i| 900.0 + (i as f32 * 0.002).sin() * 40.0 + (i % 13) as f32 * 0.01)
        .collect();
    let mut s = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for layout in [szp::Layout::Fzgm, szp::Layout::Heads] {
        for bs in [64u32, 128, 1000] {
            let cfg = Config::abs(1e-3).with_block_size(bs).with_layout(layout);
            let a = core_compress(&x, &cfg).unwrap();
            let mut variants: Vec<Vec<u8>> = Vec::new();
            for _ in 0..40 {
                let mut b = a.clone();
                let at = (next() as usize) % b.len();
                b[at] = match next() % 3 {
                    0 => b[at] ^ (1 << (next() % 8)),
                    1 => 65 + (next() % 100) as u8,
                    _ => next() as u8,
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
                match (want, gpu.decompress::<f32>(&b)) {
                    (Err(w), Err(g)) => assert_eq!(g, Error::Szp(w), "{layout:?} bs={bs}"),
                    (Ok(_), Ok(v)) => assert_eq!(bits(&v), bits(&out), "{layout:?} bs={bs}"),
                    (w, g) => panic!("{layout:?} bs={bs}: core {w:?} vs gpu {:?}", g.err()),
                }
            }
        }
    }
}
