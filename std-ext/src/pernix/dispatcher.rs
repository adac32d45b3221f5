//! The PERNIX [`Dispatcher`] for `std`: the core's block API plus the rayon multi-block driver
//! ([`Backend::FallbackStdpar`]), which also splits the `.pnx` stream's chunks.

use std::sync::OnceLock;

use fzpack_core::pernix::{Backend, BitWidth, BlockSize, Run};

use crate::element::Element;
#[cfg(feature = "rayon")]
use crate::par::Parallel;

/// The core dispatcher (no parallel backend), for callers that want it explicitly.
pub type CoreDispatcher = fzpack_core::pernix::Dispatcher;

/// A PERNIX dispatcher for `std` programs: the core [`CoreDispatcher`] plus, for
/// [`Backend::FallbackStdpar`] (feature `rayon`), the rayon multi-block driver.
///
/// `Dispatcher::new(Backend::FallbackStdpar)` resolves the fastest kernel of this CPU (as
/// `Auto`) and spreads runs of blocks over the global rayon pool; its bytes are those of every
/// other backend. Every other backend behaves exactly as in the core.
///
/// ```
/// use fzpack::pernix::{Backend, BitWidth, BlockSize, Dispatcher, elements_per_block};
///
/// # let backend = if cfg!(feature = "rayon") { Backend::FallbackStdpar } else { Backend::Auto };
/// # if backend == Backend::FallbackStdpar {
/// let d = Dispatcher::new(Backend::FallbackStdpar)?;
/// assert_eq!(d.backend(), Backend::FallbackStdpar);
/// # }
/// let d = Dispatcher::new(backend)?;
/// let (bits, bs) = (BitWidth::new(8)?, BlockSize::B64);
/// let blocks = 1000;
/// let input = vec![0.25f32; elements_per_block(bits, bs) * blocks];
/// let mut out = vec![0u8; 64 * blocks];
/// d.compress_blocks(bits, bs, &input, 4.0, &mut out, blocks)?;
/// assert!(out.iter().all(|&b| b == 1));
/// # Ok::<(), fzpack::pernix::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Dispatcher {
    kernel: CoreDispatcher,
    #[cfg(feature = "rayon")]
    par: Option<Parallel>,
}

impl Dispatcher {
    /// Resolves `backend`. [`Backend::FallbackStdpar`] is served by the rayon driver (feature
    /// `rayon`; without it, [`Error::UnsupportedImplementation`](super::Error::UnsupportedImplementation) as in the core); every other
    /// value is resolved by the core.
    pub fn new(backend: Backend) -> Result<Self, fzpack_core::pernix::Error> {
        #[cfg(feature = "rayon")]
        if backend == Backend::FallbackStdpar {
            return Self::with_parallel(Backend::Auto, Parallel::new());
        }
        Ok(Dispatcher {
            kernel: CoreDispatcher::new(backend)?,
            #[cfg(feature = "rayon")]
            par: None,
        })
    }

    /// The rayon driver over the kernel `kernel_backend` (any backend the core resolves), with
    /// its own pool and chunk settings.
    #[cfg(feature = "rayon")]
    pub fn with_parallel(
        kernel_backend: Backend,
        par: Parallel,
    ) -> Result<Self, fzpack_core::pernix::Error> {
        Ok(Dispatcher {
            kernel: CoreDispatcher::new(kernel_backend)?,
            par: Some(par),
        })
    }

    /// The backend: [`Backend::FallbackStdpar`] for the parallel driver, otherwise the concrete
    /// core backend.
    pub fn backend(&self) -> Backend {
        #[cfg(feature = "rayon")]
        if self.par.is_some() {
            return Backend::FallbackStdpar;
        }
        self.kernel.backend()
    }

    /// The concrete per-block kernel backend (never `Auto` or `FallbackStdpar`).
    pub fn kernel_backend(&self) -> Backend {
        self.kernel.backend()
    }

    /// The core dispatcher that runs the blocks.
    pub fn core(&self) -> &CoreDispatcher {
        &self.kernel
    }

    /// This dispatcher's kernel, serial (on the calling thread).
    pub(super) fn to_serial(&self) -> Self {
        Dispatcher {
            kernel: self.kernel,
            #[cfg(feature = "rayon")]
            par: None,
        }
    }

    /// This dispatcher's kernel on the parallel driver `par`.
    #[cfg(feature = "rayon")]
    pub(super) fn on_pool(&self, par: &Parallel) -> Self {
        Dispatcher {
            kernel: self.kernel,
            par: Some(par.clone()),
        }
    }

    /// The parallel driver settings, if this is the parallel backend.
    #[cfg(feature = "rayon")]
    pub fn parallel(&self) -> Option<&Parallel> {
        self.par.as_ref()
    }

