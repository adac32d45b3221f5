//! The CLI's safety promises: outputs that must never be touched (device node, FIFO, symlinks at
//! the output and at the temporary path, the input itself), killed runs, bit flips in every
//! format, hostile counts under a 1 GiB address-space limit, and arguments or inputs that must
//! fail at once. Also: the streamed SZp writer and reader produce exactly the library's bytes
//! and values.

use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use fzpack::pernix::Verify;
use fzpack::szp;
use fzpack_cli::container;

mod common;
use common::*;

fn dir(name: &str) -> PathBuf {
    scratch("safety", name)
}

/// A random walk (what the speed targets are measured on), deterministic.
fn walk(n: usize, seed: u64) -> Vec<f32> {
    let mut x = seed | 1;
    let mut acc = 0f64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            acc += (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            acc as f32
        })
        .collect()
}

fn write_walk(path: &Path, n: usize) -> Vec<f32> {
    let v = walk(n, 0x5eed ^ n as u64);
    std::fs::write(path, fzpack::values_to_le_bytes(&v)).unwrap();
    v
}

#[test]
fn streamed_szp_equals_the_library_bytes_and_values() {
    let d = dir("stream");
    for (n, bs, batch) in [
        (0usize, 128u32, "4096"),
        (1, 128, "4096"),
        (100_003, 128, "4096"),
        (100_003, 7, "1000"),
        (70_001, 4096, "65536"),
    ] {
        let input = d.join("in.f32");
        let v = write_walk(&input, n);
        // The CLI's default layout is the block-head layout.
        let heads = szp::Layout::Heads;
        let cfg = szp::Config::noa(1e-3)
            .with_block_size(bs)
            .with_layout(heads);
        // (NOA needs a value range: one value has none)
        let (cfg, mode) = if n <= 1 {
            (
                szp::Config::abs(1e-3)
                    .with_block_size(bs)
                    .with_layout(heads),
                "abs",
            )
        } else {
            (cfg, "noa")
        };
        let want = fzpack::szp::compress(&v, &cfg).unwrap();
        let arch = d.join("a.szp");
        let bss = bs.to_string();
        let args = [
            "compress",
            s(&input),
            "--mode",
            mode,
            "--eb",
            "1e-3",
            "--block-size",
            &bss,
            "--force",
        ];
        let o = bin()
            .args(args)
            .args(["-o", s(&arch)])
            .env("FZPACK_BATCH_BYTES", batch)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(std::fs::read(&arch).unwrap(), want, "file: n={n} bs={bs}");
        // Standard output: the two-pass writer.
        let o = bin()
            .args(args)
            .args(["-o", "-"])
            .env("FZPACK_BATCH_BYTES", batch)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(o.stdout, want, "stdout: n={n} bs={bs}");
        // Decoded in batches (mapped output file and stdout) = the library's values.
        let back: Vec<f32> = fzpack::szp::decompress(&want).unwrap();
        let raw = fzpack::values_to_le_bytes(&back);
        let dec = d.join("back.f32");
        let o = bin()
            .args(["decompress", s(&arch), "-o", s(&dec), "--force"])
            .env("FZPACK_BATCH_BYTES", batch)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(std::fs::read(&dec).unwrap(), raw, "decoded file: n={n}");
        let o = bin()
            .args(["decompress", s(&arch), "-o", "-"])
            .env("FZPACK_BATCH_BYTES", batch)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(o.stdout, raw, "decoded stdout: n={n}");
    }
    assert!(temps(&d).is_empty());
}

#[test]
fn device_node_at_the_output_is_never_replaced() {
    let d = dir("mknod");
    let input = d.join("in.f32");
    write_walk(&input, 1000);
    let node = d.join("node");
    // A character device with the numbers of /dev/null (1, 3): needs CAP_MKNOD.
    let made = Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|st| st.success());
    if !made {
        println!("skipped: not root (mknod of a character device failed)");
        return;
    }
    for cmd in [
        vec!["compress", s(&input), "-o", s(&node), "--force"],
        vec![
            "compress",
            s(&input),
            "--codec",
            "pernix",
            "-o",
            s(&node),
            "--force",
        ],
    ] {
        let o = run(&cmd);
        assert_eq!(o.status.code(), Some(3), "{cmd:?}: {}", text(&o));
        assert!(text(&o).contains("character device"), "{}", text(&o));
        let m = std::fs::symlink_metadata(&node).unwrap();
        assert!(m.file_type().is_char_device(), "the node was replaced");
    }
    // decompress onto it too
    let arch = d.join("a.szp");
    ok(&["compress", s(&input), "-o", s(&arch)]);
    let o = run(&["decompress", s(&arch), "-o", s(&node), "--force"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        std::fs::symlink_metadata(&node)
            .unwrap()
            .file_type()
            .is_char_device()
    );
    assert!(temps(&d).is_empty());
}

