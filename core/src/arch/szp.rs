//! The SZp block-kernel contract: what one ISA leaf provides to the single archive driver in
//! [`crate::szp::engine`]. Implemented by zero-sized proof tokens —
//! [`super::generic::Reference`], [`super::generic::Portable`], `x86_64::Bmi2` (the AVX2
//! path), `x86_64::Avx512Vbmi` and `aarch64::Neon` — which exist only where their ISA runs, so
//! every method is safe to call.
//!
//! Kernels work on one block at a time and know nothing of archives: the driver owns the
//! layout (header, width bytes, payload offsets), the statistics/plan and the error values.

use crate::arch::generic::szp::{encode_filled, filled, width_filled};
use crate::bits::{
    HEAD_GROUP_MAX, HeadReader, TrailerError, payload_len, put_heads, put_heads_by, quantize,
    trailer_len, width, zigzag,
};
use crate::szp::blocks::MISSING_VALUES;
use crate::types::SzpFloat;

/// Values per block at most (`szp::MAX_BLOCK_SIZE`).
pub(crate) const BUF: usize = 4096;

/// The quantizer parameters of one compression (from the plan).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Quant {
    /// The quantizer bound `eb'` (what the archive records).
    pub eb: f64,
    /// The absolute bound every reconstruction must meet (strict plans).
    pub bound: f64,
    /// Whether to check every reconstruction against `bound`.
    pub strict: bool,
    /// A bound on `|x|` over the input (the data's maximum or the configured `max_abs`).
    pub max_abs: f64,
    /// [`crate::bits::f32_at_least`]`(max_abs)`: the f32 one-pass encoders' tie window is
    /// that of this magnitude (a block past it is quantized again), taken once per plan.
    pub max32: u32,
    /// [`crate::bits::accept_below`]`(eb, bound)` on targets without an f64 FPU (their f32
    /// encoders skip the strict check of blocks at most this magnitude), else 0: taken once
    /// per plan, not per block (it is soft-float arithmetic there).
    pub below: u32,
    /// `Some(b)`: the input was not validated (the one-shot encoder of an f32 input with a
    /// declared `max_abs`, see `szp::ranges::plan_declaring`), and the encoder checks each block
    /// instead: every value finite, with `|x|` at most the f32 whose bits are `b`, else
    /// [`BlockError::Irregular`]. Only the reference kernel honours it.
    pub unchecked: Option<u32>,
}

/// Why a block could not be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockError {
    /// The value at this index of the block misses the bound.
    Violation(usize),
    /// `dst` is shorter than the block's payload, this many bytes.
    Short(usize),
    /// The value at this index of the block is not finite or above the limit of an
    /// unvalidated input ([`Quant::unchecked`]).
    Irregular(usize),
}

/// Statistics of a run of values: min, max (as f64) and whether some value is NaN or
/// infinite (then min/max are meaningless).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Stats {
    pub lo: f64,
    pub hi: f64,
    pub bad: bool,
}

impl Stats {
    /// The statistics of no values.
    pub(crate) const EMPTY: Stats = Stats {
        lo: f64::INFINITY,
        hi: f64::NEG_INFINITY,
        bad: false,
    };

    /// The statistics of two runs together.
    #[inline]
    pub(crate) fn merge(self, o: Stats) -> Stats {
        Stats {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
            bad: self.bad | o.bad,
        }
    }
}

