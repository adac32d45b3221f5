//! What the two hand-written x86_64 SZp leaves (`avx2/szp.rs`, `avx512/szp.rs`) share: the
//! scan result and the scalars of the scan invariants, the block buffers, the encoder
//! invariants, the step loop, the block steps around a leaf's scan, packers and decoder (strict
//! check, width, packer choice, portable fallbacks), and [`scan_kernel_methods!`], the
//! `SzpKernel` methods built from them.
//!
//! A leaf provides, in its own module: a `Scan` type (its loop invariants, the quantizer bound
//! among them) and `fn scan<T>(&Scan, block, Option<seed>, &mut Scratch) -> (ScanResult,
//! bool, seed)` (the bool: the deltas are in `Scratch::p.u` as u64, else in `Scratch::u32s`;
//! seed `None`: a block-head layout block, whose deltas start from its own first level — the
//! leaf returns it from the scan's first lane, or near a tie the exact quantize of the first
//! value),
//! `fn pack64(u, v, w, out)` and `fn pack32(v, w, out)` for widths 1..=24, and
//! `fn decode_block<T>(payload, w, f64(seed), 2eb, out)` for the blocks [`decodes`] accepts —
//! all `#[target_feature]` functions of the leaf's features — imports `SzpFloat` and
//! [`Scratch`], and invokes [`scan_encoder!`] (its `scan_encode`) next to the impl that
//! invokes [`scan_kernel_methods!`].

use crate::arch::generic::szp::{Buffers, first_violation, pack, quantize_block};
use crate::arch::szp::{BUF, BlockError, Quant};
use crate::bits::{self, payload_len};
use crate::types::{DType, SzpFloat};

/// What the scan of one block found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScanResult {
    /// OR of the zigzagged deltas (its bit length is the block width).
    pub any: u64,
    /// Some lane was near a rounding tie: the levels must be recomputed exactly.
    pub near_tie: bool,
    /// Some reconstruction missed the bound (or was NaN).
    pub violation: bool,
}

/// The scalars of a leaf's scan invariants for quantizer bound `eb` and inputs with
/// `|x| <= max_abs`: `2·eb` (exact), `1/(2·eb)`, `max|y| = max_abs/(2·eb)` and
/// `far = ½ − 2⁻⁴⁷·max|y|` (a lane is near a tie when `|y − rne(y)| >= far`: twice the tie
/// distance the proof of `quantize_block` needs, `2⁻⁴⁸·|y|`, for every lane at once).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScanScalars {
    pub e2: f64,
    pub r: f64,
    pub ymax: f64,
    pub far: f64,
}

impl ScanScalars {
    /// The scalars, or `None` when `2·eb` or `1/(2·eb)` is not finite or `max|y| >= ylimit`
    /// (the leaf's bound for levels its scan computes exactly).
    #[inline]
    pub(crate) fn new(eb: f64, max_abs: f64, ylimit: f64) -> Option<ScanScalars> {
        let e2 = 2.0 * eb;
        let r = 1.0 / e2;
        let ymax = max_abs * r;
        if !(e2.is_finite() && r.is_finite() && ymax < ylimit) {
            return None;
        }
        Some(ScanScalars {
            e2,
            r,
            ymax,
            far: 0.5 - ymax * 7.105_427_357_601_002e-15,
        })
    }
}

