//! Path selection: the scalar reference ([`super::scalar`]) or the x86_64 AVX2 / AVX-512 builds
//! of the block kernels.
//!
//! The SIMD paths use block kernels written for vectorization — quantize + delta + zigzag +
//! width as one branch-free pass into a block buffer, a separate branch-free strict-bound check,
//! word-at-a-time LSB-first packing, and decode as unpack + prefix sum into a level buffer
//! followed by a separate scale pass — compiled under `#[target_feature]` (AVX2 + BMI2 + LZCNT,
//! or AVX-512 F/DQ/BW/VL) so the compiler emits 256- or 512-bit vector code for the
//! data-parallel passes (f64 division, rounding, i64↔f64 conversions, zigzag, OR-reduction,
//! scaling). They are not hand-written intrinsics. Every path produces the scalar path's bytes
//! and decoded bits (the arithmetic is the same IEEE operations in the same order; tested in
//! `tests/tests/szp_paths.rs`).
//!
//! Plan (validation, min/max, bound tightening), header and archive parsing are shared with the
//! scalar path.

use super::blocks::{self, block_payload_len, parse, quantize, reconstruct, write_header};
use super::{Config, Error, MAX_BLOCK_SIZE, SzpFloat, scalar};
use crate::arch::CpuFeatures;

/// An implementation path of the SZp codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Path {
    /// The portable scalar reference ([`super::scalar`]).
    Scalar,
    /// x86_64 AVX2 (with BMI2 and LZCNT).
    Avx2,
    /// x86_64 AVX-512 (F, DQ, BW, VL).
    Avx512,
    /// aarch64 NEON (`crate::arch::aarch64::szp`).
    Neon,
}

impl Path {
    /// Every path, slowest first.
    pub const ALL: [Path; 4] = [Path::Scalar, Path::Avx2, Path::Avx512, Path::Neon];

    /// Whether this path runs on this CPU (detected once, [`CpuFeatures::detect`]).
    pub fn is_available(self) -> bool {
        let f = CpuFeatures::detect();
        match self {
            Path::Scalar => true,
            Path::Avx2 => {
                cfg!(target_arch = "x86_64") && f.has(CpuFeatures::AVX2 | CpuFeatures::BMI2)
            }
            Path::Avx512 => {
                cfg!(target_arch = "x86_64")
                    && f.has(
                        CpuFeatures::AVX512F
                            | CpuFeatures::AVX512DQ
                            | CpuFeatures::AVX512BW
                            | CpuFeatures::AVX512VL
                            | CpuFeatures::BMI2,
                    )
            }
            Path::Neon => cfg!(target_arch = "aarch64") && f.has(CpuFeatures::NEON),
        }
    }

    /// The fastest available path: AVX-512, AVX2, NEON, then scalar. Inlined, so that on
    /// targets without SIMD paths (microcontrollers) it folds to `Scalar` and the portable
    /// kernels are not linked.
    #[inline]
    pub fn best() -> Path {
        if Path::Avx512.is_available() {
            Path::Avx512
        } else if Path::Avx2.is_available() {
            Path::Avx2
        } else if Path::Neon.is_available() {
            Path::Neon
        } else {
            Path::Scalar
        }
    }

    /// A short lower-case name (`scalar`, `avx2`, `avx512`).
    pub const fn name(self) -> &'static str {
        match self {
            Path::Scalar => "scalar",
            Path::Avx2 => "avx2",
            Path::Avx512 => "avx512",
            Path::Neon => "neon",
        }
    }
}

/// [`super::compress`] on a given path. A path this CPU cannot run falls back to the scalar
/// path (check [`Path::is_available`] first to report what really ran).
pub fn compress_with<T: SzpFloat>(
    path: Path,
    input: &[T],
    cfg: &Config,
    out: &mut [u8],
) -> Result<usize, Error> {
    match path {
        Path::Scalar => scalar::compress(input, cfg, out),
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 if path.is_available() => {
            // SAFETY: `is_available` checked AVX2 and BMI2 (and the OS YMM state) at runtime.
            unsafe { x86::compress_avx2(input, cfg, out) }
        }
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 if path.is_available() => {
            // SAFETY: `is_available` checked AVX-512 F/DQ/BW/VL, BMI2 and the OS ZMM state.
            unsafe { x86::compress_avx512(input, cfg, out) }
        }
        #[cfg(target_arch = "aarch64")]
        Path::Neon if path.is_available() => crate::arch::aarch64::szp::compress(input, cfg, out),
        _ => compress_portable(input, cfg, out),
    }
}

