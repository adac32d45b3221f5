//! SZp error-bounded compression for `std`: one [`Encoder`] and one [`Decoder`], the
//! shorthands [`compress`] and [`decompress`], and the vocabulary of [`fzpack_core::szp`].
//!
//! ```
//! use fzpack::szp::{self, Config};
//!
//! let data: Vec<f32> = (0..100_000).map(|i| (i as f32 * 0.001).sin() * 40.0).collect();
//! let archive = szp::compress(&data, &Config::noa(1e-4))?;
//! let back: Vec<f32> = szp::decompress(&archive)?;
//! let bound = szp::header(&archive)?.bound();
//! assert!(data.iter().zip(&back).all(|(a, b)| (*a as f64 - *b as f64).abs() <= bound));
//! # Ok::<(), fzpack::Error>(())
//! ```
//!
//! The builders choose the kernel ([`Kernel`], default [`Kernel::best`]), the threads (with
//! the feature `rayon`, on by default: rayon's global pool unless [`Encoder::threads`] names
//! a [`Parallel`] or [`Encoder::serial`] keeps the work on the calling thread) and, for the
//! decoder, whether the checksums are verified ([`Verify`]); their sinks write a new `Vec`, a
//! reused `Vec`, a slice, or (encoder) an [`std::io::Write`]. The bytes are the scalar
//! reference's ([`Kernel::Scalar`]) for every kernel, sink and thread count:
//!
//! ```
//! use fzpack::par::Parallel;
//! use fzpack::szp::{Config, Decoder, Encoder, Kernel, Verify};
//!
//! let data: Vec<f64> = (0..50_000).map(|i| (i as f64 * 1e-3).cos()).collect();
//! let cfg = Config::abs(1e-6);
//! let par = Parallel::with_threads(2)?.min_chunk_bytes(4096);
//! let fast = Encoder::new(&cfg).threads(&par).to_vec(&data)?;
//! let reference = Encoder::new(&cfg).kernel(Kernel::Scalar).serial().to_vec(&data)?;
//! assert_eq!(fast, reference);
//!
//! let mut back = Vec::new(); // reused across calls
//! let n = Decoder::new().verify(Verify::Skip).into_vec::<f64>(&fast, &mut back)?;
//! assert_eq!(n, data.len());
//! # Ok::<(), fzpack::Error>(())
//! ```
//!
//! # Layouts
//!
//! [`Config::abs`] and [`Config::noa`] write the block-head layout ([`Layout::Heads`]), which
//! is smaller at the same speed. The FZGPUModules stage layout ([`Layout::Fzgm`]) is what
//! the FZGPUModules stage itself reads and what `.fzm` containers ([`fzm`]) hold; ask for it
//! with `cfg.with_layout(Layout::Fzgm)`, or with [`Config::stage_compatible`] (the stage's
//! quantizer and its layout). Every decoder reads both.
//!
//! [`Layout::Interp`] is built for ratio (SZ3-class, at a fraction of the block layouts'
//! speed): values predicted from their neighbours' decoded values across the array's shape,
//! the differences entropy-coded (`docs/guide.md`; [`tiled`]). Give the shape:
//!
//! ```
//! use fzpack::szp::{self, Config, Layout, Shape};
//!
//! let (rows, cols) = (300usize, 400usize);
//! let data: Vec<f32> = (0..rows * cols)
//!     .map(|i| ((i / cols) as f32 * 0.02).sin() * 10.0 + ((i % cols) as f32 * 0.01).cos())
//!     .collect();
//! let cfg = Config::noa(1e-3)
//!     .with_layout(Layout::Interp)
//!     .with_shape(Shape::new(&[rows as u64, cols as u64])?);
//! let archive = szp::compress(&data, &cfg)?;
//! let back: Vec<f32> = szp::decompress(&archive)?;
//! let bound = szp::header(&archive)?.bound();
//! assert!(data.iter().zip(&back).all(|(a, b)| (a - b).abs() as f64 <= bound));
//! assert!(archive.len() * 4 < szp::compress(&data, &Config::noa(1e-3))?.len());
//! # Ok::<(), fzpack::Error>(())
//! ```
//!
//! # How the threads split the work
//!
//! The parallel encoder and decoder are the core's one archive driver ([`engine`]) with a
//! rayon [`engine::Join`]: the statistics pass runs split across the pool and the plan is
//! resolved once; each task then encodes its range of blocks on the chosen kernel straight
//! into the output (width bytes in their final place, the payload at the range's worst-case
//! offset, moved down once per split), and the decoder splits at block boundaries whose
//! payload offsets are sums of the width bytes' costs. Output pages are first written by the
//! task that owns them. Inputs below two minimum chunks ([`Parallel::min_chunk_bytes`]) or a
//! one-thread pool run on the calling thread.
//!
//! # The low-level layer
//!
//! [`engine`] (the archive driver over a [`engine::Join`]), [`blocks`] (archive parsing) and
//! [`fzm`] (`.fzm` containers) are the core's modules, re-exported for callers that drive
//! the archive themselves (the `fzpack` CLI's streaming compressor); [`StreamEncoder`] writes
//! an archive one block at a time with no allocation.

