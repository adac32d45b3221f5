//! One block of an operation: the combined deltas of every input's block, zigzagged, the
//! block's width and its packed payload. Three ways, the same bytes: the AVX-512 combines
//! (`arch::x86_64::avx512::ops`, one or two inputs with coefficients ±1), the scalar unpack
//! (wrapping i64 sums, where the `fast` test proves that they cannot wrap) and the exact
//! reference ([`exact_block`]: per-element levels in checked `i128`, every overflow an error).

#[cfg(target_arch = "x86_64")]
use crate::arch::x86_64::{Avx512Vbmi, avx512::ops as simd};
use crate::bits::{BitAcc, field, payload_len, unzigzag, width, zigzag};

use super::super::{DType, Error, MAX_BLOCK_SIZE};
use super::input::{LEVEL_LIMIT, MAX_TERMS, Term};

/// Values per unpack chunk (the combined deltas of up to this many values at a time).
pub(super) const CHUNK: usize = 512;

/// The largest block: every block is combined into one zigzag scratch of this size, so its
/// inputs are unpacked once (width and packing both read the scratch).
const MAX_BLOCK: usize = MAX_BLOCK_SIZE as usize;

/// How blocks are combined.
#[derive(Clone, Copy)]
pub(super) enum Path {
    /// Every block through [`exact_block`] (the reference).
    Exact,
    /// The scalar unpack where the `fast` test allows, else [`exact_block`].
    Scalar,
    /// As [`Path::Scalar`], with the AVX-512 combines for one or two inputs with coefficients
    /// ±1.
    #[cfg(target_arch = "x86_64")]
    Avx512(Avx512Vbmi),
}

/// The fixed facts of one operation.
pub(super) struct Grid {
    pub(super) n: usize,
    pub(super) bs: usize,
    pub(super) eb: f64,
    pub(super) dtype: DType,
    /// The largest finite value of the element type ([`type_max`]).
    pub(super) tmax: f64,
    /// Every block takes the exact path.
    pub(super) exact_only: bool,
    /// Check that every input level's value is finite (bounds so large that some levels'
    /// values are not: then every block takes the exact path).
    pub(super) inputs_finite: bool,
}

impl Grid {
    /// Values in block `b`.
    #[inline(always)]
    pub(super) fn len(&self, b: usize) -> usize {
        self.n
            .saturating_sub(b.saturating_mul(self.bs))
            .min(self.bs)
    }

    /// The `fast` test: a block whose every `|level|` is at most `crude` takes wrapping i64
    /// sums (they cannot wrap) and its levels reconstruct finitely.
    #[inline(always)]
    pub(super) fn fast(&self, crude: f64) -> bool {
        !self.exact_only
            && crude < (1u64 << 61) as f64
            && crude * 2.0 * self.eb * (1.0 + 1e-12) <= self.tmax
    }
}

/// Where a block stands among its neighbours: whether the whole run passed the `fast` test,
/// `Σ |cⱼ| · max|hⱼ|` of the current head groups (0 in the stage layout), and the result
/// head of the block (its first level; 0 in the stage layout).
#[derive(Clone, Copy)]
pub(super) struct At {
    pub(super) all_fast: bool,
    pub(super) hb: f64,
    pub(super) seed: i64,
}

/// The output archive while it is written: the next payload byte `pos`, and whether
/// everything so far fit (`pos` keeps counting when it did not, for the needed length).
pub(super) struct Out<'o> {
    pub(super) buf: &'o mut [u8],
    /// Where block 0's width byte goes (block `b`'s at `wpos + b`).
    pub(super) wpos: usize,
    pub(super) pos: usize,
    pub(super) fits: bool,
}

impl Out<'_> {
    /// The next `cost` payload bytes, while the output fits.
    #[inline(always)]
    fn payload(&mut self, cost: usize) -> Option<&mut [u8]> {
        if self.fits {
            self.buf.get_mut(self.pos..self.pos.saturating_add(cost))
        } else {
            None
        }
    }

    /// Ends block `b` of `len` values at width `w`: its width byte, and `pos` past its
    /// payload; clears `fits` when the payload does not fit.
    #[inline(always)]
    fn end_block(&mut self, b: usize, w: u32, len: usize) {
        let cost = payload_len(w as u8, len);
        let end = self.pos.saturating_add(cost);
        let room = self.fits && end <= self.buf.len();
        match self.buf.get_mut(self.wpos.saturating_add(b)) {
            Some(slot) if room => *slot = w as u8,
            _ => self.fits = false,
        }
        self.pos = end;
    }
}

