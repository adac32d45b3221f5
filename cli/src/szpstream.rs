//! SZp archives streamed by block ranges: peak memory is one input map plus a batch, whatever
//! the file size, and there is no full-size copy of the archive or the output.
//!
//! Compress: the plan is computed once over the whole (mapped) input, then batches of whole
//! checksum chunks are encoded by the core's block-range API ([`engine::encode_blocks`]) on the
//! rayon pool. A batch's payload is appended to the temporary file, its width bytes are written
//! at their final place (`header + first_block`) with a positioned write, its chunk CRCs are
//! kept (4 bytes per chunk of `2^chunk_shift` blocks) and written after the payload, and the
//! header goes last. Standard output cannot seek, so there the batches are encoded twice: the
//! first pass gives the width table (kept, one byte per block) and the CRCs, the second the
//! payload; a failure is found in the first pass, before anything is written.
//!
//! Decompress: the archive (mapped) is validated whole by [`blocks::parse_with`] (the CRCs of
//! every chunk unless `--no-verify`), then decoded a batch at a time
//! ([`engine::decode_blocks`]). Into a file, the temporary file is given its final length with
//! its blocks reserved (`posix_fallocate`, so a full disk is an error, not a SIGBUS under the
//! mapping) and each batch is decoded straight into a mapped window of it, which is unmapped
//! after the batch: no copy through a buffer, the pool's threads each fill their own pages, and
//! the mapping never holds more than one batch. (Measured on the 256 MiB random walk: 0.7 s
//! of CPU with `write(2)` from a buffer — 80 % of it the kernel's copy — against 0.18 s.)
//! Standard output gets one reused buffer per batch.
//!
//! The bytes are exactly those of `fzpack::szp::compress_vec` (tests compare them).

use fzpack::par::{Parallel, RayonJoin};
use fzpack::szp::{self, Config, HEADER_LEN, Kernel, Plan, blocks, engine};

use crate::codec::Wrap;
use crate::fail::{Fail, Kind, lib};
use crate::files::Output;

/// Raw bytes per batch: 16 MiB, big enough to split across the pool, small enough to stay a
/// fixed cost.
pub const BATCH_BYTES: usize = 16 << 20;

/// Raw bytes per batch: [`BATCH_BYTES`], or `FZPACK_BATCH_BYTES` from the environment (tests
/// use tiny batches to cross many batch boundaries on small files).
fn batch_bytes() -> usize {
    std::env::var("FZPACK_BATCH_BYTES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&b| b > 0)
        .unwrap_or(BATCH_BYTES)
}

/// Blocks per batch for `bs` values of `vb` bytes per block: about [`batch_bytes`] of raw
/// values, a whole number of checksum chunks of `2^shift` blocks (at least one).
fn batch_blocks(bs: usize, vb: usize, shift: u8) -> usize {
    let c = 1usize << shift.min(31);
    let want = (batch_bytes() / (bs.max(1) * vb)).max(1);
    want.div_ceil(c) * c
}

/// Worst-case payload bytes of one block under `plan` on `path`.
fn worst_block(path: Kernel, plan: &Plan, max_abs: f64) -> usize {
    let bs = plan.block_size.max(1) as usize;
    // A block's share of its head group's trailer (block-head layout): at most 9 bytes.
    let heads = if plan.head_group() > 0 { 9 } else { 0 };
    if path == Kernel::Scalar {
        // the reference encoder parks 8 bytes per value in the payload slice
        return bs * 8 + heads;
    }
    let nb = plan.blocks().max(1);
    let all = engine::worst_len(plan, max_abs)
        .saturating_sub(plan.payload_offset())
        .saturating_sub(plan.sums_len());
    all.div_ceil(nb).min(bs * 8 + heads)
}

/// The reusable buffers and fixed parameters of one streamed compression.
struct Encoder<'a, T> {
    path: Kernel,
    par: &'a Parallel,
    plan: Plan,
    max_abs: f64,
    values: &'a [T],
    bs: usize,
    shift: u8,
    per: usize,
    widths: Vec<u8>,
    payload: Vec<u8>,
}

