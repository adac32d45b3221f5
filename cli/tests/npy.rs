//! Scientific files as they come: NumPy `.npy` read by `compress` (f4/f8, either byte order, C
//! and Fortran order, header versions 1–3; other dtypes refused by name) and written by
//! `decompress` (for an output named `.npy`), the shape kept in the SZp archive (from the
//! header or `--dims`) and given back, missing values (NaN, ±inf) kept exactly, the checks on
//! raw inputs (size a multiple of the element size, the name's type against `--dtype`,
//! `--dims` against the count), and `--gpu` (an error without the `cuda` feature or without a
//! device, never a CPU fallback).
//!
//! The `.npy` bytes are written by hand here (no numpy needed); where python3 with numpy is
//! present, `numpy_reads_and_writes_what_fzpack_does` also checks against numpy itself.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::*;

fn dir(name: &str) -> PathBuf {
    scratch("npy", name)
}

use common::fails_with as fails;

/// The test field in C order: value at (i, j, k) of shape (2, 3, 4) is 260 + 1.5 (12 i + 4 j
/// + k) plus a small wiggle, so any misordering moves values far outside the bound.
fn field(shape: &[usize]) -> Vec<f64> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|i| 260.0 + 1.5 * i as f64 + 0.01 * (i as f64).sin())
        .collect()
}

