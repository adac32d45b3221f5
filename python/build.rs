//! Builds the HDF5 filter plugin (`../hdf5`, crate `fzpack-hdf5`) and puts
//! `libfzpack_hdf5.so` into `fzpack/_plugins/`, which maturin ships inside the wheel
//! (`[tool.maturin] include` in pyproject.toml), so `fzpack.hdf5.PLUGIN_PATH` names it.
//!
//! The plugin is a separate `cdylib` (HDF5 dlopens every `lib*.so` of a plugin directory, and
//! the extension module itself needs libpython), built by a nested `cargo build --release` into
//! `target/hdf5-plugin`. `FZPACK_SKIP_HDF5_PLUGIN=1` skips it (for `cargo clippy` runs).

use std::env;
use std::error::Error;
use std::fs;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed=../hdf5/src");
    println!("cargo:rerun-if-changed=../hdf5/Cargo.toml");
    println!("cargo:rerun-if-changed=../hdf5/Cargo.lock");
    println!("cargo:rerun-if-changed=../std-ext/src");
    println!("cargo:rerun-if-changed=../core/src");
    println!("cargo:rerun-if-env-changed=FZPACK_SKIP_HDF5_PLUGIN");
    // The output lives outside OUT_DIR: rerun when it is gone (a missing file counts as changed).
    println!("cargo:rerun-if-changed=fzpack/_plugins/libfzpack_hdf5.so");
    if env::var_os("FZPACK_SKIP_HDF5_PLUGIN").is_some_and(|v| !v.is_empty() && v != "0") {
        return Ok(());
    }
    let here = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR")?);
    let manifest = here.join("../hdf5/Cargo.toml");
    let target_dir = here.join("target/hdf5-plugin");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--release")
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir);
    // The outer build's flags and target are for the Python extension, not the plugin.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status()?;
    if !status.success() {
        return Err(format!(
            "building the HDF5 plugin ({}) failed: {status}",
            manifest.display()
        )
        .into());
    }
    let built = target_dir.join("release/libfzpack_hdf5.so");
    let dest_dir = here.join("fzpack/_plugins");
    fs::create_dir_all(&dest_dir)?;
    let dest = dest_dir.join("libfzpack_hdf5.so");
    // Write under a temporary name first: a running HDF5 process may have the old one mapped.
    let tmp = dest_dir.join(".libfzpack_hdf5.so.tmp");
    fs::copy(&built, &tmp)?;
    // An old mtime: cargo compares the rerun-if-changed file above with this script's last
    // run, and a fresh mtime would make every later build rerun it (and rebuild the crate).
    fs::File::options()
        .write(true)
        .open(&tmp)?
        .set_modified(UNIX_EPOCH + Duration::from_secs(1))?;
    fs::rename(&tmp, &dest)?;
    Ok(())
}
