//! GPU SZp benchmark: compress and decompress GB/s of float data (CUDA events, after warm-up,
//! median of the timed runs) for both block layouts, against a device-to-device copy of the same
//! size in the same run, with and without the host transfers, on a random walk of `MiB` f32
//! values and on every `.f32`/`.f64` field of `$FZPACK_DATA` (or `../shared/data`).
//!
//! `cargo run --release -p fzpack-gpu --example gpu_bench -- [MiB] [runs] [block_size] [table.md]`
//! (defaults 1024 MiB, 20 runs, 128). Prints "skipped: no CUDA device" and exits 0 without one
//! (with `FZPACK_REQUIRE_GPU` set, fails instead).
//!
//! Columns: `compress`/`decompress` are device-resident (input and archive in GPU memory; the
//! decompress verifies every chunk CRC on the device), `decompress no CRC` skips the CRC pass
//! (its cost is the difference), `+H2D/D2H` add the transfers from and to pageable host memory
//! (compress: input up, archive down; decompress: archive up, values down). GB/s are of float
//! data (10^9 B/s); `copy` is a device-to-device copy of the float data.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream};
use fzpack_core::szp::{self, Config, Layout};
use fzpack_gpu::{Error, Gpu, GpuFloat};
use std::path::PathBuf;
use std::sync::Arc;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn median(mut v: Vec<f32>) -> f32 {
    v.sort_by(f32::total_cmp);
    v[v.len() / 2]
}

/// A random walk: x_i = x_{i−1} + u_i, u uniform in [−0.5, 0.5) (deterministic).
fn walk(n: usize) -> Vec<f32> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut x = 0f64;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            x += (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            x as f32
        })
        .collect()
}

struct Timer {
    stream: Arc<CudaStream>,
    e0: CudaEvent,
    e1: CudaEvent,
}

impl Timer {
    /// Median ms of `runs` timed calls of `f` after 2 warm-ups.
    fn time(&self, runs: usize, mut f: impl FnMut() -> Res<()>) -> Res<f32> {
        for _ in 0..2 {
            f()?;
        }
        self.stream.synchronize()?;
        let mut t = Vec::with_capacity(runs);
        for _ in 0..runs {
            self.e0.record(&self.stream)?;
            f()?;
            self.e1.record(&self.stream)?;
            self.e1.synchronize()?;
            t.push(self.e0.elapsed_ms(&self.e1)?);
        }
        Ok(median(t))
    }
}

struct Row {
    name: String,
    layout: &'static str,
    mb: f64,
    ratio: f64,
    ms: [f32; 6], // compress, +xfer, decompress, no CRC, +xfer, copy
    ok: bool,
}

fn run<T: GpuFloat + Copy>(
    gpu: &Gpu,
    timer: &Timer,
    name: &str,
    host: &[T],
    cfg: &Config,
    runs: usize,
) -> Res<Row> {
    let s = gpu.stream().clone();
    let n = host.len();
    let max = szp::max_compressed_len(n, cfg.block_size, T::DTYPE).ok_or("size overflow")?;
    let d_in = s.clone_htod(host)?;
    let mut d_arc = s.alloc_zeros::<u8>(max)?;
    let mut d_out = s.alloc_zeros::<T>(n.max(1))?;
    let mut d_copy = s.alloc_zeros::<T>(n.max(1))?;
    let mut len = 0;
    let c = timer.time(runs, || {
        len = gpu.compress_device(&d_in.as_view(), cfg, &mut d_arc.as_view_mut())?;
        Ok(())
    })?;
    let mut host_arc = vec![0u8; max];
    let mut d_stage = s.alloc_zeros::<T>(n.max(1))?; // allocated outside the timed region
    let cx = timer.time(runs, || {
        s.memcpy_htod(host, &mut d_stage.slice_mut(0..n))?;
        let l = gpu.compress_device(&d_stage.slice(0..n), cfg, &mut d_arc.as_view_mut())?;
        s.memcpy_dtoh(&d_arc.slice(0..l), &mut host_arc[..l])?;
        Ok(())
    })?;
    let d = timer.time(runs, || {
        gpu.decompress_device(&d_arc.slice(0..len), &mut d_out.slice_mut(0..n))?;
        Ok(())
    })?;
    let dn = timer.time(runs, || {
        gpu.decompress_device_with(
            &d_arc.slice(0..len),
            &mut d_out.slice_mut(0..n),
            szp::Verify::Skip,
        )?;
        Ok(())
    })?;
    let mut host_out = vec![T::default(); n];
    let arc_host = s.clone_dtoh(&d_arc.slice(0..len))?;
    let mut a = s.alloc_zeros::<u8>(len.max(1))?;
    let dx = timer.time(runs, || {
        s.memcpy_htod(&arc_host[..], &mut a.slice_mut(0..len))?;
        gpu.decompress_device(&a.slice(0..len), &mut d_out.slice_mut(0..n))?;
        s.memcpy_dtoh(&d_out.slice(0..n), &mut host_out[..])?;
        Ok(())
    })?;
    let cp = timer.time(runs, || {
        s.memcpy_dtod(&d_in, &mut d_copy)?;
        Ok(())
    })?;
    // What was timed is right: the archive equals core's, the decoded values core's.
    let mut reference = vec![0u8; max];
    let rlen = szp::compress(host, cfg, &mut reference).map_err(Error::from)?;
    let mut want = vec![T::default(); n];
    szp::decompress(&reference[..rlen], &mut want).map_err(Error::from)?;
    let same_values = host_out
        .iter()
        .zip(&want)
        .all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits());
    let ok = arc_host[..] == reference[..rlen] && same_values;
    let bytes = std::mem::size_of_val(host) as f64;
    Ok(Row {
        name: name.to_string(),
        layout: match cfg.layout {
            Layout::Heads => "heads",
            _ => "stage",
        },
        mb: bytes / 1e6,
        ratio: bytes / len as f64,
        ms: [c, cx, d, dn, dx, cp],
        ok,
    })
}

