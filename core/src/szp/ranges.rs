//! Block ranges: the plan (statistics pass and grid), and the encode and decode of runs of
//! blocks, generic over the block kernel (an ISA proof token, the crate-private `SzpKernel`
//! trait) and over how ranges are run ([`Join`]: [`Serial`] here, rayon in the `fzpack`
//! crate). The archive layer ([`super::archive`]) drives these loops and alone decides where
//! the header, widths, payload and chunk CRCs go; this module fills the places it is given.
//!
//! Encoding a range of blocks writes its width bytes into their final place and its payload
//! at the start of the range's payload slice. A [`Join`] that splits a range runs the two
//! halves independently — the right half encodes at its worst-case offset (the plan's widest
//! possible blocks before it) — and then moves the right half's payload down to follow the
//! left's (one move of compressed bytes per split, itself run in parallel pieces;
//! [`Join::split_encode`] keeps the splits few). With checksum slots (`Sums`) a range splits
//! on chunk boundaries only and each chunk's CRC is written as soon as the chunk is encoded,
//! from cache. Decoding splits at block boundaries whose payload offset is the sum of the left
//! blocks' costs; under verification each chunk is decoded, then its lengths walked and its
//! CRC checked while its bytes are in cache (`decode_chunks`). Every block is encoded by the
//! same kernel call whatever the split, so the bytes are the same for every thread count.

use super::blocks::{self, Grid, Plan, body_len, chunk_walk, le32, pieces};
use super::{Config, DType, Error, Mode};
use crate::arch::szp::{BlockError, DecodeError, Quant, Run, RunError, Stats, SzpKernel};
use crate::bits;
use crate::types::SzpFloat;

/// How the driver runs independent block ranges: one after the other ([`Serial`]) or in
/// parallel (the `fzpack` crate's rayon `Join`, BLAKE3-style).
pub trait Join: Sync {
    /// Runs `a` and `b` (possibly in parallel) and returns both results.
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send;
    /// Whether a range of `bytes` bytes of floats is worth splitting into two tasks.
    fn split(&self, bytes: usize) -> bool;
    /// Whether a range of `bytes` bytes of floats is worth splitting into two tasks when
    /// encoding, where every split costs a move of the right half's compressed bytes after
    /// the join: an implementation should split only until every thread has a range.
    /// Defaults to [`Join::split`].
    fn split_encode(&self, bytes: usize) -> bool {
        self.split(bytes)
    }
}

/// Runs every range on the calling thread, never splitting.
#[derive(Clone, Copy, Debug, Default)]
pub struct Serial;

impl Join for Serial {
    #[inline(always)]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        (a(), b())
    }
    #[inline(always)]
    fn split(&self, _: usize) -> bool {
        false
    }
    #[inline(always)]
    fn split_encode(&self, _: usize) -> bool {
        false
    }
}

