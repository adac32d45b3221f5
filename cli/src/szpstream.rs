//! SZp archives streamed by block ranges: peak memory is one input map plus a batch, whatever
//! the file size, and there is no full-size copy of the archive or the output.
//!
//! Both directions drive the core's archive layer (`fzpack::szp::archive`), which alone knows
//! where the header, width bytes, payload and chunk CRCs go; this file only moves bytes.
//!
//! Compress: the plan is computed once over the whole (mapped) input, then an
//! [`ArchiveWriter`] encodes batches of whole checksum chunks on the rayon pool, sealing each
//! chunk's CRC as it is encoded. A batch's width bytes are written at the offset the writer
//! names, its payload is appended, its CRCs are kept (4 bytes per chunk of `2^chunk_shift`
//! blocks) and written after the payload, and the header goes last. Standard output cannot
//! seek, so there the batches are encoded twice: the first pass gives the width table (kept,
//! one byte per block) and the CRCs, the second the payload; a failure is found in the first
//! pass, before anything is written.
//!
//! Decompress: an [`ArchiveReader`] decodes the (mapped) archive a batch of whole checksum
//! chunks at a time, checking each chunk's CRC right after the chunk is decoded, from cache
//! (unless `--no-verify`): the one verification pass. Into a file, the temporary file is given
//! its final length with its blocks reserved (`posix_fallocate`, so a full disk is an error,
//! not a SIGBUS under the mapping) and each batch is decoded straight into a mapped window of
//! it, which is unmapped after the batch: no copy through a buffer, the pool's threads each
//! fill their own pages, and the mapping never holds more than one batch. (Measured on the
//! 256 MiB random walk: 0.7 s of CPU with `write(2)` from a buffer — 80 % of it the kernel's
//! copy — against 0.18 s.) Standard output gets one reused buffer per batch.
//!
//! The bytes are exactly those of the one-shot compressors (tests compare them).

use fzpack::par::{Parallel, RayonJoin};
use fzpack::szp::archive::{ArchiveReader, ArchiveWriter};
use fzpack::szp::{self, Config, Kernel, engine};

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

/// A writer's batch buffers, sized by the writer for batches of `per` blocks.
struct Buffers {
    per: usize,
    widths: Vec<u8>,
    payload: Vec<u8>,
    sums: Vec<u8>,
}

impl Buffers {
    fn new(w: &ArchiveWriter, per: usize) -> Buffers {
        Buffers {
            per,
            widths: vec![0u8; per],
            payload: vec![0u8; w.batch_payload_len(per)],
            sums: vec![0u8; w.batch_sums_len(per)],
        }
    }