/// One ISA's SZp block kernels. Every result equals the reference's bits.
///
/// A block's deltas start from a *seed* level: `d_0 = q_0 − seed`. The stage layout
/// (`szp::Layout::Fzgm`) seeds every block with 0 (its first delta is the absolute level);
/// the block-head layout (`szp::Layout::Heads`) seeds it with its own first level (so
/// `d_0 = 0`) and stores that level — the block's *head* — in its group's head trailer.
pub(crate) trait SzpKernel: Copy + Send + Sync {
    /// Per-call invariants of the encoder (derived once from [`Quant`]).
    type Enc: Copy + Send + Sync;
    /// Per-task working memory (block buffers on the stack; `()` for the reference).
    type Scratch;
    /// Whether a block holding missing values is encoded by this kernel from a stack copy of
    /// its stand-ins (up to 256 values); `false` (the reference kernel, on targets with small
    /// stacks) encodes it from the stand-ins directly, with no copy.
    const FILL_COPY: bool = true;
    /// Whether the plan must come from the exact one-pass reference (`szp::blocks::plan`)
    /// instead of [`SzpKernel::stats`].
    const EXACT_PLAN: bool = false;
    /// Whether the encoder honours [`Quant::unchecked`] (checks each block of an input that
    /// no pass validated).
    const CHECKS_BLOCKS: bool = false;

    /// Fresh working memory.
    fn scratch(self) -> Self::Scratch;
    /// The encoder invariants for `q`.
    fn encoder(self, q: Quant) -> Self::Enc;
    /// The quantizer parameters `e` was made from.
    fn quant(e: &Self::Enc) -> Quant;
    /// The quantizer bound of `e` (what [`Quant::eb`] was).
    #[inline(always)]
    fn quant_eb(e: &Self::Enc) -> f64 {
        Self::quant(e).eb
    }
    /// Min, max and non-finite flag of `x` (not called when [`Self::EXACT_PLAN`]).
    fn stats<T: SzpFloat>(self, x: &[T]) -> Stats;
    /// What an ABS plan reads of the statistics (`max(|lo|, |hi|)` and `bad`): a kernel may
    /// answer `lo = −m`, `hi = m` with `m` the largest magnitude. [`Self::stats`] by default.
    #[inline(always)]
    fn magnitude<T: SzpFloat>(self, x: &[T]) -> Stats {
        self.stats(x)
    }
    /// The width byte of one block whose deltas start from `seed` (the sizing pass; writes
    /// nothing).
    fn width<T: SzpFloat>(self, e: &Self::Enc, block: &[T], seed: i64, s: &mut Self::Scratch)
    -> u8;
    /// Encodes one block whose deltas start from `seed` at the start of `dst` and returns its
    /// width; writes its `bits::payload_len(w, len)` payload bytes (pad bits 0), and may use
    /// `dst` up to `8·len` bytes as scratch.
    fn encode<T: SzpFloat>(
        self,
        e: &Self::Enc,
        block: &[T],
        seed: i64,
        dst: &mut [u8],
        s: &mut Self::Scratch,
    ) -> Result<u8, BlockError>;
    /// [`SzpKernel::encode`] of a run's block: its seed is 0, or with `heads` (the block-head
    /// layout) its own first level, the head ([`crate::bits::quantize`] of its first value); returns
    /// the width and the seed. The x86 SIMD leaves take the head from the first lane of their
    /// scan instead of quantizing it ahead of the scan (AVX2 +6 %, AVX-512 +1–2 % on etopo5 at
    /// 1e-3, as measured).
    #[inline(always)]
    fn encode_block<T: SzpFloat>(
        self,
        e: &Self::Enc,
        block: &[T],
        heads: bool,
        dst: &mut [u8],
        s: &mut Self::Scratch,
    ) -> Result<(u8, i64), BlockError> {
        let seed = seed_of(heads, block, Self::quant_eb(e));
        self.encode(e, block, seed, dst, s).map(|w| (w, seed))
    }
    /// Decodes one block (`src` exactly `payload_len(w, out.len())` bytes, `w <= 64`) whose
    /// levels start from `seed`, with quantizer bound `eb`, into `out`.
    fn decode<T: SzpFloat>(
        self,
        eb: f64,
        w: u8,
        seed: i64,
        src: &[u8],
        out: &mut [T],
        s: &mut Self::Scratch,
    );