/// The per-block scratch of one operation.
pub(super) struct Scratch {
    /// Set up on first use (the run kernel needs neither: no 36 KiB clear per call).
    acc: Option<[i64; CHUNK]>,
    zz: Option<[u64; MAX_BLOCK]>,
    /// The AVX-512 combines, where they apply (one or two inputs, coefficients ±1, the path).
    #[cfg(target_arch = "x86_64")]
    pub(super) simd: Option<Avx512Vbmi>,
    #[cfg(target_arch = "x86_64")]
    pub(super) z32: [u32; MAX_BLOCK],
}

impl Scratch {
    /// The scratch of `path` for the inputs `terms`.
    pub(super) fn new(path: Path, terms: &[Term<'_>]) -> Scratch {
        let _ = (path, terms);
        Scratch {
            acc: None,
            zz: None,
            #[cfg(target_arch = "x86_64")]
            simd: match path {
                Path::Avx512(t)
                    if terms.len() <= 2 && terms.iter().all(|t| t.c == 1 || t.c == -1) =>
                {
                    Some(t)
                }
                _ => None,
            },
            #[cfg(target_arch = "x86_64")]
            z32: [0u32; MAX_BLOCK],
        }
    }
}

/// Largest finite value of the element type, as f64.
pub(super) fn type_max(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f64::from(f32::MAX),
        DType::F64 => f64::MAX,
    }
}

/// Whether level `q` reconstructs (`(q·2)·eb` in f64, then the element type) to a finite value.
#[inline]
pub(super) fn recon_finite(q: i64, eb: f64, dtype: DType) -> bool {
    let v = q as f64 * 2.0 * eb;
    match dtype {
        DType::F32 => (v as f32).is_finite(),
        DType::F64 => v.is_finite(),
    }
}

/// `2^(w−1)` for a width `w` (0 for `w = 0`): the largest `|delta|` a width-`w` field holds.
pub(super) fn pow2_below(w: u8) -> f64 {
    if w == 0 {
        0.0
    } else {
        // w in 1..=255: 2^(w-1) built from its exponent bits (finite up to 2^254).
        f64::from_bits((u64::from(w) - 1 + 1023) << 52)
    }
}

