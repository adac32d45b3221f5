//! The instrument the firmware image plays, shared word for word with the host test
//! (`tests/tests/firmware_hash.rs` includes this file with `#[path]`).
//!
//! It generates a deterministic sensor-like signal in integer arithmetic (two oscillators, a
//! step, low-pass filtered LCG noise; every sample is an integer times 2^-12, so the f32 values
//! are exact and identical on every IEEE target, with no libm), compresses it block by block
//! with the SZp streaming encoder and with PERNIX blocks into caller buffers, decompresses both,
//! checks the error bounds, and hashes (64-bit FNV-1a) the archive bytes and the decoded bits.
//! The report line it formats is what the QEMU runs print over semihosting and what the host
//! test prints; CI compares them.
//!
//! Only `fzpack_core` and `core` are used, without `core::fmt` and without any indexing that
//! could panic, so the image links against a panic handler that must never be reached.

use fzpack_core::pernix::{self, Backend, BitWidth, BlockSize, Dispatcher, elements_per_block};
use fzpack_core::szp::{self, Config, Layout, StreamEncoder};
// The public API on every target: on hosts the fastest path this CPU runs (so that the host
// test compares the SIMD paths with the images), on the microcontrollers the scalar path,
// chosen at compile time by `szp::compress`/`decompress` themselves.
use fzpack_core::szp::{compress as szp_compress, decompress as szp_decompress};

/// Samples in the signal.
pub const N: usize = 4096;
/// SZp values per block.
pub const SZP_BLOCK: usize = 128;
/// SZp absolute error bound.
pub const SZP_EB: f64 = 1e-3;
/// The instrument's full scale: every sample satisfies `|x| <= FULL_SCALE`.
pub const FULL_SCALE: f32 = 8.0;
/// PERNIX bit width.
pub const PERNIX_BITS: u8 = 12;
/// PERNIX block size.
pub const PERNIX_BS: BlockSize = BlockSize::B64;
/// PERNIX values per block: floor(64·8/12) = 42 (5 groups of 8 and a tail of 2).
pub const PERNIX_EPB: usize = 42;
/// PERNIX blocks for the signal (the last one zero-padded).
pub const PERNIX_BLOCKS: usize = N.div_ceil(PERNIX_EPB);
/// PERNIX bytes for the signal.
pub const PERNIX_BYTES: usize = PERNIX_BLOCKS * 64;
/// Values of the tie signal (see [`TIES_EB`]).
pub const TIES: usize = 256;
/// The tie signal's bound: `2·eb = 1.5·(1 + 2^-45)`, which puts the product of every odd level
/// near 7·10^6 within `2^-21` of an f32 tie (`1.5·q` a midpoint). A decoder that rounds the
/// product with too little precision goes wrong there; the FMA path (Cortex-M4F, RV32 with F)
/// leaves every such level to its integer path, so the decode exercises both (the signal is
/// `1.5·q`, rounded up to an integer for odd `q`: exactly the reconstructions, error 0).
pub const TIES_EB: f64 = 0.75 * (1.0 + 1.0 / 35_184_372_088_832.0);
/// SZp archive capacity: `szp::max_compressed_len(N, 128, F32)`.
pub const SZP_CAP: usize = szp::HEADER_LEN + N.div_ceil(SZP_BLOCK) + 8 * N;

/// Every buffer the instrument uses (about 104 KiB): a `static` in the firmware image.
pub struct Buffers {
    /// The signal.
    pub signal: [f32; N],
    /// The streamed SZp archive.
    pub szp: [u8; SZP_CAP],
    /// The one-shot SZp archive of the same signal (must equal the streamed one).
    pub szp_oneshot: [u8; SZP_CAP],
    /// SZp reconstruction.
    pub decoded: [f32; N],
    /// PERNIX blocks.
    pub pernix: [u8; PERNIX_BYTES],
}

impl Buffers {
    /// All zero (a `.bss` object).
    pub const fn new() -> Buffers {
        Buffers {
            signal: [0.0; N],
            szp: [0; SZP_CAP],
            szp_oneshot: [0; SZP_CAP],
            decoded: [0.0; N],
            pernix: [0; PERNIX_BYTES],
        }
    }
}

