//! The cudarc executor: context, cached module, launches.

use std::sync::{Arc, Mutex};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, CudaView, CudaViewMut,
    DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits, sys,
};
use fzpack_core::szp::{self, Config, DType, HEADER_LEN, SzpFloat, blocks};

use crate::{
    Error, Planned, Result, Stats, WARPS, decode_variant, driver_available, encode_variant, frame,
    max_abs_arg, nvrtc_available, plan_from_stats,
};

/// Threads per CTA in every kernel.
const THREADS: u32 = WARPS * 32;

/// Element types the GPU path handles (f32, f64). Sealed.
pub trait GpuFloat: SzpFloat + DeviceRepr + ValidAsZeroBits + Default + sealed::Sealed {
    #[doc(hidden)]
    const SUFFIX: &'static str;
}
impl GpuFloat for f32 {
    const SUFFIX: &'static str = "f32";
}
impl GpuFloat for f64 {
    const SUFFIX: &'static str = "f64";
}
mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

fn drv(e: cudarc::driver::DriverError) -> Error {
    Error::Driver(format!("{e:?}"))
}

/// One compiled module per CUDA context (device ordinal; cudarc's primary contexts).
type ModuleCache = Mutex<Vec<(usize, Arc<CudaContext>, Arc<CudaModule>)>>;
static MODULES: ModuleCache = Mutex::new(Vec::new());

fn load_module(ctx: &Arc<CudaContext>) -> Result<Arc<CudaModule>> {
    let mut cache = MODULES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, _, m)) = cache
        .iter()
        .find(|(o, c, _)| *o == ctx.ordinal() && Arc::ptr_eq(c, ctx))
    {
        return Ok(m.clone());
    }
    let ptx = if let Ok(path) = std::env::var("FZPACK_GPU_PTX") {
        let src = std::fs::read_to_string(&path)
            .map_err(|e| Error::Compile(format!("FZPACK_GPU_PTX={path}: {e}")))?;
        cudarc::nvrtc::Ptx::from_src(src)
    } else {
        if !nvrtc_available() {
            return Err(Error::NoNvrtc);
        }
        let (major, minor) = ctx.compute_capability().map_err(drv)?;
        let src = crate::compile_ptx(&format!("compute_{major}{minor}"))
            .or_else(|_| crate::compile_ptx("compute_80"))?;
        cudarc::nvrtc::Ptx::from_src(src)
    };
    let module = ctx.load_module(ptx).map_err(drv)?;
    cache.push((ctx.ordinal(), ctx.clone(), module.clone()));
    Ok(module)
}

/// A CUDA device with the SZp kernels loaded, and the stream its work goes to.
///
/// Every method enqueues on [`Gpu::stream`]; the ones that return a size wait for the few bytes
/// they read back (statistics, payload size), not for unrelated work.
#[derive(Clone)]
pub struct Gpu {
    ctx: Arc<CudaContext>,
    module: Arc<CudaModule>,
    stream: Arc<CudaStream>,
    sms: u32,
}

impl core::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.ctx.ordinal())
            .field("sms", &self.sms)
            .finish()
    }
}

impl Gpu {
    /// Opens device `ordinal` (its primary context), compiles (or reuses) the kernels and uses
    /// the context's default stream. Errors, never panics, without a driver, NVRTC or device.
    pub fn new(ordinal: usize) -> Result<Gpu> {
        if !driver_available() {
            return Err(Error::NoDriver);
        }
        let count = CudaContext::device_count().map_err(|_| Error::NoDevice)?;
        if count <= 0 || ordinal >= count as usize {
            return Err(Error::NoDevice);
        }
        let ctx = CudaContext::new(ordinal).map_err(drv)?;
        let module = load_module(&ctx)?;
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(drv)?
            .max(1) as u32;
        let stream = ctx.default_stream();
        Ok(Gpu {
            ctx,
            module,
            stream,
            sms,
        })
    }

