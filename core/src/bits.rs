//! The SZp number and bit-stream rules, each defined once: the quantizer and its
//! reconstruction (spec §1.2, §1.7), zigzag (§1.4), the block width (§1.5) and the payload
//! length of a block (§1.6); and the bit I/O on them: a field of an LSB-first stream
//! ([`field`]), a block's levels by unpack and prefix sum ([`unpack_levels`]), the bit writer
//! ([`BitAcc`]) and the block-head trailers ([`put_heads`], [`read_heads`]). Every SZp kernel
//! under [`crate::arch`], the archive driver and the compressed-domain operations in
//! [`crate::szp`] use these functions; none restates them.

use crate::types::SzpFloat;

/// Quantized levels must stay below this magnitude (so deltas fit in i64 without wrapping).
pub(crate) const LEVEL_LIMIT: f64 = 4_611_686_018_427_387_904.0; // 2^62

/// The bits of an f64's magnitude (all but the sign).
pub(crate) const F64_MAG: u64 = !(1 << 63);
/// The bits of `+∞`; a magnitude above them is NaN.
pub(crate) const F64_INF: u64 = 0x7ff0_0000_0000_0000;

/// How the f64 quotient `mag / (2.0 * eb)` compares with [`LEVEL_LIMIT`] (`2^62`):
/// `Some(true)` at or above it, `Some(false)` below, `None` where it is NaN. The encoders' level-range checks.
#[inline]
pub(crate) fn level_vs_limit(mag: f64, eb: f64) -> Option<bool> {
    if F32_ONLY_FPU {
        level_vs_limit_int(mag, eb)
    } else {
        let q = mag / (2.0 * eb);
        (!q.is_nan()).then_some(q >= LEVEL_LIMIT)
    }
}

/// [`level_vs_limit`] in integers, exactly as the f64 division and comparison decide it and
/// without the division, for targets without an f64 FPU (which then link no soft-float
/// division for it).
///
/// For positive finite `mag = A·2^a` and `2·eb = D·2^d` (finite; `A`, `D` in `[2^52, 2^53)`),
/// the quotient rounds to `2^62` or more exactly when `mag/(2·eb) >= 2^62 − 2^8`, the
/// midpoint below `2^62` (which a tie rounds up to: `2^62` is even). That is
/// `A·2^s >= D·(2^54 − 1)` with `s = a − d − 8`: always for `s >= 55`, never for `s <= 53`
/// (for 53 it would take `D >= 2^53·(2·D − A) >= 2^53`), and for `s = 54` exactly when
/// `A >= D`.
fn level_vs_limit_int(mag: f64, eb: f64) -> Option<bool> {
    const MAG: u64 = F64_MAG;
    const INF: u64 = F64_INF;
    const POW1023: u64 = 0x7fe0_0000_0000_0000;
    let (a, e) = (mag.to_bits(), eb.to_bits());
    let (am, em) = (a & MAG, e & MAG);
    // `2.0 * eb` is infinite from `eb = 2^1023` up.
    let d_inf = em >= POW1023;
    if am > INF || em > INF || (am == 0 && em == 0) || (am == INF && d_inf) {
        return None; // NaN, 0/0, ∞/∞
    }
    if (a ^ e) >> 63 != 0 || am == 0 || d_inf {
        return Some(false); // below zero, zero, or finite/∞
    }
    if am == INF || em == 0 {
        return Some(true); // ∞
    }
    let (ma, ea) = f64_parts_cold(f64::from_bits(am));
    let (me, ee) = f64_parts_cold(f64::from_bits(em));
    let s = ea - (ee + 1) - 8;
    Some(s >= 55 || (s == 54 && ma >= me))
}

/// `mag / (2.0 * eb)`: the encoders' worst-case width. Computed in integers on targets
/// without an f64 FPU ([`half_quotient_int`]), which then link no soft-float division.
#[inline]
pub(crate) fn half_quotient(mag: f64, eb: f64) -> f64 {
    if F32_ONLY_FPU {
        half_quotient_int(mag, eb)
    } else {
        mag / (2.0 * eb)
    }
}

/// `mag / (2.0 * eb)` in f64, every case as IEEE 754 has it (NaN, infinities, signed zeros),
/// computed in integers.
fn half_quotient_int(mag: f64, eb: f64) -> f64 {
    const MAG: u64 = F64_MAG;
    const INF: u64 = F64_INF;
    let (a, e) = (mag.to_bits(), eb.to_bits());
    let (am, em) = (a & MAG, e & MAG);
    // `2·eb`, exact: a subnormal's bits doubled, else the exponent raised (to infinity's
    // bits from 2^1023 up, which is the rounded product).
    let dm = if em >= INF {
        em
    } else if em >> 52 == 0 {
        em << 1
    } else {
        (em + (1 << 52)).min(INF)
    };
    let q = if am > INF || dm > INF || (am == 0 && dm == 0) || (am == INF && dm == INF) {
        return f64::NAN;
    } else if am == 0 || dm == INF {
        0
    } else if am == INF || dm == 0 {
        INF
    } else {
        div_f64_bits(f64::from_bits(am), f64::from_bits(dm)).unwrap_or(0)
    };
    f64::from_bits(q | ((a ^ e) & !MAG))
}

/// The quantized level of `x` (spec §1.2: f64 division, round half away from zero).
///
/// On targets without an f64 FPU (Cortex-M4F, RV32 without D) f32 input goes through
/// `Quant32` (crate-private), which gives the same level without f64 arithmetic.
#[inline(always)]
pub fn quantize<T: SzpFloat>(x: T, eb: f64) -> i64 {
    if F32_ONLY_FPU && let Some(&v) = (&x as &dyn core::any::Any).downcast_ref::<f32>() {
        return Quant32::new(eb).level(v);
    }
    round_half_away(x.to_f64() / (2.0 * eb))
}

/// [`quantize`] at one bound, its constants computed once: the encoders' loops keep one of
/// these (on targets without an f64 FPU the f32 quantizer's constants then stay in registers
/// instead of being rebuilt and stored for every value).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Quantizer {
    eb: f64,
    q32: Quant32,
}

impl Quantizer {
    /// The quantizer of bound `eb`.
    #[inline(always)]
    pub(crate) fn new(eb: f64) -> Quantizer {
        Quantizer {
            eb,
            q32: Quant32::new(if F32_ONLY_FPU { eb } else { 1.0 }),
        }
    }

    /// The fixed point of the f32 quantizer's fast path for `x` (see [`Quant32::level`]).
    #[inline(always)]
    pub(crate) fn fixed(&self, x: f32) -> i32 {
        self.q32.fixed(x)
    }

    /// `quantize(x, eb)` for f32 `x` through the f32 quantizer (every target: the tests run
    /// the f32-only-FPU encoder on hosts too), as an i32 when its magnitude is below `2^30`,
    /// else `None`, from its fixed point `s = self.fixed(x)` and the tie window `win` of a
    /// block ([`Quantizer::window`]): exact when `A = s ^ (s >> 31)` is at most the window's
    /// `a_max` and below [`FIXED_LIMIT`] (and otherwise unspecified: the callers check their
    /// block's largest magnitude against both and discard the block's levels beyond them).
    #[inline(always)]
    pub(crate) fn level_window(&self, x: f32, s: i32, win: Window) -> Option<i32> {
        match Quant32::fast_window(s, win) {
            Some(l) => Some(l),
            None => self.q32.window_miss(x, s),
        }
    }

    /// The tie window of a block whose values all have `A = |S|` (`|S| − 1` for `x < 0`) at
    /// most `a_max`, where `S = self.fixed(x)` ([`Quant32::fast_window`]).
    #[inline(always)]
    pub(crate) fn window(&self, a_max: u32) -> Window {
        let w = (a_max.min(FIXED_LIMIT) >> 21) + 4;
        Window {
            bias: (1 << 14) + w,
            span: (2 * w + 1) << 17,
        }
    }

    /// [`Quantizer::level_window`] for any `x`, with each value's own window (the fast
    /// path's range checked).
    #[inline(always)]
    pub(crate) fn level_checked(&self, x: f32) -> Option<i32> {
        match self.q32.fast(x) {
            Some(l) => Some(l),
            None => self.q32.small_slow(x),
        }
    }

    /// The bits of an f32 magnitude up to which every `x` has `|self.fixed(x)|` below
    /// [`FIXED_LIMIT`] (0 when the fast path is off).
    #[inline(always)]
    pub(crate) fn fixed_limit_bits(&self) -> u32 {
        // 0x7e00_0000 / r15 in f32: within 2^-22 of the quotient, so its product with r15
        // (rounded, truncated) stays below 0x7e00_0000·(1 + 2^-21) < FIXED_LIMIT.
        let m = 2_113_929_216.0 / self.q32.r15;
        if m.is_finite() {
            m.to_bits()
        } else {
            0x7f7f_ffff
        }
    }

    /// `trunc(a·r·2^15)` for a magnitude `a` (saturating): the fixed point's magnitude, which
    /// is monotone in `a`.
    #[inline(always)]
    pub(crate) fn fixed_abs(&self, a: f32) -> u32 {
        (a * self.q32.r15) as u32
    }

    /// The f32 quantizer (on targets without an f64 FPU; a placeholder elsewhere, see
    /// [`Quantizer::for_f32`]).
    #[inline(always)]
    pub(crate) fn for_f32(eb: f64) -> Quantizer {
        Quantizer {
            eb,
            q32: Quant32::new(eb),
        }
    }

    /// `quantize(x, eb)`.
    #[inline(always)]
    pub(crate) fn level<T: SzpFloat>(&self, x: T) -> i64 {
        if F32_ONLY_FPU && let Some(&v) = (&x as &dyn core::any::Any).downcast_ref::<f32>() {
            return self.q32.level(v);
        }
        round_half_away(x.to_f64() / (2.0 * self.eb))
    }
}

/// A magnitude limit `m` (finite, `>= 0`) for streamed values: [`AbsLimit::exceeds`] is
/// `x.to_f64().abs() > m` for every finite `x`, without f64 arithmetic for f32 on targets
/// without an f64 FPU: there it compares the bits of `|x|` with those of the largest f32 at
/// most `m` (an f32 is above `m` exactly when it is above that one).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AbsLimit {
    m: f64,
    /// The bits of the largest f32 `<= m` (+inf when `m` is above every finite f32).
    below: u32,
}

impl AbsLimit {
    /// The limit `m`.
    #[inline]
    pub(crate) fn new(m: f64) -> AbsLimit {
        let mut b = (m as f32).to_bits();
        if f64::from(f32::from_bits(b)) > m && b & 0x7fff_ffff != 0 {
            b -= 1; // one f32 ulp down (m > 0 here)
        }
        AbsLimit { m, below: b }
    }

    /// `x.to_f64().abs() > m` (`x` finite).
    #[inline(always)]
    pub(crate) fn exceeds<T: SzpFloat>(&self, x: T) -> bool {
        if F32_ONLY_FPU && let Some(&v) = (&x as &dyn core::any::Any).downcast_ref::<f32>() {
            return Self::bits_exceed(v, self.below);
        }
        x.to_f64().abs() > self.m
    }

    /// The bits of the largest f32 at most the limit (at most `0x7f7f_ffff`): an f32 `x` is
    /// finite and within the limit exactly when `x.to_bits() & 0x7fff_ffff` is at most them.
    #[inline]
    pub(crate) fn below_bits(&self) -> u32 {
        self.below
    }

    /// The f32 comparison of [`AbsLimit::exceeds`] (on every target): `|v|` above the f32
    /// with the bits `below`, or `v` not finite (`below` is at most `0x7f7f_ffff`).
    #[inline(always)]
    pub(crate) fn bits_exceed(v: f32, below: u32) -> bool {
        v.to_bits() & 0x7fff_ffff > below
    }
}

/// The bits of the least f32 at least `m` (finite, `>= 0`; +inf's where `m` is above every
/// finite f32): a magnitude bound in f32 for an input whose values are at most `m`.
#[inline]
pub(crate) fn f32_at_least(m: f64) -> u32 {
    let b = AbsLimit::new(m).below;
    if f64::from(f32::from_bits(b)) < m {
        b + 1
    } else {
        b
    }
}

/// The tie window of the f32 quantizer's fast path for a block ([`Quantizer::window`],
/// [`Quant32::fast_window`]): a residue of `S + 2^14` within `[−w, w + 1)` of a multiple of
/// `2^15` goes to the integer path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    /// `2^14 + w`.
    bias: u32,
    /// `(2w + 1)·2^17` (compared with the residue shifted to the top: one compare with a
    /// shifted operand on Thumb-2, no mask).
    span: u32,
}

/// The bound on `|S|` (the fixed point of [`Quant32::level`]'s fast path) below which that
/// path decides from `S` alone: `S` has not saturated and `S + 2^14` plus the tie window does
/// not wrap.
pub(crate) const FIXED_LIMIT: u32 = 0x7f00_0000;

/// The f32 quantizer without f64 arithmetic: [`Quant32::level`] equals
/// `round_half_away(f64::from(x) / (2.0 * eb))` (the rule of [`quantize`]) for every f32 `x`,
/// NaN and infinities included (checked over all 2³² inputs for a set of bounds by the tests
/// below, in release builds of the core's tests).
///
/// Why it is exact. Write `|x| = X·2^ax` (`X` in `[2^23, 2^24)`), `e = 2·eb = E·2^ae` (`E` in
/// `[2^52, 2^53)`), `t = |x|/e`. The f64 rule is `rha(RN64(t))` (`rha`: round half away).
/// * Fast path (f32 FPU): `y = RN32(|x|·r)` with `r` within `2^-22.9` of `1/e` (relative; one
///   f32 division of `E`'s top bits, scaled by a power of two in the exponent field: three
///   f32 roundings and a truncation, `2^-22.9`), so
///   `|y − t| <= Δ = y·2^-22` while `r` and `y` are normal. If `y < 1/4` then `t < 1/2 − 2^-55`
///   and the level is 0. If `y < 2^16`, `n = floor(y)`, `f = y − n` (exact) and `|f − 1/2| >
///   y·2^-21 (>= Δ + 2^-31)`, then `t` lies on the same side of `n + 1/2` as `y`, at least
///   `2^-31` away from it, and inside `(n − 1/2, n + 3/2)`; the f64 rule's decision points lie
///   within `(n + 1/2)·2^-53 < 2^-36` below the half-integers (RN64 rounds `t` up to `n + 1/2`
///   from half an f64 ulp below it), so the level is `n + [f > 1/2]`.
/// * Otherwise (about `y·2^-20` of the values near a tie, and every value with `y >= 65024`,
///   whose fixed point reaches [`FIXED_LIMIT`]):
///   the f64 division itself in integers. `Q = floor(X·2^83/E)` (in `[2^53, 2^55)`) and its
///   remainder by long division; `RN64(t)` is `Q` rounded to 53 bits (ties to even, the
///   remainder as sticky bit) times `2^(ax − ae − 83 + shift)`, and `rha` of that is read off its
///   bits; values of `2^63` and more saturate to `i64::MAX` as the f64 rule's `as i64` does,
///   values below 1/2 (f64 subnormals included) give 0.
#[derive(Clone, Copy, Debug)]
#[allow(dead_code)] // used by `quantize` on f32-only-FPU targets, and by the tests everywhere
pub(crate) struct Quant32 {
    /// `1/e` within `2^-22.9` as a normal f32; +inf when it is not one (fast path off).
    r: f32,
    /// `r·2^15` (+inf when that overflows: then every nonzero level takes the integer path).
    /// `RN32(|x|·r·2^15) = RN32(|x|·r)·2^15` while the product is normal; where it is not, both
    /// truncate to a level of 0 or go to the integer path.
    r15: f32,
    /// `E` (the mantissa of `e`, normalized to `[2^52, 2^53)`).
    e_man: u64,
    /// `ae`: `e = E·2^ae`.
    e_exp: i32,
    /// `e` is infinite (`eb >= 2^1023`): every level is 0.
    e_inf: bool,
}

#[allow(dead_code)] // as the struct
impl Quant32 {
    /// The quantizer of bound `eb` (finite and positive, as every plan's).
    #[inline(always)]
    pub(crate) fn new(eb: f64) -> Quant32 {
        let b = eb.to_bits();
        let (be, frac) = (((b >> 52) & 0x7ff) as i32, b & ((1u64 << 52) - 1));
        // eb = E·2^(ae − 1); e = 2·eb.
        let (mut e_man, mut e_exp) = if be == 0 {
            (frac, -1074 + 1)
        } else {
            (frac | (1u64 << 52), be - 1075 + 1)
        };
        if e_man != 0 {
            let s = e_man.leading_zeros() as i32 - 11;
            e_man <<= s;
            e_exp -= s;
        }
        let e_inf = be >= 0x7fe; // 2·eb overflows (or eb is not finite)
        // 1/E ~ 1/RN32(E >> 21) · 2^-21, then 2^-ae in the exponent field.
        let inv = 1.0f32 / ((e_man >> 21) as u32 as f32);
        let field = ((inv.to_bits() >> 23) & 0xff) as i32 - 21 - e_exp;
        let r = if (1..=254).contains(&field) && e_man != 0 && !e_inf {
            f32::from_bits((inv.to_bits() & !(0xff << 23)) | ((field as u32) << 23))
        } else {
            f32::INFINITY
        };
        Quant32 {
            r,
            r15: r * 32_768.0,
            e_man,
            e_exp,
            e_inf,
        }
    }