impl Default for Buffers {
    fn default() -> Self {
        Buffers::new()
    }
}

/// The codec calls the firmware image measures (stack painting) one by one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `Dispatcher::compress_block` (PERNIX, one block).
    PernixCompress,
    /// `Dispatcher::decompress_block` (PERNIX, one block).
    PernixDecompress,
    /// `StreamEncoder::new`, `push_block` and `finish` (SZp streaming).
    SzpStream,
    /// `szp::compress` (SZp one-shot).
    SzpEncode,
    /// `szp::decompress` (SZp).
    SzpDecode,
    /// `szp::decompress` of the archive written with an f32 step
    /// ([`Config::with_f32_step`]): one f32 multiply per value.
    SzpDecodeStep,
}

impl Stage {
    /// Every stage, in report order.
    pub const ALL: [Stage; 6] = [
        Stage::PernixCompress,
        Stage::PernixDecompress,
        Stage::SzpStream,
        Stage::SzpEncode,
        Stage::SzpDecode,
        Stage::SzpDecodeStep,
    ];
    /// Short name.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::PernixCompress => "pernix_compress",
            Stage::PernixDecompress => "pernix_decompress",
            Stage::SzpStream => "szp_stream_encode",
            Stage::SzpEncode => "szp_encode",
            Stage::SzpDecode => "szp_decode",
            Stage::SzpDecodeStep => "szp_decode_f32_step",
        }
    }
    /// Position in [`Stage::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// Runs each codec call; the firmware image measures the stack it uses, the host just calls.
pub trait Meter {
    /// Runs `f`, one call of `stage`.
    fn stage<R>(&mut self, stage: Stage, f: impl FnOnce() -> R) -> R;
}

/// A [`Meter`] that only calls.
pub struct NoMeter;

impl Meter for NoMeter {
    fn stage<R>(&mut self, _stage: Stage, f: impl FnOnce() -> R) -> R {
        f()
    }
}

/// What went wrong (the image exits with a nonzero code and prints it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A sample outside the full scale (generator bug).
    Signal,
    /// The streaming encoder returned an error.
    SzpStream,
    /// The one-shot encoder returned an error.
    SzpEncode,
    /// Streamed and one-shot archives differ.
    SzpMismatch,
    /// The decoder returned an error or the wrong count.
    SzpDecode,
    /// A reconstruction misses the SZp bound.
    SzpBound,
    /// PERNIX scale helpers or kernels returned an error.
    Pernix,
    /// A PERNIX reconstruction misses its bound.
    PernixBound,
    /// The one-shot encoder did not name a value not finite or above `max_abs`.
    SzpIrregular,
}

impl Failure {
    /// Short name.
    pub const fn name(self) -> &'static str {
        match self {
            Failure::Signal => "signal out of range",
            Failure::SzpStream => "szp stream encode error",
            Failure::SzpEncode => "szp encode error",
            Failure::SzpMismatch => "szp streamed != one-shot",
            Failure::SzpDecode => "szp decode error",
            Failure::SzpBound => "szp bound missed",
            Failure::Pernix => "pernix error",
            Failure::PernixBound => "pernix bound missed",
            Failure::SzpIrregular => "szp irregular input not named",
        }
    }
}

/// The outcome of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    /// SZp archive length.
    pub szp_len: usize,
    /// FNV-1a of the SZp archive.
    pub szp_fnv: u64,
    /// FNV-1a of the SZp reconstruction's bits (little endian).
    pub szp_dec_fnv: u64,
    /// FNV-1a of the PERNIX blocks.
    pub pernix_fnv: u64,
    /// FNV-1a of the PERNIX reconstruction's bits.
    pub pernix_dec_fnv: u64,
    /// Largest SZp error, in units of 2^-40 (an exact integer summary of an f64).
    pub szp_max_err: u64,
    /// Length of the SZp archive written with an f32 step.
    pub step_len: usize,
    /// FNV-1a of that archive.
    pub step_fnv: u64,
    /// FNV-1a of its reconstruction's bits.
    pub step_dec_fnv: u64,
    /// Largest PERNIX error, in units of 2^-40.
    pub pernix_max_err: u64,
    /// FNV-1a of the tie signal's archive.
    pub ties_fnv: u64,
    /// FNV-1a of its reconstruction's bits (equal to the signal's).
    pub ties_dec_fnv: u64,
}

