//! The core's `.pnx` stream writer and reader on their own (`fzpack_core::pernix::stream`):
//! header bytes and CRC, batches crossing chunk boundaries equal one batch, a corrupted chunk
//! is the reader's error in every batching, and the writer's input and buffer checks. Here
//! rather than in the core, whose tests use no `std`.

use fzpack_core::pernix::stream::{
    Scratch, StreamError, StreamHeader, StreamReader, StreamWriter, block_error_bound_of,
};
use fzpack_core::pernix::{Backend, Dispatcher};
use fzpack_core::types::{BitWidth, BlockSize, Verify};

/// CRC-32 (zlib) of `data`, bitwise: the checksum the format names, written out here so the
/// test does not lean on the implementation it checks.
fn crc32(parts: &[&[u8]]) -> u32 {
    let mut c = !0u32;
    for part in parts {
        for &b in *part {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = (c >> 1) ^ (0xEDB8_8320 & (c & 1).wrapping_neg());
            }
        }
    }
    !c
}

/// A whole stream of `x` by batches of `per` chunks (serial), with chunk-sized scratch.
fn encode(d: &Dispatcher, x: &[f32], bits: u8, per: usize) -> Vec<u8> {
    let h = StreamHeader::new::<f32>(BitWidth::new(bits).unwrap(), BlockSize::B64, x.len() as u64);
    let mut s = vec![0u8; h.stream_len().unwrap()];
    let mut at = h.write(&mut s).unwrap();
    let mut w = StreamWriter::new(d, h);
    let mut scaled = vec![0f32; h.unit_values()];
    let mut blocks = vec![0u8; h.unit_frames() * 64];
    for vals in x.chunks(per * h.unit_values()) {
        let sc = Scratch::new(&mut scaled, &mut blocks);
        at += w.batch(vals, &mut s[at..], sc).unwrap();
    }
    assert_eq!(at, s.len());
    s
}

/// Decodes a whole stream by batches of `per` chunks.
fn decode(d: &Dispatcher, s: &[u8], per: usize, v: Verify) -> Result<Vec<f32>, StreamError> {
    let h = StreamHeader::check(s, v)?;
    let mut r = StreamReader::new(d, h, v);
    let mut out = vec![0f32; h.n as usize];
    let mut tail = vec![0f32; h.elements_per_block()];
    let (mut at, mut done) = (h.header_len(), 0);
    let units = h.units().unwrap();
    let mut u = 0;
    while u < units {
        let (bytes, vals) = h.unit_span(u..(u + per).min(units));
        done += r.batch(&s[bytes.clone()], &mut out[vals], &mut tail)?;
        at = bytes.end;
        u += per;
    }
    assert_eq!((at, done), (s.len(), out.len()));
    Ok(out)
}

fn field(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i % 977) as f32).sin() * 3.0 + (i / 5000) as f32)
        .collect()
}

#[test]
fn header_bytes_and_crc() {
    let h = StreamHeader::new::<f32>(BitWidth::new(16).unwrap(), BlockSize::B64, 100);
    let mut b = [0u8; 32];
    assert_eq!(h.write(&mut b), Ok(32));
    assert_eq!(&b[..8], b"FZPX\x02\x01\x10\x01");
    assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 1024);
    assert_eq!(
        u32::from_le_bytes(b[28..32].try_into().unwrap()),
        crc32(&[&b[..28]])
    );
    assert_eq!(StreamHeader::parse(&b, Verify::Checksums), Ok(h));
    b[20] ^= 1;
    assert_eq!(
        StreamHeader::parse(&b, Verify::Checksums),
        Err(StreamError::HeaderChecksum)
    );
    assert!(StreamHeader::parse(&b, Verify::Skip).is_ok());
    assert_eq!(h.stream_len(), Some(32 + 4 * 68 + 4));
}