    /// The level of `x`: `round_half_away(f64::from(x) / (2.0 * eb))`.
    ///
    /// The fast path decides in signed fixed point, the sign included: `S = trunc(x·r·2^15)`
    /// (one saturating conversion; NaN gives 0) is `±Y` with `Y = trunc(y·2^15)`, because the
    /// product and the truncation are symmetric in the sign. For `x >= 0`, `t = S + 2^14 =
    /// floor((y + 1/2)·2^15)`, so `t >> 15 = floor(y + 1/2)`, the level whenever `y`'s fraction
    /// is not within `y·2^-21` of 1/2 (see the type's docs). For `x < 0`, write `Y + 2^14 =
    /// k·2^15 + f`; then `S + 2^14 = −k·2^15 + (2^15 − f)`, whose arithmetic shift by 15 is
    /// `−k`, the level, whenever `f != 0`. The tie window is `y·2^-6` units of `2^-15`, at most
    /// `(Y >> 21) + 1` of them after the truncation. With `A = S ^ (S >> 31)` (`Y`, or `Y − 1`
    /// when `x < 0`), `W = (A >> 21) + 4` and `β` bit 20 of `A` (the window's upper end is
    /// compared with `(A + 2^23) >> 20 = 2W + β`, which needs no register for a constant),
    /// a `t` whose residue mod `2^15` lies in `[−W, W + β)` (`x >= 0`; the residue is `f`)
    /// or, for `x < 0`, whose `f` lies in `(−W − β, W]`, goes to the integer path: either
    /// window holds `±((Y >> 21) + 2)`, so it covers the tie window with room, and `f = 0`
    /// is inside it. `A >= FIXED_LIMIT` (`y >= 65024`, infinite `y`,
    /// or the fast path off: `r` is then +inf and only `|x| = 0` or NaN, whose level is 0 by
    /// both rules, give `S = 0`) goes there too; below it `W < 1024` and `t` cannot wrap.
    /// `|y| < 1/4` gives `t >> 15 = 0`.
    #[inline(always)]
    pub(crate) fn level(&self, x: f32) -> i64 {
        match self.fast(x) {
            Some(l) => i64::from(l),
            None => self.signed_slow(x),
        }
    }

    /// The fast path of [`Quant32::level`] (`None`: the integer path decides).
    #[inline(always)]
    fn fast(&self, x: f32) -> Option<i32> {
        Self::fast_fixed(self.fixed(x))
    }

    /// The fast path's decision from `S` (`None`: the integer path decides).
    #[inline(always)]
    fn fast_fixed(s: i32) -> Option<i32> {
        if (s ^ (s >> 31)) as u32 >= FIXED_LIMIT {
            return None;
        }
        Self::fast_within(s)
    }

    /// `S = trunc(x·r·2^15)`, saturating (NaN gives 0).
    #[inline(always)]
    fn fixed(&self, x: f32) -> i32 {
        (x * self.r15) as i32
    }

    /// The fast path's decision from `S` when `|S| < FIXED_LIMIT` (then `W < 1024` and
    /// `S + 2^14 + W` does not wrap); `None`: the integer path decides.
    #[inline(always)]
    fn fast_within(s: i32) -> Option<i32> {
        // `b >> 21 = W` and `b >> 20 = 2W + β` (β: bit 20 of `A`): shifted operands on
        // Thumb-2 and no register for a constant (measured on Cortex-M4F: LLVM otherwise
        // rebuilt the constant 4 for every value, one instruction).
        let b = ((s ^ (s >> 31)) as u32).wrapping_add(4 << 21);
        let t = (s as u32).wrapping_add(1 << 14);
        ((t.wrapping_add(b >> 21) & 0x7fff) >= b >> 20).then_some((t as i32) >> 15)
    }

    /// [`Quant32::fast_within`] with one window for a block: `w = (a_max >> 21) + 4` (`a_max`
    /// capped at [`FIXED_LIMIT`]) for values whose `A = S ^ (S >> 31)` is at most `a_max` and
    /// below [`FIXED_LIMIT`]. Such a value's own window (`W = (A >> 21) + 4 <= w`: `[−W, W + β)`
    /// for `x >= 0`, `(−W − β, W]` for `x < 0`, `β <= 1`) lies inside `[−w, w + 1)`, the residues
    /// this sends to the integer path; so whatever `fast_within` leaves, this leaves too, and
    /// where this decides it decides as `fast_within` does: with `u = t + w` (`t = S + 2^14`)
    /// and `u mod 2^15 >= 2w + 1 > w`, `t = u − w` lies in `u`'s multiple of `2^15`, so
    /// `t >> 15 = u >> 15`. Three instructions a value fewer than `fast_within` on Thumb-2
    /// (no `A`, no offset, no second sum) for a window as wide as the block's largest
    /// value's; a value it leaves takes `fast_within` first ([`Quant32::window_miss`]), so
    /// only those the per-value window leaves take the integer path.
    #[inline(always)]
    fn fast_window(s: i32, win: Window) -> Option<i32> {
        let u = (s as u32).wrapping_add(win.bias);
        ((u << 17) >= win.span).then_some((u as i32) >> 15)
    }

    /// A value [`Quant32::fast_window`] leaves: [`Quant32::fast_fixed`] (its own window), else
    /// the integer path. Out of line and cold: the loops keep one rare branch.
    #[cold]
    #[inline(never)]
    fn window_miss(&self, x: f32, s: i32) -> Option<i32> {
        match Self::fast_fixed(s) {
            Some(l) => Some(l),
            None => self.small_slow(x),
        }
    }

    /// The integer path of [`Quant32::level`] as an i32 when its magnitude is below `2^30`,
    /// else `None`.
    #[inline(always)]
    fn small_slow(&self, x: f32) -> Option<i32> {
        let l = self.signed_slow(x);
        (l.unsigned_abs() < 1 << 30).then_some(l as i32)
    }

    /// The integer path of [`Quant32::level`], the sign applied.
    #[inline(always)]
    fn signed_slow(&self, x: f32) -> i64 {
        let m = self.slow(x.abs());
        if x.is_sign_negative() {
            m.wrapping_neg()
        } else {
            m
        }
    }

    /// The values the fast path of [`Quant32::level`] leaves, by their magnitude `a = |x|`:
    /// near a tie (`Y` again, one product, and a window `[−W', W')` with `W' = (Y >> 21) + 5`
    /// about the tie, which holds both of the fast path's: `W + β <= W'` and `W − 1 + β <
    /// W'`, as `A <= Y`) [`Quant32::near`], else
    /// [`Quant32::divide`]. One out-of-line call for both, so that the encoders' loops keep a
    /// single rare branch.
    #[cold]
    #[inline(never)]
    fn slow(self, a: f32) -> i64 {
        let big = (a * self.r15) as u32;
        let (t, w) = (big.wrapping_add(1 << 14), (big >> 21) + 5);
        if big < 1 << 31 && (t.wrapping_add(w) & 0x7fff) < 2 * w {
            self.near(a, t.wrapping_add(w) >> 15)
        } else {
            self.divide(a)
        }
    }

    /// The level of `a = |x|` where the fast path found `|x|/e` near the tie `m − 1/2`
    /// (`m >= 1`, below `2^16 + 1`): `m` or `m − 1`, decided by one exact comparison of
    /// integers instead of [`Quant32::divide`]'s long division (a near-tie value costs about a
    /// tenth as much; data on exact ties, such as ADC codes at a dyadic bound, hit this for a
    /// fixed share of their values).
    ///
    /// Why it is exact. The value lies within the fast path's window of `h = m − 1/2`, far
    /// from every other half-integer, so the f64 rule's level is `m` exactly when
    /// `RN64(t) >= h` (`t = |x|/e`), else `m − 1`. `h = H/2` with `H = 2m − 1` odd and below
    /// `2^18` is an f64 whose mantissa ends in zeros (even), and the f64s just below it are
    /// `2^(k − 52)` apart, `k = ceil(log2 H) − 2` (`k = −2` for `h = 1/2`, the one power of
    /// two). So `RN64(t) >= h` exactly when `t >= h − 2^(k − 53)` (a tie rounds to the even
    /// `h`). With `|x| = X·2^xe`, `e = E·2^ae` and `D = H·2^(52 − k) − 1` (below `2^54`),
    /// multiplying through by `2^(55 − k)·E·2^ae` turns that into `X·2^s >= D·E`,
    /// `s = xe − ae + 53 − k`: integers below `2^107` (`s` is near 83 here). Anything outside
    /// the range this argument covers goes to [`Quant32::divide`].
    #[inline(always)]
    fn near(self, a: f32, m: u32) -> i64 {
        let Some((xm, xe)) = f32_parts(a.to_bits())
            .filter(|_| !self.e_inf && self.e_man != 0 && (1..=(1 << 16) + 1).contains(&m))
        else {
            return self.divide(a);
        };
        let h2 = 2 * u64::from(m) - 1;
        // ceil(log2 H) − 2: the bit length of H − 1, less 2.
        let k = (64 - (h2 - 1).leading_zeros()) as i32 - 2;
        let d = (h2 << (52 - k)) - 1;
        let s = xe - self.e_exp + 53 - k;
        if !(64..=103).contains(&s) {
            return self.divide(a);
        }
        // X·2^s >= P = D·E  <=>  X > floor((P − 1)/2^s), which for s >= 64 is the top word
        // of P − 1 shifted by s − 64 (P >= 2^89: no borrow past it).
        let q = ((mul_64(d, self.e_man) - 1) >> 64) as u64 >> (s - 64);
        i64::from(m) - i64::from(u64::from(xm) <= q)
    }

    /// `rha(RN64(|x|/e))` in integers (`a = |x|`, any f32 bits but the sign), by long
    /// division. By value: a reference would make the callers' loops store the quantizer for
    /// every value.
    #[inline(never)]
    fn divide(self, a: f32) -> i64 {
        let b = a.to_bits();
        let Some((xm, xe)) = f32_parts(b) else {
            // Zero and NaN: 0 (the f64 rule's `NaN as i64` is 0); infinity saturates
            // (inf/inf is NaN).
            let inf = b & 0x7fff_ffff == 0x7f80_0000;
            return if inf && !self.e_inf { i64::MAX } else { 0 };
        };
        if self.e_inf || self.e_man == 0 {
            return 0;
        }
        // t = (X/E)·2^(xe − ae) with X/E in (2^-30, 2^-28): decided by the exponents alone
        // when t >= 2^63 (saturates) or t < 1/4 (level 0).
        let d = xe - self.e_exp;
        if d >= 63 + 30 {
            return i64::MAX;
        }
        if d < 28 - 2 {
            return 0;
        }
        // Q = floor(X·2^83/E) by branch-free long division: X·2^28 < E, so the first 28
        // quotient bits are 0.
        let e = self.e_man;
        let mut rem = u64::from(xm) << 28;
        let mut q = 0u64;
        for _ in 0..55 {
            rem <<= 1;
            let ge = u64::from(rem >= e);
            rem -= e & ge.wrapping_neg();
            q = (q << 1) | ge;
        }
        // Q in [2^53, 2^55): round to 53 bits, ties to even, the remainder sticky.
        let sh = 64 - q.leading_zeros() as i32 - 53;
        let low = q & ((1u64 << sh) - 1);
        let half = 1u64 << (sh - 1);
        let mut m = q >> sh;
        let mut p = xe - self.e_exp - 83 + sh;
        if low > half || (low == half && (rem != 0 || m & 1 == 1)) {
            m += 1;
            if m == 1u64 << 53 {
                m >>= 1;
                p += 1;
            }
        }
        // RN64(t) = m·2^p, m in [2^52, 2^53).
        if p >= 11 {
            i64::MAX
        } else if p >= 0 {
            (m << p) as i64
        } else if p <= -54 {
            0
        } else {
            let f = (-p) as u32;
            ((m >> f) + ((m >> (f - 1)) & 1)) as i64
        }
    }
}

/// `llround` for `|v| < 2^62` (guaranteed by the plan): exact, without a libm call. The
/// integer part is exact, so is `a − trunc(a)`, and ties (`frac == 0.5`) go away from zero.
/// Signed conversions (one instruction each way on x86_64, unlike u64's) suffice below 2^62;
/// larger magnitudes saturate.
#[inline(always)]
fn round_half_away(v: f64) -> i64 {
    let a = v.abs();
    let i = a as i64;
    let r = i.saturating_add(i64::from(a - i as f64 >= 0.5));
    if v < 0.0 { r.wrapping_neg() } else { r }
}

/// The reconstruction of level `q` (spec §1.7: `(q·2)·eb`, then the element type).
#[inline(always)]
pub fn reconstruct<T: SzpFloat>(q: i64, eb: f64) -> T {
    T::from_f64(q as f64 * 2.0 * eb)
}

/// Whether this target has no f64 FPU but an f32 one (Cortex-M4F, RV32 with F but not D): there
/// f32 reconstruction goes through [`Recon32`] and f32 quantization through [`Quant32`].
/// `fzpack_f32_fpu` comes from the build script, which reads the target's name (a stable rustc
/// hides these FPU features from `cfg(target_feature)`); the feature test covers custom
/// targets on a nightly rustc.
pub(crate) const F32_ONLY_FPU: bool = cfg!(any(
    fzpack_f32_fpu,
    all(
        target_arch = "arm",
        target_feature = "fpregs",
        not(target_feature = "vfp2")
    ),
    all(
        target_arch = "riscv32",
        target_feature = "f",
        not(target_feature = "d")
    )
));

/// Whether f32 decoding reconstructs with an f32 fused multiply-add ([`Fused32`]): targets
/// with an f32-only FPU on Arm (`VFMA.F32`, through `arch::arm::fused_run`) and on RV32
/// (`fmadd.s`, through `arch::riscv::fma32` in `Fused32::run_with`).
pub(crate) const FMA32: bool = cfg!(all(
    fzpack_f32_fpu,
    any(target_arch = "arm", target_arch = "riscv32")
));

/// `κ = 2^-KAPPA·hi`, [`Fused32`]'s margin (a smaller one is only for the tests).
const KAPPA: i32 = 40;

/// The f64 rule's reconstruction of an f32 level with f32 arithmetic and a fused multiply-add,
/// where it can tell that its answer is the rule's: two FMAs bracket the exact product, and
/// where both round to the same f32, that f32 is the rule's.
///
/// Constants, from `s = 2·eb = man·2^(exp+1)` (`man` its 53-bit mantissa): `hi` is `s` with
/// the mantissa truncated to its top 24 bits, `ℓ = s − hi` (in `[0, 2^-23·hi)`) the rest,
/// `lo = RN32(man mod 2^29)·2^(exp+1)` (so `|lo − ℓ| <= 2^-24·ℓ < 2^-47·hi`),
/// `κ = 2^-40·hi`, `a = RN32(lo − κ)` and `b = RN32(lo + κ)`. Each of `a`, `b` lies within
/// `2^-24·(2^-23 + 2^-40)·hi < 2^-46.9·hi` of its exact value, so `ℓ − a` and `b − ℓ` both
/// exceed `κ − 2^-47·hi − 2^-46.9·hi > 0.96·κ`. `hi`, `lo` and `κ` are normal f32 (or 0) for
/// `s` in `[2^-60, 2^60)`, the method's range.
///
/// For a level `q` with `|q| <= 2^24` (`x = q as f32` is `q` exactly), `y1 = fma(x, hi,
/// RN32(x·a))` and `y2 = fma(x, hi, RN32(x·b))`. Take `q > 0`: `RN32(x·a)` is within
/// `2^-24·q·|a| < 2^-46.9·q·hi` of `q·a`, so the exact sum `L = q·hi + RN32(q·a)` is at most
/// `q·(hi + ℓ) − 0.96·q·κ + 2^-46.9·q·hi < q·s − 2^-40.1·q·hi`; since `s < 2·hi`, that is
/// below both `q·s` and `RN64(q·s) >= q·s·(1 − 2^-53)`. Likewise `U = q·hi + RN32(q·b)` is
/// above both. The FMA rounds each sum once (`y1 = RN32(L)`, `y2 = RN32(U)`), and `RN32`, the
/// f64 rule's conversion included, is monotone, so `y1 <= RN32(RN64(q·s)) <= y2`: where
/// `y1 == y2`, that is the rule's value. For `q < 0` the roles of `L` and `U` swap. Rounding
/// near f32's subnormal range, or a flush-to-zero mode, changes nothing: there an absolute
/// error of at most `2^-126` is far below the margin `0.96·q·κ >= 2^-101`, and `q·s` itself is
/// at least `2^-60`. For `q = 0` both are `+0` (`0·a` may be `-0`, and `+0 + -0 = +0`), as the
/// rule's `0·s` is. The two differ only where `q·s` lies within about `2^-40` (relative) of an
/// f32 rounding boundary, about one level in `2^16`; the caller then takes the integer path.
///
/// Several values with one test: the term `(y2 − y1)·x` is 0 where `y1 == y2`, and otherwise a
/// positive normal f32. The sign: `y1 <= y2` for `q > 0` and `y1 >= y2` for `q < 0`, as
/// above. Where they differ, `q != 0`, and both are f32 roundings of sums within `2^-40`
/// (relative) of `q·s` (`|q·s| >= 2^-60`), so they have its sign and `|y| >= 2^-61`: `y2 − y1` is exact (Sterbenz) and at least one ulp of such an
/// f32, `2^-84`, and with `|x| >= 1` the term is at least `2^-84`; it is at most
/// `2^86·2^24`, finite. A sum of such terms, each addition rounded once (`RN` is monotone and
/// maps a positive sum of at least `2^-84` to at least that), is `±0` exactly when every term
/// is 0, and otherwise positive and finite. No operand or result is subnormal, so a
/// flush-to-zero mode changes nothing. `arch::arm::fused_run` and `Fused32::run_with` take
/// four values a step this way.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fused32 {
    /// `[hi, a, b]`. Read by the FMA ([`FMA32`]) and by the tests; elsewhere no `Fused32` is
    /// made.
    #[cfg_attr(
        not(any(
            test,
            all(fzpack_f32_fpu, any(target_arch = "arm", target_arch = "riscv32"))
        )),
        allow(dead_code)
    )]
    k: [f32; 3],
}

impl Fused32 {
    /// The constants for bound `eb`, or `None` where `2·eb` is not in `[2^-60, 2^60)` (or `eb`
    /// is not positive and finite). In integers and f32 only: no f64 arithmetic.
    #[inline(always)]
    pub(crate) fn new(eb: f64) -> Option<Fused32> {
        Fused32::with_margin::<KAPPA>(eb)
    }

