//! The kernels' warp and tile logic (`kernels/szp_warp.cuh`) compiled for the CPU with a shim
//! that runs a warp's 32 lanes in order (`kernels/host_shim.h`, `kernels/host_harness.cpp`).
//!
//! These functions execute the code the GPU runs — quantization, deltas, the warp width
//! reduction, word-level packing, the tile scan, the decoupled look-back's combine step and the
//! warp decoder — tile after tile and warp after warp, and wrap it with the same plan step as
//! [`crate::Gpu`]. They exist to test that logic byte for byte against fzpack-core on machines
//! without a GPU; they are not a fast CPU codec.
//!
//! What they cannot exercise: concurrent tiles and warps, the look-back's spinning on
//! unpublished predecessors, the real shuffle/reduce intrinsics and memory ordering, NVRTC code
//! generation (FMA contraction is off there as here) — those only a GPU run shows.

use fzpack_core::szp::{self, Config, DType, HEADER_LEN, SzpFloat, blocks};

use crate::{Planned, Result, Stats, max_abs_arg, plan_from_stats};

unsafe extern "C" {
    fn fzh_encode_f32(
        x: *const f32,
        n: u64,
        bs: u32,
        eb: f64,
        bound: f64,
        strict: i32,
        archive: *mut u8,
        payload: *mut u64,
        viol: *mut u64,
    );
    fn fzh_encode_f64(
        x: *const f64,
        n: u64,
        bs: u32,
        eb: f64,
        bound: f64,
        strict: i32,
        archive: *mut u8,
        payload: *mut u64,
        viol: *mut u64,
    );
    fn fzh_decode_f32(archive: *const u8, n: u64, bs: u32, eb: f64, out: *mut f32);
    fn fzh_decode_f64(archive: *const u8, n: u64, bs: u32, eb: f64, out: *mut f64);
    fn fzh_stats_f32(x: *const f32, n: u64, max_abs: f64, f3: *mut f64, i2: *mut u64);
    fn fzh_stats_f64(x: *const f64, n: u64, max_abs: f64, f3: *mut f64, i2: *mut u64);
    fn fzh_lookback(status: *const u64, tile: i64) -> u64;
    fn fzh_tile_scan(costs: *mut u64, count: i32) -> u64;
}

/// The element types the harness handles (f32, f64).
pub trait EmuFloat: SzpFloat + Default {
    #[doc(hidden)]
    fn stats(x: &[Self], max_abs: f64) -> Stats;
    #[doc(hidden)]
    fn encode(x: &[Self], plan: &szp::Plan, archive: &mut [u8]) -> (u64, u64);
    #[doc(hidden)]
    fn decode(padded: &[u8], n: usize, bs: u32, eb: f64, out: &mut [Self]);
}

macro_rules! emu_float {
    ($t:ty, $stats:ident, $enc:ident, $dec:ident) => {
        impl EmuFloat for $t {
            fn stats(x: &[Self], max_abs: f64) -> Stats {
                let mut f = [0f64; 3];
                let mut i = [0u64; 2];
                // SAFETY: `x` is a valid slice of `x.len()` values; `f` and `i` have the 3 and 2 slots the harness writes.
                unsafe {
                    $stats(
                        x.as_ptr(),
                        x.len() as u64,
                        max_abs,
                        f.as_mut_ptr(),
                        i.as_mut_ptr(),
                    )
                };
                Stats {
                    lo: f[0],
                    hi: f[1],
                    mag: f[2],
                    first_nonfinite: i[0],
                    first_over: i[1],
                }
            }
            fn encode(x: &[Self], plan: &szp::Plan, archive: &mut [u8]) -> (u64, u64) {
                assert!(
                    archive.len()
                        >= szp::max_compressed_len(x.len(), plan.block_size, plan.dtype)
                            .unwrap_or(usize::MAX)
                );
                let (mut payload, mut viol) = (0u64, u64::MAX);
                // SAFETY: `archive` holds max_compressed_len bytes (asserted), the most the harness writes (48 + nb + Σ cost <= 48 + nb + 8n); `x` is valid for its length.
                unsafe {
                    $enc(
                        x.as_ptr(),
                        x.len() as u64,
                        plan.block_size,
                        plan.quant_eb,
                        plan.bound,
                        i32::from(plan.strict),
                        archive.as_mut_ptr(),
                        &mut payload,
                        &mut viol,
                    )
                };
                (payload, viol)
            }
            fn decode(padded: &[u8], n: usize, bs: u32, eb: f64, out: &mut [Self]) {
                assert!(out.len() >= n);
                // SAFETY: `padded` is a parsed (validated) archive plus 8 zero bytes, so every aligned word read the decoder makes is inside it; `out` has `n` slots.
                unsafe { $dec(padded.as_ptr(), n as u64, bs, eb, out.as_mut_ptr()) };
            }
        }
    };
}

emu_float!(f32, fzh_stats_f32, fzh_encode_f32, fzh_decode_f32);
emu_float!(f64, fzh_stats_f64, fzh_encode_f64, fzh_decode_f64);

