//! Exhaustive PERNIX checks: every bit width × block size × sign mode × element type, against
//! the independent bit-level model in `fzpack_tests::pernix_model`, on every backend this CPU
//! offers, with random, edge (ties, ±bmax, ±0, subnormals) and non-finite / far out-of-range
//! inputs, single blocks and runs of 3 blocks, written into pre-filled buffers with guards.

use fzpack_core::pernix::{
    Backend, BitWidth, BlockSize, Dispatcher, Error, PernixFloat, elements_per_block,
    inverse_scale, scale_from_bmax,
};
use fzpack_tests::pernix_model::{self, ModelFloat};

const GUARD: usize = 13;

/// The dispatchers of every backend available here (always at least the fallback).
fn dispatchers() -> Vec<Dispatcher> {
    let mut v = Vec::new();
    for b in Backend::ALL {
        match Dispatcher::new(b) {
            Ok(d) if b != Backend::Auto => v.push(d),
            Ok(_) => {}
            Err(e) => println!("backend {}: not available here ({e}); skipped", b.name()),
        }
    }
    v
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// Inputs for one case: a mix of every kind, deterministic per seed.
fn inputs<T: ModelFloat>(n: usize, bits: u32, scale: f64, bmax: f64, seed: u64) -> Vec<T> {
    let mut rng = Rng(seed);
    let half = if bits == 1 {
        1.0
    } else {
        (1u64 << (bits - 1)) as f64
    };
    (0..n)
        .map(|i| {
            let k = (rng.next() % (2 * half as u64 + 2)) as f64 - half - 1.0;
            let v: f64 = match rng.next() % 16 {
                0 => (k + 0.5) * scale, // ties (exact when the scale is a power of two)
                1 => bmax,
                2 => -bmax,
                3 => 3e9 * scale,
                4 => -3e9 * scale,
                5 => f64::NAN,
                6 => f64::INFINITY,
                7 => f64::NEG_INFINITY,
                8 => 0.0,
                9 => -0.0,
                10 => 1e-310 * (i as f64 + 1.0), // f64 subnormal, f32 zero
                11 => bmax * 1.5 * rng.unit(),   // up to 50 % out of range
                _ => bmax * rng.unit(),
            };
            if v.is_nan() {
                T::from_bits_u64(if T::BYTES == 4 {
                    0x7fc0_0001
                } else {
                    0x7ff8_0000_0000_0001
                })
            } else if T::BYTES == 4 {
                T::from_bits_u64(u64::from((v as f32).to_bits()))
            } else {
                T::from_bits_u64(v.to_bits())
            }
        })
        .collect()
}

fn check_type<T: ModelFloat>(d: &Dispatcher, seed: u64) -> usize {
    let mut cases = 0;
    for bits in BitWidth::all() {
        let n = u32::from(bits.get());
        for bs in BlockSize::ALL {
            let epb = elements_per_block(bits, bs);
            let pow2 = T::from_bits_u64(if T::BYTES == 4 {
                u64::from((1.0f32 / (1u32 << (n - 1)) as f32).to_bits())
            } else {
                (1.0f64 / (1u64 << (n - 1)) as f64).to_bits()
            });
            let bmax = T::from_bits_u64(if T::BYTES == 4 {
                u64::from(1.7f32.to_bits())
            } else {
                1.7f64.to_bits()
            });
            let helper = scale_from_bmax(bmax, bits).unwrap();
            for (si, scale) in [helper, pow2].into_iter().enumerate() {
                let inv = inverse_scale(scale).unwrap();
                let scale_f64 = f64::from_bits(if T::BYTES == 4 {
                    f64::from(f32::from_bits(scale.to_bits_u64() as u32)).to_bits()
                } else {
                    scale.to_bits_u64()
                });
                for blocks in [1usize, 3] {
                    let input: Vec<T> = inputs(
                        epb * blocks,
                        n,
                        scale_f64,
                        1.7,
                        seed ^ (u64::from(n) << 20) ^ (bs.bytes() as u64) ^ si as u64,
                    );
                    let want = pernix_model::compress(bits, bs, &input, inv, blocks);
                    let mut out = vec![0xA5u8; want.len() + GUARD];
                    d.compress_blocks(bits, bs, &input, inv, &mut out, blocks)
                        .unwrap();
                    let ctx = format!(
                        "{} T=f{} N={n} BS={} blocks={blocks} scale#{si}",
                        d.backend().name(),
                        T::BYTES * 8,
                        bs.bytes()
                    );
                    assert_eq!(&out[..want.len()], &want[..], "compress {ctx}");
                    assert!(
                        out[want.len()..].iter().all(|&b| b == 0xA5),
                        "compress wrote past the run: {ctx}"
                    );
                    for sign in [true, false] {
                        let want_v = pernix_model::decompress(bits, bs, &want, scale, blocks, sign);
                        let mut got =
                            vec![T::from_bits_u64(0x7ff4_0000_dead_beef); want_v.len() + GUARD];
                        d.decompress_blocks(bits, bs, &want, scale, &mut got, blocks, sign)
                            .unwrap();
                        for (i, (a, b)) in got.iter().zip(&want_v).enumerate() {
                            assert_eq!(
                                a.to_bits_u64(),
                                b.to_bits_u64(),
                                "decompress {ctx} sign={sign} i={i}"
                            );
                        }
                        assert!(
                            got[want_v.len()..].iter().all(|x| x.to_bits_u64()
                                == T::from_bits_u64(0x7ff4_0000_dead_beef).to_bits_u64()),
                            "decompress wrote past the run: {ctx}"
                        );
                        cases += 1;
                    }
                }
            }
        }
    }
    cases
}

#[test]
fn every_width_size_sign_type_matches_the_model() {
    let mut total = 0;
    for d in dispatchers() {
        total += check_type::<f32>(&d, 0xF32);
        total += check_type::<f64>(&d, 0xF64);
    }
    println!("pernix exhaustive: {total} cases matched the bit-level model");
    assert!(total >= 24 * 5 * 2 * 2 * 2 * 2);
}

/// Decompression accepts every bit pattern; random bytes decode exactly like the model.
#[test]
fn random_bytes_decode_like_the_model() {
    let mut rng = Rng(7);
    for d in dispatchers() {
        for bits in BitWidth::all() {
            for bs in BlockSize::ALL {
                let bytes: Vec<u8> = (0..bs.bytes() * 2).map(|_| rng.next() as u8).collect();
                for sign in [true, false] {
                    let want = pernix_model::decompress(bits, bs, &bytes, 0.37f32, 2, sign);
                    let mut got = vec![f32::NAN; want.len()];
                    d.decompress_blocks(bits, bs, &bytes, 0.37f32, &mut got, 2, sign)
                        .unwrap();
                    assert!(
                        got.iter()
                            .zip(&want)
                            .all(|(a, b)| a.to_bits() == b.to_bits())
                    );
                }
            }
        }
    }
}

fn assert_untouched(buf: &[u8]) {
    assert!(
        buf.iter().all(|&b| b == 0xA5),
        "an invalid call wrote to its output"
    );
}

/// Validation: every invalid argument is reported, and nothing is written.
#[test]
fn invalid_arguments_write_nothing() {
    let d = Dispatcher::new(Backend::Fallback).unwrap();
    let bits = BitWidth::new(8).unwrap();
    let input = [0.5f32; 64 * 2];
    let mut out = [0xA5u8; 128];
    let bs = BlockSize::B64;
    let ia = Err(Error::InvalidArgument);
    assert_eq!(
        d.compress_blocks(bits, bs, &input, 1.0, &mut out, 0),
        ia,
        "zero blocks"
    );
    assert_eq!(
        d.compress_blocks(bits, bs, &input[..127], 1.0, &mut out, 2),
        ia,
        "short input"
    );
    assert_eq!(
        d.compress_blocks(bits, bs, &input, 1.0, &mut out[..127], 2),
        ia,
        "short output"
    );
    assert_eq!(
        d.compress_blocks(bits, bs, &input, 1.0, &mut out, usize::MAX),
        ia,
        "overflowing count"
    );
    for bad in [
        0.0f32,
        -1.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
    ] {
        assert_eq!(
            d.compress_block(bits, bs, &input, bad, &mut out),
            ia,
            "inverse scale {bad}"
        );
    }
    assert_untouched(&out);
    let mut vals = [0.25f64; 128];
    let bytes = [0u8; 128];
    for bad in [0.0f64, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(
            d.decompress_block(bits, bs, &bytes, bad, &mut vals, true),
            Err(Error::InvalidArgument)
        );
    }
    assert_eq!(
        d.decompress_blocks(bits, bs, &bytes[..127], 1.0, &mut vals, 2, true),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        d.decompress_blocks(bits, bs, &bytes, 1.0, &mut vals[..127], 2, true),
        Err(Error::InvalidArgument)
    );
    assert!(vals.iter().all(|&v| v == 0.25));
    // A subnormal scale inverts to +inf with OK (as upstream); compress then rejects it.
    let inv = inverse_scale(1e-45f32).unwrap();
    assert_eq!(inv, f32::INFINITY);
    assert_eq!(d.compress_block(bits, bs, &input, inv, &mut out), ia);
    assert_untouched(&out);
}

#[test]
fn scale_helpers_follow_upstream() {
    let b8 = BitWidth::new(8).unwrap();
    let b1 = BitWidth::new(1).unwrap();
    assert_eq!(scale_from_bmax(127.0f32, b8), Ok(1.0));
    assert_eq!(scale_from_bmax(127.0f64, b8), Ok(1.0));
    assert_eq!(
        fzpack_core::pernix::compression_scale_from_bmax(127.0f32, b8),
        Ok(1.0)
    );
    assert_eq!(scale_from_bmax(3.0f32, b1), Ok(3.0));
    assert_eq!(scale_from_bmax(0.0f32, b8), Ok(f32::EPSILON));
    assert_eq!(scale_from_bmax(-0.0f64, b8), Ok(f64::EPSILON));
    assert_eq!(
        fzpack_core::pernix::compression_scale_from_bmax(0.0f32, b8),
        Ok(8388608.0)
    );
    assert_eq!(
        fzpack_core::pernix::compression_scale_from_bmax(0.0f64, b8),
        Ok(4503599627370496.0)
    );
    for bad in [-1.0f32, f32::NAN, f32::INFINITY] {
        assert_eq!(scale_from_bmax(bad, b8), Err(Error::InvalidArgument));
    }
    assert_eq!(BitWidth::new(0), Err(Error::UnsupportedBitWidth));
}

#[test]
fn backend_statuses() {
    assert_eq!(
        Dispatcher::new(Backend::Fallback).unwrap().backend(),
        Backend::Fallback
    );
    assert_ne!(
        Dispatcher::new(Backend::Auto).unwrap().backend(),
        Backend::Auto
    );
    assert_eq!(
        Dispatcher::new(Backend::FallbackSimd),
        Err(Error::UnsupportedImplementation)
    );
    if cfg!(target_arch = "x86_64") {
        assert_eq!(
            Dispatcher::new(Backend::Arm64Neon),
            Err(Error::UnsupportedBackend)
        );
        assert_eq!(
            Dispatcher::new(Backend::Arm64Sve),
            Err(Error::UnsupportedBackend)
        );
    }
    if cfg!(target_arch = "aarch64") {
        // NEON is in `dispatchers()` (so every exhaustive check runs on it); SVE2 is −5.
        assert_eq!(
            Dispatcher::new(Backend::Arm64Neon).map(|d| d.backend()),
            Ok(Backend::Arm64Neon)
        );
        assert_eq!(
            Dispatcher::new(Backend::Arm64Sve),
            Err(Error::UnsupportedImplementation)
        );
        assert!(
            dispatchers()
                .iter()
                .any(|d| d.backend() == Backend::Arm64Neon)
        );
    }
}

/// 1-bit blocks: negative values become 0, decoding never sign-extends (spec §2).
#[test]
fn one_bit_special_case() {
    let d = Dispatcher::new(Backend::Fallback).unwrap();
    let bits = BitWidth::new(1).unwrap();
    let mut input = [0f32; 512];
    input[0] = -1.0;
    input[1] = 0.5; // tie → 0
    input[2] = 0.51;
    input[3] = 7.0;
    let mut block = [0u8; 64];
    d.compress_block(bits, BlockSize::B64, &input, 1.0, &mut block)
        .unwrap();
    assert_eq!(block[0], 0b1100);
    let mut out = [0f32; 512];
    d.decompress_block(bits, BlockSize::B64, &block, 2.0, &mut out, true)
        .unwrap();
    assert_eq!(&out[..4], &[0.0, 0.0, 2.0, 2.0]);
    // Unused type parameter check: PernixFloat is implemented for both types.
    assert_eq!(<f64 as PernixFloat>::BYTES, 8);
}