    /// [`Fused32::new`] with `κ = 2^-M·hi`.
    #[inline(always)]
    fn with_margin<const M: i32>(eb: f64) -> Option<Fused32> {
        let (man, exp) = f64_parts(eb);
        // 2·eb = man·2^(exp+1) lies in [2^(exp+53), 2^(exp+54)).
        if man == 0 || !(-60..60).contains(&(exp + 53)) {
            return None;
        }
        // 2^k for k in [-126, 127]: exp + 30 is in [-83, 36], exp + 1 in [-112, 7], and
        // M <= 64 keeps κ above 2^-126.
        let pow2 = |k: i32| f32::from_bits(((k + 127) as u32) << 23);
        let hi = (man >> 29) as u32 as f32 * pow2(exp + 30);
        let lo = (man & ((1 << 29) - 1)) as u32 as f32 * pow2(exp + 1);
        let kappa = hi * pow2(-M);
        Some(Fused32 {
            k: [hi, lo - kappa, lo + kappa],
        })
    }

    /// `reconstruct::<f32>(q, eb)` where the two FMAs agree, `None` where they do not; `fma`
    /// is `RN32(a·b + c)` with one rounding, and `|q| <= 2^24`.
    #[cfg(test)]
    fn get_with(&self, q: i32, fma: impl Fn(f32, f32, f32) -> f32) -> Option<f32> {
        let (_, y1, y2) = self.bracket_with(q, fma);
        (y1 == y2).then_some(y1)
    }

    /// `(x, y1, y2)` for level `q`: the level as f32 and the two FMAs' results.
    #[cfg(any(test, all(fzpack_f32_fpu, target_arch = "riscv32")))]
    #[inline(always)]
    pub(crate) fn bracket_with(
        &self,
        q: i32,
        fma: impl Fn(f32, f32, f32) -> f32,
    ) -> (f32, f32, f32) {
        let [hi, a, b] = self.k;
        let x = q as f32;
        (x, fma(x, hi, x * a), fma(x, hi, x * b))
    }

    /// Replaces the levels in `out` (each an `i32` level's bits, `|level| <= 2^24`) by their
    /// reconstructions from the first on, up to the first that the method leaves undecided;
    /// returns how many it replaced. Only where the target has the FMA ([`FMA32`]); elsewhere
    /// it decides none (no `Fused32` is made there).
    #[inline(always)]
    pub(crate) fn run(&self, out: &mut [f32]) -> usize {
        #[cfg(all(fzpack_f32_fpu, target_arch = "arm"))]
        {
            let (p, n) = (out.as_mut_ptr().cast(), out.len());
            // SAFETY: `p` is valid for `n` aligned u32 reads and writes, `&self.k` for three f32s.
            unsafe { crate::arch::arm::fused_run(p, n, &self.k) }
        }
        #[cfg(all(fzpack_f32_fpu, target_arch = "riscv32"))]
        {
            self.run_with(out, crate::arch::riscv::fma32)
        }
        #[cfg(not(all(fzpack_f32_fpu, any(target_arch = "arm", target_arch = "riscv32"))))]
        {
            let _ = out;
            0
        }
    }

    /// [`Fused32::run`] in Rust with the FMA `fma`: RV32's (`arch::riscv::fma32`), and what
    /// `arch::arm::fused_run` does, step for step, for the tests on machines without it. Four
    /// values a step, decided together where `t = Σ (y2 − y1)·x` (a multiply, then three FMAs)
    /// is 0; a step whose `t` is not, and the values after the last whole step, one at a time
    /// up to the first undecided.
    #[cfg(any(test, all(fzpack_f32_fpu, target_arch = "riscv32")))]
    #[inline(always)]
    pub(crate) fn run_with(
        &self,
        out: &mut [f32],
        fma: impl Fn(f32, f32, f32) -> f32 + Copy,
    ) -> usize {
        let bracket = |o: f32| self.bracket_with(o.to_bits() as i32, fma);
        let term = |(x, y1, y2): (f32, f32, f32), t: f32| fma(y2 - y1, x, t);
        let mut done = 0;
        for four in out.as_chunks_mut::<4>().0 {
            // Four calls, not `map`: at opt-level "s" a `map` stays a loop through the stack.
            let [v0, v1, v2, v3] = *four;
            let (p0, p1, p2, p3) = (bracket(v0), bracket(v1), bracket(v2), bracket(v3));
            if term(p3, term(p2, term(p1, (p0.2 - p0.1) * p0.0))) != 0.0 {
                break;
            }
            *four = [p0.1, p1.1, p2.1, p3.1];
            done += 4;
        }
        for o in out.get_mut(done..).unwrap_or_default() {
            let (_, y1, y2) = bracket(*o);
            if y1 != y2 {
                break;
            }
            *o = y1;
            done += 1;
        }
        done
    }
}

/// `2·eb` as an f32 when it is exactly one and normal (`eb` a positive f64 with at most 24
/// significant bits, `2·eb` in `[2^-126, 2^128)`), else 0. In integers: no f64 arithmetic.
///
/// Why `q as f32 * step` is then `reconstruct::<f32>(q, eb)` for every `|q| <= 2^24`. `q as f32`
/// and `q as f64` are both `q` exactly (at most 24 significant bits), and `·2` is exact, so the
/// f64 rule computes `RN32(RN64(q·2eb))`. The exact product `q·2eb` has at most 24 + 24
/// significant bits and, unless it is 0, a magnitude in `[2^-126, 2^152)`, inside f64's normal
/// range: `RN64` leaves it unchanged. What remains is one rounding of the exact product to f32
/// (to infinity beyond f32's range, as both roundings do), which is what the IEEE f32 multiply
/// of the two exact operands computes; its result is 0 or at least `2^-126` (a normal f32, so a
/// flush-to-zero mode could not change it). `q = 0` gives `+0` in both.
#[inline(always)]
pub(crate) fn f32_step(eb: f64) -> f32 {
    let b = eb.to_bits();
    let (be, frac) = ((b >> 52) & 0x7ff, b & ((1u64 << 52) - 1));
    // The f32 exponent field of 2·eb: (be − 1023 + 1) + 127.
    let field = be as i32 - 895;
    if b >> 63 == 0 && be != 0 && frac & ((1 << 29) - 1) == 0 && (1..=254).contains(&field) {
        f32::from_bits(((field as u32) << 23) | (frac >> 29) as u32)
    } else {
        0.0
    }
}

/// The largest bound at most `eb` (positive, finite) with at most 24 significant bits, so that
/// `2·eb` is an f32 wherever it lies in f32's normal range ([`f32_step`]): `eb`'s f64 mantissa
/// truncated to its top 24 bits (a decrease of less than `2^-23` relative). Subnormal `eb` is
/// returned unchanged. In integers: no f64 arithmetic.
#[inline(always)]
pub(crate) fn f32_step_below(eb: f64) -> f64 {
    let b = eb.to_bits();
    if (b >> 52) & 0x7ff == 0 {
        return eb;
    }
    f64::from_bits(b & !((1u64 << 29) - 1))
}

/// A decoder's reconstruction of levels at one bound: [`Recon::put`] stores exactly
/// [`reconstruct`]`(q, eb)` for a positive finite `eb` (a decoder's: the header check refuses
/// any other). On targets without an f64 FPU, f32 output goes through [`Recon32`] in integers
/// alone (its constants computed here, once per block; NaN for another `eb`), so a decoder
/// links no soft-float f64 code for it; elsewhere it is the f64 rule itself.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Recon {
    eb: f64,
    r32: Recon32,
    /// `2·eb` where that is a normal f32 (see [`Recon::step32`]), else 0.
    step: f32,
    /// [`Fused32`]'s constants where the target has an f32 FMA ([`FMA32`]) and the bound is
    /// in that method's range.
    fused: Option<Fused32>,
}

impl Recon {
    /// The reconstruction at `eb` (the archive's quantizer bound).
    #[inline(always)]
    pub(crate) fn new(eb: f64) -> Recon {
        Recon {
            eb,
            r32: Recon32::new(if F32_ONLY_FPU { eb } else { 0.0 }),
            step: f32_step(eb),
            fused: if FMA32 { Fused32::new(eb) } else { None },
        }
    }

    /// [`Fused32`] for this bound where the target has an f32 FMA ([`FMA32`]) and the bound
    /// is in the method's range; `None` otherwise.
    #[inline(always)]
    pub(crate) fn fused(&self) -> Option<Fused32> {
        self.fused
    }

    /// The step `2·eb` as an f32, where it is one and normal (`None` otherwise): then
    /// `reconstruct::<f32>(q, eb)` is `q as f32 * step` for every level `|q| <= 2^24`, one
    /// f32 multiply (see [`f32_step`]).
    #[inline(always)]
    pub(crate) fn step32(&self) -> Option<f32> {
        (self.step != 0.0).then_some(self.step)
    }

    /// `reconstruct::<f32>(q, eb)` of an i32 level: on targets without an f64 FPU
    /// [`Recon32::quick`], else (rare) [`Recon32::total`], both in integers; the f64 rule itself
    /// on other targets.
    #[inline(always)]
    pub(crate) fn fast32(&self, q: i32) -> f32 {
        if F32_ONLY_FPU {
            return match self.r32.quick(q) {
                Some(v) => v,
                None => self.r32.total(i64::from(q)),
            };
        }
        reconstruct(i64::from(q), self.eb)
    }

    /// `reconstruct(q, eb)`.
    #[inline(always)]
    pub(crate) fn get<T: SzpFloat>(&self, q: i64) -> T {
        let mut v = T::default();
        self.put(q, &mut v);
        v
    }

    /// `*o = reconstruct(q, eb)`.
    #[inline(always)]
    pub(crate) fn put<T: SzpFloat>(&self, q: i64, o: &mut T) {
        if F32_ONLY_FPU
            && let Some(o32) = (&mut *o as &mut dyn core::any::Any).downcast_mut::<f32>()
        {
            *o32 = self.r32.total(q);
            return;
        }
        *o = reconstruct(q, self.eb);
    }
}

/// The f32 reconstruction without f64 arithmetic: [`Recon32::value`] equals
/// `reconstruct::<f32>(q, eb)`, i.e. `(q as f64 * 2.0 * eb) as f32`, bit for bit, for every
/// level `q` and bound `eb` (checked exhaustively over `|q| <= 2^25` for a set of bounds, and on
/// random and constructed double-rounding cases, by the tests below).
///
/// Why it is exact. For `0 < n = |q| < 2^32` the f64 rule is `RN32(RN64(n·2·eb))` with the sign
/// of `q` applied (both roundings are symmetric): `q as f64` and `·2` are exact. Write
/// `eb = M·2^em` (`M` in `[2^52, 2^53)`, normalized also for a subnormal `eb`) and
/// `n = N·2^-z` (`N = n << z` in `[2^31, 2^32)`). Then `n·2·eb = P·2^(em+1−z)` with the exact
/// integer `P = N·M` in `[2^83, 2^85)`, formed from two 32×32-bit products. While the result is
/// in f32's normal range it is also deep inside f64's, so `RN64` is rounding `P` to its top 53
/// bits (ties to even, the bits below decide, as the f64 multiply does), and the f64→f32
/// conversion is rounding those 53 bits to 24 (ties to even): the two roundings done in that
/// order, in integers, are the double rounding of the f64 rule, not a single rounding of `P`.
/// A carry out of either rounding lands in the exponent field of the assembled bits by
/// addition. The fast path is taken only when the unrounded f32 exponent field is in `1..=254`
/// (a normal f32, whose exact value is at least `2^-126`) and the rounded bits stay below
/// infinity's; everything else (`|q| >= 2^32`, `q = 0` aside, f32 subnormal or overflowing
/// results, an `eb` that is zero, negative or not finite) goes to [`Recon32::wide`] (in
/// integers; a decoder's path, [`Recon32::total`]) or to the f64 rule itself
/// ([`Recon32::value`], which also takes the bounds a header refuses). In front of this path a
/// decoder tries [`Recon32::quick`], one 32×32-bit product that decides all but a few levels.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Recon32 {
    /// The bound, for the f64 rule outside the fast path.
    eb: f64,
    /// `M`; 0 when the fast path is off (`eb` not finite and positive).
    man: u64,
    /// `em + 212`: the f32 exponent field of a result whose `P` is in `[2^84, 2^85)`, when
    /// `z = 0` (`29 + 32` bits dropped, `+ 1` for the `·2`, `+ 23 + 127` for the field).
    base: i32,
    /// `M >> 21` (`M`'s top 32 bits) for [`Recon32::quick`]; 0 turns that path off, as it is
    /// where `base` is outside `33..=253` (there a nonzero i32 level could leave f32's normal
    /// range, which the quick path does not check per value).
    mh: u32,
}

/// How [`Recon32::fast_with`] rounds: the f64 rule's double rounding, or (to show that the
/// tests catch a wrong rounding) round-half-up at the 24-bit step, or a single rounding of `P`.
const ROUND_F64_RULE: u8 = 0;
#[cfg(test)]
const ROUND_HALF_UP: u8 = 1;
#[cfg(test)]
const ROUND_SINGLE: u8 = 2;

/// `x = man·2^exp` with `man` in `[2^52, 2^53)` (a subnormal `x` normalized), for `x` positive
/// and finite; `man = 0` otherwise, which turns the callers' integer fast paths off.
#[inline(always)]
fn f64_parts(x: f64) -> (u64, i32) {
    let b = x.to_bits();
    let (be, frac) = (((b >> 52) & 0x7ff) as i32, b & ((1u64 << 52) - 1));
    let (mut man, mut exp) = if be == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), be - 1075)
    };
    if man != 0 {
        let s = man.leading_zeros() as i32 - 11;
        man <<= s;
        exp -= s;
    }
    // Not positive and finite (a sign bit, the all-ones exponent, or zero): in integers, so
    // that no f64 comparison is linked on targets without an f64 FPU.
    if b >> 63 != 0 || be == 0x7ff || b == 0 {
        man = 0;
    }
    (man, exp)
}

/// `x >> d` rounded to nearest, ties to even, where `sticky` says whether any bit below `x`
/// was set (`d` in `1..=63`).
#[inline(never)]
fn rne(x: u64, sticky: bool, d: u32) -> u64 {
    let (r, rem, half) = (x >> d, x & ((1 << d) - 1), 1 << (d - 1));
    r + u64::from(rem > half || (rem == half && (sticky || r & 1 == 1)))
}

/// `|x| = X·2^xe` with `X` in `[2^23, 2^24)` (a subnormal normalized) for the f32 bits `b`
/// (the sign ignored); `None` for zero, infinity and NaN.
#[inline(always)]
fn f32_parts(b: u32) -> Option<(u32, i32)> {
    let (be, frac) = (((b >> 23) & 0xff) as i32, b & 0x7f_ffff);
    if be == 0xff || (be == 0 && frac == 0) {
        return None;
    }
    let (xm, xe) = if be == 0 {
        (frac, -149)
    } else {
        (frac | (1 << 23), be - 150)
    };
    let z = xm.leading_zeros() as i32 - 8;
    Some((xm << z, xe - z))
}

/// The exact 128-bit product of two u64, from 32-bit halves (no 128-bit multiply routine).
#[inline(always)]
fn mul_64(a: u64, b: u64) -> u128 {
    let (a1, a0, b1, b0) = (a >> 32, a & 0xffff_ffff, b >> 32, b & 0xffff_ffff);
    (u128::from(a1 * b1) << 64)
        + (u128::from(a1 * b0) << 32)
        + (u128::from(a0 * b1) << 32)
        + u128::from(a0 * b0)
}

/// The exact product `P = a·b` of two integers below `2^53` + 1 (`a` up to `2^53`), from
/// 32-bit halves: `P >> 51` (below `2^55`) and whether any of `P`'s 51 low bits is set.
#[inline(always)]
fn mul53(a: u64, b: u64) -> (u64, bool) {
    let (a1, a0, b1, b0) = (a >> 32, a & 0xffff_ffff, b >> 32, b & 0xffff_ffff);
    let lo = a0 * b0;
    // a1 <= 2^21, b1 < 2^21: every partial sum stays below 2^64.
    let mid = a1 * b0 + a0 * b1 + (lo >> 32);
    let hi = a1 * b1;
    (
        (hi << 13) + (mid >> 19),
        mid & ((1 << 19) - 1) != 0 || lo as u32 != 0,
    )
}

/// The bits of `RN(a·b)`, the f64 product rounded to nearest, ties to even (`+∞`'s bits where
/// it overflows), for `a` and `b` positive and finite; `None` otherwise. In integers, so that a
/// target without an f64 FPU that checks an archive's header links no soft-float multiply.
pub(crate) fn mul_f64_bits(a: f64, b: f64) -> Option<u64> {
    let ((ma, ea), (mb, eb)) = (f64_parts_cold(a), f64_parts_cold(b));
    if ma == 0 || mb == 0 {
        return None;
    }
    // a·b = top·2^(ea + eb + 51), with `sticky` for the bits below `top`.
    let (top, sticky) = mul53(ma, mb);
    // top in [2^53, 2^55): its leading bit is 2^t.
    let t = 63 - top.leading_zeros() as i32;
    Some(round_f64_bits(top, sticky, t, t + ea + eb + 51))
}

/// The bits of `RN(a/b)` (`+∞`'s where it overflows) for `a` and `b` positive and finite;
/// `None` otherwise. In integers, one quotient bit a step (a cold path: the encoders' plan).
pub(crate) fn div_f64_bits(a: f64, b: f64) -> Option<u64> {
    let ((ma, ea), (mb, eb)) = (f64_parts_cold(a), f64_parts_cold(b));
    if ma == 0 || mb == 0 {
        return None;
    }
    // q = floor(ma·2^55 / mb), in [2^54, 2^56) (ma/mb is in (1/2, 2)); the remainder stays
    // below 2·mb < 2^54.
    let (mut q, mut rem) = (0u64, ma);
    for _ in 0..56 {
        q <<= 1;
        if rem >= mb {
            rem -= mb;
            q |= 1;
        }
        rem <<= 1;
    }
    let t = 63 - q.leading_zeros() as i32;
    Some(round_f64_bits(q, rem != 0, t, t + ea - eb - 55))
}