    /// Encodes a run of blocks ([`encode_run`]) with working memory `s` (made once by a
    /// caller encoding several runs, as for [`SzpKernel::decode_blocks`]: zeroing the SIMD
    /// leaves' 80 KiB per checksum chunk of 16 Ki values cost ~8 % of a compress); SIMD tokens
    /// override this to run the loop inside their `#[target_feature]` function
    /// ([`target_runs!`]). Inlined into the range driver: its head buffer then shares the
    /// driver's frame (firmware stacks).
    #[inline(always)]
    fn encode_blocks<T: SzpFloat>(
        self,
        e: &Self::Enc,
        run: Run,
        input: &[T],
        widths: &mut [u8],
        payload: &mut [u8],
        s: &mut Self::Scratch,
    ) -> Result<usize, RunError> {
        encode_run(self, e, run, input, widths, payload, s)
    }
    /// Payload bytes of a run of blocks ([`size_run`]).
    fn size_blocks<T: SzpFloat>(self, e: &Self::Enc, run: Run, input: &[T]) -> usize {
        size_run(self, e, run, input)
    }
    /// Decodes a run of blocks ([`decode_run`]) with working memory `s` (a caller decoding
    /// several runs makes it once: the SIMD leaves' buffers are 80 KiB, and zeroing them per
    /// run of 2¹⁹ values cost ~4 % of a checksummed decode).
    fn decode_blocks<T: SzpFloat>(
        self,
        eb: f64,
        run: Run,
        widths: &[u8],
        payload: &[u8],
        out: &mut [T],
        s: &mut Self::Scratch,
    ) -> Result<(), DecodeError> {
        decode_run(self, eb, run, widths, payload, out, s)
    }
}

/// The shape of a run of blocks: `bs` values per block and, for the block-head layout, `group`
/// blocks per head group (`0`: the stage layout, no heads). A run starts on a group boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub bs: usize,
    pub group: usize,
    /// Decoding checks that every value is finite ([`crate::szp::engine`]'s `check_finite`):
    /// set for strict archives, whose encoder guarantees it; a stage-compatible archive may
    /// hold levels that reconstruct to ±inf, as FZGPUModules' own does.
    pub finite: bool,
    /// The input has missing values (NaN, ±inf): a block holding one is encoded from its
    /// stand-ins by the reference (`generic::szp::encode_filled`; the archive layer stores
    /// the missing values themselves).
    pub missing: bool,
}

impl Run {
    /// Blocks per unit of the run's layout: a head group, or one block.
    #[inline(always)]
    pub(crate) fn unit(self) -> usize {
        self.group.max(1)
    }

    /// Blocks per loop group of the run loops: the head group (a power of two up to
    /// [`HEAD_GROUP_MAX`]), or 1 for the stage layout. Formed as `1 << k` (`k <= 5`), which the
    /// compiler can prove non-zero: no divide-by-zero panic path reaches firmware builds.
    #[inline(always)]
    pub(crate) fn blocks_per_group(self) -> usize {
        let k = if self.group > 0 {
            self.group.trailing_zeros().min(5)
        } else {
            0
        };
        1usize << k
    }
}

/// Where a run of blocks failed: block `block` of the run, after `pos` payload bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunError {
    pub block: usize,
    pub pos: usize,
    pub err: BlockError,
}

/// Why a run of blocks could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// A width byte above 64.
    Width,
    /// The payload ends before the widths say.
    Truncated,
}

impl From<TrailerError> for DecodeError {
    fn from(e: TrailerError) -> Self {
        match e {
            TrailerError::Width => DecodeError::Width,
            TrailerError::Truncated => DecodeError::Truncated,
        }
    }
}

/// The seed of a block starting with `x` (`heads`: the block-head layout, its first level).
#[inline(always)]
pub(crate) fn seed_of<T: SzpFloat>(heads: bool, x: &[T], eb: f64) -> i64 {
    if heads { head_of(x, eb) } else { 0 }
}

/// The head of a block-head layout block starting with `x`: its first level (0 if empty).
/// Out of line on targets without SIMD kernels: one copy of the quantizer for the encoder's
/// heads and the trailer's ([`head_again`]).
#[cfg_attr(any(target_arch = "x86_64", target_arch = "aarch64"), inline(always))]
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    inline(never)
)]
pub(crate) fn head_of<T: SzpFloat>(x: &[T], eb: f64) -> i64 {
    match x.first() {
        Some(&v) => quantize(v, eb),
        None => 0,
    }
}