use std::io::Write;

pub use fzpack_core::szp::{
    ArchiveView, CHUNK_TARGET_VALUES, Config, DType, Error, FLAG_MISSING, FLAG_SHAPE,
    FORMAT_VERSION, FORMAT_VERSION_V1, FORMAT_VERSION_V3, HEADER_LEN, HEADER_LEN_V1, Header,
    Kernel, LAYOUT_FZGM, LAYOUT_HEADS, LAYOUT_INTERP, Layout, MAGIC, MAX_BLOCK_SIZE, MAX_RANK,
    Mode, Plan, Shape, StreamEncoder, SzpFloat, Verify, archive, blocks, engine, fzm, header,
    interp, max_compressed_len, shape, tiled,
};

use crate::element::Element;
#[cfg(feature = "rayon")]
use crate::par::Parallel;
use crate::tiles;
use crate::{Error as FzError, Result as FzResult};
use fzpack_core::szp::{compress_with, decompress_with};

/// Compresses `input` into a new fzpack SZp archive: [`Encoder::new`]`(cfg).to_vec(input)`
/// (the fastest kernel of this CPU; with the feature `rayon`, rayon's global pool).
pub fn compress<T: Element>(input: &[T], cfg: &Config) -> FzResult<Vec<u8>> {
    Encoder::new(cfg).to_vec(input)
}

/// Decompresses an fzpack SZp archive into a new `Vec`, verifying its checksums:
/// [`Decoder::new`]`().to_vec(archive)`.
pub fn decompress<T: Element>(archive: &[u8]) -> FzResult<Vec<T>> {
    Decoder::new().to_vec(archive)
}

/// Where the builders run: the calling thread, or a rayon driver.
#[derive(Clone, Debug)]
enum Threads {
    Serial,
    #[cfg(feature = "rayon")]
    Pool(Parallel),
}

impl Threads {
    fn default_for_build() -> Threads {
        #[cfg(feature = "rayon")]
        return Threads::Pool(Parallel::new());
        #[cfg(not(feature = "rayon"))]
        return Threads::Serial;
    }

    /// The pool to run a job of `bytes` input bytes on, or `None` to stay on this thread
    /// (serial, one thread, or less than two minimum chunks).
    #[cfg_attr(not(feature = "rayon"), allow(unused_variables))]
    fn pool_for(&self, bytes: usize) -> Option<&tiles::Par> {
        match self {
            Threads::Serial => None,
            #[cfg(feature = "rayon")]
            Threads::Pool(par) => par.join_for(bytes).map(|_| par),
        }
    }
}

/// An SZp compressor: a [`Config`] with a kernel and a thread choice, and four sinks.
///
/// ```
/// use fzpack::szp::{Config, Encoder};
///
/// let data = [1.5f32, 2.25, -3.0, 4.0];
/// let enc = Encoder::new(&Config::abs(1e-3)).serial();
/// let mut archive = Vec::new();
/// for _ in 0..3 {
///     enc.into_vec(&data, &mut archive)?; // one allocation for all three
/// }
/// let mut file = Vec::new(); // any `std::io::Write`
/// assert_eq!(enc.write_to(&data, &mut file)?, archive.len() as u64);
/// # Ok::<(), fzpack::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Encoder {
    cfg: Config,
    kernel: Kernel,
    threads: Threads,
}

