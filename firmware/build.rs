//! Linker script (and, for RV32, the ld emulation) for the `instrument` image.

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-env=FW_TARGET={target}");
    let script = if target.starts_with("thumbv7em") {
        "mps2.ld"
    } else if target.starts_with("riscv32") {
        println!("cargo:rustc-link-arg-bins=-melf32lriscv");
        "riscv-virt.ld"
    } else {
        return;
    };
    println!("cargo:rerun-if-changed=ld/{script}");
    println!("cargo:rustc-link-arg-bins=-T{dir}/ld/{script}");
}
