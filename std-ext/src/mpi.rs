//! Compressed MPI collectives (feature `mpi`, rsmpi over the system MPI): SZp archives travel
//! instead of raw floats, and reductions add in the compressed domain ([`crate::ops`]), as
//! hZCCL does.
//!
//! Every collective here is one **pipelined, chunked** schedule: each rank's part of the data is
//! cut into chunks of [`Pipeline::chunk`] values, every chunk is its own SZp archive, and the
//! messages are non-blocking (`MPI_Isend` / `MPI_Irecv`, all receives posted up front), so while
//! chunk `k` is on the wire the rank compresses, adds or decodes chunk `k + 1` (and, waiting for
//! a message, decodes the final chunks it already holds). The codec work runs on the rayon pool
//! when it has more than one thread (independent chunks side by side); with one core per rank it
//! runs on the calling thread between MPI progress calls.
//!
//! * [`allreduce_sum`]: ring reduce-scatter then ring allgather of chunk archives. Every rank
//!   compresses its data on one shared grid (ABS bound `eb`; the global `max|x|` is agreed first
//!   and declared as `max_abs` where the bound's stated grid does not cover it); in `R − 1` steps each rank passes running chunk sums to its right neighbour,
//!   adding its own chunk archive to each one it receives without decompressing (no float round
//!   trip at any step); after the allgather every rank holds the same archives, byte for byte,
//!   and decodes each once. **Bound:** every element of the result is within `R · eb` of the
//!   exact sum of the ranks' inputs (each chunk sum is an archive whose recorded bound is
//!   `R · eb`, checked by the compressed-domain add; strict promise of `docs/szp-archive.md`).
//!   The result is **identical on every rank**.
//! * [`reduce_scatter_sum`]: the reduce-scatter half: rank `r` gets segment `r` of the sum
//!   (values `r·n/R .. (r+1)·n/R`), same bound `R · eb`.
//! * [`allgather`]: every rank's data compressed (bound `eb`), passed round the ring and decoded
//!   everywhere in rank order (ranks may pass different lengths); identical on every rank.
//! * [`bcast`]: the root compresses, the chunks travel down a pipelined chain, everyone
//!   (the root included) decodes the same bytes (bound `eb`).
//!
//! The pipeline's messages use tag `0x7a70` on the caller's communicator; point-to-point traffic
//! of the caller with that tag must not be in flight during a collective.
//!
//! Errors never leave a rank waiting where it can be avoided: before any data moves, the ranks
//! exchange a fixed-size status record (length, dtype, `max|x|`, chunk size, local error text),
//! so mismatched lengths or chunk sizes ([`Error::InvalidArgument`]) and a rank whose input is
//! not finite (its own error on itself, its message as [`Error::Io`] on the other ranks) are
//! reported by **every** rank; during the pipeline a rank that fails (a level overflow of a sum,
//! a chunk that fails to compress) sends error frames in place of every message it still owes,
//! and a rank that receives one forwards it the same way, so every rank finishes its sends and
//! receives and returns the error. A rank that dies outright is MPI's matter: with the default
//! error handler (`MPI_ERRORS_ARE_FATAL`) `mpirun` aborts the job rather than hang.

use std::ops::Range;

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::traits::*;

use crate::element::Element;
use crate::szp::{self, Config, Mode};
use crate::{Error, Result, ops};

/// Values per pipeline chunk when the caller does not choose (1 MiB of f32). Chosen by
/// measurement on a shaped link (`MPI_LINK_CHUNKS="65536 131072 262144 524288"
/// scripts/mpi-link.sh`, 2 ranks, etopo5 field): compressed times were flat within the noise
/// of the measuring machine from 64 Ki to 512 Ki values; 256 Ki keeps a chunk's codec work
/// (about a millisecond on one core) well under one chunk's transfer at 2.5–10 Gb/s, leaves
/// a 64-thread rank several chunks per ring step of a 64 MiB segment, and keeps per-message
/// and per-archive costs small.
pub const DEFAULT_CHUNK: usize = 1 << 18;

/// How the collectives cut the data into pipeline chunks. Every rank must pass the same value
/// (checked: a mismatch is [`Error::InvalidArgument`] on every rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipeline {
    /// Values per chunk (at least 1; each chunk is one archive and one message per ring step).
    pub chunk: usize,
}

impl Default for Pipeline {
    fn default() -> Self {
        Pipeline {
            chunk: DEFAULT_CHUNK,
        }
    }
}

/// Bytes of the status record every rank contributes before a collective.
const RECORD: usize = 256;
const MSG: usize = RECORD - 32;

/// The tag of every pipeline message (messages between two ranks match in posting order).
const TAG: i32 = 0x7a70;

/// An error frame: this magic (never the start of an archive, whose magic is `FZSZ`), the
/// failing rank (u32 LE) and up to [`ERR_TEXT`] bytes of its message.
const ERR_MAGIC: [u8; 4] = [0xFF, b'F', b'Z', b'E'];
const ERR_TEXT: usize = 200;
const ERR_FRAME: usize = 8 + ERR_TEXT;

struct Status {
    n: u64,
    max_abs: f64,
    dtype: u8,
    chunk: u64,
    err: Option<String>,
}

