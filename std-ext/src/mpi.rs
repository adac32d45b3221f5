//! Compressed MPI collectives (feature `mpi`, rsmpi over the system MPI): SZp archives travel
//! instead of raw floats, and reductions add in the compressed domain ([`crate::ops`]), as
//! hZCCL does.
//!
//! * [`allreduce_sum`]: ring reduce-scatter then ring allgather of per-chunk archives. Every
//!   rank compresses its data as `R` chunks on one shared grid (ABS bound `eb`, `max_abs` =
//!   the global `max|x|`, agreed first), then in `R − 1` steps passes a running chunk sum to
//!   its right neighbour, adding its own chunk archive to what it receives without
//!   decompressing; after the allgather every rank holds the same `R` archives, byte for byte,
//!   and decodes them. **Bound:** every element of the result is within `R · eb` of the exact
//!   sum of the ranks' inputs (each chunk sum is an archive whose recorded bound is
//!   `R · eb`, checked by the compressed-domain add; strict promise of `docs/szp-archive.md`).
//!   The result is **identical on every rank**.
//! * [`bcast`]: the root compresses, everyone decodes the same bytes (bound `eb`).
//! * [`allgather`]: every rank's data compressed, gathered and decoded everywhere, in rank
//!   order (bound `eb` per element).
//!
//! Errors never leave a rank waiting where it can be avoided: before any data moves, the ranks
//! exchange a fixed-size status record (length, dtype, `max|x|`, local error text), so
//! mismatched lengths ([`Error::InvalidArgument`]) and a rank whose input fails to compress
//! (its message, as [`Error::Io`] on the other ranks, its own error on itself) are reported by
//! **every** rank; during the ring a rank that fails (e.g. a level overflow of the sum) keeps
//! the protocol going with error frames, so every rank finishes its sends and receives and
//! returns the error. A rank that dies outright is MPI's matter: with the default error handler
//! (`MPI_ERRORS_ARE_FATAL`) `mpirun` aborts the job rather than hang.

use mpi::datatype::PartitionMut;
use mpi::traits::*;

use crate::element::Element;
use crate::szp::{self, Config, Mode};
use crate::{Error, Result, ops};

/// Bytes of the status record every rank contributes before a collective.
const RECORD: usize = 256;
const MSG: usize = RECORD - 24;

struct Status {
    n: u64,
    max_abs: f64,
    dtype: u8,
    err: Option<String>,
}

fn record(s: &Status) -> [u8; RECORD] {
    let mut r = [0u8; RECORD];
    r[0..8].copy_from_slice(&s.n.to_le_bytes());
    r[8..16].copy_from_slice(&s.max_abs.to_le_bytes());
    r[16] = s.dtype;
    if let Some(e) = &s.err {
        r[17] = 1;
        let b = e.as_bytes();
        let k = b.len().min(MSG);
        r[18..20].copy_from_slice(&(k as u16).to_le_bytes());
        r[24..24 + k].copy_from_slice(&b[..k]);
    }
    r
}

fn unrecord(r: &[u8]) -> Status {
    let u64_at = |o: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&r[o..o + 8]);
        u64::from_le_bytes(b)
    };
    let err = (r[17] != 0).then(|| {
        let k = usize::from(u16::from_le_bytes([r[18], r[19]])).min(MSG);
        String::from_utf8_lossy(&r[24..24 + k]).into_owned()
    });
    Status {
        n: u64_at(0),
        max_abs: f64::from_bits(u64_at(8)),
        dtype: r[16],
        err,
    }
}

/// Exchanges status records; returns every rank's, or the agreed error (the same on every rank
/// except that a failing rank returns its own `local` error).
fn agree<C: Communicator>(comm: &C, mine: &Status, local: Option<Error>) -> Result<Vec<Status>> {
    let size = comm.size() as usize;
    let mut all = vec![0u8; RECORD * size];
    comm.all_gather_into(&record(mine)[..], &mut all[..]);
    let st: Vec<Status> = all.chunks_exact(RECORD).map(unrecord).collect();
    if let Some(e) = local {
        return Err(e);
    }
    if let Some((r, s)) = st.iter().enumerate().find(|(_, s)| s.err.is_some()) {
        return Err(remote(r, s.err.as_deref().unwrap_or("")));
    }
    Ok(st)
}

fn remote(rank: usize, msg: &str) -> Error {
    Error::Io(std::io::Error::other(format!(
        "MPI rank {rank} failed: {msg}"
    )))
}

/// The shared grid of a collective: ABS `eb`, `max_abs` of the caller's config or the global
/// maximum.
fn grid(cfg: &Config, global_max: f64) -> Result<Config> {
    if cfg.mode != Mode::Abs || !cfg.strict {
        return Err(Error::InvalidArgument(
            "compressed collectives need a strict ABS config (Config::abs)".into(),
        ));
    }
    // The collectives' archives use the stage layout: the ops' 256-block batch kernel runs on
    // it uncut (layout 1 cuts runs at every head group), and the archives never leave the job.
    Ok(Config {
        max_abs: Some(cfg.max_abs.unwrap_or(global_max)),
        layout: fzpack_core::szp::Layout::Fzgm,
        ..*cfg
    })
}

