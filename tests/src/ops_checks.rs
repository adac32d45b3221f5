//! Checks of `fzpack_core::szp::ops` shared by `tests/tests/szp_ops.rs` and the `szp_ops` fuzz
//! target: every operation against the scalar reference (same bytes, same error) and against
//! the float reference (decompress, operate in f64, compare within the documented bound).

use fzpack_core::szp::{self, Config, DType, Error, SzpFloat, ops};

/// Compresses `data` (a test helper: panics on error).
pub fn encode<T: SzpFloat>(data: &[T], cfg: &Config) -> Result<Vec<u8>, Error> {
    let cap = szp::max_compressed_len(data.len(), cfg.block_size, T::DTYPE).unwrap_or(1 << 16);
    let mut out = vec![0u8; cap];
    let len = szp::compress(data, cfg, &mut out)?;
    out.truncate(len);
    Ok(out)
}

/// Decodes to f64 (the archive's own dtype).
pub fn decode_f64(archive: &[u8]) -> Result<Vec<f64>, Error> {
    let h = szp::header(archive)?;
    let n = usize::try_from(h.n).map_err(|_| Error::Corrupt("n"))?;
    let v = szp::blocks::parse(archive)?; // bounds n by the archive's size
    let _ = v;
    Ok(match h.dtype {
        DType::F32 => {
            let mut o = vec![0f32; n];
            szp::decompress(archive, &mut o)?;
            o.into_iter().map(f64::from).collect()
        }
        DType::F64 => {
            let mut o = vec![0f64; n];
            szp::decompress(archive, &mut o)?;
            o
        }
    })
}

/// Runs `ops::linear` and `ops::linear_reference` with generous buffers; asserts they agree
/// (bytes or error) and that nothing is written past the reported length's buffer. Returns the
/// archive or the error.
pub fn linear_checked(archives: &[&[u8]], coeffs: &[i64]) -> Result<Vec<u8>, Error> {
    let n = archives
        .first()
        .and_then(|a| szp::blocks::parse(a).ok())
        .map_or(0, |v| v.n);
    let cap = ops::max_output_len(n, 1).unwrap_or(1 << 20).min(1 << 26);
    let mut fast = vec![0xA5u8; cap + 8];
    let mut reference = vec![0x5Au8; cap + 8];
    let f = ops::linear(archives, coeffs, &mut fast[..cap]);
    let r = ops::linear_reference(archives, coeffs, &mut reference[..cap]);
    // The portable path (the scalar reference of the SIMD combines) writes what the fastest
    // path writes.
    let mut portable = vec![0x3Cu8; cap];
    let p = ops::linear_on(szp::Kernel::Portable, archives, coeffs, &mut portable);
    match (&f, &p) {
        (Ok(a), Ok(b)) => assert!(
            a == b && fast[..*a] == portable[..*b],
            "fastest and portable paths differ"
        ),
        _ => assert_eq!(f, p, "fastest and portable paths differ"),
    }
    assert!(
        fast[cap..].iter().all(|&b| b == 0xA5),
        "wrote past the output"
    );
    match (f, r) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "fast and reference lengths differ");
            assert!(
                fast[..a] == reference[..b],
                "fast and reference bytes differ"
            );
            // The result is a valid archive in the inputs' layout; a too-small buffer reports
            // the exact need.
            let v = szp::blocks::parse(&fast[..a]).expect("the result parses");
            if let Some(first) = archives.first().and_then(|x| szp::header(x).ok()) {
                assert_eq!(v.header.layout, first.layout, "the result's layout");
            }
            if a > 0 {
                let mut small = vec![0u8; a - 1];
                assert_eq!(
                    ops::linear(archives, coeffs, &mut small),
                    Err(Error::OutputTooSmall { needed: a })
                );
            }
            fast.truncate(a);
            Ok(fast)
        }
        (Err(e1), Err(e2)) => {
            assert_eq!(e1, e2, "fast and reference errors differ");
            Err(e1)
        }
        (f, r) => panic!("fast {:?} vs reference {:?}", f.map(|_| ()), r.map(|_| ())),
    }
}

