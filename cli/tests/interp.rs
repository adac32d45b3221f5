//! The interpolation layout (`--layout interp`, layout code 2) at the front door: `compress`
//! writes a layout-2 archive with the shape of a `.npy` or `--dims` (bytes independent of the
//! thread count), `decompress` and `info` read it, `verify` holds the bound, `bench` measures
//! it as `szp-interp`, and every path that cannot take it (`.fzm`, the GPU, the bounded-memory
//! stream of a pipe, the compressed-domain operations) refuses it naming the layout.

use std::path::{Path, PathBuf};

use fzpack::pernix::Verify;
use fzpack_cli::container;

mod common;
use common::*;

fn dir(name: &str) -> PathBuf {
    scratch("interp", name)
}

/// A smooth 2-D field of `rows` x `cols` f32 with one NaN.
fn field(rows: usize, cols: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..rows * cols)
        .map(|k| {
            let (i, j) = ((k / cols) as f32, (k % cols) as f32);
            (j / 30.0).sin() * (i / 20.0).cos() * 10.0 + i * 0.01
        })
        .collect();
    v[7 * cols + 5] = f32::NAN;
    v
}

/// A little-endian float32 C-order `.npy` of `v` shaped `rows` x `cols`.
fn write_npy(path: &Path, v: &[f32], rows: usize, cols: usize) {
    let data = fzpack::values_to_le_bytes(v);
    std::fs::write(path, npy(1, "'<f4'", false, &[rows, cols], &data)).unwrap();
}

fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Every finite value within `bound`, every missing value bit for bit.
fn within(a: &[f32], b: &[f32], bound: f64) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x.is_finite() {
            assert!(((x - y) as f64).abs() <= bound, "{i}: {x} vs {y}");
        } else {
            assert_eq!(x.to_bits(), y.to_bits(), "{i}");
        }
    }
}

/// `compress INPUT --rel 1e-3 --layout interp MORE... -o OUT`.
fn interp<'a>(input: &'a Path, more: &[&'a str], out: &'a Path) -> Vec<&'a str> {
    let mut a = vec!["compress", s(input), "--rel", "1e-3", "--layout", "interp"];
    a.extend_from_slice(more);
    a.extend(["-o", s(out)]);
    a
}

