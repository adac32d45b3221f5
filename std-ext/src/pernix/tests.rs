//! Stream and scale tests of the std PERNIX layer.

use super::*;
use crate::Error as FzError;
use crate::element::Element;
use fzpack_core::pernix::stream::unchecked_bmax_limit;

fn stream_scales(s: &[u8]) -> Vec<f64> {
    let h = StreamHeader::check(s, Verify::Skip).unwrap();
    h.scales(s).collect()
}

fn skip() -> Decoder {
    Decoder::new().verify(Verify::Skip)
}

/// The version 1 form of a version 2 stream: 24-byte header, the frames without chunk
/// checksums (what the version 1 writer produced for the same values).
pub(crate) fn to_v1(v2: &[u8]) -> Vec<u8> {
    let h = StreamHeader::check(v2, Verify::Checksums).unwrap();
    let v1h = StreamHeader {
        version: STREAM_VERSION_V1,
        chunk_frames: 0,
        ..h
    };
    let mut out = vec![0u8; 24];
    v1h.write(&mut out).unwrap();
    for unit in v2[h.header_len()..].chunks(h.unit_len().unwrap()) {
        out.extend_from_slice(&unit[..unit.len() - CHUNK_SUM_LEN]);
    }
    out
}

#[test]
fn header_layout_and_hostile_streams() {
    let x: Vec<f32> = (0..100).map(|i| i as f32 - 50.0).collect();
    let s = compress(&x, BitWidth::new(16).unwrap(), BlockSize::B64).unwrap();
    // 100 values, E = 32, 4 frames of 4 + 64 bytes in one chunk (1024 frames per chunk)
    assert_eq!(s.len(), 32 + 4 * 68 + 4);
    assert_eq!(&s[..8], b"FZPX\x02\x01\x10\x01");
    assert_eq!(u32::from_le_bytes(s[8..12].try_into().unwrap()), 64);
    assert_eq!(u32::from_le_bytes(s[12..16].try_into().unwrap()), 1024);
    assert_eq!(u64::from_le_bytes(s[16..24].try_into().unwrap()), 100);
    assert_eq!(
        u32::from_le_bytes(s[28..32].try_into().unwrap()),
        crc32fast::hash(&s[..28])
    );
    assert_eq!(
        f32::from_le_bytes(s[32..36].try_into().unwrap()),
        50.0 / 32767.0
    );
    let v1 = to_v1(&s);
    assert_eq!(v1.len(), 24 + 4 * 68);
    assert_eq!(&v1[..8], b"FZPX\x01\x01\x10\x01");
    let a: Vec<f32> = decompress(&s).unwrap();
    let b: Vec<f32> = decompress(&v1).unwrap();
    assert_eq!(a, b);
    assert_eq!(stream_scales(&s), stream_scales(&v1));
    for (stream, hdr) in [(&s, 32usize), (&v1, 24)] {
        let corrupt = |at: usize, v: u8| {
            let mut b = stream.clone();
            b[at] = v;
            decompress::<f32>(&b).unwrap_err()
        };
        for (at, v) in [
            (0, b'X'),
            (4, 3),
            (5, 9),
            (6, 0),
            (6, 25),
            (7, 0),
            (8, 65),
            (12, 1),
            (hdr + 3, 0xFF),
        ] {
            assert!(
                matches!(corrupt(at, v), FzError::Corrupt(_)),
                "v{} byte {at} = {v}",
                stream[4]
            );
        }
        assert!(matches!(
            decompress::<f64>(stream).unwrap_err(),
            FzError::DTypeMismatch { .. }
        ));
        for cut in [0, 23, 24, 31, stream.len() - 1] {
            assert!(decompress::<f32>(&stream[..cut]).is_err());
        }
        let mut long = stream.clone();
        long.push(0);
        assert!(decompress::<f32>(&long).is_err());
    }
    // a huge n with a tiny body is rejected without allocating (v1: no header checksum)
    let mut huge = v1.clone();
    huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(decompress::<f32>(&huge).is_err());
    huge[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(decompress::<f32>(&huge).is_err());
    // a block bit flip: the checksum names the chunk; skipping verification decodes it
    let mut flip = s.clone();
    flip[100] ^= 4;
    let e = decompress::<f32>(&flip).unwrap_err();
    assert!(
        e.to_string().contains("checksum mismatch in chunk 0"),
        "{e}"
    );
    assert!(inspect(&flip, Verify::Checksums).is_err() && inspect(&s, Verify::Checksums).is_ok());
    assert!(inspect(&flip, Verify::Skip).is_ok());
    let y: Vec<f32> = skip().to_vec(&flip).unwrap();
    assert_eq!(y.len(), 100);
    assert_ne!(y, a);
    // A chunk is decoded before its checksum is checked (from cache), but a corrupt chunk
    // still fails as a checksum mismatch, ahead of what the decoder itself rejects (here a
    // NaN scale in the second frame); without verification the scale is the error.
    let mut nan = s.clone();
    let fr1 = StreamHeader::check(&s, Verify::Checksums)
        .unwrap()
        .header_len()
        + 4
        + 64;
    nan[fr1..fr1 + 4].copy_from_slice(&f32::NAN.to_bits().to_le_bytes());
    let e = decompress::<f32>(&nan).unwrap_err();
    assert!(
        e.to_string().contains("checksum mismatch in chunk 0"),
        "{e}"
    );
    let e = skip().to_vec::<f32>(&nan).unwrap_err();
    assert!(e.to_string().contains("block 1 has scale"), "{e}");
    // a header flip under Verify::Skip is still checked structurally
    let mut hflip = s.clone();
    hflip[17] ^= 1; // n + 256: more blocks than the bytes hold
    assert!(decompress::<f32>(&hflip).is_err());
    assert!(skip().to_vec::<f32>(&hflip).is_err());
}

/// The fast path of `block_scales`: at and just below `unchecked_bmax_limit` (`T::MAX / 4`,
/// the worst case of the proof) and at scattered magnitudes below it, every width's extreme codes
/// decode finitely with the scale it returns, and that scale is `scale_from_bmax`'s own
/// (no step down was needed).
#[test]
fn block_scales_below_quarter_max_need_no_check() {
    fn check<T: Element>(quarter: T) {
        let mut b = quarter.to_bits_u64();
        let mut samples = Vec::new();
        for _ in 0..64 {
            samples.push(T::from_bits_u64(b));
            b -= 1; // the ulps just below the threshold
        }
        let mut b = quarter.to_bits_u64();
        while b > (1 << (8 * T::BYTES - 12)) {
            b -= b / 7 + 1; // then scattered down to small magnitudes
            samples.push(T::from_bits_u64(b));
        }
        for n in 1..=24u8 {
            let bits = BitWidth::new(n).unwrap();
            let (lo, hi) = if n == 1 {
                (0, 1)
            } else {
                (-(1i32 << (n - 1)), (1i32 << (n - 1)) - 1)
            };
            for &bmax in &samples {
                let (scale, inv) = block_scales(bmax, bits).unwrap();
                // (tiny maxima, whose inverse overflows, take the bmax = 0 scale)
                let s0 = scale_from_bmax(bmax, bits).unwrap();
                if matches!(inverse_scale(s0), Ok(i) if i.is_positive_finite()) {
                    assert_eq!(scale, s0);
                }
                let neg = T::from_bits_u64(bmax.to_bits_u64() ^ (1 << (8 * T::BYTES - 1)));
                for x in [bmax, neg] {
                    let y = T::dequantize(x.quantize(inv, lo, hi), scale);
                    assert!(y.is_finite(), "N={n} bmax={bmax:?}: {y:?}");
                }
            }
        }
    }
    let (l32, l64) = (unchecked_bmax_limit::<f32>(), unchecked_bmax_limit::<f64>());
    assert_eq!(f32::from_bits(l32 as u32), f32::MAX / 4.0);
    assert_eq!(f64::from_bits(l64), f64::MAX / 4.0);
    check::<f32>(f32::from_bits(l32 as u32));
    check::<f64>(f64::from_bits(l64));
}

#[test]
fn chunks_split_and_stream_by_units() {
    // 64-byte blocks at 8 bits: E = 64, 1024 frames per chunk, 65536 values per chunk
    let x: Vec<f32> = (0..200_003)
        .map(|i| ((i % 977) as f32).sin() * 3.0)
        .collect();
    let (bits, bs) = (BitWidth::new(8).unwrap(), BlockSize::B64);
    let s = compress(&x, bits, bs).unwrap();
    let h = StreamHeader::check(&s, Verify::Checksums).unwrap();
    assert_eq!(h.units(), Some(4));
    let serial = Dispatcher::new(Backend::Fallback).unwrap();
    let enc = Encoder::new(bits, bs).dispatcher(&serial);
    assert_eq!(enc.to_vec(&x).unwrap(), s);
    let mut w = Vec::new();
    assert_eq!(
        Encoder::new(bits, bs).write_to(&x, &mut w).unwrap(),
        s.len() as u64
    );
    assert_eq!(w, s);
    let whole: Vec<f32> = decompress(&s).unwrap();
    let mut pieces = Vec::new();
    for u in 0..4 {
        let (bytes, vals) = h.unit_span(u..u + 1);
        let mut v = vec![0f32; vals.len()];
        Decoder::new()
            .dispatcher(&serial)
            .units(&h, &s[bytes], u, &mut v)
            .unwrap();
        pieces.extend(v);
    }
    assert_eq!(pieces, whole);
    // swapping two whole chunks of equal size is caught (the index is in the checksum)
    let (a, _) = h.unit_span(0..1);
    let (b, _) = h.unit_span(1..2);
    let mut swapped = s.clone();
    swapped[a.clone()].copy_from_slice(&s[b.clone()]);
    swapped[b].copy_from_slice(&s[a]);
    assert!(decompress::<f32>(&swapped).is_err());
}

#[test]
fn extreme_magnitudes_never_decode_to_infinity() {
    fn check<T: Element>(max: T, neg: T) {
        let x = vec![max, neg, max, T::ZERO, neg];
        for bits in BitWidth::all() {
            for bs in [BlockSize::B64, BlockSize::B1024] {
                let s = compress(&x, bits, bs).unwrap();
                let y: Vec<T> = decompress(&s).unwrap();
                let scales = stream_scales(&s);
                for (a, b) in x.iter().zip(&y) {
                    assert!(b.is_finite(), "bits {}: {a:?} -> {b:?}", bits.get());
                    let bound = block_error_bound(scales[0], bits);
                    assert!(
                        (a.to_f64() - b.to_f64()).abs() <= bound,
                        "bits {}: {a:?} -> {b:?}, bound {bound}",
                        bits.get()
                    );
                }
            }
        }
    }
    check(f32::MAX, -f32::MAX);
    check(f64::MAX, -f64::MAX);
}

#[test]
fn bound_holds_for_every_width_and_tiny_blocks() {
    let mut x: Vec<f64> = (0..3000).map(|i| ((i * 7) % 101) as f64 - 50.3).collect();
    x[5] = 1e-310; // a subnormal block neighbour
    x.extend([1e-310, -2e-310, 0.0, 5e-320]);
    for bits in BitWidth::all() {
        let s = compress(&x, bits, BlockSize::B128).unwrap();
        let y: Vec<f64> = decompress(&s).unwrap();
        let scales = stream_scales(&s);
        let e = elements_per_block(bits, BlockSize::B128);
        for (i, (a, b)) in x.iter().zip(&y).enumerate() {
            let bound = block_error_bound(scales[i / e], bits);
            assert!(
                (a - b).abs() <= bound,
                "bits {} i {i}: {a} vs {b}",
                bits.get()
            );
        }
    }
}