/// Combines block `b` of every input into the output (the per-block path: the AVX-512
/// combines where they apply, else the scalar unpack where the `fast` test allows, else the
/// exact reference); advances the output and every input's offset.
pub(super) fn one_block(
    terms: &mut [Term<'_>],
    b: usize,
    g: &Grid,
    at: At,
    out: &mut Out<'_>,
    sc: &mut Scratch,
) -> Result<(), Error> {
    let len = g.len(b);
    let fast = at.all_fast || {
        // Crude bound on every |level| of this block: |q| <= len · 2^(w-1) per input.
        let mut crude = at.hb;
        for t in terms.iter() {
            crude += t.c.unsigned_abs() as f64 * len as f64 * pow2_below(t.width(b));
        }
        g.fast(crude)
    };
    let w = match fast.then(|| combine_fast(terms, b, len, out, sc)).flatten() {
        Some(w) => w,
        None => combine_exact(terms, b, len, g, at.seed, out)
            .map_err(|e| e.error(b.saturating_mul(g.bs)))?,
    };
    out.end_block(b, w, len);
    for t in terms.iter_mut() {
        t.off = t.off.saturating_add(payload_len(t.width(b), len));
    }
    Ok(())
}

/// The fast paths of one block (the `fast` test passed): combines, packs the payload while
/// the output fits, and returns the block's width.
#[inline(always)]
fn combine_fast(
    terms: &[Term<'_>],
    b: usize,
    len: usize,
    out: &mut Out<'_>,
    sc: &mut Scratch,
) -> Option<u32> {
    let zz = sc.zz.get_or_insert([0u64; MAX_BLOCK]);
    let zz = zz.get_mut(..len)?;
    // The AVX-512 combines where the CPU has them (x86_64 only), else none.
    #[cfg(target_arch = "x86_64")]
    let any64 = match sc.simd {
        Some(token) => {
            let ins = simd_inputs(terms, b);
            let ins = ins.get(..terms.len()).unwrap_or(&ins);
            if let Some(w) = combine_simd32(token, ins, len, &mut sc.z32, out) {
                return Some(w);
            }
            simd::combine64(token, ins, len, zz)
        }
        None => None,
    };
    #[cfg(not(target_arch = "x86_64"))]
    let any64: Option<u64> = None;
    let any = match any64 {
        Some(any) => any,
        None => combine_scalar(terms, b, sc.acc.get_or_insert([0i64; CHUNK]), zz),
    };
    let w = u32::from(width(any));
    if w > 0
        && let Some(dst) = out.payload(payload_len(w as u8, len))
    {
        pack_into(zz, w, dst);
    }
    Some(w)
}

/// The AVX-512 VBMI combine of a block whose inputs and result have widths up to 24, packed
/// by the encoder's VBMI packer; `None` for a block it does not cover.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn combine_simd32(
    token: Avx512Vbmi,
    ins: &[(&[u8], u8, bool)],
    len: usize,
    z32: &mut [u32],
    out: &mut Out<'_>,
) -> Option<u32> {
    let z = z32.get_mut(..len)?;
    let w = 32 - simd::combine(token, ins, len, z)?.leading_zeros();
    if w > 24 {
        return None;
    }
    if w > 0
        && let Some(dst) = out.payload(payload_len(w as u8, len))
    {
        simd::pack(token, z, w, dst);
    }
    Some(w)
}

/// The AVX-512 combines' view of block `b` of (up to two) inputs: each one's payload from the
/// block on, its width and whether it is subtracted.
#[cfg(target_arch = "x86_64")]
fn simd_inputs<'a>(terms: &[Term<'a>], b: usize) -> [(&'a [u8], u8, bool); 2] {
    let mut ins: [(&[u8], u8, bool); 2] = [(&[], 0, false); 2];
    for (slot, t) in ins.iter_mut().zip(terms.iter()) {
        *slot = (t.rest(), t.width(b), t.c < 0);
    }
    ins
}

/// The scalar combine of block `b` (`zz.len()` values): every input unpacked once, chunk by
/// chunk, into the block's zigzag scratch `zz`; returns the OR of the zigzag values.
#[inline(always)]
fn combine_scalar(terms: &[Term<'_>], b: usize, acc: &mut [i64; CHUNK], zz: &mut [u64]) -> u64 {
    let mut any = 0u64;
    for (i, zs) in (0..).step_by(CHUNK).zip(zz.chunks_mut(CHUNK)) {
        let a = acc.get_mut(..zs.len()).unwrap_or_default();
        for (j, t) in terms.iter().enumerate() {
            unpack_combine(t.rest(), u32::from(t.width(b)), i, t.c, a, j == 0);
        }
        for (z, &d) in zs.iter_mut().zip(a.iter()) {
            *z = zigzag(d);
            any |= *z;
        }
    }
    any
}

/// The exact path of one block: [`exact_block`] once for the width, once more to pack
/// (while the output fits). Returns the width.
fn combine_exact(
    terms: &[Term<'_>],
    b: usize,
    len: usize,
    g: &Grid,
    seed: i64,
    out: &mut Out<'_>,
) -> Result<u32, Stop> {
    let mut any = 0u64;
    exact_block(terms, b, len, g, seed, |u| any |= u)?;
    let w = u32::from(width(any));
    if w > 0
        && let Some(dst) = out.payload(payload_len(w as u8, len))
    {
        let mut acc = BitAcc::new(dst);
        exact_block(terms, b, len, g, seed, |u| acc.put(u, w))?;
        acc.finish();
    }
    Ok(w)
}

/// Fields `first..first + dst.len()` of width `w` (0..=64), combined into `dst` as
/// `dst[i] (+)= c · unzigzag(field)` with wrapping arithmetic.
#[inline(always)]
pub(super) fn unpack_combine(p: &[u8], w: u32, first: usize, c: i64, dst: &mut [i64], init: bool) {
    macro_rules! widths {
        ($($w:literal)*) => {
            match (w, init) {
                (0, true) => dst.fill(0),
                (0, false) => {}
                $(($w, true) => unpack_const::<$w, true>(p, first, c, dst),
                  ($w, false) => unpack_const::<$w, false>(p, first, c, dst),)*
                _ => unpack_wide(p, w, first, c, dst, init),
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
        31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56);
}

/// [`unpack_combine`] for a constant width `W` of 1..=56: [`field`] is then one unaligned
/// 8-byte load, a constant-pattern shift and a mask per value.
#[inline(always)]
fn unpack_const<const W: u32, const INIT: bool>(p: &[u8], first: usize, c: i64, dst: &mut [i64]) {
    for (i, d) in dst.iter_mut().enumerate() {
        let u = field(p, first + i, W);
        let v = if c == 1 {
            unzigzag(u)
        } else {
            c.wrapping_mul(unzigzag(u))
        };
        *d = if INIT { v } else { d.wrapping_add(v) };
    }
}

/// [`unpack_combine`] for widths 57..=64.
fn unpack_wide(p: &[u8], w: u32, first: usize, c: i64, dst: &mut [i64], init: bool) {
    for (i, d) in dst.iter_mut().enumerate() {
        let v = c.wrapping_mul(unzigzag(field(p, first + i, w)));
        *d = if init { v } else { d.wrapping_add(v) };
    }
}

/// Packs `z` (each `< 2^w`, `1 <= w <= 64`) LSB-first into exactly `out`
/// (`ceil(z.len()·w/8)` bytes).
#[inline(always)]
fn pack_into(z: &[u64], w: u32, out: &mut [u8]) {
    let mut acc = BitAcc::new(out);
    for &u in z {
        acc.put(u, w);
    }
    acc.finish();
}

/// Why [`exact_block`] stopped, at the element's index in the block.
#[derive(Clone, Copy)]
pub(super) enum Stop {
    /// A result level reaches 2⁶² ([`Error::LevelOverflow`]).
    Level(usize),
    /// A result level's value is not finite in the element type ([`Error::ResultOverflow`]).
    Result(usize),
    /// An input level's value is not finite in the element type: the input is
    /// [`Error::Implausible`], as its decoder finds it.
    Input,
}

impl Stop {
    /// The operation's error for a stop in the block starting at element `start`.
    fn error(self, start: usize) -> Error {
        match self {
            Stop::Level(i) => Error::LevelOverflow { index: start + i },
            Stop::Result(i) => Error::ResultOverflow { index: start + i },
            Stop::Input => Error::Implausible {
                what: "a level whose value is not finite in the element type",
            },
        }
    }
}

/// The exact reference of one block: per-element levels of every input (wrapping prefix sums,
/// as the decoder computes them, from each input's block head), combined in checked `i128`;
/// `f(zigzag delta)` per value, the first delta from `seed` (the result head, or 0).
/// Stops at the first element whose level reaches 2⁶² or does not reconstruct finitely, or,
/// with `g.inputs_finite`, whose input level does not.
fn exact_block(
    terms: &[Term<'_>],
    b: usize,
    len: usize,
    g: &Grid,
    seed: i64,
    mut f: impl FnMut(u64),
) -> Result<(), Stop> {
    let mut levels = [0i64; MAX_TERMS];
    for (l, t) in levels.iter_mut().zip(terms) {
        *l = t.head;
    }
    let mut prev = seed;
    for i in 0..len {
        let mut q: i128 = 0;
        for (t, l) in terms.iter().zip(levels.iter_mut()) {
            let w = u32::from(t.width(b));
            if w > 0 {
                *l = l.wrapping_add(unzigzag(field(t.rest(), i, w)));
            }
            if g.inputs_finite && !recon_finite(*l, g.eb, g.dtype) {
                return Err(Stop::Input);
            }
            q = i128::from(*l)
                .checked_mul(i128::from(t.c))
                .and_then(|v| v.checked_add(q))
                .ok_or(Stop::Level(i))?;
        }
        if q >= LEVEL_LIMIT || q <= -LEVEL_LIMIT {
            return Err(Stop::Level(i));
        }
        let q = q as i64; // |q| < 2^62
        if !recon_finite(q, g.eb, g.dtype) {
            return Err(Stop::Result(i));
        }
        f(zigzag(q - prev)); // both below 2^62 in magnitude: no overflow
        prev = q;
    }
    Ok(())
}
