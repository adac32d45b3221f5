//! The SZp block-kernel contract: what one ISA leaf provides to the single archive driver in
//! [`crate::szp::engine`]. Implemented by zero-sized proof tokens —
//! [`super::generic::Reference`], [`super::generic::Portable`], `x86_64::Bmi2` (the AVX2
//! path), `x86_64::Avx512Vbmi` and `aarch64::Neon` — which exist only where their ISA runs, so
//! every method is safe to call.
//!
//! Kernels work on one block at a time and know nothing of archives: the driver owns the
//! layout (header, width bytes, payload offsets), the statistics/plan and the error values.

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
    /// Runs `f` inside a function compiled with this ISA's target features, so that the
    /// driver's `#[inline(always)]` loops inlined into `f` are compiled for it too.
    fn enter<R>(self, f: impl FnOnce() -> R) -> R;
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
}
