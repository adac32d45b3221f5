//! One set of defaults: `fzpack compress` has no default bound (as SZ3 and ZFP) and no default
//! PERNIX rate (as the Python front end); a missing bound is a usage error (exit 2) that says
//! how to give one, and nothing is written. `--abs E` and `--rel R` are the short forms of
//! `--eb E --mode abs` and `--eb R --mode noa` (the same archive byte for byte); a `--eb`
//! without `--mode` is refused rather than read in a mode the user did not choose. `bench`
//! keeps its own bounds (its datasets define them) and runs with none given.

mod common;
use common::*;

#[test]
fn compress_without_a_bound_is_refused() {
    let d = scratch("defaults", "nobound");
    let input = d.join("t.f32");
    write_wave(&input, 4096, 10.0);
    let out = d.join("t.szp");
    for extra in [&[][..], &["--codec", "szp"][..], &["--format", "fzm"][..]] {
        let args = [&["compress", s(&input), "-o", s(&out)][..], extra].concat();
        fails_with(
            &args,
            2,
            &[
                "a bound is required",
                "--abs E or --rel R",
                "no default bound, like SZ3 and ZFP",
            ],
        );
        assert!(!out.exists(), "{args:?} wrote an output");
    }
    // a mode alone is no bound either
    fails_with(
        &["compress", s(&input), "--mode", "abs", "-o", s(&out)],
        2,
        &["a bound is required"],
    );
    // --eb without --mode: no mode is guessed
    fails_with(
        &["compress", s(&input), "--eb", "1e-3", "-o", s(&out)],
        2,
        &["--eb needs --mode abs|noa", "--abs E", "--rel R"],
    );
    // two forms at once
    for two in [
        &["--abs", "1e-3", "--rel", "1e-3"][..],
        &["--abs", "1e-3", "--eb", "1e-3", "--mode", "abs"][..],
        &["--rel", "1e-3", "--mode", "noa"][..],
    ] {
        let args = [&["compress", s(&input), "-o", s(&out)][..], two].concat();
        fails_with(&args, 2, &["give the bound once"]);
    }
    // PERNIX: no default rate; the SZp bounds are refused with PERNIX
    let pnx = d.join("t.pnx");
    fails_with(
        &["compress", s(&input), "--codec", "pernix", "-o", s(&pnx)],
        2,
        &["PERNIX needs --bits N"],
    );
    fails_with(
        &[
            "compress",
            s(&input),
            "--codec",
            "pernix",
            "--bits",
            "12",
            "--abs",
            "1e-3",
            "-o",
            s(&pnx),
        ],
        2,
        &["SZp options", "--bits"],
    );
    assert!(!pnx.exists());
    // bench is not compress: its sweeps define their own bounds, and it runs with none given
    let t = ok(&[
        "bench",
        "--random-walk",
        "4096",
        "--min-time",
        "0",
        "--codec",
        "szp",
    ]);
    assert!(t.contains("szp"), "{t}");
}

#[test]
fn short_and_long_bounds_give_the_same_archive() {
    let d = scratch("defaults", "forms");
    let input = d.join("t.f32");
    write_wave(&input, 50_000, 10.0);
    let archive = |args: &[&str], name: &str| {
        let out = d.join(name);
        let t = ok(&[&["compress", s(&input), "-o", s(&out)][..], args].concat());
        (std::fs::read(&out).unwrap(), t)
    };
    let (a, ta) = archive(&["--abs", "0.01"], "a.szp");
    let (b, _) = archive(&["--eb", "0.01", "--mode", "abs"], "b.szp");
    assert!(a == b, "--abs differs from --eb --mode abs");
    assert!(ta.contains("abs=1e-2"), "{ta}");
    let (r, tr) = archive(&["--rel", "1e-4"], "r.szp");
    let (q, _) = archive(&["--eb", "1e-4", "--mode", "noa"], "q.szp");
    assert!(r == q, "--rel differs from --eb --mode noa");
    assert!(tr.contains("noa=1e-4"), "{tr}");
    assert!(a != r);
    // the bound holds: verify checks every value
    let t = ok(&["verify", s(&input), s(&d.join("a.szp"))]);
    assert!(t.contains("OK: every value is within the bound"), "{t}");
}
