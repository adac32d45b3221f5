//! The kernels' warp and tile logic (`kernels/szp_warp.cuh`) compiled for the CPU with a shim
//! that runs a warp's 32 lanes in order (`kernels/host_shim.h`, `kernels/host_harness.cpp`).
//!
//! These functions execute the code the GPU runs — quantization, deltas (seeded by the block's
//! head in the block-head layout), the warp width reduction, word-level packing, head trailers,
//! the tile scan, the decoupled look-back's combine step, the block-head group walk, the warp
//! decoders and the warp-parallel chunk CRC (sealing and verification) — tile after tile and
//! warp after warp, and wrap it with the same plan step and the same host/device split of the
//! archive validation as [`crate::Gpu`]. They exist to test that logic byte for byte against
//! fzpack-core on machines without a GPU; they are not a fast CPU codec.
//!
//! What they cannot exercise: concurrent tiles and warps, the look-back's spinning on
//! unpublished predecessors, the real shuffle/reduce intrinsics and memory ordering, NVRTC code
//! generation (FMA contraction is off there as here) — those only a GPU run shows.

use fzpack_core::szp::{self, Config, DType, HEADER_LEN, SzpFloat, blocks};

use crate::{Planned, Result, Stats, frame, max_abs_arg, plan_from_stats};

unsafe extern "C" {
    fn fzh_encode_f32(
        x: *const f32,
        n: u64,
        bs: u32,
        group: u64,
        shift: u32,
        eb: f64,
        bound: f64,
        strict: i32,
        archive: *mut u8,
        payload: *mut u64,
        viol: *mut u64,
        chunk_off: *mut u64,
    );
    fn fzh_encode_f64(
        x: *const f64,
        n: u64,
        bs: u32,
        group: u64,
        shift: u32,
        eb: f64,
        bound: f64,
        strict: i32,
        archive: *mut u8,
        payload: *mut u64,
        viol: *mut u64,
        chunk_off: *mut u64,
    );
    fn fzh_decode_f32(
        archive: *const u8,
        n: u64,
        bs: u32,
        group: u64,
        shift: u32,
        eb: f64,
        goff: *const u64,
        out: *mut f32,
        chunk_off: *mut u64,
    );
    fn fzh_decode_f64(
        archive: *const u8,
        n: u64,
        bs: u32,
        group: u64,
        shift: u32,
        eb: f64,
        goff: *const u64,
        out: *mut f64,
        chunk_off: *mut u64,
    );
    fn fzh_dec_walk(
        archive: *const u8,
        n: u64,
        bs: u32,
        group: u64,
        shift: u32,
        avail: u64,
        goff: *mut u64,
        chunk_off: *mut u64,
        body_len: *mut u64,
    ) -> u32;
    fn fzh_stats_f32(x: *const f32, n: u64, max_abs: f64, f3: *mut f64, i2: *mut u64);
    fn fzh_stats_f64(x: *const f64, n: u64, max_abs: f64, f3: *mut f64, i2: *mut u64);
    fn fzh_lookback(status: *const u64, tile: i64) -> u64;
    fn fzh_tile_scan(costs: *mut u64, count: i32) -> u64;
    fn fzh_crc_chunk(u: u32, widths: *const u8, nw: u64, body: *const u8, nbody: u64) -> u32;
    fn fzh_seal(
        widths: *const u8,
        nb: u64,
        shift: u32,
        body: *const u8,
        chunk_off: *const u64,
        body_len: u64,
        sums: *mut u8,
    );
}

/// The archive geometry the kernels take: values, block size, head group (0: stage layout),
/// chunk shift, quantizer bound.
#[derive(Clone, Copy, Debug)]
#[doc(hidden)]
pub struct Geom {
    pub n: usize,
    pub bs: u32,
    pub group: usize,
    pub shift: u8,
    pub eb: f64,
}

impl Geom {
    fn blocks(&self) -> usize {
        self.n.div_ceil(self.bs.max(1) as usize)
    }
    fn chunks(&self) -> usize {
        self.blocks().div_ceil(1usize << self.shift.min(31))
    }
}