fn local_max<T: Element>(data: &[T]) -> std::result::Result<f64, Error> {
    let mut m = 0f64;
    for (index, x) in data.iter().enumerate() {
        let v = x.to_f64();
        if !v.is_finite() {
            return Err(Error::NonFinite { index });
        }
        m = m.max(v.abs());
    }
    Ok(m)
}

/// Range of chunk `c` of `R` over `n` values.
fn chunk(n: usize, r: usize, c: usize) -> std::ops::Range<usize> {
    (c * n / r)..((c + 1) * n / r)
}

/// Ring frame: tag 0 + archive, or tag 1 + error text.
fn ok_frame(archive: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(archive.len() + 1);
    f.push(0);
    f.extend_from_slice(archive);
    f
}

fn err_frame(rank: usize, msg: &str) -> Vec<u8> {
    let mut f = vec![1u8];
    f.extend_from_slice(&(rank as u32).to_le_bytes());
    f.extend_from_slice(msg.as_bytes());
    f
}

/// One ring step: send `frame` to the right neighbour, receive the left neighbour's frame.
fn shift<C: Communicator>(comm: &C, frame: &[u8]) -> Vec<u8> {
    let (rank, size) = (comm.rank(), comm.size());
    let right = comm.process_at_rank((rank + 1) % size);
    let left = comm.process_at_rank((rank + size - 1) % size);
    mpi::request::scope(|scope| {
        let req = right.immediate_send(scope, frame);
        let (got, _) = left.receive_vec::<u8>();
        req.wait_without_status();
        got
    })
}

/// Decodes a ring frame: the archive, or the error it carries.
fn frame_archive(f: Vec<u8>) -> std::result::Result<Vec<u8>, (usize, String)> {
    match f.split_first() {
        Some((0, a)) => Ok(a.to_vec()),
        Some((_, rest)) if rest.len() >= 4 => {
            let r = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            Err((r, String::from_utf8_lossy(&rest[4..]).into_owned()))
        }
        _ => Err((usize::MAX, "malformed ring frame".into())),
    }
}

/// [`allreduce_sum_with`] with `Config::abs(eb)` (block size 128, `max_abs` agreed globally).
pub fn allreduce_sum<T: Element, C: Communicator>(comm: &C, data: &[T], eb: f64) -> Result<Vec<T>> {
    allreduce_sum_with(comm, data, &Config::abs(eb))
}

/// Compressed-domain allreduce (sum) with a strict ABS `cfg` (its `max_abs`, if set, must hold
/// on every rank; else the global `max|x|` is agreed). Every rank passes the same number of
/// values and gets the same result, within `R · cfg.error_bound` of the exact sum per element.
pub fn allreduce_sum_with<T: Element, C: Communicator>(
    comm: &C,
    data: &[T],
    cfg: &Config,
) -> Result<Vec<T>> {
    let (rank, size) = (comm.rank() as usize, comm.size() as usize);
    let local = local_max(data);
    let mine = Status {
        n: data.len() as u64,
        max_abs: *local.as_ref().unwrap_or(&0.0),
        dtype: szp::DType::from(T::TYPE).code(),
        err: local.as_ref().err().map(|e| e.to_string()),
    };
    let st = agree(comm, &mine, local.err())?;
    check_lengths(&st)?;
    let global = st.iter().map(|s| s.max_abs).fold(0.0, f64::max);
    let g = grid(cfg, global);
    // Compress my chunks (a config error is the same on every rank; report it uniformly).
    let n = data.len();
    let chunks: Result<Vec<Vec<u8>>> = g.and_then(|g| {
        (0..size)
            .map(|c| szp::compress_vec(&data[chunk(n, size, c)], &g))
            .collect()
    });
    let mine = Status {
        n: n as u64,
        max_abs: global,
        dtype: mine.dtype,
        err: chunks.as_ref().err().map(|e| e.to_string()),
    };
    let chunks = match (agree(comm, &mine, None), chunks) {
        (Ok(_), Ok(c)) => c,
        (_, Err(e)) => return Err(e),
        (Err(e), Ok(_)) => return Err(e),
    };
    if size == 1 {
        return szp::decompress_vec(&chunks[0]);
    }
    // Reduce-scatter: at step s, send the running sum of chunk (rank − s) mod R, receive
    // chunk (rank − s − 1) mod R and add my own archive of it.
    let mut failed: Option<(usize, String)> = None;
    let mut own_err: Option<Error> = None;
    let mut acc = chunks[rank].clone();
    for s in 0..size - 1 {
        let frame = match &failed {
            None => ok_frame(&acc),
            Some((r, m)) => err_frame(*r, m),
        };
        let got = shift(comm, &frame);
        if failed.is_some() {
            continue;
        }
        let c = (rank + 2 * size - s - 1) % size;
        match frame_archive(got) {
            Ok(a) => match ops::add(&a, &chunks[c]) {
                Ok(sum) => acc = sum,
                Err(e) => {
                    failed = Some((rank, e.to_string()));
                    own_err = Some(e);
                }
            },
            Err(e) => failed = Some(e),
        }
    }
    // Now `acc` is the total of chunk (rank + 1) mod R. Allgather by ring.
    let mut finals: Vec<Vec<u8>> = vec![Vec::new(); size];
    let own = (rank + 1) % size;
    finals[own] = acc;
    let mut carry = own;
    for _ in 0..size - 1 {
        let frame = match &failed {
            None => ok_frame(&finals[carry]),
            Some((r, m)) => err_frame(*r, m),
        };
        let got = shift(comm, &frame);
        carry = (carry + size - 1) % size;
        if failed.is_none() {
            match frame_archive(got) {
                Ok(a) => finals[carry] = a,
                Err(e) => failed = Some(e),
            }
        }
    }
    if let Some((r, m)) = failed {
        return Err(match own_err {
            Some(e) => e,
            None => remote(r, &m),
        });
    }
    let mut out = Vec::with_capacity(n);
    for a in &finals {
        out.extend(szp::decompress_vec::<T>(a)?);
    }
    Ok(out)
}