impl<T: Wrap> Encoder<'_, T> {
    /// Encodes blocks `b0..` (one batch) into the buffers and appends the batch's chunk CRCs
    /// to `sums`; returns the batch's block count and payload length.
    fn batch(&mut self, b0: usize, sums: &mut Vec<u8>) -> Result<(usize, usize), szp::Error> {
        let nb = self.plan.blocks();
        let b1 = (b0 + self.per).min(nb);
        let v0 = b0 * self.bs;
        let v1 = (b1 * self.bs).min(self.values.len());
        let input = &self.values[v0..v1];
        let widths = &mut self.widths[..b1 - b0];
        let payload = &mut self.payload[..];
        let (path, plan, max_abs) = (self.path, &self.plan, self.max_abs);
        let join = RayonJoin::for_job(self.par, size_of_val(input));
        let len = self.par.install(|| {
            engine::encode_blocks(path, &join, plan, max_abs, input, b0, widths, payload)
        })?;
        // The chunk CRCs of the batch (batches hold whole chunks, so chunk indices are global).
        let c = 1usize << self.shift.min(31);
        let (mut off, mut rem) = (0usize, v1 - v0);
        for (u, wc) in widths.chunks(c).enumerate() {
            let vals = rem.min(wc.len() * self.bs);
            let group = self.plan.head_group();
            let bytes = blocks::body_len(wc, self.bs, vals, group, &payload[off..])?;
            rem -= vals;
            let p = &payload[off..off + bytes];
            off += bytes;
            let chunk = ((b0 >> self.shift) + u) as u32;
            sums.extend_from_slice(&blocks::chunk_sum(chunk, wc, p).to_le_bytes());
        }
        Ok((b1 - b0, len))
    }
}

/// Compresses `values` into an fzpack SZp archive written to `out`, streamed by batches.
pub fn compress<T: Wrap>(
    values: &[T],
    cfg: &Config,
    par: &Parallel,
    out: &mut Output,
    err: impl Fn(szp::Error) -> Fail,
) -> Result<(), Fail> {
    let path = Kernel::best();
    let join = RayonJoin::for_job(par, size_of_val(values));
    let (plan, max_abs) = par
        .install(|| engine::plan_on(path, &join, values, cfg))
        .map_err(&err)?;
    let bs = plan.block_size.max(1) as usize;
    let shift = plan.chunk_shift();
    let per = batch_blocks(bs, T::BYTES, shift).min(plan.blocks().max(1));
    let wb = worst_block(path, &plan, max_abs);
    let mut enc = Encoder {
        path,
        par,
        plan,
        max_abs,
        values,
        bs,
        shift,
        per,
        widths: vec![0u8; per],
        payload: vec![0u8; per.saturating_mul(wb)],
    };
    let nb = plan.blocks();
    let mut header = [0u8; HEADER_LEN];
    blocks::write_header(&plan, &mut header).map_err(&err)?;
    let mut sums = Vec::with_capacity(plan.sums_len());
    let start = plan.payload_offset() as u64;
    if out.is_stdout() {
        // Pass 1: the width table and the CRCs (every error surfaces here).
        let mut table = Vec::with_capacity(nb);
        let mut b0 = 0;
        while b0 < nb {
            let (k, _) = enc.batch(b0, &mut sums).map_err(&err)?;
            table.extend_from_slice(&enc.widths[..k]);
            b0 += k;
        }
        out.write_all(&header)?;
        out.write_all(&table)?;
        drop(table);
        // Pass 2: the payload.
        let mut scratch = Vec::new();
        let mut b0 = 0;
        while b0 < nb {
            let (k, len) = enc.batch(b0, &mut scratch).map_err(&err)?;
            scratch.clear();
            out.write_all(&enc.payload[..len])?;
            b0 += k;
        }
        return out.write_all(&sums);
    }
    let mut pos = start;
    let mut b0 = 0;
    while b0 < nb {
        let (k, len) = enc.batch(b0, &mut sums).map_err(&err)?;
        out.write_at((HEADER_LEN + b0) as u64, &enc.widths[..k])?;
        out.write_at(pos, &enc.payload[..len])?;
        pos += len as u64;
        b0 += k;
    }
    out.write_at(pos, &sums)?;
    out.write_at(0, &header)?;
    Ok(())
}