/// 64-bit FNV-1a.
#[derive(Clone, Copy, Debug)]
pub struct Fnv(pub u64);

impl Fnv {
    /// The offset basis.
    pub const fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    /// Hashes `bytes`.
    pub fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    /// Hashes the little-endian bits of `values`.
    pub fn floats(&mut self, values: &[f32]) {
        for v in values {
            self.bytes(&v.to_bits().to_le_bytes());
        }
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Fnv::new()
    }
}

/// A half-wave-parabola oscillator: `phase` in 16 bits, result in `[-2^14, 2^14]`.
fn wave(phase: u32) -> i32 {
    let half = (phase & 0x7fff) as i32;
    let v = (half * (0x8000 - half)) >> 14;
    if phase & 0x8000 != 0 { -v } else { v }
}

/// Fills `out` with the signal: integers times 2^-12, `|x| < 6.5`.
pub fn signal(out: &mut [f32]) {
    let mut lcg: u32 = 0x2545_f491;
    let mut noise: i32 = 0;
    for (i, o) in out.iter_mut().enumerate() {
        let i = i as u32;
        lcg = lcg.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        // Low-pass filtered noise in about [-2048, 2048].
        let r = ((lcg >> 16) as i32) - 0x8000;
        noise = noise - (noise >> 3) + (r >> 7);
        let slow = wave(i.wrapping_mul(37)); // about 1.8 periods over the record
        let fast = wave(i.wrapping_mul(1021)) >> 2; // about 64 periods
        let step = if (1500..2600).contains(&i) { 4096 } else { 0 };
        let v = slow + fast + noise.clamp(-2048, 2048) + step;
        *o = v as f32 * (1.0 / 4096.0);
    }
}

/// `|a − b|` in f64, in units of 2^-40 (saturating).
fn err_units(a: f32, b: f32) -> u64 {
    let d = f64::from(a) - f64::from(b);
    let d = if d < 0.0 { -d } else { d };
    (d * 1_099_511_627_776.0) as u64
}

