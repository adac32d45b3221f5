//! fzpack-core links into a `#![no_std]` `#![no_main]` program (`tests/nostd-bin`) built with
//! `panic = "abort"`, and that program runs a PERNIX round trip with exit code 0. The linked
//! binary contains no `std::` symbol, so std cannot have leaked in through core or its
//! dependencies.

use std::process::Command;

#[test]
fn core_links_and_runs_without_std() {
    let root = fzpack_tests::vectors::workspace_root();
    let manifest = root.join("tests/nostd-bin/Cargo.toml");
    let target = root.join("target/nostd-bin");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .status()
        .expect("run cargo");
    assert!(status.success(), "building the no_std program failed");
    let bin = target.join("release/fzpack-nostd-check");
    let run = Command::new(&bin).status().expect("run the no_std program");
    assert_eq!(run.code(), Some(0), "the no_std round trip failed");
    let nm = Command::new("nm")
        .arg("-C")
        .arg(&bin)
        .output()
        .expect("nm (binutils) is needed");
    assert!(nm.status.success());
    let syms = String::from_utf8_lossy(&nm.stdout);
    let leaked: Vec<&str> = syms.lines().filter(|l| l.contains("std::")).collect();
    assert!(
        leaked.is_empty(),
        "std symbols in the no_std program: {leaked:?}"
    );
    println!(
        "no_std program: {} symbols, none from std",
        syms.lines().count()
    );
}