/// The threshold of the cheap strict check for elements of type `T` with `|x| <= xmax`, or
/// `None` where it would flag more than about one value in 2^11 (then the exact per-lane check
/// is cheaper than the fallbacks).
///
/// For a finite `x` with `|x| <= X`, `y = fl(x·r)`, `r = fl(1/e2)`, `q = rne(y)` and
/// `d = |y − q|` (exact: `y − rne(y)` is representable), the reconstruction
/// `w = T(fl(q·e2))` of [`crate::bits::reconstruct`] satisfies, with `u = 2⁻⁵³`, `u_T` the
/// unit roundoff of `T` (`2⁻²⁴` for f32, 0 for f64) and the absolute errors of underflow:
///
/// ```text
/// |x − q·e2| <= e2·d + |x|·(2u + u²) + e2·2⁻¹⁰⁷⁵         (the product and r's rounding)
/// |q·e2 − fl(q·e2)| <= u·|q·e2| + 2⁻¹⁰⁷⁵,  |q·e2| <= X + eb + (tiny)
/// |fl(q·e2) − w| <= u_T·|fl(q·e2)| + 2⁻¹⁵⁰                (f32 narrowing; 0 for f64)
/// ```
///
/// so `|x − w| <= e2·d + K` with `K <= (X + eb)·(2⁻⁵⁰ + u_T)·(1 + 2⁻¹³) + (e2 + 1)·2⁻¹⁰²⁰
/// + 2⁻¹⁴⁸`, the value computed below (rounded up by its own 1.0001 factors). Then
/// `d <= safe = fl(fl(bound − K)/e2)·(1 − 2⁻⁴⁰) < (bound − K)/e2` gives `|x − w| <= bound`,
/// and `fl(|x − w|) <= bound` (rounding is monotone and `bound` is an f64): the spec's check
/// passes. Lanes with `|x| > X` or non-finite `x` are flagged by the loop's compare, so an
/// input that breaks the plan's `max_abs` still reaches the exact check.
pub(crate) fn strict_by_fraction<T: SzpFloat>(
    eb: f64,
    e2: f64,
    bound: f64,
    xmax: f64,
) -> Option<(f64, f64)> {
    let ut = match T::DTYPE {
        DType::F32 => 5.960_464_477_539_063e-8, // 2^-24
        DType::F64 => 0.0,
    };
    let rel = 8.881_784_197_001_252e-16 + ut * 1.0001; // 2^-50 + u_T
    let tiny = (e2 + 1.0) * 8.900_295_434_028_806e-308 + 3.5e-45; // (e2+1)·2^-1020 + 2^-148
    let k = (xmax + eb) * 1.0001 * rel * 1.0001 + tiny;
    let safe = (bound - k) / e2 * (1.0 - 9.094_947_017_729_282e-13); // (1 − 2^-40)
    // Flag at most ~2^-11 of the values (a fraction lands in [safe, ½] with probability
    // about 2·(½ − safe) on rough data).
    (safe.is_finite() && xmax.is_finite() && safe >= 0.5 - 2.441_406_25e-4).then_some((safe, xmax))
}

/// The cheap strict check of a strict plan for each element type (see
/// [`strict_by_fraction`]): `Some((safe, xmax))` when every lane with `|x| <= xmax` and
/// `|y − rne(y)| <= safe` provably meets the bound, so a leaf's loop compares only those two
/// (the exact check then runs only on flagged blocks); `None` (or a plan that is not strict):
/// the loop reconstructs every lane. Made before the element type is known.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cheap {
    f32: Option<(f64, f64)>,
    f64: Option<(f64, f64)>,
}

impl Cheap {
    /// The thresholds of quantizer `eb` (`e2 = 2·eb`), `bound` and `|x| <= max_abs`.
    #[inline]
    pub(crate) fn new(strict: bool, eb: f64, e2: f64, bound: f64, max_abs: f64) -> Cheap {
        Cheap {
            f32: strict
                .then(|| strict_by_fraction::<f32>(eb, e2, bound, max_abs))
                .flatten(),
            f64: strict
                .then(|| strict_by_fraction::<f64>(eb, e2, bound, max_abs))
                .flatten(),
        }
    }

    /// The threshold for elements of type `T`.
    #[inline(always)]
    pub(crate) fn of<T: SzpFloat>(self) -> Option<(f64, f64)> {
        match T::DTYPE {
            DType::F32 => self.f32,
            DType::F64 => self.f64,
        }
    }
}

/// The encoder invariants: the leaf's fast scan, or `None` when it cannot prove its levels
/// equal the spec's (then the block goes through the portable kernels).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Enc<S> {
    pub q: Quant,
    pub scan: Option<S>,
}

/// The leaves' block buffers: the portable kernels' (exact levels, u64 deltas) and u32 deltas.
pub(crate) struct Scratch {
    pub p: Buffers,
    pub u32s: [u32; BUF],
}

impl Scratch {
    #[inline(always)]
    pub(crate) fn new() -> Scratch {
        Scratch {
            p: Buffers::new(),
            u32s: [0; BUF],
        }
    }
}