/// The C-order values laid out in Fortran order (first index fastest).
fn to_fortran(c: &[f64], shape: &[usize]) -> Vec<f64> {
    let nd = shape.len();
    let mut cs = vec![1usize; nd]; // C strides
    for k in (0..nd.saturating_sub(1)).rev() {
        cs[k] = cs[k + 1] * shape[k + 1];
    }
    let mut idx = vec![0usize; nd];
    let mut out = Vec::with_capacity(c.len());
    for _ in 0..c.len() {
        out.push(c[idx.iter().zip(&cs).map(|(i, s)| i * s).sum::<usize>()]);
        for k in 0..nd {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

fn bytes_of(v: &[f64], f8: bool, big: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for &x in v {
        match (f8, big) {
            (true, false) => out.extend_from_slice(&x.to_le_bytes()),
            (true, true) => out.extend_from_slice(&x.to_be_bytes()),
            (false, false) => out.extend_from_slice(&(x as f32).to_le_bytes()),
            (false, true) => out.extend_from_slice(&(x as f32).to_be_bytes()),
        }
    }
    out
}

fn read_raw(path: &Path, f8: bool) -> Vec<f64> {
    let b = std::fs::read(path).unwrap();
    if f8 {
        b.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    } else {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect()
    }
}

/// Every f4/f8, little/big-endian, C/Fortran, v1/v2/v3 variant of a 2x3x4 field compresses
/// to an archive whose values are the field in C order within the bound, and the shape is
/// shown on stderr.
#[test]
fn npy_input_every_byte_order_and_memory_order() {
    let d = dir("input");
    let shape = [2usize, 3, 4];
    let c = field(&shape);
    let f = to_fortran(&c, &shape);
    let mut cases = 0;
    for version in [1u8, 2, 3] {
        for f8 in [false, true] {
            for big in [false, true] {
                for fortran in [false, true] {
                    let descr = format!(
                        "'{}{}'",
                        if big { '>' } else { '<' },
                        if f8 { "f8" } else { "f4" }
                    );
                    let data = bytes_of(if fortran { &f } else { &c }, f8, big);
                    let name = format!("v{version}_{f8}_{big}_{fortran}.npy");
                    let p = d.join(&name);
                    std::fs::write(&p, npy(version, &descr, fortran, &shape, &data)).unwrap();
                    let a = d.join(format!("{name}.szp"));
                    let o = bin()
                        .args(["compress", s(&p), "--mode", "abs", "--eb", "1e-3"])
                        .args(["-o", s(&a)])
                        .output()
                        .unwrap();
                    assert!(o.status.success(), "{name}: {}", text(&o));
                    let err = String::from_utf8_lossy(&o.stderr);
                    assert!(err.contains("shape 2x3x4"), "{name}: {err}");
                    let out = d.join(format!("{name}.raw"));
                    ok(&["decompress", s(&a), "-o", s(&out)]);
                    let got = read_raw(&out, f8);
                    assert_eq!(got.len(), c.len(), "{name}");
                    for (i, (g, w)) in got.iter().zip(&c).enumerate() {
                        let w = if f8 { *w } else { *w as f32 as f64 };
                        assert!((g - w).abs() <= 1e-3, "{name}: index {i}: {g} vs {w}");
                    }
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 24);
    // --dtype that agrees is accepted, one that disagrees is refused
    let p = d.join("v1_false_false_false.npy");
    ok(&[
        "compress",
        s(&p),
        "--rel",
        "1e-3",
        "--dtype",
        "f32",
        "-o",
        s(&d.join("a1.szp")),
    ]);
    fails(
        &[
            "compress",
            s(&p),
            "--rel",
            "1e-3",
            "--dtype",
            "f64",
            "-o",
            s(&d.join("a2.szp")),
        ],
        4,
        &["header says f32", "--dtype is f64"],
    );
    // --dims must be the header's shape
    ok(&[
        "compress",
        s(&p),
        "--rel",
        "1e-3",
        "--dims",
        "2x3x4",
        "-o",
        s(&d.join("a3.szp")),
    ]);
    fails(
        &[
            "compress",
            s(&p),
            "--rel",
            "1e-3",
            "--dims",
            "6x4",
            "-o",
            s(&d.join("a4.szp")),
        ],
        4,
        &["6x4", "2x3x4"],
    );
    // PERNIX and .fzm take .npy too
    ok(&[
        "compress",
        s(&p),
        "--bits",
        "16",
        "--codec",
        "pernix",
        "-o",
        s(&d.join("a.pnx")),
    ]);
    ok(&[
        "compress",
        s(&p),
        "--rel",
        "1e-3",
        "--format",
        "fzm",
        "-o",
        s(&d.join("a.fzm")),
    ]);
    // data shorter than the shape says
    let mut short = std::fs::read(&p).unwrap();
    short.truncate(short.len() - 4);
    let sp = d.join("short.npy");
    std::fs::write(&sp, short).unwrap();
    fails(
        &["compress", s(&sp), "--rel", "1e-3"],
        4,
        &["needs 96 bytes", "holds 92"],
    );
    // --raw still reads the bytes as raw floats (header included)
    let raw_out = d.join("raw.szp");
    let t = ok(&[
        "compress",
        s(&p),
        "--rel",
        "1e-3",
        "--dtype",
        "f32",
        "--raw",
        "-o",
        s(&raw_out),
    ]);
    assert!(t.contains("56 f32 values"), "{t}"); // 128 header bytes + 96 data bytes
}

/// Element types the codecs do not take are refused, naming the dtype.
#[test]
fn npy_other_dtypes_are_refused_by_name() {
    let d = dir("dtypes");
    let cases: [(&str, &str, usize); 7] = [
        ("'<i4'", "'<i4'", 4),
        ("'<f2'", "'<f2'", 2),
        ("'<c8'", "'<c8'", 8),
        ("'<c16'", "'<c16'", 16),
        ("'|O'", "'|O'", 8),
        ("'|u1'", "'|u1'", 1),
        (
            "[('x', '<f4'), ('y', '<f4')]",
            "[('x', '<f4'), ('y', '<f4')]",
            8,
        ),
    ];
    for (k, (descr, needle, size)) in cases.iter().enumerate() {
        let p = d.join(format!("t{k}.npy"));
        std::fs::write(&p, npy(1, descr, false, &[5], &vec![0u8; 5 * size])).unwrap();
        let out = d.join(format!("t{k}.szp"));
        fails(
            &["compress", s(&p), "--rel", "1e-3", "-o", s(&out)],
            4,
            &[needle, "float32 or float64"],
        );
        assert!(!out.exists());
    }
}

/// Parses the header `decompress` wrote: (descr, fortran_order, shape, data offset).
fn read_header(b: &[u8]) -> (String, String, String, usize) {
    assert_eq!(&b[..8], b"\x93NUMPY\x01\x00", "a version 1 .npy");
    let len = u16::from_le_bytes([b[8], b[9]]) as usize;
    assert_eq!((10 + len) % 64, 0, "data aligned to 64 bytes");
    let h = std::str::from_utf8(&b[10..10 + len]).unwrap();
    assert!(h.ends_with('\n'));
    let get = |key: &str| {
        let at = h.find(&format!("'{key}': ")).unwrap() + key.len() + 4;
        let rest = &h[at..];
        let end = if rest.starts_with('(') {
            rest.find(')').unwrap() + 1
        } else {
            rest.find(',').unwrap()
        };
        rest[..end].to_string()
    };
    (get("descr"), get("fortran_order"), get("shape"), 10 + len)
}

/// `decompress -o NAME.npy` writes a little-endian C-order `.npy` whose data are exactly the
/// raw output's bytes, 1-D by default or shaped by `--dims`, for every archive kind and for
/// an archive large enough to be decoded in several batches.
#[test]
fn npy_output_with_and_without_dims() {
    let d = dir("output");
    let n = 300_000usize;
    let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.001).sin() * 50.0).collect();
    let raw = d.join("big.f32");
    std::fs::write(&raw, fzpack::values_to_le_bytes(&v)).unwrap();
    let szp = d.join("big.szp");
    ok(&["compress", s(&raw), "--rel", "1e-3", "-o", s(&szp)]);
    let pnx = d.join("big.pnx");
    ok(&[
        "compress",
        s(&raw),
        "--bits",
        "16",
        "--codec",
        "pernix",
        "-o",
        s(&pnx),
    ]);
    let fzm = d.join("big.fzm");
    ok(&[
        "compress",
        s(&raw),
        "--rel",
        "1e-3",
        "--format",
        "fzm",
        "-o",
        s(&fzm),
    ]);
    for a in [&szp, &pnx, &fzm] {
        let flat = d.join("flat.f32");
        let _ = std::fs::remove_file(&flat);
        ok(&["decompress", s(a), "-o", s(&flat)]);
        let want = std::fs::read(&flat).unwrap();
        let one = d.join("one.npy");
        let _ = std::fs::remove_file(&one);
        let t = ok(&["decompress", s(a), "-o", s(&one)]);
        assert!(t.contains(&format!("{n} f32 values")), "{t}");
        let b = std::fs::read(&one).unwrap();
        let (descr, fo, shape, off) = read_header(&b);
        assert_eq!(descr, "'<f4'");
        assert_eq!(fo, "False");
        assert_eq!(shape, format!("({n},)"));
        assert!(b[off..] == want[..], "{}: .npy data differ", a.display());
        let two = d.join("two.npy");
        let _ = std::fs::remove_file(&two);
        ok(&["decompress", s(a), "-o", s(&two), "--dims", "500x600"]);
        let b = std::fs::read(&two).unwrap();
        let (_, _, shape, off) = read_header(&b);
        assert_eq!(shape, "(500, 600)");
        assert!(b[off..] == want[..]);
    }
    // f64 archives write '<f8'
    let r64 = d.join("t.f64");
    std::fs::write(&r64, fzpack::values_to_le_bytes(&[1.0f64, 2.0, 3.0, 4.0])).unwrap();
    let a64 = d.join("t64.szp");
    ok(&["compress", s(&r64), "--rel", "1e-3", "-o", s(&a64)]);
    let o64 = d.join("t64.npy");
    ok(&["decompress", s(&a64), "-o", s(&o64), "--dims", "2x2"]);
    let (descr, _, shape, _) = read_header(&std::fs::read(&o64).unwrap());
    assert_eq!((descr.as_str(), shape.as_str()), ("'<f8'", "(2, 2)"));
    // a product that is not the count, and --dims without a .npy output
    let bad = d.join("bad.npy");
    fails(
        &["decompress", s(&szp), "-o", s(&bad), "--dims", "500x601"],
        4,
        &["500x601", "300500", "the archive has 300000"],
    );
    assert!(!bad.exists());
    fails(
        &[
            "decompress",
            s(&szp),
            "-o",
            s(&d.join("x.f32")),
            "--dims",
            "500x600",
        ],
        2,
        &["--dims", ".npy"],
    );
    // a .npy round trip keeps the values (C order) when the shape is given back
    let src = d.join("c.npy");
    let shape = [2usize, 3, 4];
    let c = field(&shape);
    let fdata = bytes_of(&to_fortran(&c, &shape), true, true);
    std::fs::write(&src, npy(1, "'>f8'", true, &shape, &fdata)).unwrap();
    let a = d.join("c.szp");
    ok(&[
        "compress",
        s(&src),
        "--mode",
        "abs",
        "--eb",
        "1e-6",
        "-o",
        s(&a),
    ]);
    let back = d.join("back.npy");
    ok(&["decompress", s(&a), "-o", s(&back), "--dims", "2x3x4"]);
    let b = std::fs::read(&back).unwrap();
    let (descr, fo, sh, off) = read_header(&b);
    assert_eq!(
        (descr.as_str(), fo.as_str(), sh.as_str()),
        ("'<f8'", "False", "(2, 3, 4)")
    );
    for (i, ch) in b[off..].chunks_exact(8).enumerate() {
        let g = f64::from_le_bytes(ch.try_into().unwrap());
        assert!((g - c[i]).abs() <= 1e-6, "index {i}: {g} vs {}", c[i]);
    }
}

/// Raw inputs: a size that is not a multiple of the element size names the remainder; a name
/// whose type disagrees with --dtype is refused unless --raw; `_f64` before the extension
/// gives the type; `--dims` is checked against the count.
#[test]
fn raw_input_checks() {
    let d = dir("raw");
    let odd = d.join("odd.f32");
    std::fs::write(&odd, [0u8; 42]).unwrap();
    fails(
        &["compress", s(&odd), "--rel", "1e-3"],
        4,
        &["42 bytes", "not a multiple", "remainder 2 bytes"],
    );
    let odd8 = d.join("odd.bin");
    std::fs::write(&odd8, [0u8; 44]).unwrap();
    fails(
        &[
            "compress",
            s(&odd8),
            "--bits",
            "16",
            "--dtype",
            "f64",
            "--codec",
            "pernix",
        ],
        4,
        &["44 bytes", "remainder 4 bytes"],
    );

    let v: Vec<f64> = (0..100).map(|i| i as f64 * 0.25).collect();
    let bytes = fzpack::values_to_le_bytes(&v);
    for name in ["t.f32", "t_f32.bin", "field_10x10_f32.dat"] {
        let p = d.join(name);
        std::fs::write(&p, &bytes).unwrap();
        let out = d.join(format!("{name}.szp"));
        fails(
            &[
                "compress",
                s(&p),
                "--rel",
                "1e-3",
                "--dtype",
                "f64",
                "-o",
                s(&out),
            ],
            4,
            &["name says f32", "--dtype is f64", "--raw"],
        );
        assert!(!out.exists());
        // --raw: read as the given type anyway
        let t = ok(&[
            "compress",
            s(&p),
            "--rel",
            "1e-3",
            "--dtype",
            "f64",
            "--raw",
            "-o",
            s(&out),
        ]);
        assert!(t.contains("100 f64 values"), "{t}");
    }
    for name in ["t_f64.bin", "u.f64"] {
        let p = d.join(name);
        std::fs::write(&p, &bytes).unwrap();
        fails(
            &[
                "compress",
                s(&p),
                "--rel",
                "1e-3",
                "--dtype",
                "f32",
                "-o",
                s(&d.join("no.szp")),
            ],
            4,
            &["name says f64", "--dtype is f32"],
        );
        let out = d.join(format!("{name}.szp"));
        let t = ok(&["compress", s(&p), "--rel", "1e-3", "-o", s(&out)]);
        assert!(t.contains("100 f64 values"), "{name}: {t}");
    }
    // --dims: checked against the count, shown on stderr
    let p = d.join("u.f64");
    let o = run(&[
        "compress",
        s(&p),
        "--rel",
        "1e-3",
        "--dims",
        "10x10",
        "-o",
        s(&d.join("dims.szp")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("shape 10x10"), "{err}");
    let nod = d.join("nodims.szp");
    fails(
        &[
            "compress",
            s(&p),
            "--rel",
            "1e-3",
            "--dims",
            "10x11",
            "-o",
            s(&nod),
        ],
        4,
        &["10x11", "110", "the input has 100"],
    );
    assert!(!nod.exists());
    fails(
        &[
            "compress",
            s(&p),
            "--rel",
            "1e-3",
            "--dims",
            "10x0",
            "-o",
            s(&nod),
        ],
        2,
        &["--dims"],
    );
}

/// `--gpu` never runs on the CPU in its place: without the `cuda` feature it says how to
/// rebuild; with it but without a driver or device it is a usage-style error (exit 2) and
/// nothing is written; with a device the archive is the CPU's, byte for byte, and decodes.
#[test]
fn gpu_flag_fails_clearly_or_matches_the_cpu() {
    let d = dir("gpu");
    let v: Vec<f32> = (0..50_000)
        .map(|i| (i as f32 * 0.01).cos() * 10.0)
        .collect();
    let raw = d.join("g.f32");
    std::fs::write(&raw, fzpack::values_to_le_bytes(&v)).unwrap();
    let cpu = d.join("cpu.szp");
    ok(&[
        "compress",
        s(&raw),
        "--mode",
        "abs",
        "--eb",
        "1e-3",
        "-o",
        s(&cpu),
    ]);
    let out = d.join("gpu.szp");
    let comp = [
        "compress",
        s(&raw),
        "--mode",
        "abs",
        "--eb",
        "1e-3",
        "--gpu",
        "-o",
        s(&out),
    ];
    let back = d.join("gpu.f32");
    let dec = ["decompress", s(&cpu), "--gpu", "-o", s(&back)];
    // PERNIX and .fzm are refused with --gpu whatever the build
    fails(
        &[
            "compress",
            s(&raw),
            "--bits",
            "16",
            "--codec",
            "pernix",
            "--gpu",
            "-o",
            s(&out),
        ],
        2,
        &["--gpu"],
    );
    if !cfg!(feature = "cuda") {
        for args in [&comp[..], &dec[..]] {
            fails(
                args,
                2,
                &["built without the cuda feature", "--features cuda"],
            );
        }
        assert!(!out.exists() && !back.exists());
        return;
    }
    let o = run(&comp);
    if !o.status.success() {
        // No driver or device here: the error says so, and no CPU work stood in for it.
        println!(
            "no usable CUDA GPU here; checking the error only: {}",
            text(&o)
        );
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("no usable CUDA GPU"), "{}", text(&o));
        assert!(!out.exists());
        fails(&dec, 2, &["no usable CUDA GPU"]);
        assert!(!back.exists());
        if std::env::var("FZPACK_REQUIRE_GPU").is_ok_and(|v| v == "1") {
            panic!("FZPACK_REQUIRE_GPU=1 but --gpu failed: {}", text(&o));
        }
        return;
    }
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(&cpu).unwrap(),
        "GPU archive differs from the CPU's"
    );
    ok(&dec);
    let cpu_back = d.join("cpu.f32");
    ok(&["decompress", s(&cpu), "-o", s(&cpu_back)]);
    assert_eq!(
        std::fs::read(&back).unwrap(),
        std::fs::read(&cpu_back).unwrap()
    );
}

/// With python and numpy present (`FZPACK_PYTHON`, else `scripts/python.sh`'s venv, else
/// python3): arrays saved by `np.save` in every order and byte order, one with NaN, compress,
/// and `np.load` reads the `.npy` that `decompress` writes by default with the same shape, the
/// NaN at the same places and the other values within the bound. Skipped with a
/// printed reason otherwise (a failure when `FZPACK_REQUIRE_TOOLS=1`).
#[test]
fn numpy_reads_and_writes_what_fzpack_does() {
    // FZPACK_PYTHON, else the venv scripts/python.sh makes, else python3.
    let venv = std::env::var("FZPACK_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/python-venv"));
    let candidates: Vec<String> = match std::env::var("FZPACK_PYTHON") {
        Ok(p) => vec![p],
        Err(_) => vec![s(&venv.join("bin/python")).to_string(), "python3".into()],
    };
    let py = candidates.iter().find(|py| {
        Command::new(py)
            .args(["-c", "import numpy"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(py) = py else {
        let why = format!(
            "skipped: no python with numpy among {candidates:?} (set FZPACK_PYTHON, or install \
             numpy, e.g. apt-get install python3-numpy)"
        );
        assert!(
            std::env::var("FZPACK_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "{why}"
        );
        println!("{why}");
        return;
    };
    let d = dir("numpy");
    let script = r#"
import sys, numpy as np
d = sys.argv[1]
a = (np.arange(60).reshape(3, 4, 5) * 0.75 + 260.0)
m = a.copy()
m[:, 1:3, ::2] = np.nan  # a land mask
for name, arr in [('c4', a.astype('<f4')), ('f4', np.asfortranarray(a.astype('<f4'))),
                  ('b8', a.astype('>f8')), ('fb4', np.asfortranarray(a.astype('>f4'))),
                  ('n4', np.asfortranarray(m.astype('<f4')))]:
    np.save(f'{d}/{name}.npy', arr)
"#;
    let o = Command::new(py)
        .args(["-c", script, s(&d)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    for name in ["c4", "f4", "b8", "fb4", "n4"] {
        let p = d.join(format!("{name}.npy"));
        // default names: NAME.npy -> NAME.npy.szp -> NAME.decoded.npy, with the stored shape
        ok(&["compress", s(&p), "--abs", "1e-3"]);
        let a = d.join(format!("{name}.npy.szp"));
        ok(&["decompress", s(&a)]);
        let back = d.join(format!("{name}.decoded.npy"));
        let check = r#"
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert b.shape == a.shape, (a.shape, b.shape)
assert b.dtype.itemsize == a.dtype.itemsize and b.dtype.byteorder in '<=|', b.dtype
assert not b.flags.f_contiguous or b.ndim == 1
assert np.array_equal(np.isnan(a), np.isnan(b)), 'NaN positions differ'
err = float(np.nanmax(np.abs(a.astype('f8') - b.astype('f8'))))
assert err <= 1e-3, err
"#;
        let o = Command::new(py)
            .args(["-c", check, s(&p), s(&back)])
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", text(&o));
    }
}

/// The `info` row `key` (`  key   value` lines), if present.
fn info_row(info: &str, key: &str) -> Option<String> {
    info.lines().find_map(|l| {
        let l = l.trim_start();
        l.strip_prefix(key)
            .filter(|r| r.starts_with("  "))
            .map(|r| r.trim().to_string())
    })
}

/// The values of a `.npy` that `decompress` wrote (little-endian, C order), with its shape.
fn read_npy_values(p: &Path) -> (String, String, Vec<f64>) {
    let b = std::fs::read(p).unwrap();
    let (descr, fo, shape, off) = read_header(&b);
    assert_eq!(fo, "False", "{}: C order", p.display());
    let v = match descr.as_str() {
        "'<f4'" => b[off..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        "'<f8'" => b[off..]
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        d => panic!("{}: descr {d}", p.display()),
    };
    (descr, shape, v)
}

/// A `.npy` in every byte order and memory order, f4 and f8, round-trips through a native SZp
/// archive with its shape: the archive records it (`info` shows it), and `decompress` writes
/// a little-endian C-order `.npy` of that shape both by default (`t.npy.szp` ->
/// `t.decoded.npy`) and with `-o NAME.npy`, with every value within the bound at its C-order
/// place; a raw output stays flat.
#[test]
fn npy_round_trip_keeps_the_shape() {
    let d = dir("shape");
    let shape = [3usize, 5, 7];
    let c = field(&shape);
    let f = to_fortran(&c, &shape);
    for f8 in [false, true] {
        for big in [false, true] {
            for fortran in [false, true] {
                let descr = format!(
                    "'{}{}'",
                    if big { '>' } else { '<' },
                    if f8 { "f8" } else { "f4" }
                );
                let name = format!("t_{f8}_{big}_{fortran}");
                let p = d.join(format!("{name}.npy"));
                let data = bytes_of(if fortran { &f } else { &c }, f8, big);
                std::fs::write(&p, npy(1, &descr, fortran, &shape, &data)).unwrap();
                // the default archive name: t.npy.szp
                let o = run(&["compress", s(&p), "--abs", "1e-3"]);
                assert!(o.status.success(), "{name}: {}", text(&o));
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(err.contains("stored in the archive"), "{name}: {err}");
                let a = d.join(format!("{name}.npy.szp"));
                let info = ok(&["info", s(&a)]);
                assert_eq!(
                    info_row(&info, "shape").as_deref(),
                    Some("3x5x7 (C order, last index fastest)"),
                    "{name}: {info}"
                );
                assert_eq!(
                    info_row(&info, "missing values").as_deref(),
                    Some("none"),
                    "{name}: {info}"
                );
                // the default output: t.decoded.npy, shaped
                let t = ok(&["decompress", s(&a)]);
                let back = d.join(format!("{name}.decoded.npy"));
                assert!(back.exists(), "{name}: {t}");
                let explicit = d.join(format!("{name}.back.npy"));
                ok(&["decompress", s(&a), "-o", s(&explicit)]);
                for out in [&back, &explicit] {
                    let (dt, sh, v) = read_npy_values(out);
                    assert_eq!(dt, if f8 { "'<f8'" } else { "'<f4'" }, "{name}");
                    assert_eq!(sh, "(3, 5, 7)", "{name}");
                    assert_eq!(v.len(), c.len());
                    for (i, (g, w)) in v.iter().zip(&c).enumerate() {
                        let w = if f8 { *w } else { *w as f32 as f64 };
                        assert!((g - w).abs() <= 1e-3, "{name}: index {i}: {g} vs {w}");
                    }
                }
                // a raw output is the same values, flat
                let raw = d.join(format!("{name}.raw"));
                ok(&["decompress", s(&a), "-o", s(&raw)]);
                let (_, _, v) = read_npy_values(&back);
                assert_eq!(read_raw(&raw, f8), v, "{name}");
                // `verify` reads the .npy original (Fortran and big-endian included)
                let t = ok(&["verify", s(&p), s(&a)]);
                assert!(t.contains("OK"), "{name}: {t}");
            }
        }
    }
}

/// A 0-d `.npy` (one value, shape `()`) compresses without a stored shape and comes back as a
/// 1-D `.npy` of one value.
#[test]
fn npy_scalar_has_no_shape_to_store() {
    let d = dir("scalar");
    let p = d.join("x.npy");
    std::fs::write(&p, npy(1, "'<f8'", false, &[], &273.15f64.to_le_bytes())).unwrap();
    let o = run(&["compress", s(&p), "--abs", "1e-6"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("one value, no shape to store"),
        "{}",
        text(&o)
    );
    let a = d.join("x.npy.szp");
    let info = ok(&["info", s(&a)]);
    assert_eq!(info_row(&info, "shape"), None, "{info}");
    ok(&["decompress", s(&a)]);
    let (dt, sh, v) = read_npy_values(&d.join("x.decoded.npy"));
    assert_eq!((dt.as_str(), sh.as_str()), ("'<f8'", "(1,)"));
    assert!((v[0] - 273.15).abs() <= 1e-6, "{v:?}");
}

/// `--dims` on a raw input (`D1,D2,...` or `D1xD2x...`, slowest first as numpy's shape) is
/// recorded in the archive: `info` shows it and `-o NAME.npy` gets it back; `decompress
/// --dims` reshapes (its product checked); more than 8 dimensions are refused.
#[test]
fn raw_input_dims_are_stored() {
    let d = dir("rawdims");
    let v: Vec<f32> = (0..600).map(|i| (i as f32 * 0.05).sin() * 20.0).collect();
    let raw = d.join("t.f32");
    std::fs::write(&raw, fzpack::values_to_le_bytes(&v)).unwrap();
    for (i, dims) in ["20,30", "20x30"].iter().enumerate() {
        let a = d.join(format!("a{i}.szp"));
        ok(&[
            "compress",
            s(&raw),
            "--rel",
            "1e-4",
            "--dims",
            dims,
            "-o",
            s(&a),
        ]);
        let info = ok(&["info", s(&a)]);
        assert_eq!(
            info_row(&info, "shape").as_deref(),
            Some("20x30 (C order, last index fastest)"),
            "{info}"
        );
        let out = d.join(format!("a{i}.npy"));
        ok(&["decompress", s(&a), "-o", s(&out)]);
        let (dt, sh, back) = read_npy_values(&out);
        assert_eq!((dt.as_str(), sh.as_str()), ("'<f4'", "(20, 30)"));
        assert_eq!(back.len(), 600);
        // --dims on decompress reshapes
        let flat = d.join(format!("a{i}-flat.npy"));
        ok(&["decompress", s(&a), "-o", s(&flat), "--dims", "600"]);
        assert_eq!(read_npy_values(&flat).1, "(600,)");
    }
    // no --dims: no shape recorded, a .npy output is 1-D
    let a = d.join("nodims.szp");
    ok(&["compress", s(&raw), "--rel", "1e-4", "-o", s(&a)]);
    let info = ok(&["info", s(&a)]);
    assert_eq!(info_row(&info, "shape"), None, "{info}");
    let out = d.join("nodims.npy");
    ok(&["decompress", s(&a), "-o", s(&out)]);
    assert_eq!(read_npy_values(&out).1, "(600,)");
    // 9 dimensions: the archive holds at most 8
    let nine = d.join("nine.szp");
    fails(
        &[
            "compress",
            s(&raw),
            "--rel",
            "1e-4",
            "--dims",
            "1,1,1,1,1,1,1,20,30",
            "-o",
            s(&nine),
        ],
        4,
        &["9 dimensions", "at most 8"],
    );
    assert!(!nine.exists());
}

/// NaN and ±inf (missing values) in a raw f32 field go through `compress --abs`: they come
/// back exactly at the same places, every finite value is within the bound, `info` says the
/// archive may hold missing values and `verify` counts them.
#[test]
fn missing_values_round_trip() {
    let d = dir("nan");
    let n = 40_000usize;
    let v: Vec<f32> = (0..n)
        .map(|i| {
            let land = (i / 200) % 3 == 0 && (i % 200) < 90; // a land mask: runs of NaN
            match i {
                _ if land => f32::NAN,
                777 => f32::INFINITY,
                778 => f32::NEG_INFINITY,
                _ => 15.0 + (i as f32 * 0.003).sin() * 10.0,
            }
        })
        .collect();
    let raw = d.join("sst.f32");
    std::fs::write(&raw, fzpack::values_to_le_bytes(&v)).unwrap();
    let eb = 1e-2f64;
    let a = d.join("sst.szp");
    ok(&[
        "compress",
        s(&raw),
        "--abs",
        "1e-2",
        "--dims",
        "200,200",
        "-o",
        s(&a),
    ]);
    let info = ok(&["info", s(&a)]);
    let missing = info_row(&info, "missing values").unwrap_or_default();
    assert!(missing.starts_with("yes"), "{info}");
    let out = d.join("back.f32");
    ok(&["decompress", s(&a), "-o", s(&out)]);
    let back = fzpack::values_from_le_bytes::<f32>(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(back.len(), n);
    let mut nans = 0;
    for (i, (x, y)) in v.iter().zip(&back).enumerate() {
        if x.is_nan() {
            assert!(y.is_nan(), "index {i}: NaN came back as {y}");
            nans += 1;
        } else if x.is_infinite() {
            assert_eq!(x, y, "index {i}");
        } else {
            assert!(y.is_finite(), "index {i}: {x} came back as {y}");
            assert!(
                ((*x as f64) - (*y as f64)).abs() <= eb,
                "index {i}: {x} vs {y}"
            );
        }
    }
    assert!(nans > n / 10, "{nans}");
    let t = ok(&["verify", s(&raw), s(&a)]);
    assert!(t.contains(&format!("missing     {}", nans + 2)), "{t}");
    assert!(t.contains("OK"), "{t}");
    // verify catches a missing value that did not come back: compare against a NaN-free copy
    let filled: Vec<f32> = v
        .iter()
        .map(|x| if x.is_finite() { *x } else { 0.0 })
        .collect();
    let f = d.join("filled.f32");
    std::fs::write(&f, fzpack::values_to_le_bytes(&filled)).unwrap();
    fails(&["verify", s(&f), s(&a)], 6, &["in the original but"]);
    // the compressed-domain ops: stats leave them out and count them; scale keeps them in
    // place and keeps the shape
    let st: serde_json::Value =
        serde_json::from_str(ok(&["stats", s(&a), "--json"]).trim()).unwrap();
    assert_eq!(st["missing"], (nans + 2) as u64, "{st}");
    let finite: Vec<f64> = v
        .iter()
        .filter(|x| x.is_finite())
        .map(|&x| x as f64)
        .collect();
    let mean = finite.iter().sum::<f64>() / finite.len() as f64;
    assert!(
        (st["mean"].as_f64().unwrap() - mean).abs() <= eb,
        "{st} vs {mean}"
    );
    let t = ok(&["stats", s(&a)]);
    assert!(t.contains(&format!("missing={}", nans + 2)), "{t}");
    let twice = d.join("twice.szp");
    ok(&["scale", s(&a), "--by", "2", "-o", s(&twice)]);
    let info2 = ok(&["info", s(&twice)]);
    assert_eq!(
        info_row(&info2, "shape").as_deref(),
        Some("200x200 (C order, last index fastest)"),
        "{info2}"
    );
    let tb = d.join("twice.f32");
    ok(&["decompress", s(&twice), "-o", s(&tb)]);
    let tv = fzpack::values_from_le_bytes::<f32>(&std::fs::read(&tb).unwrap()).unwrap();
    for (i, (x, y)) in v.iter().zip(&tv).enumerate() {
        assert_eq!(x.is_nan(), y.is_nan(), "index {i}: {x} scaled to {y}");
    }
    // a pipe streamed in bounded memory cannot hold them: refused with the index and the way out
    let mut c = bin()
        .args([
            "compress",
            "-",
            "--dtype",
            "f32",
            "--abs",
            "1e-2",
            "--max-abs",
            "100",
        ])
        .args(["-o", s(&d.join("piped.szp"))])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(&raw).unwrap();
    let mut stdin = c.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&bytes);
    });
    let o = c.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(
        text(&o).contains("value at index 0 is NaN")
            && text(&o).contains("write the data to a file"),
        "{}",
        text(&o)
    );
    assert!(!d.join("piped.szp").exists());
    // no larger than the same field with its missing values filled by 0 (no jumps to code)
    let fa = d.join("filled.szp");
    ok(&[
        "compress",
        s(&f),
        "--abs",
        "1e-2",
        "--dims",
        "200,200",
        "-o",
        s(&fa),
    ]);
    let (with, filled) = (
        std::fs::metadata(&a).unwrap().len(),
        std::fs::metadata(&fa).unwrap().len(),
    );
    assert!(
        with <= filled,
        "{with} bytes with missing values, {filled} filled by 0"
    );
}

/// A real field with a land mask (Levitus ocean temperature, 20x180x360, 44 % NaN), when
/// `../shared/data` is present: as a `.npy` it compresses with its shape and its NaN, comes
/// back as a `.npy` of the same shape with the NaN at the same places and every other value
/// within the bound, and the archive is no larger than that of the field with the NaN filled
/// by 0.
#[test]
fn real_field_with_a_land_mask() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/ferret_levitus_temp_20x180x360.f32");
    if !src.exists() {
        println!(
            "note: ../shared/data absent; the generated land mask of missing_values_round_trip only"
        );
        return;
    }
    let d = dir("levitus");
    let bytes = std::fs::read(&src).unwrap();
    let v = fzpack::values_from_le_bytes::<f32>(&bytes).unwrap();
    let shape = [20usize, 180, 360];
    let p = d.join("temp.npy");
    std::fs::write(&p, npy(1, "'<f4'", false, &shape, &bytes)).unwrap();
    ok(&["compress", s(&p), "--abs", "0.01"]);
    let a = d.join("temp.npy.szp");
    let info = ok(&["info", s(&a)]);
    assert_eq!(
        info_row(&info, "shape").as_deref(),
        Some("20x180x360 (C order, last index fastest)"),
        "{info}"
    );
    let nans = v.iter().filter(|x| x.is_nan()).count();
    assert!(nans > v.len() / 3, "{nans}");
    let missing = info_row(&info, "missing values").unwrap_or_default();
    assert!(missing.starts_with(&format!("yes: {nans} ")), "{info}");
    ok(&["decompress", s(&a)]);
    let (dt, sh, back) = read_npy_values(&d.join("temp.decoded.npy"));
    assert_eq!((dt.as_str(), sh.as_str()), ("'<f4'", "(20, 180, 360)"));
    for (i, (x, y)) in v.iter().zip(&back).enumerate() {
        if x.is_nan() {
            assert!(y.is_nan(), "index {i}: NaN came back as {y}");
        } else {
            assert!((*x as f64 - y).abs() <= 0.01, "index {i}: {x} vs {y}");
        }
    }
    let filled: Vec<f32> = v
        .iter()
        .map(|x| if x.is_nan() { 0.0 } else { *x })
        .collect();
    let f = d.join("filled.f32");
    std::fs::write(&f, fzpack::values_to_le_bytes(&filled)).unwrap();
    let fa = d.join("filled.szp");
    ok(&["compress", s(&f), "--abs", "0.01", "-o", s(&fa)]);
    let (with, zero) = (
        std::fs::metadata(&a).unwrap().len(),
        std::fs::metadata(&fa).unwrap().len(),
    );
    println!(
        "levitus 20x180x360, abs 0.01: {with} bytes with NaN (ratio {:.2}), {zero} filled by 0 \
         (ratio {:.2})",
        bytes.len() as f64 / with as f64,
        bytes.len() as f64 / zero as f64
    );
    assert!(with <= zero, "{with} bytes with NaN, {zero} filled by 0");
}

/// `bench` on a file with missing values: SZp rows (the NaN kept, errors over the finite
/// values), the PERNIX settings left out with a note, not an error.
#[test]
fn bench_keeps_missing_values_and_leaves_pernix_out() {
    let d = std::env::temp_dir().join(format!("fzpack-bench-nan-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("holes.f32");
    let v: Vec<f32> = (0..20_000)
        .map(|i| {
            if i % 1000 < 300 {
                f32::NAN
            } else {
                (i as f32 * 0.01).sin()
            }
        })
        .collect();
    std::fs::write(
        &f,
        v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fzpack"))
        .args(["bench", f.to_str().unwrap(), "--min-time", "0", "--json"])
        .output()
        .unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{se}");
    assert!(
        se.contains("missing values") && se.contains("PERNIX"),
        "{se}"
    );
    assert!(so.contains("\"szp\"") && !so.contains("\"pernix\""), "{so}");
    let _ = std::fs::remove_dir_all(&d);
}