/// The element types the harness handles (f32, f64).
pub trait EmuFloat: SzpFloat + Default {
    #[doc(hidden)]
    fn stats(x: &[Self], max_abs: f64) -> Stats;
    #[doc(hidden)]
    fn encode(
        x: &[Self],
        plan: &szp::Plan,
        archive: &mut [u8],
        chunk_off: &mut [u64],
    ) -> (u64, u64);
    #[doc(hidden)]
    fn decode(padded: &[u8], g: &Geom, goff: &[u64], out: &mut [Self], chunk_off: &mut [u64]);
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
            fn encode(
                x: &[Self],
                plan: &szp::Plan,
                archive: &mut [u8],
                chunk_off: &mut [u64],
            ) -> (u64, u64) {
                assert!(
                    archive.len()
                        >= szp::max_compressed_len(x.len(), plan.block_size, plan.dtype)
                            .unwrap_or(usize::MAX)
                );
                assert!(chunk_off.len() >= plan.sums_len() / 4);
                let (mut payload, mut viol) = (0u64, u64::MAX);
                // SAFETY: `archive` holds max_compressed_len bytes (asserted), the most the harness writes (52 + nb + Σ cost + trailers <= 52 + 10·nb + 8n); `chunk_off` has a slot per chunk (asserted); `x` is valid for its length.
                unsafe {
                    $enc(
                        x.as_ptr(),
                        x.len() as u64,
                        plan.block_size,
                        plan.head_group() as u64,
                        u32::from(plan.chunk_shift()),
                        plan.quant_eb,
                        plan.bound,
                        i32::from(plan.strict),
                        archive.as_mut_ptr(),
                        &mut payload,
                        &mut viol,
                        chunk_off.as_mut_ptr(),
                    )
                };
                (payload, viol)
            }
            fn decode(
                padded: &[u8],
                g: &Geom,
                goff: &[u64],
                out: &mut [Self],
                chunk_off: &mut [u64],
            ) {
                assert!(out.len() >= g.n && chunk_off.len() >= g.chunks());
                assert!(g.group == 0 || goff.len() >= g.blocks().div_ceil(g.group));
                // SAFETY: `padded` is an archive validated as the device path validates it (frame, body walk, exact length) plus 8 zero bytes, so every aligned word read the decoder makes is inside it; `out` has `n` slots, `chunk_off` one per chunk and `goff` one per head group (asserted).
                unsafe {
                    $dec(
                        padded.as_ptr(),
                        g.n as u64,
                        g.bs,
                        g.group as u64,
                        u32::from(g.shift),
                        g.eb,
                        goff.as_ptr(),
                        out.as_mut_ptr(),
                        chunk_off.as_mut_ptr(),
                    )
                };
            }
        }
    };
}

emu_float!(f32, fzh_stats_f32, fzh_encode_f32, fzh_decode_f32);
emu_float!(f64, fzh_stats_f64, fzh_encode_f64, fzh_decode_f64);

/// Compresses `input` with the kernels' logic on the CPU: the archive fzpack-core writes, or the
/// error it reports. Both layouts; the chunk CRCs come from the device sealing pass's logic
/// (`fz_crc_chunk` over the chunk offsets the encoder recorded), not from core.
pub fn compress<T: EmuFloat>(input: &[T], cfg: &Config) -> Result<Vec<u8>> {
    crate::refuse_interp(cfg)?;
    szp::blocks::check_config(cfg)?;
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
    let mut chunk_off = vec![u64::MAX; plan.sums_len() / 4];
    let (payload, viol) = if input.is_empty() {
        (0, u64::MAX)
    } else {
        T::encode(input, &plan, &mut archive, &mut chunk_off)
    };
    if viol != u64::MAX {
        return Err(szp::Error::BoundViolated {
            index: viol as usize,
        }
        .into());
    }
    // Format 2: the chunk CRCs follow the body, sealed as the device pass does.
    let end = plan.payload_offset() + payload as usize;
    let slen = plan.sums_len();
    archive.truncate(end + slen);
    let (body, sums) = archive.split_at_mut(end);
    seal(
        &body[HEADER_LEN..plan.payload_offset()],
        &body[plan.payload_offset()..],
        plan.chunk_shift(),
        &chunk_off,
        sums,
    );
    Ok(archive)
}