/// Plays the instrument once: signal, SZp streamed + one-shot + decoded, PERNIX block by block.
pub fn run<M: Meter>(m: &mut M, b: &mut Buffers) -> Result<Summary, Failure> {
    signal(&mut b.signal);
    if b.signal
        .iter()
        .any(|x| !(-FULL_SCALE..=FULL_SCALE).contains(x))
    {
        return Err(Failure::Signal);
    }

    // SZp: one block at a time into the caller buffer, as samples would arrive.
    // The stage layout, which every build of the image writes (also the one without the
    // feature `layout-heads`) and in which the recorded hashes were taken.
    let cfg = Config::abs(SZP_EB)
        .with_max_abs(f64::from(FULL_SCALE))
        .with_layout(Layout::Fzgm);
    let szp_len = {
        let out = &mut b.szp;
        let mut enc = m
            .stage(Stage::SzpStream, move || {
                StreamEncoder::<f32>::new(out, N, &cfg)
            })
            .map_err(|_| Failure::SzpStream)?;
        // (`as_chunks`, not `chunks`: no division by a runtime chunk size, so no panic path.)
        let (blocks, rest) = b.signal.as_chunks::<SZP_BLOCK>();
        for block in blocks {
            m.stage(Stage::SzpStream, || enc.push_block(block))
                .map_err(|_| Failure::SzpStream)?;
        }
        if !rest.is_empty() {
            m.stage(Stage::SzpStream, || enc.push_block(rest))
                .map_err(|_| Failure::SzpStream)?;
        }
        m.stage(Stage::SzpStream, move || enc.finish())
            .map_err(|_| Failure::SzpStream)?
    };
    let oneshot = m
        .stage(Stage::SzpEncode, || {
            compress_once(&b.signal, &cfg, &mut b.szp_oneshot)
        })
        .map_err(|_| Failure::SzpEncode)?;
    let archive = b.szp.get(..szp_len).ok_or(Failure::SzpStream)?;
    if b.szp_oneshot.get(..oneshot) != Some(archive) {
        return Err(Failure::SzpMismatch);
    }
    let n = m
        .stage(Stage::SzpDecode, || szp_decompress(archive, &mut b.decoded))
        .map_err(|_| Failure::SzpDecode)?;
    let szp_max_err = max_err(n, &b.signal, &b.decoded)?;
    let (mut szp_fnv, mut szp_dec_fnv) = (Fnv::new(), Fnv::new());
    szp_fnv.bytes(archive);
    szp_dec_fnv.floats(&b.decoded);

    // The same signal with an f32 step (one-shot, into the one-shot buffer), decoded again.
    let step_cfg = cfg.with_f32_step();
    let step_len =
        compress_once(&b.signal, &step_cfg, &mut b.szp_oneshot).map_err(|_| Failure::SzpEncode)?;
    let step = b.szp_oneshot.get(..step_len).ok_or(Failure::SzpEncode)?;
    let n = m
        .stage(Stage::SzpDecodeStep, || {
            szp_decompress(step, &mut b.decoded)
        })
        .map_err(|_| Failure::SzpDecode)?;
    max_err(n, &b.signal, &b.decoded)?;
    let (mut step_fnv, mut step_dec_fnv) = (Fnv::new(), Fnv::new());
    step_fnv.bytes(step);
    step_dec_fnv.floats(&b.decoded);

    // The tie signal (`TIES_EB`): levels from 7·10^6, one-shot, decoded exactly.
    let (ties_fnv, ties_dec_fnv) = ties(b)?;
    irregular(b, &cfg)?;

    // PERNIX: fixed 64-byte blocks of 42 values; the last block is zero-padded.
    let bits = BitWidth::new(PERNIX_BITS).map_err(|_| Failure::Pernix)?;
    if elements_per_block(bits, PERNIX_BS) != PERNIX_EPB {
        return Err(Failure::Pernix);
    }
    let d = Dispatcher::new(Backend::Auto).map_err(|_| Failure::Pernix)?;
    let inv = pernix::compression_scale_from_bmax(FULL_SCALE, bits).map_err(|_| Failure::Pernix)?;
    let scale =
        pernix::decompression_scale_from_bmax(FULL_SCALE, bits).map_err(|_| Failure::Pernix)?;
    // Round to nearest: half a step, plus a little for the f32 roundings of the product and
    // of the reconstruction.
    let tol = f64::from(scale) * 0.5 * (1.0 + 1.0 / 1024.0);
    let (mut pernix_fnv, mut pernix_dec_fnv) = (Fnv::new(), Fnv::new());
    let mut pernix_max_err = 0;
    for (k, out) in b.pernix.as_chunks_mut::<64>().0.iter_mut().enumerate() {
        let chunk = b.signal.get(k * PERNIX_EPB..).unwrap_or(&[]);
        let mut block = [0f32; PERNIX_EPB];
        for (d, s) in block.iter_mut().zip(chunk) {
            *d = *s;
        }
        m.stage(Stage::PernixCompress, || {
            d.compress_block(bits, PERNIX_BS, &block, inv, out)
        })
        .map_err(|_| Failure::Pernix)?;
        let mut back = [f32::NAN; PERNIX_EPB];
        m.stage(Stage::PernixDecompress, || {
            d.decompress_block(bits, PERNIX_BS, out, scale, &mut back, true)
        })
        .map_err(|_| Failure::Pernix)?;
        for (&x, &y) in block.iter().zip(&back) {
            let e = f64::from(x) - f64::from(y);
            if !(-tol..=tol).contains(&e) {
                return Err(Failure::PernixBound);
            }
            pernix_max_err = pernix_max_err.max(err_units(x, y));
        }
        pernix_fnv.bytes(out);
        pernix_dec_fnv.floats(&back);
    }

    Ok(Summary {
        szp_len,
        szp_fnv: szp_fnv.0,
        szp_dec_fnv: szp_dec_fnv.0,
        pernix_fnv: pernix_fnv.0,
        pernix_dec_fnv: pernix_dec_fnv.0,
        szp_max_err,
        step_len,
        step_fnv: step_fnv.0,
        step_dec_fnv: step_dec_fnv.0,
        pernix_max_err,
        ties_fnv,
        ties_dec_fnv,
    })
}

