//! The device CRC pass's cost in the host harness's terms: on the CPU harness (the kernels'
//! logic run lane by lane), the time of the sealing pass (`emu::seal`: `fz_crc_chunk` per chunk,
//! 32 lane segments combined with crc32_combine) against the whole harness compression
//! (`emu::compress`, which includes it) and decompression (`emu::decompress`, which includes the
//! same pass as verification), next to core's sealing (`blocks::seal_with`, crc32fast) of the
//! same bytes. A proxy for the device cost, not a GPU timing: both passes run one thread here.
//!
//! `cargo run --release -p fzpack-gpu --example harness_crc_cost [-- field.f32 ...]` (default: a
//! 16 Mi-value random walk and the `.f32` fields of `$FZPACK_DATA` up to 10 MB).
#[cfg(feature = "host-kernels")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    use fzpack_core::szp::{Config, Layout, blocks};
    use fzpack_gpu::emu;
    use std::time::Instant;

    fn best(f: &mut dyn FnMut()) -> f64 {
        (0..3)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    }

    let mut inputs: Vec<(String, Vec<f32>)> = Vec::new();
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut acc = 0f64;
    let walk: Vec<f32> = (0..1usize << 24)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            acc += (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            acc as f32
        })
        .collect();
    inputs.push(("walk 64 MiB".into(), walk));
    let mut paths: Vec<std::path::PathBuf> = std::env::args().skip(1).map(Into::into).collect();
    if paths.is_empty()
        && let Some(d) = std::env::var_os("FZPACK_DATA")
    {
        let mut v: Vec<_> = std::fs::read_dir(d)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "f32"))
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() <= 10_000_000))
            .collect();
        v.sort();
        paths = v;
    }
    for p in paths {
        let b = std::fs::read(&p)?;
        let x = b
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        inputs.push((
            p.file_name().unwrap_or_default().to_string_lossy().into(),
            x,
        ));
    }
    println!(
        "| data | layout | archive MB | harness compress s | harness decompress s | device CRC pass s | % of compress | % of decompress | core seal s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, x) in &inputs {
        for layout in [Layout::Fzgm, Layout::Heads] {
            let cfg = Config::noa(1e-3).with_layout(layout);
            if let Err(e) = emu::compress(x, &cfg) {
                println!("| {name} | {layout:?} | skipped: {e} | | | | | | |");
                continue;
            }
            let mut a = Vec::new();
            let tc = best(&mut || a = emu::compress(x, &cfg).expect("compress"));
            let td = best(&mut || {
                emu::decompress::<f32>(&a).expect("decompress");
            });
            let view = blocks::parse(&a).map_err(fzpack_gpu::Error::from)?;
            let h = view.header;
            let (bs, shift, group) = (h.block_size as usize, h.chunk_shift, h.head_group());
            // Chunk body offsets from core's walk (what the encoder records on the device).
            let c = 1usize << shift;
            let mut offs = Vec::new();
            let (mut off, mut rem) = (0usize, view.n);
            for wc in view.widths.chunks(c) {
                offs.push(off as u64);
                let vals = rem.min(wc.len() * bs);
                off += blocks::body_len(wc, bs, vals, group, &view.payload[off..])
                    .map_err(fzpack_gpu::Error::from)?;
                rem -= vals;
            }
            let mut sums = vec![0u8; view.sums.len()];
            let ts = best(&mut || emu::seal(view.widths, view.payload, shift, &offs, &mut sums));
            assert_eq!(sums, view.sums, "device CRC logic differs from core");
            let tcore = best(&mut || {
                blocks::seal_with(
                    view.widths,
                    view.payload,
                    view.n,
                    bs,
                    shift,
                    group,
                    &mut sums,
                )
            });
            println!(
                "| {name} | {layout:?} | {:.2} | {tc:.3} | {td:.3} | {ts:.4} | {:.1}% | {:.1}% | {tcore:.4} |",
                a.len() as f64 / 1e6,
                100.0 * ts / tc,
                100.0 * ts / td,
            );
        }
    }
    Ok(())
}

#[cfg(not(feature = "host-kernels"))]
fn main() {
    println!("skipped: needs the `host-kernels` feature (the CPU harness)");
}