/// [`f64_parts`] out of line, for the cold integer f64 arithmetic.
#[inline(never)]
fn f64_parts_cold(x: f64) -> (u64, i32) {
    f64_parts(x)
}

/// The bits of the f64 nearest (ties to even) to `top·2^(x − t)`, where `2^t` (`t` in
/// `53..=62`) is `top`'s leading bit and `sticky` says whether anything below `top` is set:
/// `+∞`'s bits from `2^1024` up, subnormals and zero below `2^-1022`.
#[inline(never)]
fn round_f64_bits(top: u64, sticky: bool, t: i32, x: i32) -> u64 {
    if x > 1023 {
        return F64_INF;
    }
    // Keep 53 bits, fewer where the result is subnormal (its unit is 2^-1074).
    let d = t - 52 + (-1022 - x).max(0);
    if d > t + 1 {
        // Below half the least subnormal: rounds to zero (and `rne` takes `d <= 63`).
        return 0;
    }
    // A normal result's rounded significand is in [2^52, 2^53]: 2^53 carries into the
    // exponent, and from 2^1023 into infinity's bits. A subnormal one's is the bits
    // themselves (2^52 is the least normal).
    let base = if x >= -1022 {
        ((x + 1022) as u64) << 52
    } else {
        0
    };
    base + rne(top, sticky, d as u32)
}

impl Recon32 {
    /// The reconstruction of bound `eb`: `eb`'s mantissa and exponent, once.
    #[inline(always)]
    pub(crate) fn new(eb: f64) -> Recon32 {
        let (man, em) = f64_parts(eb);
        let base = em + 212;
        Recon32 {
            eb,
            man,
            base,
            mh: if (33..=253).contains(&base) {
                (man >> 21) as u32
            } else {
                0
            },
        }
    }

    /// [`Recon32::value`] of an i32 level from one 32×32-bit product, `None` where that
    /// product leaves the double rounding open (about 4 levels in 256, and every level when
    /// `mh` is 0): the caller then takes the exact integer path.
    ///
    /// Why it is exact. With `N = n << z` as in [`Recon32`] and `M = Mh·2^21 + Ml`
    /// (`Mh = M >> 21` in `[2^31, 2^32)`, `Ml < 2^21`), `P = N·M = Q·2^21 + N·Ml` with
    /// `Q = N·Mh` in `[2^62, 2^64)` and `N·Ml < 2^53`. If `Q >= 2^63`, take `t = Q >> 32`:
    /// then `u = ⌊P/2^53⌋` is `t` or `t + 1`. Otherwise take `t = Q >> 31` (32 bits): then
    /// `u = ⌊P/2^52⌋` is `t`, `t + 1` or `t + 2`. In both cases `u` holds the result's 24-bit
    /// window (`u >> 8`, the top 24 of the top 53 bits of `P`) and the top 8 of the 29 bits
    /// the f64→f32 conversion drops (`u & 0xff`). The double rounding then rounds down when
    /// those 8 bits are at most `0x7e` (even after the first rounding carries, the dropped
    /// 29 bits stay below half) and up when they are at least `0x81` (above half), whatever
    /// the bits below: `(u >> 8) + ((u >> 7) & 1)`. That value is the same for each candidate
    /// `u` unless `t & 0xff` is in `0x7d..=0x80`, which goes to the exact path. A carry of
    /// `t` itself into a 25th bit (`t` near `2^32` when `Q < 2^63`, where `P` may in fact be
    /// at or above `2^84`) yields `2^24` one field lower: the same f32. With `base` in
    /// `33..=253` every nonzero i32 level's field (`base − z − 1` or `base − z`, `z <= 31`) is
    /// in `1..=253`: a normal f32, and a carry to `2^24` stays below infinity.
    #[inline(always)]
    pub(crate) fn quick(&self, q: i32) -> Option<f32> {
        self.quick_with::<4>(q)
    }

    /// [`Recon32::quick`] with `GUARD` levels of `t & 0xff` from `0x7d` sent to the exact path
    /// (4; the tests show that fewer go wrong).
    #[inline(always)]
    fn quick_with<const GUARD: u32>(&self, q: i32) -> Option<f32> {
        let n = q.unsigned_abs();
        if self.mh == 0 {
            return None;
        }
        if n == 0 {
            return Some(0.0);
        }
        let z = n.leading_zeros();
        let prod = u64::from(n << z) * u64::from(self.mh);
        let (hi, lo) = ((prod >> 32) as u32, prod as u32);
        let top = hi >> 31;
        let t = if top != 0 { hi } else { (hi << 1) | (lo >> 31) };
        if t.wrapping_sub(0x7d) & 0xff < GUARD {
            return None;
        }
        // The exponent field less one: `base − z − 1 + top − 1`, in `0..=252` (see above).
        let field_m1 = (self.base - 2 - z as i32 + top as i32) as u32;
        let m24 = (t >> 8) + ((t >> 7) & 1);
        let bits = (field_m1 << 23) + m24;
        Some(f32::from_bits(bits | (q as u32 & 0x8000_0000)))
    }

    /// `(q as f64 * 2.0 * eb) as f32`.
    #[inline(always)]
    pub(crate) fn value(&self, q: i64) -> f32 {
        match self.fast_with::<ROUND_F64_RULE>(q) {
            Some(v) => v,
            None => self.slow(q),
        }
    }

    /// [`Recon32::value`] in integers alone, for a decoder (whose bound the header check
    /// has found positive and finite): NaN for any other `eb`, where `value` takes the f64
    /// rule. A decoder that calls only this links no soft-float f64 code.
    #[inline(never)]
    pub(crate) fn total(&self, q: i64) -> f32 {
        match self.fast_with::<ROUND_F64_RULE>(q) {
            Some(v) => v,
            None => self.wide(q),
        }
    }

    /// `reconstruct::<f32>(q, eb)` in integers for every level where `eb` is positive and
    /// finite (NaN for other `eb`): the levels and results outside [`Recon32::fast_with`]'s
    /// range (`|q| >= 2^32`, f32 subnormal, overflowing or zero results).
    ///
    /// Why it is exact. `q as f64` is `n = |q|` rounded to 53 bits, ties to even: `a·2^(11−z)`
    /// with `a` in `[2^52, 2^53]` (`z` the leading zeros of `n`). `·2` is exact. So
    /// `q as f64·2·eb = P·2^e0` with the exact integer `P = a·M` in `[2^104, 2^106)` and
    /// `e0 = 12 − z + em`; the value lies in `[2^e, 2^(e+1))` with `e = k + e0`, `k` the index
    /// of `P`'s top bit. If `e >= 128`, the f64 product (finite or not) is at least `2^128`,
    /// which f32 rounds to infinity. If `e < −1022`, the value is below `2^-1022` however f64
    /// rounds it, far under half of f32's least subnormal: zero. Otherwise the f64 product is
    /// normal, and it is `P` rounded to its top 53 bits, ties to even: `m·2^(k−52+e0)`. The
    /// conversion to f32 rounds `m` at f32's step, ties to even: `2^(e−23)` for a normal
    /// result (29 bits of `m` dropped), `2^-149` for a subnormal one (more; nothing is left
    /// when 55 or more go). A carry of either rounding is absorbed by adding the rounded
    /// mantissa to the exponent field, which also turns a subnormal into the least normal and
    /// the largest finite into infinity exactly as the roundings do.
    #[inline(never)]
    fn wide(&self, q: i64) -> f32 {
        if self.man == 0 {
            return f32::NAN;
        }
        let n = q.unsigned_abs();
        let sign = u32::from(q < 0) << 31;
        if n == 0 {
            return 0.0;
        }
        let z = n.leading_zeros();
        // `q as f64`: n's top 53 bits, ties to even (a carry makes a = 2^53, still exact).
        let a = rne(n << z, false, 11);
        let (top, sticky) = mul53(a, self.man);
        // k, the index of P's top bit, is 104 or 105.
        let k = if top >> 54 != 0 { 105 } else { 104 };
        let e = k + 12 - z as i32 + (self.base - 212);
        if e >= 128 {
            return f32::from_bits(0x7f80_0000 | sign);
        }
        if e < -1022 {
            return f32::from_bits(sign);
        }
        // RN64: P to its top 53 bits; then f64 -> f32: the low d bits of those dropped.
        let m = rne(top, sticky, (k - 103) as u32);
        let d = if e >= -126 { 29 } else { (29 - 126 - e) as u32 };
        if d >= 55 {
            return f32::from_bits(sign);
        }
        let r = rne(m, false, d) as u32;
        let bits = if e >= -126 {
            (((e + 126) as u32) << 23) + r
        } else {
            r
        };
        f32::from_bits(bits | sign)
    }

    /// The f64 rule (outside the fast path).
    #[inline(never)]
    fn slow(&self, q: i64) -> f32 {
        reconstruct::<f32>(q, self.eb)
    }

    /// The value in integers, `None` outside the fast path (see [`Recon32`]).
    #[inline(always)]
    fn fast_with<const ROUND: u8>(&self, q: i64) -> Option<f32> {
        let a = q.unsigned_abs();
        if self.man == 0 || a > u64::from(u32::MAX) {
            return None;
        }
        let n = a as u32;
        if n == 0 {
            return Some(0.0);
        }
        let z = n.leading_zeros();
        let nn = u64::from(n << z);
        // P = N·M = hi·2^32 + lo, hi in [2^51, 2^53).
        let p_lo = nn * (self.man & 0xffff_ffff);
        let hi = nn * (self.man >> 32) + (p_lo >> 32);
        let lo = p_lo as u32;
        // m: P's top 53 bits; r: the next 32 (the rest of P, left-aligned).
        let (m, r, field) = if hi >> 52 != 0 {
            (hi, lo, self.base - z as i32)
        } else {
            (
                (hi << 1) | u64::from(lo >> 31),
                lo << 1,
                self.base - z as i32 - 1,
            )
        };
        if !(1..=254).contains(&field) {
            return None;
        }
        const HALF32: u32 = 1 << 31;
        const HALF29: u64 = 1 << 28;
        let m24 = if ROUND == ROUND_F64_RULE {
            // RN64: to 53 bits, ties to even.
            let m = m + u64::from(r > HALF32 || (r == HALF32 && m & 1 == 1));
            // f64 -> f32: to 24 bits, ties to even (m may be 2^53: then m24 = 2^24).
            let low = m & ((1 << 29) - 1);
            (m >> 29) + u64::from(low > HALF29 || (low == HALF29 && (m >> 29) & 1 == 1))
        } else {
            #[cfg(test)]
            if ROUND == ROUND_HALF_UP {
                let m = m + u64::from(r > HALF32 || (r == HALF32 && m & 1 == 1));
                let low = m & ((1 << 29) - 1);
                return Self::assemble(field, (m >> 29) + u64::from(low >= HALF29), q);
            }
            // A single rounding of P to 24 bits, ties to even.
            let low = m & ((1 << 29) - 1);
            let above = low > HALF29 || (low == HALF29 && r != 0);
            let tie = low == HALF29 && r == 0;
            (m >> 29) + u64::from(above || (tie && (m >> 29) & 1 == 1))
        };
        Self::assemble(field, m24, q)
    }

    /// The f32 of `m24·2^(field − 150)` (`m24` in `[2^23, 2^24]`, `field` in `1..=254`) with
    /// the sign of `q`; `None` when it overflows.
    #[inline(always)]
    fn assemble(field: i32, m24: u64, q: i64) -> Option<f32> {
        let bits = ((field as u32 - 1) << 23) + m24 as u32;
        if bits >= 0x7f80_0000 {
            return None;
        }
        Some(f32::from_bits(bits | (u32::from(q < 0) << 31)))
    }
}

/// Zigzag of a delta (spec §1.4): `(d << 1) ^ (d >> 63)`.
#[inline(always)]
pub fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline(always)]
pub fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// [`zigzag`] in 32 bits, for the f32 paths' deltas: for `|d| < 2^31` (the levels below `2^30`
/// in magnitude that those paths take) the value equals `zigzag(d)`.
#[inline(always)]
pub(crate) fn zigzag32(d: i32) -> u32 {
    ((d << 1) ^ (d >> 31)) as u32
}

/// The inverse of [`zigzag32`] (wrapping, as the decoder's prefix sums are).
#[inline(always)]
pub(crate) fn unzigzag32(u: u32) -> i32 {
    ((u >> 1) as i32) ^ -((u & 1) as i32)
}

/// The width byte of a block whose zigzagged deltas OR to `any` (spec §1.5): the bit length of
/// the largest value, 0 when all are 0.
#[inline(always)]
pub fn width(any: u64) -> u8 {
    (64 - any.leading_zeros()) as u8
}

/// Payload bytes of a block of `len` values at width `width` (spec §1.6): `ceil(len·width/8)`.
#[inline(always)]
pub fn payload_len(width: u8, len: usize) -> usize {
    // len <= 4096 and width <= 64 in valid archives; saturate for hostile ones.
    len.saturating_mul(usize::from(width)).div_ceil(8)
}

/// The low-`w`-bits mask (`w` in 1..=64).
#[inline(always)]
pub(crate) fn mask(w: u32) -> u64 {
    if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }
}

/// The strict check of one value: whether the reconstruction of level `q` misses `bound`
/// (or is NaN).
#[inline(always)]
pub(crate) fn misses<T: SzpFloat>(x: T, q: i64, eb: f64, bound: f64) -> bool {
    let err = (x.to_f64() - reconstruct::<T>(q, eb).to_f64()).abs();
    err.is_nan() || err > bound
}

/// An encoder's strict check at one bound: [`Check::misses`] is exactly
/// [`misses`]`(x, q, eb, bound)`. On targets without an f64 FPU, f32 input goes through
/// [`Check32`] (constants computed here, once per block); elsewhere it is the f64 rule itself.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Check {
    eb: f64,
    bound: f64,
    c32: Check32,
    /// [`accept_below`]`(eb, bound)` on targets without an f64 FPU, else 0.
    below: u32,
}

impl Check {
    /// The check of reconstructions at `eb` against `bound`, with [`accept_below`]`(eb, bound)`
    /// as `below` (taken once per plan by the encoders: `Quant::below`; ignored on targets with
    /// an f64 FPU).
    #[inline(always)]
    pub(crate) fn with_below(eb: f64, bound: f64, below: u32) -> Check {
        let (e, b) = if F32_ONLY_FPU {
            (eb, bound)
        } else {
            (0.0, 0.0)
        };
        Check {
            eb,
            bound,
            c32: Check32::new(e, b),
            below: Self::skip_below(below),
        }
    }

    /// The magnitude bits under which a check made with `below` skips values: `below` on
    /// targets without an f64 FPU (where it is [`accept_below`]'s), and in the core's tests,
    /// which take the f32 encoders' skipping on hosts too; else 0. The encoders make the check
    /// itself only for the blocks that need it.
    #[inline(always)]
    pub(crate) fn skip_below(below: u32) -> u32 {
        if F32_ONLY_FPU || cfg!(test) { below } else { 0 }
    }

    /// [`Check::misses`] for `q` the level of `x` at this check's `eb` (as the encoders
    /// compute it): an f32 `x` whose magnitude's bits are at most [`accept_below`]'s meets the
    /// bound without a reconstruction.
    #[inline(always)]
    pub(crate) fn misses_level<T: SzpFloat>(&self, x: T, q: i64) -> bool {
        if F32_ONLY_FPU
            && let Some(&v) = (&x as &dyn core::any::Any).downcast_ref::<f32>()
            && v.to_bits() & 0x7fff_ffff <= self.below
        {
            return false;
        }
        self.misses(x, q)
    }

    /// Whether the reconstruction of level `q` misses `bound` for `x` (or is NaN).
    #[inline(always)]
    pub(crate) fn misses<T: SzpFloat>(&self, x: T, q: i64) -> bool {
        if F32_ONLY_FPU && let Some(&v) = (&x as &dyn core::any::Any).downcast_ref::<f32>() {
            return self.c32.misses(v, q);
        }
        misses(x, q, self.eb, self.bound)
    }
}

/// The bits of an f32 magnitude `T` (0 when there is none) such that every f32 `x` with
/// `|x| <= T`, quantized at `eb`, is reconstructed within `bound`: [`misses`] is false for it.
///
/// Why. For such `x` (finite) with level `q`: `|q·2eb − x| <= eb + |x|·2^-53` (the f64 division
/// and round half away); `RN64(2q·eb)` and its f32 rounding add at most
/// `|2q·eb|·(2^-53 + 2^-24 + 2^-77)` and `2^-150` (subnormal results), so
/// `|x − x'| <= eb + (|x| + eb)·k + 2^-149` with `k = 2^-24 + 2^-51`; the f64 difference of
/// the rule rounds monotonically, so it does not exceed `bound` when that sum does not.
/// `T = (S·2^24·(1 − 2^-20)² − eb·(1 + 2^-20))·(1 − 2^-20)` with `S = bound − eb`, each f32
/// operation rounding by at most `2^-24` relative (margins of `2^-20` each), meets
/// `(T + eb)·k <= S·(1 − 2^-21) <= S − 2^-149` for `S >= 2^-100`. Anything else (S smaller,
/// not finite, `T` not positive or above `2^100`) gives 0: every value is checked.
pub(crate) fn accept_below(eb: f64, bound: f64) -> u32 {
    let s = bound - eb;
    if !((1e-30..=1e30).contains(&s) && eb > 0.0 && eb <= 1e30) {
        return 0;
    }
    const M: f32 = 1.0 - 1.0 / 1_048_576.0;
    const C: f32 = 16_777_216.0 * M * M;
    let (s32, eb32) = (s as f32, eb as f32);
    let t = (s32 * C - eb32 * (1.0 + 1.0 / 1_048_576.0)) * M;
    if t > 0.0 && t <= 1e30 { t.to_bits() } else { 0 }
}