/// The encode loop of one run: each block's width into `widths`, payloads back to back from
/// the start of `payload` (with each head group's trailer after its blocks); returns the
/// payload length. The stage layout runs the same loop in groups of one block, no trailer.
#[inline(always)]
pub(crate) fn encode_run<K: SzpKernel, T: SzpFloat>(
    k: K,
    e: &K::Enc,
    run: Run,
    input: &[T],
    widths: &mut [u8],
    payload: &mut [u8],
    s: &mut K::Scratch,
) -> Result<usize, RunError> {
    encode_run_keeping::<K, T, KEEP_HEADS>(k, e, run, input, widths, payload, s)
}

/// Whether the encode loop keeps a head group's heads for its trailer ([`encode_run_keeping`]):
/// on hosts, where the SIMD leaves take a block's head from their scan and quantizing it again
/// would cost; not on the other targets (microcontrollers: small stacks, one kernel).
const KEEP_HEADS: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// [`encode_run`], keeping the heads of a head group in an array for its trailer (`KEEP`:
/// [`HEAD_GROUP_MAX`] of them, 256 bytes of stack), or quantizing each block's first value
/// again when the trailer is written ([`head_again`]: one quantization per block, the same
/// heads, so the same bytes).
#[inline(always)]
pub(crate) fn encode_run_keeping<K: SzpKernel, T: SzpFloat, const KEEP: bool>(
    k: K,
    e: &K::Enc,
    run: Run,
    input: &[T],
    widths: &mut [u8],
    payload: &mut [u8],
    s: &mut K::Scratch,
) -> Result<usize, RunError> {
    let (bs, heads) = (run.bs.max(1), run.group > 0);
    let g = run.blocks_per_group();
    let (mut pos, mut block) = (0usize, 0usize);
    let mut hs = [0i64; HEAD_GROUP_MAX];
    for (xs, ws) in input
        .chunks(bs.saturating_mul(g).max(1))
        .zip(widths.chunks_mut(g))
    {
        let mut cnt = 0usize;
        for (x, slot) in xs.chunks(bs).zip(ws.iter_mut()) {
            let dst = payload.get_mut(pos..).unwrap_or_default();
            let r = if MISSING_VALUES && run.missing && has_missing(x) {
                encode_missing(k, e, x, heads, dst, s)
            } else {
                k.encode_block(e, x, heads, dst, s)
            };
            let (w, seed) = r.map_err(|err| RunError { block, pos, err })?;
            *slot = w;
            if KEEP && let Some(h) = hs.get_mut(cnt) {
                *h = seed;
            }
            pos += payload_len(w, x.len());
            block += 1;
            cnt += 1;
        }
        if heads {
            let dst = payload.get_mut(pos..).unwrap_or_default();
            let put = if KEEP {
                put_heads(hs.get(..cnt).unwrap_or_default(), dst)
            } else {
                let eb = K::quant_eb(e);
                let head = |j: usize| {
                    let r = xs.get(j.saturating_mul(bs)..).unwrap_or_default();
                    head_again(run, r.get(..bs.min(r.len())).unwrap_or_default(), eb)
                };
                put_heads_by(cnt, &head, dst)
            };
            pos += put.map_err(|c| RunError {
                block: block.saturating_sub(1),
                pos,
                err: BlockError::Short(c),
            })?;
        }
    }
    Ok(pos)
}

/// The head of block `x` of a block-head run, as its encoder chose it: its first level, or for
/// a block with missing values its stand-ins' first level ([`width_filled`]'s seed).
#[inline(always)]
fn head_again<T: SzpFloat>(run: Run, x: &[T], eb: f64) -> i64 {
    if MISSING_VALUES && run.missing && has_missing(x) {
        filled(x).next().map_or(0, |v| quantize(v, eb))
    } else {
        head_of(x, eb)
    }
}