/// The tie signal ([`TIES_EB`]) in the first `TIES` values of `b.decoded`, compressed into
/// `b.szp_oneshot`, decoded into the next `TIES`, which must equal it bit for bit; returns the
/// hashes of the archive and of the reconstruction.
fn ties(b: &mut Buffers) -> Result<(u64, u64), Failure> {
    let (signal, rest) = b.decoded.split_at_mut(TIES);
    let back = rest.get_mut(..TIES).ok_or(Failure::SzpDecode)?;
    // Odd (undecided) levels where `i % 7 == 0` or `i % 5 == 2`: at every position of the
    // FMA decoder's steps of four, alone and two in a step, between runs of even ones.
    for (i, x) in signal.iter_mut().enumerate() {
        let odd = u32::from(i % 7 == 0 || i % 5 == 2);
        let q = 7_000_000 + 2 * i as u32 + odd;
        *x = ((3 * q + (q & 1)) / 2) as f32; // 1.5·q, rounded up for odd q: exact
    }
    // The stage-compatible quantizer: the archive keeps the bound itself (no tightening). The
    // block-head layout: its blocks start from their head, so the levels' deltas are small
    // and the decoder's FMA path takes them (a stage-layout block starts from 0, and its first
    // delta of about 7·10^6 sends the block to the integer path).
    let cfg = Config::abs(TIES_EB)
        .stage_compatible()
        .with_layout(Layout::Heads);
    let len = szp_compress(signal, &cfg, &mut b.szp_oneshot).map_err(|_| Failure::SzpEncode)?;
    let archive = b.szp_oneshot.get(..len).ok_or(Failure::SzpEncode)?;
    if szp_decompress(archive, back) != Ok(TIES) {
        return Err(Failure::SzpDecode);
    }
    if signal
        .iter()
        .zip(back.iter())
        .any(|(x, y)| x.to_bits() != y.to_bits())
    {
        return Err(Failure::SzpBound);
    }
    let (mut fnv, mut dec) = (Fnv::new(), Fnv::new());
    fnv.bytes(archive);
    dec.floats(back);
    Ok((fnv.0, dec.0))
}

/// The one-shot encoder on the signal with one value not finite or above `max_abs` (the
/// next f32 past it) at block edges and inside blocks, and with two such values: the error
/// must name the first one. With a declared `max_abs` on an f32-only FPU no pass validates
/// the input: the encoder's blocks check themselves, and this is where the image shows it.
/// (Played on the host, the core has its default features: there a value that is not finite
/// is a missing value, stored, and the error names the next value above `max_abs`.)
// The host test includes this file from a crate without the firmware's features.
#[allow(unexpected_cfgs)]
fn irregular(b: &mut Buffers, cfg: &Config) -> Result<(), Failure> {
    let missing_stored = !cfg!(target_os = "none") || cfg!(feature = "missing-and-shape");
    let over = f32::from_bits(FULL_SCALE.to_bits() + 1);
    let x = b.decoded.get_mut(..N).ok_or(Failure::SzpIrregular)?;
    for bad in [f32::NAN, f32::INFINITY, -f32::INFINITY, over, -over] {
        for at in [0, SZP_BLOCK - 1, SZP_BLOCK, N / 2 + 3, N - 1] {
            x.copy_from_slice(&b.signal);
            if let Some(v) = x.get_mut(at) {
                *v = bad;
            }
            // A second one later (where there is room): the first is still the one named.
            let second = at + 2 * SZP_BLOCK + 1;
            if let Some(v) = x.get_mut(second) {
                *v = -over;
            }
            let got = compress_once(x, cfg, &mut b.szp_oneshot);
            let named = if bad.is_finite() {
                got == Err(szp::Error::ValueOutOfRange { index: at })
            } else if missing_stored {
                match got {
                    Ok(_) => second >= N,
                    Err(e) => second < N && e == szp::Error::ValueOutOfRange { index: second },
                }
            } else {
                got == Err(szp::Error::NonFinite { index: at })
            };
            if !named {
                return Err(Failure::SzpIrregular);
            }
        }
    }
    Ok(())
}