fn record(s: &Status) -> [u8; RECORD] {
    let mut r = [0u8; RECORD];
    r[0..8].copy_from_slice(&s.n.to_le_bytes());
    r[8..16].copy_from_slice(&s.max_abs.to_le_bytes());
    r[16] = s.dtype;
    r[24..32].copy_from_slice(&s.chunk.to_le_bytes());
    if let Some(e) = &s.err {
        r[17] = 1;
        let b = e.as_bytes();
        let k = b.len().min(MSG);
        r[18..20].copy_from_slice(&(k as u16).to_le_bytes());
        r[32..32 + k].copy_from_slice(&b[..k]);
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
        String::from_utf8_lossy(&r[32..32 + k]).into_owned()
    });
    Status {
        n: u64_at(0),
        max_abs: f64::from_bits(u64_at(8)),
        dtype: r[16],
        chunk: u64_at(24),
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

/// The shared grid of a reduction: ABS `eb`, and the caller's `max_abs`, else none where the
/// stated grid already covers the global `max|x|` (every chunk of every rank then gets the one
/// grid of `eb` and the dtype, and the encoder keeps its vectorized statistics pass, which a
/// declared `max_abs` turns off), else the global maximum.
fn grid(cfg: &Config, dtype: szp::DType, global_max: f64) -> Result<Config> {
    if cfg.mode != Mode::Abs || !cfg.strict {
        return Err(Error::InvalidArgument(
            "compressed collectives need a strict ABS config (Config::abs)".into(),
        ));
    }
    let stated = szp::blocks::grid_magnitude(dtype, cfg.error_bound, 0.0);
    let shared = global_max <= stated
        && szp::blocks::grid_magnitude(dtype, cfg.error_bound, global_max) == stated;
    let max_abs = match cfg.max_abs {
        Some(m) => Some(m),
        None if shared => None,
        None => Some(global_max),
    };
    // The collectives' archives use the stage layout: the ops' 256-block batch kernel runs on
    // it uncut (layout 1 cuts runs at every head group), and the archives never leave the job.
    Ok(Config {
        max_abs,
        layout: fzpack_core::szp::Layout::Fzgm,
        ..*cfg
    })
}

fn local_max<T: Element>(data: &[T]) -> std::result::Result<f64, Error> {
    if let Some(m) = T::max_abs_finite(data) {
        return Ok(m.to_f64());
    }
    let index = data
        .iter()
        .position(|x| !x.to_f64().is_finite())
        .unwrap_or(0);
    Err(Error::NonFinite { index })
}

/// Range of part `c` of `r` over `n` values.
fn part(n: usize, r: usize, c: usize) -> Range<usize> {
    (c * n / r)..((c + 1) * n / r)
}

/// `range` cut into pipeline chunks of at most `chunk` values (one empty chunk for an empty
/// range, so every segment has at least one archive).
fn chunks(range: Range<usize>, chunk: usize) -> Vec<Range<usize>> {
    let len = range.len();
    let k = len.div_ceil(chunk.max(1)).max(1);
    (0..k)
        .map(|i| range.start + i * len / k..range.start + (i + 1) * len / k)
        .collect()
}

fn check_chunk(p: &Pipeline) -> Result<u64> {
    if p.chunk == 0 {
        return Err(Error::InvalidArgument(
            "pipeline chunk must be at least 1 value".into(),
        ));
    }
    Ok(p.chunk as u64)
}

fn check_lengths(st: &[Status]) -> Result<()> {
    let n0 = st.first().map_or(0, |s| s.n);
    let d0 = st.first().map_or(0, |s| s.dtype);
    let c0 = st.first().map_or(0, |s| s.chunk);
    if let Some((r, s)) = st.iter().enumerate().find(|(_, s)| s.n != n0) {
        return Err(Error::InvalidArgument(format!(
            "allreduce: rank {r} passes {} values, rank 0 passes {n0}",
            s.n
        )));
    }
    check_common(st, d0, c0)
}

/// Element type and chunk size the same on every rank.
fn check_common(st: &[Status], d0: u8, c0: u64) -> Result<()> {
    if let Some((r, _)) = st.iter().enumerate().find(|(_, s)| s.dtype != d0) {
        return Err(Error::InvalidArgument(format!(
            "collective: rank {r} passes another element type than rank 0"
        )));
    }
    if let Some((r, s)) = st.iter().enumerate().find(|(_, s)| s.chunk != c0) {
        return Err(Error::InvalidArgument(format!(
            "collective: rank {r} uses pipeline chunks of {} values, rank 0 of {c0}",
            s.chunk
        )));
    }
    Ok(())
}

/// Non-blocking messages that own their buffers (the FFI under the pipeline: rsmpi's scoped
/// requests tie a buffer to a lexical scope, and the pipeline keeps requests of many steps in
/// flight at once).
mod wire {
    use super::{Error, Result, TAG, ffi};
    use std::mem::MaybeUninit;

    /// One `MPI_Isend` or `MPI_Irecv` and its buffer. The buffer is a heap block owned here:
    /// it does not move when the `Msg` does, and it is neither written (send) nor read or
    /// freed (receive) by Rust code until the request has completed; dropping an incomplete
    /// `Msg` waits for it first.
    pub(super) struct Msg {
        buf: Vec<u8>,
        req: ffi::MPI_Request,
        /// `Some(received length)` once complete.
        done: Option<usize>,
    }

    /// `MPI_Isend` or `MPI_Irecv`: buffer, count, type, peer, tag, communicator, request.
    type Start<P> = unsafe extern "C" fn(
        P,
        i32,
        ffi::MPI_Datatype,
        i32,
        i32,
        ffi::MPI_Comm,
        *mut ffi::MPI_Request,
    ) -> i32;

    fn count(len: usize) -> Result<i32> {
        i32::try_from(len)
            .map_err(|_| Error::InvalidArgument("collective: a message above 2 GiB".into()))
    }

    fn null() -> ffi::MPI_Request {
        // SAFETY: an immutable extern static that rsmpi's C shim sets to MPI_REQUEST_NULL.
        unsafe { ffi::RSMPI_REQUEST_NULL }
    }

    fn failed(what: &str, rc: i32) -> Error {
        Error::Io(std::io::Error::other(format!(
            "{what} returned MPI error {rc}"
        )))
    }

    impl Msg {
        /// Starts sending `buf` to `peer`.
        pub(super) fn isend(comm: ffi::MPI_Comm, peer: i32, buf: Vec<u8>) -> Result<Msg> {
            // MPI_Isend only reads the block, which the Msg keeps unwritten until the request
            // completes (`test`/`wait`, or the wait in Drop).
            Msg::post(comm, peer, buf, "MPI_Isend", ffi::MPI_Isend, |b| {
                b.as_ptr().cast()
            })
        }

        /// Posts a receive of at most `cap` bytes from `peer`.
        pub(super) fn irecv(comm: ffi::MPI_Comm, peer: i32, cap: usize) -> Result<Msg> {
            // Zeroed lazily by the allocator: only the pages a message fills are touched.
            // MPI_Irecv writes the block, which the Msg does not read, reallocate or free until
            // the request completes (`test`/`wait`, or the wait in Drop).
            Msg::post(
                comm,
                peer,
                vec![0u8; cap],
                "MPI_Irecv",
                ffi::MPI_Irecv,
                |b| b.as_mut_ptr().cast(),
            )
        }

        /// Starts the request `start` (`MPI_Isend` or `MPI_Irecv`, named `what` in an error)
        /// on all of `buf` (as the pointer `ptr` gives) with `peer`; `buf` moves into the
        /// returned Msg, its heap block unmoved.
        fn post<P>(
            comm: ffi::MPI_Comm,
            peer: i32,
            mut buf: Vec<u8>,
            what: &str,
            start: Start<P>,
            ptr: fn(&mut Vec<u8>) -> P,
        ) -> Result<Msg> {
            let n = count(buf.len())?;
            let mut req = null();
            let p = ptr(&mut buf);
            // `p` points at `buf`'s n bytes (MPI_UINT8_T), a heap block that the returned Msg
            // keeps alive (unmoved) until the request completes.
            // SAFETY: a live buffer of n bytes for the request's lifetime, and a live `comm`.
            let rc = unsafe { start(p, n, ffi::RSMPI_UINT8_T, peer, TAG, comm, &mut req) };
            if rc != 0 {
                return Err(failed(what, rc));
            }
            Ok(Msg {
                buf,
                req,
                done: None,
            })
        }

        fn finish(&mut self, st: &MaybeUninit<ffi::MPI_Status>) {
            let mut n = 0i32;
            // SAFETY: the request completed, so MPI filled `st`; MPI_Get_count only reads it.
            unsafe { ffi::MPI_Get_count(st.as_ptr(), ffi::RSMPI_UINT8_T, &mut n) };
            self.done = Some(usize::try_from(n).unwrap_or(0).min(self.buf.len()));
        }

        /// Drives MPI progress; true once this message is complete.
        pub(super) fn test(&mut self) -> bool {
            if self.done.is_some() {
                return true;
            }
            let mut flag = 0i32;
            let mut st = MaybeUninit::<ffi::MPI_Status>::uninit();
            // `req` is this Msg's active request (or null after completion, which MPI_Test
            // accepts); `st` is written by MPI when the request completes.
            // SAFETY: valid request, flag and status pointers for the duration of the call.
            unsafe { ffi::MPI_Test(&mut self.req, &mut flag, st.as_mut_ptr()) };
            if flag != 0 {
                self.finish(&st);
            }
            self.done.is_some()
        }

        /// Blocks until the message is complete.
        pub(super) fn wait(&mut self) {
            if self.done.is_some() {
                return;
            }
            let mut st = MaybeUninit::<ffi::MPI_Status>::uninit();
            // SAFETY: as in `test`; MPI_Wait returns with the request complete and `st` set.
            unsafe { ffi::MPI_Wait(&mut self.req, st.as_mut_ptr()) };
            self.finish(&st);
        }

        /// The received bytes (the buffer cut to the message length); waits first.
        pub(super) fn into_bytes(mut self) -> Vec<u8> {
            self.wait();
            let mut b = std::mem::take(&mut self.buf);
            b.truncate(self.done.unwrap_or(0));
            b
        }
    }

    impl Drop for Msg {
        fn drop(&mut self) {
            self.wait();
        }
    }
}

use wire::Msg;

/// A node of the pipeline's data flow: an archive that becomes available once.
enum Kind {
    /// My values `range` of the input, compressed on the collective's grid.
    Own(Range<usize>),
    /// A message from the left neighbour.
    Recv,
    /// Compressed-domain sum of two nodes (a received running sum and my own chunk).
    Add(usize, usize),
}

struct Node {
    kind: Kind,
    bytes: Option<Vec<u8>>,
    /// Consumers still to come (sends, adds, decodes); the bytes are freed at zero.
    uses: usize,
    /// Taken by a codec job (compress / add) or received.
    started: bool,
}

/// The schedule of one collective on one rank: nodes, the order of its sends and receives
/// (each to / from one neighbour), and which nodes are decoded into which output values.
#[derive(Default)]
struct Plan {
    nodes: Vec<Node>,
    /// (node, peer, capacity in bytes), in posting order.
    recvs: Vec<(usize, i32, usize)>,
    /// (node, peer), in sending order.
    sends: Vec<(usize, i32)>,
    /// (node, output values), decoded once each.
    finals: Vec<(usize, Range<usize>)>,
}

impl Plan {
    fn node(&mut self, kind: Kind) -> usize {
        self.nodes.push(Node {
            kind,
            bytes: None,
            uses: 0,
            started: false,
        });
        self.nodes.len() - 1
    }
    fn own(&mut self, r: Range<usize>) -> usize {
        self.node(Kind::Own(r))
    }
    /// A receive of an archive of `values` values (capacity for the worst case, or an error
    /// frame).
    fn recv(&mut self, peer: i32, values: usize, block: u32) -> Result<usize> {
        let cap = ops::max_output_len(values, block)
            .ok_or(Error::Szp(szp::Error::InvalidBlockSize))?
            .max(ERR_FRAME);
        let id = self.node(Kind::Recv);
        self.recvs.push((id, peer, cap));
        Ok(id)
    }
    fn add(&mut self, a: usize, b: usize) -> usize {
        self.nodes[a].uses += 1;
        self.nodes[b].uses += 1;
        self.node(Kind::Add(a, b))
    }
    fn send(&mut self, id: usize, peer: i32) {
        self.nodes[id].uses += 1;
        self.sends.push((id, peer));
    }
    fn decode(&mut self, id: usize, out: Range<usize>) {
        self.nodes[id].uses += 1;
        self.finals.push((id, out));
    }
}

fn err_frame(rank: usize, msg: &str) -> Vec<u8> {
    let mut f = ERR_MAGIC.to_vec();
    f.extend_from_slice(&(rank as u32).to_le_bytes());
    let b = msg.as_bytes();
    let mut k = b.len().min(ERR_TEXT);
    while !msg.is_char_boundary(k) {
        k -= 1;
    }
    f.extend_from_slice(&b[..k]);
    f
}

fn parse_err(f: &[u8]) -> Option<(usize, String)> {
    let rest = f.strip_prefix(&ERR_MAGIC[..])?;
    let r = rest.get(..4)?;
    let r = u32::from_le_bytes([r[0], r[1], r[2], r[3]]) as usize;
    Some((r, String::from_utf8_lossy(&rest[4..]).into_owned()))
}

/// Codec threads: the rayon pool's size (1 without the `rayon` feature).
fn threads() -> usize {
    #[cfg(feature = "rayon")]
    {
        rayon::current_num_threads().max(1)
    }
    #[cfg(not(feature = "rayon"))]
    {
        1
    }
}

/// One unit of codec work, run on the calling thread or side by side on the rayon pool.
enum Job<'a, T> {
    Compress(usize, &'a [T]),
    /// (node, running sum, my chunk, values per archive)
    Add(usize, &'a [u8], &'a [u8], usize),
    Decode(usize, &'a [u8], &'a mut [T]),
}

enum Done {
    /// A node's archive (compress or add), or its error.
    Node(usize, Result<Vec<u8>>),
    /// A final decoded (its index), or the decoder's error.
    Decoded(usize, Result<()>),
}

std::thread_local! {
    /// Per-thread worst-case output buffer of the compress and add jobs: the archive is written
    /// here and copied out at its exact length, so no job faults in a fresh worst-case
    /// allocation.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` on a scratch buffer of at least `cap` bytes; returns the first `len` bytes it wrote.
fn with_scratch(
    cap: usize,
    f: impl FnOnce(&mut [u8]) -> std::result::Result<usize, szp::Error>,
) -> Result<Vec<u8>> {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < cap {
            s.resize(cap, 0);
        }
        let len = f(&mut s[..cap])?;
        Ok(s[..len].to_vec())
    })
}