/// Evaluates `$body` with `$k` bound to the proof token of `$path`, or returns
/// [`Error::UnsupportedPath`] when this CPU (or target) cannot run it. No fallback.
macro_rules! on_path {
    ($path:expr, $k:ident => $body:expr) => {
        match $path {
            $crate::szp::Kernel::Scalar => {
                let $k = $crate::arch::generic::Reference::new();
                $body
            }
            $crate::szp::Kernel::Portable => {
                let $k = $crate::arch::generic::Portable::new();
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::szp::Kernel::Avx2 => {
                match $crate::arch::x86_64::Bmi2::new($crate::arch::CpuFeatures::detect()) {
                    Some($k) => $body,
                    None => Err($crate::szp::Error::UnsupportedPath),
                }
            }
            #[cfg(target_arch = "x86_64")]
            $crate::szp::Kernel::Avx512 => {
                match $crate::arch::x86_64::Avx512Vbmi::new($crate::arch::CpuFeatures::detect()) {
                    Some($k) => $body,
                    None => Err($crate::szp::Error::UnsupportedPath),
                }
            }
            #[cfg(target_arch = "aarch64")]
            $crate::szp::Kernel::Neon => {
                match $crate::arch::aarch64::Neon::new($crate::arch::CpuFeatures::detect()) {
                    Some($k) => $body,
                    None => Err($crate::szp::Error::UnsupportedPath),
                }
            }
            #[allow(unreachable_patterns)]
            _ => Err($crate::szp::Error::UnsupportedPath),
        }
    };
}
pub(crate) use on_path;

/// The quantizer parameters of `plan` with `|x| <= max_abs`.
pub(crate) fn quant(plan: &Plan, max_abs: f64) -> Quant {
    Quant {
        eb: plan.quant_eb,
        bound: plan.bound,
        strict: plan.strict,
        max_abs,
        max32: bits::f32_at_least(max_abs),
        below: if bits::F32_ONLY_FPU {
            bits::accept_below(plan.quant_eb, plan.bound)
        } else {
            0
        },
        unchecked: None,
    }
}

/// The statistics of `x`, split by `j`; with `abs` (an ABS bound) only what its plan reads
/// ([`SzpKernel::magnitude`]).
#[inline]
fn stats_range<K: SzpKernel, T: SzpFloat, J: Join>(k: K, j: &J, x: &[T], abs: bool) -> Stats {
    if x.len() >= 2 && j.split(size_of_val(x)) {
        let (a, b) = x.split_at(x.len() / 2);
        let (sa, sb) = j.join(|| stats_range(k, j, a, abs), || stats_range(k, j, b, abs));
        sa.merge(sb)
    } else if abs {
        k.magnitude(x)
    } else {
        k.stats(x)
    }
}

/// Min and max of the finite values of `x` (`bad` stays false), split by `j` as
/// [`stats_range`] is: the statistics of an input with missing values.
fn finite_stats_range<T: SzpFloat, J: Join>(j: &J, x: &[T]) -> Stats {
    if x.len() >= 2 && j.split(size_of_val(x)) {
        let (a, b) = x.split_at(x.len() / 2);
        let (sa, sb) = j.join(|| finite_stats_range(j, a), || finite_stats_range(j, b));
        sa.merge(sb)
    } else {
        // Eight independent lanes, so the compiler vectorizes the min/max (a NaN compares
        // false; ±inf is masked out).
        let (mut lo, mut hi) = ([f64::INFINITY; 8], [f64::NEG_INFINITY; 8]);
        let lane = |l: &mut f64, h: &mut f64, v: T| {
            // Finite as a float comparison (false for NaN and ±inf), so it vectorizes.
            let f = v.to_f64();
            let ok = f.abs() <= f64::MAX;
            *l = if ok && f < *l { f } else { *l };
            *h = if ok && f > *h { f } else { *h };
        };
        let mut eights = x.chunks_exact(8);
        for c in &mut eights {
            for ((l, h), &v) in lo.iter_mut().zip(hi.iter_mut()).zip(c) {
                lane(l, h, v);
            }
        }
        for (((l, h), &v), _) in lo
            .iter_mut()
            .zip(hi.iter_mut())
            .zip(eights.remainder())
            .zip(0..8)
        {
            lane(l, h, v);
        }
        let fold =
            |a: [f64; 8], f: fn(f64, f64) -> f64, init: f64| a.iter().fold(init, |m, &v| f(m, v));
        Stats {
            lo: fold(lo, f64::min, f64::INFINITY),
            hi: fold(hi, f64::max, f64::NEG_INFINITY),
            bad: false,
        }
    }
}

/// The plan of `input` and a bound on `|x|`: the kernel's statistics pass (split by `j`),
/// or — for irregular inputs (non-finite values, a value above a configured `max_abs`, a level
/// overflow) and for the reference kernel — [`blocks::plan`], which names the first offending
/// index. The plan is the same value either way (same min, max and max |x|). A configured
/// `max_abs` is checked on the statistics (every value is finite and `|x| <= max_abs` exactly
/// when the pass saw no non-finite value and `max(|min|, |max|) <= max_abs`), so declaring it
/// costs no scalar pass; only a failing check reruns [`blocks::plan`] to name the index.
pub(crate) fn plan<K: SzpKernel, T: SzpFloat, J: Join>(
    k: K,
    j: &J,
    input: &[T],
    cfg: &Config,
) -> Result<(Plan, f64), Error> {
    plan_grid(k, j, input, cfg, Grid::Stated, false).map(|(plan, max_abs, _)| (plan, max_abs))
}

/// [`plan`] for the one-shot encoder, which on a kernel that checks its blocks
/// ([`SzpKernel::CHECKS_BLOCKS`]) may plan a declared `max_abs` without a pass over the data
/// ([`declared_max_abs`]); the flag says it did (the input is then not validated: its quantizer
/// gets the block check, [`Quant::unchecked`], and its errors [`declared_error`]).
pub(crate) fn plan_declaring<K: SzpKernel, T: SzpFloat, J: Join>(
    k: K,
    j: &J,
    input: &[T],
    cfg: &Config,
) -> Result<(Plan, f64, bool), Error> {
    plan_grid(k, j, input, cfg, Grid::Stated, K::CHECKS_BLOCKS)
}

/// [`plan`] under the grid rule `grid` (`.fzm` output keeps [`Grid::Data`]); with `declare`,
/// as [`plan_declaring`] (the flag: no pass validated the input).
pub(crate) fn plan_grid<K: SzpKernel, T: SzpFloat, J: Join>(
    k: K,
    j: &J,
    input: &[T],
    cfg: &Config,
    grid: Grid,
    declare: bool,
) -> Result<(Plan, f64, bool), Error> {
    // The declared path ([`declared_max_abs`]); where the plan or the level range would fail,
    // the validating path below names what the data makes of it.
    if declare
        && let Some(m) = declared_max_abs(input, cfg)
        && let Ok(plan) = blocks::resolve_grid(T::DTYPE, cfg, input.len(), 0.0, m, grid)
        && bits::level_vs_limit(m, plan.quant_eb) == Some(false)
    {
        return Ok((plan, m, true));
    }
    // Without missing values (feature `missing-and-shape` off), an irregular input needs no
    // exact pass: the first irregular value is found by a scan ([`first_irregular`]), and the
    // plan of an empty input is the exact pass's (range and magnitude 0), so firmware links no
    // second, f64 pass over the data.
    const LEAN: bool = !blocks::MISSING_VALUES;
    if K::EXACT_PLAN || (input.is_empty() && !LEAN) {
        return no_flag(blocks::plan_mag(input, cfg, grid));
    }
    blocks::check_config(cfg)?;
    if input.is_empty() {
        let bound = cfg.max_abs.unwrap_or(0.0);
        let plan = blocks::resolve_grid(T::DTYPE, cfg, 0, 0.0, bound, grid)?;
        return Ok((plan, bound, false));
    }
    // An ABS plan reads the largest magnitude alone (the range is NOA's).
    let mut st = stats_range(k, j, input, cfg.mode == Mode::Abs);
    // Missing values: the range and magnitude of the finite values, split as the statistics
    // are (an input of missing values only takes the exact pass, which handles it).
    let missing = st.bad && blocks::MISSING_VALUES;
    if missing {
        st = finite_stats_range(j, input);
    }
    let irregular = |input: &[T]| {
        no_flag(if LEAN {
            first_irregular(input, cfg)
        } else {
            blocks::plan_mag(input, cfg, grid)
        })
    };
    if st.bad || st.lo > st.hi {
        return irregular(input);
    }
    // The data's largest magnitude: the statistics are exact, and |x| peaks at min or max.
    let mag = st.lo.abs().max(st.hi.abs());
    if let Some(m) = cfg.max_abs
        && mag > m
    {
        return irregular(input);
    }
    let bound = cfg.max_abs.unwrap_or(mag);
    let mut plan = blocks::resolve_grid(T::DTYPE, cfg, input.len(), st.hi - st.lo, bound, grid)?;
    if bits::level_vs_limit(mag, plan.quant_eb) == Some(true) {
        if LEAN {
            // The exact pass's plan is this one (the statistics are exact): its error names
            // the first value whose level overflows.
            let index = input
                .iter()
                .position(|x| bits::level_vs_limit(x.to_f64().abs(), plan.quant_eb) == Some(true))
                .unwrap_or(0);
            return Err(Error::LevelOverflow { index });
        }
        return no_flag(blocks::plan_mag(input, cfg, grid));
    }
    plan.missing = missing;
    Ok((plan, bound, false))
}

/// A validating plan's result with its flag (no pass skipped).
fn no_flag(r: Result<(Plan, f64), Error>) -> Result<(Plan, f64, bool), Error> {
    r.map(|(plan, max_abs)| (plan, max_abs, false))
}

/// Whether the one-shot encoder of the reference kernel may leave the validation to its blocks
/// ([`declared_max_abs`]): on targets without an f64 FPU (and in the core's tests, on every
/// target), where no value can be a missing one (feature `missing-and-shape` off: its plan
/// depends on whether one is).
pub(crate) const DECLARED: bool = (bits::F32_ONLY_FPU || cfg!(test)) && !blocks::MISSING_VALUES;

/// The declared `max_abs` of an f32 `input` with an ABS bound, where its plan may be made
/// without a pass over the data ([`plan_declaring`]): the encoder's block check
/// ([`Quant::unchecked`]) then stands in for the pass (a block's exact largest `|x|` comes out
/// of the f32 encoder's loop at no cost, where the pass costs about 5 instructions a value on
/// Cortex-M4F). The plan is [`plan`]'s for any input that passes the check: an ABS plan reads
/// only `max_abs` once the data is known to be within it. `None` where this does not apply
/// ([`DECLARED`] off, not f32, not ABS, no `max_abs`, an empty input, a config the plan
/// rejects).
///
/// The encoder's errors are not in [`plan`]'s order (a block can fail for its bound or for
/// the buffer before a later block's value is seen): the caller puts them in it with
/// [`declared_error`].
fn declared_max_abs<T: SzpFloat>(input: &[T], cfg: &Config) -> Option<f64> {
    let m = cfg.max_abs?;
    if !DECLARED || T::DTYPE != DType::F32 || cfg.mode != Mode::Abs || input.is_empty() {
        return None;
    }
    blocks::check_config(cfg).ok().map(|()| m)
}

/// The error of a one-shot compression whose input was not validated ([`declared_max_abs`]):
/// the first value that is not finite or above `max_abs`, as [`plan`] names it, where there is
/// one; else the encoder's own error `e`.
#[inline(never)]
#[cold]
pub(crate) fn declared_error<T: SzpFloat>(input: &[T], cfg: &Config, e: Error) -> Error {
    first_irregular_value(input, cfg).unwrap_or(e)
}

/// The error of the exact pass (`blocks::plan_mag`, without missing values) on an input whose
/// statistics say some value is not finite or above `max_abs`: the first such value, in order.
/// (Statistics that disagree with the values, never seen, are named at index 0.)
#[inline(never)]
#[cold]
fn first_irregular<T: SzpFloat>(input: &[T], cfg: &Config) -> Result<(Plan, f64), Error> {
    Err(first_irregular_value(input, cfg).unwrap_or(Error::NonFinite { index: 0 }))
}

/// The error naming the first value of `input` that is not finite or above `cfg.max_abs`, if
/// any ([`irregular_error`]).
fn first_irregular_value<T: SzpFloat>(input: &[T], cfg: &Config) -> Option<Error> {
    let limit = cfg.max_abs.map(bits::AbsLimit::new);
    let index = input
        .iter()
        .position(|x| x.is_missing() || limit.is_some_and(|l| l.exceeds(*x)))?;
    Some(irregular_error(input.get(index), index))
}

/// The error for `x`, the value at `index`, known to be not finite or above `max_abs`:
/// [`Error::ValueOutOfRange`] for a finite one, else [`Error::NonFinite`].
pub(crate) fn irregular_error<T: SzpFloat>(x: Option<&T>, index: usize) -> Error {
    match x {
        Some(x) if !x.is_missing() => Error::ValueOutOfRange { index },
        _ => Error::NonFinite { index },
    }
}

/// Payload bytes of `input`'s blocks (the sizing pass; writes nothing).
pub(crate) fn payload_size<K: SzpKernel, T: SzpFloat, J: Join>(
    k: K,
    j: &J,
    e: &K::Enc,
    run: Run,
    input: &[T],
) -> usize {
    let per = run.bs.saturating_mul(run.unit()).max(1);
    let units = input.len().div_ceil(per);
    if units >= 2 && j.split(size_of_val(input)) {
        let (a, b) = input.split_at((units / 2) * per);
        let (x, y) = j.join(
            || payload_size(k, j, e, run, a),
            || payload_size(k, j, e, run, b),
        );
        x + y
    } else {
        k.size_blocks(e, run, input)
    }
}

/// The checksum slots of a range that [`encode_range`] seals as it encodes: chunks of
/// `2^shift` blocks, the range's first chunk being chunk `u0` of the archive, 4 bytes each.
pub(crate) struct Sums<'a> {
    pub shift: u8,
    pub u0: u32,
    pub out: &'a mut [u8],
}

