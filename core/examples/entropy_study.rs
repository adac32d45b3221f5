//! Ratio and single-thread speed of the entropy-coded chunk codec (`szp::entropy`) against the
//! block-head layout, on raw little-endian fields whose names end in `_D1xD2….f32|f64`.
//!
//! `cargo run --release -p fzpack-core --example entropy_study -- [DIR] [SZ3_CSV]`
//! `[FILTER]` (defaults `/work/shared/data` and `benchmarks/results/amd-epyc/2026-12-06.csv`;
//! only fields whose names contain FILTER).
//!
//! For each field and ABS bound `rel × (max − min)`, rel in 1e-2, 1e-3, 1e-4: the strict SZp
//! plan of `Config::abs(bound).with_layout(Layout::Heads)` (its `quant_eb`), then, per
//! 16384-value chunk, the levels by `entropy::levels_checked` (the strict per-element check)
//! and the coded chunk by `entropy::encode_chunk` ("entropy 1-D") or
//! `entropy::encode_chunk_rows` with the fastest dimension of the file name ("entropy rows").
//! The entropy layout's size counts the 52-byte header and, per chunk, a 4-byte coded length
//! and a 4-byte CRC. Every chunk is decoded back to values and every element checked against
//! the bound. Speeds are single thread, best of `ROUNDS` (environment, default 5), of the
//! "rows" variant: encode = values → coded chunks (quantization and check included, as a
//! writer runs them: `levels_checked` is the SZp kernels' quantizer and strict check, compiled
//! for AVX-512 where the CPU has it), levels = that quantization and check alone, coder =
//! levels → coded chunks, decode = coded chunks → values; the block-head layout's
//! `szp::compress`/`szp::decompress` speeds in the same run are the yardstick. Fields with
//! non-finite values are skipped (said so). SZ3's ratios are the CSV's rows `codec = sz3`.

use std::hint::black_box;

mod common;
use common::{dims_of, fields, geomean, peer_ratios};

use fzpack_core::szp::{self, Config, Layout, SzpFloat, blocks, entropy};

const CHUNK: usize = szp::CHUNK_TARGET_VALUES;
const RELS: [f64; 3] = [1e-2, 1e-3, 1e-4];

struct Row {
    heads: f64,
    heads_enc_gbs: f64,
    heads_dec_gbs: f64,
    ent: f64,
    ent1d: f64,
    plane_chunks: usize,
    enc_gbs: f64,
    coder_gbs: f64,
    levels_gbs: f64,
    dec_gbs: f64,
    rans_chunks: usize,
    chunks: usize,
}

fn best<F: FnMut()>(f: F) -> f64 {
    common::best(5, f)
}

/// Compresses `x` chunk by chunk as a writer would: the chunk's levels (with the strict
/// check) into a reused scratch, the coded chunk into a reused scratch, then appended to
/// `coded`; `ends[k]` is the end of chunk `k`.
fn encode_all<T: SzpFloat>(
    x: &[T],
    plan: &szp::Plan,
    row: usize,
    levels: &mut [i64],
    scratch: &mut [u8],
    coded: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) -> Result<(), String> {
    coded.clear();
    ends.clear();
    for (k, xs) in x.chunks(CHUNK).enumerate() {
        let lv = &mut levels[..xs.len()];
        entropy::levels_checked(xs, plan, k * CHUNK, lv).map_err(|e| e.to_string())?;
        let len = entropy::encode_chunk_rows(lv, row, scratch).map_err(|e| e.to_string())?;
        coded.extend_from_slice(&scratch[..len]);
        ends.push(coded.len());
    }
    Ok(())
}

fn decode_all<T: SzpFloat>(
    coded: &[u8],
    ends: &[usize],
    eb: f64,
    back: &mut [T],
) -> Result<(), String> {
    let mut start = 0;
    for (out, &end) in back.chunks_mut(CHUNK).zip(ends) {
        entropy::decode_chunk_values(&coded[start..end], eb, out).map_err(|e| e.to_string())?;
        start = end;
    }
    Ok(())
}