fn exec<T: Element>(job: Job<'_, T>, cfg: &Config) -> Done {
    match job {
        Job::Compress(id, src) => {
            let cap = szp::max_compressed_len(src.len(), cfg.block_size, T::TYPE)
                .ok_or(Error::Szp(szp::Error::InvalidBlockSize));
            Done::Node(
                id,
                cap.and_then(|cap| with_scratch(cap, |o| fzpack_core::szp::compress(src, cfg, o))),
            )
        }
        Job::Add(id, a, b, values) => {
            let cap = ops::max_output_len(values, cfg.block_size)
                .ok_or(Error::Szp(szp::Error::InvalidBlockSize));
            Done::Node(
                id,
                cap.and_then(|cap| with_scratch(cap, |o| fzpack_core::szp::ops::add(a, b, o))),
            )
        }
        Job::Decode(f, a, out) => {
            let want = out.len();
            let r = fzpack_core::szp::decompress(a, out)
                .map_err(Error::from)
                .and_then(|got| {
                    if got == want {
                        Ok(())
                    } else {
                        Err(Error::InvalidArgument(format!(
                            "collective: a chunk archive holds {got} values, {want} expected"
                        )))
                    }
                });
            Done::Decoded(f, r)
        }
    }
}

fn run_jobs<T: Element>(jobs: Vec<Job<'_, T>>, cfg: &Config) -> Vec<Done> {
    #[cfg(feature = "rayon")]
    if jobs.len() > 1 {
        use rayon::prelude::*;
        return jobs.into_par_iter().map(|j| exec(j, cfg)).collect();
    }
    jobs.into_iter().map(|j| exec(j, cfg)).collect()
}