/// [`super::decompress`] on a given path (unavailable paths fall back as in
/// [`compress_with`]).
pub fn decompress_with<T: SzpFloat>(
    path: Path,
    archive: &[u8],
    out: &mut [T],
) -> Result<usize, Error> {
    match path {
        Path::Scalar => scalar::decompress(archive, out),
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 if path.is_available() => {
            // SAFETY: `is_available` checked AVX2 and BMI2 (and the OS YMM state) at runtime.
            unsafe { x86::decompress_avx2(archive, out) }
        }
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 if path.is_available() => {
            // SAFETY: `is_available` checked AVX-512 F/DQ/BW/VL, BMI2 and the OS ZMM state.
            unsafe { x86::decompress_avx512(archive, out) }
        }
        #[cfg(target_arch = "aarch64")]
        Path::Neon if path.is_available() => crate::arch::aarch64::szp::decompress(archive, out),
        _ => decompress_portable(archive, out),
    }
}

/// The vectorization-friendly kernels without target features (the fallback of unavailable
/// paths; also what the tests compare on machines without AVX2).
pub fn compress_portable<T: SzpFloat>(
    input: &[T],
    cfg: &Config,
    out: &mut [u8],
) -> Result<usize, Error> {
    compress_impl(input, cfg, out)
}