fn check_lengths(st: &[Status]) -> Result<()> {
    let n0 = st.first().map_or(0, |s| s.n);
    let d0 = st.first().map_or(0, |s| s.dtype);
    if let Some((r, s)) = st.iter().enumerate().find(|(_, s)| s.n != n0) {
        return Err(Error::InvalidArgument(format!(
            "allreduce: rank {r} passes {} values, rank 0 passes {n0}",
            s.n
        )));
    }
    if let Some((r, _)) = st.iter().enumerate().find(|(_, s)| s.dtype != d0) {
        return Err(Error::InvalidArgument(format!(
            "allreduce: rank {r} passes another element type than rank 0"
        )));
    }
    Ok(())
}

/// Compressed broadcast: `root` compresses `data` with `Config::abs(eb)`; every rank returns
/// the decoded values (identical everywhere, within `eb` of the root's data). Non-root ranks'
/// `data` is ignored.
pub fn bcast<T: Element, C: Communicator>(
    comm: &C,
    root: i32,
    data: &[T],
    eb: f64,
) -> Result<Vec<T>> {
    let is_root = comm.rank() == root;
    let archive = if is_root {
        szp::compress_vec(data, &Config::abs(eb))
    } else {
        Ok(Vec::new())
    };
    // Header: status byte + length, then the bytes (or the error text).
    let payload: Vec<u8> = match &archive {
        Ok(a) => a.clone(),
        Err(e) => e.to_string().into_bytes(),
    };
    let mut head = [0u64; 2];
    if is_root {
        head = [u64::from(archive.is_err()), payload.len() as u64];
    }
    let rp = comm.process_at_rank(root);
    rp.broadcast_into(&mut head[..]);
    let mut buf = if is_root {
        payload
    } else {
        vec![0u8; head[1] as usize]
    };
    rp.broadcast_into(&mut buf[..]);
    if head[0] != 0 {
        return match archive {
            Err(e) => Err(e),
            Ok(_) => Err(remote(root as usize, &String::from_utf8_lossy(&buf))),
        };
    }
    szp::decompress_vec(&buf)
}

/// Compressed allgather: every rank's `data` compressed with `Config::abs(eb)`, gathered, and
/// decoded everywhere in rank order (ranks may pass different lengths).
pub fn allgather<T: Element, C: Communicator>(comm: &C, data: &[T], eb: f64) -> Result<Vec<T>> {
    let size = comm.size() as usize;
    let archive = szp::compress_vec(data, &Config::abs(eb));
    let mine = Status {
        n: archive.as_ref().map_or(0, |a| a.len() as u64),
        max_abs: 0.0,
        dtype: szp::DType::from(T::TYPE).code(),
        err: archive.as_ref().err().map(|e| e.to_string()),
    };
    let (archive, local) = match archive {
        Ok(a) => (a, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let st = agree(comm, &mine, local)?;
    let counts: Vec<i32> = st
        .iter()
        .map(|s| i32::try_from(s.n))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::InvalidArgument("allgather: an archive above 2 GiB".into()))?;
    let mut displs = Vec::with_capacity(size);
    let mut total = 0i64;
    for &c in &counts {
        displs.push(
            i32::try_from(total)
                .map_err(|_| Error::InvalidArgument("allgather: over 2 GiB in all".into()))?,
        );
        total += i64::from(c);
    }
    let mut all = vec![0u8; total as usize];
    {
        let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
        comm.all_gather_varcount_into(&archive[..], &mut part);
    }
    let mut out = Vec::new();
    for (c, d) in counts.iter().zip(&displs) {
        let a = &all[*d as usize..*d as usize + *c as usize];
        out.extend(szp::decompress_vec::<T>(a)?);
    }
    Ok(out)
}