fn data_dir() -> Option<PathBuf> {
    let d = std::env::var_os("FZPACK_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"));
    d.is_dir().then_some(d)
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let mib: usize = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(1024);
    let runs: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(20);
    let bs: u32 = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(128);
    let table_path = args.get(4).cloned();
    let gpu = match Gpu::new(0) {
        Ok(g) => g,
        Err(e @ (Error::NoDriver | Error::NoDevice))
            if std::env::var_os("FZPACK_REQUIRE_GPU").is_none() =>
        {
            println!("skipped: no CUDA device ({e})");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let name = gpu.context().name()?;
    let ctx = gpu.context().clone();
    let ev = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
    let timer = Timer {
        stream: gpu.stream().clone(),
        e0: ev()?,
        e1: ev()?,
    };
    let layouts = [Layout::Fzgm, Layout::Heads];
    let mut rows = Vec::new();
    let w = walk(mib * 1024 * 1024 / 4);
    for l in layouts {
        let cfg = Config::noa(1e-3).with_block_size(bs).with_layout(l);
        let r = run(&gpu, &timer, &format!("walk {mib} MiB f32"), &w, &cfg, runs)?;
        eprintln!("{} {}: done", r.name, r.layout);
        rows.push(r);
    }
    drop(w);
    if let Some(dir) = data_dir() {
        let mut names: Vec<_> = std::fs::read_dir(&dir)?
            .flatten()
            .map(|e| e.path())
            .collect();
        names.sort();
        for p in names {
            let file = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            let bytes = std::fs::read(&p)?;
            for l in layouts {
                let cfg = Config::noa(1e-3).with_block_size(bs).with_layout(l);
                let r = if file.ends_with(".f32") {
                    let x: Vec<f32> = bytes
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect();
                    run(&gpu, &timer, &file, &x, &cfg, runs)
                } else if file.ends_with(".f64") {
                    let x: Vec<f64> = bytes
                        .chunks_exact(8)
                        .map(|b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                        .collect();
                    run(&gpu, &timer, &file, &x, &cfg, runs)
                } else {
                    continue;
                };
                match r {
                    Ok(r) => rows.push(r),
                    Err(e) => eprintln!("{file}: {e}"),
                }
            }
        }
    }

    let gbs = |mb: f64, ms: f32| mb / 1e3 / (f64::from(ms) * 1e-3);
    let mut t = format!(
        "GPU SZp, {name}: NOA eb = 1e-3 of the range, block size {bs}; CUDA events, median of \
         {runs} runs after 2 warm-ups; GB/s of float data (10^9 B/s). compress/decompress: \
         device-resident (decompress verifies the chunk CRCs on the device; `no CRC` skips \
         them); `+xfer`: with the pageable host transfers; copy: device-to-device copy of the \
         same bytes.\n\n"
    );
    t.push_str(
        "| data | layout | MB | ratio | compress GB/s | +xfer | decompress GB/s | no CRC | +xfer | copy GB/s | compress % of copy | = core |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut all_ok = true;
    for r in &rows {
        let [c, cx, d, dn, dx, cp] = r.ms.map(|ms| gbs(r.mb, ms));
        t.push_str(&format!(
            "| {} | {} | {:.1} | {:.2} | {c:.1} | {cx:.1} | {d:.1} | {dn:.1} | {dx:.1} | {cp:.1} | {:.0}% | {} |\n",
            r.name,
            r.layout,
            r.mb,
            r.ratio,
            100.0 * c / cp,
            if r.ok { "yes" } else { "NO" }
        ));
        all_ok &= r.ok;
    }
    print!("{t}");
    if let Some(p) = table_path {
        std::fs::write(p, &t)?;
    }
    if !all_ok {
        return Err("a GPU archive or decode differs from core".into());
    }
    Ok(())
}