/// Disjoint `ranges` of `out` as mutable slices, in the ranges' order.
fn split_out<'a, T>(mut out: &'a mut [T], ranges: &[Range<usize>]) -> Vec<Option<&'a mut [T]>> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| (ranges[i].start, ranges[i].end));
    let mut slots: Vec<Option<&'a mut [T]>> = (0..ranges.len()).map(|_| None).collect();
    let mut at = 0;
    for i in order {
        let r = &ranges[i];
        let rest = std::mem::take(&mut out);
        let (_, rest) = rest.split_at_mut(r.start - at);
        let (mine, rest) = rest.split_at_mut(r.len());
        slots[i] = Some(mine);
        out = rest;
        at = r.end;
    }
    slots
}

/// How far ahead of the first unfinished item the scheduler looks (per list).
const WINDOW: usize = 256;

/// Runs `plan` on this rank: compresses `src` chunks on `cfg`, exchanges and adds archives, and
/// decodes the finals into `out`. Every send and receive completes before it returns, whatever
/// fails.
fn run<T: Element>(
    comm: ffi::MPI_Comm,
    rank: usize,
    mut plan: Plan,
    src: &[T],
    cfg: &Config,
    out: &mut [T],
) -> Result<()> {
    let mut recv_of = vec![usize::MAX; plan.nodes.len()];
    let mut recvs: Vec<Option<Msg>> = Vec::with_capacity(plan.recvs.len());
    for (i, &(id, peer, cap)) in plan.recvs.iter().enumerate() {
        recv_of[id] = i;
        recvs.push(Some(Msg::irecv(comm, peer, cap)?));
    }
    let ranges: Vec<Range<usize>> = plan.finals.iter().map(|f| f.1.clone()).collect();
    let mut outs = split_out(out, &ranges);
    let owns: Vec<usize> = (0..plan.nodes.len())
        .filter(|&i| matches!(plan.nodes[i].kind, Kind::Own(_)))
        .collect();
    let adds: Vec<usize> = (0..plan.nodes.len())
        .filter(|&i| matches!(plan.nodes[i].kind, Kind::Add(..)))
        .collect();
    let mut decoded = vec![false; plan.finals.len()];
    let mut sends: Vec<Msg> = Vec::with_capacity(plan.sends.len());
    let (mut next_send, mut next_recv) = (0, 0);
    let (mut own_at, mut add_at, mut fin_at) = (0, 0, 0);
    let mut failed: Option<(usize, String)> = None;
    let mut own_err: Option<Error> = None;
    let mut decode_err: Option<Error> = None;
    let threads = threads();
    loop {
        // Receives complete in posting order (one neighbour, one tag): test the next few.
        let mut i = next_recv;
        while i < recvs.len() && i < next_recv + 8 {
            if let Some(m) = recvs[i].as_mut()
                && !m.test()
            {
                break;
            }
            if let Some(m) = recvs[i].take() {
                land(&mut plan, i, m, &mut failed);
            }
            i += 1;
        }
        while next_recv < recvs.len() && recvs[next_recv].is_none() {
            next_recv += 1;
        }
        // Every send whose archive is ready (or, after a failure, an error frame), in order.
        while let Some(&(id, peer)) = plan.sends.get(next_send) {
            let payload = match &failed {
                Some((r, m)) => err_frame(*r, m),
                None => {
                    let node = &mut plan.nodes[id];
                    let Some(b) = node.bytes.as_ref() else { break };
                    node.uses -= 1;
                    if node.uses == 0 {
                        node.bytes.take().unwrap_or_default()
                    } else {
                        b.clone()
                    }
                }
            };
            sends.push(Msg::isend(comm, peer, payload)?);
            next_send += 1;
        }
        for s in sends.iter_mut().rev().take(4) {
            s.test();
        }
        let idle_done = next_send == plan.sends.len() && next_recv == recvs.len();
        // Codec work: adds in sending order, then my chunks, then decodes of ready finals.
        let mut jobs: Vec<Job<'_, T>> = Vec::new();
        if failed.is_none() {
            while add_at < adds.len() && plan.nodes[adds[add_at]].started {
                add_at += 1;
            }
            for &id in adds.iter().skip(add_at).take(WINDOW) {
                if jobs.len() >= threads {
                    break;
                }
                let n = &plan.nodes[id];
                if let Kind::Add(a, b) = n.kind {
                    if n.started {
                        continue;
                    }
                    let values = match &plan.nodes[b].kind {
                        Kind::Own(r) => r.len(),
                        _ => 0,
                    };
                    if let (Some(x), Some(y)) = (&plan.nodes[a].bytes, &plan.nodes[b].bytes) {
                        jobs.push(Job::Add(id, x, y, values));
                    }
                }
            }
            while own_at < owns.len() && plan.nodes[owns[own_at]].started {
                own_at += 1;
            }
            for &id in owns.iter().skip(own_at) {
                if jobs.len() >= threads {
                    break;
                }
                if let Kind::Own(r) = &plan.nodes[id].kind {
                    jobs.push(Job::Compress(id, &src[r.clone()]));
                }
            }
            while fin_at < decoded.len() && decoded[fin_at] {
                fin_at += 1;
            }
            for f in fin_at..decoded.len().min(fin_at + WINDOW) {
                if jobs.len() >= threads {
                    break;
                }
                let id = plan.finals[f].0;
                if decoded[f] || outs[f].is_none() {
                    continue;
                }
                if let Some(b) = &plan.nodes[id].bytes
                    && let Some(o) = outs[f].take()
                {
                    jobs.push(Job::Decode(f, b, o));
                }
            }
        }
        if jobs.is_empty() {
            if idle_done {
                break;
            }
            // Nothing to compute: block on the next message to arrive.
            if let Some(m) = recvs.get_mut(next_recv).and_then(Option::take) {
                land(&mut plan, next_recv, m, &mut failed);
                continue;
            }
            if failed.is_some() {
                break;
            }
            return Err(Error::InvalidArgument(
                "collective: pipeline stalled (internal schedule error)".into(),
            ));
        }
        let mark: Vec<usize> = jobs
            .iter()
            .filter_map(|j| match j {
                Job::Compress(id, _) | Job::Add(id, ..) => Some(*id),
                Job::Decode(..) => None,
            })
            .collect();
        let done = run_jobs(jobs, cfg);
        for id in mark {
            plan.nodes[id].started = true;
        }
        for d in done {
            match d {
                Done::Node(id, r) => match r {
                    Ok(b) => {
                        plan.nodes[id].bytes = Some(b);
                        if let Kind::Add(a, b) = plan.nodes[id].kind {
                            release(&mut plan, a);
                            release(&mut plan, b);
                        }
                    }
                    Err(e) => {
                        failed.get_or_insert_with(|| (rank, e.to_string()));
                        own_err.get_or_insert(e);
                    }
                },
                Done::Decoded(f, r) => {
                    decoded[f] = true;
                    let id = plan.finals[f].0;
                    release(&mut plan, id);
                    if let Err(e) = r {
                        decode_err.get_or_insert(e);
                    }
                }
            }
        }
    }
    // Drain: every receive and send completes before the buffers go.
    for (i, m) in recvs.iter_mut().enumerate() {
        if let Some(m) = m.take() {
            land(&mut plan, i, m, &mut failed);
        }
    }
    for s in &mut sends {
        s.wait();
    }
    if let Some((r, m)) = failed {
        return Err(match own_err {
            Some(e) => e,
            None => remote(r, &m),
        });
    }
    match decode_err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A completed receive `i`: its archive becomes its node's bytes, or its error frame marks the
/// collective failed.
fn land(plan: &mut Plan, i: usize, m: Msg, failed: &mut Option<(usize, String)>) {
    let b = m.into_bytes();
    let id = plan.recvs[i].0;
    plan.nodes[id].started = true;
    match parse_err(&b) {
        Some(e) => {
            failed.get_or_insert(e);
        }
        None => plan.nodes[id].bytes = Some(b),
    }
}

/// One consumer of node `id` is done; frees its bytes after the last.
fn release(plan: &mut Plan, id: usize) {
    let n = &mut plan.nodes[id];
    n.uses = n.uses.saturating_sub(1);
    if n.uses == 0 {
        n.bytes = None;
    }
}

/// The raw handle and (rank, size) of `comm`.
fn ring_of<C: Communicator + AsRaw<Raw = ffi::MPI_Comm>>(
    comm: &C,
) -> (ffi::MPI_Comm, usize, usize) {
    (comm.as_raw(), comm.rank() as usize, comm.size() as usize)
}

/// The reduce-scatter and allgather of a ring reduction over `n` values on `size` ranks.
/// `gather`: whether the allgather half runs (allreduce) or rank `rank` keeps its segment.
fn reduce_plan(
    rank: usize,
    size: usize,
    n: usize,
    chunk: usize,
    block: u32,
    gather: bool,
) -> Result<Plan> {
    let mut p = Plan::default();
    let right = ((rank + 1) % size) as i32;
    let left = ((rank + size - 1) % size) as i32;
    let seg = |i: usize| part(n, size, i % size);
    // My chunks, compressed in the order the ring needs them: segment rank − 1 − t at step t.
    let mut own: Vec<Vec<usize>> = vec![Vec::new(); size];
    for t in 0..size {
        let c = (rank + 2 * size - 1 - t) % size;
        own[c] = chunks(seg(c), chunk)
            .into_iter()
            .map(|r| p.own(r))
            .collect();
    }
    // Reduce-scatter: step s sends the running sums of segment rank − 1 − s and receives those
    // of segment rank − 2 − s, each chunk added to my own archive of it before it moves on.
    let mut running: Vec<usize> = own[(rank + size - 1) % size].clone();
    for s in 0..size - 1 {
        for &id in &running {
            p.send(id, right);
        }
        let c = (rank + 2 * size - 2 - s) % size;
        let mut next = Vec::with_capacity(own[c].len());
        for (k, r) in chunks(seg(c), chunk).into_iter().enumerate() {
            let got = p.recv(left, r.len(), block)?;
            next.push(p.add(got, own[c][k]));
        }
        running = next;
    }
    if size == 1 {
        running = own[rank].clone();
    }
    // `running` is now the full sum of segment `rank`.
    let mine = chunks(seg(rank), chunk);
    let base = if gather { 0 } else { seg(rank).start };
    for (&id, r) in running.iter().zip(&mine) {
        p.decode(id, r.start - base..r.end - base);
    }
    if gather {
        for a in 0..size - 1 {
            for &id in &running {
                p.send(id, right);
            }
            let c = (rank + 2 * size - 1 - a) % size;
            let mut next = Vec::new();
            for r in chunks(seg(c), chunk) {
                let got = p.recv(left, r.len(), block)?;
                p.decode(got, r);
                next.push(got);
            }
            running = next;
        }
    }
    Ok(p)
}

/// The common start of a reduction: status exchange, length / dtype / chunk checks, the grid.
fn reduce_start<T: Element, C: Communicator>(
    comm: &C,
    data: &[T],
    cfg: &Config,
    pipe: &Pipeline,
    pre: Result<()>,
) -> Result<Config> {
    let local = pre
        .and_then(|()| check_chunk(pipe))
        .and_then(|c| local_max(data).map(|m| (c, m)));
    let mine = Status {
        n: data.len() as u64,
        max_abs: local.as_ref().map_or(0.0, |l| l.1),
        dtype: T::TYPE.code(),
        chunk: local.as_ref().map_or(0, |l| l.0),
        err: local.as_ref().err().map(|e| e.to_string()),
    };
    let st = agree(comm, &mine, local.err())?;
    check_lengths(&st)?;
    let global = st.iter().map(|s| s.max_abs).fold(0.0, f64::max);
    // A config error is the same on every rank: every rank reports it.
    grid(cfg, T::TYPE, global)
}

/// [`allreduce_sum_with`] with `Config::abs(eb)` (block size 128, `max_abs` agreed globally).
pub fn allreduce_sum<T: Element, C: Communicator + AsRaw<Raw = ffi::MPI_Comm>>(
    comm: &C,
    data: &[T],
    eb: f64,
) -> Result<Vec<T>> {
    allreduce_sum_with(comm, data, &Config::abs(eb))
}

/// [`allreduce_sum_pipelined`] with the default [`Pipeline`].
pub fn allreduce_sum_with<T: Element, C: Communicator + AsRaw<Raw = ffi::MPI_Comm>>(
    comm: &C,
    data: &[T],
    cfg: &Config,
) -> Result<Vec<T>> {
    allreduce_sum_pipelined(comm, data, cfg, &Pipeline::default())
}

/// Compressed-domain allreduce (sum) with a strict ABS `cfg` (its `max_abs`, if set, must hold
/// on every rank; else the global `max|x|` is agreed), pipelined in chunks of `pipe.chunk`
/// values. Every rank passes the same number of values and gets the same result, within
/// `R · cfg.error_bound` of the exact sum per element.
pub fn allreduce_sum_pipelined<T: Element, C: Communicator + AsRaw<Raw = ffi::MPI_Comm>>(
    comm: &C,
    data: &[T],
    cfg: &Config,
    pipe: &Pipeline,
) -> Result<Vec<T>> {
    let mut out = vec![T::ZERO; data.len()];
    allreduce_sum_into(comm, data, cfg, pipe, &mut out)?;
    Ok(out)
}

/// [`allreduce_sum_pipelined`] into the caller's `out`, which must be as long as `data` (else
/// [`Error::InvalidArgument`] on this rank, its message on the others).
pub fn allreduce_sum_into<T: Element, C: Communicator + AsRaw<Raw = ffi::MPI_Comm>>(
    comm: &C,
    data: &[T],
    cfg: &Config,
    pipe: &Pipeline,
    out: &mut [T],
) -> Result<()> {
    let pre = if out.len() == data.len() {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "allreduce: output of {} values for {} inputs",
            out.len(),
            data.len()
        )))
    };
    let g = reduce_start(comm, data, cfg, pipe, pre)?;
    let (raw, rank, size) = ring_of(comm);
    let plan = reduce_plan(rank, size, data.len(), pipe.chunk, g.block_size, true)?;
    run(raw, rank, plan, data, &g, out)
}

