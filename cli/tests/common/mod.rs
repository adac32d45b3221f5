//! Helpers every CLI test file shares: the binary, a scratch directory per test, running it
//! and reading what it printed. (Each test file is its own crate and uses a subset.)
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `fzpack` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fzpack"))
}

/// An empty scratch directory `<target tmp>/<prefix>-<name>`, removed and made anew.
pub fn scratch(prefix: &str, name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A path as `&str` (the tests make only UTF-8 paths).
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Standard output followed by standard error.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `fzpack ARGS`.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("runs")
}

/// Runs `fzpack ARGS`, expects success and returns what it printed.
pub fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?} failed: {}", text(&o));
    text(&o)
}

/// Expects failure with `code` and a message containing every one of `needles`.
pub fn fails_with(args: &[&str], code: i32, needles: &[&str]) -> String {
    let o = run(args);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {t}");
    for n in needles {
        assert!(t.contains(n), "{args:?}: expected {n:?} in {t}");
    }
    t
}

/// `n` values of a sine of amplitude `amp` plus a small ripple, written to `path` as raw
/// little-endian f32; returns them.
pub fn write_wave(path: &Path, n: usize, amp: f32) -> Vec<f32> {
    let v: Vec<f32> = (0..n)
        .map(|i| ((i as f32) * 0.01).sin() * amp + ((i * 7919) % 13) as f32 * 0.01)
        .collect();
    std::fs::write(path, fzpack::values_to_le_bytes(&v)).unwrap();
    v
}

/// Names in `d` that look like fzpack temporary files.
pub fn temps(d: &Path) -> Vec<String> {
    std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".fzpack-tmp"))
        .collect()
}

/// The keys every `bench --json` row has had from the first (kept for compatibility).
pub const BENCH_KEYS: [&str; 15] = [
    "file",
    "codec",
    "path",
    "setting",
    "ratio",
    "bits_per_value",
    "max_abs_err",
    "bound",
    "err_over_bound",
    "psnr_db",
    "compress_gbps",
    "decompress_gbps",
    "compress_vs_scalar",
    "decompress_vs_scalar",
    "identical_to_scalar",
];