#[test]
fn compress_writes_layout_2_with_the_shape_and_decompress_and_info_read_it() {
    let d = dir("round");
    let (rows, cols) = (300, 500);
    let v = field(rows, cols);
    let npy = d.join("a.npy");
    write_npy(&npy, &v, rows, cols);
    let raw = d.join("a.f32");
    std::fs::write(&raw, fzpack::values_to_le_bytes(&v)).unwrap();

    let a = d.join("a.szp");
    let line = ok(&interp(&npy, &[], &a));
    assert!(line.contains("szp-interp"), "{line}");
    let bytes = std::fs::read(&a).unwrap();
    assert_eq!(&bytes[..4], fzpack::szp::MAGIC, "an SZp archive");
    assert_eq!(bytes[4], fzpack::szp::FORMAT_VERSION_V3);
    assert_eq!(bytes[6], fzpack::szp::LAYOUT_INTERP, "layout byte 6");
    let shape = fzpack::szp::shape(&bytes).unwrap();
    assert_eq!(shape.dims(), &[rows as u64, cols as u64]);
    // The facade on one thread writes the same bytes: the CLI ran the codec, not a copy of it.
    let cfg = fzpack::szp::Config::noa(1e-3)
        .with_layout(fzpack::szp::Layout::Interp)
        .with_shape(fzpack::szp::Shape::new(&[rows as u64, cols as u64]).unwrap());
    let want = fzpack::szp::Encoder::new(&cfg).serial().to_vec(&v).unwrap();
    assert_eq!(bytes, want);
    // Thread count does not change the bytes; a raw input with --dims is the same archive.
    let one = d.join("one.szp");
    ok(&interp(&npy, &["--threads", "1"], &one));
    assert_eq!(std::fs::read(&one).unwrap(), bytes);
    let dims = d.join("dims.szp");
    ok(&interp(&raw, &["--dims", "300x500"], &dims));
    assert_eq!(std::fs::read(&dims).unwrap(), bytes);
    // Smaller than the block-head layout on this smooth field.
    let heads = d.join("heads.szp");
    ok(&["compress", s(&npy), "--rel", "1e-3", "-o", s(&heads)]);
    let hl = std::fs::metadata(&heads).unwrap().len() as usize;
    assert!(bytes.len() * 2 < hl, "interp {} vs heads {hl}", bytes.len());

    let bound = fzpack::szp::header(&bytes).unwrap().bound();
    let reference = container::decode_all::<f32>(&bytes, Verify::Checksums).unwrap();
    within(&v, &reference, bound);
    // decompress to a raw file, to a .npy (the stored shape), and to standard output
    let out = d.join("a.decoded.f32");
    ok(&["decompress", s(&a), "-o", s(&out)]);
    let got = read_f32(&out);
    assert_eq!(
        got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        reference.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    let back = d.join("back.npy");
    ok(&["decompress", s(&a), "-o", s(&back)]);
    let nb = std::fs::read(&back).unwrap();
    let head = String::from_utf8_lossy(&nb[..128]);
    assert!(head.contains("(300, 500)"), "{head}");
    let o = bin()
        .args(["decompress", s(&a), "-o", "-"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(o.stdout, fzpack::values_to_le_bytes(&reference));
    // verify holds the bound
    let t = ok(&["verify", s(&raw), s(&a)]);
    assert!(t.contains("within the bound"), "{t}");
    // info: the layout by name, the tile count, the shape
    let i = ok(&["info", s(&a)]);
    assert!(i.contains("interp"), "{i}");
    let tiles = fzpack::szp::tiled::parse(&bytes, fzpack::szp::Verify::Checksums)
        .unwrap()
        .tiles();
    assert!(i.contains(&format!("tiles            {tiles} ")), "{i}");
    assert!(i.contains("300x500"), "{i}");
    // A flipped tile byte: decompress fails with "checksum" (exit 5).
    let mut bad = bytes.clone();
    bad[fzpack::szp::HEADER_LEN + 8 * tiles + 20] ^= 0x10;
    let badp = d.join("bad.szp");
    std::fs::write(&badp, &bad).unwrap();
    fails_with(
        &["decompress", s(&badp), "-o", s(&d.join("bad.f32"))],
        5,
        &["checksum"],
    );
}

#[test]
fn paths_that_cannot_take_the_layout_refuse_it_by_name() {
    let d = dir("refuse");
    let v = field(64, 80);
    let raw = d.join("a.f32");
    std::fs::write(&raw, fzpack::values_to_le_bytes(&v)).unwrap();
    let a = d.join("a.szp");
    ok(&interp(&raw, &["--dims", "64,80"], &a));
    let o = d.join("o.szp");
    // .fzm holds the stage layout only
    let fzm = d.join("x.fzm");
    let needles = ["--layout interp", "native"];
    fails_with(&interp(&raw, &["--format", "fzm"], &fzm), 2, &needles);
    // the layout has no blocks: a block size is refused rather than ignored
    let needles = ["--block-size", "interp"];
    fails_with(&interp(&raw, &["--block-size", "64"], &o), 2, &needles);
    // the GPU runs the block layouts only (refused before any device is opened)
    fails_with(&interp(&raw, &["--gpu"], &o), 2, &["GPU", "interp"]);
    fails_with(
        &["decompress", s(&a), "--gpu", "-o", s(&d.join("g.f32"))],
        2,
        &["GPU", "interp"],
    );
    // the compressed-domain operations: exit 4, naming the layout
    fails_with(&["stats", s(&a)], 4, &["interpolation-layout"]);
    fails_with(
        &["add", s(&a), s(&a), "-o", s(&o)],
        4,
        &["interpolation-layout"],
    );
    fails_with(
        &["scale", s(&a), "--by", "2", "-o", s(&o)],
        4,
        &["interpolation-layout"],
    );
    assert!(!o.exists());
    // a pipe with --abs and --max-abs (the bounded-memory stream): refused naming the layout
    let b = fzpack::values_to_le_bytes(&v);
    let pipe = ["compress", "-", "--dtype", "f32", "--abs", "1e-3"];
    let tail = ["--layout", "interp", "-o", s(&o)];
    let bounded = [&pipe[..], &["--max-abs", "100"], &tail].concat();
    let out = piped(&bounded, &b);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--layout interp"), "{}", text(&out));
    assert!(!o.exists());
    // the same pipe without --max-abs is read whole and compressed in the layout
    let out = piped(&[&pipe[..], &tail].concat(), &b);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read(&o).unwrap()[6], fzpack::szp::LAYOUT_INTERP);
}

#[test]
fn bench_measures_the_interp_layout_as_szp_interp() {
    let d = dir("bench");
    let f = d.join("t_60x70.f32");
    let v: Vec<f32> = field(60, 70)
        .into_iter()
        .map(|x| if x.is_finite() { x } else { 0.0 })
        .collect();
    std::fs::write(&f, fzpack::values_to_le_bytes(&v)).unwrap();
    let o = run(&[
        "bench",
        "--json",
        "--min-time",
        "0",
        "--codec",
        "szp",
        "--layout",
        "heads,interp",
        "--eb",
        "1e-3",
        "--paths",
        "simd",
        s(&f),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let codecs: Vec<&str> = rows.iter().map(|r| r["codec"].as_str().unwrap()).collect();
    assert_eq!(codecs, ["szp", "szp-interp"], "{rows:?}");
    // The row's ratio is the archive the CLI writes for that shape (dims from the name).
    let a = d.join("t.szp");
    ok(&interp(&f, &["--dims", "60x70"], &a));
    let len = std::fs::metadata(&a).unwrap().len() as f64;
    let ratio = rows[1]["ratio"].as_f64().unwrap();
    assert!(
        (ratio - (v.len() * 4) as f64 / len).abs() < 1e-9,
        "{ratio} vs {len}"
    );
    assert!(rows[1]["err_over_bound"].as_f64().unwrap() <= 1.0);
    assert_eq!(rows[1]["identical_to_scalar"], true);
}

/// A raw file compressed without a shape is predicted as one dimension: the CLI says so on
/// stderr and names the dims its file name carries; with `--dims` it stores the shape, says
/// nothing of the kind, and the archive is smaller.
#[test]
fn a_raw_input_without_a_shape_gets_a_hint() {
    let d = dir("hint");
    let raw = d.join("grid_60x70.f32");
    std::fs::write(&raw, fzpack::values_to_le_bytes(&field(60, 70))).unwrap();
    let flat = d.join("flat.szp");
    let o = run(&interp(&raw, &[], &flat));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("no shape given") && t.contains("file name says 60x70"),
        "{t}"
    );
    let shaped = d.join("shaped.szp");
    let o = run(&interp(&raw, &["--dims", "60x70"], &shaped));
    let t = text(&o);
    assert!(o.status.success() && !t.contains("no shape given"), "{t}");
    let len = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(
        len(&shaped) < len(&flat),
        "{} vs {}",
        len(&shaped),
        len(&flat)
    );
}
