//! `fzpack bench`: JSON rows (old keys kept, new keys present and consistent), warm vs
//! `--e2e` timing, `--isa` narrowing and its errors, `--paths`, option errors. No timing
//! asserts: speeds are only checked to be positive and the ratios to be the stated quotients.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::*;

fn dir(name: &str) -> PathBuf {
    scratch("bench", name)
}

fn fails(args: &[&str], code: i32, needle: &str) {
    fails_with(args, code, &[needle]);
}

/// Runs `bench --json --min-time 0` with `args`; the rows.
fn rows(args: &[&str]) -> Vec<Value> {
    let mut a = vec!["bench", "--json", "--min-time", "0"];
    a.extend_from_slice(args);
    let o = run(&a);
    assert!(o.status.success(), "{a:?}: {}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{a:?}: not JSON ({e}): {}", text(&o)));
    let v = v.as_array().expect("a JSON array").clone();
    assert!(!v.is_empty(), "{a:?}: no rows");
    v
}

fn write_f32(path: &Path, n: usize) {
    let v: Vec<f32> = (0..n)
        .map(|i| ((i as f32) * 0.013).sin() * 30.0 + ((i * 7919) % 17) as f32 * 0.02)
        .collect();
    std::fs::write(path, fzpack::values_to_le_bytes(&v)).unwrap();
}

fn num(r: &Value, k: &str) -> f64 {
    r[k].as_f64()
        .unwrap_or_else(|| panic!("{k} is not a number in {r}"))
}

/// The keys added after [`BENCH_KEYS`].
const NEW_KEYS: [&str; 20] = [
    "block",
    "compress_cpu_gbps",
    "decompress_cpu_gbps",
    "decompress_noverify_cpu_gbps",
    "memcpy_cpu_gbps",
    "compress_cpu_vs_memcpy",
    "decompress_cpu_vs_memcpy",
    "decompress_noverify_gbps",
    "kernel",
    "isa",
    "threads",
    "timing",
    "values",
    "raw_bytes",
    "memcpy_gbps",
    "compress_vs_memcpy",
    "decompress_vs_memcpy",
    "compress_vs_simd",
    "decompress_vs_simd",
    "load1",
];

/// A small real field from ../shared/data when present.
fn real_field() -> Option<PathBuf> {
    let f = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/obspy_karc_bhz_disp_86399.f32");
    if f.exists() {
        Some(f)
    } else {
        println!("note: ../shared/data absent; generated fields only");
        None
    }
}

