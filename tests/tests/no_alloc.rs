//! Proof that the fzpack-core APIs never allocate: they run under a global allocator that
//! counts every allocation of this thread, and the count must be zero. A negative control
//! shows the guard does see allocations.

use fzpack_core::pernix::{
    Backend, BitWidth, BlockSize, Dispatcher, compression_scale_from_bmax, elements_per_block,
    scale_from_bmax,
};
use fzpack_tests::alloc_guard::{CountingAlloc, count_allocations};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

#[test]
fn negative_control_sees_an_allocation() {
    let (v, n) = count_allocations(|| vec![1u8; 100]);
    assert_eq!(v.len(), 100);
    assert!(n >= 1, "the allocation guard missed a Vec allocation");
}

#[test]
fn pernix_never_allocates() {
    // Buffers are made before arming the guard.
    let input32: Vec<f32> = (0..8192 * 3)
        .map(|i| (i as f32 * 0.01).sin() * 3.0)
        .collect();
    let input64: Vec<f64> = input32.iter().map(|&x| f64::from(x)).collect();
    let mut bytes = vec![0u8; 1024 * 3];
    let mut out32 = vec![0f32; 8192 * 3];
    let mut out64 = vec![0f64; 8192 * 3];
    let backends: Vec<Backend> = Backend::ALL
        .into_iter()
        .filter(|b| Dispatcher::new(*b).is_ok())
        .collect();
    let ((), n) = count_allocations(|| {
        for &b in &backends {
            let d = Dispatcher::new(b).unwrap();
            for bits in BitWidth::all() {
                for bs in BlockSize::ALL {
                    let epb = elements_per_block(bits, bs);
                    let s32 = scale_from_bmax(3.0f32, bits).unwrap();
                    let i32_ = compression_scale_from_bmax(3.0f32, bits).unwrap();
                    let s64 = scale_from_bmax(3.0f64, bits).unwrap();
                    let i64_ = compression_scale_from_bmax(3.0f64, bits).unwrap();
                    let nb = bs.bytes() * 3;
                    d.compress_blocks(bits, bs, &input32[..epb * 3], i32_, &mut bytes[..nb], 3)
                        .unwrap();
                    d.decompress_blocks(bits, bs, &bytes[..nb], s32, &mut out32, 3, true)
                        .unwrap();
                    d.compress_block(bits, bs, &input64, i64_, &mut bytes)
                        .unwrap();
                    d.decompress_block(bits, bs, &bytes, s64, &mut out64, false)
                        .unwrap();
                    // Error paths must not allocate either.
                    assert!(
                        d.compress_blocks(bits, bs, &input32, f32::NAN, &mut bytes, 3)
                            .is_err()
                    );
                }
            }
        }
    });
    assert_eq!(n, 0, "the PERNIX API allocated {n} times");
}

#[test]
fn szp_never_allocates() {
    use fzpack_core::szp::{self, Config, StreamEncoder};
    let data: Vec<f32> = (0..5000).map(|i| (i as f32 * 0.01).sin() * 30.0).collect();
    let data64: Vec<f64> = data.iter().map(|&x| f64::from(x)).collect();
    let mut archive = vec![0u8; szp::max_compressed_len(5000, 1, szp::DType::F64).unwrap()];
    let mut out32 = vec![0f32; 5000];
    let mut out64 = vec![0f64; 5000];
    let ((), n) = count_allocations(|| {
        for bs in [1u32, 7, 128, 4096] {
            let cfg = Config::noa(1e-3).with_block_size(bs);
            let len = szp::compress(&data, &cfg, &mut archive).unwrap();
            szp::decompress(&archive[..len], &mut out32).unwrap();
            let len = szp::compress(
                &data64,
                &Config::abs(1e-6).with_block_size(bs),
                &mut archive,
            )
            .unwrap();
            szp::decompress(&archive[..len], &mut out64).unwrap();
            szp::decompress_with(
                szp::Kernel::best(),
                &archive[..len],
                &mut out64,
                szp::Verify::Skip,
            )
            .unwrap();
            szp::blocks::parse(&archive[..len]).unwrap();
            // A corrupt chunk: the checksum error allocates nothing either.
            archive[len - 1] ^= 1;
            assert!(szp::decompress(&archive[..len], &mut out64).is_err());
            let cfg = Config::abs(1e-3).with_block_size(bs).with_max_abs(30.0);
            let mut enc = StreamEncoder::<f32>::new(&mut archive, data.len(), &cfg).unwrap();
            for block in data.chunks(bs as usize) {
                enc.push_block(block).unwrap();
            }
            enc.finish().unwrap();
            // Error paths.
            assert!(szp::decompress(&archive[..10], &mut out32).is_err());
            assert!(szp::compress(&data, &Config::abs(-1.0), &mut archive).is_err());
        }
    });
    assert_eq!(n, 0, "the SZp API allocated {n} times");
}