fn study<T: SzpFloat>(x: &[T], row: usize, rel: f64) -> Result<Row, String> {
    let (lo, hi) = x.iter().fold((f64::MAX, f64::MIN), |(a, b), v| {
        (a.min(v.to_f64()), b.max(v.to_f64()))
    });
    let cfg = Config::abs(rel * (hi - lo)).with_layout(Layout::Heads);
    let plan = blocks::plan(x, &cfg).map_err(|e| e.to_string())?;
    let cap = szp::max_compressed_len(x.len(), 128, T::DTYPE).ok_or("size")?;
    let mut arch = vec![0u8; cap];
    let heads_len = szp::compress(x, &cfg, &mut arch).map_err(|e| e.to_string())?;
    let bytes = size_of_val(x);
    // The block-head layout's own speed in the same run (single thread, this CPU's best
    // kernel; quantization included, as in every SZp compress): a yardstick for the load.
    let heads_enc_t = best(|| {
        black_box(szp::compress(x, &cfg, &mut arch).expect("compress"));
    });
    let mut hback = vec![T::default(); x.len()];
    let heads_dec_t = best(|| {
        black_box(szp::decompress(&arch[..heads_len], &mut hback).expect("decompress"));
    });

    let nch = x.len().div_ceil(CHUNK);
    let mut levels = vec![0i64; CHUNK];
    let mut scratch = vec![0u8; entropy::encode_buffer_len(CHUNK)];
    let (mut coded, mut ends) = (Vec::with_capacity(bytes * 2), Vec::with_capacity(nch));
    // One encoder over the shared buffers; `coded` is passed in so that its length can be read
    // between runs.
    let mut enc = |row: usize, coded: &mut Vec<u8>| {
        encode_all(x, &plan, row, &mut levels, &mut scratch, coded, &mut ends)
    };
    enc(0, &mut coded)?;
    let ent1d_len = szp::HEADER_LEN + coded.len() + 8 * nch;
    enc(row, &mut coded)?;
    let enc_t = best(|| {
        enc(row, &mut coded).expect("encode");
        black_box(&coded);
    });
    // The coder alone: levels of the whole field in advance, each chunk coded into the scratch.
    let mut all = vec![0i64; x.len()];
    entropy::levels_checked(x, &plan, 0, &mut all).map_err(|e| e.to_string())?;
    let coder_t = best(|| {
        for lv in all.chunks(CHUNK) {
            black_box(entropy::encode_chunk_rows(lv, row, &mut scratch).expect("encode"));
        }
    });
    // The quantizer and strict check alone, chunk by chunk into one scratch.
    let levels_t = best(|| {
        for (k, xs) in x.chunks(CHUNK).enumerate() {
            let lv = &mut levels[..xs.len()];
            entropy::levels_checked(xs, &plan, k * CHUNK, lv).expect("levels");
            black_box(&lv);
        }
    });
    let mut back = vec![T::default(); x.len()];
    decode_all(&coded, &ends, plan.quant_eb, &mut back)?;
    for (i, (a, b)) in x.iter().zip(&back).enumerate() {
        if (a.to_f64() - b.to_f64()).abs() > plan.bound {
            return Err(format!("bound missed at {i}"));
        }
    }
    let dec_t = best(|| {
        decode_all(&coded, &ends, plan.quant_eb, &mut back).expect("decode");
        black_box(&back);
    });
    // first byte of each non-empty chunk: its mode
    let modes: Vec<u8> = std::iter::once(0)
        .chain(ends.iter().copied())
        .zip(&ends)
        .filter(|(s, e)| **e > *s)
        .map(|(s, _)| coded[s])
        .collect();
    let plane_chunks = modes
        .iter()
        .filter(|m| *m & 0xf0 == entropy::PRED_PLANE)
        .count();
    let rans_chunks = modes
        .iter()
        .filter(|m| *m & 0x0f == entropy::MODE_RANS)
        .count();
    let ent_len = szp::HEADER_LEN + coded.len() + 8 * nch;
    Ok(Row {
        heads: bytes as f64 / heads_len as f64,
        heads_enc_gbs: bytes as f64 / heads_enc_t / 1e9,
        heads_dec_gbs: bytes as f64 / heads_dec_t / 1e9,
        ent: bytes as f64 / ent_len as f64,
        ent1d: bytes as f64 / ent1d_len as f64,
        plane_chunks,
        enc_gbs: bytes as f64 / enc_t / 1e9,
        coder_gbs: bytes as f64 / coder_t / 1e9,
        levels_gbs: bytes as f64 / levels_t / 1e9,
        dec_gbs: bytes as f64 / dec_t / 1e9,
        rans_chunks,
        chunks: nch,
    })
}