/// Values of a block with missing values that [`encode_missing`] fills on the stack for the
/// block's own kernel; longer blocks take the reference.
const FILL: usize = 256;

/// Whether `x` holds a missing value: a branch-free scan (vectorized), no early exit.
#[inline(always)]
pub(crate) fn has_missing<T: SzpFloat>(x: &[T]) -> bool {
    x.iter().fold(false, |a, v| a | v.is_missing())
}

/// Encodes a block holding missing values from its stand-ins (`generic::szp::filled`): on
/// kernel `k` from a stack copy (the kernel contract makes its bytes the reference's for the
/// same values), or by the reference directly (the reference kernel, whose targets keep small
/// stacks, and blocks above [`FILL`] values). Out of line: its buffer stays out of the run
/// loop's frame.
#[inline(never)]
fn encode_missing<K: SzpKernel, T: SzpFloat>(
    k: K,
    e: &K::Enc,
    x: &[T],
    heads: bool,
    dst: &mut [u8],
    s: &mut K::Scratch,
) -> Result<(u8, i64), BlockError> {
    if !K::FILL_COPY || x.len() > FILL {
        return encode_filled(&K::quant(e), x, heads, dst);
    }
    let mut buf = [T::default(); FILL];
    k.encode_block(e, fill(x, &mut buf), heads, dst, s)
}

/// The stand-ins of `x` (at most [`FILL`] values) copied into `buf`.
#[inline(always)]
fn fill<'b, T: SzpFloat>(x: &[T], buf: &'b mut [T; FILL]) -> &'b [T] {
    for (b, v) in buf.iter_mut().zip(filled(x)) {
        *b = v;
    }
    buf.get(..x.len()).unwrap_or_default()
}

/// The width and seed of a block holding missing values, as [`encode_missing`] encodes it.
#[inline(never)]
fn width_missing<K: SzpKernel, T: SzpFloat>(
    k: K,
    e: &K::Enc,
    x: &[T],
    heads: bool,
    s: &mut K::Scratch,
) -> (u8, i64) {
    let eb = K::quant_eb(e);
    if !K::FILL_COPY || x.len() > FILL {
        return width_filled(eb, x, heads);
    }
    let mut buf = [T::default(); FILL];
    let b = fill(x, &mut buf);
    let seed = seed_of(heads, b, eb);
    (k.width(e, b, seed, s), seed)
}

/// The sizing loop of one run (writes nothing).
#[inline(always)]
pub(crate) fn size_run<K: SzpKernel, T: SzpFloat>(
    k: K,
    e: &K::Enc,
    run: Run,
    input: &[T],
) -> usize {
    let mut s = k.scratch();
    let (bs, heads) = (run.bs.max(1), run.group > 0);
    let g = run.blocks_per_group();
    let eb = K::quant_eb(e);
    let mut total = 0usize;
    for xs in input.chunks(bs.saturating_mul(g).max(1)) {
        // The trailer's width as the heads come (`heads_width`, no array of them).
        let (mut cnt, mut prev, mut any) = (0usize, 0i64, 0u64);
        for x in xs.chunks(bs) {
            let h = if MISSING_VALUES && run.missing && has_missing(x) {
                let (w, seed) = width_missing(k, e, x, heads, &mut s);
                total += payload_len(w, x.len());
                seed
            } else {
                let h = seed_of(heads, x, eb);
                total += payload_len(k.width(e, x, h, &mut s), x.len());
                h
            };
            any |= zigzag(h.wrapping_sub(prev));
            prev = h;
            cnt += 1;
        }
        if heads {
            total += trailer_len(width(any), cnt);
        }
    }
    total
}

