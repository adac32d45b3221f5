//! The SZp block-kernel contract: what one ISA leaf provides to the single archive driver in
//! [`crate::szp::engine`]. Implemented by zero-sized proof tokens —
//! [`super::generic::Reference`], [`super::generic::Portable`], `x86_64::Bmi2` (the AVX2
//! path), `x86_64::Avx512Vbmi` and `aarch64::Neon` — which exist only where their ISA runs, so
//! every method is safe to call.
//!
//! Kernels work on one block at a time and know nothing of archives: the driver owns the
//! layout (header, width bytes, payload offsets), the statistics/plan and the error values.

use crate::bits::payload_len;
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
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the AVX-512 leaf
    pub max_abs: f64,
}

/// Why a block could not be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockError {
    /// The value at this index of the block misses the bound.
    Violation(usize),
    /// `dst` is shorter than the block's payload, this many bytes.
    Short(usize),
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
pub(crate) trait SzpKernel: Copy + Send + Sync {
    /// Per-call invariants of the encoder (derived once from [`Quant`]).
    type Enc: Copy + Send + Sync;
    /// Per-task working memory (block buffers on the stack; `()` for the reference).
    type Scratch;
    /// Whether the plan must come from the exact one-pass reference (`szp::blocks::plan`)
    /// instead of [`SzpKernel::stats`].
    const EXACT_PLAN: bool = false;

    /// Fresh working memory.
    fn scratch(self) -> Self::Scratch;
    /// The encoder invariants for `q`.
    fn encoder(self, q: Quant) -> Self::Enc;
    /// Min, max and non-finite flag of `x` (not called when [`Self::EXACT_PLAN`]).
    fn stats<T: SzpFloat>(self, x: &[T]) -> Stats;
    /// The width byte of one block (the sizing pass; writes nothing).
    fn width<T: SzpFloat>(self, e: &Self::Enc, block: &[T], s: &mut Self::Scratch) -> u8;
    /// Encodes one block at the start of `dst` and returns its width; writes its
    /// `bits::payload_len(w, len)` payload bytes (pad bits 0), and may use `dst` up to
    /// `8·len` bytes as scratch.
    fn encode<T: SzpFloat>(
        self,
        e: &Self::Enc,
        block: &[T],
        dst: &mut [u8],
        s: &mut Self::Scratch,
    ) -> Result<u8, BlockError>;
    /// Decodes one block (`src` exactly `payload_len(w, out.len())` bytes, `w <= 64`) with
    /// quantizer bound `eb` into `out`.
    fn decode<T: SzpFloat>(self, eb: f64, w: u8, src: &[u8], out: &mut [T], s: &mut Self::Scratch);