/// The device sealing pass on the CPU: chunk `u`'s CRC over its width bytes and the body bytes
/// `[chunk_off[u], chunk_off[u + 1])` (the last chunk ends at the body's end), into `sums`.
pub fn seal(widths: &[u8], body: &[u8], shift: u8, chunk_off: &[u64], sums: &mut [u8]) {
    let nu = widths.len().div_ceil(1usize << shift.min(31));
    assert!(chunk_off.len() >= nu && sums.len() >= 4 * nu);
    assert!(
        chunk_off[..nu]
            .windows(2)
            .all(|p| p[0] <= p[1] && p[1] <= body.len() as u64)
            && chunk_off.first().is_none_or(|&o| o <= body.len() as u64),
        "chunk offsets must rise within the body"
    );
    // SAFETY: every chunk range [chunk_off[u], next) lies inside `body` (asserted), the widths of chunk u inside `widths`, and `sums` has 4 bytes per chunk (asserted).
    unsafe {
        fzh_seal(
            widths.as_ptr(),
            widths.len() as u64,
            u32::from(shift),
            body.as_ptr(),
            chunk_off.as_ptr(),
            body.len() as u64,
            sums.as_mut_ptr(),
        )
    };
}

/// The warp-parallel CRC of checksum chunk `u` (index, width bytes, body bytes): what the
/// device sealing and verification passes compute per chunk.
pub fn crc_chunk(u: u32, widths: &[u8], body: &[u8]) -> u32 {
    // SAFETY: both slices are valid for their lengths.
    unsafe {
        fzh_crc_chunk(
            u,
            widths.as_ptr(),
            widths.len() as u64,
            body.as_ptr(),
            body.len() as u64,
        )
    }
}

/// Decompresses an archive with the kernels' decoders on the CPU, either layout, validated as
/// the device path validates it: the header and lengths on the host (`frame`), the body measured
/// by the kernels' logic (block-head layout: the group walk; stage layout: the sum of block
/// costs, as `szp_dec_check`), the error chosen as core's parse chooses it; then the decode,
/// then every chunk CRC recomputed by the device verification logic over the chunk offsets the
/// walk or the decoder recorded (a mismatch is core's `ChecksumMismatch` for the first bad
/// chunk).
pub fn decompress<T: EmuFloat>(archive: &[u8]) -> Result<Vec<T>> {
    let f = frame::frame(&archive[..archive.len().min(HEADER_LEN)], archive.len())?;
    let g = Geom {
        n: f.n,
        bs: f.header.block_size,
        group: f.group(),
        shift: f.header.chunk_shift,
        eb: f.header.quant_eb,
    };
    let poff = f.payload_offset();
    let widths = &archive[HEADER_LEN..poff];
    let mut chunk_off = vec![0u64; f.chunks()];
    let mut goff = vec![
        0u64;
        if g.group > 0 {
            f.nb.div_ceil(g.group)
        } else {
            0
        }
    ];
    let measured = if g.group > 0 {
        let mut len = 0u64;
        // SAFETY: the walk reads the nb width bytes and body bytes below `avail` = f.rest (the archive's bytes after its widths), writes one offset per group into `goff` and per chunk into `chunk_off` (sized so).
        let bad = unsafe {
            fzh_dec_walk(
                archive.as_ptr(),
                g.n as u64,
                g.bs,
                g.group as u64,
                u32::from(g.shift),
                f.rest as u64,
                goff.as_mut_ptr(),
                chunk_off.as_mut_ptr(),
                &mut len,
            )
        };
        frame::Body::from_walk(u64::from(bad), len)
    } else {
        // szp_dec_check: every width <= 64, the sum of the block costs.
        let bs = g.bs as usize;
        if widths.iter().any(|&w| w > 64) {
            frame::Body::Width
        } else {
            frame::Body::Len(
                widths
                    .iter()
                    .enumerate()
                    .map(|(b, &w)| {
                        let len = g.n.saturating_sub(b * bs).min(bs) as u64;
                        (len * u64::from(w)).div_ceil(8)
                    })
                    .sum(),
            )
        }
    };
    let body_len = frame::body_check(&f, measured)?;
    if f.header.dtype != T::DTYPE {
        return Err(szp::Error::DTypeMismatch.into());
    }
    let mut padded = Vec::with_capacity(archive.len() + 8);
    padded.extend_from_slice(archive);
    padded.extend_from_slice(&[0u8; 8]);
    let mut out = vec![T::default(); f.n];
    if f.n > 0 {
        T::decode(&padded, &g, &goff, &mut out, &mut chunk_off);
    }
    let body = &archive[poff..poff + body_len];
    let stored = &archive[poff + body_len..];
    let mut sums = vec![0u8; f.sums];
    seal(widths, body, g.shift, &chunk_off, &mut sums);
    if let Some(u) = sums
        .chunks_exact(4)
        .zip(stored.chunks_exact(4))
        .position(|(a, b)| a != b)
    {
        return Err(szp::Error::ChecksumMismatch {
            what: "blocks",
            chunk: u as u32,
        }
        .into());
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