/// Whether the leaves' SIMD decoders handle a block of `len` values at width `w` from level
/// `seed`: widths 1..=24 whose i32 prefix sums are exact, `len·2^(w−1) < 2³¹` (every level
/// is the seed plus a sum of at most `len` deltas of magnitude below `2^(w−1)`), and
/// `|seed| < 2⁵²`, so that `f64(seed) + f64(prefix)` is the exact level, as the reference's
/// `f64(q)` is.
#[inline]
pub(crate) fn decodes(w: u8, len: usize, seed: i64) -> bool {
    (1..=24).contains(&w) && (len as u64) << (w - 1) < 1 << 31 && seed.unsigned_abs() < 1 << 52
}

/// The seed of a block after its narrow scan from `seed` (`None`: the block-head layout's
/// head, `first` being the scan's first-lane level): `seed`, or the head — the first lane's
/// level, except near a tie, where it may differ from the spec's and the first value is
/// quantized exactly.
#[inline(always)]
pub(crate) fn seed_after_scan<T: SzpFloat>(
    seed: Option<i64>,
    res: &ScanResult,
    first: i32,
    block: &[T],
    eb: f64,
) -> i64 {
    match seed {
        Some(v) => v,
        None if res.near_tie => crate::arch::szp::head_of(block, eb),
        None => i64::from(first),
    }
}

/// A scan's result made exact: with a lane near a tie, the exact levels and deltas go to
/// `s.p.q` / `s.p.u` and their OR replaces `res.any`.
#[inline(always)]
pub(crate) fn exact_on_tie<T: SzpFloat>(
    eb: f64,
    seed: i64,
    block: &[T],
    s: &mut Scratch,
    res: ScanResult,
) -> ScanResult {
    if !res.near_tie {
        return res;
    }
    ScanResult {
        any: exact_levels(eb, seed, block, s),
        ..res
    }
}

/// The exact levels and deltas of `block` into `s.p.q` / `s.p.u`; their OR. Out of line and
/// cold (a block near a tie, or a flagged strict block): the portable kernel inlined into a
/// leaf's block loop made it too large to keep the scan and packer inlined and its constants
/// in registers.
#[cold]
#[inline(never)]
fn exact_levels<T: SzpFloat>(eb: f64, seed: i64, block: &[T], s: &mut Scratch) -> u64 {
    let len = block.len().min(BUF);
    let (qb, ub) = (
        s.p.q.get_mut(..len).unwrap_or_default(),
        s.p.u.get_mut(..len).unwrap_or_default(),
    );
    quantize_block(eb, seed, block, qb, ub)
}

/// The exact strict check of a flagged block (out of line and cold, as [`exact_levels`]):
/// the exact levels unless `exact` (already in `s.p.q`), then the first element that misses
/// the bound.
#[cold]
#[inline(never)]
fn exact_check<T: SzpFloat>(
    q: &Quant,
    seed: i64,
    block: &[T],
    s: &mut Scratch,
    exact: bool,
) -> Result<(), BlockError> {
    if !exact {
        exact_levels(q.eb, seed, block, s);
    }
    let qb = s.p.q.get(..block.len().min(BUF)).unwrap_or_default();
    match first_violation(q.eb, q.bound, block, qb) {
        Some(i) => Err(BlockError::Violation(i)),
        None => Ok(()),
    }
}

/// The portable packer for widths above 24 (the deltas in `s.p.u`, or in `s.u32s` unless
/// `in_u64`); out of line and cold, as [`exact_levels`].
#[cold]
#[inline(never)]
fn pack_wide(s: &mut Scratch, len: usize, in_u64: bool, w: u32, dst: &mut [u8]) {
    let (qb, ub, vb) = (
        s.p.q.get_mut(..len).unwrap_or_default(),
        s.p.u.get_mut(..len).unwrap_or_default(),
        s.u32s.get(..len).unwrap_or_default(),
    );
    if !in_u64 {
        for (d, &v) in ub.iter_mut().zip(vb.iter()) {
            *d = u64::from(v);
        }
    }
    pack(ub, w, dst, qb);
}

