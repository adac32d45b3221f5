//! Every available PERNIX SIMD backend against the scalar path.
//!
//! For every bit width × block size × sign mode × element type: random, adversarial (ties,
//! ±bmax, NaN, ±inf, ±3e9·scale, subnormals, −0) and random-byte inputs, runs of 1..=3 blocks
//! inside longer, pre-filled buffers (bytes/values past the run must stay untouched). Compressed
//! bytes and decoded bits must be identical to the scalar path's. The golden vectors are
//! replayed on every backend too. A backend the CPU lacks is reported as skipped.
//!
//! With the `force-scalar` feature of fzpack-core (`cargo test -p fzpack-tests --features
//! fzpack-core/force-scalar`), `Backend::Auto` must resolve to the scalar path; that run keeps
//! the fallback covered on SIMD machines.

use fzpack_core::arch::CpuFeatures;
use fzpack_core::pernix::{
    Backend, BitWidth, BlockSize, Dispatcher, Error, PernixFloat, elements_per_block,
    inverse_scale, scale_from_bmax,
};
use fzpack_tests::vectors;

const SIMD: [Backend; 4] = [
    Backend::X86Avx512Vbmi,
    Backend::X86Avx2,
    Backend::X86Bmi2,
    Backend::Arm64Neon,
];

