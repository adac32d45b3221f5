//! Runs the `fzpack` binary: round trips, every error case (message and exit code), `--json`
//! parsed back, the SVG plot.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::*;

fn dir(name: &str) -> PathBuf {
    scratch("cli", name)
}

fn fails(args: &[&str], code: i32, needle: &str) {
    fails_with(args, code, &[needle]);
}

fn write_f32(path: &Path, n: usize) -> Vec<f32> {
    write_wave(path, n, 50.0)
}

#[test]
fn pernix_round_trip_f32_and_f64() {
    let d = dir("pernix");
    let input = d.join("field_100x123.f32");
    let orig = write_f32(&input, 12_300);
    let arch = d.join("field.pnx");
    let out = ok(&[
        "compress",
        s(&input),
        "--codec",
        "pernix",
        "--bits",
        "12",
        "-o",
        s(&arch),
    ]);
    assert!(out.contains("ratio"), "{out}");
    let info = ok(&["info", s(&arch)]);
    assert!(
        info.contains("PERNIX block stream") && info.contains("12300"),
        "{info}"
    );
    let dec = d.join("back.f32");
    ok(&["decompress", s(&arch), "-o", s(&dec)]);
    let back = fzpack::values_from_le_bytes::<f32>(&std::fs::read(&dec).unwrap()).unwrap();
    assert_eq!(back.len(), orig.len());
    let v = ok(&["verify", s(&input), s(&arch)]);
    assert!(
        v.contains("OK") && v.contains("PSNR") && v.contains("RMSE"),
        "{v}"
    );

    // f64 via --dtype, a larger block, a given thread count, default output names
    let raw = d.join("wave.bin");
    let x: Vec<f64> = (0..5000).map(|i| (i as f64 * 0.003).cos() * 1e5).collect();
    std::fs::write(&raw, fzpack::values_to_le_bytes(&x)).unwrap();
    let args = ["compress", s(&raw), "--codec", "pernix", "--dtype", "f64"];
    ok(&[
        &args[..],
        &["--bits", "20", "--block-size", "256", "--threads", "2"],
    ]
    .concat());
    let arch = d.join("wave.bin.pnx");
    assert!(arch.exists());
    ok(&["decompress", s(&arch)]);
    assert!(d.join("wave.bin.decoded.f64").exists());
    ok(&["verify", s(&raw), s(&arch)]);
}

