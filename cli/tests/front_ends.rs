//! The front end never loses or fakes data: concurrent writers to one new name (exactly one
//! wins), `-o -` carries only the payload, ops never overwrite an input, containers are not
//! compressed as raw floats, endless input stops at a hard cap, the documented exit codes
//! everywhere, and stale temporary files of killed runs are removed by a later run.

use std::io::Write;
use std::os::unix::fs::symlink;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use fzpack::pernix::Verify;
use fzpack_cli::container;

mod common;
use common::*;

fn dir(name: &str) -> PathBuf {
    scratch("front", name)
}

use common::fails_with as fails;

fn write_f32(path: &Path, n: usize) -> Vec<f32> {
    write_wave(path, n, 3.0)
}

fn decode(bytes: &[u8]) -> Vec<f32> {
    container::decode_all::<f32>(bytes, Verify::Checksums).expect("a whole, valid archive")
}

/// Four writers at once to one name that does not exist yet: without `--force` exactly one
/// exits 0 and the others exit 7 ("exists"), in every one of 300 rounds; the file is the whole
/// archive. With `--force` every writer succeeds and the file is still one whole archive.
#[test]
fn concurrent_writers_to_one_new_name_have_exactly_one_winner() {
    let d = dir("race");
    let input = d.join("x.f32");
    let v = write_f32(&input, 256);
    let reference = d.join("ref.szp");
    ok(&["compress", s(&input), "--rel", "1e-3", "-o", s(&reference)]);
    let want = std::fs::read(&reference).unwrap();
    assert!(decode(&want).len() == v.len());
    let out = d.join("same.szp");
    let race = |force: bool| -> Vec<Option<i32>> {
        let mut kids: Vec<_> = (0..4)
            .map(|_| {
                let mut c = bin();
                c.args(["compress", s(&input), "--rel", "1e-3", "-o", s(&out)]);
                if force {
                    c.arg("--force");
                }
                c.stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        kids.iter_mut().map(|k| k.wait().unwrap().code()).collect()
    };
    let mut bad = Vec::new();
    for round in 0..300 {
        let _ = std::fs::remove_file(&out);
        let codes = race(false);
        let wins = codes.iter().filter(|c| **c == Some(0)).count();
        let exists = codes.iter().filter(|c| **c == Some(7)).count();
        if wins != 1 || exists != 3 {
            bad.push((round, codes));
        }
        assert_eq!(std::fs::read(&out).unwrap(), want, "round {round}");
    }
    assert!(
        bad.is_empty(),
        "{} of 300 rounds did not have exactly one winner and three \"exists\" (exit 7): {:?}",
        bad.len(),
        &bad[..bad.len().min(10)]
    );
    for round in 0..50 {
        let codes = race(true);
        assert!(
            codes.iter().all(|c| *c == Some(0)),
            "--force round {round}: {codes:?}"
        );
        let got = std::fs::read(&out).unwrap();
        assert_eq!(got, want, "--force round {round}");
        assert_eq!(decode(&got).len(), v.len());
    }
    assert!(temps(&d).is_empty(), "{:?}", temps(&d));
}

/// With `-o -` standard output holds the payload and nothing else, for every command that
/// writes an output; the report line goes to stderr.
#[test]
fn dash_output_carries_only_the_payload() {
    let d = dir("stdout");
    let input = d.join("x.f32");
    let v = write_f32(&input, 3000);
    let x = d.join("x.szp");
    let y = d.join("y.szp");
    for p in [&x, &y] {
        ok(&[
            "compress",
            s(&input),
            "--mode",
            "abs",
            "--eb",
            "1e-3",
            "--max-abs",
            "4",
            "-o",
            s(p),
        ]);
    }
    let cases: Vec<(Vec<&str>, f32)> = vec![
        (vec!["scale", s(&x), "--by", "2", "-o", "-"], 2.0),
        (vec!["add", s(&x), s(&y), "-o", "-"], 2.0),
        (vec!["add", s(&x), s(&y), "--sub", "-o", "-"], 0.0),
        (vec!["sum", s(&x), s(&y), s(&x), "-o", "-"], 3.0),
        (vec!["compress", s(&input), "--rel", "1e-3", "-o", "-"], 1.0),
    ];
    for (args, k) in cases {
        let o = run(&args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        let got = decode(&o.stdout);
        assert_eq!(got.len(), v.len(), "{args:?}");
        let worst = got
            .iter()
            .zip(&v)
            .map(|(g, x)| (g - k * x).abs())
            .fold(0f32, f32::max);
        assert!(worst <= 0.01, "{args:?}: off by {worst}");
        // the report is on stderr
        assert!(!o.stderr.is_empty(), "{args:?}: no report on stderr");
    }
    // decompress to stdout: exactly the raw values
    let o = run(&["decompress", s(&x), "-o", "-"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(o.stdout.len(), v.len() * 4);
    assert!(String::from_utf8_lossy(&o.stderr).contains("3000 f32 values"));
    // stats --json: stdout is exactly one JSON object
    let o = run(&["stats", s(&x), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(j["n"], 3000);
    // bench --plot -: the SVG alone on stdout, the table on stderr
    let o = run(&[
        "bench",
        "--random-walk",
        "4096",
        "--codec",
        "pernix",
        "--bits",
        "8",
        "--paths",
        "scalar",
        "--min-time",
        "0",
        "--plot",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.trim_start().starts_with("<svg") || out.trim_start().starts_with("<?xml"));
    assert!(
        out.trim_end().ends_with("</svg>"),
        "{}",
        &out[out.len().saturating_sub(200)..]
    );
}

/// `add`/`sum`/`scale` refuse an output that is one of their inputs (the same path or a hard
/// link: exit 2; a symbolic link: exit 3), even with `--force`, and leave it unchanged.
#[test]
fn ops_never_overwrite_an_input() {
    let d = dir("ops-self");
    let input = d.join("x.f32");
    write_f32(&input, 2000);
    let x = d.join("x.szp");
    let y = d.join("y.szp");
    ok(&["compress", s(&input), "--abs", "1e-3", "-o", s(&x)]);
    ok(&["compress", s(&input), "--abs", "1e-3", "-o", s(&y)]);
    let (xb, yb) = (std::fs::read(&x).unwrap(), std::fs::read(&y).unwrap());
    let hard = d.join("hard.szp");
    std::fs::hard_link(&y, &hard).unwrap();
    let soft = d.join("soft.szp");
    symlink(&y, &soft).unwrap();
    for out in [&y, &hard] {
        for args in [
            vec!["add", s(&y), s(&x), "-o", s(out), "--force"],
            vec!["add", s(&x), s(&y), "--sub", "-o", s(out), "--force"],
            vec!["sum", s(&x), s(&x), s(&y), "-o", s(out), "--force"],
            vec!["scale", s(&y), "--by", "3", "-o", s(out), "--force"],
        ] {
            fails(&args, 2, &["input file itself"]);
        }
    }
    // through a symbolic link to the input: refused (as every symlink output is)
    fails(
        &["scale", s(&y), "--by", "3", "-o", s(&soft), "--force"],
        3,
        &["symbolic link"],
    );
    // the input read through a link, the output the real file
    fails(
        &["scale", s(&soft), "--by", "3", "-o", s(&y), "--force"],
        2,
        &["input file itself"],
    );
    assert_eq!(std::fs::read(&x).unwrap(), xb);
    assert_eq!(std::fs::read(&y).unwrap(), yb);
    assert!(
        std::fs::symlink_metadata(&soft)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(temps(&d).is_empty(), "{:?}", temps(&d));
}

/// A file starting with a known container's magic is refused by `compress` (exit 4) with a
/// message naming the container and what to do; `--raw` compresses it anyway. (NumPy `.npy`
/// is read instead: `tests/npy.rs`.)
#[test]
fn containers_are_not_compressed_as_raw_floats() {
    let d = dir("containers");
    let body = fzpack::values_to_le_bytes(&(0..256).map(|i| i as f32).collect::<Vec<_>>());
    let raw = d.join("plain.f32");
    std::fs::write(&raw, &body).unwrap();
    let szp = d.join("plain.szp");
    ok(&["compress", s(&raw), "--rel", "1e-3", "-o", s(&szp)]);
    let pnx = d.join("plain.pnx");
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
    let with = |magic: &[u8]| {
        let mut v = magic.to_vec();
        v.resize(16, 0);
        v.extend_from_slice(&body);
        v
    };
    let cases: Vec<(&str, Vec<u8>, &[&str])> = vec![
        ("t.h5", with(b"\x89HDF\r\n\x1a\n"), &["HDF5", "--raw"]),
        ("t.nc", with(b"CDF\x01"), &["netCDF", "--raw"]),
        ("t2.nc", with(b"CDF\x02"), &["netCDF"]),
        ("t5.nc", with(b"CDF\x05"), &["netCDF"]),
        ("t.zst", with(&[0x28, 0xb5, 0x2f, 0xfd]), &["zstd", "--raw"]),
        ("t.gz", with(&[0x1f, 0x8b, 0x08]), &["gzip", "--raw"]),
        (
            "t.szp",
            std::fs::read(&szp).unwrap(),
            &["SZp archive", "decompress"],
        ),
        (
            "t.pnx",
            std::fs::read(&pnx).unwrap(),
            &["PERNIX archive", "decompress"],
        ),
    ];
    for (name, bytes, needles) in &cases {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = d.join(format!("{name}.out"));
        // with and without --dtype (without, the container is named instead of "give --dtype")
        fails(
            &["compress", s(&p), "--rel", "1e-3", "-o", s(&out)],
            4,
            needles,
        );
        fails(
            &[
                "compress",
                s(&p),
                "--rel",
                "1e-3",
                "--dtype",
                "f32",
                "-o",
                s(&out),
            ],
            4,
            needles,
        );
        fails(
            &[
                "compress",
                s(&p),
                "--bits",
                "16",
                "--dtype",
                "f32",
                "--codec",
                "pernix",
                "-o",
                s(&out),
            ],
            4,
            needles,
        );
        // from standard input
        let mut c = bin()
            .args([
                "compress",
                "-",
                "--rel",
                "1e-3",
                "--dtype",
                "f32",
                "-o",
                s(&out),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut w = c.stdin.take().unwrap();
        let b = bytes.clone();
        let t = std::thread::spawn(move || {
            let _ = w.write_all(&b);
        });
        let o = c.wait_with_output().unwrap();
        t.join().unwrap();
        assert_eq!(o.status.code(), Some(4), "stdin {name}: {}", text(&o));
        assert!(!out.exists());
        // --raw: the bytes as raw floats (the magic check is skipped; an archive's bytes may
        // still hold NaN patterns, refused as for any raw input)
        if bytes.len() % 4 == 0 {
            let args = [
                "compress",
                s(&p),
                "--rel",
                "1e-3",
                "--dtype",
                "f32",
                "--raw",
                "-o",
                s(&out),
            ];
            let o = run(&args);
            let t = text(&o);
            assert!(!t.contains("magic number"), "{args:?}: {t}");
            assert!(
                o.status.success() && out.exists() || t.contains("finite values"),
                "{args:?}: {t}"
            );
        }
    }
    // plain floats are unaffected
    ok(&[
        "compress",
        s(&raw),
        "--rel",
        "1e-3",
        "-o",
        s(&d.join("again.szp")),
    ]);
}

/// Runs `cmd` with `stdin` under a 1 GiB address-space limit and a 60 s watchdog (so the test
/// cannot hang); returns its output.
fn limited(
    mut cmd: Command,
    gib: u64,
    feed: Option<Box<dyn FnOnce(std::process::ChildStdin) + Send>>,
) -> Output {
    let lim = gib << 30;
    // The closure runs in the child between fork and exec.
    // SAFETY: it only calls setrlimit, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: lim,
                rlim_max: lim,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    if feed.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    let feeder = feed.map(|f| {
        let w = child.stdin.take().unwrap();
        std::thread::spawn(move || f(w))
    });
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let dog = {
        let done = done.clone();
        std::thread::spawn(move || {
            let t = Instant::now();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if t.elapsed() > Duration::from_secs(60) {
                    // SAFETY: kill(2) on our own child's pid; it reads no memory.
                    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                    return true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            false
        })
    };
    let o = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(
        !dog.join().unwrap(),
        "the run hung and was killed after 60 s"
    );
    if let Some(f) = feeder {
        let _ = f.join();
    }
    o
}

/// An endless generator: writes float bytes until the reader goes away.
fn endless(mut w: std::process::ChildStdin) {
    let chunk = fzpack::values_to_le_bytes(&(0..16384).map(|i| i as f32).collect::<Vec<_>>());
    while w.write_all(&chunk).is_ok() {}
}

/// Endless input (a generator on a pipe, a character device) that cannot be streamed stops at
/// the hard cap on what is buffered, with a clear error (exit 4) — never an allocation failure
/// under the limit, never a hang — for compress (NOA, ABS without --max-abs, PERNIX) and
/// decompress.
#[test]
fn endless_input_stops_at_the_buffering_cap() {
    let d = dir("endless");
    let out = d.join("out.szp");
    let cap = "33554432"; // 32 MiB
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "compress",
            "-",
            "--rel",
            "1e-3",
            "--dtype",
            "f32",
            "-o",
            s(&out),
        ],
        vec![
            "compress",
            "-",
            "--abs",
            "1e-3",
            "--dtype",
            "f32",
            "-o",
            s(&out),
        ],
        vec![
            "compress", "-", "--bits", "16", "--dtype", "f64", "--codec", "pernix", "-o", "-",
        ],
        vec![
            "compress",
            "/dev/zero",
            "--rel",
            "1e-3",
            "--dtype",
            "f32",
            "-o",
            s(&out),
        ],
    ];
    for args in &cases {
        let mut c = bin();
        c.args(args).env("FZPACK_MAX_PIPE_BYTES", cap);
        let feed: Option<Box<dyn FnOnce(std::process::ChildStdin) + Send>> = if args[1] == "-" {
            Some(Box::new(endless))
        } else {
            None
        };
        let o = limited(c, 1, feed);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(4), "{args:?}: {t}");
        assert!(t.contains("more than 33554432 bytes"), "{args:?}: {t}");
        assert!(t.contains("regular file"), "{args:?}: {t}");
        assert!(o.stdout.is_empty(), "{args:?}: wrote to stdout");
        assert!(!out.exists());
    }
    // An endless archive-looking stream on stdin to decompress: the same cap.
    let mut c = bin();
    c.args(["decompress", "-", "-o", s(&d.join("x.f32"))])
        .env("FZPACK_MAX_PIPE_BYTES", cap);
    let o = limited(
        c,
        1,
        Some(Box::new(|mut w: std::process::ChildStdin| {
            if w.write_all(b"FZSZ").is_ok() {
                endless(w)
            }
        })),
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(
        text(&o).contains("more than 33554432 bytes"),
        "{}",
        text(&o)
    );
    // The default cap (1 GiB) holds under a 3 GiB address-space limit.
    let mut c = bin();
    c.args([
        "compress",
        "/dev/zero",
        "--rel",
        "1e-3",
        "--dtype",
        "f32",
        "-o",
        s(&out),
    ])
    .env_remove("FZPACK_MAX_PIPE_BYTES");
    let o = limited(c, 3, None);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(
        text(&o).contains("more than 1073741824 bytes"),
        "{}",
        text(&o)
    );
    // Below the cap, a pipe still works.
    let small =
        fzpack::values_to_le_bytes(&(0..5000).map(|i| (i as f32).sin()).collect::<Vec<_>>());
    let mut c = bin();
    c.args([
        "compress", "-", "--rel", "1e-3", "--dtype", "f32", "-o", "-",
    ])
    .env("FZPACK_MAX_PIPE_BYTES", cap);
    let o = limited(
        c,
        1,
        Some(Box::new(move |mut w: std::process::ChildStdin| {
            let _ = w.write_all(&small);
        })),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(decode(&o.stdout).len(), 5000);
}

/// The documented exit codes in the ops (a checksum mismatch is 5, as in decompress and info),
/// `-` as standard input for the ops, `compress --help` on the layouts the ops take, and
/// `info` showing the block layout.
#[test]
fn ops_exit_codes_stdin_help_and_info_layout() {
    let d = dir("consistency");
    let input = d.join("x.f32");
    let v = write_f32(&input, 5000);
    let heads = d.join("heads.szp");
    let fzgm = d.join("fzgm.szp");
    for (p, layout) in [(&heads, "heads"), (&fzgm, "fzgm")] {
        ok(&[
            "compress",
            s(&input),
            "--mode",
            "abs",
            "--eb",
            "1e-3",
            "--layout",
            layout,
            "-o",
            s(p),
        ]);
    }
    // a flipped payload byte: every command says "corrupt" with exit 5
    let bad = d.join("bad.szp");
    let mut b = std::fs::read(&heads).unwrap();
    let at = b.len() / 2;
    b[at] ^= 0x10;
    std::fs::write(&bad, &b).unwrap();
    let out = d.join("o.szp");
    for args in [
        vec!["decompress", s(&bad), "-o", s(&d.join("o.f32"))],
        vec!["info", s(&bad)],
        vec!["add", s(&bad), s(&heads), "-o", s(&out)],
        vec!["sum", s(&heads), s(&bad), "-o", s(&out)],
        vec!["scale", s(&bad), "--by", "2", "-o", s(&out)],
        vec!["stats", s(&bad)],
    ] {
        fails(&args, 5, &["checksum"]);
    }
    assert!(!out.exists());
    // a layout mismatch names the layout (exit 4)
    fails(&["add", s(&heads), s(&fzgm), "-o", s(&out)], 4, &["layout"]);
    // `-` is standard input for the ops
    let stdin_run = |args: &[&str], file: &Path| {
        let o = bin()
            .args(args)
            .stdin(std::fs::File::open(file).unwrap())
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        o
    };
    let o = stdin_run(&["scale", "-", "--by", "2", "-o", "-"], &heads);
    let got = decode(&o.stdout);
    assert!(
        got.iter()
            .zip(&v)
            .all(|(g, x)| (g - 2.0 * x).abs() <= 2.1e-3)
    );
    let o = stdin_run(&["add", "-", s(&heads), "-o", "-"], &heads);
    assert_eq!(decode(&o.stdout).len(), v.len());
    let o = stdin_run(&["stats", "-", "--json"], &fzgm);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["n"], 5000);
    fails(&["sum", "-", "-", "-o", s(&out)], 2, &["only once"]);
    // --help: the ops take both layouts
    let h = ok(&["compress", "--help"]);
    assert!(!h.contains("take today"), "{h}");
    assert!(h.contains("take both"), "{h}");
    // info shows the block layout
    let i = ok(&["info", s(&heads)]);
    assert!(i.contains("layout") && i.contains("block-head"), "{i}");
    let i = ok(&["info", s(&fzgm)]);
    assert!(i.contains("layout") && i.contains("stage"), "{i}");
}

/// A temporary file left by a run killed with SIGKILL (`.NAME.PID.RANDOM.fzpack-tmp` with a
/// dead PID) is removed by the next run writing NAME; one whose PID is alive, one for another
/// name and one that is not a regular file are left alone.
#[test]
fn stale_temp_files_of_dead_runs_are_removed() {
    let d = dir("stale");
    let input = d.join("x.f32");
    write_f32(&input, 1000);
    // a PID that certainly existed and is now gone (reaped)
    let mut c = Command::new("true").spawn().unwrap();
    let dead = c.id();
    c.wait().unwrap();
    let live = std::process::id();
    let stale = d.join(format!(".out.szp.{dead}.Ab3dE9xQ.fzpack-tmp"));
    let alive = d.join(format!(".out.szp.{live}.Zz9yX8wV.fzpack-tmp"));
    let other = d.join(format!(".other.szp.{dead}.Qq1wE2rT.fzpack-tmp"));
    let link = d.join(format!(".out.szp.{dead}.Ll0kJ9hG.fzpack-tmp"));
    for p in [&stale, &alive, &other] {
        std::fs::write(p, b"partial archive").unwrap();
    }
    symlink(&input, &link).unwrap();
    // A real killed run leaves such a file too (when it is killed mid-write).
    let out = d.join("out.szp");
    ok(&["compress", s(&input), "--rel", "1e-3", "-o", s(&out)]);
    assert!(
        !stale.exists(),
        "the dead run's temporary file is still there"
    );
    assert!(alive.exists(), "a live run's temporary file was removed");
    assert!(
        other.exists(),
        "another output's temporary file was removed"
    );
    assert!(
        std::fs::symlink_metadata(&link).is_ok(),
        "a symlink was removed"
    );
    assert!(input.exists());
    // A real run killed with SIGKILL mid-write: its temporary file carries its PID, and the
    // next run writing the same name removes it.
    let big = d.join("big.f32");
    let k = d.join("k.szp");
    let mut n = 4 << 20;
    for attempt in 0..4 {
        write_f32(&big, n);
        let mut child = bin()
            .args(["compress", s(&big), "--rel", "1e-3", "-o", s(&k)])
            .env("FZPACK_BATCH_BYTES", "65536")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        let t0 = Instant::now();
        let seen = loop {
            if child.try_wait().unwrap().is_some() {
                break None;
            }
            if let Some(t) = temps(&d).into_iter().find(|t| t.starts_with(".k.szp.")) {
                break Some(t);
            }
            assert!(
                t0.elapsed() < Duration::from_secs(120),
                "no temp file appeared"
            );
            std::thread::sleep(Duration::from_millis(2));
        };
        let Some(name) = seen else {
            println!("attempt {attempt}: the run ended before its temp file was seen");
            let _ = std::fs::remove_file(&k);
            n *= 2;
            continue;
        };
        // SAFETY: kill(2) on our own child's pid; it reads no memory.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        child.wait().unwrap();
        assert!(
            name.starts_with(&format!(".k.szp.{pid}.")),
            "{name} does not carry the writer's PID {pid}"
        );
        assert!(
            d.join(&name).exists(),
            "SIGKILL cannot be caught: the file stays"
        );
        assert!(!k.exists());
        ok(&["compress", s(&input), "--rel", "1e-3", "-o", s(&k)]);
        assert!(
            !d.join(&name).exists(),
            "the killed run's {name} is still there"
        );
        assert!(k.exists());
        return;
    }
    panic!("runs always ended before their temporary file was seen");
}

/// Reads the resident set size of process `pid` in KiB (`VmRSS` of /proc/PID/status).
fn rss_kib(pid: u32) -> Option<u64> {
    let st = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = st.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// SZp ABS with `--max-abs` streams a pipe in bounded windows: a finite stream far above the
/// pipe cap gives exactly the archive of the same values from a regular file, and an endless
/// generator keeps the process's resident memory bounded while 256 MiB go through (sampled
/// from /proc; the run is then killed, so the test cannot hang).
#[test]
fn abs_with_max_abs_streams_endless_input_in_bounded_memory() {
    let d = dir("stream");
    let vals: Vec<f32> = (0..(3 << 20) + 777)
        .map(|i| ((i as f32) * 0.001).sin() * 100.0 + (i % 7) as f32)
        .collect();
    let bytes = fzpack::values_to_le_bytes(&vals);
    let file = d.join("v.f32");
    std::fs::write(&file, &bytes).unwrap();
    for layout in ["heads", "fzgm"] {
        let opts = [
            "--mode",
            "abs",
            "--eb",
            "1e-2",
            "--max-abs",
            "200",
            "--layout",
            layout,
            "--block-size",
            "100",
        ];
        let want = d.join(format!("{layout}.szp"));
        let mut args = vec!["compress", s(&file), "-o", s(&want)];
        args.extend(opts);
        ok(&args);
        let got = d.join(format!("{layout}-piped.szp"));
        let mut c = bin();
        c.args(["compress", "-", "--dtype", "f32", "-o", s(&got)])
            .args(opts)
            .env("FZPACK_MAX_PIPE_BYTES", "1048576") // 1 MiB: 12 MiB go through anyway
            .env("FZPACK_BATCH_BYTES", "300000");
        let b = bytes.clone();
        let o = limited(
            c,
            1,
            Some(Box::new(move |mut w: std::process::ChildStdin| {
                let _ = w.write_all(&b);
            })),
        );
        assert!(o.status.success(), "{layout}: {}", text(&o));
        assert_eq!(
            std::fs::read(&got).unwrap(),
            std::fs::read(&want).unwrap(),
            "{layout}: the streamed archive differs from the file's"
        );
    }
    // A value above --max-abs in the third window: refused with its global index.
    let mut bad = vals.clone();
    bad[200_000] = 500.0;
    let o = {
        let b = fzpack::values_to_le_bytes(&bad);
        let mut c = bin();
        c.args([
            "compress", "-", "--dtype", "f32", "--mode", "abs", "--eb", "1e-2",
        ])
        .args(["--max-abs", "200", "-o", s(&d.join("bad.szp"))])
        .env("FZPACK_BATCH_BYTES", "300000");
        limited(
            c,
            1,
            Some(Box::new(move |mut w: std::process::ChildStdin| {
                let _ = w.write_all(&b);
            })),
        )
    };
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(text(&o).contains("200000"), "{}", text(&o));
    assert!(!d.join("bad.szp").exists());

    // Endless: 256 MiB through a process whose resident memory stays under 64 MiB.
    let mut child = bin()
        .args([
            "compress", "-", "--dtype", "f32", "--mode", "abs", "--eb", "1e-2",
        ])
        .args(["--max-abs", "200", "-o", s(&d.join("endless.szp"))])
        .env("FZPACK_BATCH_BYTES", "1048576")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut w = child.stdin.take().unwrap();
    let chunk = fzpack::values_to_le_bytes(&vals[..1 << 16]);
    let t0 = Instant::now();
    let (mut sent, mut peak) = (0usize, 0u64);
    while sent < 256 << 20 {
        if w.write_all(&chunk).is_err() {
            break;
        }
        sent += chunk.len();
        if sent % (4 << 20) == 0 {
            peak = peak.max(rss_kib(pid).unwrap_or(0));
        }
        assert!(
            t0.elapsed() < Duration::from_secs(240),
            "only {sent} bytes went through in 240 s"
        );
    }
    peak = peak.max(rss_kib(pid).unwrap_or(0));
    let alive = child.try_wait().unwrap().is_none();
    // SAFETY: kill(2) on our own child's pid; it reads no memory.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    drop(w);
    let o = child.wait_with_output().unwrap();
    assert!(alive, "the streaming run ended early: {}", text(&o));
    assert_eq!(sent, 256 << 20, "the run stopped reading: {}", text(&o));
    println!(
        "endless stream: {} MiB in, peak RSS {} KiB",
        sent >> 20,
        peak
    );
    assert!(peak > 0, "no RSS sample");
    assert!(
        peak < 64 << 10,
        "RSS {peak} KiB while streaming: not bounded"
    );
    assert!(!d.join("endless.szp").exists());
}