/// The f32 strict check without f64 arithmetic: [`Check32::misses`] equals
/// [`misses`]`::<f32>(x, q, eb, bound)` (`|f64(x) − f64(x')| > bound` or NaN, `x'` the
/// reconstruction) for every `x`, `q`, `eb` and `bound`.
///
/// Why it is exact. `x'` comes from [`Recon32`] (bit for bit the f64 rule's). For finite `x`
/// and `x'`, write each as an integer times a power of two (`X·2^ex`, `X < 2^24`, subnormals
/// included); when the exponents differ by at most 28 (or either is zero), `|x − x'|` is an
/// integer `S < 2^53` times `2^min(ex, ex')`, exact in f64, so the f64 subtraction does not
/// round and the rule is `S·2^emin > bound`: decided by comparing normalized exponents, then
/// 53-bit mantissas, with `bound = B·2^eB` taken apart once. Everything else (`x` or `x'` not
/// finite, exponents further apart, a `bound` that is not finite and positive) goes to the f64
/// rule itself.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Check32 {
    r: Recon32,
    /// The bound, for the f64 rule outside the fast path.
    bound: f64,
    /// `B` in `[2^52, 2^53)`; 0 when the fast path is off.
    b_man: u64,
    /// `eB`: `bound = B·2^eB`.
    b_exp: i32,
}

impl Check32 {
    /// The check at `eb` against `bound`: both bounds taken apart, once.
    #[inline(always)]
    pub(crate) fn new(eb: f64, bound: f64) -> Check32 {
        let (b_man, b_exp) = f64_parts(bound);
        Check32 {
            r: Recon32::new(eb),
            bound,
            b_man,
            b_exp,
        }
    }

    /// `|f64(x) − f64(x')| > bound` or NaN, `x'` the reconstruction of `q`.
    #[inline(always)]
    pub(crate) fn misses(&self, x: f32, q: i64) -> bool {
        let y = self.r.value(q);
        match self.fast(x, y) {
            Some(m) => m,
            None => self.slow(x, y),
        }
    }

    /// The f64 rule (outside the fast path), on the reconstruction `y`.
    #[inline(never)]
    fn slow(&self, x: f32, y: f32) -> bool {
        let err = (f64::from(x) - f64::from(y)).abs();
        err.is_nan() || err > self.bound
    }

    /// `x = X·2^e` (`X < 2^24`), or `None` when `x` is not finite.
    #[inline(always)]
    fn parts(x: f32) -> Option<(u64, i32)> {
        let b = x.to_bits();
        let (be, frac) = (((b >> 23) & 0xff) as i32, u64::from(b & 0x7f_ffff));
        match be {
            0xff => None,
            0 => Some((frac, -149)),
            _ => Some((frac | (1 << 23), be - 150)),
        }
    }

    /// The decision in integers, `None` outside the fast path (see [`Check32`]).
    #[inline(always)]
    fn fast(&self, x: f32, y: f32) -> Option<bool> {
        if self.b_man == 0 {
            return None;
        }
        let (xm, xe) = Self::parts(x)?;
        let (ym, ye) = Self::parts(y)?;
        let (s, e) = if xm == 0 {
            (ym, ye)
        } else if ym == 0 {
            (xm, xe)
        } else {
            let e = xe.min(ye);
            if xe.max(ye) - e > 28 {
                return None;
            }
            let (a, b) = (xm << (xe - e), ym << (ye - e));
            if x.is_sign_negative() == y.is_sign_negative() {
                (a.abs_diff(b), e)
            } else {
                (a + b, e)
            }
        };
        if s == 0 {
            return Some(false);
        }
        // |x − x'| = S·2^e with S < 2^53: normalize S to [2^52, 2^53) and compare with B·2^eB.
        let sh = s.leading_zeros() as i32 - 11;
        let (s, e) = (s << sh, e - sh);
        Some(e > self.b_exp || (e == self.b_exp && s > self.b_man))
    }
}

/// A 64-bit LSB-first bit accumulator writing whole little-endian words into `out`: the one
/// bit-stream writer of the portable kernels.
pub(crate) struct BitAcc<'a> {
    out: &'a mut [u8],
    acc: u64,
    fill: u32,
    pos: usize,
}

impl<'a> BitAcc<'a> {
    /// A writer at the start of `out`.
    #[inline(always)]
    pub(crate) fn new(out: &'a mut [u8]) -> Self {
        BitAcc {
            out,
            acc: 0,
            fill: 0,
            pos: 0,
        }
    }

    /// Appends the low `w` bits of `v` (`v < 2^w`, `1 <= w <= 64`).
    #[inline(always)]
    pub(crate) fn put(&mut self, v: u64, w: u32) {
        let fill = self.fill;
        // `fill < 64` always (it is 0 at first and `nf − 64 < 64` or `nf < 64` after each
        // call), so the shift keeps every bit of `v` that fits.
        self.acc |= v.wrapping_shl(fill);
        let nf = fill + w;
        if nf >= 64 {
            if let Some(dst) = self.out.get_mut(self.pos..self.pos + 8) {
                dst.copy_from_slice(&self.acc.to_le_bytes());
            }
            self.pos += 8;
            self.acc = if fill == 0 { 0 } else { v >> (64 - fill) };
            self.fill = nf - 64;
        } else {
            self.fill = nf;
        }
    }

    /// Writes the last `ceil(fill/8)` bytes.
    #[inline(always)]
    pub(crate) fn finish(self) {
        let tail = self.fill.div_ceil(8) as usize;
        let bytes = self.acc.to_le_bytes();
        if let (Some(dst), Some(src)) = (
            self.out.get_mut(self.pos..self.pos + tail),
            bytes.get(..tail),
        ) {
            dst.copy_from_slice(src);
        }
    }
}

/// Field `i` (width `w`, 1..=64) of an LSB-first payload: one unaligned 8-byte load when the
/// field's 8-byte window lies inside `payload` and `w <= 56`, else a bytewise read of its (at
/// most 9) bytes (missing bytes read as 0).
#[inline(always)]
pub(crate) fn field(payload: &[u8], i: usize, w: u32) -> u64 {
    let bit = i * w as usize;
    let from = bit / 8;
    if w <= 56
        && let Some(src) = payload.get(from..from + 8)
    {
        let mut b = [0u8; 8];
        b.copy_from_slice(src);
        return (u64::from_le_bytes(b) >> (bit % 8)) & mask(w);
    }
    // A field of up to 64 bits from bit `sh <= 7` spans at most 9 bytes: the low 8 as a word,
    // the ninth's bits above it (no 128-bit shifts: a library routine on 32-bit targets).
    // Byte by byte into the word, not copied into a buffer: a variable-length copy is a
    // `memcpy` call, which firmware decoders would link for this cold path alone.
    let (mut lo, mut l8) = (0u64, 0u8);
    let rest = payload.get(from..).unwrap_or(&[]);
    for (k, &byte) in rest.iter().take(9).enumerate() {
        if k < 8 {
            lo |= u64::from(byte) << (8 * k);
        } else {
            l8 = byte;
        }
    }
    let sh = (bit % 8) as u32;
    let lo = lo >> sh;
    // `l8 << (64 − sh)`, which is 0 for `sh = 0`.
    (lo | ((u64::from(l8) << 1) << (63 - sh))) & mask(w)
}

/// Most blocks in one head group of the block-head layout (`szp::Layout::Heads`): a group
/// holds `1 << min(5, chunk_shift)` blocks, so groups never straddle a checksum chunk.
pub const HEAD_GROUP_MAX: usize = 32;

/// The blocks per head group for an archive whose checksum chunks hold `2^chunk_shift`
/// blocks: `2^min(5, chunk_shift)`.
#[inline]
pub fn head_group(chunk_shift: u8) -> usize {
    if !cfg!(feature = "layout-heads") {
        // No block-head layout in this build (its archives are rejected at the header, its
        // configs at the plan): every head-group loop folds away.
        return 0;
    }
    1usize << chunk_shift.min(5)
}

/// The head trailer of a group (block-head layout): the bit length `hw` of the largest
/// `zigzag(head_j − head_{j−1})` (`head_{−1} = 0` at the start of every group).
#[inline]
pub(crate) fn heads_width(heads: &[i64]) -> u8 {
    heads_width_of(heads.iter().copied())
}

/// [`heads_width`] of the heads `heads` yields.
#[inline(always)]
fn heads_width_of(heads: impl Iterator<Item = i64>) -> u8 {
    let (mut prev, mut any) = (0i64, 0u64);
    for h in heads {
        any |= zigzag(h.wrapping_sub(prev));
        prev = h;
    }
    width(any)
}

/// Bytes of a head trailer of `cnt` heads at width `hw`: the width byte and the packed fields.
#[inline(always)]
pub fn trailer_len(hw: u8, cnt: usize) -> usize {
    1 + payload_len(hw, cnt)
}

/// Writes the head trailer of `heads` at the start of `out`: one byte `hw`
/// ([`heads_width`]), then `zigzag(head_j − head_{j−1})` packed LSB-first at `hw` bits (pad
/// bits zero). Returns its length, or `Err(length)` when `out` is shorter.
#[inline]
pub(crate) fn put_heads(heads: &[i64], out: &mut [u8]) -> Result<usize, usize> {
    put_heads_of(heads.len(), heads.iter().copied(), out)
}

/// [`put_heads`] of the `cnt` heads `head(0..cnt)`, each asked for twice (width, then
/// fields): a caller without an array of them passes a function that derives them again
/// (a `dyn` function: one copy of this code whatever derives them).
#[inline(never)]
pub(crate) fn put_heads_by(
    cnt: usize,
    head: &dyn Fn(usize) -> i64,
    out: &mut [u8],
) -> Result<usize, usize> {
    put_heads_of(cnt, (0..cnt).map(head), out)
}

/// The head trailer writer of [`put_heads`] and [`put_heads_by`]: `heads` (`cnt` of them) is
/// walked twice, for the width and for the fields.
#[inline(always)]
fn put_heads_of(
    cnt: usize,
    heads: impl Iterator<Item = i64> + Clone,
    out: &mut [u8],
) -> Result<usize, usize> {
    let hw = heads_width_of(heads.clone());
    let len = trailer_len(hw, cnt);
    let dst = out.get_mut(..len).ok_or(len)?;
    let Some((first, packed)) = dst.split_first_mut() else {
        return Err(len);
    };
    *first = hw;
    if hw > 0 {
        packed.fill(0);
        let mut acc = BitAcc::new(packed);
        let mut prev = 0i64;
        for h in heads {
            acc.put(zigzag(h.wrapping_sub(prev)), u32::from(hw));
            prev = h;
        }
        acc.finish();
    }
    Ok(len)
}

/// Unpack + unzigzag + prefix sum (from `seed`) of one block into `q` (`payload` is exactly
/// `ceil(len·w/8)` bytes, `1 <= w <= 64`).
#[inline(always)]
pub(crate) fn unpack_levels(payload: &[u8], w: u32, seed: i64, q: &mut [i64]) {
    let mask = mask(w);
    let mut acc = seed;
    let mut done = 0usize;
    if w <= 56 {
        let wz = w as usize;
        // Values whose 8-byte window lies inside the payload: one unaligned load each.
        let safe = if payload.len() >= 8 {
            ((payload.len() - 8) * 8 / wz + 1).min(q.len())
        } else {
            0
        };
        for (i, qi) in q.iter_mut().enumerate().take(safe) {
            let bit = i * wz;
            let mut b = [0u8; 8];
            if let Some(src) = payload.get(bit / 8..bit / 8 + 8) {
                b.copy_from_slice(src);
            }
            let v = (u64::from_le_bytes(b) >> (bit % 8)) & mask;
            acc = acc.wrapping_add(unzigzag(v));
            *qi = acc;
        }
        done = safe;
    }
    // The rest: read each value bytewise through a 128-bit window.
    for (i, qi) in q.iter_mut().enumerate().skip(done) {
        acc = acc.wrapping_add(unzigzag(field(payload, i, w)));
        *qi = acc;
    }
}

/// Why a head trailer ([`read_heads`]) cannot be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TrailerError {
    /// Its width byte is above 64.
    Width,
    /// It ends before its fields do.
    Truncated,
}

/// A head trailer (block-head layout) read one head at a time, in block order: the decoders
/// take each block's head as they reach the block, so no array of a group's heads sits on
/// their stack (firmware). (The stage layout has no trailer: its seeds are 0.)
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeadReader<'a> {
    /// The packed fields, with up to 8 bytes after them where the trailer is followed by more
    /// of the archive (each field at `w <= 56` is then one unaligned load; bits past a field
    /// are masked off).
    src: &'a [u8],
    w: u32,
    i: usize,
    acc: i64,
}

impl<'a> HeadReader<'a> {
    /// The reader of the trailer of `cnt` heads at the start of `src` (its width byte and its
    /// fields checked here), and the trailer's length.
    #[inline(always)]
    pub(crate) fn open(src: &'a [u8], cnt: usize) -> Result<(Self, usize), TrailerError> {
        let (&hw, packed) = src.split_first().ok_or(TrailerError::Truncated)?;
        if hw > 64 {
            return Err(TrailerError::Width);
        }
        let plen = payload_len(hw, cnt);
        let fields = packed.get(..plen).ok_or(TrailerError::Truncated)?;
        let src = packed.get(..plen + 8).unwrap_or(fields);
        let r = HeadReader {
            src,
            w: u32::from(hw),
            i: 0,
            acc: 0,
        };
        Ok((r, 1 + plen))
    }

    /// The next head: the fields prefix-summed from 0 (missing bytes read as 0).
    #[inline(always)]
    pub(crate) fn next_head(&mut self) -> i64 {
        if self.w > 0 {
            let u = field(self.src, self.i, self.w);
            self.acc = self.acc.wrapping_add(unzigzag(u));
        }
        self.i += 1;
        self.acc
    }
}

/// Reads the head trailer of `hs.len()` heads at the start of `src` into `hs` (the fields
/// prefix-summed from 0); returns the trailer's length.
#[inline(always)]
pub(crate) fn read_heads(src: &[u8], hs: &mut [i64]) -> Result<usize, TrailerError> {
    let (mut r, len) = HeadReader::open(src, hs.len())?;
    for h in hs.iter_mut() {
        *h = r.next_head();
    }
    Ok(len)
}

/// Writes `v` as LEB128 (7 bits a byte, low first, high bit = more; at most 10 bytes) at
/// `out[pos..]`; the position after it, or `None` if `out` ends first.
pub(crate) fn leb_put(out: &mut [u8], mut pos: usize, mut v: u64) -> Option<usize> {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        *out.get_mut(pos)? = b | if v != 0 { 0x80 } else { 0 };
        pos += 1;
        if v == 0 {
            return Some(pos);
        }
    }
}

/// Why [`leb_get`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Leb {
    /// The bytes end inside the value.
    Truncated,
    /// The value does not fit 64 bits (more than 10 bytes, or a 10th byte above 1).
    Overflow,
}

/// Reads a LEB128 value at `src[pos..]`: the value and the position after it.
pub(crate) fn leb_get(src: &[u8], mut pos: usize) -> Result<(u64, usize), Leb> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *src.get(pos).ok_or(Leb::Truncated)?;
        pos += 1;
        let bits = u64::from(b & 0x7f);
        if shift == 63 && bits > 1 {
            return Err(Leb::Overflow);
        }
        v |= bits << shift;
        if b & 0x80 == 0 {
            return Ok((v, pos));
        }
    }
    Err(Leb::Overflow)
}