/// One block's encoder after its scan (`res` exact, see [`exact_on_tie`]; the deltas in `s.p.u`
/// when `in_u64`, else in `s.u32s`): the exact strict check where the scan flagged a
/// violation or a tie, the width, and the packing — `pack64(u, v, w, out)` or
/// `pack32(v, w, out)` for widths 1..=24 (`v` the u32 buffer), the portable packer above.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the block, its seed and scan, and the leaf's packers
pub(crate) fn encode_scanned<T: SzpFloat>(
    q: &Quant,
    block: &[T],
    seed: i64,
    dst: &mut [u8],
    s: &mut Scratch,
    (res, in_u64): (ScanResult, bool),
    pack64: impl FnOnce(&[u64], &mut [u32], u32, &mut [u8]),
    pack32: impl FnOnce(&[u32], u32, &mut [u8]),
) -> Result<u8, BlockError> {
    let len = block.len().min(BUF);
    if q.strict && (res.violation || res.near_tie) {
        exact_check(q, seed, block, s, res.near_tie)?;
    }
    let w = bits::width(res.any);
    let cost = payload_len(w, len);
    let dst = dst.get_mut(..cost).ok_or(BlockError::Short(cost))?;
    let w32 = u32::from(w);
    match (in_u64, w) {
        (_, 0) => {}
        (true, 1..=24) => pack64(
            s.p.u.get(..len).unwrap_or_default(),
            s.u32s.get_mut(..len).unwrap_or_default(),
            w32,
            dst,
        ),
        (false, 1..=24) => pack32(s.u32s.get(..len).unwrap_or_default(), w32, dst),
        _ => pack_wide(s, len, in_u64, w32, dst),
    }
    Ok(w)
}

/// Calls `f(i, r)` for the `N`-value steps of a leaf's loop over `len` values: `r = N` (a
/// constant, so full steps need no mask arithmetic) for the full ones, then `r < N` for a
/// partial last step.
#[inline(always)]
pub(crate) fn each_step<const N: usize>(len: usize, mut f: impl FnMut(usize, usize)) {
    let full = len / N * N;
    let mut i = 0;
    while i < full {
        f(i, N);
        i += N;
    }
    if i < len {
        f(i, len - i);
    }
}

/// A leaf's `fn scan_encode<T>(&Scan, &Quant, block, Option<seed>, dst, &mut Scratch) ->
/// Result<(width, seed), BlockError>` under `$features`: the leaf's `scan` (seed `None`: the
/// head from the scan's first lane), then [`encode_scanned`] with the leaf's packers — the one
/// body behind both `encode` and `encode_block` of [`scan_kernel_methods!`]. Invoked once in
/// each leaf module.
macro_rules! scan_encoder {
    ($features:literal) => {
        /// Scans and encodes one block (`x86_64::szp::scan_encoder!`).
        #[target_feature(enable = $features)]
        fn scan_encode<T: SzpFloat>(
            sc: &Scan,
            q: &$crate::arch::szp::Quant,
            x: &[T],
            seed: Option<i64>,
            dst: &mut [u8],
            s: &mut Scratch,
        ) -> Result<(u8, i64), $crate::arch::szp::BlockError> {
            let (res, in_u64, seed) = scan(sc, x, seed, s);
            let w = $crate::arch::x86_64::szp::encode_scanned(
                q,
                x,
                seed,
                dst,
                s,
                (res, in_u64),
                |u, v, w, out| pack64(u, v, w, out),
                |v, w, out| pack32(v, w, out),
            )?;
            Ok((w, seed))
        }
    };
}
pub(crate) use scan_encoder;

