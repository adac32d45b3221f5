//! SZp for `std`: everything of [`fzpack_core::szp`], `Vec` helpers, and (feature `rayon`) the
//! parallel encoder and decoder.
//!
//! The parallel encoder follows the archive's own structure: the block widths (and so the
//! block costs) are computed in parallel, an exclusive scan of the costs gives every block's
//! payload offset, and each task then encodes its run of blocks into its own disjoint slice of
//! the output. The decoder scans the costs from the width bytes and decodes runs of blocks in
//! parallel. Output is byte-identical to the core's serial encoder for every thread count.
//!
//! ```
//! use fzpack::szp::{self, Config};
//!
//! let data: Vec<f32> = (0..100_000).map(|i| (i as f32 * 0.001).sin() * 40.0).collect();
//! let archive = szp::compress_vec(&data, &Config::noa(1e-4))?;
//! let back: Vec<f32> = szp::decompress_vec(&archive)?;
//! let bound = szp::header(&archive)?.bound();
//! assert!(data.iter().zip(&back).all(|(a, b)| (*a as f64 - *b as f64).abs() <= bound));
//! # Ok::<(), fzpack::Error>(())
//! ```

pub use fzpack_core::szp::*;

use crate::element::Element;
#[cfg(feature = "rayon")]
use crate::par::Parallel;
use crate::{Error as FzError, Result as FzResult};

/// Compresses `input` into an fzpack SZp archive with the core's fastest path of this CPU
/// ([`Path::best`]), on the calling thread.
///
/// (The parallel encoder [`compress_par`] produces the same bytes; on the 2-core development
/// machine it does not beat the single-threaded AVX-512 path yet — see BENCHMARKS.md — so the
/// default helper does not use it.)
pub fn compress_vec<T: Element>(input: &[T], cfg: &Config) -> FzResult<Vec<u8>> {
    compress_serial_vec(input, cfg)
}

/// Compresses on one thread with the fastest path of this CPU ([`Path::best`]) into a `Vec`.
pub fn compress_serial_vec<T: Element>(input: &[T], cfg: &Config) -> FzResult<Vec<u8>> {
    compress_path_vec(input, cfg, Path::best())
}

/// Compresses on one thread on `path` (an unavailable path falls back as in
/// [`compress_with`]) into a `Vec`.
pub fn compress_path_vec<T: Element>(input: &[T], cfg: &Config, path: Path) -> FzResult<Vec<u8>> {
    let cap = max_compressed_len(input.len(), cfg.block_size, T::TYPE.into())
        .ok_or(FzError::Szp(Error::InvalidBlockSize))?;
    let mut out = vec![0u8; cap];
    let len = compress_with(path, input, cfg, &mut out)?;
    out.truncate(len);
    Ok(out)
}

/// Decompresses an fzpack SZp archive (parallel with feature `rayon`).
///
/// The value count comes from the header and is bounded by the archive itself (one width byte
/// per block), so at most `block_size` values are allocated per archive byte.
pub fn decompress_vec<T: Element>(archive: &[u8]) -> FzResult<Vec<T>> {
    #[cfg(feature = "rayon")]
    {
        decompress_par(archive, &Parallel::new())
    }
    #[cfg(not(feature = "rayon"))]
    {
        decompress_serial_vec(archive)
    }
}

/// Decompresses on one thread with the fastest path of this CPU into a `Vec`.
pub fn decompress_serial_vec<T: Element>(archive: &[u8]) -> FzResult<Vec<T>> {
    decompress_path_vec(archive, Path::best())
}

/// Decompresses on one thread on `path` into a `Vec`.
pub fn decompress_path_vec<T: Element>(archive: &[u8], path: Path) -> FzResult<Vec<T>> {
    let view = checked_view::<T>(archive)?;
    let mut out = vec![T::ZERO; view.n];
    decompress_with(path, archive, &mut out)?;
    Ok(out)
}

/// Parses `archive` and checks its element type against `T`.
fn checked_view<T: Element>(archive: &[u8]) -> FzResult<ArchiveView<'_>> {
    let view = blocks::parse(archive)?;
    let stored: crate::DType = view.header.dtype.into();
    if stored != T::TYPE {
        return Err(FzError::DTypeMismatch {
            stored,
            requested: T::TYPE,
        });
    }
    Ok(view)
}