/// Decodes the (validated) SZp archive `bytes` to `out`, a batch of blocks at a time.
/// `verify` is applied by the caller's whole-archive check ([`blocks::parse_with`]).
pub fn decompress<T: Wrap>(
    bytes: &[u8],
    par: &Parallel,
    out: &mut Output,
    err: impl Fn(szp::Error) -> Fail,
    mut write: impl FnMut(&mut Output, &[T]) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let view = blocks::parse_with(bytes, szp::Verify::Skip).map_err(&err)?;
    if view.header.dtype != T::TYPE {
        return Err(err(szp::Error::DTypeMismatch));
    }
    let path = Kernel::best();
    let bs = view.header.block_size.max(1) as usize;
    let nb = view.widths.len();
    // Batches hold whole head groups (block-head layout: `2^min(5, chunk_shift)` blocks).
    let group = view.header.head_group();
    let per = batch_blocks(bs, T::BYTES, view.header.chunk_shift.min(5)).min(nb.max(1));
    let eb = view.header.quant_eb;
    let decode = |ws: &[u8], payload: &[u8], o: &mut [T]| {
        let join = RayonJoin::for_job(par, size_of_val(o));
        par.install(|| engine::decode_blocks(path, &join, eb, bs as u32, group, ws, payload, o))
            .map_err(&err)
    };
    // A file on a little-endian machine: decode straight into the output's pages, a mapped
    // window per batch (no copy through a buffer, and every thread writes its own pages).
    // Elsewhere (standard output) a batch goes through one reused buffer.
    let direct = !out.is_stdout() && cfg!(target_endian = "little");
    let mut buf: Vec<T> = Vec::new();
    // The values follow what is already written (e.g. a .npy header, padded to 64 bytes so
    // the mapped values stay aligned).
    let base = if direct { out.written() } else { 0 };
    if direct {
        out.reserve(base.saturating_add((view.n as u64).saturating_mul(T::BYTES as u64)))?;
    } else {
        buf = vec![T::ZERO; (per * bs).min(view.n)];
    }
    let (mut b0, mut off) = (0usize, 0usize);
    while b0 < nb {
        let b1 = (b0 + per).min(nb);
        let vals = (b1 * bs).min(view.n) - b0 * bs;
        let ws = &view.widths[b0..b1];
        let rest = view.payload.get(off..).unwrap_or_default();
        let plen = blocks::body_len(ws, bs, vals, group, rest).map_err(&err)?;
        let payload = rest.get(..plen).ok_or_else(|| err(szp::Error::Truncated))?;
        if direct {
            let mut win = out.map(base + (b0 * bs * T::BYTES) as u64, vals * T::BYTES)?;
            let o: &mut [T] = bytemuck::try_cast_slice_mut(&mut win[..])
                .map_err(|_| err(szp::Error::Corrupt("unaligned output mapping")))?;
            decode(ws, payload, o)?;
        } else {
            let o = &mut buf[..vals];
            decode(ws, payload, o)?;
            write(out, o)?;
        }
        b0 = b1;
        off += plen;
    }
    Ok(())
}

/// The name-bearing error of the CLI for a core SZp error.
pub fn szp_fail(name: &str) -> impl Fn(szp::Error) -> Fail + '_ {
    move |e| lib(name, e.into())
}

