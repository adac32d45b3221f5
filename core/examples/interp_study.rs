//! How much ratio a multilevel interpolation predictor on *reconstructed* values would give an
//! entropy-coded SZp layout, against SZ3 and against Lorenzo prediction on pre-quantized
//! levels (what `szp::entropy` codes today).
//!
//! `cargo run --release -p fzpack-core --example interp_study -- [DIR] [SZ3_CSV] [FILTER]`
//! (defaults `/work/shared/data` and `benchmarks/results/amd-epyc/2026-12-06.csv`). The
//! shipped layout (`Layout::Interp`) on one field is `std-ext/examples/interp_one.rs`, which
//! `scripts/ratio-study.py` runs beside SZ3.
//!
//! Why: with pre-quantization every decoded value lies on the grid `q·2eb`, so a smooth field
//! decodes to a staircase and the position of every step is information the coder must carry
//! (order-1 residuals are ±1 about once per `2eb / slope` values, whatever the coder). A
//! predictor that works on the values the decoder will have (SZ's rule: `code =
//! round((x − pred) / 2eb)`, decoded value `pred + code·2eb`) puts decoded values off the grid,
//! where the interpolant of a smooth field already is, and codes mostly zeros.
//!
//! The predictor is SZ3's interpolation order: level by level from the coarsest stride down,
//! within a level one dimension after another (the points at odd multiples of the stride along
//! that dimension, at multiples of the stride along the dimensions done in this level and of
//! twice the stride along the rest), each predicted from the already decoded points at ±s and
//! ±3s along the dimension (cubic `(−a + 9b + 9c − d) / 16` where all four exist, linear
//! `(b + c) / 2` where two do, the left one where only it does). A value whose decoded form
//! misses the bound (rounding) or whose code exceeds `2^24` is an outlier, stored raw.
//!
//! Size: the code stream (in visiting order) is cut into 16384-value chunks, each coded by
//! `szp::entropy::encode_chunk` on its prefix sums (its order-1 residuals are then the codes
//! themselves); plus the outliers' raw bytes and a 52-byte header and 8 bytes per chunk as in
//! the entropy study. Every field is decoded back through the same visiting order and every
//! element checked against the bound. Speeds are of this scalar f64 study code, best of
//! `ROUNDS` (default 3), single thread: an order of magnitude, not a kernel's.

use std::hint::black_box;

mod common;
use common::{dims_of, fields, geomean, peer_ratios};

use fzpack_core::szp::{self, entropy};

const CHUNK: usize = szp::CHUNK_TARGET_VALUES;
const RELS: [f64; 3] = [1e-2, 1e-3, 1e-4];
const MAX_CODE: i64 = 1 << 24;

#[derive(Clone, Copy, PartialEq)]
enum Interp {
    Linear,
    Cubic,
}

/// Visits every element once in the interpolation order of `dims` (C order, last fastest),
/// calling `f(index, prediction)`; `f` returns the decoded value, stored in `r`.
fn traverse(dims: &[usize], kind: Interp, r: &mut [f64], mut f: impl FnMut(usize, f64) -> f64) {
    let nd = dims.len();
    let mut stride = vec![1usize; nd];
    for d in (0..nd.saturating_sub(1)).rev() {
        stride[d] = stride[d + 1] * dims[d + 1];
    }
    let maxdim = dims.iter().copied().max().unwrap_or(1);
    let levels = usize::BITS - (maxdim.max(2) - 1).leading_zeros();
    r[0] = f(0, 0.0);
    let mut coord = vec![0usize; nd];
    let mut step = vec![0usize; nd];
    let mut start = vec![0usize; nd];
    for l in (1..=levels).rev() {
        let s = 1usize << (l - 1);
        for d in 0..nd {
            if s >= dims[d] {
                continue;
            }
            for e in 0..nd {
                (start[e], step[e]) = match e.cmp(&d) {
                    std::cmp::Ordering::Less => (0, s),
                    std::cmp::Ordering::Equal => (s, 2 * s),
                    std::cmp::Ordering::Greater => (0, 2 * s),
                };
            }
            coord.copy_from_slice(&start);
            'outer: loop {
                let idx: usize = coord.iter().zip(&stride).map(|(c, st)| c * st).sum();
                let c = coord[d];
                let n = dims[d];
                let sd = s * stride[d];
                let b = r[idx - sd];
                let pred = if c + s < n {
                    let cc = r[idx + sd];
                    if kind == Interp::Cubic && c >= 3 * s && c + 3 * s < n {
                        let a = r[idx - 3 * sd];
                        let dd = r[idx + 3 * sd];
                        (-a + 9.0 * b + 9.0 * cc - dd) / 16.0
                    } else {
                        (b + cc) / 2.0
                    }
                } else {
                    b
                };
                r[idx] = f(idx, pred);
                // next point: the last dimension fastest
                let mut e = nd;
                loop {
                    if e == 0 {
                        break 'outer;
                    }
                    e -= 1;
                    coord[e] += step[e];
                    if coord[e] < dims[e] {
                        break;
                    }
                    coord[e] = start[e];
                }
            }
        }
    }
}

