//! Compresses a raw little-endian f32/f64 file with SZp, writes the archive, decompresses it and
//! prints ratio, max error and bound.
//!
//! `cargo run --release -p fzpack-core --example szp_file -- IN OUT --eb 1e-3 [--mode abs|noa]
//! [--block-size 128] [--dtype f32|f64] [--fzm]`
//!
//! `--fzm` writes a single-stage FZGPUModules `.fzm` (FZM v3.1) instead of the fzpack archive.

use fzpack_core::szp::{self, Config, Kernel, Mode, SzpFloat, fzm};
use std::process::ExitCode;
use std::time::Instant;

fn run<T: SzpFloat>(
    bytes: &[u8],
    out_path: &str,
    cfg: &Config,
    size: usize,
    from: fn(&[u8]) -> T,
    as_fzm: bool,
) -> Result<(), String> {
    let enc = |d: &[T], out: &mut [u8]| {
        if as_fzm {
            fzm::write(d, cfg, out)
        } else {
            szp::compress(d, cfg, out)
        }
    };
    let dec = |a: &[u8], out: &mut [T]| {
        if as_fzm {
            fzm::read(a, out)
        } else {
            szp::decompress(a, out)
        }
    };
    let data: Vec<T> = bytes.chunks_exact(size).map(from).collect();
    let cap = if as_fzm {
        fzm::max_fzm_len(data.len(), cfg.block_size, T::DTYPE)
    } else {
        szp::max_compressed_len(data.len(), cfg.block_size, T::DTYPE)
    }
    .ok_or("input too large or invalid block size")?;
    let mut archive = vec![0u8; cap];
    // A first, untimed run touches the output pages; the timed run is the second.
    enc(&data, &mut archive).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let len = enc(&data, &mut archive).map_err(|e| e.to_string())?;
    let tc = t.elapsed().as_secs_f64();
    archive.truncate(len);
    std::fs::write(out_path, &archive).map_err(|e| format!("{out_path}: {e}"))?;
    let mut back = vec![T::default(); data.len()];
    dec(&archive, &mut back).map_err(|e| e.to_string())?;
    let t = Instant::now();
    dec(&archive, &mut back).map_err(|e| e.to_string())?;
    let td = t.elapsed().as_secs_f64();
    let max_err = data
        .iter()
        .zip(&back)
        .map(|(a, b)| (a.to_f64() - b.to_f64()).abs())
        .fold(0.0, f64::max);
    let h = if as_fzm {
        fzm::header(&archive)
    } else {
        szp::header(&archive)
    }
    .map_err(|e| e.to_string())?;
    // FZM records only the quantizer's bound; the strict bound is the requested one.
    let bound = match cfg.mode {
        Mode::Abs => cfg.error_bound,
        Mode::Noa => cfg.error_bound * h.value_base,
    };
    let gb = (data.len() * size) as f64 / 1e9;
    println!(
        "{} values, archive {len} bytes, ratio {:.3}",
        data.len(),
        (data.len() * size) as f64 / len as f64
    );
    println!(
        "max error {max_err:.6e}, bound {:.6e} ({})",
        bound,
        if max_err <= bound { "met" } else { "MISSED" }
    );
    println!(
        "quantizer bound {:.6e}; compress {:.2} GB/s, decompress {:.2} GB/s ({} path, one thread)",
        h.quant_eb,
        gb / tc,
        gb / td,
        if as_fzm {
            "scalar"
        } else {
            Kernel::best().name()
        }
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut pos = Vec::new();
    let (mut eb, mut mode, mut bs, mut dtype) = (1e-3, Mode::Abs, 128u32, String::from("f32"));
    let mut as_fzm = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_default();
        match a.as_str() {
            "--eb" => eb = val().parse().unwrap_or(f64::NAN),
            "--mode" => mode = if val() == "noa" { Mode::Noa } else { Mode::Abs },
            "--block-size" => bs = val().parse().unwrap_or(0),
            "--dtype" => dtype = val(),
            "--fzm" => as_fzm = true,
            _ => pos.push(a.clone()),
        }
    }
    let [input, output] = pos.as_slice() else {
        eprintln!(
            "usage: szp_file IN OUT --eb 1e-3 [--mode abs|noa] [--block-size 128] [--dtype f32|f64] [--fzm]"
        );
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(input) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{input}: {e}");
            return ExitCode::from(1);
        }
    };
    let cfg = Config {
        mode,
        ..Config::abs(eb).with_block_size(bs)
    };
    let r = if dtype == "f64" {
        run::<f64>(
            &bytes,
            output,
            &cfg,
            8,
            |c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])),
            as_fzm,
        )
    } else {
        run::<f32>(
            &bytes,
            output,
            &cfg,
            4,
            |c| f32::from_le_bytes(c.try_into().unwrap_or([0; 4])),
            as_fzm,
        )
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