/// Encodes the blocks of `input` (whose first value has index `first`; `run.bs` values per
/// block; starting on a unit boundary) with width bytes into `widths` (one per block) and the
/// payload at the start of `payload` (`base` = its offset in the archive, for error reports);
/// returns the payload length. Ranges are split on unit boundaries (a block, or a head group),
/// only where `payload` holds `ucost` (the worst case of a full unit) bytes per unit.
///
/// With `sums`, the range starts on a checksum chunk, splits only on chunk boundaries, and
/// each chunk's CRC is written right after the chunk is encoded, while its bytes are still in
/// cache (a separate sealing pass would read the whole payload back from memory).
#[allow(clippy::too_many_arguments)] // the range's coordinates in input and archive
pub(crate) fn encode_range<K: SzpKernel, T: SzpFloat, J: Join>(
    k: K,
    j: &J,
    e: &K::Enc,
    run: Run,
    ucost: usize,
    input: &[T],
    first: usize,
    base: usize,
    widths: &mut [u8],
    payload: &mut [u8],
    sums: Option<Sums<'_>>,
) -> Result<usize, Error> {
    let unit = run.unit();
    // Blocks per split step: a unit, or a checksum chunk (a whole number of units).
    let step = match &sums {
        Some(s) => (1usize << s.shift.min(31)).max(unit),
        None => unit,
    };
    let units = widths.len().div_ceil(unit);
    let steps = widths.len().div_ceil(step);
    if steps >= 2
        && j.split_encode(size_of_val(input))
        && payload.len() >= units.saturating_mul(ucost)
    {
        let mid = (steps / 2) * step;
        let mv = mid * run.bs;
        let off = (mid / unit) * ucost;
        let (il, ir) = input.split_at(mv.min(input.len()));
        let (wl, wr) = widths.split_at_mut(mid);
        let (pl, pr) = payload.split_at_mut(off);
        let (sl, sr) = match sums {
            Some(s) => {
                let (a, b) = s.out.split_at_mut(((steps / 2) * 4).min(s.out.len()));
                let shift = s.shift;
                let u1 = s.u0 + (steps / 2) as u32;
                (
                    Some(Sums {
                        shift,
                        u0: s.u0,
                        out: a,
                    }),
                    Some(Sums {
                        shift,
                        u0: u1,
                        out: b,
                    }),
                )
            }
            None => (None, None),
        };
        let (a, b) = j.join(
            || encode_range(k, j, e, run, ucost, il, first, base, wl, pl, sl),
            || encode_range(k, j, e, run, ucost, ir, first + mv, base + off, wr, pr, sr),
        );
        let (a, b) = (a?, b?);
        move_down(j, payload, off, b, a);
        Ok(a + b)
    } else {
        let bs = run.bs;
        let fail = |r: RunError, b0: usize, pos: usize| match r.err {
            BlockError::Violation(i) => Error::BoundViolated {
                index: first + (b0 + r.block) * bs + i,
            },
            BlockError::Irregular(i) => {
                let at = (b0 + r.block) * bs + i;
                irregular_error(input.get(at), first + at)
            }
            BlockError::Short(c) => Error::OutputTooSmall {
                needed: base + pos + r.pos + c,
            },
        };
        let mut scratch = k.scratch();
        let Some(s) = sums else {
            return k
                .encode_blocks(e, run, input, widths, payload, &mut scratch)
                .map_err(|r| fail(r, 0, 0));
        };
        let (mut pos, mut b0) = (0usize, 0usize);
        let pieces = input
            .chunks(step.saturating_mul(bs).max(1))
            .zip(widths.chunks_mut(step.max(1)))
            .zip(s.out.chunks_exact_mut(4));
        for (u, ((xs, ws), slot)) in pieces.enumerate() {
            let dst = payload.get_mut(pos..).unwrap_or_default();
            let n = k
                .encode_blocks(e, run, xs, ws, dst, &mut scratch)
                .map_err(|r| fail(r, b0, pos))?;
            let body = dst.get(..n).unwrap_or_default();
            blocks::put_le32(slot, blocks::chunk_sum(s.u0 + u as u32, ws, body));
            pos += n;
            b0 += ws.len();
        }
        Ok(pos)
    }
}