/// The plan of `input`, with the statistics pass run in parallel.
///
/// A plan depends on the data only through its minimum and maximum (range and largest
/// magnitude), so the parallel pass reduces those and resolves the plan from the two extreme
/// values; any anomaly (non-finite value, `max_abs` exceeded, plan error) re-runs the core's
/// serial [`blocks::plan`] so errors name exactly the index the serial encoder names.
#[cfg(feature = "rayon")]
fn plan_par<T: Element>(input: &[T], cfg: &Config, par: &Parallel) -> Result<(Plan, f64), Error> {
    use rayon::prelude::*;
    let serial = || {
        let p = blocks::plan(input, cfg)?;
        let mag = input.iter().fold(0f64, |m, x| m.max(x.to_f64().abs()));
        Ok((p, mag))
    };
    let Some(per) = par.units_per_task(input.len(), T::BYTES) else {
        return serial();
    };
    let limit = cfg.max_abs.unwrap_or(f64::INFINITY);
    let stats = par.install(|| {
        input
            .par_chunks(per)
            .map(|c| {
                // Branch-free lanes (vectorizes): min, max, and "anything irregular".
                const L: usize = 16;
                let (mut lo, mut hi) = ([f64::INFINITY; L], [f64::NEG_INFINITY; L]);
                let mut bad = false;
                let mut it = c.chunks_exact(L);
                for g in &mut it {
                    for j in 0..L {
                        let v = g[j].to_f64();
                        lo[j] = if v < lo[j] { v } else { lo[j] };
                        hi[j] = if v > hi[j] { v } else { hi[j] };
                        bad |= v.is_nan() || v.abs() > limit || v.abs() > f64::MAX;
                    }
                }
                for (j, x) in it.remainder().iter().enumerate() {
                    let v = x.to_f64();
                    lo[j] = if v < lo[j] { v } else { lo[j] };
                    hi[j] = if v > hi[j] { v } else { hi[j] };
                    bad |= v.is_nan() || v.abs() > limit || v.abs() > f64::MAX;
                }
                let lo = lo.iter().fold(f64::INFINITY, |a, &b| a.min(b));
                let hi = hi.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
                (!bad, T::from_f64(lo), T::from_f64(hi))
            })
            .collect::<Vec<_>>()
    });
    let mut it = stats.iter();
    let Some(&(mut ok, mut lo, mut hi)) = it.next() else {
        return serial();
    };
    for &(o, l, h) in it {
        ok &= o;
        if l < lo {
            lo = l;
        }
        if h > hi {
            hi = h;
        }
    }
    if !ok {
        return serial();
    }
    match blocks::plan(&[lo, hi], cfg) {
        Ok(mut p) => {
            p.n = input.len();
            Ok((p, lo.to_f64().abs().max(hi.to_f64().abs())))
        }
        Err(_) => serial(),
    }
}

/// Compresses `input` with the parallel driver `par` over the fastest path of this CPU.
/// Byte-identical to [`fzpack_core::szp::compress`]; inputs below two minimum chunks run
/// serially. See [`compress_par_with`].
#[cfg(feature = "rayon")]
pub fn compress_par<T: Element>(input: &[T], cfg: &Config, par: &Parallel) -> FzResult<Vec<u8>> {
    compress_par_with(input, cfg, par, Path::best())
}

/// Adds `off` to the element index an error names.
#[cfg(feature = "rayon")]
fn shift(e: Error, off: usize) -> Error {
    match e {
        Error::NonFinite { index } => Error::NonFinite { index: index + off },
        Error::ValueOutOfRange { index } => Error::ValueOutOfRange { index: index + off },
        Error::LevelOverflow { index } => Error::LevelOverflow { index: index + off },
        Error::BoundViolated { index } => Error::BoundViolated { index: index + off },
        e => e,
    }
}