    /// The same device and module on a new stream.
    pub fn with_new_stream(&self) -> Result<Gpu> {
        let stream = self.ctx.new_stream().map_err(drv)?;
        Ok(Gpu {
            stream,
            ..self.clone()
        })
    }

    /// The same device and module on `stream` (which must belong to this context).
    pub fn with_stream(&self, stream: Arc<CudaStream>) -> Gpu {
        Gpu {
            stream,
            ..self.clone()
        }
    }

    /// The stream work is enqueued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    fn func(&self, name: &str) -> Result<CudaFunction> {
        self.module.load_function(name).map_err(drv)
    }

    fn grid_stride_blocks(&self, n: usize) -> u32 {
        let want = n.div_ceil(THREADS as usize).max(1);
        want.min(self.sms as usize * 8) as u32
    }

    fn stats<T: GpuFloat>(&self, input: &CudaView<'_, T>, max_abs: f64) -> Result<Stats> {
        let n = input.len() as u64;
        let grid = self.grid_stride_blocks(input.len());
        let mut partials = self
            .stream
            .alloc_zeros::<u64>(5 * grid as usize)
            .map_err(drv)?;
        let mut rec = self.stream.alloc_zeros::<u64>(5).map_err(drv)?;
        let f = self.func(&format!("szp_stats_{}", T::SUFFIX))?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(input).arg(&n).arg(&max_abs).arg(&mut partials);
        // SAFETY: szp_stats_* takes (const T*, u64 n, double, u64* partials[5·grid]); `input` has n elements and `partials` 5·grid u64, the grid launched here.
        unsafe { b.launch(cfg1(grid)) }.map_err(drv)?;
        let fin = self.func("szp_stats_final")?;
        let mut b = self.stream.launch_builder(&fin);
        b.arg(&partials).arg(&grid).arg(&mut rec);
        // SAFETY: szp_stats_final takes (const u64* partials, u32 count, u64* out[5]); the partials buffer holds `grid` records of 5 and `rec` has 5 slots.
        unsafe { b.launch(cfg1(1)) }.map_err(drv)?;
        let r = self.stream.clone_dtoh(&rec).map_err(drv)?;
        Ok(Stats {
            lo: f64::from_bits(r[0]),
            hi: f64::from_bits(r[1]),
            mag: f64::from_bits(r[2]),
            first_nonfinite: r[3],
            first_over: r[4],
        })
    }

    /// Compresses a device array into a device archive buffer of at least
    /// [`szp::max_compressed_len`] bytes; returns the archive length (the bytes
    /// `out[..len]` are exactly fzpack-core's archive, either block layout). Only the
    /// statistics (40 bytes) and the payload size and strict check (16 bytes) are copied to the
    /// host: the chunk CRCs are computed on the device (`szp_crc_chunks`, after the encode
    /// kernel, from the chunk offsets it recorded).
    pub fn compress_device<T: GpuFloat>(
        &self,
        input: &CudaView<'_, T>,
        cfg: &Config,
        out: &mut CudaViewMut<'_, u8>,
    ) -> Result<usize> {
        crate::refuse_interp(cfg)?;
        szp::blocks::check_config(cfg)?;
        let n = input.len();
        let max = szp::max_compressed_len(n, cfg.block_size, T::DTYPE)
            .ok_or(szp::Error::OutputTooSmall { needed: usize::MAX })?;
        if out.len() < max {
            return Err(szp::Error::OutputTooSmall { needed: max }.into());
        }
        let stats = if n == 0 {
            Stats {
                lo: f64::INFINITY,
                hi: f64::NEG_INFINITY,
                mag: 0.0,
                first_nonfinite: u64::MAX,
                first_over: u64::MAX,
            }
        } else {
            self.stats(input, max_abs_arg(cfg))?
        };
        let plan = match plan_from_stats(T::DTYPE, cfg, n, &stats)? {
            Planned::Ok(p) => p,
            Planned::LevelOverflow(two_eb) => {
                let index = self.first_level_overflow(input, two_eb)?;
                return Err(szp::Error::LevelOverflow { index }.into());
            }
        };
        let mut header = [0u8; HEADER_LEN];
        blocks::write_header(&plan, &mut header)?;
        self.stream
            .memcpy_htod(&header, &mut out.slice_mut(0..HEADER_LEN))
            .map_err(drv)?;
        if n == 0 {
            return Ok(HEADER_LEN);
        }
        let bs = cfg.block_size;
        let nb = plan.blocks() as u64;
        let (_, k, suffix) = encode_variant(bs);
        let tiles = nb.div_ceil(u64::from(WARPS * k));
        let grid = u32::try_from(tiles)
            .ok()
            .filter(|&t| t <= i32::MAX as u32)
            .ok_or(Error::TooLarge)?;
        let mut status = self
            .stream
            .alloc_zeros::<u64>(tiles as usize)
            .map_err(drv)?;
        let mut scratch = self.stream.clone_htod(&[0u64, u64::MAX]).map_err(drv)?;
        let chunks = plan.sums_len() / 4;
        let mut chunk_off = self.stream.alloc_zeros::<u64>(chunks.max(1)).map_err(drv)?;
        let f = self.func(&format!("szp_encode_{}_{suffix}", T::SUFFIX))?;
        let n64 = n as u64;
        let group = plan.head_group() as u64;
        let shift = u32::from(plan.chunk_shift());
        let strict = i32::from(plan.strict);
        let mut b = self.stream.launch_builder(&f);
        b.arg(input)
            .arg(&n64)
            .arg(&bs)
            .arg(&group)
            .arg(&shift)
            .arg(&plan.quant_eb)
            .arg(&plan.bound)
            .arg(&strict)
            .arg(&mut *out)
            .arg(&mut status)
            .arg(&mut scratch)
            .arg(&mut chunk_off);
        // SAFETY: szp_encode_* takes (const T* x[n], u64 n, u32 bs, u64 group, u32 shift, double eb, double bound, int strict, u8* archive, u64* status[tiles], u64* scratch[2], u64* chunk_off[chunks]); the archive buffer has max_compressed_len bytes (checked above), the most the kernel writes (trailers included: 10 bytes per block cover width byte, head and trailer byte); chunk_off has a slot per chunk; the grid is one CTA per tile, as the kernel's look-back requires.
        unsafe { b.launch(cfg1(grid)) }.map_err(drv)?;
        // Format 2: the chunk CRCs follow the body, sealed on the device in stream order (the
        // body length is read from scratch[0] there).
        self.crc_chunks(
            &out.as_view(),
            plan.blocks() as u64,
            shift,
            &chunk_off,
            &scratch,
            None,
        )?;
        let r = self.stream.clone_dtoh(&scratch).map_err(drv)?;
        if r[1] != u64::MAX {
            return Err(szp::Error::BoundViolated {
                index: r[1] as usize,
            }
            .into());
        }
        let end = plan.payload_offset() + r[0] as usize;
        Ok(end + plan.sums_len())
    }

    /// Launches `szp_crc_chunks` over an archive on the device: sealing (`mismatch` None:
    /// writes the CRCs after the body) or verification (atomicMin of the first bad chunk into
    /// `mismatch`). `body_len[0]` is the body length (on the device).
    fn crc_chunks(
        &self,
        archive: &CudaView<'_, u8>,
        nb: u64,
        shift: u32,
        chunk_off: &CudaSlice<u64>,
        body_len: &CudaSlice<u64>,
        mismatch: Option<&mut CudaSlice<u64>>,
    ) -> Result<()> {
        let chunks = nb.div_ceil(1u64 << shift);
        if chunks == 0 {
            return Ok(());
        }
        let grid = u32::try_from(chunks.div_ceil(u64::from(WARPS))).map_err(|_| Error::TooLarge)?;
        let f = self.func("szp_crc_chunks")?;
        let mut dummy = None;
        let (verify, mm) = match mismatch {
            Some(m) => (1i32, m),
            None => (
                0i32,
                dummy.insert(self.stream.alloc_zeros::<u64>(1).map_err(drv)?),
            ),
        };
        let mut b = self.stream.launch_builder(&f);
        b.arg(archive)
            .arg(&nb)
            .arg(&shift)
            .arg(chunk_off)
            .arg(body_len)
            .arg(&verify)
            .arg(mm);
        // SAFETY: szp_crc_chunks takes (u8* archive, u64 nb, u32 shift, const u64* chunk_off[chunks], const u64* body_len[1], int verify, u64* mismatch[1]); the archive holds 52 + nb + body + 4·chunks bytes (the encoder's output buffer of max_compressed_len bytes, or a validated archive), chunk_off was filled for every chunk by the kernel that ran before on this stream; one warp per chunk.
        unsafe { b.launch(cfg1(grid)) }.map_err(drv)?;
        Ok(())
    }

    fn first_level_overflow<T: GpuFloat>(
        &self,
        input: &CudaView<'_, T>,
        two_eb: f64,
    ) -> Result<usize> {
        let n = input.len() as u64;
        let mut first = self.stream.clone_htod(&[u64::MAX]).map_err(drv)?;
        let f = self.func(&format!("szp_level_{}", T::SUFFIX))?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(input).arg(&n).arg(&two_eb).arg(&mut first);
        // SAFETY: szp_level_* takes (const T* x[n], u64 n, double, u64* first[1]).
        unsafe { b.launch(cfg1(self.grid_stride_blocks(input.len()))) }.map_err(drv)?;
        let r = self.stream.clone_dtoh(&first).map_err(drv)?;
        Ok(if r[0] == u64::MAX { 0 } else { r[0] as usize })
    }

    /// Decompresses a device archive (exactly the archive's bytes) into `out` (at least `n`
    /// values), either block layout; returns `n`. Validation as fzpack-core's, without copying
    /// the compressed bytes to the host: the header (52 bytes read back) and the lengths on the
    /// host, the width bytes and (block-head layout) the head trailers walked on the device, the
    /// error chosen as core's parse chooses it, then after the decode every chunk CRC checked on
    /// the device (`ChecksumMismatch` for the first bad chunk; `out` then holds unspecified
    /// values, as core's). Format-2 archives only.
    pub fn decompress_device<T: GpuFloat>(
        &self,
        archive: &CudaView<'_, u8>,
        out: &mut CudaViewMut<'_, T>,
    ) -> Result<usize> {
        self.decompress_device_with(archive, out, szp::Verify::Checksums)
    }

    /// [`Gpu::decompress_device`]; with [`szp::Verify::Skip`] neither CRC is checked (every
    /// structural check still runs), for callers that checksum elsewhere (and to measure the
    /// CRC pass's cost).
    pub fn decompress_device_with<T: GpuFloat>(
        &self,
        archive: &CudaView<'_, u8>,
        out: &mut CudaViewMut<'_, T>,
        verify: szp::Verify,
    ) -> Result<usize> {
        let len = archive.len();
        let head = self
            .stream
            .clone_dtoh(&archive.slice(0..len.min(HEADER_LEN)))
            .map_err(drv)?;
        let f = if verify == szp::Verify::Skip {
            frame::frame_with(&head, len, verify)?
        } else {
            frame::frame(&head, len)?
        };
        let header = f.header;
        let bs = header.block_size;
        let nb = f.nb as u64;
        let n = f.n;
        let group = f.group() as u64;
        let shift = u32::from(header.chunk_shift);
        let chunks = f.chunks();
        let mut chunk_off = self.stream.alloc_zeros::<u64>(chunks.max(1)).map_err(drv)?;
        let mut goff = self
            .stream
            .alloc_zeros::<u64>(if group > 0 {
                f.nb.div_ceil(group as usize).max(1)
            } else {
                1
            })
            .map_err(drv)?;
        let mut res = self.stream.alloc_zeros::<u64>(2).map_err(drv)?;
        if group > 0 {
            let fw = self.func("szp_dec_walk")?;
            let avail = f.rest as u64;
            let mut b = self.stream.launch_builder(&fw);
            b.arg(archive)
                .arg(&header.n)
                .arg(&bs)
                .arg(&group)
                .arg(&shift)
                .arg(&avail)
                .arg(&mut goff)
                .arg(&mut chunk_off)
                .arg(&mut res);
            // SAFETY: szp_dec_walk takes (const u8* archive, u64 n, u32 bs, u64 group, u32 shift, u64 avail, u64* goff[groups], u64* chunk_off[chunks], u64* out[2]); it reads the nb width bytes (present: frame checked nb <= len − 52) and body bytes below avail = len − 52 − nb only; goff and chunk_off have a slot per group and chunk.
            unsafe { b.launch(warp1()) }.map_err(drv)?;
        } else if nb > 0 {
            let fc = self.func("szp_dec_check")?;
            let mut b = self.stream.launch_builder(&fc);
            let widths = archive.slice(HEADER_LEN..f.payload_offset());
            b.arg(&widths)
                .arg(&nb)
                .arg(&header.n)
                .arg(&bs)
                .arg(&mut res);
            // SAFETY: szp_dec_check takes (const u8* widths[nb], u64 nb, u64 n, u32 bs, u64* out[2]); `widths` is the archive's nb width bytes and `res` two zeroed slots it adds to.
            unsafe { b.launch(cfg1(self.grid_stride_blocks(f.nb))) }.map_err(drv)?;
        }
        let r = self.stream.clone_dtoh(&res).map_err(drv)?;
        let measured = if group > 0 {
            frame::Body::from_walk(r[1], r[0])
        } else if r[1] != 0 {
            frame::Body::Width
        } else {
            frame::Body::Len(r[0])
        };
        let body_len = frame::body_check(&f, measured)?;
        if header.dtype != T::DTYPE {
            return Err(szp::Error::DTypeMismatch.into());
        }
        if out.len() < n {
            return Err(szp::Error::OutputTooSmall { needed: n }.into());
        }
        if n == 0 {
            return Ok(0);
        }
        if group > 0 {
            let ng = f.nb.div_ceil(group as usize) as u64;
            let grid = u32::try_from(ng.div_ceil(u64::from(WARPS))).map_err(|_| Error::TooLarge)?;
            let fd = self.func(&format!("szp_decode_heads_{}", T::SUFFIX))?;
            let mut b = self.stream.launch_builder(&fd);
            b.arg(archive)
                .arg(&header.n)
                .arg(&bs)
                .arg(&group)
                .arg(&header.quant_eb)
                .arg(&goff)
                .arg(&mut *out);
            // SAFETY: szp_decode_heads_* takes (const u8* archive, u64 n, u32 bs, u64 group, double eb, const u64* goff[groups], T* out[n]); the walk validated every width, head width and the exact body length, so every read stays inside the archive (aligned word reads never start past a block's or trailer's last byte, and the chunk CRCs follow the body); `out` has >= n slots; one warp per group.
            unsafe { b.launch(cfg1(grid)) }.map_err(drv)?;
        } else {
            let (k, suffix) = decode_variant(bs);
            let tiles = nb.div_ceil(u64::from(WARPS * k));
            let grid = u32::try_from(tiles)
                .ok()
                .filter(|&t| t <= i32::MAX as u32)
                .ok_or(Error::TooLarge)?;
            let mut status = self
                .stream
                .alloc_zeros::<u64>(tiles as usize)
                .map_err(drv)?;
            let mut scratch = self.stream.alloc_zeros::<u64>(2).map_err(drv)?;
            let fd = self.func(&format!("szp_decode_{}_{suffix}", T::SUFFIX))?;
            let mut b = self.stream.launch_builder(&fd);
            b.arg(archive)
                .arg(&header.n)
                .arg(&bs)
                .arg(&shift)
                .arg(&header.quant_eb)
                .arg(&mut *out)
                .arg(&mut status)
                .arg(&mut scratch)
                .arg(&mut chunk_off);
            // SAFETY: szp_decode_* takes (const u8* archive, u64 n, u32 bs, u32 shift, double eb, T* out[n], u64* status[tiles], u64* scratch[2], u64* chunk_off[chunks]); the widths were validated above (each <= 64, body exactly Σ cost), so every block read stays within the archive (aligned word reads never start past a block's last byte); `out` has >= n slots; one CTA per tile, as the look-back requires.
            unsafe { b.launch(cfg1(grid)) }.map_err(drv)?;
        }
        if verify == szp::Verify::Checksums {
            let body = self.stream.clone_htod(&[body_len as u64]).map_err(drv)?;
            let mut mismatch = self.stream.clone_htod(&[u64::MAX]).map_err(drv)?;
            self.crc_chunks(archive, nb, shift, &chunk_off, &body, Some(&mut mismatch))?;
            let m = self.stream.clone_dtoh(&mismatch).map_err(drv)?;
            if m[0] != u64::MAX {
                return Err(szp::Error::ChecksumMismatch {
                    what: "blocks",
                    chunk: m[0] as u32,
                }
                .into());
            }
        }
        Ok(n)
    }

    /// Host-slice convenience: copies `input` to the device, compresses, and copies back only
    /// the archive's bytes.
    pub fn compress<T: GpuFloat>(&self, input: &[T], cfg: &Config) -> Result<Vec<u8>> {
        crate::refuse_interp(cfg)?;
        szp::blocks::check_config(cfg)?;
        let max = szp::max_compressed_len(input.len(), cfg.block_size, T::DTYPE)
            .ok_or(szp::Error::OutputTooSmall { needed: usize::MAX })?;
        let d_in = self.upload(input)?;
        let mut d_out = self.stream.alloc_zeros::<u8>(max.max(1)).map_err(drv)?;
        let len =
            self.compress_device(&d_in.slice(0..input.len()), cfg, &mut d_out.as_view_mut())?;
        let mut v = vec![0u8; len];
        self.stream
            .memcpy_dtoh(&d_out.slice(0..len), &mut v[..])
            .map_err(drv)?;
        Ok(v)
    }

    /// Host-slice convenience: decompresses an archive held in host memory.
    pub fn decompress<T: GpuFloat>(&self, archive: &[u8]) -> Result<Vec<T>> {
        crate::refuse_interp_archive(archive)?;
        let header = szp::Header::read(archive)?;
        let n = usize::try_from(header.n).map_err(|_| szp::Error::Corrupt("element count"))?;
        // Bound the allocation by what the archive can describe before trusting n.
        let nb = header.n.div_ceil(u64::from(header.block_size));
        if nb > archive.len().saturating_sub(HEADER_LEN) as u64 {
            return Err(szp::Error::Truncated.into());
        }
        let d_arc = self.upload(archive)?;
        let mut d_out = self.stream.alloc_zeros::<T>(n.max(1)).map_err(drv)?;
        let got =
            self.decompress_device(&d_arc.slice(0..archive.len()), &mut d_out.slice_mut(0..n))?;
        let mut v = vec![T::default(); got];
        if got > 0 {
            self.stream
                .memcpy_dtoh(&d_out.slice(0..got), &mut v[..])
                .map_err(drv)?;
        }
        Ok(v)
    }

    /// Copies a host slice to a new device buffer (at least one element long).
    pub fn upload<T: DeviceRepr + ValidAsZeroBits>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        if host.is_empty() {
            return self.stream.alloc_zeros::<T>(1).map_err(drv);
        }
        self.stream.clone_htod(host).map_err(drv)
    }

    /// The element type's [`DType`] (for callers generic over [`GpuFloat`]).
    pub fn dtype_of<T: GpuFloat>(&self) -> DType {
        T::DTYPE
    }
}

/// One warp (the block-head walk).
fn warp1() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn cfg1(grid: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid.max(1), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}