/// Pieces of a parallel move are at least this long (smaller ones are not worth a task; the
/// unit tests use small pieces to reach every wave shape in a small buffer).
const MOVE_PIECE: usize = if cfg!(test) { 64 } else { 256 << 10 };

/// Moves `buf[src..src + len]` down to `buf[dst..]` (`dst <= src`; both ranges inside `buf`,
/// as [`encode_range`] guarantees). The join of a split range would otherwise copy the right
/// half's payload on one thread while the other waits (with four ranges per thread, the
/// serial moves took about 18 % of a 64 MiB parallel compression at 1e-3: 10.3 GB/s, 12.6
/// with the moves left out). The move runs in waves of at most `src - dst` bytes,
/// whose sources and destinations do not overlap, each copied in parallel pieces by `j`;
/// a move by less than two pieces' distance stays one `copy_within`.
fn move_down<J: Join>(j: &J, buf: &mut [u8], src: usize, len: usize, dst: usize) {
    let gap = src.saturating_sub(dst);
    if gap < 2 * MOVE_PIECE || len < 2 * MOVE_PIECE {
        if src > dst && len > 0 && src.saturating_add(len) <= buf.len() {
            buf.copy_within(src..src + len, dst);
        }
        return;
    }
    let mut done = 0;
    while done < len {
        let w = gap.min(len - done);
        let Some((lo, hi)) = buf.split_at_mut_checked(src + done) else {
            return;
        };
        if let (Some(to), Some(from)) = (lo.get_mut(dst + done..dst + done + w), hi.get(..w)) {
            copy_par(j, to, from);
        }
        done += w;
    }
}