/// The SIMD backends this CPU has (printing the skipped ones).
fn available() -> Vec<Dispatcher> {
    let mut v = Vec::new();
    for b in SIMD {
        match Dispatcher::new(b) {
            Ok(d) => v.push(d),
            Err(e) => println!("skipped {}: {e} on this build/CPU", b.name()),
        }
    }
    if v.is_empty() {
        println!("no SIMD backend available: only the scalar path is tested");
    }
    v
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let x = self.0;
        (x ^ (x >> 29)).wrapping_mul(0xbf58476d1ce4e5b9) ^ (x >> 32)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

fn from_f64<T: PernixFloat>(x: f64) -> T {
    if T::BYTES == 4 {
        T::from_bits_u64(u64::from((x as f32).to_bits()))
    } else {
        T::from_bits_u64(x.to_bits())
    }
}

/// Inputs for one case: `len` values of the given kind, with bmax = 1 → scale for `bits`.
fn inputs<T: PernixFloat>(kind: u32, len: usize, bits: BitWidth, rng: &mut Rng) -> Vec<T> {
    let n = bits.get();
    let scale: f64 = if n == 1 {
        1.0
    } else {
        1.0 / f64::from((1u32 << (n - 1)) - 1)
    };
    (0..len)
        .map(|i| match kind {
            0 => from_f64(rng.unit() * 1.2),
            1 => {
                // Adversarial values, cycled with random ones so every lane position sees each.
                let sel = (rng.next() % 20) as usize;
                let k = (rng.next() % (1 << n.min(20))) as f64;
                let v = match sel {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    2 => f64::NEG_INFINITY,
                    3 => 3e9 * scale,
                    4 => -3e9 * scale,
                    5 => 1.0,
                    6 => -1.0,
                    7 => (k + 0.5) * scale,  // ties
                    8 => -(k + 0.5) * scale, // ties
                    9 => 1e-310,
                    10 => -0.0,
                    11 => f64::from_bits(1),
                    12 => 1e300,
                    13 => -1e300,
                    14 => (1.0 + 0.5 * scale) * if i % 2 == 0 { 1.0 } else { -1.0 },
                    _ => rng.unit() * 1.01,
                };
                if T::BYTES == 4 && sel == 9 {
                    T::from_bits_u64(u64::from((1e-40f32).to_bits())) // an f32 subnormal
                } else {
                    from_f64(v)
                }
            }
            _ => T::from_bits_u64(rng.next()), // arbitrary bit patterns
        })
        .collect()
}

fn check_type<T: PernixFloat + std::fmt::Debug>(d: &Dispatcher, rng: &mut Rng) {
    let scalar = Dispatcher::new(Backend::Fallback).unwrap();
    let name = d.backend().name();
    for bits in BitWidth::all() {
        for bs in BlockSize::ALL {
            let epb = elements_per_block(bits, bs);
            let one: T = from_f64(1.0);
            let scale = scale_from_bmax(one, bits).unwrap();
            let inv = inverse_scale(scale).unwrap();
            for blocks in 1..=3usize {
                let kinds: &[u32] = if blocks == 2 { &[0, 1, 2] } else { &[1] };
                for &kind in kinds {
                    let extra = (rng.next() % 9) as usize;
                    let input = inputs::<T>(kind, epb * blocks + extra, bits, rng);
                    let len = bs.bytes() * blocks;
                    let mut want = vec![0xA5u8; len + 17];
                    let mut got = vec![0x5Au8; len + 17];
                    scalar
                        .compress_blocks(bits, bs, &input, inv, &mut want, blocks)
                        .unwrap();
                    d.compress_blocks(bits, bs, &input, inv, &mut got, blocks)
                        .unwrap();
                    assert_eq!(
                        &got[..len],
                        &want[..len],
                        "{name} compress {} N={} BS={} blocks={blocks} kind={kind}",
                        T::BYTES * 8,
                        bits.get(),
                        bs.bytes()
                    );
                    assert!(
                        got[len..].iter().all(|&b| b == 0x5A),
                        "{name} wrote past the run"
                    );
                    // Decompress both the scalar stream and random bytes.
                    let mut bytes = want.clone();
                    if kind != 1 {
                        for b in &mut bytes[..len] {
                            *b = rng.next() as u8;
                        }
                    }
                    for sign in [false, true] {
                        let nv = epb * blocks;
                        let fill: T = T::from_bits_u64(0x7FF4_DEAD_7FA5_BEEF);
                        let mut w = vec![fill; nv + extra];
                        let mut g = vec![fill; nv + extra];
                        scalar
                            .decompress_blocks(bits, bs, &bytes, scale, &mut w, blocks, sign)
                            .unwrap();
                        d.decompress_blocks(bits, bs, &bytes, scale, &mut g, blocks, sign)
                            .unwrap();
                        for (i, (a, b)) in w.iter().zip(&g).enumerate() {
                            assert_eq!(
                                a.to_bits_u64(),
                                b.to_bits_u64(),
                                "{name} decompress {} N={} BS={} blocks={blocks} sign={sign} i={i}",
                                T::BYTES * 8,
                                bits.get(),
                                bs.bytes()
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn simd_backends_match_the_scalar_path() {
    let mut rng = Rng(0x005E_ED0F_5EED);
    for d in available() {
        check_type::<f32>(&d, &mut rng);
        check_type::<f64>(&d, &mut rng);
        println!("{}: matches the scalar path", d.backend().name());
    }
}

#[test]
fn long_runs_of_blocks() {
    // Many blocks: the AVX-512 kernels walk seamless widths (N | 512) as one stream, the AVX2
    // kernels load in place except near the end of the input.
    let mut rng = Rng(7);
    let scalar = Dispatcher::new(Backend::Fallback).unwrap();
    for d in available() {
        for bits in BitWidth::all() {
            for (bs, blocks) in [(BlockSize::B64, 37), (BlockSize::B256, 5)] {
                let epb = elements_per_block(bits, bs);
                let x = inputs::<f32>(0, epb * blocks, bits, &mut rng);
                let scale = scale_from_bmax(1.0f32, bits).unwrap();
                let inv = inverse_scale(scale).unwrap();
                let len = bs.bytes() * blocks;
                let (mut a, mut b) = (vec![0x11u8; len], vec![0x22u8; len]);
                scalar
                    .compress_blocks(bits, bs, &x, inv, &mut a, blocks)
                    .unwrap();
                d.compress_blocks(bits, bs, &x, inv, &mut b, blocks)
                    .unwrap();
                assert_eq!(
                    a,
                    b,
                    "{} N={} blocks={blocks}",
                    d.backend().name(),
                    bits.get()
                );
                let noise: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                for stream in [&a, &noise] {
                    for sign in [false, true] {
                        let (mut ya, mut yb) = (vec![0f64; epb * blocks], vec![1f64; epb * blocks]);
                        scalar
                            .decompress_blocks(bits, bs, stream, 0.25, &mut ya, blocks, sign)
                            .unwrap();
                        d.decompress_blocks(bits, bs, stream, 0.25, &mut yb, blocks, sign)
                            .unwrap();
                        assert_eq!(
                            ya,
                            yb,
                            "{} f64 N={} blocks={blocks}",
                            d.backend().name(),
                            bits.get()
                        );
                        let (mut fa, mut fb) = (vec![0f32; epb * blocks], vec![1f32; epb * blocks]);
                        scalar
                            .decompress_blocks(bits, bs, stream, 0.25, &mut fa, blocks, sign)
                            .unwrap();
                        d.decompress_blocks(bits, bs, stream, 0.25, &mut fb, blocks, sign)
                            .unwrap();
                        assert_eq!(
                            fa,
                            fb,
                            "{} f32 N={} blocks={blocks}",
                            d.backend().name(),
                            bits.get()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn scales_far_from_one_and_extreme_inverses() {
    // Tiny and huge scales: products overflow to ±inf or underflow to subnormals.
    let mut rng = Rng(42);
    let scalar = Dispatcher::new(Backend::Fallback).unwrap();
    for d in available() {
        for bits in [1u8, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24].map(|b| BitWidth::new(b).unwrap()) {
            let bs = BlockSize::B64;
            let epb = elements_per_block(bits, bs);
            for inv in [1e-38f32, 1e-3, 3.0, 1e9, 3.4e38] {
                let x = inputs::<f32>(1, epb, bits, &mut rng);
                let (mut a, mut b) = ([1u8; 64], [2u8; 64]);
                scalar.compress_block(bits, bs, &x, inv, &mut a).unwrap();
                d.compress_block(bits, bs, &x, inv, &mut b).unwrap();
                assert_eq!(a, b, "{} N={} inv={inv}", d.backend().name(), bits.get());
            }
            for inv in [1e-300f64, 1e-3, 3.0, 1e200, 1.7e308] {
                let x = inputs::<f64>(1, epb, bits, &mut rng);
                let (mut a, mut b) = ([1u8; 64], [2u8; 64]);
                scalar.compress_block(bits, bs, &x, inv, &mut a).unwrap();
                d.compress_block(bits, bs, &x, inv, &mut b).unwrap();
                assert_eq!(a, b, "{} N={} inv={inv}", d.backend().name(), bits.get());
            }
            for scale in [1e-45f32, 1e-30, 7.0, 3e38] {
                let bytes: Vec<u8> = (0..64).map(|_| rng.next() as u8).collect();
                let (mut a, mut b) = (vec![0f32; epb], vec![1f32; epb]);
                scalar
                    .decompress_block(bits, bs, &bytes, scale, &mut a, true)
                    .unwrap();
                d.decompress_block(bits, bs, &bytes, scale, &mut b, true)
                    .unwrap();
                let (a, b): (Vec<u32>, Vec<u32>) = (
                    a.iter().map(|x| x.to_bits()).collect(),
                    b.iter().map(|x| x.to_bits()).collect(),
                );
                assert_eq!(
                    a,
                    b,
                    "{} N={} scale={scale}",
                    d.backend().name(),
                    bits.get()
                );
            }
        }
    }
}

#[test]
fn golden_vectors_replay_on_every_backend() {
    let mut sets = Vec::new();
    let sub = vectors::subset_dir();
    let up = vectors::upstream_dir();
    for (dir, names) in [
        (Some(sub), ["subset_f32.bin", "subset_f64.bin"]),
        (up, ["vectors_f32.bin", "vectors_f64.bin"]),
    ] {
        let Some(dir) = dir else {
            println!("upstream vectors not found: only the committed subset is replayed");
            continue;
        };
        for name in names {
            let path = dir.join(name);
            match std::fs::read(&path) {
                Ok(data) => sets.push((path.display().to_string(), vectors::parse(&data).unwrap())),
                Err(e) => println!("{} not read ({e})", path.display()),
            }
        }
    }
    assert!(!sets.is_empty());
    for d in available() {
        let mut checked = 0;
        for (path, recs) in &sets {
            for rec in recs {
                let bad = vectors::replay(rec, &d);
                assert!(bad.is_empty(), "{} {path}: {bad:?}", d.backend().name());
                checked += 1;
            }
        }
        println!("{}: {checked} golden records match", d.backend().name());
    }
}

#[test]
fn backend_selection_and_statuses() {
    let f = CpuFeatures::detect();
    let auto = Dispatcher::new(Backend::Auto).unwrap().backend();
    if std::env::var_os("FZPACK_EXPECT_SCALAR").is_some() {
        assert_eq!(auto, Backend::Fallback);
    }
    println!("Auto resolves to {} on this CPU/build", auto.name());
    assert_ne!(auto, Backend::Auto);
    // Auto never picks something the CPU lacks; explicit backends it lacks are −5.
    let none = f.without(u32::MAX);
    assert_eq!(
        Dispatcher::with_features(Backend::Auto, none)
            .unwrap()
            .backend(),
        Backend::Fallback
    );
    for b in SIMD {
        let arch = if b == Backend::Arm64Neon {
            "aarch64"
        } else {
            "x86_64"
        };
        let arch_ok = std::env::consts::ARCH == arch;
        let want = if arch_ok {
            Error::UnsupportedImplementation
        } else {
            Error::UnsupportedBackend
        };
        assert_eq!(Dispatcher::with_features(b, none).unwrap_err(), want);
    }
    if cfg!(target_arch = "aarch64") {
        // NEON is architectural: Auto picks it (Fallback only under force-scalar), an explicit
        // NEON dispatcher works, and narrowing NEON away falls back to the scalar path.
        assert!(f.neon());
        assert!(
            auto == Backend::Arm64Neon || auto == Backend::Fallback,
            "{}",
            auto.name()
        );
        assert_eq!(
            Dispatcher::new(Backend::Arm64Neon).unwrap().backend(),
            Backend::Arm64Neon
        );
        assert_eq!(
            Dispatcher::with_features(Backend::Auto, f.without(CpuFeatures::NEON))
                .unwrap()
                .backend(),
            Backend::Fallback
        );
        // No SVE2 kernels (no stable SVE intrinsics in Rust 1.95/1.96): documented −5.
        assert_eq!(
            Dispatcher::new(Backend::Arm64Sve).unwrap_err(),
            Error::UnsupportedImplementation
        );
        for b in [Backend::X86Avx2, Backend::X86Bmi2, Backend::X86Avx512Vbmi] {
            assert_eq!(Dispatcher::new(b).unwrap_err().code(), -3);
        }
    }
    if cfg!(target_arch = "x86_64") {
        for b in [Backend::Arm64Neon, Backend::Arm64Sve] {
            assert_eq!(Dispatcher::new(b).unwrap_err(), Error::UnsupportedBackend);
            assert_eq!(Dispatcher::new(b).unwrap_err().code(), -3);
        }
        if f.avx512_vbmi() && auto != Backend::Fallback {
            assert_eq!(auto, Backend::X86Avx512Vbmi);
            let no512 = f.without(CpuFeatures::AVX512VBMI);
            assert_eq!(
                Dispatcher::with_features(Backend::Auto, no512)
                    .unwrap()
                    .backend(),
                Backend::X86Avx2
            );
            assert_eq!(
                Dispatcher::with_features(Backend::X86Avx512Vbmi, no512)
                    .unwrap_err()
                    .code(),
                -5
            );
        }
        if f.avx2_bmi2() {
            let only_bmi2 = f.without(CpuFeatures::AVX512VBMI);
            // BMI2 needs AVX2 too (upstream rule).
            assert!(Dispatcher::with_features(Backend::X86Bmi2, only_bmi2).is_ok());
            assert_eq!(
                Dispatcher::with_features(Backend::X86Bmi2, f.without(CpuFeatures::AVX2))
                    .unwrap_err(),
                Error::UnsupportedImplementation
            );
        }
    }
}

/// `decompress_frames` (one call over a block stream's frames, the kernels reading ahead into
/// the next frame) gives the bits of one `decompress_block` per frame on every backend, for
/// every width, block size, sign mode and element type; it writes nothing past its run, and a
/// bad scale is reported at its frame with the frames before it decoded.
#[test]
fn frames_equal_block_by_block() {
    fn check<T: PernixFloat + std::fmt::Debug>(d: &Dispatcher, rng: &mut Rng) {
        let sentinel = from_f64::<T>(1234.5);
        for n in 1..=24u8 {
            let bits = BitWidth::new(n).unwrap();
            for bs in [64usize, 128, 256, 512, 1024] {
                let size = BlockSize::new(bs as u32).unwrap();
                let e = elements_per_block(bits, size);
                for sign in [false, true] {
                    let sign = sign && n > 1;
                    // 1..=5 frames, then a few stray bytes (a read-ahead must not decode them).
                    let blocks = 1 + (rng.next() % 5) as usize;
                    let fl = bs + T::BYTES;
                    let mut frames = vec![0u8; blocks * fl + (rng.next() % 40) as usize];
                    for b in &mut frames {
                        *b = rng.next() as u8;
                    }
                    for k in 0..blocks {
                        let s = from_f64::<T>(2f64.powi((rng.next() % 40) as i32 - 20));
                        let raw = s.to_bits_u64().to_le_bytes();
                        frames[k * fl..k * fl + T::BYTES].copy_from_slice(&raw[..T::BYTES]);
                    }
                    let run =
                        fzpack_core::pernix::Run::new(bits, size, blocks).with_sign_values(sign);
                    let mut got = vec![sentinel; blocks * e + 7];
                    d.decompress_frames(run, &frames, &mut got).unwrap();
                    let scalar = Dispatcher::new(Backend::Fallback).unwrap();
                    let mut want = vec![sentinel; blocks * e + 7];
                    for k in 0..blocks {
                        let fr = &frames[k * fl..(k + 1) * fl];
                        let s = T::from_bits_u64(
                            fr[..T::BYTES]
                                .iter()
                                .rev()
                                .fold(0, |a, &x| (a << 8) | u64::from(x)),
                        );
                        let out = &mut want[k * e..(k + 1) * e];
                        scalar
                            .decompress_block(bits, size, &fr[T::BYTES..], s, out, sign)
                            .unwrap();
                    }
                    let bits_of = |v: &[T]| v.iter().map(|x| x.to_bits_u64()).collect::<Vec<_>>();
                    assert_eq!(
                        bits_of(&got),
                        bits_of(&want),
                        "{:?} N={n} bs={bs} sign={sign}",
                        d.backend()
                    );
                    // A zero scale in the last frame: reported there, the frames before decoded.
                    let at = (blocks - 1) * fl;
                    frames[at..at + T::BYTES].fill(0);
                    let mut again = vec![sentinel; blocks * e];
                    let err = d.decompress_frames(run, &frames, &mut again).unwrap_err();
                    assert_eq!(
                        err,
                        fzpack_core::pernix::FramesError::Scale { frame: blocks - 1 }
                    );
                    let done = (blocks - 1) * e;
                    assert_eq!(bits_of(&again[..done]), bits_of(&want[..done]));
                    // Too few frame bytes or output values: an argument error, nothing decoded.
                    let short = &frames[..blocks * fl - 1];
                    assert!(matches!(
                        d.decompress_frames(run, short, &mut again),
                        Err(fzpack_core::pernix::FramesError::Invalid(
                            Error::InvalidArgument
                        ))
                    ));
                    assert!(
                        d.decompress_frames(run, &frames, &mut again[..blocks * e - 1])
                            .is_err()
                    );
                }
            }
        }
    }
    let mut rng = Rng(0xf4a3e5);
    let mut all = available();
    all.push(Dispatcher::new(Backend::Fallback).unwrap());
    for d in &all {
        check::<f32>(d, &mut rng);
        check::<f64>(d, &mut rng);
    }
}
