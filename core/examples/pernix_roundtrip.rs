//! Round-trips a generated climate-like field through PERNIX and prints bits/value, the
//! largest error relative to each block's step, and GB/s of float data.
//!
//! `cargo run --release -p fzpack-core --example pernix_roundtrip [-- BITS]`

use fzpack_core::pernix::{
    Backend, BitWidth, BlockSize, Dispatcher, Error, compression_scale_from_bmax,
    elements_per_block, scale_from_bmax,
};
use std::time::Instant;

fn main() -> Result<(), Error> {
    let bits: u8 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let bits = BitWidth::new(bits)?;
    let bs = BlockSize::B64;
    let epb = elements_per_block(bits, bs);
    let (ny, nx) = (720usize, 1440usize);
    // A temperature-like field: zonal gradient, planetary waves and small-scale texture.
    let field: Vec<f32> = (0..ny * nx)
        .map(|i| {
            let (y, x) = ((i / nx) as f32 / ny as f32, (i % nx) as f32 / nx as f32);
            let lat = (y - 0.5) * std::f32::consts::PI;
            288.0 - 40.0 * lat.sin().powi(2)
                + 6.0 * (3.0 * x * std::f32::consts::TAU + 2.0 * lat).sin()
                + 0.7 * ((i as f32) * 0.37).sin() * (x * 91.0).cos()
        })
        .collect();
    let blocks = field.len() / epb;
    let values = &field[..blocks * epb];
    let d = Dispatcher::new(Backend::Auto)?;
    // Per-block scales from each block's largest magnitude, as the PERNIX docs describe.
    let mut scales = Vec::with_capacity(blocks);
    let mut inverses = Vec::with_capacity(blocks);
    for chunk in values.chunks_exact(epb) {
        let bmax = chunk.iter().fold(0f32, |m, x| m.max(x.abs()));
        scales.push(scale_from_bmax(bmax, bits)?);
        inverses.push(compression_scale_from_bmax(bmax, bits)?);
    }
    let mut packed = vec![0u8; blocks * bs.bytes()];
    let mut restored = vec![0f32; values.len()];
    let reps = 20;
    let t = Instant::now();
    for _ in 0..reps {
        for ((chunk, out), &inv) in values
            .chunks_exact(epb)
            .zip(packed.chunks_exact_mut(64))
            .zip(&inverses)
        {
            d.compress_block(bits, bs, chunk, inv, out)?;
        }
    }
    let tc = t.elapsed().as_secs_f64() / f64::from(reps);
    let t = Instant::now();
    for _ in 0..reps {
        for ((block, out), &scale) in packed
            .chunks_exact(64)
            .zip(restored.chunks_exact_mut(epb))
            .zip(&scales)
        {
            d.decompress_block(bits, bs, block, scale, out, true)?;
        }
    }
    let td = t.elapsed().as_secs_f64() / f64::from(reps);
    let mut max_err = 0f32;
    let mut max_steps = 0f32;
    for ((a, b), s) in values
        .chunks_exact(epb)
        .zip(restored.chunks_exact(epb))
        .zip(&scales)
    {
        for (x, y) in a.iter().zip(b) {
            max_err = max_err.max((x - y).abs());
            max_steps = max_steps.max((x - y).abs() / s);
        }
    }
    let gb = (values.len() * 4) as f64 / 1e9;
    println!(
        "PERNIX round trip of a {ny}x{nx} f32 field, backend {}",
        d.backend().name()
    );
    println!(
        "  bit width {}, {} values per 64-byte block",
        bits.get(),
        epb
    );
    println!(
        "  bits/value      {:.3} (plus one f32 scale per block if stored)",
        512.0 / epb as f64
    );
    println!("  max abs error   {max_err:.6} ({max_steps:.3} quantization steps)");
    println!("  compress        {:.2} GB/s", gb / tc);
    println!("  decompress      {:.2} GB/s", gb / td);
    Ok(())
}