/// Copies `from` into `to` (equal lengths), in halves run by `j` down to [`MOVE_PIECE`].
fn copy_par<J: Join>(j: &J, to: &mut [u8], from: &[u8]) {
    if from.len() >= 2 * MOVE_PIECE {
        let m = from.len() / 2;
        let (ta, tb) = to.split_at_mut(m);
        let (fa, fb) = from.split_at(m);
        j.join(|| copy_par(j, ta, fa), || copy_par(j, tb, fb));
    } else {
        to.copy_from_slice(from);
    }
}

/// Decodes the blocks whose width bytes are `widths` and whose body (payloads and head
/// trailers) lies back to back at the start of `payload` into `out` (shape `run`, the last
/// block possibly shorter), with quantizer bound `eb`.
pub(crate) fn decode_range<K: SzpKernel, T: SzpFloat, J: Join>(
    k: K,
    j: &J,
    eb: f64,
    run: Run,
    widths: &[u8],
    payload: &[u8],
    out: &mut [T],
) -> Result<(), Error> {
    let unit = run.unit();
    let units = widths.len().div_ceil(unit);
    let mid = (units / 2) * unit;
    if units >= 2 && j.split(size_of_val(out)) && out.len() > mid * run.bs {
        let (wl, wr) = widths.split_at(mid);
        let lbytes = body_len(wl, run.bs, mid * run.bs, run.group, payload)?;
        let (pl, pr) = payload.split_at_checked(lbytes).ok_or(Error::Truncated)?;
        let (ol, or) = out.split_at_mut(mid * run.bs);
        let (a, b) = j.join(
            || decode_range(k, j, eb, run, wl, pl, ol),
            || decode_range(k, j, eb, run, wr, pr, or),
        );
        a.and(b)
    } else {
        k.decode_blocks(eb, run, widths, payload, out, &mut k.scratch())
            .map_err(decode_error)?;
        check_finite(eb, run, out)
    }
}