#[test]
fn szp_round_trip_abs_and_noa() {
    let d = dir("szp");
    let input = d.join("field_30x400.f32");
    let orig = write_f32(&input, 12_000);
    ok(&["compress", s(&input), "--rel", "1e-4"]);
    let arch = d.join("field_30x400.f32.szp");
    let info = ok(&["info", s(&arch)]);
    assert!(
        info.contains("fzpack SZp archive") && info.contains("NOA"),
        "{info}"
    );
    ok(&["decompress", s(&arch)]);
    let back = std::fs::read(d.join("field_30x400.decoded.f32")).unwrap();
    assert_eq!(back.len(), orig.len() * 4);
    let v = ok(&["verify", s(&input), s(&arch)]);
    assert!(v.contains("OK"), "{v}");

    let abs = d.join("abs.szp");
    let args = [
        "compress",
        s(&input),
        "--codec",
        "szp",
        "--mode",
        "abs",
        "--eb",
        "0.01",
    ];
    ok(&[
        &args[..],
        &["--block-size", "33", "--threads", "1", "-o", s(&abs)],
    ]
    .concat());
    assert!(ok(&["info", s(&abs)]).contains("ABS 1.000000e-2"));
    ok(&["verify", s(&input), s(&abs)]);

    // FZGPUModules .fzm: decoded by the CLI exactly as the library decodes it (under the
    // quantizer grid rule the native archive tightens the bound for 2^18·bound, the .fzm writer for
    // max|x|, so the two quantizer grids — and values — may differ; each meets its bound)
    let fzm = d.join("field.fzm");
    ok(&[
        "compress",
        s(&input),
        "--rel",
        "1e-4",
        "--format",
        "fzm",
        "-o",
        s(&fzm),
    ]);
    assert!(ok(&["info", s(&fzm)]).contains(".fzm v3.1"));
    ok(&["verify", s(&input), s(&fzm)]);
    ok(&["decompress", s(&fzm), "-o", s(&d.join("fzm.f32"))]);
    let fzm_bytes = std::fs::read(&fzm).unwrap();
    let lib: Vec<f32> =
        fzpack_cli::container::decode_all(&fzm_bytes, fzpack::pernix::Verify::Checksums).unwrap();
    assert_eq!(
        std::fs::read(d.join("fzm.f32")).unwrap(),
        fzpack::values_to_le_bytes(&lib)
    );
    assert_eq!(lib.len() * 4, back.len());
    fails(
        &[
            "compress",
            s(&input),
            "--bits",
            "16",
            "--codec",
            "pernix",
            "--format",
            "fzm",
        ],
        2,
        "SZp only",
    );

    // errors: a constant field has no NOA bound; bad bounds and block sizes; corrupt archive
    let flat = d.join("flat.f32");
    std::fs::write(&flat, fzpack::values_to_le_bytes(&[3.0f32; 500])).unwrap();
    fails(
        &["compress", s(&flat), "--rel", "1e-3"],
        4,
        "constant field",
    );
    fails(
        &["compress", s(&input), "--rel=-1", "-o", s(&d.join("x"))],
        2,
        "--rel -1 must be finite and > 0",
    );
    fails(
        &["compress", s(&input), "--abs", "0", "-o", s(&d.join("x"))],
        2,
        "--abs 0 must be finite and > 0",
    );
    fails(
        &[
            "compress",
            s(&input),
            "--eb",
            "0",
            "--mode",
            "noa",
            "-o",
            s(&d.join("x")),
        ],
        2,
        "--eb 0 must be finite and > 0",
    );
    fails(
        &[
            "compress",
            s(&input),
            "--rel",
            "1e-3",
            "--block-size",
            "5000",
        ],
        2,
        "1..=4096",
    );
    let mut bytes = std::fs::read(&abs).unwrap();
    bytes.truncate(bytes.len() - 1);
    let bad = d.join("bad.szp");
    std::fs::write(&bad, &bytes).unwrap();
    fails(&["decompress", s(&bad)], 5, "truncated");
    fails(&["verify", s(&input), s(&bad)], 5, "truncated");
}

