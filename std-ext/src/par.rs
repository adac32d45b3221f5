//! The rayon multi-block driver.
//!
//! A [`Parallel`] value says *where* to run (the global rayon pool or a pool you pass in) and
//! *how finely* to split (a minimum chunk size in bytes, below which work stays on the calling
//! thread so small inputs never pay for parallelism). Every parallel function produces exactly
//! the bytes of its serial counterpart, for every thread count and chunk size: the work is cut
//! only at block boundaries, and blocks are independent.
//!
//! ```
//! use fzpack::par::Parallel;
//! use fzpack::pernix::{BitWidth, BlockSize, Dispatcher, Backend, Encoder};
//!
//! let pool = std::sync::Arc::new(fzpack::par::rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap());
//! let par = Parallel::with_pool(pool).min_chunk_bytes(4096);
//! let values: Vec<f32> = (0..100_000).map(|i| (i as f32 * 0.01).sin()).collect();
//! let enc = Encoder::new(BitWidth::new(12)?, BlockSize::B64);
//! let stream = enc.clone().threads(&par).to_vec(&values)?;
//! let serial = enc.dispatcher(&Dispatcher::new(Backend::Fallback)?).to_vec(&values)?;
//! assert_eq!(stream, serial);
//! # Ok::<(), fzpack::Error>(())
//! ```

use std::sync::Arc;

/// The rayon crate this driver runs on (to build a [`rayon::ThreadPool`] to pass in).
pub use rayon;

use rayon::ThreadPool;
use rayon::prelude::*;

use crate::{Error, Result};

/// Default minimum chunk: 1 MiB of input per task.
pub const DEFAULT_MIN_CHUNK_BYTES: usize = 1 << 20;

/// Where and how finely the parallel driver runs. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Parallel {
    pool: Option<Arc<ThreadPool>>,
    min_chunk_bytes: usize,
}

impl Default for Parallel {
    fn default() -> Self {
        Self::new()
    }
}

impl Parallel {
    /// The global rayon pool, [`DEFAULT_MIN_CHUNK_BYTES`].
    pub fn new() -> Self {
        Parallel {
            pool: None,
            min_chunk_bytes: DEFAULT_MIN_CHUNK_BYTES,
        }
    }

    /// Runs on `pool` instead of the global pool.
    pub fn with_pool(pool: Arc<ThreadPool>) -> Self {
        Parallel {
            pool: Some(pool),
            min_chunk_bytes: DEFAULT_MIN_CHUNK_BYTES,
        }
    }

    /// Builds a dedicated pool of `threads` threads (`0` is an error).
    pub fn with_threads(threads: usize) -> Result<Self> {
        if threads == 0 {
            return Err(Error::InvalidArgument(
                "thread count must be at least 1".into(),
            ));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| Error::InvalidArgument(format!("cannot build thread pool: {e}")))?;
        Ok(Self::with_pool(Arc::new(pool)))
    }

    /// Sets the minimum amount of input (bytes) per parallel task (at least one block is
    /// always taken). `0` splits as finely as the thread count allows — for tests.
    pub fn min_chunk_bytes(mut self, bytes: usize) -> Self {
        self.min_chunk_bytes = bytes;
        self
    }

    /// The configured minimum chunk size in bytes.
    pub fn min_chunk(&self) -> usize {
        self.min_chunk_bytes
    }

    /// Number of threads work is spread over.
    pub fn threads(&self) -> usize {
        match &self.pool {
            Some(p) => p.current_num_threads(),
            None => rayon::current_num_threads(),
        }
    }

    /// Runs `f` inside this driver's pool.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Units (blocks) per task for `units` units of `unit_bytes` input bytes each, or `None`
    /// when the work should stay serial (one task, or a single thread).
    pub fn units_per_task(&self, units: usize, unit_bytes: usize) -> Option<usize> {
        let threads = self.threads();
        if threads <= 1 || units <= 1 {
            return None;
        }
        let min_units = self.min_chunk_bytes.div_ceil(unit_bytes.max(1)).max(1);
        // A few tasks per thread for load balance, but never below the minimum chunk.
        let per = units.div_ceil(threads * 4).max(min_units);
        if per >= units { None } else { Some(per) }
    }

    /// The core driver's rayon [`Join`](fzpack_core::szp::engine::Join) for a job of `bytes`
    /// input bytes, or `None` when it should stay serial (one thread, or less than two
    /// minimum chunks). Ranges split down to about `bytes / (4·threads)`, never below the
    /// minimum chunk.
    pub(crate) fn join_for(&self, bytes: usize) -> Option<RayonJoin> {
        let j = RayonJoin::for_job(self, bytes);
        (self.threads() > 1 && bytes >= 2 * j.grain).then_some(j)
    }

    /// Splits `input` into chunks of `in_per` items and `output` into chunks of `out_per`
    /// items (the same number of chunks), runs `f(chunk_index, in_chunk, out_chunk)` on all of
    /// them in parallel, and returns the first error in chunk order (deterministic).
    pub(crate) fn zip_chunks<I: Sync, O: Send, E: Send>(
        &self,
        input: &[I],
        in_per: usize,
        output: &mut [O],
        out_per: usize,
        f: impl Fn(usize, &[I], &mut [O]) -> std::result::Result<(), E> + Sync + Send,
    ) -> std::result::Result<(), E> {
        let results: Vec<std::result::Result<(), E>> = self.install(|| {
            input
                .par_chunks(in_per)
                .zip(output.par_chunks_mut(out_per))
                .enumerate()
                .map(|(i, (a, b))| f(i, a, b))
                .collect()
        });
        results.into_iter().collect()
    }
}

/// The rayon `Join` of the core's SZp driver: `rayon::join` (run it inside
/// [`Parallel::install`] to use that pool), splitting ranges of at least two grains.
#[derive(Clone, Copy, Debug)]
pub struct RayonJoin {
    grain: usize,
    /// The encoder's grain: the job over the thread count (rounded up to a power of two, so
    /// that halving gives every thread a range), never below `grain`.
    coarse: usize,
}

impl RayonJoin {
    /// The `Join` for a job of `bytes` input bytes on `par`, for callers that drive
    /// `fzpack::szp::engine` themselves (the CLI's streaming batches): a grain is about
    /// `bytes / (4·threads)`, never below the pool's minimum chunk; with one thread it never
    /// splits. Encoding splits only down to one range per thread (`bytes / threads`, the
    /// thread count rounded up to a power of two): each split costs a move of compressed
    /// bytes after the join, and four ranges per thread moved the payload 1.5 times (a
    /// 64 MiB parallel compression ran 1.64× the serial one with them, 1.76× without).
    pub fn for_job(par: &Parallel, bytes: usize) -> RayonJoin {
        let threads = par.threads().max(1);
        if threads == 1 {
            return RayonJoin {
                grain: usize::MAX / 2,
                coarse: usize::MAX / 2,
            };
        }
        let grain = par.min_chunk_bytes.max(bytes / (threads * 4)).max(1);
        let coarse = grain.max(bytes / threads.next_power_of_two());
        RayonJoin { grain, coarse }
    }
}

impl fzpack_core::szp::engine::Join for RayonJoin {
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(a, b)
    }
    fn split(&self, bytes: usize) -> bool {
        bytes >= 2 * self.grain
    }
    fn split_encode(&self, bytes: usize) -> bool {
        bytes >= 2 * self.coarse
    }
}