    /// Encodes the next batch of `values` (from value `w.values()` on) on the pool.
    fn batch<T: Wrap>(
        &mut self,
        w: &mut ArchiveWriter,
        par: &Parallel,
        values: &[T],
    ) -> Result<szp::archive::Batch, szp::Error> {
        let bs = w.plan().block_size.max(1) as usize;
        let v0 = w.values();
        let v1 = v0.saturating_add(self.per * bs).min(values.len());
        let input = &values[v0..v1];
        let join = RayonJoin::for_job(par, size_of_val(input));
        let (ws, ps, ss) = (&mut self.widths, &mut self.payload, &mut self.sums);
        par.install(|| w.batch(&join, input, ws, ps, ss))
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
    let begin = || ArchiveWriter::begin(path, &plan, max_abs);
    let mut w = begin();
    let per = w.batch_blocks(batch_bytes()).min(plan.blocks().max(1));
    let mut buf = Buffers::new(&w, per);
    let mut sums = vec![0u8; plan.sums_len()];
    let mut keep = |b: &szp::archive::Batch, buf: &Buffers| {
        sums[b.sums_pos..b.sums_pos + b.sums_len].copy_from_slice(&buf.sums[..b.sums_len]);
    };
    if out.is_stdout() {
        // Pass 1: the width table and the CRCs (every error surfaces here).
        let mut table = vec![0u8; plan.blocks()];
        while w.values() < values.len() {
            let b = buf.batch(&mut w, par, values).map_err(&err)?;
            let at = b.widths_at - szp::HEADER_LEN;
            table[at..at + b.blocks].copy_from_slice(&buf.widths[..b.blocks]);
            keep(&b, &buf);
        }
        let frame = w.finish().map_err(&err)?;
        out.write_all(&frame.header)?;
        out.write_all(&table)?;
        drop(table);
        // Pass 2: the payload.
        let mut w = begin();
        while w.values() < values.len() {
            let b = buf.batch(&mut w, par, values).map_err(&err)?;
            out.write_all(&buf.payload[..b.payload_len])?;
        }
        out.write_all(&sums)?;
        return out.write_all(&extension(&w, values, &err)?);
    }
    let at = w.payload_at() as u64;
    while w.values() < values.len() {
        let b = buf.batch(&mut w, par, values).map_err(&err)?;
        out.write_at(b.widths_at as u64, &buf.widths[..b.blocks])?;
        out.write_at(at + b.payload_pos as u64, &buf.payload[..b.payload_len])?;
        keep(&b, &buf);
    }
    let frame = w.finish().map_err(&err)?;
    out.write_at(frame.sums_at as u64, &sums)?;
    out.write_at(frame.len as u64, &extension(&w, values, &err)?)?;
    out.write_at(0, &frame.header)?;
    Ok(())
}

/// The archive's extension (format 3: the shape and the missing values of `values`, whose
/// blocks hold stand-ins; empty for a version 2 archive), which follows the chunk CRCs.
fn extension<T: Wrap>(
    w: &ArchiveWriter,
    values: &[T],
    err: impl Fn(szp::Error) -> Fail,
) -> Result<Vec<u8>, Fail> {
    let mut x = vec![0u8; w.extension_len(values).map_err(&err)?];
    w.write_extension(values, &mut x).map_err(&err)?;
    Ok(x)
}

/// Decodes the SZp archive `bytes` to `out`, a batch of whole checksum chunks at a time,
/// through the core's [`ArchiveReader`]: under [`szp::Verify::Checksums`] every chunk's CRC is
/// checked once, right after the chunk is decoded (the only verification pass); every
/// structural check runs either way.
pub fn decompress<T: Wrap>(
    bytes: &[u8],
    par: &Parallel,
    verify: szp::Verify,
    out: &mut Output,
    err: impl Fn(szp::Error) -> Fail,
    mut write: impl FnMut(&mut Output, &[T]) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let mut r = ArchiveReader::new(Kernel::best(), bytes, verify).map_err(&err)?;
    if r.header().dtype != T::TYPE {
        return Err(err(szp::Error::DTypeMismatch));
    }
    let n = r.view().n;
    let per = r.batch_blocks(batch_bytes());
    // A file on a little-endian machine: decode straight into the output's pages, a mapped
    // window per batch (no copy through a buffer, and every thread writes its own pages).
    // Elsewhere (standard output) a batch goes through one reused buffer.
    let direct = !out.is_stdout() && cfg!(target_endian = "little");
    let mut buf: Vec<T> = Vec::new();
    // The values follow what is already written (e.g. a .npy header, padded to 64 bytes so
    // the mapped values stay aligned).
    let base = if direct { out.written() } else { 0 };
    if direct {
        out.reserve(base.saturating_add((n as u64).saturating_mul(T::BYTES as u64)))?;
    } else {
        buf = vec![T::ZERO; r.batch_len(per)];
    }
    let mut v0 = 0usize;
    while !r.is_done() {
        let vals = r.batch_len(per);
        let decode = |r: &mut ArchiveReader<'_>, o: &mut [T]| {
            let join = RayonJoin::for_job(par, size_of_val(o));
            par.install(|| r.batch(&join, per, o)).map_err(&err)
        };
        if direct && vals > 0 {
            let mut win = out.map(base + (v0 * T::BYTES) as u64, vals * T::BYTES)?;
            let o: &mut [T] = bytemuck::try_cast_slice_mut(&mut win[..])
                .map_err(|_| err(szp::Error::Corrupt("unaligned output mapping")))?;
            decode(&mut r, o)?;
        } else {
            let o = &mut buf[..vals];
            decode(&mut r, o)?;
            if !direct {
                write(out, o)?;
            }
        }
        v0 += vals;
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
    let mut w = ArchiveWriter::open::<T>(Kernel::best(), cfg).map_err(&err)?;
    let bs = w.plan().block_size.max(1) as usize;
    let per = w.batch_blocks(batch_bytes());
    let mut raw = vec![T::ZERO; per * bs];
    let mut buf = Buffers::new(&w, per);
    let (mut sp_w, mut sp_p, mut sp_s) = (spool(spool_dir)?, spool(spool_dir)?, spool(spool_dir)?);
    let spool_fail = |e: std::io::Error| {
        Fail::new(
            Kind::Io,
            format!("cannot write a spool file in {}: {e}", spool_dir.display()),
        )
    };
    let mut n = 0usize;
    loop {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut raw[..]);
        let want = bytes.len();
        let got =
            fill(src, bytes).map_err(|e| Fail::new(Kind::Io, format!("cannot read {nm}: {e}")))?;
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
        // The open writer validates the window (finite, |x| <= max_abs, levels in range) and
        // names global element indices.
        let join = RayonJoin::for_job(par, size_of_val(vals));
        let (ws, ps, ss) = (&mut buf.widths, &mut buf.payload, &mut buf.sums);
        let b = par
            .install(|| w.batch(&join, vals, ws, ps, ss))
            .map_err(&err)?;
        use std::io::Write;
        sp_w.write_all(&buf.widths[..b.blocks])
            .map_err(spool_fail)?;
        sp_p.write_all(&buf.payload[..b.payload_len])
            .map_err(spool_fail)?;
        sp_s.write_all(&buf.sums[..b.sums_len])
            .map_err(spool_fail)?;
        n += k;
        if got < want {
            break;
        }
    }
    let frame = w.finish().map_err(&err)?;
    out.write_all(&frame.header)?;
    for sp in [&mut sp_w, &mut sp_p, &mut sp_s] {
        out.copy_from(sp)?;
    }
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `decompress` verifies through the archive reader on its own (the container check no
    /// longer reads the CRCs): a flipped payload byte is a checksum error under
    /// `Verify::Checksums`, and decodes under `Verify::Skip`; into a file and to a buffer.
    #[test]
    fn decompress_rejects_a_corrupted_chunk_by_itself() {
        let x: Vec<f32> = (0..50_000)
            .map(|i| (i as f32 * 0.01).cos() * 10.0)
            .collect();
        let cfg = Config::abs(1e-3);
        let par = Parallel::new();
        let (plan, m) = engine::plan_on(Kernel::Scalar, &engine::Serial, &x, &cfg).unwrap();
        let mut a = vec![0u8; engine::worst_len(&plan, m)];
        let len = engine::compress_on(Kernel::Scalar, &engine::Serial, &x, &cfg, &mut a).unwrap();
        a.truncate(len);
        let mut bad = a.clone();
        let at = plan.payload_offset() + 40;
        bad[at] ^= 0x20;
        let dir = tempfile::tempdir().unwrap();
        let run = |bytes: &[u8], verify, name: &str| {
            let mut out = Output::create(&dir.path().join(name), false, &[]).unwrap();
            let mut got = Vec::new();
            let r = decompress::<f32>(bytes, &par, verify, &mut out, szp_fail(name), |_, v| {
                got.extend_from_slice(v);
                Ok(())
            });
            r.map(|()| out.written())
        };
        assert!(run(&a, szp::Verify::Checksums, "good").is_ok());
        let e = run(&bad, szp::Verify::Checksums, "bad").err().unwrap();
        assert!(e.to_string().contains("checksum"), "{e}");
        assert!(run(&bad, szp::Verify::Skip, "skip").is_ok());
        assert!(run(&a[..a.len() - 1], szp::Verify::Skip, "short").is_err());
    }
}