    /// As [`CoreDispatcher::compress_block`].
    pub fn compress_block<T: Element>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[T],
        inverse_scale: T,
        output: &mut [u8],
    ) -> Result<(), fzpack_core::pernix::Error> {
        self.kernel
            .compress_block(bits, block_size, input, inverse_scale, output)
    }

    /// As [`CoreDispatcher::compress_blocks`] (the C ABI's parameter order); the same as
    /// one run of `blocks` blocks: the parallel backend splits it into chunks of whole blocks
    /// (same bytes).
    pub fn compress_blocks<T: Element>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[T],
        inverse_scale: T,
        output: &mut [u8],
        blocks: usize,
    ) -> Result<(), fzpack_core::pernix::Error> {
        self.compress_run(
            Run::new(bits, block_size, blocks),
            input,
            inverse_scale,
            output,
        )
    }

    /// Compresses the `run.blocks` blocks of `input` into `output`; the parallel backend
    /// splits the run into chunks of whole blocks (same bytes).
    fn compress_run<T: Element>(
        &self,
        run: Run,
        input: &[T],
        inverse_scale: T,
        output: &mut [u8],
    ) -> Result<(), fzpack_core::pernix::Error> {
        let k = self.kernel;
        let e = run.values_per_block();
        let per = (e, run.block_size.bytes());
        let (input, output) = run.slices(inverse_scale, input, output, per)?;
        self.on_chunks(run.blocks, e * T::BYTES, input, output, per, |_, a, b| {
            k.compress_run(run.with_blocks(a.len() / e), a, inverse_scale, b)
        })
    }

    /// As [`CoreDispatcher::decompress_block`].
    pub fn decompress_block<T: Element>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[u8],
        scale: T,
        output: &mut [T],
        sign_values: bool,
    ) -> Result<(), fzpack_core::pernix::Error> {
        self.kernel
            .decompress_block(bits, block_size, input, scale, output, sign_values)
    }

    /// As [`CoreDispatcher::decompress_blocks`] (the C ABI's parameter order); the parallel
    /// backend splits the run (same values).
    #[allow(clippy::too_many_arguments)] // mirrors the C ABI's parameter list
    pub fn decompress_blocks<T: Element>(
        &self,
        bits: BitWidth,
        block_size: BlockSize,
        input: &[u8],
        scale: T,
        output: &mut [T],
        blocks: usize,
        sign_values: bool,
    ) -> Result<(), fzpack_core::pernix::Error> {
        let run = Run::new(bits, block_size, blocks).with_sign_values(sign_values);
        self.decompress_run(run, input, scale, output)
    }

    /// Decompresses the `run.blocks` blocks of `input` into `output`; the parallel backend
    /// splits the run (same values).
    fn decompress_run<T: Element>(
        &self,
        run: Run,
        input: &[u8],
        scale: T,
        output: &mut [T],
    ) -> Result<(), fzpack_core::pernix::Error> {
        let k = self.kernel;
        let (e, bs) = (run.values_per_block(), run.block_size.bytes());
        let (input, output) = run.slices(scale, input, output, (bs, e))?;
        self.on_chunks(
            run.blocks,
            e * T::BYTES,
            input,
            output,
            (bs, e),
            |_, a, b| k.decompress_run(run.with_blocks(a.len() / bs), a, scale, b),
        )
    }

    /// Runs `f(first_unit, input, output)` once over all of `input` and `output` (first unit
    /// 0), or, with the parallel backend and `units` units of `unit_bytes` float bytes each to
    /// share, over chunks of whole units on the pool (`per`: input and output items per unit;
    /// the last chunk may hold a partial unit): the one split of the block runs and of the
    /// stream's chunks. The first error in unit order is returned (deterministic).
    pub(super) fn on_chunks<I: Sync, O: Send, E: Send>(
        &self,
        units: usize,
        unit_bytes: usize,
        input: &[I],
        output: &mut [O],
        (in_per, out_per): (usize, usize),
        f: impl Fn(usize, &[I], &mut [O]) -> Result<(), E> + Sync + Send,
    ) -> Result<(), E> {
        #[cfg(feature = "rayon")]
        if let Some(par) = self.parallel()
            && let Some(per) = par.units_per_task(units, unit_bytes)
        {
            return par.zip_chunks(input, per * in_per, output, per * out_per, |i, a, b| {
                f(i * per, a, b)
            });
        }
        let _ = (units, unit_bytes, in_per, out_per);
        f(0, input, output)
    }
}

/// The dispatcher the shorthands and builders use by default: the parallel driver over the
/// fastest kernel (feature `rayon`), else `Backend::Auto`. Resolved once.
pub fn default_dispatcher() -> &'static Dispatcher {
    static D: OnceLock<Dispatcher> = OnceLock::new();
    D.get_or_init(|| Dispatcher {
        kernel: auto_kernel(),
        #[cfg(feature = "rayon")]
        par: Some(Parallel::new()),
    })
}

/// The core dispatcher of `Backend::Auto` (it always resolves; else the scalar one, which
/// always exists).
fn auto_kernel() -> CoreDispatcher {
    CoreDispatcher::new(Backend::Auto)
        .or_else(|_| CoreDispatcher::new(Backend::Fallback))
        .unwrap_or_else(|_| unreachable!("Backend::Fallback always resolves"))
}