/// Decoding counterpart of [`compress_portable`].
pub fn decompress_portable<T: SzpFloat>(archive: &[u8], out: &mut [T]) -> Result<usize, Error> {
    decompress_impl(archive, out)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Config, Error, SzpFloat, compress_impl, decompress_impl};
    use crate::arch::CpuFeatures;

    /// AVX2 build of the compress kernels.
    ///
    /// # Safety
    /// The CPU must support AVX2, BMI2 and LZCNT (implied by BMI2 on every AVX2 CPU shipped;
    /// checked through [`super::Path::is_available`]).
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    pub(super) unsafe fn compress_avx2<T: SzpFloat>(
        input: &[T],
        cfg: &Config,
        out: &mut [u8],
    ) -> Result<usize, Error> {
        compress_impl(input, cfg, out)
    }

    /// AVX2 build of the decompress kernels.
    ///
    /// # Safety
    /// As [`compress_avx2`].
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    pub(super) unsafe fn decompress_avx2<T: SzpFloat>(
        archive: &[u8],
        out: &mut [T],
    ) -> Result<usize, Error> {
        decompress_impl(archive, out)
    }

    /// AVX-512 build of the compress kernels.
    ///
    /// # Safety
    /// The CPU must support AVX-512 F, DQ, BW, VL and BMI2/LZCNT (checked through
    /// [`super::Path::is_available`]).
    #[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl,avx2,bmi1,bmi2,lzcnt,popcnt")]
    pub(super) unsafe fn compress_avx512<T: SzpFloat>(
        input: &[T],
        cfg: &Config,
        out: &mut [u8],
    ) -> Result<usize, Error> {
        if CpuFeatures::detect().has(CpuFeatures::AVX512VBMI) {
            // SAFETY: the caller guarantees AVX-512 F/DQ/BW/VL and BMI2/LZCNT; VBMI was detected just above.
            unsafe { super::avx512::compress(input, cfg, out) }
        } else {
            compress_impl(input, cfg, out)
        }
    }

    /// AVX-512 build of the decompress kernels.
    ///
    /// # Safety
    /// As [`compress_avx512`].
    #[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl,avx2,bmi1,bmi2,lzcnt,popcnt")]
    pub(super) unsafe fn decompress_avx512<T: SzpFloat>(
        archive: &[u8],
        out: &mut [T],
    ) -> Result<usize, Error> {
        if CpuFeatures::detect().has(CpuFeatures::AVX512VBMI) {
            // SAFETY: as in `compress_avx512`.
            unsafe { super::avx512::decompress(archive, out) }
        } else {
            decompress_impl(archive, out)
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512;

const BUF: usize = MAX_BLOCK_SIZE as usize;

#[inline(always)]
fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

#[inline(always)]
fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Quantize + delta + zigzag of one block into `u`, returning the OR of all values (its bit
/// length is the block width). Branch-free; the delta is a first-order recurrence on `q`.
///
/// The level is first computed with a multiplication by `1/(2·eb)`: `y = fl(x·r)` differs from
/// the spec's `v = fl(x/(2·eb))` by at most `|y|·2⁻⁵⁰`, and `round_half_away` can only differ
/// between `y` and `v` if a half-integer lies within that distance of `y`. Any block with a
/// value whose fractional part is within `|y|·2⁻⁴⁸` of ½ (or with `|y| >= 2⁴⁷`) is recomputed
/// with the exact division, so the levels always equal the spec's.
#[inline(always)]
fn quantize_block<T: SzpFloat>(eb: f64, block: &[T], q: &mut [i64], u: &mut [u64]) -> u64 {
    const REL: f64 = 3.552_713_678_800_501e-15; // 2^-48
    let r = 1.0 / (2.0 * eb);
    let mut near_tie = false;
    for (qi, &x) in q.iter_mut().zip(block) {
        let y = x.to_f64() * r;
        let a = y.abs();
        let i = a as u64;
        let frac = a - i as f64;
        near_tie |= (frac - 0.5).abs() <= a * REL;
        let m = i.saturating_add(u64::from(frac >= 0.5)) as i64;
        *qi = if y < 0.0 { -m } else { m };
    }
    if near_tie {
        for (qi, &x) in q.iter_mut().zip(block) {
            *qi = quantize(x, eb);
        }
    }
    let mut any = 0u64;
    let mut prev = 0i64;
    for (ui, &qi) in u.iter_mut().zip(q.iter()) {
        let z = zigzag(qi.wrapping_sub(prev));
        prev = qi;
        *ui = z;
        any |= z;
    }
    any
}

/// The strict check: the first index whose reconstruction misses `bound`, if any.
#[inline(always)]
fn first_violation<T: SzpFloat>(eb: f64, bound: f64, block: &[T], q: &[i64]) -> Option<usize> {
    let mut bad = false;
    for (&x, &qi) in block.iter().zip(q) {
        let err = (x.to_f64() - reconstruct::<T>(qi, eb).to_f64()).abs();
        bad |= err.is_nan() || err > bound;
    }
    if !bad {
        return None;
    }
    block.iter().zip(q).position(|(&x, &qi)| {
        let err = (x.to_f64() - reconstruct::<T>(qi, eb).to_f64()).abs();
        err.is_nan() || err > bound
    })
}

/// A 64-bit LSB-first bit accumulator writing whole words into `out`.
struct BitAcc<'a> {
    out: &'a mut [u8],
    acc: u64,
    fill: u32,
    pos: usize,
}

impl BitAcc<'_> {
    /// Appends the low `w` bits of `v` (`v < 2^w`, `1 <= w <= 64`).
    #[inline(always)]
    fn put(&mut self, v: u64, w: u32) {
        let fill = self.fill;
        self.acc |= if fill == 64 { 0 } else { v << fill };
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
    fn finish(self) {
        let tail = self.fill.div_ceil(8) as usize;
        if let Some(dst) = self.out.get_mut(self.pos..self.pos + tail) {
            dst.copy_from_slice(&self.acc.to_le_bytes()[..tail]);
        }
    }
}

/// Merges groups of `K` consecutive `w`-bit values into one `K·w`-bit word each (`K·w <= 64`),
/// LSB-first, so the bit stream is unchanged: `words[i] = Σ_j u[K·i + j] << (j·w)`.
/// A data-parallel loop (vectorizable); returns the number of words.
#[inline(always)]
fn merge<const K: usize>(u: &[u64], w: u32, words: &mut [i64]) -> usize {
    let mut n = 0;
    for (dst, g) in words.iter_mut().zip(u.chunks_exact(K)) {
        let mut x = 0u64;
        for (j, &v) in g.iter().enumerate() {
            x |= v << (j as u32 * w);
        }
        *dst = x as i64;
        n += 1;
    }
    n
}

/// LSB-first packing of `u` (each `< 2^w`) at width `w` into exactly `out`
/// (`ceil(len·w/8)` bytes); pad bits 0. For `w <= 32`, groups of `K = 2^floor(log2(64/w))`
/// values are first merged into `K·w`-bit words (in `scratch`), which the accumulator then
/// packs `K` values at a time; the leftover values follow at width `w`.
#[inline(always)]
fn pack(u: &[u64], w: u32, out: &mut [u8], scratch: &mut [i64]) {
    if w == 0 {
        return;
    }
    if w == 64 {
        for (dst, v) in out.chunks_exact_mut(8).zip(u) {
            dst.copy_from_slice(&v.to_le_bytes());
        }
        return;
    }
    let k = 1usize << (64 / w).ilog2();
    let words = match k {
        1 => 0,
        2 => merge::<2>(u, w, scratch),
        4 => merge::<4>(u, w, scratch),
        8 => merge::<8>(u, w, scratch),
        16 => merge::<16>(u, w, scratch),
        32 => merge::<32>(u, w, scratch),
        _ => merge::<64>(u, w, scratch),
    };
    let mut bits = BitAcc {
        out,
        acc: 0,
        fill: 0,
        pos: 0,
    };
    let ww = k as u32 * w;
    for &x in scratch.iter().take(words) {
        bits.put(x as u64, ww);
    }
    for &v in u.iter().skip(words * k) {
        bits.put(v, w);
    }
    bits.finish();
}

#[inline(always)]
fn compress_impl<T: SzpFloat>(input: &[T], cfg: &Config, out: &mut [u8]) -> Result<usize, Error> {
    let plan = fast_plan(input, cfg)?;
    let bs = plan.block_size as usize;
    let eb = plan.quant_eb;
    let start = plan.payload_offset();
    let mut q = [0i64; BUF];
    let mut u = [0u64; BUF];
    // Exact size first when `out` might be too small, so nothing is written on failure.
    let fits = super::max_compressed_len(input.len(), plan.block_size, T::DTYPE)
        .is_some_and(|m| out.len() >= m);
    if !fits {
        let mut total = start;
        for block in input.chunks(bs) {
            let len = block.len().min(BUF);
            let any = quantize_block(eb, block, &mut q[..len], &mut u[..len]);
            total += block_payload_len((64 - any.leading_zeros()) as u8, block.len());
        }
        if out.len() < total {
            return Err(Error::OutputTooSmall { needed: total });
        }
    }
    let Some((head, body)) = out.split_at_mut_checked(start) else {
        return Err(Error::OutputTooSmall { needed: start });
    };
    let Some((hdr, widths)) = head.split_at_mut_checked(super::HEADER_LEN) else {
        return Err(Error::OutputTooSmall { needed: start });
    };
    let mut pos = 0usize;
    for ((b, block), wslot) in input.chunks(bs).enumerate().zip(widths.iter_mut()) {
        let len = block.len().min(BUF);
        let (qb, ub) = (&mut q[..len], &mut u[..len]);
        let any = quantize_block(eb, block, qb, ub);
        if plan.strict
            && let Some(i) = first_violation(eb, plan.bound, block, qb)
        {
            return Err(Error::BoundViolated { index: b * bs + i });
        }
        let w = 64 - any.leading_zeros();
        let cost = block_payload_len(w as u8, len);
        let Some(dst) = body.get_mut(pos..pos + cost) else {
            return Err(Error::OutputTooSmall {
                needed: start + pos + cost,
            });
        };
        pack(ub, w, dst, qb);
        *wslot = w as u8;
        pos += cost;
    }
    write_header(&plan, hdr)?;
    Ok(start + pos)
}

/// [`blocks::plan`] with a branch-free, vectorizable statistics pass. Any irregularity (a
/// non-finite value, a configured `max_abs`, a level overflow) is handed to [`blocks::plan`],
/// which finds and reports the first offending index; otherwise the plan is the same value
/// (same min, max and max |x|, hence the same resolved bound).
#[inline(always)]
fn fast_plan<T: SzpFloat>(input: &[T], cfg: &Config) -> Result<blocks::Plan, Error> {
    // Validates the config's own fields (cheap: no data).
    blocks::check_config(cfg)?;
    if cfg.max_abs.is_some() || input.is_empty() {
        return blocks::plan(input, cfg);
    }
    const L: usize = 16;
    let mut lo = [f64::INFINITY; L];
    let mut hi = [f64::NEG_INFINITY; L];
    let mut bad = false;
    let mut chunks = input.chunks_exact(L);
    for c in &mut chunks {
        for j in 0..L {
            let v = c[j].to_f64();
            lo[j] = if v < lo[j] { v } else { lo[j] };
            hi[j] = if v > hi[j] { v } else { hi[j] };
            bad |= v.is_nan() || v.abs() > f64::MAX;
        }
    }
    for (j, x) in chunks.remainder().iter().enumerate() {
        let v = x.to_f64();
        lo[j] = if v < lo[j] { v } else { lo[j] };
        hi[j] = if v > hi[j] { v } else { hi[j] };
        bad |= v.is_nan() || v.abs() > f64::MAX;
    }
    if bad {
        return blocks::plan(input, cfg);
    }
    let (lo, hi) = (
        lo.iter().fold(f64::INFINITY, |a, &b| a.min(b)),
        hi.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b)),
    );
    let mag = lo.abs().max(hi.abs());
    let plan = blocks::resolve(T::DTYPE, cfg, input.len(), hi - lo, mag)?;
    if mag / (2.0 * plan.quant_eb) >= 4_611_686_018_427_387_904.0 {
        return blocks::plan(input, cfg);
    }
    Ok(plan)
}