struct Coded {
    bytes: usize,
    zeros: f64,
    outliers: usize,
    enc_s: f64,
    dec_s: f64,
}

fn best<F: FnMut()>(f: F) -> f64 {
    common::best(3, f)
}

/// The tiles of `dims` with edges at most `edge` (the last tile of a dimension shorter):
/// (origin, tile dims), in C order of their origins.
fn tiles(dims: &[usize], edge: usize) -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut out = vec![(Vec::new(), Vec::new())];
    for &n in dims {
        let mut next = Vec::new();
        for (o, t) in &out {
            for s in (0..n).step_by(edge.max(1)) {
                let (mut o, mut t) = (o.clone(), t.clone());
                o.push(s);
                t.push(edge.min(n - s));
                next.push((o, t));
            }
        }
        out = next;
    }
    out
}

/// Global flat indices of the elements of tile (origin, tdims) of `dims`, in the tile's C order.
fn tile_index(dims: &[usize], origin: &[usize], tdims: &[usize]) -> Vec<usize> {
    let mut idx = vec![0usize];
    for (d, (&o, &t)) in origin.iter().zip(tdims).enumerate() {
        let stride: usize = dims[d + 1..].iter().product();
        idx = idx
            .iter()
            .flat_map(|&b| (0..t).map(move |k| b + (o + k) * stride))
            .collect();
    }
    idx
}

fn run(
    x: &[f64],
    f32out: bool,
    dims: &[usize],
    kind: Interp,
    eb: f64,
    edge: usize,
) -> Result<Coded, String> {
    let n = x.len();
    let parts: Vec<(Vec<usize>, Vec<usize>)> = tiles(dims, edge)
        .into_iter()
        .map(|(o, t)| (tile_index(dims, &o, &t), t))
        .collect();
    // the strict rule as SZp's: quantize with a slightly tightened step, check the decoded
    // value (in the output type) against the caller's bound
    let e2 = 2.0 * eb * (1.0 - 1.0 / 1024.0);
    let out = |v: f64| if f32out { v as f32 as f64 } else { v };
    let mut r = vec![0f64; n];
    let mut codes = Vec::with_capacity(n);
    let mut raw = Vec::new();
    let enc = |r: &mut [f64], codes: &mut Vec<i64>, raw: &mut Vec<f64>| {
        codes.clear();
        raw.clear();
        for (idx, tdims) in &parts {
            let mut t = vec![0f64; idx.len()];
            traverse(tdims, kind, &mut t, |i, pred| {
                let v = x[idx[i]];
                let q = ((v - pred) / e2).round();
                if q.abs() < MAX_CODE as f64 {
                    let d = out(pred + q * e2);
                    if (d - v).abs() <= eb {
                        codes.push(q as i64);
                        return d;
                    }
                }
                codes.push(MAX_CODE);
                raw.push(v);
                v
            });
            for (&g, &v) in idx.iter().zip(&t) {
                r[g] = v;
            }
        }
    };
    let enc_s = best(|| enc(&mut r, &mut codes, &mut raw));
    // size: chunks of codes through the entropy codec (prefix sums: order-1 residuals = codes)
    let mut lv = vec![0i64; CHUNK];
    let mut scratch = vec![0u8; entropy::encode_buffer_len(CHUNK)];
    let mut back = vec![0i64; CHUNK];
    let mut bytes = szp::HEADER_LEN + raw.len() * if f32out { 4 } else { 8 };
    for c in codes.chunks(CHUNK) {
        let mut acc = 0i64;
        for (l, &q) in lv.iter_mut().zip(c) {
            acc = acc.wrapping_add(q);
            *l = acc;
        }
        let len = entropy::encode_chunk(&lv[..c.len()], &mut scratch).map_err(|e| e.to_string())?;
        entropy::decode_chunk(&scratch[..len], &mut back[..c.len()]).map_err(|e| e.to_string())?;
        if back[..c.len()] != lv[..c.len()] {
            return Err("entropy round trip".into());
        }
        bytes += len + 8;
    }
    let zeros = codes.iter().filter(|&&q| q == 0).count() as f64 / n as f64;
    // decode from the codes, as a decoder would, and check bit equality and the bound
    let mut d = vec![0f64; n];
    let dec = |d: &mut [f64]| {
        let (mut k, mut o) = (0, 0);
        for (idx, tdims) in &parts {
            let mut t = vec![0f64; idx.len()];
            traverse(tdims, kind, &mut t, |_, pred| {
                let q = codes[k];
                k += 1;
                if q == MAX_CODE {
                    o += 1;
                    raw[o - 1]
                } else {
                    out(pred + q as f64 * e2)
                }
            });
            for (&g, &v) in idx.iter().zip(&t) {
                d[g] = v;
            }
        }
    };
    let dec_s = best(|| {
        dec(&mut d);
        black_box(&d);
    });
    for (i, (a, b)) in x.iter().zip(&d).enumerate() {
        if (a - b).abs() > eb || b.to_bits() != r[i].to_bits() {
            return Err(format!("bound or decoder mismatch at {i}"));
        }
    }
    Ok(Coded {
        bytes,
        zeros,
        outliers: raw.len(),
        enc_s,
        dec_s,
    })
}