#[test]
fn szp_ops_never_allocate() {
    use fzpack_core::szp::{self, Config, ops};
    let a: Vec<f32> = (0..5000).map(|i| (i as f32 * 0.01).sin() * 30.0).collect();
    let b: Vec<f32> = (0..5000).map(|i| (i as f32 * 0.02).cos() * 20.0).collect();
    let cap = szp::max_compressed_len(5000, 1, szp::DType::F64).unwrap();
    let (mut za, mut zb, mut out) = (vec![0u8; cap], vec![0u8; cap], vec![0u8; cap]);
    let ((), n) = count_allocations(|| {
        for bs in [1u32, 7, 128, 513, 4096] {
            let cfg = Config::abs(1e-3).with_block_size(bs).with_max_abs(32.0);
            let la = szp::compress(&a, &cfg, &mut za).unwrap();
            let lb = szp::compress(&b, &cfg, &mut zb).unwrap();
            let (x, y) = (&za[..la], &zb[..lb]);
            ops::add(x, y, &mut out).unwrap();
            ops::sub(x, y, &mut out).unwrap();
            ops::negate(x, &mut out).unwrap();
            ops::scale_int(x, 7, &mut out).unwrap();
            ops::sum(&[x, y, x], &mut out).unwrap();
            ops::linear_reference(&[x, y], &[2, -1], &mut out).unwrap();
            ops::stats(x).unwrap();
            ops::mean(x).unwrap();
            // Error paths.
            assert!(ops::add(x, &y[..10], &mut out).is_err());
            assert!(ops::add(x, y, &mut out[..20]).is_err());
            assert!(ops::scale_int(x, i64::MAX, &mut out).is_err());
        }
    });
    assert_eq!(n, 0, "szp::ops allocated {n} times");
}

/// The `.pnx` stream writer and reader (header, batches of chunks, CRCs, a partial last block,
/// a corrupt chunk's error) on caller buffers only.
#[test]
fn pnx_stream_never_allocates() {
    use fzpack_core::pernix::Verify;
    use fzpack_core::pernix::stream::{Scratch, StreamHeader, StreamReader, StreamWriter};
    let x: Vec<f32> = (0..150_001)
        .map(|i| (i as f32 * 0.01).sin() * 3.0)
        .collect();
    let bits = BitWidth::new(8).unwrap();
    let h = StreamHeader::new::<f32>(bits, BlockSize::B64, x.len() as u64);
    let mut s = vec![0u8; h.stream_len().unwrap()];
    let mut scaled = vec![0f32; h.unit_values()];
    let mut blocks = vec![0u8; h.unit_frames() * 64];
    let mut back = vec![0f32; x.len()];
    let mut tail = vec![0f32; h.elements_per_block()];
    let d = Dispatcher::new(Backend::Auto).unwrap();
    let ((), n) = count_allocations(|| {
        let at = h.write(&mut s).unwrap();
        let mut w = StreamWriter::new(&d, h);
        let (mut o, per) = (at, 2 * h.unit_values());
        for vals in x.chunks(per) {
            let sc = Scratch::new(&mut scaled, &mut blocks);
            o += w.batch(vals, &mut s[o..], sc).unwrap();
        }
        let h = StreamHeader::check(&s, Verify::Checksums).unwrap();
        let mut r = StreamReader::new(&d, h, Verify::Checksums);
        r.batch(&s[at..], &mut back, &mut tail).unwrap();
        assert!(h.scales(&s).all(|v| v > 0.0));
        s[at + 5] ^= 1;
        let r = StreamReader::new(&d, h, Verify::Checksums);
        assert!(r.units_at(0, &s[at..], &mut back, &mut tail).is_err());
        s[at + 5] ^= 1;
    });
    assert_eq!(n, 0, "the .pnx stream allocated {n} times");
    assert!(
        x.iter()
            .zip(&back)
            .all(|(a, b)| (a - b).abs() <= 3.0 / 127.0)
    );
}