#[test]
fn fifo_symlinks_and_the_input_itself_are_refused() {
    let d = dir("targets");
    let input = d.join("in.f32");
    write_walk(&input, 5000);
    let orig = std::fs::read(&input).unwrap();
    let arch = d.join("a.szp");
    ok(&["compress", s(&input), "-o", s(&arch)]);
    let arch_bytes = std::fs::read(&arch).unwrap();

    // FIFO at the output: refused at once (no open, so no blocking), for both commands.
    let fifo = d.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for cmd in [
        vec!["compress", s(&input), "-o", s(&fifo), "--force"],
        vec!["decompress", s(&arch), "-o", s(&fifo), "--force"],
    ] {
        let o = run(&cmd);
        assert_eq!(o.status.code(), Some(3), "{cmd:?}: {}", text(&o));
        assert!(text(&o).contains("FIFO"), "{}", text(&o));
    }
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // A symlink at the output (dangling or not) is neither followed nor replaced.
    let victim = d.join("victim");
    std::fs::write(&victim, b"keep").unwrap();
    let link = d.join("out.szp");
    symlink(&victim, &link).unwrap();
    let dangling = d.join("dangling.szp");
    symlink(d.join("nothere"), &dangling).unwrap();
    for out in [&link, &dangling] {
        let o = run(&["compress", s(&input), "-o", s(out), "--force"]);
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        assert!(text(&o).contains("symbolic link"), "{}", text(&o));
        assert!(
            std::fs::symlink_metadata(out)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    assert!(!d.join("nothere").exists());

    // A symlink planted at the temporary path: with FZPACK_TEMP_RAND_LEN=0 the name is
    // `.NAME.PID..fzpack-tmp`, so once the writer's PID is known (it waits for its standard
    // input meanwhile) the link sits exactly where the file would be created. O_EXCL refuses
    // it (exit 3) and the link's target is untouched. The old fixed name
    // (`NAME.fzpack-partial`) is not used at all.
    let out = d.join("fresh.szp");
    let old_name = d.join("fresh.szp.fzpack-partial");
    symlink(&victim, &old_name).unwrap();
    let mut child = bin()
        .args(["compress", "-", "--dtype", "f32", "-o", s(&out)])
        .env("FZPACK_TEMP_RAND_LEN", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let planted = d.join(format!(".fresh.szp.{}..fzpack-tmp", child.id()));
    symlink(&victim, &planted).unwrap();
    {
        use std::io::Write;
        let mut w = child.stdin.take().unwrap();
        w.write_all(&orig).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("temporary file"), "{}", text(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    assert!(
        std::fs::symlink_metadata(&planted)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!out.exists());
    // With the usual random name the same run succeeds and leaves both links alone.
    ok(&["compress", s(&input), "-o", s(&out)]);
    assert_eq!(std::fs::read(&out).unwrap(), arch_bytes);
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    assert!(
        std::fs::symlink_metadata(&old_name)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    std::fs::remove_file(&planted).unwrap();

    // Output == input: the same path, a symlink to it, a hard link to it; compress and
    // decompress; with --force. Exit 2 and nothing changes.
    let soft = d.join("soft.f32");
    symlink(&input, &soft).unwrap();
    let hard = d.join("hard.f32");
    std::fs::hard_link(&input, &hard).unwrap();
    for out in [&input, &hard] {
        let o = run(&["compress", s(&input), "-o", s(out), "--force"]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("input file itself"), "{}", text(&o));
    }
    // (a symlink to the input is refused as a symlink first)
    let o = run(&["compress", s(&input), "-o", s(&soft), "--force"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let o = run(&["decompress", s(&arch), "-o", s(&arch), "--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(std::fs::read(&input).unwrap(), orig);
    assert_eq!(std::fs::read(&arch).unwrap(), arch_bytes);
    assert!(temps(&d).is_empty(), "{:?}", temps(&d));
}

/// Starts `args` with small batches (a long run of many writes), waits until its temporary
/// file exists, sends `sig` and returns how the process ended, or `None` if it finished
/// before the temporary file was seen.
fn kill_mid_write(d: &Path, args: &[&str], sig: i32) -> Option<std::process::ExitStatus> {
    let mut child = bin()
        .args(args)
        .env("FZPACK_BATCH_BYTES", "65536")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            println!("run ended before the signal: {st}");
            return None;
        }
        let seen = std::fs::read_dir(d)
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| {
                e.file_name().to_string_lossy().ends_with(".fzpack-tmp")
                    && e.metadata().is_ok_and(|m| m.len() > 0)
            });
        if seen {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no temp file appeared"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    // SAFETY: kill(2) on our own child's pid; it reads no memory.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    assert_eq!(r, 0);
    Some(child.wait().unwrap())
}

#[test]
fn killed_runs_leave_the_output_untouched_and_sigterm_leaves_no_temp_file() {
    use std::os::unix::process::ExitStatusExt;
    let d = dir("kill");
    let input = d.join("big.f32");
    let mut n = 6 << 20; // 24 MiB; doubled if a run ends before the signal
    for attempt in 0..4 {
        write_walk(&input, n);
        let arch = d.join("big.szp");
        ok(&["compress", s(&input), "-o", s(&arch), "--force"]);
        let out = d.join("out.bin");
        let mut done = true;
        for sig in [libc::SIGTERM, libc::SIGKILL] {
            for args in [
                vec!["compress", s(&input), "-o", s(&out), "--force"],
                vec![
                    "compress",
                    s(&input),
                    "--codec",
                    "pernix",
                    "-o",
                    s(&out),
                    "--force",
                ],
                vec!["decompress", s(&arch), "-o", s(&out), "--force"],
            ] {
                std::fs::write(&out, b"previous output").unwrap();
                let Some(st) = kill_mid_write(&d, &args, sig) else {
                    done = false;
                    continue;
                };
                assert_eq!(st.signal(), Some(sig), "{args:?}: {st}");
                assert_eq!(
                    std::fs::read(&out).unwrap(),
                    b"previous output",
                    "{args:?} after signal {sig}"
                );
                let left = temps(&d);
                if sig == libc::SIGTERM {
                    assert!(left.is_empty(), "{args:?}: SIGTERM left {left:?}");
                } else {
                    // SIGKILL cannot be caught: the temporary file may stay (never the output).
                    println!(
                        "SIGKILL {:?}: {} temporary file(s) left",
                        args[0],
                        left.len()
                    );
                    for t in left {
                        std::fs::remove_file(d.join(t)).unwrap();
                    }
                }
            }
        }
        if done {
            return;
        }
        println!("attempt {attempt}: some runs ended too early; doubling the input");
        n *= 2;
    }
    panic!("runs always ended before the signal could be sent");
}

/// Flips `trials` random bits of `bytes` and counts the flips the CLI's checks reject (the
/// same `container::check` and decode that `fzpack decompress` runs, in-process, since 10,000
/// process spawns per format would take minutes).
fn flips_detected(bytes: &[u8], trials: usize, seed: u64) -> usize {
    let mut rng = seed;
    let mut detected = 0;
    let mut b = bytes.to_vec();
    for _ in 0..trials {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let bit = (rng % (bytes.len() as u64 * 8)) as usize;
        b[bit / 8] ^= 1 << (bit % 8);
        let rejected = container::check(&b, Verify::Checksums).is_err()
            || container::decode_all::<f32>(&b, Verify::Checksums).is_err();
        if rejected {
            detected += 1;
        }
        b[bit / 8] ^= 1 << (bit % 8);
    }
    detected
}

#[test]
fn ten_thousand_bit_flips_per_format_are_detected() {
    let d = dir("flips");
    let input = d.join("in.f32");
    write_walk(&input, 3000);
    let trials = 10_000;
    for (name, args) in [
        ("pnx v2", vec!["--codec", "pernix", "--bits", "12"]),
        ("fzm", vec!["--format", "fzm", "--eb", "1e-3"]),
        ("szp v2", vec!["--eb", "1e-3"]),
    ] {
        let arch = d.join("a.arch");
        ok(&[
            &["compress", s(&input), "-o", s(&arch), "--force"][..],
            &args[..],
        ]
        .concat());
        let bytes = std::fs::read(&arch).unwrap();
        assert!(container::check(&bytes, Verify::Checksums).is_ok());
        let k = flips_detected(&bytes, trials, 0x9e37_79b9_7f4a_7c15 ^ bytes.len() as u64);
        println!(
            "{name}: {k}/{trials} flips detected ({} bytes)",
            bytes.len()
        );
        assert!(
            k * 1000 >= trials * 999,
            "{name}: only {k}/{trials} flips detected"
        );
        // A few through the binary itself: exit 5, no output left.
        let bad = d.join("bad.arch");
        let out = d.join("out.f32");
        for i in 0..20 {
            let mut b = bytes.clone();
            let bit = (i * 7919 + 13) % (b.len() * 8);
            b[bit / 8] ^= 1 << (bit % 8);
            std::fs::write(&bad, &b).unwrap();
            let o = run(&["decompress", s(&bad), "-o", s(&out)]);
            assert_eq!(o.status.code(), Some(5), "{name} bit {bit}: {}", text(&o));
            assert!(!out.exists());
        }
    }
}

/// Runs the binary under `ulimit -v 1 GiB`.
fn limited(args: &[&str], stdout: Stdio) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -v 1048576 && exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_fzpack"))
        .args(args)
        .stdout(stdout);
    cmd.output().unwrap()
}

#[test]
fn hostile_counts_under_a_one_gib_address_space_limit() {
    let d = dir("ulimit");
    // Headers claiming 2^40 values over a few bytes: rejected as corrupt (exit 5), never an
    // allocation failure (SIGABRT, 134) or a panic (101).
    let plan = szp::Plan {
        dtype: szp::DType::F32,
        mode: szp::Mode::Abs,
        block_size: 128,
        n: 1 << 40,
        requested: 1e-3,
        bound: 1e-3,
        quant_eb: 1e-3,
        value_base: 0.0,
        strict: false,
        layout: szp::Layout::Fzgm,
        missing: false,
        shape: szp::Shape::NONE,
    };
    let mut szp_bytes = vec![0u8; szp::HEADER_LEN + 64];
    szp::blocks::write_header(&plan, &mut szp_bytes).unwrap();
    let pnx = fzpack::pernix::StreamHeader::new::<f32>(
        fzpack::pernix::BitWidth::new(12).unwrap(),
        fzpack::pernix::BlockSize::B64,
        1 << 40,
    );
    let mut pnx_bytes = vec![0u8; 32 + 64];
    assert_eq!(pnx.write(&mut pnx_bytes), Ok(32));
    for (name, bytes) in [("huge.szp", &szp_bytes), ("huge.pnx", &pnx_bytes)] {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        let x = d.join("x.f32");
        for cmd in [vec!["decompress", s(&p), "-o", s(&x)], vec!["info", s(&p)]] {
            let o = limited(&cmd, Stdio::piped());
            assert_eq!(o.status.code(), Some(5), "{cmd:?}: {}", text(&o));
            assert!(!x.exists());
        }
    }
    // A legal SZp v2 archive of 2^28 values in all-zero-width blocks (128 KiB that decode to
    // 1 GiB): decoded in batches, it streams to stdout under the limit; `info` reads it too.
    let n = 1usize << 28;
    let bs = 4096u32;
    let plan = szp::Plan {
        n,
        block_size: bs,
        ..plan
    };
    let nb = plan.blocks();
    let mut a = vec![0u8; plan.payload_offset() + plan.sums_len()];
    szp::blocks::write_header(&plan, &mut a).unwrap();
    let (head, sums) = a.split_at_mut(plan.payload_offset());
    let widths = &head[szp::HEADER_LEN..];
    szp::blocks::seal(widths, &[], n, bs as usize, plan.chunk_shift(), sums);
    assert_eq!(widths.len(), nb);
    let p = d.join("zeros.szp");
    std::fs::write(&p, &a).unwrap();
    let o = limited(&["info", s(&p)], Stdio::piped());
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(&n.to_string()), "{}", text(&o));
    let devnull = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    let o = limited(&["decompress", s(&p), "-o", "-"], Stdio::from(devnull));
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("{n} f32 values")),
        "{}",
        text(&o)
    );
}

#[test]
fn hostile_arguments_and_devices_fail_at_once() {
    let d = dir("fast");
    let input = d.join("in.f32");
    write_walk(&input, 1000);
    let arch = d.join("a.szp");
    ok(&["compress", s(&input), "-o", s(&arch)]);
    // Every one of these must end (with an error) rather than run, read or spawn forever; the
    // 30 s allowance only catches a hang, it is not a speed test.
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (
            vec!["compress", s(&input), "--threads", "100000", "-o", "x"],
            2,
        ),
        (
            vec!["decompress", s(&arch), "--threads", "100000", "-o", "x"],
            2,
        ),
        (vec!["compress", s(&input), "--threads", "0", "-o", "x"], 2),
        (vec!["info", "/dev/zero"], 5),
        (vec!["decompress", "/dev/zero", "-o", "x"], 5),
        (vec!["verify", s(&input), "/dev/zero"], 5),
        (vec!["info", "/dev/urandom"], 5),
    ];
    for (args, code) in cases {
        let t = Instant::now();
        let o = bin().args(&args).current_dir(&d).output().unwrap();
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o));
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{args:?} took {:?}",
            t.elapsed()
        );
    }
    assert!(!d.join("x").exists());
}

#[test]
fn szp_max_abs_and_no_verify() {
    let d = dir("maxabs");
    let (a, b) = (d.join("a.f32"), d.join("b.f32"));
    let va = write_walk(&a, 20_000);
    let vb: Vec<f32> = walk(20_000, 77).iter().map(|x| x * 3.0).collect();
    std::fs::write(&b, fzpack::values_to_le_bytes(&vb)).unwrap();
    let m = va.iter().chain(&vb).fold(0f32, |m, x| m.max(x.abs())) as f64 * 1.5;
    let ms = m.to_string();
    let (sa, sb) = (d.join("a.szp"), d.join("b.szp"));
    for (i, o) in [(&a, &sa), (&b, &sb)] {
        ok(&[
            "compress",
            s(i),
            "--mode",
            "abs",
            "--eb",
            "1e-2",
            "--max-abs",
            &ms,
            "--layout",
            "fzgm",
            "-o",
            s(o),
        ]);
    }
    // The CLI's bytes are the library's with the same config.
    let cfg = szp::Config::abs(1e-2)
        .with_max_abs(m)
        .with_layout(szp::Layout::Fzgm);
    assert_eq!(
        std::fs::read(&sa).unwrap(),
        fzpack::szp::compress(&va, &cfg).unwrap()
    );
    // Same grid: the archives add in the compressed domain.
    let sum = d.join("sum.szp");
    ok(&["add", s(&sa), s(&sb), "-o", s(&sum)]);
    // A value above M, --max-abs with PERNIX or .fzm, a negative M: errors.
    let o = run(&[
        "compress",
        s(&a),
        "--mode",
        "abs",
        "--max-abs",
        "1e-3",
        "-o",
        s(&d.join("x.szp")),
    ]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    for bad in [
        vec!["--codec", "pernix", "--max-abs", "10"],
        vec!["--format", "fzm", "--max-abs", "10"],
        vec!["--max-abs", "-1"],
        vec!["--max-abs", "inf"],
    ] {
        let o = run(&[
            &["compress", s(&a), "-o", s(&d.join("x.szp"))][..],
            &bad[..],
        ]
        .concat());
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", text(&o));
    }
    assert!(!d.join("x.szp").exists());

    // --no-verify: a flipped payload bit is caught by default (exit 5) and, with the flag,
    // decoded anyway (the structure still checked); info says which.
    let mut bytes = std::fs::read(&sa).unwrap();
    let last_payload = bytes.len() - 4 * 2; // inside the payload, before the chunk CRCs
    bytes[last_payload - 100] ^= 0x10;
    let bad = d.join("bad.szp");
    std::fs::write(&bad, &bytes).unwrap();
    let out = d.join("out.f32");
    let o = run(&["decompress", s(&bad), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    assert!(text(&o).contains("checksum"), "{}", text(&o));
    ok(&["decompress", s(&bad), "-o", s(&out), "--no-verify"]);
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 20_000 * 4);
    let o = run(&["info", s(&bad)]);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    let t = ok(&["info", s(&bad), "--no-verify"]);
    assert!(t.contains("not verified"), "{t}");
    let t = ok(&["info", s(&sa)]);
    assert!(
        t.contains("SZp archive v2") && t.contains("verified"),
        "{t}"
    );
}