/// Compresses `input` with the parallel driver on the kernels of `path`.
///
/// The statistics pass runs in parallel and resolves the global plan; every task then
/// compresses its run of whole blocks with the core's `path` kernels under a stage-compatible
/// ABS config whose bound is exactly the global quantizer bound (checked per task); the tasks'
/// width bytes and payloads — one exclusive scan of their sizes — are laid after one
/// global header. The bytes are those of the serial encoder: blocks are independent and the
/// quantizer bound is the same.
///
/// Strict configs: the bound is guaranteed by the core's tightened quantizer bound (module
/// docs of [`fzpack_core::szp`]); the core's extra per-element re-check (a safety net, "never
/// observed") is *not* repeated here, because the core's whole-archive SIMD API takes no
/// precomputed plan and a separate check pass costs as much as the encoding. Use
/// [`compress_par_blocks`] for a parallel encoder that keeps the re-check.
#[cfg(feature = "rayon")]
pub fn compress_par_with<T: Element>(
    input: &[T],
    cfg: &Config,
    par: &Parallel,
    path: Path,
) -> FzResult<Vec<u8>> {
    use rayon::prelude::*;
    if cfg.block_size == 0 || cfg.block_size > MAX_BLOCK_SIZE {
        return Err(FzError::Szp(Error::InvalidBlockSize));
    }
    let bs = cfg.block_size as usize;
    let nb = input.len().div_ceil(bs);
    let Some(per) = par.units_per_task(nb, bs * T::BYTES) else {
        return compress_path_vec(input, cfg, path);
    };
    let (plan, _) = plan_par(input, cfg, par)?;
    // The tasks quantize with exactly the global bound: a stage-compatible ABS config whose
    // bound *is* the global quantizer bound (no tightening, no re-planning of the statistics).
    let ccfg = Config {
        mode: Mode::Abs,
        error_bound: plan.quant_eb,
        block_size: cfg.block_size,
        max_abs: None,
        strict: false,
    };
    let dtype = T::TYPE.into();
    let parts: Vec<Result<Option<Vec<u8>>, Error>> = par.install(|| {
        input
            .par_chunks(per * bs)
            .enumerate()
            .map(|(t, c)| {
                let cap = max_compressed_len(c.len(), cfg.block_size, dtype)
                    .ok_or(Error::InvalidBlockSize)?;
                let mut tmp = vec![0u8; cap];
                let len =
                    compress_with(path, c, &ccfg, &mut tmp).map_err(|e| shift(e, t * per * bs))?;
                tmp.truncate(len);
                let same = Header::read(&tmp)?.quant_eb.to_bits() == plan.quant_eb.to_bits();
                Ok(same.then_some(tmp))
            })
            .collect()
    });
    let parts: Vec<Option<Vec<u8>>> = parts.into_iter().collect::<Result<_, _>>()?;
    let Some(parts) = parts.into_iter().collect::<Option<Vec<Vec<u8>>>>() else {
        // Not expected: a task's tightened bound differs; use the block-level driver.
        return compress_par_blocks(input, cfg, par);
    };
    let start = plan.payload_offset();
    let payload: usize = parts
        .iter()
        .enumerate()
        .map(|(t, p)| p.len() - HEADER_LEN - (nb - t * per).min(per))
        .sum();
    let mut out = Vec::with_capacity(start + payload);
    out.resize(HEADER_LEN, 0);
    blocks::write_header(&plan, &mut out)?;
    for (t, p) in parts.iter().enumerate() {
        let k = (nb - t * per).min(per);
        out.extend_from_slice(&p[HEADER_LEN..HEADER_LEN + k]);
    }
    for (t, p) in parts.iter().enumerate() {
        let k = (nb - t * per).min(per);
        out.extend_from_slice(&p[HEADER_LEN + k..]);
    }
    Ok(out)
}

/// The block-level parallel encoder on the core's scalar block kernels: block widths (and so
/// costs) in parallel, an exclusive scan of the costs, then every task encodes its blocks into
/// its own disjoint slice of the output. Byte-identical to the serial encoder; slower than
/// [`compress_par`] where the core has SIMD paths (its block API is scalar).
#[cfg(feature = "rayon")]
pub fn compress_par_blocks<T: Element>(
    input: &[T],
    cfg: &Config,
    par: &Parallel,
) -> FzResult<Vec<u8>> {
    use rayon::prelude::*;
    if cfg.block_size == 0 || cfg.block_size > MAX_BLOCK_SIZE {
        return Err(FzError::Szp(Error::InvalidBlockSize));
    }
    let bs = cfg.block_size as usize;
    let nb = input.len().div_ceil(bs);
    let Some(per) = par.units_per_task(nb, bs * T::BYTES) else {
        return compress_path_vec(input, cfg, Path::Scalar);
    };
    let (plan, _) = plan_par(input, cfg, par)?;
    // 1. widths in parallel
    let mut widths = vec![0u8; nb];
    par.zip_chunks(input, per * bs, &mut widths, per, |_, vals, w| {
        for (b, wb) in vals.chunks(bs).zip(w.iter_mut()) {
            *wb = blocks::block_width(&plan, b);
        }
        Ok::<(), Error>(())
    })?;
    // 2. exclusive scan of the costs, at task granularity
    let tasks = nb.div_ceil(per);
    let mut task_bytes = Vec::with_capacity(tasks);
    for (t, w) in widths.chunks(per).enumerate() {
        let first = t * per;
        let cost: usize = w
            .iter()
            .enumerate()
            .map(|(k, &wb)| blocks::block_payload_len(wb, plan.block_len(first + k)))
            .sum();
        task_bytes.push(cost);
    }
    let payload: usize = task_bytes.iter().sum();
    let start = plan.payload_offset();
    let mut out = vec![0u8; start + payload];
    blocks::write_header(&plan, &mut out)?;
    out[HEADER_LEN..start].copy_from_slice(&widths);
    // 3. every task encodes into its own disjoint slice
    let mut slices = Vec::with_capacity(tasks);
    let mut rest = &mut out[start..];
    for &len in &task_bytes {
        let (a, b) = rest.split_at_mut(len);
        slices.push(a);
        rest = b;
    }
    let results: Vec<Result<(), Error>> = par.install(|| {
        slices
            .into_par_iter()
            .enumerate()
            .map(|(t, dst)| {
                let first = t * per;
                let mut off = 0;
                let end = (first + per).min(nb);
                for b in first..end {
                    let vals = &input[b * bs..(b * bs + bs).min(input.len())];
                    let w = widths[b];
                    let len = blocks::block_payload_len(w, vals.len());
                    blocks::encode_block(&plan, vals, w, &mut dst[off..off + len], b * bs)?;
                    off += len;
                }
                Ok(())
            })
            .collect()
    });
    results.into_iter().collect::<Result<(), Error>>()?;
    Ok(out)
}