impl Encoder {
    /// An encoder of `cfg` on [`Kernel::best`]; with the feature `rayon`, on rayon's global
    /// pool (inputs below two minimum chunks stay on the calling thread).
    pub fn new(cfg: &Config) -> Encoder {
        Encoder {
            cfg: *cfg,
            kernel: Kernel::best(),
            threads: Threads::default_for_build(),
        }
    }

    /// Encodes on `kernel` ([`Error::UnsupportedPath`] from the sinks if this CPU cannot run
    /// it; [`Kernel::is_available`] says). The bytes do not depend on it.
    pub fn kernel(mut self, kernel: Kernel) -> Encoder {
        self.kernel = kernel;
        self
    }

    /// Runs on `par` (its pool and minimum chunk size). The bytes do not depend on it.
    #[cfg(feature = "rayon")]
    pub fn threads(mut self, par: &Parallel) -> Encoder {
        self.threads = Threads::Pool(par.clone());
        self
    }

    /// Runs on the calling thread only.
    pub fn serial(mut self) -> Encoder {
        self.threads = Threads::Serial;
        self
    }

    /// The archive of `input` in a new `Vec`.
    pub fn to_vec<T: Element>(&self, input: &[T]) -> FzResult<Vec<u8>> {
        let mut out = Vec::new();
        self.into_vec(input, &mut out)?;
        Ok(out)
    }

    /// The archive of `input` in `out`, which it replaces (the capacity is reused, so a loop
    /// over many inputs allocates once); returns its length (`out.len()`). On error `out` is
    /// empty.
    ///
    /// Each call grows `out` back to the plan's worst case ([`engine::worst_len`]: usually a
    /// small multiple of the archive) and safe Rust zeroes what it grows by; a slice allocated
    /// once ([`Encoder::into_slice`]) avoids that.
    pub fn into_vec<T: Element>(&self, input: &[T], out: &mut Vec<u8>) -> FzResult<usize> {
        if self.cfg.layout == Layout::Interp {
            let par = self.threads.pool_for(size_of_val(input));
            return Ok(tiles::compress_into(input, &self.cfg, par, out)?);
        }
        match &self.threads {
            Threads::Serial => {
                compress_planned_into(input, &self.cfg, self.kernel, &engine::Serial, out)
            }
            #[cfg(feature = "rayon")]
            Threads::Pool(par) => match par.join_for(size_of_val(input)) {
                Some(j) => {
                    par.install(|| compress_planned_into(input, &self.cfg, self.kernel, &j, out))
                }
                None => compress_planned_into(input, &self.cfg, self.kernel, &engine::Serial, out),
            },
        }
    }

    /// The archive of `input` in `out[..len]`; returns `len`. With `out` at least
    /// [`max_compressed_len`] (or [`engine::worst_len`] of the plan) long nothing is sized
    /// twice; a shorter `out` costs a sizing pass and fails with [`Error::OutputTooSmall`]
    /// (nothing written past `out`) when the archive does not fit.
    pub fn into_slice<T: Element>(&self, input: &[T], out: &mut [u8]) -> FzResult<usize> {
        if self.cfg.layout == Layout::Interp {
            let par = self.threads.pool_for(size_of_val(input));
            return Ok(tiles::compress_slice(input, &self.cfg, par, out)?);
        }
        let r = match &self.threads {
            Threads::Serial => compress_with(self.kernel, input, &self.cfg, out),
            #[cfg(feature = "rayon")]
            Threads::Pool(par) => match par.join_for(size_of_val(input)) {
                Some(j) => {
                    par.install(|| engine::compress_on(self.kernel, &j, input, &self.cfg, out))
                }
                None => compress_with(self.kernel, input, &self.cfg, out),
            },
        };
        r.map_err(Into::into)
    }

    /// Writes the archive of `input` to `sink` (one `write_all`); returns its length.
    pub fn write_to<T: Element>(&self, input: &[T], mut sink: impl Write) -> FzResult<u64> {
        let archive = self.to_vec(input)?;
        sink.write_all(&archive)?;
        Ok(archive.len() as u64)
    }
}

