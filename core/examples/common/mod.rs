//! What the core's studies share: timing, geometric means, the data directory's fields and
//! their dimensions, and the peers' ratios from a results CSV.

#![allow(dead_code)] // each study uses its part

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The best time of `ROUNDS` (environment, default `rounds`) runs of `f`, in seconds.
pub fn best<F: FnMut()>(rounds: usize, mut f: F) -> f64 {
    let rounds = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(rounds);
    (0..rounds)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The geometric mean of `v`.
pub fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|r| r.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// The dimensions in a field's name `NAME_D0xD1x….f32|f64` (empty if none).
pub fn dims_of(path: &Path) -> Vec<usize> {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("")
        .rsplit('_')
        .next()
        .unwrap_or("")
        .split('x')
        .filter_map(|d| d.parse().ok())
        .collect()
}

/// The files of `dir` whose names contain `only`, sorted.
pub fn fields(dir: &str, only: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| {
        p.file_name()
            .and_then(|s| s.to_str())
            .is_some_and(|n| n.contains(only))
    });
    files.sort();
    files
}

/// Ratios from a results CSV of `scripts/bench-peers.py`: (field, rel as `{:e}`, codec) →
/// ratio. A missing or unreadable file is said on stdout and gives none.
pub fn peer_ratios(csv: &str) -> HashMap<(String, String, String), f64> {
    let mut out = HashMap::new();
    let Ok(text) = std::fs::read_to_string(csv) else {
        println!("no peer results in {csv}");
        return out;
    };
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n);
    let (Some(f), Some(c), Some(r), Some(ra)) =
        (col("field"), col("codec"), col("rel"), col("ratio"))
    else {
        return out;
    };
    for l in lines {
        let v: Vec<&str> = l.split(',').collect();
        if let (Some(field), Some(ratio), Some(rel), Some(codec)) = (
            v.get(f),
            v.get(ra).and_then(|s| s.parse::<f64>().ok()),
            v.get(r).and_then(|s| s.parse::<f64>().ok()),
            v.get(c),
        ) {
            out.insert(
                (field.to_string(), format!("{rel:e}"), codec.to_string()),
                ratio,
            );
        }
    }
    out
}
