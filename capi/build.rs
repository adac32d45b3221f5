//! Gives the shared library the SONAME `libpernix.so.0` on ELF targets, as upstream PERNIX's
//! CMake build does, so programs linked against it record `libpernix.so.0` and keep working
//! across compatible updates (`capi/install.sh` installs the matching symlinks).

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly" | "illumos"
    ) {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpernix.so.0");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