/// The float reference: decode every input, combine in f64, and compare the operation's decode
/// within the result's recorded bound; for strict inputs also against the original data
/// (`originals`, when given) within the bound exactly.
pub fn check_against_floats(
    archives: &[&[u8]],
    coeffs: &[i64],
    result: &[u8],
    originals: Option<&[Vec<f64>]>,
) {
    let h = szp::header(result).expect("result header");
    let bound = h.bound();
    let mut expect = bound;
    for (a, &c) in archives.iter().zip(coeffs) {
        expect -= c.unsigned_abs() as f64 * szp::header(a).unwrap().bound();
    }
    assert!(
        expect.abs() <= bound * 1e-12,
        "recorded bound {bound} is not the accumulated bound"
    );
    let got = decode_f64(result).expect("result decodes");
    let ins: Vec<Vec<f64>> = archives.iter().map(|a| decode_f64(a).unwrap()).collect();
    for i in 0..got.len() {
        let want: f64 = ins.iter().zip(coeffs).map(|(v, &c)| c as f64 * v[i]).sum();
        let err = (got[i] - want).abs();
        // f64 rounding of the reference sum itself
        let slack = want.abs() * 1e-15 * archives.len() as f64;
        assert!(
            err <= bound + slack,
            "element {i}: |ops - float ops| = {err} > bound {bound}"
        );
    }
    if let Some(orig) = originals
        && h.strict
    {
        for i in 0..got.len() {
            // The exact linear combination of the original data (f64 rounding aside; the
            // originals are f32/f64 values and coefficients small in these tests).
            let want: f64 = orig.iter().zip(coeffs).map(|(v, &c)| c as f64 * v[i]).sum();
            let err = (got[i] - want).abs();
            assert!(
                err <= bound,
                "element {i}: |ops - exact| = {err} > strict bound {bound}"
            );
        }
    }
}

/// Fuzz entry: the first bytes choose dtype, block size, bound and operation; the rest are
/// values of two (or three) same-length fields compressed on a shared grid (`with_max_abs`),
/// and, half the time, a byte-flipped copy as a hostile input. Ops must agree with the
/// reference and with the float reference, or fail with a documented error; never panic.
pub fn szp_ops(data: &[u8]) {
    fn run<T: SzpFloat>(data: &[u8], head: &[u8; 4], from: fn(&[u8]) -> T, size: usize) {
        let bs = u32::from(head[1]) * 17 % 4096 + 1;
        let eb = 10f64.powi(i32::from(head[2] % 12) - 8);
        let vals: Vec<T> = data
            .chunks_exact(size)
            .map(from)
            .filter(|x| x.to_f64().is_finite())
            .take(6000)
            .collect();
        let n = vals.len() / 2;
        let (a, b) = (&vals[..n], &vals[n..2 * n]);
        let mag = vals.iter().map(|x| x.to_f64().abs()).fold(0.0, f64::max);
        let layout = if head[0] & 4 != 0 {
            szp::Layout::Heads
        } else {
            szp::Layout::Fzgm
        };
        let cfg = Config::abs(eb)
            .with_block_size(bs)
            .with_max_abs(mag)
            .with_layout(layout);
        let (Ok(za), Ok(zb)) = (encode(a, &cfg), encode(b, &cfg)) else {
            return; // e.g. BoundBelowPrecision / LevelOverflow for this bound: the codec's case
        };
        let k = i64::from(head[3] as i8);
        let cases: [(&[&[u8]], &[i64]); 5] = [
            (&[&za, &zb], &[1, 1]),
            (&[&za, &zb], &[1, -1]),
            (&[&za], &[-1]),
            (&[&za], &[k]),
            (&[&za, &zb, &za], &[1, 1, 1]),
        ];
        let orig: [Vec<f64>; 2] = [
            a.iter().map(|x| x.to_f64()).collect(),
            b.iter().map(|x| x.to_f64()).collect(),
        ];
        // One operation per input, chosen by the head byte (running all five made each input
        // cost ~0.5 ms under the sanitizers, 1.8k exec/s on an AVX2-only Zen 1: the fuzz
        // budget could not reach 10^6 inputs).
        let i = usize::from(head[0] >> 3) % cases.len();
        let (ars, cs) = cases[i];
        match linear_checked(ars, cs) {
            Ok(r) => {
                let o: Vec<Vec<f64>> = ars
                    .iter()
                    .map(|x| orig[usize::from(x.as_ptr() != za.as_ptr())].clone())
                    .collect();
                // Exact-data comparison only where the f64 sum of the originals is exact
                // enough (|k| small); the float reference always.
                check_against_floats(ars, cs, &r, (i != 3 || k.abs() <= 1).then_some(&o));
            }
            Err(Error::LevelOverflow { .. }) => {}
            Err(e) => panic!("unexpected error {e}"),
        }
        if head[0] & 2 != 0 && !za.is_empty() {
            let mut bad = za.clone();
            let at = usize::from(head[3]) * 31 % bad.len();
            bad[at] ^= head[2] | 1;
            let _ = linear_checked(&[&bad, &zb], &[1, 1]);
            let _ = linear_checked(&[&bad], &[3]);
            let _ = ops::stats(&bad);
        }
        let s = ops::stats(&za).expect("stats of a valid archive");
        let d = decode_f64(&za).unwrap();
        if let Some((lo, hi)) = s.min_max() {
            let dlo = d.iter().copied().fold(f64::INFINITY, f64::min);
            let dhi = d.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!((lo, hi), (dlo, dhi), "stats min/max differ from the decode");
        }
    }
    let Some((h, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    if h[0] & 1 == 0 {
        run::<f32>(rest, h, |c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]), 4);
    } else {
        run::<f64>(
            rest,
            h,
            |c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
            8,
        );
    }
}