/// Unpack + unzigzag + prefix sum of one block into `q` (`payload` is exactly
/// `ceil(len·w/8)` bytes, `1 <= w <= 64`).
#[inline(always)]
fn unpack_levels(payload: &[u8], w: u32, q: &mut [i64]) {
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let mut acc = 0i64;
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
        let bit = i * w as usize;
        let mut b = [0u8; 16];
        let from = bit / 8;
        let take = payload.len().saturating_sub(from).min(9);
        if let Some(src) = payload.get(from..from + take) {
            b[..take].copy_from_slice(src);
        }
        let v = ((u128::from_le_bytes(b) >> (bit % 8)) as u64) & mask;
        acc = acc.wrapping_add(unzigzag(v));
        *qi = acc;
    }
}

#[inline(always)]
fn decompress_impl<T: SzpFloat>(archive: &[u8], out: &mut [T]) -> Result<usize, Error> {
    let view = parse(archive)?;
    if view.header.dtype != T::DTYPE {
        return Err(Error::DTypeMismatch);
    }
    let out = out
        .get_mut(..view.n)
        .ok_or(Error::OutputTooSmall { needed: view.n })?;
    let bs = view.header.block_size as usize;
    let eb = view.header.quant_eb;
    let mut q = [0i64; BUF];
    let mut pos = 0usize;
    for (&w, block) in view.widths.iter().zip(out.chunks_mut(bs)) {
        let len = block.len();
        let cost = block_payload_len(w, len);
        let src = view.payload.get(pos..pos + cost).ok_or(Error::Truncated)?;
        pos += cost;
        if w == 0 {
            block.fill(reconstruct(0, eb));
            continue;
        }
        let qb = &mut q[..len.min(BUF)];
        unpack_levels(src, u32::from(w), qb);
        for (o, &qi) in block.iter_mut().zip(qb.iter()) {
            *o = reconstruct(qi, eb);
        }
    }
    Ok(view.n)
}
