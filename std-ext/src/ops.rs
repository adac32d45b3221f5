//! Compressed-domain arithmetic on SZp archives, `Vec`-returning: the [`fzpack_core::szp::ops`]
//! operations (add, sub, negate, integer scale, sum, statistics) with the output sized for the
//! caller, and sums of any number of archives.
//!
//! Archives combine when they share dtype, length, block size and the recorded quantizer bound:
//! fields compressed with the same `Config::abs(eb)` share it when `max|x| <= 2^18·eb` (f32;
//! `2^40·eb` for f64), and `Config::abs(eb).with_max_abs(M)` (the same `M` for every field)
//! gives it for any `|x| <= M`. The result's recorded bound is the accumulated bound (`bound_a + bound_b` for an
//! add); see `docs/szp-archive.md`, "Compressed-domain operations".
//!
//! ```
//! use fzpack::{ops, szp::{self, Config}};
//!
//! let a: Vec<f32> = (0..10_000).map(|i| (i as f32 * 0.001).sin() * 40.0).collect();
//! let b: Vec<f32> = (0..10_000).map(|i| (i as f32 * 0.002).cos() * 30.0).collect();
//! let cfg = Config::abs(1e-3).with_max_abs(64.0);
//! let (za, zb) = (szp::compress(&a, &cfg)?, szp::compress(&b, &cfg)?);
//! let zc = ops::add(&za, &zb)?;
//! let c: Vec<f32> = szp::decompress(&zc)?;
//! let bound = szp::header(&zc)?.bound(); // 2e-3
//! assert!((0..a.len()).all(|i| (a[i] as f64 + b[i] as f64 - c[i] as f64).abs() <= bound));
//! # Ok::<(), fzpack::Error>(())
//! ```

pub use fzpack_core::szp::ops::{MAX_TERMS, Stats, max_output_len};

use fzpack_core::szp::{self, ops as core_ops};

use crate::{Error, Result};

fn with_output(
    first: &[u8],
    f: impl Fn(&mut [u8]) -> core::result::Result<usize, szp::Error>,
) -> Result<Vec<u8>> {
    // Structure only (the core operation verifies every input's CRCs); an input the core
    // refuses before parsing (a `.fzm` archive) gets the core's error.
    let v = match szp::blocks::parse_with(first, szp::Verify::Skip) {
        Ok(v) => v,
        Err(e) => return Err(f(&mut []).err().unwrap_or(e).into()),
    };
    let cap = core_ops::max_output_len(v.n, v.header.block_size)
        .ok_or(Error::Szp(szp::Error::InvalidBlockSize))?;
    let mut out = vec![0u8; cap];
    let len = match f(&mut out) {
        // A result with missing values (format 3) adds their runs after the blocks, which
        // `max_output_len` does not count: the operation names the length it needs.
        Err(szp::Error::OutputTooSmall { needed }) if needed > cap => {
            out.resize(needed, 0);
            f(&mut out)?
        }
        r => r?,
    };
    out.truncate(len);
    Ok(out)
}

/// `a + b` as a new archive (bound `bound_a + bound_b`).
pub fn add(a: &[u8], b: &[u8]) -> Result<Vec<u8>> {
    with_output(a, |o| core_ops::add(a, b, o))
}

/// `a − b` (bound `bound_a + bound_b`).
pub fn sub(a: &[u8], b: &[u8]) -> Result<Vec<u8>> {
    with_output(a, |o| core_ops::sub(a, b, o))
}

/// `−a` (bound `bound_a`).
pub fn negate(a: &[u8]) -> Result<Vec<u8>> {
    with_output(a, |o| core_ops::negate(a, o))
}

/// `k·a` for an integer `k` (bound `|k| · bound_a`).
pub fn scale_int(a: &[u8], k: i64) -> Result<Vec<u8>> {
    with_output(a, |o| core_ops::scale_int(a, k, o))
}

/// `Σ cⱼ·aⱼ` for integer coefficients, 1..=[`MAX_TERMS`] archives.
pub fn linear(archives: &[&[u8]], coeffs: &[i64]) -> Result<Vec<u8>> {
    let first = archives.first().ok_or(Error::Szp(szp::Error::OpsMismatch {
        what: "archive count (none given)",
    }))?;
    with_output(first, |o| core_ops::linear(archives, coeffs, o))
}

/// `Σ aⱼ` over any number (≥ 1) of archives: groups of [`MAX_TERMS`] summed in the compressed
/// domain, then the partial sums (the same levels as one call: integer level sums are
/// associative, and an overflow anywhere is an error).
pub fn sum(archives: &[&[u8]]) -> Result<Vec<u8>> {
    if archives.len() <= MAX_TERMS {
        return linear(archives, &vec![1; archives.len()]);
    }
    let mut partial: Vec<Vec<u8>> = Vec::new();
    for group in archives.chunks(MAX_TERMS) {
        partial.push(sum(group)?);
    }
    let refs: Vec<&[u8]> = partial.iter().map(|p| p.as_slice()).collect();
    sum(&refs)
}

/// Compressed-domain statistics of one archive ([`Stats`]).
pub fn stats(archive: &[u8]) -> Result<Stats> {
    Ok(core_ops::stats(archive)?)
}

/// The sum of the decoded values computed from the levels ([`Stats::sum`]).
pub fn value_sum(archive: &[u8]) -> Result<f64> {
    Ok(core_ops::value_sum(archive)?)
}

/// The mean of the decoded values (`None` for an empty archive).
pub fn mean(archive: &[u8]) -> Result<Option<f64>> {
    Ok(core_ops::mean(archive)?)
}

/// The smallest and largest quantized level (`None` for an empty archive).
pub fn min_max_levels(archive: &[u8]) -> Result<Option<(i64, i64)>> {
    Ok(core_ops::min_max_levels(archive)?)
}