/// An SZp decompressor: a kernel, a thread and a [`Verify`] choice, and three sinks. Every
/// archive is treated as untrusted (see [`fzpack_core::szp::decompress`]); the value count
/// comes from the header and is bounded by the archive itself (one width byte per block), so at
/// most `block_size` values are allocated per archive byte.
///
/// ```
/// use fzpack::szp::{self, Config, Decoder, Verify};
///
/// let archive = szp::compress(&[0.5f64; 1000], &Config::abs(1e-3))?;
/// let mut out = [0f64; 1000];
/// let n = Decoder::new().verify(Verify::Skip).serial().into_slice(&archive, &mut out)?;
/// assert_eq!(n, 1000);
/// # Ok::<(), fzpack::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Decoder {
    kernel: Kernel,
    threads: Threads,
    verify: Verify,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

impl Decoder {
    /// A decoder on [`Kernel::best`] that verifies the checksums ([`Verify::Checksums`]);
    /// with the feature `rayon`, on rayon's global pool (each chunk's CRC is checked by the
    /// task that decodes it, right before it does).
    pub fn new() -> Decoder {
        Decoder {
            kernel: Kernel::best(),
            threads: Threads::default_for_build(),
            verify: Verify::Checksums,
        }
    }

    /// Decodes on `kernel` (the values do not depend on it).
    pub fn kernel(mut self, kernel: Kernel) -> Decoder {
        self.kernel = kernel;
        self
    }

    /// Runs on `par`.
    #[cfg(feature = "rayon")]
    pub fn threads(mut self, par: &Parallel) -> Decoder {
        self.threads = Threads::Pool(par.clone());
        self
    }

    /// Runs on the calling thread only.
    pub fn serial(mut self) -> Decoder {
        self.threads = Threads::Serial;
        self
    }

    /// Whether to check the CRCs ([`Verify::Skip`]: for callers that checksum the archive
    /// elsewhere; every structural check still runs).
    pub fn verify(mut self, verify: Verify) -> Decoder {
        self.verify = verify;
        self
    }

    /// The values of `archive` in a new `Vec`.
    pub fn to_vec<T: Element>(&self, archive: &[u8]) -> FzResult<Vec<T>> {
        let mut out = Vec::new();
        self.into_vec(archive, &mut out)?;
        Ok(out)
    }

    /// The values of `archive` in `out`, which it replaces (capacity reused); returns their
    /// number. On error `out` is empty.
    pub fn into_vec<T: Element>(&self, archive: &[u8], out: &mut Vec<T>) -> FzResult<usize> {
        if tiles::is_tiled(archive) {
            let r = self.tiled_into_vec(archive, out);
            if r.is_err() {
                out.clear();
            }
            return r;
        }
        let view = checked_view::<T>(archive, self.verify).inspect_err(|_| out.clear())?;
        prepare(out, view.n, T::ZERO);
        self.decode(archive, out, view.n).map_err(|e| {
            out.clear();
            e.into()
        })
    }

    /// The values of `archive` in `out[..n]`; returns `n` ([`Error::OutputTooSmall`] if `out`
    /// is shorter).
    pub fn into_slice<T: Element>(&self, archive: &[u8], out: &mut [T]) -> FzResult<usize> {
        if tiles::is_tiled(archive) {
            let view = tiles::view(archive, self.verify)?;
            check_dtype::<T>(view.header.dtype)?;
            let par = self.threads.pool_for(view.n.saturating_mul(T::BYTES));
            return Ok(tiles::decode(&view, out, par, self.verify)?);
        }
        let view = checked_view::<T>(archive, self.verify)?;
        self.decode(archive, out, view.n).map_err(Into::into)
    }

    /// [`Decoder::into_vec`] for the interpolation layout.
    fn tiled_into_vec<T: Element>(&self, archive: &[u8], out: &mut Vec<T>) -> FzResult<usize> {
        let view = tiles::view(archive, self.verify)?;
        check_dtype::<T>(view.header.dtype)?;
        prepare(out, view.n, T::ZERO);
        let par = self.threads.pool_for(view.n.saturating_mul(T::BYTES));
        Ok(tiles::decode(&view, out, par, self.verify)?)
    }