#[test]
fn error_cases_have_messages_and_exit_codes() {
    let d = dir("errors");
    let missing = d.join("nope.f32");
    fails(
        &["compress", s(&missing), "--bits", "16", "--codec", "pernix"],
        3,
        "no such file",
    );
    fails(&["info", s(&missing)], 3, "no such file");

    let odd = d.join("odd.f32");
    std::fs::write(&odd, [0u8; 10]).unwrap();
    fails(
        &["compress", s(&odd), "--bits", "16", "--codec", "pernix"],
        4,
        "not a multiple",
    );

    let nan = d.join("nan.f32");
    let mut v = vec![1.0f32; 100];
    v[42] = f32::NAN;
    std::fs::write(&nan, fzpack::values_to_le_bytes(&v)).unwrap();
    fails(
        &["compress", s(&nan), "--bits", "16", "--codec", "pernix"],
        4,
        "index 42",
    );
    assert!(!d.join("nan.f32.pnx").exists(), "nothing written on error");

    let noext = d.join("data.raw");
    std::fs::write(&noext, [0u8; 8]).unwrap();
    fails(
        &["compress", s(&noext), "--bits", "16", "--codec", "pernix"],
        4,
        "--dtype",
    );

    let good = d.join("good.f32");
    write_f32(&good, 1000);
    fails(
        &["compress", s(&good), "--codec", "pernix", "--bits", "30"],
        2,
        "1..=24",
    );
    fails(
        &[
            "compress",
            s(&good),
            "--bits",
            "16",
            "--codec",
            "pernix",
            "--block-size",
            "96",
        ],
        2,
        "block size",
    );
    fails(
        &["compress", s(&good), "--rel", "1e-3", "--bogus"],
        2,
        "--bogus",
    );

    let arch = d.join("good.pnx");
    ok(&[
        "compress",
        s(&good),
        "--bits",
        "16",
        "--codec",
        "pernix",
        "-o",
        s(&arch),
    ]);
    fails(
        &[
            "compress",
            s(&good),
            "--bits",
            "16",
            "--codec",
            "pernix",
            "-o",
            s(&arch),
        ],
        7,
        "--force",
    );
    ok(&[
        "compress",
        s(&good),
        "--bits",
        "16",
        "--codec",
        "pernix",
        "-o",
        s(&arch),
        "--force",
    ]);

    // corrupt archives: truncated, bad magic, bad scale
    let bytes = std::fs::read(&arch).unwrap();
    let trunc = d.join("trunc.pnx");
    std::fs::write(&trunc, &bytes[..bytes.len() - 3]).unwrap();
    fails(
        &["decompress", s(&trunc), "-o", s(&d.join("t.f32"))],
        5,
        "corrupt archive",
    );
    fails(&["info", s(&trunc)], 5, "corrupt archive");
    assert!(!d.join("t.f32").exists());
    let junk = d.join("junk.pnx");
    std::fs::write(&junk, b"this is not an archive at all").unwrap();
    fails(&["decompress", s(&junk)], 5, "not an fzpack archive");
    let mut bad = bytes.clone();
    bad[24..28].copy_from_slice(&f32::NAN.to_le_bytes());
    let badscale = d.join("badscale.pnx");
    std::fs::write(&badscale, &bad).unwrap();
    fails(&["decompress", s(&badscale)], 5, "scale");

    // verify against the wrong original: the bound is violated
    let other = d.join("other.f32");
    std::fs::write(&other, fzpack::values_to_le_bytes(&vec![1e6f32; 1000])).unwrap();
    fails(&["verify", s(&other), s(&arch)], 6, "bound violated");
    let short = d.join("short.f32");
    write_f32(&short, 10);
    fails(&["verify", s(&short), s(&arch)], 4, "values");
}

#[test]
fn bench_json_and_plot() {
    let d = dir("bench");
    let f = d.join("small_40x50.f32");
    write_f32(&f, 2000);
    let svg = d.join("rd.svg");
    let o = run(&[
        "bench",
        s(&f),
        "--json",
        "--min-time",
        "0",
        "--plot",
        s(&svg),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        for k in BENCH_KEYS {
            assert!(r.get(k).is_some(), "missing {k} in {r}");
        }
        assert_eq!(r["file"], "small_40x50.f32");
        assert!(["scalar", "simd", "parallel"].contains(&r["path"].as_str().unwrap()));
        assert_eq!(r["identical_to_scalar"], true);
        assert!(r["max_abs_err"].as_f64().unwrap() <= r["bound"].as_f64().unwrap());
    }
    for bits in [
        "bits=4", "bits=8", "bits=12", "bits=16", "bits=20", "bits=24",
    ] {
        assert!(
            rows.iter()
                .any(|r| r["codec"] == "pernix" && r["setting"] == bits)
        );
    }
    // With --plot both SZp layouts are measured (the block-head layout smaller on this offset
    // field at every bound) and drawn as two series.
    for eb in ["noa=1e-2", "noa=1e-3", "noa=1e-4"] {
        let ratio = |c: &str| {
            rows.iter()
                .find(|r| r["codec"] == c && r["setting"] == eb)
                .and_then(|r| r["ratio"].as_f64())
                .unwrap_or_else(|| panic!("no {c} row at {eb}"))
        };
        assert!(ratio("szp") >= ratio("szp-fzgm"), "{eb}");
    }
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.starts_with("<svg") && svg_text.contains("<polyline"));
    assert!(
        svg_text.contains("szp-fzgm") && svg_text.contains(">szp "),
        "both layouts plotted"
    );
    // and the interpolation layout, as a third SZp series
    assert!(svg_text.contains("szp-interp"), "interp plotted");
    assert!(svg_text.trim_end().ends_with("</svg>"));
    // the plot is not overwritten without --force
    fails(
        &["bench", s(&f), "--min-time", "0", "--plot", s(&svg)],
        7,
        "--force",
    );

    // table output; dims that do not match the file
    let t = ok(&["bench", s(&f), "--min-time", "0", "--codec", "pernix"]);
    assert!(t.contains("PSNR dB") && t.contains("parallel"), "{t}");
    fails(
        &["bench", s(&f), "--dims", "7x7", "--min-time", "0"],
        4,
        "dims",
    );
}