#[test]
fn json_rows_have_the_keys_and_consistent_ratios() {
    let d = dir("json");
    let f = d.join("wave_30x70.f32");
    write_f32(&f, 2100);
    let real = real_field();
    let mut args = vec![
        f.to_str().unwrap(),
        "--random-walk",
        "3Ki",
        "--threads",
        "2",
        "--bits",
        "4,12-13",
        "--eb",
        "1e-2,1e-4",
    ];
    if let Some(r) = &real {
        args.insert(0, r.to_str().unwrap());
    }
    let rows = rows(&args);
    let files = 2 + usize::from(real.is_some());
    // 2 SZp bounds + 3 PERNIX widths, 3 paths each, per file, and the interpolation layout
    // at the 2 SZp bounds on the simd path alone (the default run's extra rows)
    assert_eq!(rows.len(), files * (5 * 3 + 2), "{rows:?}");
    let interp: Vec<_> = rows.iter().filter(|r| r["codec"] == "szp-interp").collect();
    assert_eq!(interp.len(), files * 2);
    assert!(
        interp
            .iter()
            .all(|r| r["path"] == "simd" && r["kernel"] == "tiles")
    );
    for r in &rows {
        for k in BENCH_KEYS.iter().chain(&NEW_KEYS) {
            assert!(r.get(*k).is_some(), "missing {k} in {r}");
        }
        assert_eq!(r["timing"], "warm", "{r}");
        assert_eq!(r["isa"], "detected", "{r}");
        assert_eq!(r["identical_to_scalar"], true, "{r}");
        assert!(num(r, "max_abs_err") <= num(r, "bound"), "{r}");
        let path = r["path"].as_str().unwrap();
        assert!(["scalar", "simd", "parallel"].contains(&path), "{r}");
        assert_eq!(r["threads"], if path == "parallel" { 2 } else { 1 }, "{r}");
        if path == "scalar" {
            assert_eq!(r["kernel"], "scalar", "{r}");
            assert_eq!(num(r, "compress_vs_scalar"), 1.0, "{r}");
        }
        if path == "simd" {
            assert_eq!(num(r, "decompress_vs_simd"), 1.0, "{r}");
        }
        let m = num(r, "memcpy_gbps");
        assert!(m > 0.0, "{r}");
        let mc = num(r, "memcpy_cpu_gbps");
        assert!(mc > 0.0, "{r}");
        for (speed, over, m) in [
            ("compress_gbps", "compress_vs_memcpy", m),
            ("decompress_gbps", "decompress_vs_memcpy", m),
            ("compress_cpu_gbps", "compress_cpu_vs_memcpy", mc),
            ("decompress_cpu_gbps", "decompress_cpu_vs_memcpy", mc),
        ] {
            let (s, o) = (num(r, speed), num(r, over));
            assert!(s > 0.0, "{r}");
            assert!(
                (o - s / m).abs() <= 1e-9 * (s / m),
                "{over} != {speed}/M in {r}"
            );
        }
        let bpv = num(r, "bits_per_value");
        let elem = if r["file"].as_str().unwrap().ends_with(".f64") {
            64.0
        } else {
            32.0
        };
        assert!((num(r, "ratio") * bpv - elem).abs() < 1e-6, "{r}");
        assert_eq!(num(r, "raw_bytes"), num(r, "values") * elem / 8.0, "{r}");
        assert!(
            ["pernix", "szp", "szp-interp"].contains(&r["codec"].as_str().unwrap()),
            "{r}"
        );
        assert!(num(r, "decompress_noverify_gbps") > 0.0, "{r}");
        assert!(num(r, "decompress_noverify_cpu_gbps") > 0.0, "{r}");
    }
    for s in ["bits=4", "bits=12", "bits=13", "noa=1e-2", "noa=1e-4"] {
        assert!(rows.iter().any(|r| r["setting"] == s), "no {s}");
    }
    let walk = rows
        .iter()
        .filter(|r| r["file"] == "builtin:random_walk_3072.f32")
        .count();
    assert_eq!(walk, 15 + 2);
    assert!(rows.iter().all(|r| num(r, "values") > 0.0));
}

