//! GPU SZp benchmark: compress and decompress GB/s of f32 data (CUDA events, after warm-up,
//! median of the timed runs) against a device-to-device copy of the same size.
//!
//! `cargo run --release -p fzpack-gpu --example gpu_bench -- [MiB] [runs] [block_size] [table.md]`
//! (defaults 1024 MiB, 20 runs, 128). Prints "skipped: no CUDA device" and exits 0 without one.

use cudarc::driver::sys::CUevent_flags;
use fzpack_core::szp::{self, Config};
use fzpack_gpu::{Error, Gpu};

fn median(mut v: Vec<f32>) -> f32 {
    v.sort_by(f32::total_cmp);
    v[v.len() / 2]
}

fn field(n: usize) -> Vec<f32> {
    // A smooth 2-D field (rows of 4096) with a little deterministic noise.
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let (r, c) = ((i / 4096) as f32, (i % 4096) as f32);
            let noise = ((s >> 40) as f32 / 16_777_216.0 - 0.5) * 0.01;
            (r * 0.003).sin() * 50.0 + (c * 0.002).cos() * 20.0 + noise
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
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
    let n = mib * 1024 * 1024 / 4;
    let bytes = (n * 4) as f64;
    let host = field(n);
    let cfg = Config::noa(1e-3).with_block_size(bs);
    let stream = gpu.stream().clone();
    let ctx = gpu.context().clone();
    let d_in = stream.clone_htod(&host)?;
    let max = szp::max_compressed_len(n, bs, szp::DType::F32).ok_or("size overflow")?;
    let mut d_arc = stream.alloc_zeros::<u8>(max)?;
    let mut d_out = stream.alloc_zeros::<f32>(n)?;
    let mut d_copy = stream.alloc_zeros::<f32>(n)?;
    let ev = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
    let (e0, e1) = (ev()?, ev()?);

    let mut len = 0;
    for _ in 0..3 {
        len = gpu.compress_device(&d_in.as_view(), &cfg, &mut d_arc.as_view_mut())?;
        gpu.decompress_device(&d_arc.slice(0..len), &mut d_out.as_view_mut())?;
        stream.memcpy_dtod(&d_in, &mut d_copy)?;
    }
    stream.synchronize()?;

    let mut t_c = Vec::new();
    let mut t_d = Vec::new();
    let mut t_copy = Vec::new();
    for _ in 0..runs {
        e0.record(&stream)?;
        len = gpu.compress_device(&d_in.as_view(), &cfg, &mut d_arc.as_view_mut())?;
        e1.record(&stream)?;
        e1.synchronize()?;
        t_c.push(e0.elapsed_ms(&e1)?);
        e0.record(&stream)?;
        gpu.decompress_device(&d_arc.slice(0..len), &mut d_out.as_view_mut())?;
        e1.record(&stream)?;
        e1.synchronize()?;
        t_d.push(e0.elapsed_ms(&e1)?);
        e0.record(&stream)?;
        stream.memcpy_dtod(&d_in, &mut d_copy)?;
        e1.record(&stream)?;
        e1.synchronize()?;
        t_copy.push(e0.elapsed_ms(&e1)?);
    }

    // Correctness of what was timed: the archive equals core's, and the bound holds.
    let archive = stream.clone_dtoh(&d_arc.slice(0..len))?;
    let mut reference = vec![0u8; max];
    let rlen = szp::scalar::compress(&host, &cfg, &mut reference).map_err(Error::from)?;
    let identical = archive[..] == reference[..rlen];
    let back = stream.clone_dtoh(&d_out)?;
    let header = szp::header(&archive).map_err(Error::from)?;
    let bound = header.bound();
    let max_err = host
        .iter()
        .zip(&back)
        .map(|(a, b)| (f64::from(*a) - f64::from(*b)).abs())
        .fold(0f64, f64::max);

    let (mc, md, mcopy) = (median(t_c), median(t_d), median(t_copy));
    let gbs = |ms: f32| bytes / (f64::from(ms) * 1e-3) / 1e9;
    let mut t = String::new();
    t.push_str(&format!(
        "GPU SZp, {name}: {mib} MiB f32 field ({n} values), NOA eb = 1e-3 of the range, block size {bs}; CUDA events, median of {runs} runs after 3 warm-ups; GB/s of float data (10^9 B/s).\n\n"
    ));
    t.push_str("| operation | median ms | GB/s | % of D2D copy |\n|---|---|---|---|\n");
    for (op, ms) in [
        ("compress", mc),
        ("decompress", md),
        ("device-to-device copy", mcopy),
    ] {
        t.push_str(&format!(
            "| {op} | {ms:.3} | {:.1} | {:.0}% |\n",
            gbs(ms),
            100.0 * f64::from(mcopy) / f64::from(ms)
        ));
    }
    t.push_str(&format!(
        "\nratio {:.2} ({len} bytes); archive byte-identical to fzpack-core: {identical}; max |x - x'| = {max_err:.3e} <= bound {bound:.3e}: {}\n",
        bytes / len as f64,
        max_err <= bound
    ));
    print!("{t}");
    if let Some(p) = table_path {
        std::fs::write(p, &t)?;
    }
    if !identical || max_err > bound {
        return Err("GPU archive differs from core or the bound is missed".into());
    }
    Ok(())
}