/// Batches of 1, 2 and 3 chunks (and a serial backend) give the bytes and values of one
/// batch over all chunks; the chunk CRC equals the zlib CRC-32's over the index and frames.
#[test]
fn batches_cross_chunk_boundaries() {
    let x = field(200_003); // 4 chunks of 65536 values at 8 bits, the last partial
    let auto = Dispatcher::new(Backend::Auto).unwrap();
    let scalar = Dispatcher::new(Backend::Fallback).unwrap();
    let whole = encode(&auto, &x, 8, usize::MAX / (1 << 20));
    let h = StreamHeader::check(&whole, Verify::Checksums).unwrap();
    assert_eq!(h.units(), Some(4));
    for per in [1, 2, 3] {
        assert_eq!(encode(&auto, &x, 8, per), whole, "per {per}");
        assert_eq!(encode(&scalar, &x, 8, per), whole, "scalar per {per}");
    }
    let (b1, _) = h.unit_span(1..2);
    let crc = crc32(&[&1u64.to_le_bytes(), &whole[b1.start..b1.end - 4]]);
    assert_eq!(crc.to_le_bytes(), whole[b1.end - 4..b1.end]);
    let all = decode(&auto, &whole, 4, Verify::Checksums).unwrap();
    for per in [1, 2, 3] {
        assert_eq!(decode(&auto, &whole, per, Verify::Checksums).unwrap(), all);
        assert_eq!(
            decode(&scalar, &whole, per, Verify::Checksums).unwrap(),
            all
        );
    }
    let worst = h
        .scales(&whole)
        .fold(0f64, |m, s| m.max(block_error_bound_of(h.dtype, s, h.bits)));
    assert!(
        x.iter()
            .zip(&all)
            .all(|(a, b)| f64::from((a - b).abs()) <= worst)
    );
    assert_eq!(h.scales(&whole).count(), h.blocks().unwrap());
}

/// A flipped bit in chunk 2 is the reader's error (naming the chunk) in every batching,
/// and `Verify::Skip` decodes it without one; `verify_chunks` finds it too.
#[test]
fn corrupt_chunk_is_the_readers_error() {
    let x = field(200_003);
    let d = Dispatcher::new(Backend::Auto).unwrap();
    let s = encode(&d, &x, 8, 4);
    let h = StreamHeader::check(&s, Verify::Checksums).unwrap();
    let (b2, _) = h.unit_span(2..3);
    let mut bad = s.clone();
    bad[b2.start + 100] ^= 0x10;
    for per in [1, 2, 4] {
        match decode(&d, &bad, per, Verify::Checksums) {
            Err(StreamError::ChunkChecksum { chunk: 2, .. }) => {}
            other => panic!("per {per}: {other:?}"),
        }
        let y = decode(&d, &bad, per, Verify::Skip).unwrap();
        assert_ne!(y, decode(&d, &s, per, Verify::Skip).unwrap());
    }
    assert!(matches!(
        h.verify_chunks(&bad),
        Err(StreamError::ChunkChecksum { chunk: 2, .. })
    ));
    assert_eq!(h.verify_chunks(&s), Ok(()));
    // a NaN scale in a verified chunk: the checksum is reported; skipped: the scale
    let mut nan = s.clone();
    nan[32 + 68..32 + 72].copy_from_slice(&f32::NAN.to_bits().to_le_bytes());
    assert!(matches!(
        decode(&d, &nan, 1, Verify::Checksums),
        Err(StreamError::ChunkChecksum { chunk: 0, .. })
    ));
    assert!(matches!(
        decode(&d, &nan, 1, Verify::Skip),
        Err(StreamError::BadScale { block: 1, .. })
    ));
}

#[test]
fn writer_rejects_bad_input_and_buffers() {
    let d = Dispatcher::new(Backend::Auto).unwrap();
    let h = StreamHeader::new::<f32>(BitWidth::new(8).unwrap(), BlockSize::B64, 100);
    let mut s = vec![0u8; h.stream_len().unwrap()];
    let mut x = field(100);
    x[70] = f32::INFINITY;
    let (mut a, mut b) = (vec![0f32; 128], vec![0u8; 128]);
    let w = StreamWriter::new(&d, h);
    assert_eq!(
        w.units_at(0, &x, &mut s[32..], Scratch::new(&mut a, &mut b)),
        Err(StreamError::NonFinite { index: 70 })
    );
    x[70] = 0.0;
    // no room for the padded last block
    assert_eq!(
        w.units_at(0, &x, &mut s[32..], Scratch::new(&mut [], &mut [])),
        Err(StreamError::Buffer)
    );
    assert_eq!(
        w.units_at(0, &x[..99], &mut s[32..], Scratch::new(&mut a, &mut b)),
        Err(StreamError::Buffer)
    );
    assert!(
        w.units_at(0, &x, &mut s[32..], Scratch::new(&mut a, &mut b))
            .is_ok()
    );
}