/// The payload bytes of one group's blocks (`ws` their widths, `len` values in all).
#[inline(always)]
fn group_bytes(ws: &[u8], bs: usize, len: usize) -> Result<usize, DecodeError> {
    if bs.is_multiple_of(8) && len == bs * ws.len() {
        // Full blocks of whole bytes: `bs/8 · Σw` (a branch-free sum and max).
        let (sum, max) = ws
            .iter()
            .fold((0usize, 0u8), |(t, m), &w| (t + usize::from(w), m.max(w)));
        return if max > 64 {
            Err(DecodeError::Width)
        } else {
            Ok(sum * (bs / 8))
        };
    }
    let mut rem = len;
    let mut bytes = 0usize;
    for &w in ws {
        if w > 64 {
            return Err(DecodeError::Width);
        }
        bytes += payload_len(w, rem.min(bs));
        rem = rem.saturating_sub(bs);
    }
    Ok(bytes)
}

/// The decode loop of one run (the stage layout: groups of one block, no trailer, seeds 0).
#[inline(always)]
pub(crate) fn decode_run<K: SzpKernel, T: SzpFloat>(
    k: K,
    eb: f64,
    run: Run,
    widths: &[u8],
    payload: &[u8],
    out: &mut [T],
    s: &mut K::Scratch,
) -> Result<(), DecodeError> {
    decode_run_with(run, widths, payload, out, |w, h, src, _, block| {
        k.decode(eb, w, h, src, block, s)
    })
}

/// The decode loop of one run, each block by `block(width, seed, payload, rest, out)`: the
/// block's `payload` (checked: exactly its bytes), and `rest`, the run's bytes from the
/// block's first on (its payload and whatever follows it: a block decoder may read past its
/// payload's end there, as the 32-bit one does for its last fields' windows).
#[inline(always)]
pub(crate) fn decode_run_with<T: SzpFloat>(
    run: Run,
    widths: &[u8],
    payload: &[u8],
    out: &mut [T],
    mut block: impl FnMut(u8, i64, &[u8], &[u8], &mut [T]),
) -> Result<(), DecodeError> {
    let (bs, heads) = (run.bs.max(1), run.group > 0);
    let mut pos = 0usize;
    let mut one = |w: u8, h: i64, pos: &mut usize, os: &mut [T]| {
        if w > 64 {
            return Err(DecodeError::Width);
        }
        let cost = payload_len(w, os.len());
        let rest = payload.get(*pos..).unwrap_or_default();
        let src = rest.get(..cost).ok_or(DecodeError::Truncated)?;
        block(w, h, src, rest, os);
        *pos += cost;
        Ok(())
    };
    if !heads {
        // The stage layout: one block at a time, seeds 0.
        for (&w, os) in widths.iter().zip(out.chunks_mut(bs)) {
            one(w, 0, &mut pos, os)?;
        }
        return Ok(());
    }
    let g = run.blocks_per_group();
    for (ws, os) in widths
        .chunks(g)
        .zip(out.chunks_mut(bs.saturating_mul(g).max(1)))
    {
        // The group's trailer follows the group's payloads: checked here, its heads read one
        // per block below.
        let bytes = group_bytes(ws, bs, os.len())?;
        let cnt = os.len().div_ceil(bs).min(HEAD_GROUP_MAX);
        let trailer = payload.get(pos + bytes..).unwrap_or_default();
        let (mut hr, tlen) = HeadReader::open(trailer, cnt)?;
        for (&w, block) in ws.iter().zip(os.chunks_mut(bs)) {
            one(w, hr.next_head(), &mut pos, block)?;
        }
        pos += tlen;
    }
    Ok(())
}

