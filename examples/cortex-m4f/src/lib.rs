//! The capture loop of the example, independent of the board: samples arrive one at a time;
//! every 128 form an SZp block pushed into the streaming encoder, every 42 a PERNIX block
//! (64 bytes, 12 bits per value) appended to the PERNIX buffer. `src/main.rs` runs it on a
//! Cortex-M4F with static buffers (and on the host, to print the same report line).
#![no_std]

use fzpack_core::pernix::{self, Backend, BitWidth, BlockSize, Dispatcher};
use fzpack_core::szp::{self, Config, StreamEncoder};

/// Samples per capture.
pub const N: usize = 4096;
/// SZp values per block (the default block size).
pub const SZP_BLOCK: usize = 128;
/// The ADC's full scale: every sample satisfies `|x| <= FULL_SCALE` volts.
pub const FULL_SCALE: f32 = 8.0;
/// SZp absolute error bound, volts.
pub const SZP_EB: f64 = 1e-3;
/// SZp archive buffer: at least `StreamEncoder::max_len(N, &config())` (checked at run time).
pub const SZP_CAP: usize = 8192;
/// PERNIX bits per value and values per 64-byte block (`pernix::elements_per_block`).
pub const PERNIX_BITS: u8 = 12;
/// PERNIX values per block at 12 bits in 64 bytes.
pub const PERNIX_EPB: usize = 42;
/// PERNIX blocks for `N` samples (the last one zero-padded).
pub const PERNIX_BLOCKS: usize = N.div_ceil(PERNIX_EPB);

/// The SZp config: ABS bound and the ADC's full scale (what streaming needs).
pub const fn config() -> Config {
    Config::abs(SZP_EB).with_max_abs(FULL_SCALE as f64)
}

/// A sensor-like sample source (two oscillators, a step, filtered noise; every sample an
/// integer times 2^-12, so identical on every IEEE target).
pub struct Sensor {
    i: u32,
    lcg: u32,
    noise: i32,
}

impl Sensor {
    /// A sensor at sample 0.
    pub const fn new() -> Sensor {
        Sensor {
            i: 0,
            lcg: 0x2545_f491,
            noise: 0,
        }
    }

    /// The next sample, volts.
    pub fn sample(&mut self) -> f32 {
        fn wave(phase: u32) -> i32 {
            let half = (phase & 0x7fff) as i32;
            let v = (half * (0x8000 - half)) >> 14;
            if phase & 0x8000 != 0 { -v } else { v }
        }
        let i = self.i;
        self.i += 1;
        self.lcg = self.lcg.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let r = ((self.lcg >> 16) as i32) - 0x8000;
        self.noise = self.noise - (self.noise >> 3) + (r >> 7);
        let step = if (1500..2600).contains(&i) { 4096 } else { 0 };
        let v = wave(i.wrapping_mul(37))
            + (wave(i.wrapping_mul(1021)) >> 2)
            + self.noise.clamp(-2048, 2048)
            + step;
        v as f32 * (1.0 / 4096.0)
    }
}

impl Default for Sensor {
    fn default() -> Self {
        Sensor::new()
    }
}

/// What a capture produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// SZp archive length, bytes.
    pub szp_len: usize,
    /// FNV-1a of the SZp archive.
    pub szp_fnv: u64,
    /// FNV-1a of the PERNIX blocks.
    pub pernix_fnv: u64,
    /// Largest SZp reconstruction error, in units of 2^-40 V.
    pub szp_max_err: u64,
}

/// Why a capture failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// An SZp call failed.
    Szp(szp::Error),
    /// A PERNIX call failed.
    Pernix(pernix::Error),
    /// A reconstruction missed the bound.
    Bound,
}

impl From<szp::Error> for Failure {
    fn from(e: szp::Error) -> Self {
        Failure::Szp(e)
    }
}

impl From<pernix::Error> for Failure {
    fn from(e: pernix::Error) -> Self {
        Failure::Pernix(e)
    }
}

/// 64-bit FNV-1a of `bytes`.
pub fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Captures `N` samples from `sensor`, streaming SZp into `szp_out` and PERNIX blocks into
/// `pernix_out` (`64 · PERNIX_BLOCKS` bytes); then decodes the SZp archive into `decoded`
/// (`N` values) and checks the bound.
pub fn capture(
    sensor: &mut Sensor,
    szp_out: &mut [u8],
    pernix_out: &mut [u8],
    decoded: &mut [f32],
) -> Result<Report, Failure> {
    let cfg = config();
    if StreamEncoder::<f32>::max_len(N, &cfg)? > szp_out.len() {
        return Err(Failure::Szp(szp::Error::OutputTooSmall {
            needed: StreamEncoder::<f32>::max_len(N, &cfg)?,
        }));
    }
    let mut enc = StreamEncoder::<f32>::new(szp_out, N, &cfg)?;
    let bits = BitWidth::new(PERNIX_BITS)?;
    let pernix = Dispatcher::new(Backend::Auto)?;
    let inv = pernix::compression_scale_from_bmax(FULL_SCALE, bits)?;

    let mut szp_block = [0f32; SZP_BLOCK];
    let mut pernix_block = [0f32; PERNIX_EPB];
    let mut pernix_blocks = pernix_out.chunks_exact_mut(64);
    let (mut s, mut p) = (0usize, 0usize);
    for t in 0..N {
        let x = sensor.sample();
        // SZp: a block as soon as it is full (the last one may be shorter).
        if let Some(slot) = szp_block.get_mut(s) {
            *slot = x;
            s += 1;
        }
        if s == enc.next_block_len() || t + 1 == N {
            enc.push_block(szp_block.get(..s).unwrap_or_default())?;
            s = 0;
        }
        // PERNIX: 42 values per 64-byte block; the last block zero-padded.
        if let Some(slot) = pernix_block.get_mut(p) {
            *slot = x;
            p += 1;
        }
        if p == PERNIX_EPB || t + 1 == N {
            pernix_block.get_mut(p..).unwrap_or_default().fill(0.0);
            if let Some(out) = pernix_blocks.next() {
                pernix.compress_block(bits, BlockSize::B64, &pernix_block, inv, out)?;
            }
            p = 0;
        }
    }
    let szp_len = enc.finish()?;
    let pernix_fnv = fnv(pernix_out);

    // Read back: every sample within the bound.
    let archive = szp_out.get(..szp_len).unwrap_or_default();
    szp::decompress(archive, decoded)?;
    let mut again = Sensor::new();
    let mut szp_max_err = 0u64;
    for &y in decoded.iter().take(N) {
        let d = f64::from(again.sample()) - f64::from(y);
        let d = if d < 0.0 { -d } else { d };
        if d > SZP_EB {
            return Err(Failure::Bound);
        }
        szp_max_err = szp_max_err.max((d * 1_099_511_627_776.0) as u64);
    }
    Ok(Report {
        szp_len,
        szp_fnv: fnv(archive),
        pernix_fnv,
        szp_max_err,
    })
}