#[test]
fn e2e_and_paths() {
    let rows_e2e = rows(&[
        "--random-walk",
        "2Ki",
        "--e2e",
        "--bits",
        "8",
        "--eb",
        "1e-3",
    ]);
    assert!(rows_e2e.iter().all(|r| r["timing"] == "e2e"));
    // SZp heads and PERNIX on 3 paths each, the interpolation layout on the simd path
    assert_eq!(rows_e2e.len(), 7);

    let simd = rows(&["--random-walk", "2Ki", "--paths", "simd", "--bits", "8"]);
    assert!(simd.iter().all(|r| r["path"] == "simd"), "{simd:?}");
    // no scalar row: the ratio to it is unknown (null), identity is still checked
    assert!(simd.iter().all(|r| r["compress_vs_scalar"].is_null()));
    assert!(simd.iter().all(|r| r["identical_to_scalar"] == true));

    // the table footer says how it timed
    let o = run(&[
        "bench",
        "--random-walk",
        "2Ki",
        "--min-time",
        "0",
        "--bits",
        "8",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("warm, reused buffers"), "{t}");
    assert!(
        t.contains("M = warm single-thread memcpy of 8192 bytes"),
        "{t}"
    );
    assert!(t.contains("PSNR dB") && t.contains("parallel"), "{t}");
    let o = run(&["bench", "--random-walk", "2Ki", "--min-time", "0", "--e2e"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("end-to-end (--e2e)"), "{}", text(&o));
}

#[test]
fn pernix_block_size() {
    let rows = rows(&[
        "--random-walk",
        "4Ki",
        "--codec",
        "pernix",
        "--pernix-block",
        "1024",
    ]);
    assert!(
        rows.iter()
            .all(|r| r["block"] == 1024 && r["codec"] == "pernix")
    );
    assert!(rows.iter().all(|r| r["identical_to_scalar"] == true));
    let rows = rows_default_block();
    assert!(
        rows.iter()
            .all(|r| r["block"] == if r["codec"] == "pernix" { 64 } else { 128 })
    );
}

fn rows_default_block() -> Vec<Value> {
    rows(&["--random-walk", "1Ki", "--bits", "8", "--eb", "1e-3"])
}

#[test]
fn isa_scalar_runs_only_scalar_kernels() {
    let rows = rows(&["--random-walk", "4Ki", "--isa", "scalar"]);
    for r in &rows {
        assert_eq!(r["isa"], "scalar", "{r}");
        assert_eq!(r["kernel"], "scalar", "{r}");
        assert_eq!(r["identical_to_scalar"], true, "{r}");
    }
    assert!(rows.iter().any(|r| r["path"] == "parallel"));
}

#[test]
fn isa_narrowing_selects_that_kernel() {
    #[cfg(target_arch = "x86_64")]
    let (isa, have) = (
        "avx2",
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2"),
    );
    #[cfg(target_arch = "aarch64")]
    let (isa, have) = ("neon", std::arch::is_aarch64_feature_detected!("neon"));
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let (isa, have) = ("none", false);
    if !have {
        println!("skipped: this CPU has no {isa} to narrow to");
        return;
    }
    let one = rows(&["--random-walk", "4Ki", "--isa", isa, "--bits", "8,16"]);
    for r in &one {
        assert_eq!(r["isa"], isa, "{r}");
        let want = if r["path"] == "scalar" { "scalar" } else { isa };
        assert_eq!(r["kernel"], want, "{r}");
        assert_eq!(r["identical_to_scalar"], true, "{r}");
    }
    // two ISAs side by side: the scalar path once, simd and parallel per ISA
    let both = format!("scalar,{isa}");
    let rows = rows(&["--random-walk", "4Ki", "--isa", &both, "--bits", "8"]);
    let count = |path: &str, isa: &str| {
        rows.iter()
            .filter(|r| r["path"] == path && r["isa"] == isa && r["codec"] == "pernix")
            .count()
    };
    assert_eq!(count("scalar", "scalar"), 1, "{rows:?}");
    assert_eq!(count("scalar", isa), 0, "{rows:?}");
    for path in ["simd", "parallel"] {
        assert_eq!(count(path, "scalar"), 1, "{rows:?}");
        assert_eq!(count(path, isa), 1, "{rows:?}");
    }
    for r in rows.iter().filter(|r| r["path"] == "simd") {
        assert_eq!(
            num(r, "compress_vs_simd"),
            1.0,
            "each ISA's simd row is its own base: {r}"
        );
    }
}

#[test]
fn unavailable_isa_is_a_clear_error() {
    #[cfg(target_arch = "x86_64")]
    fails(
        &["bench", "--isa", "neon", "--min-time", "0"],
        2,
        "--isa neon: neon is an ISA of aarch64; this build runs on x86_64",
    );
    #[cfg(target_arch = "aarch64")]
    fails(
        &["bench", "--isa", "avx2", "--min-time", "0"],
        2,
        "--isa avx2: avx2 is an ISA of x86_64",
    );
    #[cfg(target_arch = "x86_64")]
    if !std::is_x86_feature_detected!("avx512vbmi") {
        fails(
            &["bench", "--isa", "avx512", "--min-time", "0"],
            2,
            "--isa avx512: this CPU lacks AVX-512",
        );
    } else {
        println!("note: this CPU has AVX-512 VBMI; only the foreign-ISA error is checked");
    }
    // clap rejects names that are no ISA at all
    fails(&["bench", "--isa", "sse9"], 2, "invalid value");
}

#[test]
fn bad_options_are_usage_errors() {
    fails(&["bench", "--bits", "0-3"], 2, "--bits");
    fails(&["bench", "--bits", "9-4"], 2, "--bits");
    fails(&["bench", "--bits", "25"], 2, "--bits");
    fails(&["bench", "--eb", "0"], 2, "--eb");
    fails(&["bench", "--eb", "1e-3,x"], 2, "--eb");
    fails(&["bench", "--random-walk", "0"], 2, "--random-walk");
    fails(&["bench", "--random-walk", "12Gi"], 2, "--random-walk");
    fails(&["bench", "--paths", "gpu"], 2, "invalid value");
    fails(&["bench", "--pernix-block", "96"], 2, "--pernix-block 96");
}
