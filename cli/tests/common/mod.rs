//! Helpers every CLI test file shares: the binary, a scratch directory per test, running it
//! and reading what it printed. (Each test file is its own crate and uses a subset.)
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

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

/// An `.npy` file as numpy writes it: magic, version, header length (u16 for v1, u32 for v2
/// and v3), the dict padded with spaces and a newline to a multiple of 64 bytes, the data.
pub fn npy(version: u8, descr: &str, fortran: bool, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let tuple = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let f = if fortran { "True" } else { "False" };
    let mut dict = format!("{{'descr': {descr}, 'fortran_order': {f}, 'shape': {tuple}, }}");
    let pre = if version == 1 { 10 } else { 12 };
    let total = pre + dict.len() + 1;
    dict.push_str(&" ".repeat(total.next_multiple_of(64) - total));
    dict.push('\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.extend_from_slice(data);
    out
}

/// Runs `fzpack ARGS` with `input` on its standard input (written from a thread, so that a
/// child that stops reading cannot block the test).
pub fn piped(args: &[&str], input: &[u8]) -> Output {
    let mut c = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut w = c.stdin.take().expect("stdin");
    let b = input.to_vec();
    let t = std::thread::spawn(move || {
        let _ = w.write_all(&b);
    });
    let o = c.wait_with_output().expect("runs");
    t.join().expect("writer");
    o
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