/// Decompresses with the parallel driver `par` over the fastest path of this CPU: costs
/// scanned from the width bytes, runs of blocks decoded in parallel. Same values as
/// [`fzpack_core::szp::decompress`].
#[cfg(feature = "rayon")]
pub fn decompress_par<T: Element>(archive: &[u8], par: &Parallel) -> FzResult<Vec<T>> {
    decompress_par_with(archive, par, Path::best())
}

/// [`decompress_par`] on the kernels of `path`: each task hands its run of blocks (its width
/// bytes and payload slice, behind a header with the archive's quantizer bound) to the core's
/// `path` decoder.
#[cfg(feature = "rayon")]
pub fn decompress_par_with<T: Element>(
    archive: &[u8],
    par: &Parallel,
    path: Path,
) -> FzResult<Vec<T>> {
    let view = checked_view::<T>(archive)?;
    let bs = view.header.block_size as usize;
    let nb = view.widths.len();
    let Some(per) = par.units_per_task(nb, bs * T::BYTES) else {
        return decompress_path_vec(archive, path);
    };
    let mut task_start = Vec::with_capacity(nb.div_ceil(per) + 1);
    let mut off = 0usize;
    for (b, &w) in view.widths.iter().enumerate() {
        if b % per == 0 {
            task_start.push(off);
        }
        off += blocks::block_payload_len(w, view.block_len(b));
    }
    task_start.push(off);
    let mut out = vec![T::ZERO; view.n];
    let h = view.header;
    par.zip_chunks(view.widths, per, &mut out, per * bs, |t, ws, vals| {
        let payload = &view.payload[task_start[t]..task_start[t + 1]];
        let sub = Plan {
            dtype: h.dtype,
            mode: Mode::Abs,
            block_size: h.block_size,
            n: vals.len(),
            requested: h.quant_eb,
            bound: h.quant_eb,
            quant_eb: h.quant_eb,
            value_base: 0.0,
            strict: false,
        };
        let mut tmp = Vec::with_capacity(HEADER_LEN + ws.len() + payload.len());
        tmp.resize(HEADER_LEN, 0);
        blocks::write_header(&sub, &mut tmp)?;
        tmp.extend_from_slice(ws);
        tmp.extend_from_slice(payload);
        decompress_with(path, &tmp, vals).map(|_| ())
    })?;
    Ok(out)
}

/// The block-level parallel decoder on the core's scalar block kernels (see
/// [`compress_par_blocks`]).
#[cfg(feature = "rayon")]
pub fn decompress_par_blocks<T: Element>(archive: &[u8], par: &Parallel) -> FzResult<Vec<T>> {
    let view = checked_view::<T>(archive)?;
    let bs = view.header.block_size as usize;
    let nb = view.widths.len();
    let Some(per) = par.units_per_task(nb, bs * T::BYTES) else {
        return decompress_path_vec(archive, Path::Scalar);
    };
    // payload offset of the first block of every task
    let mut task_start = Vec::with_capacity(nb.div_ceil(per) + 1);
    let mut off = 0usize;
    for (b, &w) in view.widths.iter().enumerate() {
        if b % per == 0 {
            task_start.push(off);
        }
        off += blocks::block_payload_len(w, view.block_len(b));
    }
    let mut out = vec![T::ZERO; view.n];
    let eb = view.header.quant_eb;
    par.zip_chunks(view.widths, per, &mut out, per * bs, |t, ws, vals| {
        let mut off = task_start[t];
        for (w, o) in ws.iter().zip(vals.chunks_mut(bs)) {
            let len = blocks::block_payload_len(*w, o.len());
            let src = view.payload.get(off..off + len).ok_or(Error::Truncated)?;
            blocks::decode_block(eb, *w, src, o)?;
            off += len;
        }
        Ok::<(), Error>(())
    })?;
    Ok(out)
}