/// Reads into `buf` until it is full or the input ends; returns the bytes read.
fn fill(src: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match src.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// `e` with its element index moved on by `by` (errors of a window, named globally).
fn shifted(e: szp::Error, by: usize) -> szp::Error {
    use szp::Error as E;
    match e {
        E::NonFinite { index } => E::NonFinite { index: index + by },
        E::ValueOutOfRange { index } => E::ValueOutOfRange { index: index + by },
        E::LevelOverflow { index } => E::LevelOverflow { index: index + by },
        E::BoundViolated { index } => E::BoundViolated { index: index + by },
        other => other,
    }
}

/// An unnamed temporary file in `dir` (removed by the kernel when closed, also on SIGKILL).
fn spool(dir: &std::path::Path) -> Result<std::fs::File, Fail> {
    tempfile::tempfile_in(dir).map_err(|e| {
        Fail::new(
            Kind::Io,
            format!("cannot create a spool file in {}: {e}", dir.display()),
        )
    })
}

/// Compresses the values read from `src` — a pipe or device, of unknown length — with memory
/// bounded by one window, whatever the input's length: the SZp ABS mode with a declared
/// `max_abs` only, where the quantizer grid is fixed before the first value (NOA needs the
/// value range, and without `max_abs` the strict bound depends on the data's magnitude).
///
/// Windows of [`batch_bytes`] of raw values (whole checksum chunks, so whole head groups) are
/// validated and encoded by the core's block-range API as they arrive; their width bytes,
/// payloads and chunk CRCs go to three unnamed spool files in `spool_dir` (on disk, not in
/// memory). At the end of the input the value count is known: the header is written, then
/// the spools are copied after it. The bytes are those of [`compress`] on the same values
/// (a test compares them). Returns the number of values.
pub fn compress_stream<T: Wrap>(
    src: &mut impl std::io::Read,
    nm: &str,
    cfg: &Config,
    par: &Parallel,
    spool_dir: &std::path::Path,
    out: &mut Output,
) -> Result<u64, Fail> {
    let err = szp_fail(nm);
    let Some(max_abs) = cfg.max_abs else {
        return Err(err(szp::Error::StreamingNeedsAbsAndMaxAbs));
    };
    if cfg.mode != szp::Mode::Abs {
        return Err(err(szp::Error::StreamingNeedsAbsAndMaxAbs));
    }
    let dtype: szp::DType = T::TYPE;
    let path = Kernel::best();
    let probe = blocks::resolve(dtype, cfg, 0, 0.0, max_abs).map_err(&err)?;
    let bs = probe.block_size.max(1) as usize;
    let shift = probe.chunk_shift();
    let group = probe.head_group();
    let per = batch_blocks(bs, T::BYTES, shift);
    let wplan = blocks::resolve(dtype, cfg, per * bs, 0.0, max_abs).map_err(&err)?;
    let wb = worst_block(path, &wplan, max_abs);
    let mut raw = vec![T::ZERO; per * bs];
    let mut widths = vec![0u8; per];
    let mut payload = vec![0u8; per.saturating_mul(wb)];
    let mut sums = Vec::new();
    let (mut sp_w, mut sp_p, mut sp_s) = (spool(spool_dir)?, spool(spool_dir)?, spool(spool_dir)?);
    let spool_fail = |e: std::io::Error| {
        Fail::new(
            Kind::Io,
            format!("cannot write a spool file in {}: {e}", spool_dir.display()),
        )
    };
    let (mut n, mut b0) = (0usize, 0usize);
    loop {
        let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut raw[..]);
        let want = buf.len();
        let got =
            fill(src, buf).map_err(|e| Fail::new(Kind::Io, format!("cannot read {nm}: {e}")))?;
        if got % T::BYTES != 0 {
            return Err(Fail::new(
                Kind::Input,
                format!(
                    "{nm}: size {} bytes is not a multiple of the {}-byte {} element size",
                    n * T::BYTES + got,
                    T::BYTES,
                    T::TYPE
                ),
            ));
        }
        let k = got / T::BYTES;
        if k == 0 {
            break;
        }
        let owned;
        let vals: &[T] = if cfg!(target_endian = "little") {
            &raw[..k]
        } else {
            owned = fzpack::values_from_le_bytes::<T>(&bytemuck::cast_slice(&raw[..])[..got])
                .unwrap_or_default();
            &owned
        };
        let join = RayonJoin::for_job(par, size_of_val(vals));
        // Validates the window (finite, |x| <= max_abs, levels in range); its plan encodes
        // exactly as the whole input's would (the grid depends on the bound and max_abs only).
        let (plan, mag) = par
            .install(|| engine::plan_on(path, &join, vals, cfg))
            .map_err(|e| err(shifted(e, n)))?;
        let nb = k.div_ceil(bs);
        let ws = &mut widths[..nb];
        let len = par
            .install(|| engine::encode_blocks(path, &join, &plan, mag, vals, b0, ws, &mut payload))
            .map_err(&err)?;
        let c = 1usize << shift.min(31);
        let (mut off, mut rem) = (0usize, k);
        for (u, wc) in ws.chunks(c).enumerate() {
            let vn = rem.min(wc.len() * bs);
            let bytes = blocks::body_len(wc, bs, vn, group, &payload[off..]).map_err(&err)?;
            rem -= vn;
            let chunk = ((b0 >> shift) + u) as u32;
            sums.extend_from_slice(
                &blocks::chunk_sum(chunk, wc, &payload[off..off + bytes]).to_le_bytes(),
            );
            off += bytes;
        }
        use std::io::Write;
        sp_w.write_all(ws).map_err(spool_fail)?;
        sp_p.write_all(&payload[..len]).map_err(spool_fail)?;
        sp_s.write_all(&sums).map_err(spool_fail)?;
        sums.clear();
        n += k;
        b0 += nb;
        if got < want {
            break;
        }
    }
    let plan = blocks::resolve(dtype, cfg, n, 0.0, max_abs).map_err(&err)?;
    let mut header = [0u8; HEADER_LEN];
    blocks::write_header(&plan, &mut header).map_err(&err)?;
    out.write_all(&header)?;
    for sp in [&mut sp_w, &mut sp_p, &mut sp_s] {
        out.copy_from(sp)?;
    }
    Ok(n as u64)
}
