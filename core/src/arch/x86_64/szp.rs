//! What the two hand-written x86_64 SZp leaves (`avx2/szp.rs`, `avx512/szp.rs`) share: the
//! scan result and the scalars of the scan invariants, the block buffers, the encoder
//! invariants, the step loop, the block steps around a leaf's scan, packers and decoder (strict
//! check, width, packer choice, portable fallbacks), and [`scan_kernel_methods!`], the
//! `SzpKernel` methods built from them.
//!
//! A leaf provides, in its own module: a `Scan` type (its loop invariants, the quantizer bound
//! among them) and `fn scan<T>(&Scan, block, seed, &mut Scratch) -> (ScanResult, bool)` (the
//! bool: the deltas are in `Scratch::p.u` as u64, else in `Scratch::u32s`),
//! `fn pack64(u, v, w, out)` and `fn pack32(v, w, out)` for widths 1..=24, and
//! `fn decode_block<T>(payload, w, f64(seed), 2eb, out)` for the blocks [`decodes`] accepts —
//! all `#[target_feature]` functions of the leaf's features — and imports `SzpFloat` and
//! [`Scratch`].

use crate::arch::generic::szp::{Buffers, first_violation, pack, quantize_block};
use crate::arch::szp::{BUF, BlockError, Quant};
use crate::bits::{self, payload_len};
use crate::types::SzpFloat;

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
    let len = block.len().min(BUF);
    let (qb, ub) = (
        s.p.q.get_mut(..len).unwrap_or_default(),
        s.p.u.get_mut(..len).unwrap_or_default(),
    );
    let any = quantize_block(eb, seed, block, qb, ub);
    ScanResult { any, ..res }
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
    let eb = q.eb;
    let len = block.len().min(BUF);
    let (qb, ub, vb) = (
        s.p.q.get_mut(..len).unwrap_or_default(),
        s.p.u.get_mut(..len).unwrap_or_default(),
        s.u32s.get_mut(..len).unwrap_or_default(),
    );
    if q.strict && (res.violation || res.near_tie) {
        if !res.near_tie {
            quantize_block(eb, seed, block, qb, ub);
        }
        if let Some(i) = first_violation(eb, q.bound, block, qb) {
            return Err(BlockError::Violation(i));
        }
    }
    let w = bits::width(res.any);
    let cost = payload_len(w, len);
    let dst = dst.get_mut(..cost).ok_or(BlockError::Short(cost))?;
    let w32 = u32::from(w);
    match (in_u64, w) {
        (_, 0) => {}
        (true, 1..=24) => pack64(ub, vb, w32, dst),
        (false, 1..=24) => pack32(vb, w32, dst),
        (true, _) => pack(ub, w32, dst, qb),
        (false, _) => {
            for (d, &v) in ub.iter_mut().zip(vb.iter()) {
                *d = u64::from(v);
            }
            pack(ub, w32, dst, qb);
        }
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
        fn quant_eb(e: &Self::Enc) -> f64 {
            e.q.eb
        }
        $crate::arch::szp::block_methods! {
            width: |e, block, seed, s| {
                #[target_feature(enable = $features)]
                fn run<T: SzpFloat>(sc: &Scan, x: &[T], seed: i64, s: &mut Scratch) -> u8 {
                    $crate::bits::width(scan(sc, x, seed, s).0.any)
                }
                match &e.scan {
                    // SAFETY: the token (`self`) proves the CPU supports `$features`.
                    Some(sc) => unsafe { run(sc, block, seed, s) },
                    None => {
                        $crate::arch::generic::szp::portable_width(e.q.eb, block, seed, &mut s.p)
                    }
                }
            },
            encode: |e, block, seed, dst, s| {
                #[target_feature(enable = $features)]
                fn run<T: SzpFloat>(
                    sc: &Scan,
                    q: &$crate::arch::szp::Quant,
                    x: &[T],
                    seed: i64,
                    dst: &mut [u8],
                    s: &mut Scratch,
                ) -> Result<u8, $crate::arch::szp::BlockError> {
                    let scanned = scan(sc, x, seed, s);
                    $crate::arch::x86_64::szp::encode_scanned(
                        q,
                        x,
                        seed,
                        dst,
                        s,
                        scanned,
                        |u, v, w, out| pack64(u, v, w, out),
                        |v, w, out| pack32(v, w, out),
                    )
                }
                match &e.scan {
                    // SAFETY: the token (`self`) proves the CPU supports `$features`.
                    Some(sc) => unsafe { run(sc, &e.q, block, seed, dst, s) },
                    None => $crate::arch::generic::szp::portable_encode(
                        &e.q,
                        block,
                        seed,
                        dst,
                        &mut s.p,
                    ),
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
