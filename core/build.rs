//! Sets `cfg(fzpack_f32_fpu)` on targets with an f32 FPU and no f64 one (see
//! `src/target_fpu.rs`): there the SZp quantizer and reconstruction run in f32 and integers
//! instead of soft-float f64, with the same bytes.

include!("src/target_fpu.rs");

fn main() {
    println!("cargo:rustc-check-cfg=cfg(fzpack_f32_fpu)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/target_fpu.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    if f32_only_fpu_target(&target) {
        println!("cargo:rustc-cfg=fzpack_f32_fpu");
    }
}