/// `szp::compress`, from one call site for both of the instrument's one-shot archives (so
/// that what the image measures does not depend on how often the compiler sees it called).
#[inline(never)]
fn compress_once(signal: &[f32], cfg: &Config, out: &mut [u8]) -> Result<usize, szp::Error> {
    szp_compress(signal, cfg, out)
}

/// The largest SZp error of a decode that wrote `n` values (all `N`), in units of 2^-40; an
/// error above the bound fails.
fn max_err(n: usize, signal: &[f32], decoded: &[f32]) -> Result<u64, Failure> {
    if n != N {
        return Err(Failure::SzpDecode);
    }
    let mut max = 0;
    for (&x, &y) in signal.iter().zip(decoded) {
        let d = f64::from(x) - f64::from(y);
        if !(-SZP_EB..=SZP_EB).contains(&d) {
            return Err(Failure::SzpBound);
        }
        max = max.max(err_units(x, y));
    }
    Ok(max)
}

/// A fixed-capacity text line (no `core::fmt`); bytes past the capacity are dropped.
pub struct Line {
    buf: [u8; 384],
    len: usize,
}

impl Line {
    /// An empty line.
    pub const fn new() -> Line {
        Line {
            buf: [0; 384],
            len: 0,
        }
    }
    /// Appends `s`.
    pub fn str(&mut self, s: &str) -> &mut Line {
        for &c in s.as_bytes() {
            if let Some(d) = self.buf.get_mut(self.len) {
                *d = c;
                self.len += 1;
            }
        }
        self
    }
    /// Appends `v` in decimal.
    pub fn dec(&mut self, v: u64) -> &mut Line {
        let mut digits = [0u8; 20];
        let mut n = 0;
        let mut v = v;
        loop {
            if let Some(d) = digits.get_mut(n) {
                *d = b'0' + (v % 10) as u8;
            }
            n += 1;
            v /= 10;
            if v == 0 || n == digits.len() {
                break;
            }
        }
        for &d in digits.iter().take(n).rev() {
            if let Some(o) = self.buf.get_mut(self.len) {
                *o = d;
                self.len += 1;
            }
        }
        self
    }
    /// Appends `v` as 16 lower-case hex digits.
    pub fn hex(&mut self, v: u64) -> &mut Line {
        for k in (0..16).rev() {
            let nib = ((v >> (4 * k)) & 0xf) as u8;
            let c = if nib < 10 {
                b'0' + nib
            } else {
                b'a' + nib - 10
            };
            if let Some(o) = self.buf.get_mut(self.len) {
                *o = c;
                self.len += 1;
            }
        }
        self
    }
    /// The text so far.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }
}

impl Default for Line {
    fn default() -> Self {
        Line::new()
    }
}

/// The report line CI compares: `instrument: n=… szp_len=… szp_fnv=… …`.
pub fn report(s: &Summary, line: &mut Line) {
    line.str("instrument: n=")
        .dec(N as u64)
        .str(" szp_len=")
        .dec(s.szp_len as u64)
        .str(" szp_fnv=")
        .hex(s.szp_fnv)
        .str(" szp_dec_fnv=")
        .hex(s.szp_dec_fnv)
        .str(" pernix_len=")
        .dec(PERNIX_BYTES as u64)
        .str(" pernix_fnv=")
        .hex(s.pernix_fnv)
        .str(" pernix_dec_fnv=")
        .hex(s.pernix_dec_fnv)
        .str(" szp_max_err_2^-40=")
        .dec(s.szp_max_err)
        .str(" pernix_max_err_2^-40=")
        .dec(s.pernix_max_err)
        .str(" step_len=")
        .dec(s.step_len as u64)
        .str(" step_fnv=")
        .hex(s.step_fnv)
        .str(" step_dec_fnv=")
        .hex(s.step_dec_fnv)
        .str(" ties_fnv=")
        .hex(s.ties_fnv)
        .str(" ties_dec_fnv=")
        .hex(s.ties_dec_fnv);
}