/// Compressed-domain reduce-scatter (sum): rank `r` gets values `r·n/R .. (r+1)·n/R` of the sum
/// of every rank's `data` (same length everywhere), within `R · eb` of the exact sum per
/// element (`Config::abs(eb)`, `max_abs` agreed globally, default [`Pipeline`]).
pub fn reduce_scatter_sum<T: Element, C: Communicator + AsRaw<Raw = ffi::MPI_Comm>>(
    comm: &C,
    data: &[T],
    eb: f64,
) -> Result<Vec<T>> {
    reduce_scatter_sum_pipelined(comm, data, &Config::abs(eb), &Pipeline::default())
}

/// [`reduce_scatter_sum`] with a strict ABS `cfg` and an explicit [`Pipeline`].
pub fn reduce_scatter_sum_pipelined<T: Element, C: Communicator + AsRaw<Raw = ffi::MPI_Comm>>(
    comm: &C,
    data: &[T],
    cfg: &Config,
    pipe: &Pipeline,
) -> Result<Vec<T>> {
    let g = reduce_start(comm, data, cfg, pipe, Ok(()))?;
    let (raw, rank, size) = ring_of(comm);
    let n = data.len();
    let plan = reduce_plan(rank, size, n, pipe.chunk, g.block_size, false)?;
    let mut out = vec![T::ZERO; part(n, size, rank).len()];
    run(raw, rank, plan, data, &g, &mut out)?;
    Ok(out)
}