/// The `SzpKernel` methods of a leaf built as the module docs say (all but `encoder` and
/// `stats`): the types, the scratch, the run loops under `$features`, and `width`, `encode`,
/// `decode` through the leaf's functions, each compiled in a `#[target_feature]` function of
/// its own (the portable kernels where the leaf's scan does not apply). Only for tokens whose
/// existence proves `$features`.
macro_rules! scan_kernel_methods {
    ($features:literal) => {
        type Enc = $crate::arch::x86_64::szp::Enc<Scan>;
        type Scratch = $crate::arch::x86_64::szp::Scratch;

        #[inline(always)]
        fn scratch(self) -> Self::Scratch {
            $crate::arch::x86_64::szp::Scratch::new()
        }
        $crate::arch::szp::target_runs!($features);

        #[inline(always)]
        fn encode_block<T: SzpFloat>(
            self,
            e: &Self::Enc,
            block: &[T],
            heads: bool,
            dst: &mut [u8],
            s: &mut Self::Scratch,
        ) -> Result<(u8, i64), $crate::arch::szp::BlockError> {
            match &e.scan {
                // A head comes from the scan's first lane (`scan_encode`).
                // SAFETY: the token (`self`) proves the CPU supports `$features`.
                Some(sc) => unsafe { scan_encode(sc, &e.q, block, (!heads).then_some(0), dst, s) },
                None => {
                    let seed = if heads {
                        $crate::arch::szp::head_of(block, e.q.eb)
                    } else {
                        0
                    };
                    $crate::arch::generic::szp::portable_encode(&e.q, block, seed, dst, &mut s.p)
                        .map(|w| (w, seed))
                }
            }
        }

        #[inline(always)]
        fn quant(e: &Self::Enc) -> $crate::arch::szp::Quant {
            e.q
        }
        $crate::arch::szp::block_methods! {
            width: |e, block, seed, s| {
                #[target_feature(enable = $features)]
                fn run<T: SzpFloat>(sc: &Scan, x: &[T], seed: i64, s: &mut Scratch) -> u8 {
                    $crate::bits::width(scan(sc, x, Some(seed), s).0.any)
                }
                match &e.scan {
                    // SAFETY: the token (`self`) proves the CPU supports `$features`.
                    Some(sc) => unsafe { run(sc, block, seed, s) },
                    None => {
                        $crate::arch::generic::szp::portable_width(e.q.eb, block, seed, &mut s.p)
                    }
                }
            },
            encode: |e, block, seed, dst, s| match &e.scan {
                // SAFETY: the token (`self`) proves the CPU supports `$features`.
                Some(sc) => unsafe { scan_encode(sc, &e.q, block, Some(seed), dst, s) }
                    .map(|(w, _)| w),
                None => {
                    $crate::arch::generic::szp::portable_encode(&e.q, block, seed, dst, &mut s.p)
                }
            },
            decode: |eb, w, seed, src, out, s| {
                #[target_feature(enable = $features)]
                fn run<T: SzpFloat>(
                    eb: f64,
                    w: u8,
                    seed: i64,
                    src: &[u8],
                    out: &mut [T],
                    q: &mut [i64; $crate::arch::szp::BUF],
                ) {
                    use $crate::arch::generic::szp::{decode_with, scale_levels};
                    use $crate::arch::x86_64::szp::decodes;
                    // The leaf's decoder where `decodes` allows, else the portable one.
                    let e2 = 2.0 * eb;
                    if w != 0 && e2.is_finite() && decodes(w, out.len(), seed) {
                        decode_block(src, w, seed as f64, e2, out);
                    } else {
                        decode_with(eb, w, seed, src, out, q, scale_levels);
                    }
                }
                // SAFETY: the token (`self`) proves the CPU supports `$features`.
                unsafe { run(eb, w, seed, src, out, &mut s.p.q) }
            },
        }
    };
}
pub(crate) use scan_kernel_methods;

#[cfg(test)]
pub(crate) mod tests {
    use super::{ScanResult, strict_by_fraction};
    use crate::bits::misses;
    use crate::types::SzpFloat;

    /// Round to nearest, ties to even, for `|y| < 2^52` (as `vroundpd` does).
    fn rne(y: f64) -> f64 {
        const B: f64 = 4_503_599_627_370_496.0; // 2^52
        if y >= 0.0 {
            (y + B) - B
        } else {
            -((-y + B) - B)
        }
    }