/// The shipped layout (`szp::tiled`, `Layout::Interp`) on the field, serially in the core's
/// caller-slice API: its archive length and encode/decode speeds (GB/s of input, best of
/// `ROUNDS`), every finite value checked against the bound.
fn core_codec<T: szp::SzpFloat>(
    x: &[T],
    dims: &[usize],
    eb: f64,
) -> Result<(usize, f64, f64), String> {
    use szp::tiled::{self, Scratch};
    let shape: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
    let cfg = szp::Config::abs(eb)
        .with_layout(szp::Layout::Interp)
        .with_shape(szp::Shape::new(&shape).map_err(|e| e.to_string())?);
    let plan = tiled::plan(x, &cfg).map_err(|e| e.to_string())?;
    let l = tiled::scratch_lens(plan.max_tile_len());
    let z = T::default();
    let (mut v, mut d, mut o) = (vec![z; l.values], vec![z; l.values], vec![z; l.values]);
    let (mut c, mut lv, mut cd) = (
        vec![0i32; l.codes],
        vec![0i64; l.levels],
        vec![0u8; l.coded],
    );
    let mut out = vec![0u8; plan.worst_len(x).map_err(|e| e.to_string())?];
    let mut len = 0;
    let enc_s = best(|| {
        let mut s = Scratch {
            values: &mut v,
            decoded: &mut d,
            outliers: &mut o,
            codes: &mut c,
            levels: &mut lv,
            coded: &mut cd,
        };
        len = tiled::compress(x, &cfg, &mut s, &mut out).expect("compress");
    });
    let mut back = vec![z; x.len()];
    let dec_s = best(|| {
        tiled::decompress(
            &out[..len],
            &mut back,
            &mut c,
            &mut lv,
            szp::Verify::Checksums,
        )
        .expect("decompress");
    });
    let bound = szp::header(&out[..len]).map_err(|e| e.to_string())?.bound();
    if x.iter()
        .zip(&back)
        .any(|(a, b)| (a.to_f64() - b.to_f64()).abs() > bound)
    {
        return Err("bound missed".into());
    }
    let gb = std::mem::size_of_val(x) as f64 / 1e9;
    Ok((len, gb / enc_s, gb / dec_s))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).map_or("/work/shared/data", String::as_str);
    let csv = args
        .get(2)
        .map_or("benchmarks/results/amd-epyc/2026-12-06.csv", String::as_str);
    let only = args.get(3).cloned().unwrap_or_default();
    // (field, rel, codec) -> ratio, for SZ3 and fzpack (the block-head layout)
    let peers = peer_ratios(csv);
    let files = fields(dir, &only);
    // (name, n-D, interpolation, tile edge in values per dimension for 1-D / 2-D / 3-D+)
    let whole = [usize::MAX; 3];
    let variants: [(&str, bool, Interp, [usize; 3]); 6] = [
        ("1-D linear", false, Interp::Linear, whole),
        ("1-D linear 16Ki", false, Interp::Linear, [16384; 3]),
        ("n-D linear", true, Interp::Linear, whole),
        ("n-D cubic", true, Interp::Cubic, whole),
        ("n-D linear tiles", true, Interp::Linear, [65536, 256, 64]),
        ("n-D cubic tiles", true, Interp::Cubic, [65536, 256, 64]),
    ];
    let nv = variants.len();
    println!(
        "| field | rel | heads | {} | tiles, best of the two | SZ3 | tiles best/SZ3 | zeros | outliers | enc / dec MB/s (scalar f64) | core codec ratio | core/SZ3 | core codec enc / dec GB/s |",
        variants.map(|v| v.0).join(" | ")
    );
    println!(
        "|---|---|---|{}---|---|---|---|---|---|---|---|---|",
        "---|".repeat(nv)
    );
    // per rel: one list per variant, then tiles-best, SZ3, heads, core codec ratio, enc, dec
    let mut g: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); nv + 6]; RELS.len()];
    for p in files {
        let name = p
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        let ext = p.extension().and_then(|s| s.to_str()).unwrap_or("");
        let dims = dims_of(&p);
        let Ok(raw) = std::fs::read(&p) else { continue };
        let (x, f32out): (Vec<f64>, bool) = match ext {
            "f32" => (
                raw.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
                    .collect(),
                true,
            ),
            "f64" => (
                raw.chunks_exact(8)
                    .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                    .collect(),
                false,
            ),
            _ => continue,
        };
        if x.iter().any(|v| !v.is_finite()) {
            println!("| {name} | skipped: non-finite values |");
            continue;
        }
        let dims = if dims.iter().product::<usize>() == x.len() {
            dims
        } else {
            vec![x.len()]
        };
        let (lo, hi) = x
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        for (k, &rel) in RELS.iter().enumerate() {
            let eb = rel * (hi - lo);
            let mut ratios = Vec::new();
            let mut last = None;
            for &(_, nd, kind, edges) in &variants {
                let d = if nd { dims.clone() } else { vec![x.len()] };
                let edge = edges[d.len().min(3) - 1];
                match run(&x, f32out, &d, kind, eb, edge) {
                    Ok(c) => {
                        ratios.push(raw.len() as f64 / c.bytes as f64);
                        last = Some(c);
                    }
                    Err(e) => {
                        println!("| {name} | {rel:e} | error: {e} |");
                        ratios.push(f64::NAN);
                    }
                }
            }
            let key = |c: &str| (name.clone(), format!("{rel:e}"), c.to_string());
            let sz3 = peers.get(&key("sz3")).copied().unwrap_or(f64::NAN);
            let heads = peers.get(&key("fzpack")).copied().unwrap_or(f64::NAN);
            let tb = ratios[nv - 2].max(ratios[nv - 1]);
            let sp = if f32out {
                let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
                core_codec(&x32, &dims, eb)
            } else {
                core_codec(&x, &dims, eb)
            };
            let (sp, core) = match sp {
                Ok((len, e, d)) => {
                    let r = raw.len() as f64 / len as f64;
                    (
                        format!("{r:.2} | {:.2} | {e:.2} / {d:.2}", r / sz3),
                        [r, e, d],
                    )
                }
                Err(e) => (format!("{e} | |"), [f64::NAN; 3]),
            };
            let c = last.expect("a variant ran");
            println!(
                "| {name} | {rel:e} | {heads:.2} | {} | {tb:.2} | {sz3:.2} | {:.2} | {:.3} | {} | {:.0} / {:.0} | {sp} |",
                ratios
                    .iter()
                    .map(|r| format!("{r:.2}"))
                    .collect::<Vec<_>>()
                    .join(" | "),
                tb / sz3,
                c.zeros,
                c.outliers,
                raw.len() as f64 / c.enc_s / 1e6,
                raw.len() as f64 / c.dec_s / 1e6,
            );
            let gk = &mut g[k];
            for (v, r) in ratios.iter().enumerate() {
                gk[v].push(*r);
            }
            gk[nv].push(tb);
            gk[nv + 1].push(sz3);
            gk[nv + 2].push(heads);
            for (j, v) in core.iter().enumerate() {
                gk[nv + 3 + j].push(*v);
            }
        }
    }
    println!();
    println!(
        "| rel | fields | heads | {} | tiles, best of the two | SZ3 | tiles best/SZ3 | n-D linear/SZ3 | core codec | core codec/SZ3 | core enc GB/s | core dec GB/s |",
        variants.map(|v| v.0).join(" | ")
    );
    println!(
        "|---|---|---|{}---|---|---|---|---|---|---|---|",
        "---|".repeat(nv)
    );
    for (k, rel) in RELS.iter().enumerate() {
        let gk = &g[k];
        if gk[0].is_empty() {
            continue;
        }
        let gm: Vec<f64> = gk.iter().map(|v| geomean(v)).collect();
        println!(
            "| {rel:e} | {} | {:.2} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            gk[0].len(),
            gm[nv + 2],
            gm[..nv]
                .iter()
                .map(|r| format!("{r:.2}"))
                .collect::<Vec<_>>()
                .join(" | "),
            gm[nv],
            gm[nv + 1],
            gm[nv] / gm[nv + 1],
            gm[2] / gm[nv + 1],
            gm[nv + 3],
            gm[nv + 3] / gm[nv + 1],
            gm[nv + 4],
            gm[nv + 5],
        );
    }
}