/// Compressed broadcast: `root` compresses `data` with `Config::abs(eb)` in pipeline chunks that
/// travel down the chain root → root+1 → …; every rank (the root too) returns the decoded values
/// (identical everywhere, within `eb` of the root's data). Non-root ranks' `data` is ignored.
pub fn bcast<T: Element, C: Communicator + AsRaw<Raw = ffi::MPI_Comm>>(
    comm: &C,
    root: i32,
    data: &[T],
    eb: f64,
) -> Result<Vec<T>> {
    let (raw, rank, size) = ring_of(comm);
    let is_root = comm.rank() == root;
    let pipe = Pipeline::default();
    let cfg = Config::abs(eb);
    // Header from the root: value count, element type, chunk size.
    let mut head = [0u64; 3];
    if is_root {
        head = [
            data.len() as u64,
            u64::from(T::TYPE.code()),
            pipe.chunk as u64,
        ];
    }
    comm.process_at_rank(root).broadcast_into(&mut head[..]);
    let n = usize::try_from(head[0])
        .map_err(|_| Error::InvalidArgument("bcast: count above usize".into()))?;
    let chunk = usize::try_from(head[2]).unwrap_or(usize::MAX).max(1);
    let root = root as usize;
    let v = (rank + size - root) % size; // my place in the chain
    let right = ((rank + 1) % size) as i32;
    let left = ((rank + size - 1) % size) as i32;
    let mut p = Plan::default();
    for r in chunks(0..n, chunk) {
        let id = if v == 0 {
            p.own(r.clone())
        } else {
            p.recv(left, r.len(), cfg.block_size)?
        };
        if v + 1 < size {
            p.send(id, right);
        }
        p.decode(id, r);
    }
    let mut out = vec![T::ZERO; n];
    let src: &[T] = if v == 0 { data } else { &[] };
    run(raw, rank, p, src, &cfg, &mut out)?;
    if head[1] != u64::from(T::TYPE.code()) {
        return Err(Error::InvalidArgument(
            "bcast: this rank's element type differs from the root's".into(),
        ));
    }
    Ok(out)
}