fn read<T: SzpFloat>(raw: &[u8], from: fn([u8; 8]) -> T, w: usize) -> Vec<T> {
    raw.chunks_exact(w)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..w].copy_from_slice(c);
            from(b)
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).map_or("/work/shared/data", String::as_str);
    let csv = args
        .get(2)
        .map_or("benchmarks/results/amd-epyc/2026-12-06.csv", String::as_str);
    // SZ3 ratios: (field, rel) -> ratio
    let sz3: std::collections::HashMap<(String, String), f64> = peer_ratios(csv)
        .into_iter()
        .filter(|((_, _, codec), _)| codec == "sz3")
        .map(|((f, r, _), ratio)| ((f, r), ratio))
        .collect();
    let only = args.get(3).cloned().unwrap_or_default();
    let files = fields(dir, &only);
    println!(
        "| field | rel | heads | entropy 1-D | entropy rows | SZ3 | entropy rows/SZ3 | rANS / plane / chunks | enc GB/s | levels GB/s | coder GB/s | dec GB/s | heads enc GB/s | heads dec GB/s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut lev: Vec<Vec<f64>> = vec![Vec::new(); RELS.len()];
    #[allow(clippy::type_complexity)]
    let mut per: Vec<(
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
    )> = vec![Default::default(); RELS.len()];
    for p in files {
        let name = p
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        let ext = p.extension().and_then(|s| s.to_str()).unwrap_or("");
        // the fastest dimension: the last of `_D1xD2x…` (none for 1-D fields)
        let dims = dims_of(&p);
        let row = if dims.len() >= 2 {
            dims[dims.len() - 1]
        } else {
            0
        };
        let Ok(raw) = std::fs::read(&p) else { continue };
        for (k, &rel) in RELS.iter().enumerate() {
            let r = match ext {
                "f32" => {
                    let x = read(&raw, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]), 4);
                    if x.iter().any(|v| !v.is_finite()) {
                        if k == 0 {
                            println!("| {name} | skipped: non-finite values ||||||||");
                        }
                        continue;
                    }
                    study(&x, row, rel)
                }
                "f64" => study(&read(&raw, f64::from_le_bytes, 8), row, rel),
                _ => continue,
            };
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    println!("| {name} | {rel:e} | error: {e} ||||||||");
                    continue;
                }
            };
            let s = sz3.get(&(name.clone(), format!("{rel:e}"))).copied();
            println!(
                "| {name} | {rel:e} | {:.2} | {:.2} | {:.2} | {} | {} | {}/{}/{} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                r.heads,
                r.ent1d,
                r.ent,
                s.map_or("-".into(), |s| format!("{s:.2}")),
                s.map_or("-".into(), |s| format!("{:.2}", r.ent / s)),
                r.rans_chunks,
                r.plane_chunks,
                r.chunks,
                r.enc_gbs,
                r.levels_gbs,
                r.coder_gbs,
                r.dec_gbs,
                r.heads_enc_gbs,
                r.heads_dec_gbs
            );
            lev[k].push(r.levels_gbs);
            let g = &mut per[k];
            g.0.push(r.heads);
            g.1.push(r.ent);
            g.6.push(r.heads_enc_gbs);
            g.8.push(r.coder_gbs);
            g.7.push(r.heads_dec_gbs);
            g.5.push(r.ent1d);
            if let Some(s) = s {
                g.2.push(s);
            }
            g.3.push(r.enc_gbs);
            g.4.push(r.dec_gbs);
        }
    }
    println!();
    println!(
        "| rel | fields | heads geomean | entropy 1-D geomean | entropy rows geomean | SZ3 geomean | entropy rows/SZ3 | enc GB/s geomean | levels GB/s geomean | coder GB/s geomean | dec GB/s geomean | heads enc GB/s | heads dec GB/s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (k, rel) in RELS.iter().enumerate() {
        let g = &per[k];
        if g.1.is_empty() {
            continue;
        }
        let s = if g.2.len() == g.1.len() {
            geomean(&g.2)
        } else {
            f64::NAN
        };
        println!(
            "| {rel:e} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            g.1.len(),
            geomean(&g.0),
            geomean(&g.5),
            geomean(&g.1),
            s,
            geomean(&g.1) / s,
            geomean(&g.3),
            geomean(&lev[k]),
            geomean(&g.8),
            geomean(&g.4),
            geomean(&g.6),
            geomean(&g.7)
        );
    }
}