    /// Decodes `archive` (of `n` values) into `out` on this decoder's kernel and threads.
    #[cfg_attr(not(feature = "rayon"), allow(unused_variables))]
    fn decode<T: Element>(&self, archive: &[u8], out: &mut [T], n: usize) -> Result<usize, Error> {
        let (k, v) = (self.kernel, self.verify);
        match &self.threads {
            Threads::Serial => decompress_with(k, archive, out, v),
            #[cfg(feature = "rayon")]
            Threads::Pool(par) => match par.join_for(n.saturating_mul(T::BYTES)) {
                Some(j) => par.install(|| engine::decompress_verify_on(k, &j, archive, out, v)),
                None => decompress_with(k, archive, out, v),
            },
        }
    }
}

/// Plans once, sizes `out` to the plan's worst case ([`engine::worst_len`]: usually a small
/// multiple of the archive, so reusing `out` re-zeroes little), then encodes on `join`.
/// The reference path gets the format's worst case (its one-pass encoder parks 8 bytes per
/// value in the output).
fn compress_planned_into<T: Element, J: engine::Join>(
    input: &[T],
    cfg: &Config,
    path: Kernel,
    join: &J,
    out: &mut Vec<u8>,
) -> FzResult<usize> {
    let (plan, max_abs) = match engine::plan_on(path, join, input, cfg) {
        Ok(p) => p,
        Err(e) => return finish(out, Err(e)),
    };
    let cap = if path == Kernel::Scalar {
        let ext = engine::extension_len(&plan, input).map_err(|e| {
            out.clear();
            FzError::Szp(e)
        })?;
        worst_len::<T>(input.len(), cfg).inspect_err(|_| out.clear())? + ext
    } else {
        match engine::worst_len_for(&plan, max_abs, input) {
            Ok(c) => c,
            Err(e) => return finish(out, Err(e)),
        }
    };
    prepare(out, cap, 0u8);
    let r = engine::compress_planned_on(path, join, &plan, max_abs, input, out);
    finish(out, r)
}

/// The archive's worst-case length, or the block-size error.
fn worst_len<T: Element>(n: usize, cfg: &Config) -> FzResult<usize> {
    max_compressed_len(n, cfg.block_size, T::TYPE).ok_or(FzError::Szp(Error::InvalidBlockSize))
}

/// Makes `out` exactly `len` elements of `zero`, reusing its capacity; a fresh allocation is
/// zeroed lazily by the allocator, so its pages are first touched by whoever writes them.
fn prepare<E: Clone + Copy>(out: &mut Vec<E>, len: usize, zero: E) {
    if out.capacity() < len {
        *out = vec![zero; len];
    } else {
        out.resize(len, zero);
        out.truncate(len);
    }
}

/// Truncates `out` to the written length (or empties it on error).
fn finish(out: &mut Vec<u8>, r: Result<usize, Error>) -> FzResult<usize> {
    match r {
        Ok(len) => {
            out.truncate(len);
            Ok(len)
        }
        Err(e) => {
            out.clear();
            Err(e.into())
        }
    }
}

/// Reads `archive`'s frame (header and its CRC under `verify`, the count bounded by the width
/// bytes present, so `out` is never sized from a hostile count) and checks its element type
/// against `T`. The payload lengths and chunk CRCs are the decoder's: walking them here too
/// would read a cold archive twice.
fn checked_view<T: Element>(archive: &[u8], verify: Verify) -> FzResult<ArchiveView<'_>> {
    let view = blocks::parse_frame(archive, verify, false)?;
    check_dtype::<T>(view.header.dtype)?;
    Ok(view)
}

/// [`FzError::DTypeMismatch`] unless the archive's element type `stored` is `T`.
fn check_dtype<T: Element>(stored: DType) -> FzResult<()> {
    if stored != T::TYPE {
        return Err(FzError::DTypeMismatch {
            stored,
            requested: T::TYPE,
        });
    }
    Ok(())
}