/// Bytes of `v` as LEB128 (1..=10).
pub(crate) const fn leb_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros()).div_ceil(7) as usize
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn leb128_round_trips_and_rejects_short_or_overlong_input() {
        let mut b = [0u8; 12];
        for v in [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX] {
            let end = leb_put(&mut b, 1, v).unwrap();
            assert_eq!(end - 1, leb_len(v), "{v}");
            assert_eq!(leb_get(&b[..end], 1), Ok((v, end)), "{v}");
            assert_eq!(leb_get(&b[..end - 1], 1), Err(Leb::Truncated), "{v}");
        }
        assert_eq!(leb_put(&mut b[..3], 0, u64::MAX), None);
        // an 11th byte, or a 10th above 1: more than 64 bits
        assert_eq!(leb_get(&[0xff; 11], 0), Err(Leb::Overflow));
        let mut over = [0xffu8; 10];
        over[9] = 2;
        assert_eq!(leb_get(&over, 0), Err(Leb::Overflow));
        over[9] = 1;
        assert_eq!(leb_get(&over, 0), Ok((u64::MAX, 10)));
    }

    /// The f64 rule of [`quantize`], spelled out for f32 input.
    fn f64_rule(x: f32, eb: f64) -> i64 {
        round_half_away(f64::from(x) / (2.0 * eb))
    }

    /// Every f32 bit pattern with the sign bit clear, from `lo` to `hi`, and its negation,
    /// against the f64 rule (the fast path takes the sign into its fixed point, with a window
    /// of its own for negative values).
    fn sweep(eb: f64, lo: u32, hi: u32) -> u64 {
        let q = Quant32::new(eb);
        let qz = Quantizer::for_f32(eb);
        let mut n = 0u64;
        for b in lo..=hi {
            let x = f32::from_bits(b);
            let (got, want) = (q.level(x), f64_rule(x, eb));
            assert_eq!(got, want, "eb {eb:e}: x = {x:e} ({b:#010x})");
            let (got, want_neg) = (q.level(-x), f64_rule(-x, eb));
            assert_eq!(
                got,
                want_neg,
                "eb {eb:e}: x = {:e} ({:#010x})",
                -x,
                b | 1 << 31
            );
            // The block window of the tightest block holding the value (a wider one leaves
            // more to the integer path and decides the rest the same way).
            for (v, want) in [(x, want), (-x, want_neg)] {
                let s = q.fixed(v);
                let a = (s ^ (s >> 31)) as u32;
                if a < FIXED_LIMIT
                    && let Some(l) = Quant32::fast_window(s, qz.window(a))
                {
                    assert_eq!(i64::from(l), want, "window, eb {eb:e}: x = {v:e}");
                }
            }
            n += 1;
        }
        n
    }

    /// Bounds: the instrument's (1e-3 ABS, tightened as the strict plan does), a dyadic one (its
    /// quotients hit f64 ties exactly), one whose levels reach 2^62 and beyond (most values take
    /// the integer path, and saturate), a subnormal one, and one that overflows `2·eb`.
    const BOUNDS: [f64; 6] = [
        0.000_999_999_940_395_355_2,
        1.0 / 4096.0,
        1.0 / 3.0,
        1e-30,
        5e-324,
        1.5e308,
    ];

    /// Every f32, both signs (see [`sweep`]), for the instrument's bound and a dyadic one.
    /// Ignored in the default run (minutes: the integer path is a 55-step division);
    /// scripts/firmware.sh runs it in release. One thread: the core stays `no_std` even in its
    /// tests.
    #[test]
    #[ignore = "exhaustive over all 2^32 f32 per bound (minutes): run by scripts/firmware.sh in release"]
    fn quant32_equals_the_f64_rule_for_every_f32() {
        for eb in [BOUNDS[0], BOUNDS[1]] {
            assert_eq!(sweep(eb, 0, 0x7fff_ffff), 1 << 31);
        }
    }

    /// The f64 rule of [`reconstruct`] for f32 output, spelled out.
    fn recon_rule(q: i64, eb: f64) -> u32 {
        ((q as f64 * 2.0 * eb) as f32).to_bits()
    }

    /// Bounds for the reconstruction: the instrument's, dyadic ones (every product is exact in
    /// f64 and many land on f32 ties), all-ones mantissas (the f64 rounding carries), one just
    /// above an f32 tie pattern (`1 + 2^-24 + 2^-52`), common decimal ones, and ones at the
    /// edges of the fast path: f32 subnormal results, subnormal `eb`, overflowing results.
    fn recon_bounds() -> [f64; 24] {
        [
            0.000_999_999_940_395_355_2,
            1e-3,
            0.1,
            1.0 / 3.0,
            7.7e-6,
            1.0 / 4096.0,
            0.5,
            1.0,
            2f64.powi(-20),
            2f64.powi(-60),
            2f64.powi(-126),
            f64::from_bits(0x3f5f_ffff_ffff_ffff),
            f64::from_bits(0x3fef_ffff_ffff_ffff),
            f64::from_bits(0x3e7f_ffff_ffff_ffff),
            1.0 + 2f64.powi(-24) + 2f64.powi(-52),
            1.0 + 2f64.powi(-24) - 2f64.powi(-52),
            1.5 + 2f64.powi(-25),
            1e-40,
            1e-45,
            1e-310,
            5e-324,
            1e30,
            1e38,
            f64::MAX / 4.0,
        ]
    }

    /// Every level in `lo..=hi` (and its negation) against the f64 rule at `eb`; returns how
    /// many took the integer path.
    fn recon_sweep(eb: f64, lo: i64, hi: i64) -> u64 {
        let r = Recon32::new(eb);
        let mut fast = 0u64;
        for q in lo..=hi {
            let want = recon_rule(q, eb);
            assert_eq!(r.value(q).to_bits(), want, "eb {eb:e}: q = {q}");
            assert_eq!(r.total(q).to_bits(), want, "total, eb {eb:e}: q = {q}");
            fast += u64::from(r.fast_with::<ROUND_F64_RULE>(q).is_some());
            if let Ok(q32) = i32::try_from(q)
                && let Some(v) = r.quick(q32)
            {
                assert_eq!(v.to_bits(), want, "quick path, eb {eb:e}: q = {q}");
            }
        }
        fast
    }

    /// How many levels of `lo..=hi` [`Recon32::quick`] decides at `eb`.
    fn quick_count(eb: f64, lo: i32, hi: i32) -> usize {
        let r = Recon32::new(eb);
        (lo..=hi).filter(|&q| r.quick(q).is_some()).count()
    }

    /// Every level in `[-2^25, 2^25]` for every bound of [`recon_bounds`]. Ignored in the
    /// default run (about 1.6·10^9 reconstructions: 20 s in release, far longer in debug): run
    /// `cargo test --release -p fzpack-core --lib recon32 -- --include-ignored`.
    #[test]
    #[ignore = "exhaustive over 2^26 levels per bound (1.6e9 in all): run in release"]
    fn recon32_equals_the_f64_rule_for_every_level_to_2_25() {
        for eb in recon_bounds() {
            let fast = recon_sweep(eb, -(1 << 25), 1 << 25);
            if (1e-30..1e30).contains(&eb) {
                // Mid-range bounds: the integer path decides (almost) every level, and the
                // quick path all but about 4 in 256 for the first, common bounds (up to a
                // quarter for the constructed ones: dyadic or all-ones mantissas put many
                // products on the guarded ties).
                assert!(
                    fast > 1 << 25,
                    "eb {eb:e}: only {fast} levels on the integer path"
                );
                let quick = quick_count(eb, -(1 << 25), 1 << 25);
                let want = if recon_bounds().get(..5).is_some_and(|b| b.contains(&eb)) {
                    (1 << 26) / 256 * 251
                } else {
                    1 << 25
                };
                assert!(
                    quick > want,
                    "eb {eb:e}: only {quick} levels on the quick path"
                );
            }
        }
    }

    /// Every kind of f64 the integer forms of f64 arithmetic must treat as f64 does: zeros of
    /// both signs, infinities, NaN of both signs, a negative, the least subnormal, the largest
    /// subnormal, the largest finite value and the points where doubling overflows, 1 and
    /// the level limit.
    pub(crate) const SPECIAL_F64: [f64; 14] = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        -1e-300,
        f64::from_bits(1),
        f64::from_bits((1 << 52) - 1),
        f64::MAX,
        f64::from_bits(0x7fe0_0000_0000_0000), // 2^1023
        f64::from_bits(0x7fdf_ffff_ffff_ffff), // 2^1023 − 2^970
        1.0,
        LEVEL_LIMIT,
    ];

    /// A small xorshift generator (the core has no `rand`).
    pub(crate) fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// Levels and bounds where the f64 product is exactly an f32 tie, or within an f64 ulp of
    /// one: `eb` chosen as `t·2^k/(2q)` for a random odd 25-bit `t` (the midpoint of two f32s),
    /// nudged by up to 3 f64 ulps. Calls `f` on each case; returns how many hit an exact f64
    /// tie of f32 and how many double rounding decides differently from a single rounding.
    fn double_rounding_cases(count: usize, mut f: impl FnMut(i64, f64)) -> (u64, u64) {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let (mut ties, mut differ) = (0u64, 0u64);
        for _ in 0..count {
            let q = (xorshift(&mut s) % (1 << 26)) as i64 + 1;
            // An odd integer in [2^24, 2^25): the midpoint of two neighbouring f32s.
            let t = (((xorshift(&mut s) % (1 << 23)) << 1) | 1 | (1 << 24)) as f64;
            let scale = 2f64.powi((xorshift(&mut s) % 80) as i32 - 40);
            let base = (t * scale / (2.0 * q as f64)).to_bits();
            let nudge = (xorshift(&mut s) % 7) as i64 - 3;
            let eb = f64::from_bits(base.wrapping_add_signed(nudge));
            let q = if xorshift(&mut s) & 1 == 1 { -q } else { q };
            let r = Recon32::new(eb);
            let p = q as f64 * 2.0 * eb;
            // An f32 tie: 25 significant bits exactly (bit 28 of the 53-bit mantissa the last).
            let mb = (p.to_bits() & ((1 << 52) - 1)) | (1 << 52);
            ties += u64::from(mb.trailing_zeros() == 28);
            if let (Some(a), Some(b)) = (
                r.fast_with::<ROUND_F64_RULE>(q),
                r.fast_with::<ROUND_SINGLE>(q),
            ) {
                differ += u64::from(a.to_bits() != b.to_bits());
            }
            f(q, eb);
        }
        (ties, differ)
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of reconstructions: too slow for Miri")]
    fn recon32_equals_the_f64_rule_on_samples() {
        // The neighbourhood of 0, of powers of two and of 2^32 (the fast path's edge) for
        // every bound, and random levels over the whole i64 range.
        let mut s = 0x2545_f491_4f6c_dd1du64;
        for eb in recon_bounds() {
            let r = Recon32::new(eb);
            let check = |q: i64| {
                let want = recon_rule(q, eb);
                assert_eq!(r.value(q).to_bits(), want, "eb {eb:e}: q = {q}");
                assert_eq!(r.total(q).to_bits(), want, "total, eb {eb:e}: q = {q}");
            };
            for k in 0..63 {
                let c = 1i64 << k;
                for q in c.saturating_sub(20)..=c.saturating_add(20) {
                    check(q);
                    check(-q);
                }
            }
            for q in [i64::MIN, i64::MIN + 1, i64::MAX, 0, (1 << 32) - 1, 1 << 32] {
                check(q);
            }
            for _ in 0..20_000 {
                let v = xorshift(&mut s);
                check((v >> (v % 64)) as i64);
                check(v as i64);
            }
            recon_sweep(eb, -5000, 5000);
        }
        // Random bounds over the whole f64 range (sign bit clear), random levels.
        for _ in 0..200_000 {
            let eb = f64::from_bits(xorshift(&mut s) >> 1);
            let v = xorshift(&mut s);
            let q = (v as i64) >> (xorshift(&mut s) % 64);
            let r = Recon32::new(eb);
            let want = recon_rule(q, eb);
            assert_eq!(r.value(q).to_bits(), want, "eb {eb:e}: q = {q}");
            if r.man != 0 {
                assert_eq!(r.total(q).to_bits(), want, "total, eb {eb:e}: q = {q}");
            }
        }
        // The quick path on random i32 levels at random bounds (where it decides them).
        let mut quick = 0u32;
        for _ in 0..200_000 {
            let eb = f64::from_bits(xorshift(&mut s) >> 1);
            let v = xorshift(&mut s);
            let q = (v as i32) >> (xorshift(&mut s) % 32);
            if let Some(got) = Recon32::new(eb).quick(q) {
                assert_eq!(
                    got.to_bits(),
                    recon_rule(i64::from(q), eb),
                    "eb {eb:e}: q = {q}"
                );
                quick += 1;
            }
        }
        assert!(
            quick > 10_000,
            "the quick path decided only {quick} samples"
        );
        // The double-rounding corners: the set holds exact ties and cases that a single
        // rounding gets wrong, and the f64 rule is met on every one, by both paths.
        let (ties, differ) = double_rounding_cases(200_000, |q, eb| {
            let r = Recon32::new(eb);
            let want = recon_rule(q, eb);
            assert_eq!(r.value(q).to_bits(), want, "eb {eb:e}: q = {q}");
            assert_eq!(r.total(q).to_bits(), want, "total, eb {eb:e}: q = {q}");
            if let Some(v) = i32::try_from(q).ok().and_then(|q| r.quick(q)) {
                assert_eq!(v.to_bits(), want, "quick path, eb {eb:e}: q = {q}");
            }
        });
        assert!(
            ties > 10_000,
            "only {ties} exact f32 ties among the constructed cases"
        );
        assert!(
            differ > 5_000,
            "only {differ} cases where double rounding matters"
        );
    }

    /// Counts, per variant, the values `got` (where decided) that differ from `want`'s bits.
    fn count_wrong<const N: usize>(wrong: &mut [u64; N], want: u32, got: [Option<f32>; N]) {
        for (w, g) in wrong.iter_mut().zip(got) {
            *w += u64::from(g.is_some_and(|g| g.to_bits() != want));
        }
    }

    /// The checks above catch a wrong rounding: round-half-up at the f32 step, and a single
    /// rounding of the exact product, each disagree with the f64 rule on the same cases.
    #[test]
    #[cfg_attr(miri, ignore = "millions of reconstructions: too slow for Miri")]
    fn recon32_checks_catch_a_wrong_rounding() {
        let mut wrong = [0u64; 2];
        double_rounding_cases(50_000, |q, eb| {
            let r = Recon32::new(eb);
            let want = recon_rule(q, eb);
            count_wrong(
                &mut wrong,
                want,
                [
                    r.fast_with::<ROUND_HALF_UP>(q),
                    r.fast_with::<ROUND_SINGLE>(q),
                ],
            );
        });
        assert!(wrong[0] > 1000, "round-half-up went unnoticed: {wrong:?}");
        assert!(wrong[1] > 1000, "single rounding went unnoticed: {wrong:?}");
        // And dyadic bounds (exact products, many exact f32 ties) alone catch half-up.
        let r = Recon32::new(2f64.powi(-20));
        let half_up = (1i64 << 24..(1 << 24) + 10_000)
            .filter(|&q| {
                r.fast_with::<ROUND_HALF_UP>(q).map(f32::to_bits)
                    != Some(recon_rule(q, 2f64.powi(-20)))
            })
            .count();
        assert!(half_up > 1000, "round-half-up on exact ties: {half_up}");
    }

    /// The general integer path on the results it alone decides: f32 subnormal results near
    /// their rounding ties (exact ties of the f64 product, and an f64 ulp either side),
    /// overflow to infinity near `f32::MAX`, levels beyond `2^53` (rounded by `q as f64`), and
    /// random positive finite bounds; and NaN for a bound a header would refuse.
    #[test]
    #[cfg_attr(miri, ignore = "millions of reconstructions: too slow for Miri")]
    fn recon32_wide_equals_the_f64_rule() {
        let mut s = 0x6a09_e667_f3bc_c908u64;
        let check = |q: i64, eb: f64| {
            let r = Recon32::new(eb);
            assert_eq!(
                r.total(q).to_bits(),
                recon_rule(q, eb),
                "eb {eb:e}: q = {q}"
            );
            assert_eq!(
                r.wide(q).to_bits(),
                recon_rule(q, eb),
                "wide, eb {eb:e}: q = {q}"
            );
        };
        let (mut sub, mut inf) = (0u32, 0u32);
        for _ in 0..200_000 {
            let q = (xorshift(&mut s) % (1 << 40)) as i64 + 1;
            // A subnormal f32 midpoint (odd multiple of 2^-150) or the largest-f32 midpoint.
            let t = (xorshift(&mut s) % (1 << 23)) as f64 * 2.0 + 1.0;
            let target = if xorshift(&mut s) & 1 == 0 {
                t * 2f64.powi(-150)
            } else {
                (2f64.powi(24) - 1.0 + 0.5) * 2f64.powi(104)
            };
            let base = (target / (2.0 * q as f64)).to_bits();
            let eb = f64::from_bits(base.wrapping_add_signed((xorshift(&mut s) % 7) as i64 - 3));
            let q = if xorshift(&mut s) & 1 == 1 { -q } else { q };
            let v = f32::from_bits(recon_rule(q, eb));
            sub += u32::from(v != 0.0 && v.is_subnormal());
            inf += u32::from(v.is_infinite());
            check(q, eb);
        }
        assert!(
            sub > 50_000 && inf > 10_000,
            "{sub} subnormal, {inf} infinite results"
        );
        for _ in 0..200_000 {
            let eb = f64::from_bits(xorshift(&mut s) % 0x7ff0_0000_0000_0000)
                .max(f64::MIN_POSITIVE / 8.0);
            let q = xorshift(&mut s) as i64;
            check(q >> (xorshift(&mut s) % 64), eb);
            check(q | (1 << 62), eb);
        }
        for q in [
            i64::MIN,
            i64::MIN + 1,
            i64::MAX,
            (1 << 53) + 1,
            (1 << 53) + 3,
            -(1 << 54) - 2,
        ] {
            for eb in recon_bounds() {
                check(q, eb);
            }
        }
        // `M = 2^52 + 1` and `q = 2^52 + 2^51 + c + (2^28 − 1)` (`c` in bits 30..31): `P`'s top
        // 53 bits end in `2^28` (an f32 tie, its 24-bit part even) and the f64 guard bit is
        // set with the rest of `P` in its lowest 32 bits: only a sticky bit taken from all of
        // them rounds the f64 product up, and so the f32 one.
        for c in [0, 1 << 30, 2 << 30, 3 << 30] {
            for em in -140..-120 {
                let q = (1i64 << 52) + (1 << 51) + c + ((1 << 28) - 1);
                let eb = ((1u64 << 52) + 1) as f64 * 2f64.powi(em);
                check(q, eb);
                check(-q, eb);
            }
        }
        for eb in [0.0, -1.0, f64::INFINITY, f64::NAN] {
            assert!(Recon32::new(eb).total(3).is_nan(), "eb {eb}");
        }
    }

    /// The quick path's guard is needed in full: with fewer than 4 values of `t & 0xff` sent
    /// to the exact path, the double-rounding cases find wrong values.
    /// `RN32(a·b + c)` with one rounding, in f64 (Cortex-M's `VFMA.F32` is what
    /// `Fused32::run` uses on the target): the product is exact in f64 (24 + 24 bits), the
    /// sum's error exact by TwoSum, and the sum rounded to odd (the neighbour with an odd last
    /// bit where inexact) keeps enough bits (53 >= 24 + 2) for the f32 rounding to be the
    /// single rounding of the exact sum.
    pub(crate) fn fma(a: f32, b: f32, c: f32) -> f32 {
        let (p, c) = (f64::from(a) * f64::from(b), f64::from(c));
        let s = p + c;
        let bb = s - p;
        let e = (p - (s - bb)) + (c - bb);
        let odd = if e == 0.0 || s.to_bits() & 1 == 1 || !s.is_finite() {
            s
        } else if (e > 0.0) == (s > 0.0) {
            f64::from_bits(s.to_bits() + 1) // away from zero, toward the exact sum
        } else {
            f64::from_bits(s.to_bits() - 1)
        };
        odd as f32
    }

    /// [`fma`] rounds once: products on an f32 tie with an addend an f64 sum would lose.
    #[test]
    fn test_fma_rounds_once() {
        // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: a tie between 1 + 2^-11 (even) and the next f32.
        let (a, lo) = (1.0f32 + 2f32.powi(-12), 1.0f32 + 2f32.powi(-11));
        let hi = f32::from_bits(lo.to_bits() + 1);
        let tiny = 2f32.powi(-80);
        assert_eq!(fma(a, a, 0.0), lo); // the tie itself: to even
        assert_eq!(fma(a, a, tiny), hi); // above it (1 + 2^-11 + 2^-24 + 2^-80 in f64 is the tie)
        assert_eq!(fma(a, a, -tiny), lo);
        assert_eq!(fma(-a, a, -tiny), -hi);
        assert_eq!(fma(2.0, 3.0, 1.0), 7.0);
        assert_eq!(fma(0.0, 3.0, -0.0), 0.0);
    }

    /// [`Fused32`] at bound `eb` on level `q`: where it decides, the f64 rule's bits (else a
    /// failure); `None` where it does not.
    fn fused_check(f: &Fused32, q: i32, eb: f64) -> Option<()> {
        // What lets `fused_run` test four values at once: `(y2 − y1)·x` is 0 where the value
        // is decided, else a positive normal f32, so that a sum of such terms (each rounding
        // of a sum of non-negative terms is monotone) is 0 exactly when all four are decided.
        let (x, y1, y2) = f.bracket_with(q, fma);
        let d = y2 - y1;
        let t = f64::from(d) * f64::from(x); // exact: 24 + 24 bits
        if y1 == y2 {
            assert!(d == 0.0 && t == 0.0, "eb {eb:e}: q = {q}");
        } else {
            assert!(
                t >= f64::from(f32::MIN_POSITIVE) && (d * x).is_normal(),
                "eb {eb:e}: q = {q}: y1 {y1:e}, y2 {y2:e}"
            );
        }
        let v = f.get_with(q, fma)?;
        assert_eq!(
            v.to_bits(),
            recon_rule(i64::from(q), eb),
            "eb {eb:e}: q = {q}"
        );
        Some(())
    }

    /// The bounds of [`recon_bounds`] in [`Fused32`]'s range, and one that puts every odd
    /// level near 7·10^6 on an f32 tie (`2·eb = 1.5·(1 + 2^-45)`: `1.5·q` is a midpoint, and
    /// the product lies `2^-21` above it, inside the method's margin).
    fn fused_bounds() -> impl Iterator<Item = (f64, Fused32)> {
        recon_bounds()
            .into_iter()
            .chain([0.75 * (1.0 + 2f64.powi(-45))])
            .filter_map(|eb| Some((eb, Fused32::new(eb)?)))
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of reconstructions: too slow for Miri")]
    fn recon32_fused_equals_the_f64_rule_where_it_decides() {
        let mut s = 0x853c_49e6_748f_ea9bu64;
        // The bounds of the range's ends are in; the ends' neighbours are out.
        assert!(Fused32::new(2f64.powi(-61)).is_some() && Fused32::new(2f64.powi(58)).is_some());
        assert!(Fused32::new(2f64.powi(-62)).is_none() && Fused32::new(2f64.powi(59)).is_none());
        assert!(
            fused_bounds().count() >= 15,
            "only {} bounds in range",
            fused_bounds().count()
        );
        // Several of these bounds put products on f32 ties, where the method rightly leaves
        // many levels undecided.
        for (eb, f) in fused_bounds() {
            for k in 0..=24 {
                let c = 1i32 << k;
                for q in (c - 20).max(-(1 << 24))..=(c + 20).min(1 << 24) {
                    fused_check(&f, q, eb);
                    fused_check(&f, -q, eb);
                }
            }
            for _ in 0..20_000 {
                let v = xorshift(&mut s);
                let q = ((v >> 8) as i32) >> (v % 25 + 7); // |q| <= 2^24
                fused_check(&f, q, eb);
            }
        }
        // Random bounds in range (exponents of 2·eb in [-60, 59]), random levels: about one
        // level in 2^16 undecided.
        let (mut decided, mut undecided) = (0u64, 0u64);
        for _ in 0..200_000 {
            let e = (xorshift(&mut s) % 120) as i64 - 60 - 1;
            let eb = f64::from_bits((((e + 1023) as u64) << 52) | (xorshift(&mut s) >> 12));
            let v = xorshift(&mut s);
            let q = ((v >> 8) as i32) >> (v % 25 + 7);
            let f = Fused32::new(eb).unwrap_or_else(|| panic!("eb {eb:e} out of range"));
            match fused_check(&f, q, eb) {
                Some(()) => decided += 1,
                None => undecided += 1,
            }
        }
        assert!(
            undecided * 4096 < decided,
            "{undecided} undecided of {}",
            decided + undecided
        );
        // The double-rounding corners: decided ones equal the rule, and the cases that a
        // single rounding of the exact product gets wrong (the product within 2^-53 of an f32
        // tie) are all left undecided, to the integer path.
        let mut differ = 0u64;
        double_rounding_cases(200_000, |q, eb| {
            if let (Ok(q), Some(f)) = (i32::try_from(q), Fused32::new(eb))
                && q.unsigned_abs() <= 1 << 24
            {
                let d = fused_check(&f, q, eb).is_some();
                if let Some(single) = Recon32::new(eb).fast_with::<ROUND_SINGLE>(i64::from(q))
                    && single.to_bits() != recon_rule(i64::from(q), eb)
                {
                    assert!(
                        !d,
                        "eb {eb:e}: q = {q} decided where double rounding matters"
                    );
                    differ += 1;
                }
            }
        });
        assert!(
            differ > 1000,
            "only {differ} cases where double rounding matters"
        );
        // The tie bound: every odd level of the range is undecided, every even one decided.
        let eb = 0.75 * (1.0 + 2f64.powi(-45));
        let f = Fused32::new(eb).unwrap_or_else(|| panic!("tie bound"));
        for q in 7_000_000..7_000_100 {
            assert_eq!(fused_check(&f, q, eb).is_none(), q % 2 == 1, "q = {q}");
        }
    }

    /// The margin is needed: with `κ = 2^-60·hi` (below the constants' own error) some decided
    /// values differ from the rule on the double-rounding corners, none with the real margin.
    #[test]
    #[cfg_attr(miri, ignore = "millions of reconstructions: too slow for Miri")]
    fn recon32_fused_margin_is_needed() {
        let mut wrong = [0u64; 2];
        double_rounding_cases(200_000, |q, eb| {
            let Ok(q) = i32::try_from(q) else { return };
            if q.unsigned_abs() > 1 << 24 {
                return;
            }
            let want = recon_rule(i64::from(q), eb);
            let got = [
                Fused32::with_margin::<KAPPA>(eb).and_then(|f| f.get_with(q, fma)),
                Fused32::with_margin::<60>(eb).and_then(|f| f.get_with(q, fma)),
            ];
            count_wrong(&mut wrong, want, got);
        });
        assert_eq!(wrong[0], 0, "the real margin decided wrongly");
        assert!(wrong[1] > 0, "a margin of 2^-60 went unnoticed");
    }

    /// Every level in `[-2^24, 2^24]` for every bound of [`fused_bounds`]: decided ones equal
    /// the rule, and the undecided are rare (the tie bound's half of its levels near 1.5·2^23
    /// aside). Ignored in the default run: run in release (`recon32` tests, scripts/firmware.sh).
    #[test]
    #[ignore = "exhaustive over 2^25 levels per bound: run in release"]
    fn recon32_fused_equals_the_f64_rule_for_every_level_to_2_24() {
        for (eb, f) in fused_bounds() {
            let mut undecided = 0u64;
            for q in -(1 << 24)..=(1 << 24) {
                undecided += u64::from(fused_check(&f, q, eb).is_none());
            }
            let most = if eb == 0.75 * (1.0 + 2f64.powi(-45)) {
                1 << 23
            } else {
                1 << 12
            };
            assert!(undecided < most, "eb {eb:e}: {undecided} undecided");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of reconstructions: too slow for Miri")]
    fn recon32_quick_guard_is_needed() {
        let mut wrong = [0u64; 3];
        double_rounding_cases(200_000, |q, eb| {
            let (r, want) = (Recon32::new(eb), recon_rule(q, eb));
            let Ok(q) = i32::try_from(q) else { return };
            count_wrong(
                &mut wrong,
                want,
                [
                    r.quick_with::<0>(q),
                    r.quick_with::<2>(q),
                    r.quick_with::<3>(q),
                ],
            );
        });
        assert!(wrong[0] > 1000, "no guard went unnoticed: {wrong:?}");
        assert!(wrong[1] > 1000, "a guard of 2 went unnoticed: {wrong:?}");
        // Without `0x80` in the guard, exact ties rounding to even go wrong: a dyadic bound
        // (`Ml = 0`, so `u = t`) shows them.
        let r = Recon32::new(2f64.powi(-20));
        let ties_to_even = (1i32 << 24..(1 << 24) + 100_000)
            .filter(|&q| {
                r.quick_with::<3>(q).map(f32::to_bits)
                    != Some(recon_rule(i64::from(q), 2f64.powi(-20)))
                    && r.quick_with::<3>(q).is_some()
            })
            .count();
        assert!(
            ties_to_even > 1000,
            "a guard of 3 went unnoticed: {ties_to_even}"
        );
    }

    /// `(eb, bound)` pairs for the strict check: the plan's (`eb` tightened below `bound`),
    /// equal ones (dyadic: differences hit `bound` exactly), a bound one f64 ulp either side,
    /// tiny, zero, huge and non-finite bounds, and a subnormal-result `eb`.
    fn check_pairs() -> [(f64, f64); 14] {
        let t = 0.000_999_999_940_395_355_2;
        [
            (t, 1e-3),
            (1.0 / 1024.0, 1.0 / 1024.0),
            (0.25, 0.25),
            (1e-3, 1e-3),
            (1e-3, f64::from_bits(1e-3f64.to_bits() + 1)),
            (1e-3, f64::from_bits(1e-3f64.to_bits() - 1)),
            (1.0 / 3.0, 0.1),
            (1e-3, 2f64.powi(-149)),
            (1e-3, 5e-324),
            (1e-3, 0.0),
            (1e-3, 1e300),
            (1e-3, f64::INFINITY),
            (1e-3, f64::NAN),
            (1e-41, 1e-41),
        ]
    }

    /// `Check32` against [`misses`] for `x` at `q`, `q − 1` and `q + 1`.
    fn check_at(c: &Check32, x: f32, q: i64, eb: f64, bound: f64) {
        for l in [q, q.wrapping_sub(1), q.wrapping_add(1)] {
            assert_eq!(
                c.misses(x, l),
                misses::<f32>(x, l, eb, bound),
                "eb {eb:e} bound {bound:e}: x = {x:e}, q = {l}"
            );
        }
    }

    /// Every f32 (at its level and both neighbours) for the plan's pair and a dyadic one.
    /// Ignored in the default run (3·2^32 checks per pair): run
    /// `cargo test --release -p fzpack-core --lib check32 -- --include-ignored`.
    #[test]
    #[ignore = "exhaustive over all 2^32 f32 per pair: run in release"]
    fn check32_equals_the_f64_rule_for_every_f32() {
        for (eb, bound) in [check_pairs()[0], check_pairs()[1]] {
            let (c, qz) = (Check32::new(eb, bound), Quant32::new(eb));
            for b in 0..=u32::MAX {
                let x = f32::from_bits(b);
                check_at(&c, x, qz.level(x), eb, bound);
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of checks: too slow for Miri")]
    fn check32_equals_the_f64_rule_on_samples() {
        let mut exact_hits = 0u64;
        for (eb, bound) in check_pairs() {
            let (c, qz) = (Check32::new(eb, bound), Quant32::new(eb));
            // Every 997th f32 at its level.
            for b in (0..=u32::MAX).step_by(997) {
                let x = f32::from_bits(b);
                check_at(&c, x, qz.level(x), eb, bound);
            }
            // Around the edges of the bound: x near x' ± bound, 40 f32 ulps either side.
            for q in (-3000i64..3000).chain((1..40).map(|k| (1i64 << k) + 1)) {
                let y = reconstruct::<f32>(q, eb);
                for edge in [f64::from(y) + bound, f64::from(y) - bound] {
                    let c0 = (edge as f32).to_bits();
                    for b in c0.saturating_sub(40)..=c0.saturating_add(40) {
                        let x = f32::from_bits(b);
                        let d = (f64::from(x) - f64::from(y)).abs();
                        exact_hits += u64::from(d == bound);
                        check_at(&c, x, q, eb, bound);
                    }
                }
            }
        }
        // Differences equal to the bound (where `>` and `>=` part) were among the checks.
        assert!(
            exact_hits > 1000,
            "only {exact_hits} differences equal to the bound"
        );
    }

    /// Every f32 in `(lo, hi]` sampled (all of the `span` patterns nearest `hi`, then every
    /// 97th down to `lo`), both signs: how many reconstructions miss `bound`.
    fn misses_in(eb: f64, bound: f64, lo: u32, hi: u32, span: u32) -> u64 {
        let near = hi.saturating_sub(span)..=hi;
        let far = (lo..hi.saturating_sub(span)).step_by(97);
        let mut n = 0;
        for b in near.chain(far) {
            for x in [f32::from_bits(b), -f32::from_bits(b)] {
                n += u64::from(misses::<f32>(x, f64_rule(x, eb), eb, bound));
            }
        }
        n
    }

    #[test]
    fn abs_limit_equals_the_f64_comparison() {
        let mut s = 0x1234_5678_9abc_def1u64;
        let limits = [
            0.0,
            8.0,
            1e-3,
            0.1,
            1.0 / 3.0,
            f64::from(f32::MAX),
            f64::from(f32::MAX) * 1.000_001,
            1e300,
            f64::from(f32::from_bits(1)),
            1e-50,
        ];
        for m in limits {
            let l = AbsLimit::new(m);
            let mb = (m as f32).to_bits();
            // Around the limit's f32 neighbours, and random finite f32s (fewer under Miri,
            // whose budget this test took half of).
            let near = mb.saturating_sub(50)..=mb.saturating_add(50).min(0x7f7f_ffff);
            let count = if cfg!(miri) { 1_000 } else { 20_000 };
            let rand = (0..count).map(|_| xorshift(&mut s) as u32 & 0x7fff_ffff);
            for b in near.chain(rand).filter(|b| *b < 0x7f80_0000) {
                for x in [f32::from_bits(b), -f32::from_bits(b)] {
                    let want = f64::from(x).abs() > m;
                    assert_eq!(AbsLimit::bits_exceed(x, l.below), want, "m {m:e}: x {x:e}");
                    assert_eq!(l.exceeds(x), want, "m {m:e}: x {x:e}");
                }
            }
        }
    }

    /// The strict check's fast accept: no f32 at or below [`accept_below`]'s magnitude misses
    /// its bound, for strict plans' pairs; the magnitude is close to what the plan covers
    /// (values a little above it do miss, so the check is not vacuous there).
    #[test]
    #[cfg_attr(miri, ignore = "millions of checks: too slow for Miri")]
    fn accept_below_needs_no_check_at_or_below_it() {
        // `tighten(F32, bound, m)` for the instrument (`m = 8`), a larger magnitude and a
        // coarse bound, computed as the plan does.
        let tight = |bound: f64, m: f64| {
            bound
                - (m + bound) * (5.960_464_477_539_063e-8 + 8.881_784_197_001_252e-16)
                - 1.401_298_464_324_817e-45
        };
        for (bound, m) in [(1e-3, 8.0), (1e-2, 1000.0), (0.5, 3.0), (1e-6, 0.25)] {
            let eb = tight(bound, m);
            let t = accept_below(eb, bound);
            let tf = f32::from_bits(t);
            assert!(
                f64::from(tf) >= m * 0.999 && f64::from(tf) <= m * 1.001 + bound,
                "bound {bound:e}, m {m}: T = {tf:e}"
            );
            assert_eq!(
                misses_in(eb, bound, 0, t, 200_000),
                0,
                "bound {bound:e}: T = {tf:e}"
            );
        }
        // A bound with little room: T is about 16, and some values below 4·T miss (a T four
        // times larger would be wrong there), while none at or below T does.
        let (eb, bound) = (1.003e-3 * (1.0 - 1.0 / 1024.0), 1.003e-3);
        let t = accept_below(eb, bound);
        assert!(
            (15.0..17.0).contains(&f32::from_bits(t)),
            "{:e}",
            f32::from_bits(t)
        );
        assert_eq!(misses_in(eb, bound, 0, t, 200_000), 0);
        let above = (f32::from_bits(t) * 4.0).to_bits();
        assert!(misses_in(eb, bound, t + 1, above, 200_000) > 0);
        // No room (eb at or above the bound, or not finite): nothing is accepted unchecked.
        for (eb, bound) in [
            (1e-3, 1e-3),
            (2e-3, 1e-3),
            (1e-3, f64::NAN),
            (f64::INFINITY, 1.0),
        ] {
            assert_eq!(accept_below(eb, bound), 0);
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of sampled quotients: too slow for Miri")]
    fn quant32_equals_the_f64_rule_on_samples() {
        // Every 997th pattern for each bound, plus the neighbourhood of every level's tie
        // point (where both paths of `Quant32::level` meet) for a few thousand levels.
        for eb in BOUNDS {
            let q = Quant32::new(eb);
            for b in (0..=u32::MAX).step_by(997) {
                let x = f32::from_bits(b);
                assert_eq!(q.level(x), f64_rule(x, eb), "eb {eb:e}: x = {x:e}");
            }
        }
        let mut decided = 0u64;
        for eb in [1e-3, 1.0 / 4096.0, 0.3, 7.7e-6, 2.5e-2, 1.0 / 3.0] {
            let q = Quant32::new(eb);
            let qz = Quantizer::for_f32(eb);
            for m in (0..70_000i64)
                .step_by(7)
                .chain((1..40).map(|k| (1i64 << k) + 3))
            {
                let mid = (m as f64 + 0.5) * 2.0 * eb;
                let c = (mid as f32).to_bits();
                for b in c.saturating_sub(40)..=c.saturating_add(40) {
                    let x = f32::from_bits(b);
                    for v in [x, -x] {
                        let want = f64_rule(v, eb);
                        assert_eq!(q.level(v), want, "eb {eb:e}: x = {v:e}");
                        // The block windows: the tightest holding the value, and the widest.
                        let s = q.fixed(v);
                        let a = (s ^ (s >> 31)) as u32;
                        if a < FIXED_LIMIT {
                            for w in [qz.window(a), qz.window(FIXED_LIMIT)] {
                                if let Some(l) = Quant32::fast_window(s, w) {
                                    assert_eq!(i64::from(l), want, "window, eb {eb:e}: {v:e}");
                                    decided += 1;
                                }
                                let l = qz.level_window(v, s, w).map(i64::from);
                                let fits = want.unsigned_abs() < 1 << 30;
                                assert_eq!(l, fits.then_some(want), "eb {eb:e}: {v:e}");
                            }
                        }
                    }
                }
            }
        }
        assert!(decided > 1_000_000, "{decided} decided by a block window");
    }

    /// Near ties at the f64 rounding boundary: bounds built so that `|x|/e` lies just above
    /// or below `h − 2^(k−53)`, the point below the half-integer `h` from which the f64
    /// division rounds up to `h` (where the level goes up), on every side of it; against the
    /// f64 rule. Counts the cases where the f64 rounding decides the level (`t < h` exactly,
    /// yet the rule gives `m`), so the test is known to reach them.
    #[test]
    #[cfg_attr(miri, ignore = "thousands of 128-bit constructions: too slow for Miri")]
    fn quant32_near_ties_at_the_f64_rounding_boundary() {
        let mut s = 0x0123_4567_89ab_cdefu64;
        let mut rounded_up = 0;
        for i in 0..4000u64 {
            let m = if i < 40 {
                i + 1
            } else {
                xorshift(&mut s) % (1 << 16) + 1
            };
            let xm = (xorshift(&mut s) % (1 << 23)) as u32 | (1 << 23);
            let h2 = 2 * m - 1;
            let k = (64 - (h2 - 1).leading_zeros()) as i32 - 2;
            let d = (h2 << (52 - k)) - 1;
            // E = floor(X·2^sh / D) in [2^52, 2^53): the boundary case for this X and h.
            let sh = (52..120)
                .find(|&sh| (u128::from(xm) << sh) / u128::from(d) >= 1 << 52)
                .unwrap();
            let e0 = ((u128::from(xm) << sh) / u128::from(d)) as u64;
            let x = xm as f32; // X·2^0
            for e in [e0 - 1, e0, e0 + 1, e0 + 2] {
                if !(1 << 52..1 << 53).contains(&e) {
                    continue;
                }
                // sh = xe − ae + 53 − k with xe = 0: e = E·2^ae, eb = e/2.
                let ae = 53 - k - sh;
                let eb = e as f64 * 2f64.powi(ae - 1);
                let want = f64_rule(x, eb);
                assert_eq!(Quant32::new(eb).level(x), want, "m {m} X {xm} E {e}");
                // t < h exactly: 2X·2^-ae < H·E.
                let below =
                    (u128::from(xm) << 1) << (-ae).clamp(0, 100) < u128::from(h2) * u128::from(e);
                rounded_up += u32::from(below && want == m as i64);
            }
        }
        assert!(
            rounded_up > 100,
            "only {rounded_up} cases where the f64 rounding decides"
        );
    }

    /// Heads whose trailer has width `hw` (0..=64): deltas of up to `hw` zigzag bits.
    fn heads_at(hw: u32, seed: &mut u64) -> [i64; HEAD_GROUP_MAX] {
        let mut prev = 0i64;
        core::array::from_fn(|j| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            // The first delta reaches the full width, so the trailer is exactly `hw` wide.
            let u = if j == 0 { mask(hw) } else { *seed & mask(hw) };
            prev = prev.wrapping_add(unzigzag(u));
            prev
        })
    }

    /// The trailer written from an array and from a function that derives the heads are the
    /// same bytes, and read back (one head at a time, and into an array) with and without bytes
    /// after the trailer: at the end of the buffer every field takes the bytewise path.
    #[test]
    #[cfg_attr(miri, ignore = "every width 0..=64: too slow for Miri; runs natively")]
    fn head_trailers_round_trip_at_every_width() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for hw in 0..=64u32 {
            for cnt in [1usize, 2, 3, 7, 31, 32] {
                let all = heads_at(hw, &mut seed);
                let hs = &all[..cnt];
                assert_eq!(u32::from(heads_width(hs)), hw, "hw {hw} cnt {cnt}");
                let mut a = [0u8; 300];
                let mut b = [0xa5u8; 300];
                let la = put_heads(hs, &mut a).expect("room");
                let by = |j: usize| hs[j];
                let lb = put_heads_by(cnt, &by, &mut b).expect("room");
                assert_eq!((la, &a[..la]), (lb, &b[..lb]), "hw {hw} cnt {cnt}");
                assert_eq!(la, trailer_len(hw as u8, cnt));
                assert_eq!(put_heads(hs, &mut a[..la - 1]), Err(la));
                // Followed by set bits (masked off), and alone (the bytewise path).
                for src in [&b[..la + 8], &b[..la]] {
                    let mut back = [0i64; HEAD_GROUP_MAX];
                    assert_eq!(read_heads(src, &mut back[..cnt]), Ok(la));
                    assert_eq!(
                        &back[..cnt],
                        hs,
                        "hw {hw} cnt {cnt} tail {}",
                        src.len() - la
                    );
                    let (mut r, len) = HeadReader::open(src, cnt).expect("trailer");
                    assert_eq!(len, la);
                    assert!(hs.iter().all(|&h| r.next_head() == h));
                }
                if la > 1 {
                    let mut back = [0i64; HEAD_GROUP_MAX];
                    let got = read_heads(&b[..la - 1], &mut back[..cnt]);
                    assert_eq!(got, Err(TrailerError::Truncated));
                }
            }
        }
        let mut bad = [65u8, 0, 0];
        assert_eq!(read_heads(&bad, &mut [0i64; 1]), Err(TrailerError::Width));
        bad[0] = 0;
        assert_eq!(read_heads(&bad, &mut [0i64; 3]), Ok(1));
    }

    /// `2^k` for a normal f64 `2^k`, from its bits (`powi` may be off by an ulp: Miri makes it
    /// so on purpose).
    fn exact_pow2(k: i32) -> f64 {
        f64::from_bits(((1023 + k) as u64) << 52)
    }

    /// Bounds whose step `2·eb` is an f32: common ones rounded to f32, dyadic, the least and
    /// the largest normal step (results from the least normal up, and every level from 2 on
    /// overflowing), one where levels near 2^24 overflow, and random f32 bounds.
    fn step_bounds() -> [f64; 12] {
        let mut s = 0x1234_5678_9abc_def0u64;
        let mut rnd = || {
            f64::from(f32::from_bits(
                0x2000_0000 + (xorshift(&mut s) % 0x3f00_0000) as u32,
            ))
        };
        [
            f64::from(1e-3f32),
            f64::from(0.05f32),
            1.0 / 4096.0,
            f64::from(1.0f32 / 3.0),
            f64::from(f32::MIN_POSITIVE) / 2.0,
            f64::from(f32::MAX) / 2.0,
            f64::from(f32::MAX) / exact_pow2(24),
            f64::from(f32::from_bits(0x00ff_ffff)) * exact_pow2(100),
            rnd(),
            rnd(),
            rnd(),
            rnd(),
        ]
    }

    /// `q as f32 * step` against the f64 rule on the levels `q` of `levels` and their
    /// negations, at `eb`.
    fn step_sweep(eb: f64, levels: impl Iterator<Item = i64>) {
        let step = f32_step(eb);
        assert_eq!(step.to_bits(), ((2.0 * eb) as f32).to_bits(), "eb {eb:e}");
        assert!(step.is_normal(), "eb {eb:e}");
        for q in levels {
            for q in [q, -q] {
                let got = (q as f32 * step).to_bits();
                assert_eq!(got, recon_rule(q, eb), "eb {eb:e}: q = {q}");
            }
        }
    }

    #[test]
    fn recon32_f32_step_equals_the_f64_rule_on_samples() {
        let (small, random) = if cfg!(miri) {
            (64, 64)
        } else {
            (1 << 16, 1 << 16)
        };
        let mut s = 0x0bad_cafe_f00d_d00du64;
        for eb in step_bounds() {
            step_sweep(eb, 0..=small);
            let edges = [(1 << 24) - 1, 1 << 24, (1 << 23) + 1, 3 << 22];
            step_sweep(eb, edges.into_iter());
            step_sweep(
                eb,
                (0..random).map(|_| (xorshift(&mut s) % (1 << 24)) as i64 + 1),
            );
        }
    }

    /// Every level in `[-2^24, 2^24]` (the range the decoder sends to the one-multiply path)
    /// for every bound of [`step_bounds`]. Ignored in the default run; run by
    /// scripts/firmware.sh in release with the other reconstruction sweeps.
    #[test]
    #[ignore = "exhaustive over 2^25 levels per bound: run in release"]
    fn recon32_f32_step_equals_the_f64_rule_for_every_level_to_2_24() {
        for eb in step_bounds() {
            step_sweep(eb, 0..=1 << 24);
        }
    }

    #[test]
    fn f32_step_is_off_where_the_step_is_no_normal_f32() {
        let on = f64::from(1e-3f32);
        for eb in [
            1e-3,                             // 53 significant bits
            f64::from_bits(on.to_bits() + 1), // 25 and more
            f64::from_bits(on.to_bits() + (1 << 28)),
            exact_pow2(-128),    // a subnormal f32 step
            f64::from(f32::MAX), // 2·eb overflows f32
            0.0,
            -1.0 / 4096.0,
            f64::INFINITY,
            f64::NAN,
            f64::from_bits(1 << 40), // a subnormal f64
        ] {
            assert_eq!(f32_step(eb).to_bits(), 0, "eb {eb:e}");
            assert_eq!(Recon::new(eb).step32(), None, "eb {eb:e}");
        }
        for eb in [on, exact_pow2(-127), f64::from(f32::MAX) / 2.0] {
            assert_eq!(
                f32_step(eb).to_bits(),
                ((2.0 * eb) as f32).to_bits(),
                "eb {eb:e}"
            );
            assert_eq!(
                Recon::new(eb).step32(),
                Some((2.0 * eb) as f32),
                "eb {eb:e}"
            );
        }
    }

    #[test]
    fn f32_step_below_rounds_down_to_24_significant_bits() {
        let mut s = 0x5eed_0f5e_ed0f_5eedu64;
        for i in 0..if cfg!(miri) { 500 } else { 20_000 } {
            // Random normal f64 bounds across f32's range and beyond it.
            let eb = f64::from_bits((xorshift(&mut s) >> 2) % 0x7fe0_0000_0000_0000 + (1 << 52));
            let eb = if i == 0 { 1e-3 } else { eb };
            let r = f32_step_below(eb);
            assert!(r <= eb && eb - r < eb * exact_pow2(-23), "eb {eb:e}: {r:e}");
            assert_eq!(r.to_bits() & ((1 << 29) - 1), 0, "eb {eb:e}");
            assert_eq!(f32_step_below(r).to_bits(), r.to_bits(), "idempotent");
            let step = 2.0 * r;
            if (f64::from(f32::MIN_POSITIVE)..=f64::from(f32::MAX)).contains(&step) {
                assert_eq!(f32_step(r).to_bits(), (step as f32).to_bits(), "eb {eb:e}");
            }
        }
        let sub = f64::from_bits(12345);
        assert_eq!(f32_step_below(sub).to_bits(), sub.to_bits());
    }

    /// A random positive finite f64 for the integer f64 forms' tests: any exponent, or one near `center`
    /// (so that products land near overflow and in the subnormals); a mantissa of random
    /// length (short ones make exact products, and ties, common).
    pub(crate) fn spread_f64(s: &mut u64, center: i64) -> f64 {
        let r = xorshift(s);
        let be = if r & 1 == 0 {
            (r >> 1) % 0x7ff
        } else {
            (center + ((r >> 1) % 64) as i64 - 32).clamp(0, 0x7fe) as u64
        };
        let keep = xorshift(s) % 53;
        let frac = (xorshift(s) & ((1 << 52) - 1)) >> (52 - keep) << (52 - keep);
        let b = (be << 52) | frac;
        f64::from_bits(if b == 0 { 1 } else { b })
    }

    /// `mul_f64_bits` is the f64 product, rounded as IEEE 754 rounds it (the host's multiply):
    /// across every exponent, near overflow, through the subnormals and at exact ties.
    #[test]
    fn mul_f64_bits_is_the_f64_product() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let n = if cfg!(miri) { 100 } else { 400_000 };
        let (mut ties, mut subnormal, mut inf) = (0u32, 0u32, 0u32);
        for i in 0..n {
            // Centres whose sum is 1023 + 1023 (overflow), 1023 − 1075 (the subnormals), or
            // the middle of the range.
            let (ca, cb) = [(1023 + 511, 1023 + 512), (511, 512 - 52), (1023, 1023)][i % 3];
            let (a, b) = (spread_f64(&mut s, ca), spread_f64(&mut s, cb));
            let want = (a * b).to_bits();
            assert_eq!(mul_f64_bits(a, b), Some(want), "{a:e} * {b:e}");
            assert_eq!(mul_f64_bits(b, a), Some(want), "{b:e} * {a:e}");
            // A tie: a normal result whose exact product has 54 significant bits.
            let p = u128::from(f64_parts(a).0) * u128::from(f64_parts(b).0);
            let span = 128 - p.leading_zeros() - p.trailing_zeros();
            ties += u32::from(span == 54 && f64::from_bits(want).is_normal());
            subnormal += u32::from(f64::from_bits(want).is_subnormal());
            inf += u32::from(want == f64::INFINITY.to_bits());
        }
        for (a, b) in [
            (f64::MIN_POSITIVE, 0.5),
            (f64::from_bits(1), 0.5),
            (f64::from_bits(3), 0.5),
            (f64::from_bits(1), 1.5),
            (f64::MAX, 1.0),
            (f64::MAX, 1.0 + f64::EPSILON),
            (2f64.powi(-537), 3.0 * 2f64.powi(-538)),
            (1.0 - f64::EPSILON / 2.0, f64::MIN_POSITIVE),
        ] {
            assert_eq!(mul_f64_bits(a, b), Some((a * b).to_bits()), "{a:e} * {b:e}");
        }
        for bad in [0.0, -0.0, -1.0, f64::INFINITY, f64::NAN, -f64::MIN_POSITIVE] {
            assert_eq!(mul_f64_bits(bad, 1.0), None);
            assert_eq!(mul_f64_bits(1.0, bad), None);
        }
        if !cfg!(miri) {
            assert!(
                ties > 1_000 && subnormal > 10_000 && inf > 10_000,
                "{ties} ties, {subnormal} subnormal, {inf} infinite"
            );
        }
    }

    /// `half_quotient_int` is `mag / (2.0 * eb)` as the host's f64 division has it, and
    /// `level_vs_limit_int` its comparison with the level limit: for quotients within a few ulps
    /// of the limit (where the rounding decides), across all exponents (overflow, subnormals),
    /// and for zeros, infinities, NaN and signs; `div_f64_bits` through `half_quotient`.
    #[test]
    fn half_quotient_is_the_f64_division() {
        let same = |m: f64, e: f64| {
            let (got, want) = (half_quotient_int(m, e), m / (2.0 * e));
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{m:e} / (2·{e:e}): {got:e}, not {want:e}"
            );
            got
        };
        let mut s = 0x51_7cc1_b727_220au64;
        let n = if cfg!(miri) { 100 } else { 300_000 };
        let (mut at, mut beyond, mut subnormal, mut inf) = (0u32, 0u32, 0u32, 0u32);
        for i in 0..n {
            let eb = spread_f64(&mut s, [1023 - 62, 1023 + 700, 1023 - 600][i % 3]);
            let r = xorshift(&mut s);
            let mag = match i % 4 {
                // Near `eb·2^63` (the limit), a few ulps either way.
                0 => f64::from_bits(
                    (eb * 2f64.powi(63))
                        .to_bits()
                        .wrapping_add(r % 9)
                        .wrapping_sub(4),
                ),
                // Near `eb·2^63·(1 − 2^-53)` and `eb·2^62`.
                1 => f64::from_bits(
                    (eb * 2f64.powi(63 - (r & 1) as i32) * (1.0 - f64::EPSILON / 2.0))
                        .to_bits()
                        .wrapping_add((r >> 1) % 5)
                        .wrapping_sub(2),
                ),
                // Quotients that overflow or are subnormal.
                2 => spread_f64(
                    &mut s,
                    [1023 + 62, 1023 + 700 - 1050, 1023 - 600 + 1050][i % 3],
                ),
                _ => spread_f64(&mut s, 1023),
            };
            let q = same(mag, eb);
            same(-mag, -eb);
            same(-mag, eb);
            for (m, e) in [(mag, eb), (-mag, -eb), (-mag, eb)] {
                let q = m / (2.0 * e);
                let want = (!q.is_nan()).then_some(q >= LEVEL_LIMIT);
                assert_eq!(level_vs_limit_int(m, e), want);
            }
            at += u32::from(q == LEVEL_LIMIT);
            beyond += u32::from(q >= LEVEL_LIMIT);
            subnormal += u32::from(q.is_subnormal());
            inf += u32::from(q.is_infinite());
        }
        let special = SPECIAL_F64;
        for m in special {
            for e in special {
                for m in [m, -m] {
                    let q = same(m, e);
                    let want = (!q.is_nan()).then_some(q >= LEVEL_LIMIT);
                    assert_eq!(level_vs_limit_int(m, e), want);
                }
            }
        }
        assert!(
            cfg!(miri)
                || (at > 10_000
                    && beyond > 50_000
                    && beyond < n as u32 - 50_000
                    && subnormal > 2_000
                    && inf > 5_000),
            "{at} quotients at the limit, {beyond} at or beyond it, {subnormal} subnormal, {inf} infinite"
        );
    }
}