    /// The proof of [`strict_by_fraction`] checked on samples: wherever the threshold applies,
    /// every `x` with `|x| <= xmax` whose fraction is within it passes the spec's exact check,
    /// near ties (the worst case) and at the largest magnitude included; and the threshold
    /// does apply at the usual bounds (else the fast loop never runs).
    fn sound<T: SzpFloat>(seed: u64, rel_lo: i32, rel_hi: i32) {
        let mut s = seed;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let (mut applied, mut near) = (0u32, 0u32);
        for _ in 0..4000 {
            let xmax = f64::from_bits(((next() % 80 + 983) << 52) | (next() >> 12)); // 2^-40..2^40
            let k = rel_lo + (next() % (rel_hi - rel_lo) as u64) as i32;
            let eb = xmax * 2f64.powi(-k) * (1.0 + (next() >> 11) as f64 / 2f64.powi(53));
            // The untightened bound (the threshold's worst case) or a tightened quantizer.
            let bound = if next() & 1 == 0 {
                eb
            } else {
                eb * (1.0 + 2f64.powi(-20))
            };
            let e2 = 2.0 * eb;
            let r = 1.0 / e2;
            let Some((safe, xm)) = strict_by_fraction::<T>(eb, e2, bound, xmax) else {
                continue;
            };
            applied += 1;
            let top = ((xmax * r) as u64) as f64;
            for j in 0..64 {
                // Levels spread up to the largest; the fraction just below a tie.
                let lvl = if j == 0 {
                    top - 1.0
                } else {
                    (((next() >> 11) as f64 / 2f64.powi(53) * top) as u64) as f64
                };
                let t = (next() >> 11) as f64 / 2f64.powi(53) * 2f64.powi(-((next() % 40) as i32));
                let sign = if next() & 1 == 0 { 1.0 } else { -1.0 };
                let x = T::from_f64(sign * (lvl + 0.5 - t) * e2);
                let xf = x.to_f64();
                if xf.abs() > xm {
                    continue;
                }
                let y = xf * r;
                let q = rne(y);
                if (y - q).abs() <= safe {
                    near += u32::from((y - q).abs() > 0.49);
                    assert!(
                        !misses(x, q as i64, eb, bound),
                        "x {xf:e} eb {eb:e} bound {bound:e} safe {safe} xmax {xmax:e}"
                    );
                }
            }
        }
        assert!(
            applied > 1000,
            "the threshold applied to only {applied} of 4000 plans"
        );
        assert!(
            near > 1000,
            "only {near} samples near a tie within the threshold"
        );
    }

    #[test]
    #[cfg_attr(miri, ignore = "4000 sampled plans: too slow for Miri")]
    fn fraction_threshold_is_sound_f32() {
        // Bounds from 2^-6 to 2^-21 of the magnitude (f32 precision is 2^-24).
        sound::<f32>(0x9E37_79B9_7F4A_7C15, 6, 22);
    }

    #[test]
    #[cfg_attr(miri, ignore = "4000 sampled plans: too slow for Miri")]
    fn fraction_threshold_is_sound_f64() {
        sound::<f64>(0xD1B5_4A32_D192_ED03, 6, 40);
    }

    /// The loop's side of the cheap check, where the public API cannot reach it (the planner's
    /// tightened quantizer keeps the threshold above ½), for a leaf whose `scan(eb, strict,
    /// xmax, block)` scans a 16-value f32 block from seed 0 with bound = quantizer `eb` and
    /// returns its f32 threshold and the result: with an untightened bound the threshold is
    /// just below ½, and a block must be flagged for the exact check when a fraction lies
    /// between it and ½, a value exceeds `max_abs`, or a value is NaN or infinite (at any
    /// lane, the last included); a block of small fractions must not be; nothing is flagged
    /// without `strict`.
    pub(crate) fn threshold_flags(
        scan: impl Fn(f64, bool, f64, &[f32]) -> (Option<(f64, f64)>, ScanResult),
    ) {
        let (eb, xmax) = (1e-3, 4.0);
        let (cheap, _) = scan(eb, true, xmax, &[0.0; 16]);
        let (safe, _) = cheap.expect("the cheap check applies");
        assert!(safe < 0.5 && safe > 0.5 - 1e-3, "threshold {safe}");
        let base: [f32; 16] = core::array::from_fn(|i| (i as f32 * 3.0 + 0.1) * 0.002);
        let (_, r) = scan(eb, true, xmax, &base);
        assert!(
            !r.violation && !r.near_tie,
            "small fractions flagged: {r:?}"
        );
        for k in [5, 15] {
            // A fraction of 0.49995: above the threshold, below the tie test's.
            let mut b = base;
            b[k] = (7.0 + 0.49995) * 0.002;
            let (_, r) = scan(eb, true, xmax, &b);
            assert!(
                r.violation && !r.near_tie,
                "fraction past the threshold at {k}: {r:?}"
            );
            let (_, r) = scan(eb, false, xmax, &b);
            assert!(!r.violation, "flagged without strict");
        }
        for (x, what) in [
            (4.5f32, "above max_abs"),
            (-4.5, "below -max_abs"),
            (f32::NAN, "NaN"),
            (f32::INFINITY, "inf"),
        ] {
            for k in [0, 11, 15] {
                let mut b = base;
                b[k] = x;
                assert!(
                    scan(eb, true, xmax, &b).1.violation,
                    "{what} at {k} not flagged"
                );
            }
        }
    }
}
