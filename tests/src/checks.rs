//! Differential checks shared by the cargo-fuzz targets (`fuzz/`) and the stable proptests
//! (`tests/tests/fuzz_checks.rs`). Each takes arbitrary bytes, derives a case from them, and
//! panics with a description when two paths disagree or a promise is broken.

use fzpack_core::pernix::{
    Backend, BitWidth, BlockSize, Dispatcher, PernixFloat, elements_per_block,
};

/// Reads bytes from the front of the fuzz input, yielding zeros once it runs out.
pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    /// The next byte (0 when exhausted).
    pub fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    /// The next 8 bytes as a little-endian u64 (zero-padded).
    pub fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        for x in &mut b {
            *x = self.u8();
        }
        u64::from_le_bytes(b)
    }
}

/// Every PERNIX dispatcher this build and CPU offers, the fallback first.
pub fn pernix_dispatchers() -> Vec<Dispatcher> {
    Backend::ALL
        .into_iter()
        .filter(|b| *b != Backend::Auto)
        .filter_map(|b| Dispatcher::new(b).ok())
        .collect()
}

/// `pernix_paths`: arbitrary floats (NaN, ±inf, huge, subnormal), bit width, block size, run
/// length, scale and sign mode → every available backend produces the fallback's bytes and
/// bits, for compression and for decompression of both the fallback's blocks and raw bytes.
pub fn pernix_paths(data: &[u8]) {
    let mut b = Bytes(data);
    let head = b.u8();
    if head & 1 == 0 {
        pernix_case::<f32>(&mut b, head);
    } else {
        pernix_case::<f64>(&mut b, head);
    }
}

fn pernix_case<T: PernixFloat>(b: &mut Bytes<'_>, head: u8) {
    let bits = BitWidth::new(b.u8() % 24 + 1).unwrap_or(BitWidth::MIN);
    let bs = BlockSize::ALL[usize::from(b.u8()) % 5];
    let blocks = usize::from(head >> 1 & 3) + 1;
    let sign = head & 8 != 0;
    // Scales: either raw bits (anything, including invalid ones) or a tame value.
    let raw_scale = b.u64();
    let inv = if head & 16 != 0 {
        T::from_bits_u64(raw_scale)
    } else {
        tame::<T>(raw_scale)
    };
    let scale = if head & 32 != 0 {
        T::from_bits_u64(b.u64())
    } else {
        tame::<T>(b.u64())
    };
    let n = elements_per_block(bits, bs) * blocks;
    let input: Vec<T> = (0..n)
        .map(|_| {
            if b.0.is_empty() {
                T::ZERO
            } else if T::BYTES == 4 {
                T::from_bits_u64(b.u64() & 0xffff_ffff)
            } else {
                T::from_bits_u64(b.u64())
            }
        })
        .collect();
    let raw_blocks: Vec<u8> = (0..bs.bytes() * blocks)
        .map(|i| (i as u8).wrapping_mul(151) ^ head)
        .collect();

    let ds = pernix_dispatchers();
    let reference = &ds[0];
    let mut want = vec![0x5Au8; bs.bytes() * blocks];
    let want_status = reference.compress_blocks(bits, bs, &input, inv, &mut want, blocks);
    for d in &ds[1..] {
        let mut got = vec![0xA5u8; bs.bytes() * blocks];
        let status = d.compress_blocks(bits, bs, &input, inv, &mut got, blocks);
        assert_eq!(
            status,
            want_status,
            "{}: compress status",
            d.backend().name()
        );
        if status.is_ok() {
            assert!(
                got == want,
                "{}: compressed bytes differ (N={} BS={} blocks={blocks})",
                d.backend().name(),
                bits.get(),
                bs.bytes()
            );
        }
    }
    for source in [&want, &raw_blocks] {
        let mut want_v = vec![T::ZERO; n];
        let want_status =
            reference.decompress_blocks(bits, bs, source, scale, &mut want_v, blocks, sign);
        for d in &ds[1..] {
            let mut got = vec![T::from_bits_u64(0x7ff4_5a5a_5a5a_5a5a); n];
            let status = d.decompress_blocks(bits, bs, source, scale, &mut got, blocks, sign);
            assert_eq!(
                status,
                want_status,
                "{}: decompress status",
                d.backend().name()
            );
            if status.is_ok() {
                for (i, (x, y)) in got.iter().zip(&want_v).enumerate() {
                    assert_eq!(
                        x.to_bits_u64(),
                        y.to_bits_u64(),
                        "{}: decoded element {i} differs",
                        d.backend().name()
                    );
                }
            }
        }
    }
}

/// A finite positive scale spread over many magnitudes, from 8 arbitrary bytes.
fn tame<T: PernixFloat>(r: u64) -> T {
    let mant = (r & 0xffff) as f64 / 65536.0 + 1.0;
    let exp = ((r >> 16) % 80) as i32 - 40;
    let v = mant * 2f64.powi(exp);
    if T::BYTES == 4 {
        T::from_bits_u64(u64::from((v as f32).to_bits()))
    } else {
        T::from_bits_u64(v.to_bits())
    }
}