/// Overrides the run methods of an [`SzpKernel`] impl so that the loops (and every
/// `#[inline(always)]` kernel call in them) are compiled inside a `#[target_feature]` function
/// with `$features`. Only for tokens whose existence proves `$features`.
#[allow(unused_macros)] // no SIMD leaf on some targets
macro_rules! target_runs {
    ($features:literal) => {
        fn encode_blocks<T: SzpFloat>(
            self,
            e: &Self::Enc,
            r: $crate::arch::szp::Run,
            input: &[T],
            widths: &mut [u8],
            payload: &mut [u8],
            s: &mut Self::Scratch,
        ) -> Result<usize, $crate::arch::szp::RunError> {
            #[target_feature(enable = $features)]
            fn run<K: SzpKernel, T: SzpFloat>(
                k: K,
                e: &K::Enc,
                r: $crate::arch::szp::Run,
                input: &[T],
                widths: &mut [u8],
                payload: &mut [u8],
                s: &mut K::Scratch,
            ) -> Result<usize, $crate::arch::szp::RunError> {
                $crate::arch::szp::encode_run(k, e, r, input, widths, payload, s)
            }
            // SAFETY: the token (`self`) proves the CPU supports `$features`.
            unsafe { run(self, e, r, input, widths, payload, s) }
        }
        fn size_blocks<T: SzpFloat>(
            self,
            e: &Self::Enc,
            r: $crate::arch::szp::Run,
            input: &[T],
        ) -> usize {
            #[target_feature(enable = $features)]
            fn run<K: SzpKernel, T: SzpFloat>(
                k: K,
                e: &K::Enc,
                r: $crate::arch::szp::Run,
                input: &[T],
            ) -> usize {
                $crate::arch::szp::size_run(k, e, r, input)
            }
            // SAFETY: the token (`self`) proves the CPU supports `$features`.
            unsafe { run(self, e, r, input) }
        }
        fn decode_blocks<T: SzpFloat>(
            self,
            eb: f64,
            r: $crate::arch::szp::Run,
            widths: &[u8],
            payload: &[u8],
            out: &mut [T],
            s: &mut Self::Scratch,
        ) -> Result<(), $crate::arch::szp::DecodeError> {
            #[target_feature(enable = $features)]
            fn run<K: SzpKernel, T: SzpFloat>(
                k: K,
                eb: f64,
                r: $crate::arch::szp::Run,
                widths: &[u8],
                payload: &[u8],
                out: &mut [T],
                s: &mut K::Scratch,
            ) -> Result<(), $crate::arch::szp::DecodeError> {
                $crate::arch::szp::decode_run(k, eb, r, widths, payload, out, s)
            }
            // SAFETY: the token (`self`) proves the CPU supports `$features`.
            unsafe { run(self, eb, r, widths, payload, out, s) }
        }
    };
}
#[allow(unused_imports)] // no SIMD leaf on some targets
pub(crate) use target_runs;

/// The block methods of an [`SzpKernel`] impl, `#[inline(always)]`, from closure-like bodies
/// that name the methods' arguments (after `self`, in the trait's order): `width` and `encode`
/// take the encoder invariants, the block, its seed (and `encode` the output), `decode` the
/// quantizer bound, the width, the seed, the payload and the output; the last is the scratch.
macro_rules! block_methods {
    (
        width: |$we:tt, $wx:tt, $wseed:tt, $ws:tt| $width:expr,
        encode: |$ee:tt, $ex:tt, $eseed:tt, $edst:tt, $es:tt| $encode:expr,
        decode: |$deb:tt, $dw:tt, $dseed:tt, $dsrc:tt, $dout:tt, $ds:tt| $decode:expr $(,)?
    ) => {
        #[inline(always)]
        fn width<T: $crate::types::SzpFloat>(
            self,
            $we: &Self::Enc,
            $wx: &[T],
            $wseed: i64,
            $ws: &mut Self::Scratch,
        ) -> u8 {
            $width
        }
        #[inline(always)]
        fn encode<T: $crate::types::SzpFloat>(
            self,
            $ee: &Self::Enc,
            $ex: &[T],
            $eseed: i64,
            $edst: &mut [u8],
            $es: &mut Self::Scratch,
        ) -> Result<u8, $crate::arch::szp::BlockError> {
            $encode
        }
        #[inline(always)]
        fn decode<T: $crate::types::SzpFloat>(
            self,
            $deb: f64,
            $dw: u8,
            $dseed: i64,
            $dsrc: &[u8],
            $dout: &mut [T],
            $ds: &mut Self::Scratch,
        ) {
            $decode
        }
    };
}
pub(crate) use block_methods;
