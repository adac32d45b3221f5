//! Compresses a raw little-endian f32/f64 file with SZp, writes the archive, decompresses it and
//! prints ratio, max error and bound.
//!
//! `cargo run --release -p fzpack-core --example szp_file -- IN OUT --eb 1e-3 [--mode abs|noa]
//! [--block-size 128] [--dtype f32|f64]`

use fzpack_core::szp::{self, Config, Mode, SzpFloat};
use std::process::ExitCode;
use std::time::Instant;

fn run<T: SzpFloat>(
    bytes: &[u8],
    out_path: &str,
    cfg: &Config,
    size: usize,
    from: fn(&[u8]) -> T,
) -> Result<(), String> {
    let data: Vec<T> = bytes.chunks_exact(size).map(from).collect();
    let cap =
        szp::max_compressed_len(data.len(), cfg.block_size, T::DTYPE).ok_or("input too large")?;
    let mut archive = vec![0u8; cap];
    // A first, untimed run touches the output pages; the timed run is the second.
    szp::compress(&data, cfg, &mut archive).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let len = szp::compress(&data, cfg, &mut archive).map_err(|e| e.to_string())?;
    let tc = t.elapsed().as_secs_f64();
    archive.truncate(len);
    std::fs::write(out_path, &archive).map_err(|e| format!("{out_path}: {e}"))?;
    let mut back = vec![T::default(); data.len()];
    szp::decompress(&archive, &mut back).map_err(|e| e.to_string())?;
    let t = Instant::now();
    szp::decompress(&archive, &mut back).map_err(|e| e.to_string())?;
    let td = t.elapsed().as_secs_f64();
    let max_err = data
        .iter()
        .zip(&back)
        .map(|(a, b)| (a.to_f64() - b.to_f64()).abs())
        .fold(0.0, f64::max);
    let h = szp::header(&archive).map_err(|e| e.to_string())?;
    let gb = (data.len() * size) as f64 / 1e9;
    println!(
        "{} values, archive {len} bytes, ratio {:.3}",
        data.len(),
        (data.len() * size) as f64 / len as f64
    );
    println!(
        "max error {max_err:.6e}, bound {:.6e} ({})",
        h.bound(),
        if max_err <= h.bound() {
            "met"
        } else {
            "MISSED"
        }
    );
    println!(
        "compress {:.2} GB/s, decompress {:.2} GB/s (scalar path, one thread)",
        gb / tc,
        gb / td
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut pos = Vec::new();
    let (mut eb, mut mode, mut bs, mut dtype) = (1e-3, Mode::Abs, 128u32, String::from("f32"));
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_default();
        match a.as_str() {
            "--eb" => eb = val().parse().unwrap_or(f64::NAN),
            "--mode" => mode = if val() == "noa" { Mode::Noa } else { Mode::Abs },
            "--block-size" => bs = val().parse().unwrap_or(0),
            "--dtype" => dtype = val(),
            _ => pos.push(a.clone()),
        }
    }
    let [input, output] = pos.as_slice() else {
        eprintln!(
            "usage: szp_file IN OUT --eb 1e-3 [--mode abs|noa] [--block-size 128] [--dtype f32|f64]"
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
        error_bound: eb,
        block_size: bs,
        max_abs: None,
        strict: true,
    };
    let r = if dtype == "f64" {
        run::<f64>(&bytes, output, &cfg, 8, |c| {
            f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))
        })
    } else {
        run::<f32>(&bytes, output, &cfg, 4, |c| {
            f32::from_le_bytes(c.try_into().unwrap_or([0; 4]))
        })
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