/// Re-seals a hand-edited version 2 archive: `a` holds the header (its first 48 bytes), the
/// width bytes and the payload; anything after the payload the widths imply is dropped, then the
/// header CRC is recomputed and the chunk CRCs appended, so tests can reach the code behind the
/// checksums with crafted widths and payloads. Returns `false` (leaving `a` alone) when the
/// archive is too short for its header or widths, or its widths imply a payload far larger
/// than `a`.
pub fn reseal(a: &mut Vec<u8>) -> bool {
    let Ok(h) = szp::Header::read_with(a, szp::Verify::Skip) else {
        return false;
    };
    if h.version != szp::FORMAT_VERSION {
        return false;
    }
    let bs = h.block_size as usize;
    let Ok(n) = usize::try_from(h.n) else {
        return false;
    };
    let nb = n.div_ceil(bs);
    // A hostile n gives a huge nb: checked, so the helper itself never overflows.
    let Some(start) = szp::HEADER_LEN.checked_add(nb) else {
        return false;
    };
    if a.len() < start {
        return false;
    }
    let group = h.head_group();
    let bytes = if group == 0 {
        szp::blocks::run_bytes(&a[szp::HEADER_LEN..start], bs, n)
    } else {
        // Block-head layout: the trailers' width bytes must be there to size the body.
        match szp::blocks::body_len(&a[szp::HEADER_LEN..start], bs, n, group, &a[start..]) {
            Ok(b) => b,
            Err(_) => return false,
        }
    };
    if bytes > a.len().saturating_mul(64).max(1 << 16) {
        return false; // keep crafted inputs small
    }
    a.resize(start + bytes, 0);
    let sum = szp::fzm::crc32(&a[..48]);
    a[48..52].copy_from_slice(&sum.to_le_bytes());
    let mut sums = vec![0u8; szp::blocks::sums_len(nb, h.chunk_shift)];
    szp::blocks::seal_with(
        &a[szp::HEADER_LEN..start],
        &a[start..],
        n,
        bs,
        h.chunk_shift,
        group,
        &mut sums,
    );
    a.extend_from_slice(&sums);
    true
}