/// Compresses `input` with the kernels' logic on the CPU: the archive fzpack-core writes, or the
/// error it reports.
pub fn compress<T: EmuFloat>(input: &[T], cfg: &Config) -> Result<Vec<u8>> {
    szp::blocks::check_config(cfg)?;
    if cfg.layout != szp::Layout::Fzgm {
        // The kernels write the stage layout only (the block-head layout is CPU-only so far).
        return Err(szp::Error::UnsupportedLayout {
            layout: cfg.layout.code(),
        }
        .into());
    }
    let stats = T::stats(input, max_abs_arg(cfg));
    let plan = match plan_from_stats(T::DTYPE, cfg, input.len(), &stats)? {
        Planned::Ok(p) => p,
        Planned::LevelOverflow(two_eb) => {
            let index = input
                .iter()
                .position(|x| x.to_f64().abs() / two_eb >= 4_611_686_018_427_387_904.0)
                .unwrap_or(0);
            return Err(szp::Error::LevelOverflow { index }.into());
        }
    };
    let max = szp::max_compressed_len(input.len(), cfg.block_size, T::DTYPE)
        .ok_or(szp::Error::OutputTooSmall { needed: usize::MAX })?;
    let mut archive = vec![0xA5u8; max]; // dirty on purpose: every byte kept must be written
    blocks::write_header(&plan, &mut archive)?;
    let (payload, viol) = if input.is_empty() {
        (0, u64::MAX)
    } else {
        T::encode(input, &plan, &mut archive)
    };
    if viol != u64::MAX {
        return Err(szp::Error::BoundViolated {
            index: viol as usize,
        }
        .into());
    }
    // Format 2: the chunk CRCs follow the payload (the kernels leave them to the host).
    let end = plan.payload_offset() + payload as usize;
    let slen = plan.sums_len();
    archive.truncate(end + slen);
    let (body, sums) = archive.split_at_mut(end);
    let widths = &body[HEADER_LEN..plan.payload_offset()];
    let payload = &body[plan.payload_offset()..];
    let bs = plan.block_size as usize;
    blocks::seal(widths, payload, plan.n, bs, plan.chunk_shift(), sums);
    Ok(archive)
}

/// Decompresses an archive with the kernels' decoder on the CPU (validation as core's).
pub fn decompress<T: EmuFloat>(archive: &[u8]) -> Result<Vec<T>> {
    let view = blocks::parse(archive)?;
    if view.header.version != szp::FORMAT_VERSION {
        // The kernels read format 2's 52-byte header layout only.
        return Err(szp::Error::UnsupportedVersion {
            version: view.header.version,
        }
        .into());
    }
    if view.header.layout != szp::LAYOUT_FZGM {
        // The kernels read the stage layout only.
        return Err(szp::Error::UnsupportedLayout {
            layout: view.header.layout,
        }
        .into());
    }
    if view.header.dtype != T::DTYPE {
        return Err(szp::Error::DTypeMismatch.into());
    }
    let mut padded = Vec::with_capacity(archive.len() + 8);
    padded.extend_from_slice(archive);
    padded.extend_from_slice(&[0u8; 8]);
    let mut out = vec![T::default(); view.n];
    if view.n > 0 {
        T::decode(
            &padded,
            view.n,
            view.header.block_size,
            view.header.quant_eb,
            &mut out,
        );
    }
    Ok(out)
}

/// The statistics pass alone: `(min, max, max|x|, first non-finite, first above max_abs)`.
pub fn stats<T: EmuFloat>(input: &[T], max_abs: Option<f64>) -> (f64, f64, f64, u64, u64) {
    let s = T::stats(input, max_abs.unwrap_or(-1.0));
    (s.lo, s.hi, s.mag, s.first_nonfinite, s.first_over)
}

/// The decoupled look-back combine step over caller-made status words (`status[i]` for every
/// `i < tile`, each `FLAG_AGGREGATE | bytes` or `FLAG_INCLUSIVE | bytes`): the exclusive prefix
/// of tile `tile`.
pub fn lookback(status: &[u64], tile: usize) -> u64 {
    assert!(tile <= status.len());
    assert!(
        status[..tile].iter().all(|s| s >> 62 != 0),
        "every predecessor must be published (the host cannot spin)"
    );
    // SAFETY: the harness reads status[0..tile), in bounds (asserted).
    unsafe { fzh_lookback(status.as_ptr(), tile as i64) }
}

/// Status flag: the tile's own byte count.
pub const FLAG_AGGREGATE: u64 = 1 << 62;
/// Status flag: the inclusive prefix through the tile.
pub const FLAG_INCLUSIVE: u64 = 2 << 62;

/// The tile scan: exclusive prefix sums of `costs` (at most 1024) in place; returns the total.
pub fn tile_scan(costs: &mut [u64]) -> u64 {
    assert!(costs.len() <= 1024);
    // SAFETY: the harness reads and writes costs[0..len), len <= 1024 (asserted).
    unsafe { fzh_tile_scan(costs.as_mut_ptr(), costs.len() as i32) }
}

/// The element type's [`DType`].
pub fn dtype_of<T: EmuFloat>() -> DType {
    T::DTYPE
}