/// Whether some level could decode to a value that is not finite in `T` with quantizer bound
/// `eb`: levels are `i64`, so none can when `T((−2⁶³·2)·eb)` is finite — every bound the
/// encoder writes for data below about 2⁶⁴·eb (f32: `eb` up to ~1.8e19; f64: up to ~9.7e288).
#[inline]
fn may_overflow<T: SzpFloat>(eb: f64) -> bool {
    bits::Recon::new(eb).get::<T>(i64::MIN).is_missing()
}

/// The decoder's promise that it never emits a value the format cannot hold: where the bound
/// allows levels whose values are not finite ([`may_overflow`], never for the usual bounds,
/// so the common decode pays one comparison per run), every decoded value of `out` is checked.
#[inline]
pub(crate) fn check_finite<T: SzpFloat>(eb: f64, run: Run, out: &[T]) -> Result<(), Error> {
    if run.finite && may_overflow::<T>(eb) && out.iter().any(|x| x.is_missing()) {
        return Err(Error::Implausible {
            what: "a level whose value is not finite in the element type",
        });
    }
    Ok(())
}

/// The archive error of a kernel's decode failure.
fn decode_error(e: DecodeError) -> Error {
    match e {
        DecodeError::Width => Error::Corrupt("width above 64"),
        DecodeError::Truncated => Error::Truncated,
    }
}