/// Compressed allgather: every rank's `data` compressed with `Config::abs(eb)` in pipeline
/// chunks, passed round the ring and decoded everywhere in rank order (ranks may pass different
/// lengths); identical on every rank, within `eb` of each rank's data.
pub fn allgather<T: Element, C: Communicator + AsRaw<Raw = ffi::MPI_Comm>>(
    comm: &C,
    data: &[T],
    eb: f64,
) -> Result<Vec<T>> {
    let (raw, rank, size) = ring_of(comm);
    let pipe = Pipeline::default();
    let cfg = Config::abs(eb);
    let local = check_chunk(&pipe).and_then(|c| local_max(data).map(|_| c));
    let mine = Status {
        n: data.len() as u64,
        max_abs: 0.0,
        dtype: T::TYPE.code(),
        chunk: local.as_ref().map_or(0, |c| *c),
        err: local.as_ref().err().map(|e| e.to_string()),
    };
    let st = agree(comm, &mine, local.err())?;
    check_common(&st, mine.dtype, mine.chunk)?;
    let lens: Vec<usize> = st
        .iter()
        .map(|s| usize::try_from(s.n))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::InvalidArgument("allgather: a count above usize".into()))?;
    let mut starts = Vec::with_capacity(size + 1);
    starts.push(0usize);
    for &l in &lens {
        let last = *starts.last().unwrap_or(&0);
        starts.push(last + l);
    }
    let block = |r: usize| starts[r]..starts[r + 1];
    let right = ((rank + 1) % size) as i32;
    let left = ((rank + size - 1) % size) as i32;
    let mut p = Plan::default();
    let mut running = Vec::new();
    for r in chunks(0..data.len(), pipe.chunk) {
        let id = p.own(r.clone());
        p.decode(id, r.start + starts[rank]..r.end + starts[rank]);
        running.push(id);
    }
    for a in 0..size - 1 {
        for &id in &running {
            p.send(id, right);
        }
        let c = (rank + 2 * size - 1 - a) % size;
        let mut next = Vec::new();
        for r in chunks(block(c), pipe.chunk) {
            let got = p.recv(left, r.len(), cfg.block_size)?;
            p.decode(got, r);
            next.push(got);
        }
        running = next;
    }
    let mut out = vec![T::ZERO; starts[size]];
    run(raw, rank, p, data, &cfg, &mut out)?;
    Ok(out)
}