fn read_f32(path: &Path) -> Vec<f32> {
    fzpack::values_from_le_bytes(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn compressed_domain_add_sum_scale_stats() {
    let d = dir("ops");
    let (ia, ib) = (d.join("a.f32"), d.join("b.f32"));
    let a = write_f32(&ia, 5000);
    // Same magnitude (max |x| 50.12), so the two archives share the quantizer grid.
    let b: Vec<f32> = a.iter().rev().copied().collect();
    std::fs::write(&ib, fzpack::values_to_le_bytes(&b)).unwrap();
    let (za, zb) = (d.join("a.szp"), d.join("b.szp"));
    for (i, z) in [(&ia, &za), (&ib, &zb)] {
        ok(&[
            "compress",
            s(i),
            "--codec",
            "szp",
            "--eb",
            "1e-3",
            "--mode",
            "abs",
            "-o",
            s(z),
        ]);
    }
    let zc = d.join("c.szp");
    let out = ok(&["add", s(&za), s(&zb), "-o", s(&zc)]);
    assert!(out.contains("bound 2e-3"), "{out}");
    let back = d.join("c.f32");
    ok(&["decompress", s(&zc), "-o", s(&back)]);
    let c = read_f32(&back);
    assert_eq!(c.len(), a.len());
    for i in 0..c.len() {
        let exact = a[i] as f64 + b[i] as f64;
        assert!(
            (c[i] as f64 - exact).abs() <= 2e-3,
            "element {i}: {} vs {exact}",
            c[i]
        );
    }
    let zs = d.join("s.szp");
    let out = ok(&["sum", s(&za), s(&za), s(&zb), "-o", s(&zs)]);
    assert!(out.contains("bound 3e-3"), "{out}");
    let zk = d.join("k.szp");
    ok(&["scale", s(&za), "--by", "-3", "-o", s(&zk)]);
    let kb = d.join("k.f32");
    ok(&["decompress", s(&zk), "-o", s(&kb)]);
    for (i, v) in read_f32(&kb).iter().enumerate() {
        assert!((*v as f64 + 3.0 * a[i] as f64).abs() <= 3e-3, "element {i}");
    }
    let st = ok(&["stats", s(&za), "--json"]);
    let j: serde_json::Value = serde_json::from_str(st.trim()).expect("stats --json is JSON");
    let exact: f64 = a.iter().map(|&x| x as f64).sum();
    let sum = j["sum"].as_f64().expect("sum field");
    assert!((sum - exact).abs() <= 5000.0 * 1e-3, "{sum} vs {exact}");
    // A different bound is a different grid: refused, naming the field.
    let zd = d.join("d.szp");
    ok(&[
        "compress",
        s(&ib),
        "--codec",
        "szp",
        "--eb",
        "1e-2",
        "--mode",
        "abs",
        "-o",
        s(&zd),
    ]);
    fails(
        &["add", s(&za), s(&zd), "-o", s(&d.join("x.szp"))],
        4,
        "bound",
    );
    assert!(!d.join("x.szp").exists());
}

#[cfg(unix)]
#[test]
fn outputs_that_are_not_regular_files_or_the_input_are_refused() {
    use std::os::unix::fs::symlink;
    let d = dir("outsafety");
    let input = d.join("in.f32");
    let orig = std::fs::read(&{
        write_f32(&input, 1000);
        input.clone()
    })
    .unwrap();
    let szp = ["--codec", "szp", "--rel", "1e-3"];
    // Output == input (also through a symlink), even with --force: the input survives.
    let link_in = d.join("alias.f32");
    symlink(&input, &link_in).unwrap();
    for out in [&input, &link_in] {
        let o = run(&[
            &["compress", s(&input)][..],
            &szp[..],
            &["-o", s(out), "--force"],
        ]
        .concat());
        assert!(!o.status.success(), "{}", text(&o));
        assert_eq!(std::fs::read(&input).unwrap(), orig, "input changed");
    }
    // A symlink at the output is not followed or replaced, even with --force.
    let victim = d.join("victim");
    std::fs::write(&victim, b"keep").unwrap();
    let link = d.join("out.szp");
    symlink(&victim, &link).unwrap();
    let o = run(&[
        &["compress", s(&input)][..],
        &szp[..],
        &["-o", s(&link), "--force"],
    ]
    .concat());
    assert!(!o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A FIFO at the output (mkfifo from coreutils) is refused without blocking.
    let fifo = d.join("fifo");
    if Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let o = run(&[
            &["compress", s(&input)][..],
            &szp[..],
            &["-o", s(&fifo), "--force"],
        ]
        .concat());
        assert!(!o.status.success(), "{}", text(&o));
    } else {
        println!("skipped: FIFO case (mkfifo failed)");
    }
    // A character device (/dev/null exists everywhere) is never replaced.
    let o = run(&[
        &["compress", s(&input)][..],
        &szp[..],
        &["-o", "/dev/null", "--force"],
    ]
    .concat());
    assert!(!o.status.success(), "{}", text(&o));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    // No temp file left behind by the refused runs.
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp") || n.contains("partial"))
        .collect();
    assert!(left.is_empty(), "temp files left: {left:?}");
}

#[test]
fn hostile_arguments_and_inputs_fail_fast() {
    let d = dir("hostile");
    let input = d.join("in.f32");
    write_f32(&input, 1000);
    let out = d.join("o.szp");
    let o = run(&[
        "compress",
        s(&input),
        "--codec",
        "szp",
        "--rel",
        "1e-3",
        "--threads",
        "100000",
        "-o",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = run(&[
        "compress",
        s(&input),
        "--codec",
        "szp",
        "--rel",
        "1e-3",
        "--bits",
        "8",
        "-o",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = std::time::Instant::now();
    let o = run(&["info", "/dev/zero"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        t.elapsed().as_secs() < 30,
        "info /dev/zero took {:?}",
        t.elapsed()
    );
}

#[test]
fn pnx_bit_flips_are_detected() {
    let d = dir("pnxflips");
    let input = d.join("in.f32");
    write_f32(&input, 20_000);
    let arch = d.join("a.pnx");
    ok(&[
        "compress",
        s(&input),
        "--codec",
        "pernix",
        "--bits",
        "12",
        "-o",
        s(&arch),
    ]);
    let bytes = std::fs::read(&arch).unwrap();
    let bad = d.join("bad.pnx");
    let back = d.join("back.f32");
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let (mut detected, trials) = (0, 200);
    for _ in 0..trials {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let bit = (rng % (bytes.len() as u64 * 8)) as usize;
        let mut b = bytes.clone();
        b[bit / 8] ^= 1 << (bit % 8);
        std::fs::write(&bad, &b).unwrap();
        let o = run(&["decompress", s(&bad), "-o", s(&back), "--force"]);
        if !o.status.success() {
            detected += 1;
        }
    }
    assert_eq!(
        detected, trials,
        "{detected}/{trials} single-bit flips detected"
    );
}

/// `tests/golden/pnx`: `v1_bits12.pnx` was written by the version 1 writer (kept in git history),
/// `v2_bits12.pnx` by the version 2 writer, both from `field_3000.f32` at 12 bits. Both must
/// still read to the same values, and today's writer must reproduce v2 byte for byte.
#[test]
fn golden_pnx_v1_and_v2_streams() {
    let g = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/pnx");
    let d = dir("golden-pnx");
    let fresh = d.join("fresh.pnx");
    ok(&[
        "compress",
        s(&g.join("field_3000.f32")),
        "--codec",
        "pernix",
        "--bits",
        "12",
        "-o",
        s(&fresh),
    ]);
    assert_eq!(
        std::fs::read(&fresh).unwrap(),
        std::fs::read(g.join("v2_bits12.pnx")).unwrap(),
        "the v2 writer's bytes changed"
    );
    let (b1, b2) = (d.join("v1.f32"), d.join("v2.f32"));
    ok(&["decompress", s(&g.join("v1_bits12.pnx")), "-o", s(&b1)]);
    ok(&["decompress", s(&g.join("v2_bits12.pnx")), "-o", s(&b2)]);
    let (v1, v2) = (read_f32(&b1), read_f32(&b2));
    assert_eq!(v1.len(), 3000);
    assert_eq!(
        v1, v2,
        "v1 and v2 streams of the same field decode differently"
    );
    let orig = read_f32(&g.join("field_3000.f32"));
    let worst = orig
        .iter()
        .zip(&v1)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    assert!(worst <= 50.2 / 2047.0, "worst error {worst}");
}

/// `--f32-step`: the archive records a bound whose step is an f32, a hair below the plain
/// archive's, from a file and from a pipe streamed with `--max-abs` alike; it verifies; the
/// flag is refused where it has no meaning.
#[test]
fn szp_f32_step() {
    let d = dir("f32step");
    let input = d.join("field.f32");
    let orig = write_f32(&input, 12_000);
    let bytes: Vec<u8> = orig.iter().flat_map(|v| v.to_le_bytes()).collect();
    let quant_eb = |p: &Path| {
        fzpack::szp::header(&std::fs::read(p).unwrap())
            .unwrap()
            .quant_eb
    };
    let (plain, step) = (d.join("plain.szp"), d.join("step.szp"));
    let base = ["compress", s(&input), "--abs", "1e-3", "--max-abs", "1e3"];
    ok(&[&base[..], &["-o", s(&plain)]].concat());
    ok(&[&base[..], &["--f32-step", "-o", s(&step)]].concat());
    let (p, q) = (quant_eb(&plain), quant_eb(&step));
    assert_eq!(f64::from((2.0 * q) as f32), 2.0 * q, "step {q:e}");
    assert!(q < p && q > p * (1.0 - 2f64.powi(-23)), "{q:e} vs {p:e}");
    assert!(ok(&["verify", s(&input), s(&step)]).contains("OK"));
    // The same archive from a pipe (streamed in bounded windows).
    let piped_out = d.join("piped.szp");
    let o = piped(
        &[
            "compress",
            "-",
            "--dtype",
            "f32",
            "--abs",
            "1e-3",
            "--max-abs",
            "1e3",
        ]
        .iter()
        .chain(&["--f32-step", "-o", s(&piped_out)])
        .copied()
        .collect::<Vec<_>>(),
        &bytes,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read(&piped_out).unwrap(),
        std::fs::read(&step).unwrap()
    );
    let refused = [
        &["--codec", "pernix", "--bits", "12"][..],
        &["--abs", "1e-3", "--format", "fzm"],
        &["--abs", "1e-3", "--layout", "interp"],
    ];
    for extra in refused {
        let args = [&["compress", s(&input), "--f32-step", "--force"][..], extra].concat();
        fails_with(&args, 2, &["--f32-step"]);
    }
}