/// Verifies (CRC of checksum chunks `u0..`, `sums` 4 bytes each, chunks of `2^shift` blocks)
/// and decodes the run `widths` / `payload` into `out`, chunk by chunk — each chunk's CRC is
/// checked right after the chunk is decoded, while its bytes are in cache — splitting on chunk
/// boundaries with `j`. Returns the body bytes consumed (the caller checks that they are all of
/// the payload: [`blocks::parse_frame`] leaves that check to this walk).
#[allow(clippy::too_many_arguments)] // the run's place in the archive
pub(crate) fn decode_chunks<K: SzpKernel, T: SzpFloat, J: Join>(
    k: K,
    j: &J,
    eb: f64,
    run: Run,
    shift: u8,
    u0: u32,
    widths: &[u8],
    payload: &[u8],
    sums: &[u8],
    out: &mut [T],
) -> Result<usize, Error> {
    let bs = run.bs;
    let chunks = sums.len() / 4;
    let c = (1usize << shift.min(31)).max(1); // .max(1): provably non-zero, no panic path
    if chunks >= 2 && j.split(size_of_val(out)) {
        let mid = chunks / 2;
        let mb = mid * c; // < widths.len(): the left half holds full blocks only
        let (wl, wr) = widths.split_at_checked(mb).ok_or(Error::Truncated)?;
        let lbytes = body_len(wl, bs, mb * bs, run.group, payload)?;
        let (pl, pr) = payload.split_at_checked(lbytes).ok_or(Error::Truncated)?;
        let (sl, sr) = sums.split_at(mid * 4);
        let (ol, or) = out.split_at_mut_checked(mb * bs).ok_or(Error::Truncated)?;
        let (a, b) = j.join(
            || decode_chunks(k, j, eb, run, shift, u0, wl, pl, sl, ol),
            || decode_chunks(k, j, eb, run, shift, u0 + mid as u32, wr, pr, sr, or),
        );
        Ok(a?.saturating_add(b?))
    } else {
        // Chunk by chunk (2^shift blocks, ~16 Ki values: its bytes and values fit in L2),
        // decode first, then walk the chunk's structure and CRC it from cache. The other order
        // (a CRC pass, then the decode) reads the chunk from memory with nothing to overlap
        // that wait, while the decode's own reads overlap its arithmetic: the CRC then ran at
        // memory speed (~21 GB/s, up to 14 % of a verified decode at ratio ≈ 3 on Sapphire
        // Rapids, as measured) instead of its ~90 GB/s in cache. The kernel
        // gets the rest of the payload and reads only what the chunk's widths (and head
        // trailers) say, with every read bounds-checked, so any bytes decode safely; a CRC
        // mismatch is reported ahead of what the decoder found, which it explains, and an
        // `Ok` means every chunk matched. After an error `out` holds unspecified values.
        let (mut off, mut vo) = (0usize, 0usize);
        let mut u = u0;
        let mut scratch = k.scratch(); // once for all the chunks of this task
        for (wc, s) in pieces(widths, c).zip(sums.chunks_exact(4)) {
            let vals = (out.len() - vo).min(wc.len().saturating_mul(bs));
            let tail = payload.get(off..).unwrap_or(&[]);
            let o = out.get_mut(vo..vo + vals).ok_or(Error::Truncated)?;
            let decoded = k.decode_blocks(eb, run, wc, tail, o, &mut scratch);
            let (bytes, sum) = chunk_walk(u, wc, bs, vals, run.group, tail)?;
            if sum != le32(s) {
                return Err(Error::ChecksumMismatch {
                    what: "blocks",
                    chunk: u,
                });
            }
            decoded.map_err(decode_error)?;
            check_finite(eb, run, o)?;
            off += bytes;
            vo += vals;
            u = u.wrapping_add(1);
        }
        Ok(off)
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::{MOVE_PIECE, Serial, move_down};

    /// `move_down` equals one `copy_within` for every source, destination and length of a
    /// small buffer (the test build's pieces are 64 bytes): moves by less than two pieces, in
    /// one wave, in many waves, ending at the buffer's end; nothing else is touched.
    #[test]
    #[cfg_attr(miri, ignore = "10,000+ moves: too slow for Miri")]
    fn move_down_equals_copy_within() {
        const N: usize = 12 * MOVE_PIECE + 5;
        let mut init = [0u8; N];
        for (i, b) in init.iter_mut().enumerate() {
            *b = (i * 7 + i / 251) as u8;
        }
        let mut cases = 0;
        for src in (0..N).step_by(13) {
            for dst in (0..=src).step_by(11) {
                for len in (0..=N - src).step_by(17) {
                    let mut want = init;
                    want.copy_within(src..src + len, dst);
                    let mut got = init;
                    move_down(&Serial, &mut got, src, len, dst);
                    assert!(got == want, "src {src} dst {dst} len {len}");
                    cases += 1;
                }
            }
        }
        assert!(cases > 10_000);
    }

    /// The statistics pass (a kernel without an exact plan pass: the portable one here, the
    /// reference on microcontrollers) plans and fails exactly as the exact pass does: the same
    /// plan, or the same error naming the same index, for regular, empty and irregular inputs
    /// (a value not finite, above `max_abs`, or whose level overflows, at several places and
    /// in either order). Run with and without default features: without `missing-and-shape`
    /// the irregular inputs take the scan instead of the exact pass.
    #[test]
    fn statistics_plan_equals_the_exact_pass() {
        use super::plan;
        use crate::arch::generic::Portable;
        use crate::szp::blocks::{Grid, plan_mag};
        use crate::szp::{Config, Layout};
        let mut base = [0f32; 300];
        for (i, x) in base.iter_mut().enumerate() {
            *x = (i as f32 * 0.05).sin() * 3.0 + 0.5;
        }
        let layout = if cfg!(feature = "layout-heads") {
            Layout::Heads
        } else {
            Layout::Fzgm
        };
        let cfgs = [
            Config::abs(1e-3).with_layout(layout),
            Config::abs(1e-3).with_max_abs(3.6).with_layout(layout),
            Config::abs(1e-12).with_max_abs(1e7).with_layout(layout),
            Config::noa(1e-4).with_layout(layout),
            // Levels of 2^62 and more are reachable only without the strict tightening.
            Config::abs(1e-13).stage_compatible(),
        ];
        let mut cases = 0;
        for cfg in &cfgs {
            let mut inputs = [base; 9];
            inputs[1][0] = f32::NAN;
            inputs[2][299] = f32::INFINITY;
            inputs[3][150] = f32::NEG_INFINITY;
            inputs[4][17] = 5.0; // above max_abs 3.6
            (inputs[5][10], inputs[5][20]) = (5.0, f32::NAN); // out of range first
            (inputs[6][10], inputs[6][20]) = (f32::NAN, 5.0); // not finite first
            // Levels of 2^62 and more at 1e-13 (values above max_abs elsewhere).
            inputs[7][200] = 2.0e6;
            (inputs[8][100], inputs[8][120]) = (-9.0e6, 1.0e6);
            for input in &inputs {
                for len in [0usize, 1, 150, 300] {
                    let x = &input[..len];
                    let got = plan(Portable::new(), &Serial, x, cfg);
                    let want = plan_mag(x, cfg, Grid::Stated);
                    assert_eq!(got, want, "{cfg:?} len {len}");
                    cases += 1;
                }
            }
        }
        assert_eq!(cases, 5 * 9 * 4);
    }

    /// The one-shot encoder of an input with a declared `max_abs`, which validates block by
    /// block ([`super::plan_declaring`], taken where [`super::DECLARED`]: builds without
    /// `missing-and-shape`), writes what the validated path writes (plan pass, then the
    /// writer) and fails as it fails: the same bytes, or the same error naming the same index,
    /// for regular inputs and for values not finite or above `max_abs` (at the first value, at
    /// block edges, at the last, in either order, just above the limit), in buffers large
    /// enough and too small (the sizing pass, whose error the irregular value must still
    /// outrank), in both layouts, with and without the strict bound.
    #[test]
    #[cfg_attr(miri, ignore = "1,080 compressions of safe code: too slow for Miri")]
    fn declared_one_shot_equals_the_validated_path() {
        use super::{DECLARED, plan, plan_declaring};
        use crate::arch::generic::Reference;
        use crate::szp::archive::ArchiveWriter;
        use crate::szp::{Config, Layout, engine};
        let mut base = [0f32; 300];
        for (i, x) in base.iter_mut().enumerate() {
            *x = (i as f32 * 0.05).sin() * 3.0 + 0.5;
        }
        let m = 3.6f64;
        // The largest f32 within the limit, and the next one (above it).
        let lim = crate::bits::AbsLimit::new(m).below_bits();
        let (top, over) = (f32::from_bits(lim), f32::from_bits(lim + 1));
        let mut layouts = [Layout::Fzgm; 2];
        if cfg!(feature = "layout-heads") {
            layouts[1] = Layout::Heads;
        }
        let mut inputs = [base; 10];
        inputs[1][0] = f32::NAN;
        inputs[2][299] = f32::INFINITY;
        inputs[3][128] = f32::NEG_INFINITY;
        inputs[4][127] = over;
        inputs[5][7] = -over;
        (inputs[6][10], inputs[6][20]) = (5.0, f32::NAN); // out of range first
        (inputs[7][10], inputs[7][20]) = (f32::NAN, 5.0); // not finite first
        (inputs[8][0], inputs[8][299]) = (top, -top); // at the limit: regular
        inputs[9][200] = 2.0e6; // a level far beyond the plan's
        let (mut cases, mut declared) = (0, 0);
        for layout in layouts {
            for bs in [7u32, 128] {
                for cfg in [
                    Config::abs(1e-3).with_max_abs(m),
                    Config::abs(1e-3).with_max_abs(m).stage_compatible(),
                    Config::abs(1e-6).with_max_abs(m),
                ] {
                    let cfg = cfg.with_layout(layout).with_block_size(bs);
                    for input in &inputs {
                        for len in [1usize, 150, 300] {
                            let x = &input[..len];
                            let d = plan_declaring(Reference::new(), &Serial, x, &cfg);
                            declared += usize::from(d.is_ok_and(|(_, _, d)| d));
                            for cap in [4096usize, 60, 600] {
                                let (mut got, mut want) = ([0u8; 4096], [0u8; 4096]);
                                let k = Reference::new();
                                let g = engine::compress(k, &Serial, x, &cfg, &mut got[..cap]);
                                let w = plan(k, &Serial, x, &cfg).and_then(|(p, mx)| {
                                    ArchiveWriter::for_token(&p, mx).write_all_on(
                                        k,
                                        &Serial,
                                        x,
                                        &mut want[..cap],
                                    )
                                });
                                assert_eq!(g, w, "{cfg:?} len {len} cap {cap}");
                                if let Ok(n) = g {
                                    assert!(got[..n] == want[..n], "{cfg:?} len {len}");
                                }
                                cases += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(cases, 2 * 2 * 3 * 10 * 3 * 3);
        // Every case takes the declared path where it applies (the limit's and the levels'
        // checks pass for these bounds).
        assert_eq!(declared, if DECLARED { cases / 3 } else { 0 });
    }
}
