//! Compressed-domain statistics of one archive: its levels decoded by prefix sum, no floats
//! materialized.

use super::super::blocks;
use super::super::fzm::FZM_MAGIC;
use super::super::missing;
use super::super::{DType, Error};
use super::block::{CHUNK, recon_finite, unpack_combine};
use super::input::{FZM_UNSUPPORTED, INTERP_UNSUPPORTED, is_interp, trailer};
use crate::bits::{HEAD_GROUP_MAX, payload_len, read_heads};

/// Compressed-domain statistics of one archive (levels decoded by prefix sum, no floats
/// materialized).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Element type.
    pub dtype: DType,
    /// Number of values (missing ones included).
    pub n: usize,
    /// Missing values (NaN, ±inf; stored exactly in version 3 archives): left out of every
    /// statistic below.
    pub missing: u64,
    /// The quantizer bound `eb` (a level `q` decodes to `T((q·2)·eb)`).
    pub quant_eb: f64,
    /// The archive's absolute bound per element ([`super::super::Header::bound`]).
    pub bound: f64,
    /// `Σ q` over the values that are not missing.
    pub level_sum: i128,
    /// Smallest and largest level of the values that are not missing; `None` when there are
    /// none.
    pub min_max_levels: Option<(i64, i64)>,
}

impl Stats {
    /// `Σ x'` computed from the levels: `(Σ q)·2·eb` (within `n · bound` of the exact sum of
    /// the original data for strict archives, plus the f64 rounding of the product).
    pub fn sum(&self) -> f64 {
        self.level_sum as f64 * 2.0 * self.quant_eb
    }
    /// `sum / (n − missing)`, the mean of the values that are not missing (`None` when there
    /// are none); within `bound` of the original mean.
    pub fn mean(&self) -> Option<f64> {
        let k = (self.n as u64).saturating_sub(self.missing);
        (k > 0).then(|| self.sum() / k as f64)
    }
    /// The decoded values of the smallest and largest level (f64 of the level's
    /// reconstruction in the element type: exactly what decompression yields).
    pub fn min_max(&self) -> Option<(f64, f64)> {
        let r = |q: i64| {
            let v = q as f64 * 2.0 * self.quant_eb;
            match self.dtype {
                DType::F32 => f64::from(v as f32),
                DType::F64 => v,
            }
        };
        self.min_max_levels.map(|(lo, hi)| (r(lo), r(hi)))
    }
}

/// [`Stats`] of one (untrusted) archive in one pass over its payload.
pub fn stats(archive: &[u8]) -> Result<Stats, Error> {
    if archive.starts_with(&FZM_MAGIC) {
        return Err(FZM_UNSUPPORTED);
    }
    if is_interp(archive) {
        return Err(INTERP_UNSUPPORTED);
    }
    let v = blocks::parse(archive)?;
    let bs = v.header.block_size as usize;
    // Missing values (version 3): their levels are stand-ins, skipped as the runs say.
    let mut spans = missing::spans(v.header.dtype, v.ext.runs);
    let (mut ms, mut me) = spans.next().unwrap_or((u64::MAX, u64::MAX));
    let group = v.header.head_group().min(HEAD_GROUP_MAX);
    let (mut s, mut lo, mut hi) = (0i128, i64::MAX, i64::MIN);
    let mut off = 0usize;
    let mut acc = [0i64; CHUNK];
    let mut heads = [0i64; HEAD_GROUP_MAX];
    let mut tlen = 0usize;
    for (b, &w) in v.widths.iter().enumerate() {
        let len = v.n.saturating_sub(b * bs).min(bs);
        // Block-head layout: at a group's first block, skip the previous group's trailer and
        // read this group's (it follows the group's payloads).
        // `group` is a power of two.
        if group > 0 && b & (group - 1) == 0 {
            off += tlen;
            let cnt = group.min(v.widths.len() - b);
            let ws = v.widths.get(b..b + cnt).unwrap_or(&[]);
            let vals = v.n.saturating_sub(b * bs).min(cnt * bs);
            let at = off + blocks::run_bytes(ws, bs, vals);
            let hs = heads.get_mut(..cnt).unwrap_or(&mut []);
            tlen = read_heads(v.payload.get(at..).unwrap_or(&[]), hs).map_err(trailer)?;
        }
        let p = v.payload.get(off..).unwrap_or(&[]);
        let mut q = if group > 0 {
            heads.get(b & (group - 1)).copied().unwrap_or(0)
        } else {
            0
        };
        let mut i = 0;
        while i < len {
            let m = (len - i).min(CHUNK);
            let a = acc.get_mut(..m).unwrap_or_default();
            unpack_combine(p, u32::from(w), i, 1, a, true);
            let mut at = (b * bs + i) as u64;
            for &d in a.iter() {
                q = q.wrapping_add(d);
                if at >= ms {
                    if at < me {
                        at += 1;
                        continue;
                    }
                    (ms, me) = spans.next().unwrap_or((u64::MAX, u64::MAX));
                    if at >= ms {
                        at += 1;
                        continue; // runs are at least one value long: `at < me` here
                    }
                }
                s += i128::from(q);
                lo = lo.min(q);
                hi = hi.max(q);
                at += 1;
            }
            i += m;
        }
        off += payload_len(w, len);
    }
    // As its decoder does, refuse an archive with a level whose value is not finite (the
    // reconstruction is monotone in |q|: the extremes decide).
    let present = (v.n as u64).saturating_sub(v.header.missing_count) > 0;
    if present
        && !(recon_finite(lo, v.header.quant_eb, v.header.dtype)
            && recon_finite(hi, v.header.quant_eb, v.header.dtype))
    {
        return Err(Error::Implausible {
            what: "a level whose value is not finite in the element type",
        });
    }
    Ok(Stats {
        dtype: v.header.dtype,
        n: v.n,
        missing: v.header.missing_count,
        quant_eb: v.header.quant_eb,
        bound: v.header.bound(),
        level_sum: s,
        min_max_levels: present.then_some((lo, hi)),
    })
}

/// The sum of the decoded values, from the levels ([`Stats::sum`]).
pub fn value_sum(archive: &[u8]) -> Result<f64, Error> {
    stats(archive).map(|s| s.sum())
}

/// The mean of the decoded values ([`Stats::mean`]); `None` for an empty archive.
pub fn mean(archive: &[u8]) -> Result<Option<f64>, Error> {
    stats(archive).map(|s| s.mean())
}

/// The smallest and largest level ([`Stats::min_max_levels`]).
pub fn min_max_levels(archive: &[u8]) -> Result<Option<(i64, i64)>, Error> {
    stats(archive).map(|s| s.min_max_levels)
}