    /// Encodes a run of blocks ([`encode_run`]); SIMD tokens override this to run the loop
    /// inside their `#[target_feature]` function ([`target_runs!`]).
    fn encode_blocks<T: SzpFloat>(
        self,
        e: &Self::Enc,
        bs: usize,
        input: &[T],
        widths: &mut [u8],
        payload: &mut [u8],
    ) -> Result<usize, RunError> {
        encode_run(self, e, bs, input, widths, payload)
    }
    /// Payload bytes of a run of blocks ([`size_run`]).
    fn size_blocks<T: SzpFloat>(self, e: &Self::Enc, bs: usize, input: &[T]) -> usize {
        size_run(self, e, bs, input)
    }
    /// Decodes a run of blocks ([`decode_run`]).
    fn decode_blocks<T: SzpFloat>(
        self,
        eb: f64,
        bs: usize,
        widths: &[u8],
        payload: &[u8],
        out: &mut [T],
    ) -> Result<(), DecodeError> {
        decode_run(self, eb, bs, widths, payload, out)
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

/// The encode loop of one run: each block's width into `widths`, payloads back to back from
/// the start of `payload`; returns the payload length.
#[inline(always)]
pub(crate) fn encode_run<K: SzpKernel, T: SzpFloat>(
    k: K,
    e: &K::Enc,
    bs: usize,
    input: &[T],
    widths: &mut [u8],
    payload: &mut [u8],
) -> Result<usize, RunError> {
    let mut s = k.scratch();
    let mut pos = 0usize;
    for ((block, x), slot) in input.chunks(bs.max(1)).enumerate().zip(widths.iter_mut()) {
        let dst = payload.get_mut(pos..).unwrap_or_default();
        let w = k
            .encode(e, x, dst, &mut s)
            .map_err(|err| RunError { block, pos, err })?;
        *slot = w;
        pos += payload_len(w, x.len());
    }
    Ok(pos)
}

/// The sizing loop of one run (writes nothing).
#[inline(always)]
pub(crate) fn size_run<K: SzpKernel, T: SzpFloat>(
    k: K,
    e: &K::Enc,
    bs: usize,
    input: &[T],
) -> usize {
    let mut s = k.scratch();
    input
        .chunks(bs.max(1))
        .map(|b| payload_len(k.width(e, b, &mut s), b.len()))
        .sum()
}

/// The decode loop of one run.
#[inline(always)]
pub(crate) fn decode_run<K: SzpKernel, T: SzpFloat>(
    k: K,
    eb: f64,
    bs: usize,
    widths: &[u8],
    payload: &[u8],
    out: &mut [T],
) -> Result<(), DecodeError> {
    let mut s = k.scratch();
    let mut pos = 0usize;
    for (&w, block) in widths.iter().zip(out.chunks_mut(bs.max(1))) {
        if w > 64 {
            return Err(DecodeError::Width);
        }
        let cost = payload_len(w, block.len());
        let src = payload.get(pos..pos + cost).ok_or(DecodeError::Truncated)?;
        k.decode(eb, w, src, block, &mut s);
        pos += cost;
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
            bs: usize,
            input: &[T],
            widths: &mut [u8],
            payload: &mut [u8],
        ) -> Result<usize, $crate::arch::szp::RunError> {
            #[target_feature(enable = $features)]
            fn run<K: SzpKernel, T: SzpFloat>(
                k: K,
                e: &K::Enc,
                bs: usize,
                input: &[T],
                widths: &mut [u8],
                payload: &mut [u8],
            ) -> Result<usize, $crate::arch::szp::RunError> {
                $crate::arch::szp::encode_run(k, e, bs, input, widths, payload)
            }
            // SAFETY: the token (`self`) proves the CPU supports `$features`.
            unsafe { run(self, e, bs, input, widths, payload) }
        }
        fn size_blocks<T: SzpFloat>(self, e: &Self::Enc, bs: usize, input: &[T]) -> usize {
            #[target_feature(enable = $features)]
            fn run<K: SzpKernel, T: SzpFloat>(k: K, e: &K::Enc, bs: usize, input: &[T]) -> usize {
                $crate::arch::szp::size_run(k, e, bs, input)
            }
            // SAFETY: the token (`self`) proves the CPU supports `$features`.
            unsafe { run(self, e, bs, input) }
        }
        fn decode_blocks<T: SzpFloat>(
            self,
            eb: f64,
            bs: usize,
            widths: &[u8],
            payload: &[u8],
            out: &mut [T],
        ) -> Result<(), $crate::arch::szp::DecodeError> {
            #[target_feature(enable = $features)]
            fn run<K: SzpKernel, T: SzpFloat>(
                k: K,
                eb: f64,
                bs: usize,
                widths: &[u8],
                payload: &[u8],
                out: &mut [T],
            ) -> Result<(), $crate::arch::szp::DecodeError> {
                $crate::arch::szp::decode_run(k, eb, bs, widths, payload, out)
            }
            // SAFETY: the token (`self`) proves the CPU supports `$features`.
            unsafe { run(self, eb, bs, widths, payload, out) }
        }
    };
}
#[allow(unused_imports)] // no SIMD leaf on some targets
pub(crate) use target_runs;
