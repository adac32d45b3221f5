// Shared by `build.rs` (through `include!`) and the core's tests: keep it free of crate paths.

/// Whether the target that Cargo names `target` (its `TARGET`, e.g. `thumbv7em-none-eabihf`)
/// has an FPU for f32 and none for f64: Cortex-M4F/M7 (`thumbv7em-*-eabihf`, FPv4-SP),
/// Cortex-M33/M35P (`thumbv8m.main-*-eabihf`, FPv5-SP) and RV32 with F but not D (e.g.
/// `riscv32imafc-*`; `g` includes D). Read from the target's name because a stable rustc
/// does not set `cfg(target_feature)` for these architectures' FPU features (`fpregs`, `vfp2`,
/// `f`, `d` are unstable there): the crate's `cfg!(target_feature = ...)` test alone would
/// take the soft-float f64 paths on every stable toolchain. Targets with an f64 FPU
/// (`armv7r-none-eabihf`, `thumbv7a-none-eabihf`: VFPv3-D16) are not in the list.
#[allow(dead_code)]
fn f32_only_fpu_target(target: &str) -> bool {
    let arch = target.split('-').next().unwrap_or("");
    if let Some(ext) = arch.strip_prefix("riscv32") {
        // The standard extensions' letters after the base ISA, up to any `_z...` extension.
        let std_ext = ext.split('_').next().unwrap_or("");
        return std_ext.contains('f') && !std_ext.contains('d') && !std_ext.contains('g');
    }
    target.ends_with("-eabihf") && (arch == "thumbv7em" || arch == "thumbv8m.main")
}

#[cfg(test)]
mod tests {
    use super::f32_only_fpu_target as f32_only;

    #[test]
    fn f32_only_fpu_targets_are_named_by_their_target() {
        for t in [
            "thumbv7em-none-eabihf",
            "thumbv7em-nuttx-eabihf",
            "thumbv8m.main-none-eabihf",
            "riscv32imafc-unknown-none-elf",
            "riscv32imafc-esp-espidf",
            "riscv32if-custom-none-elf",
        ] {
            assert!(f32_only(t), "{t}");
        }
        for t in [
            // no FPU
            "thumbv7em-none-eabi",
            "thumbv7m-none-eabi",
            "thumbv6m-none-eabi",
            "thumbv8m.main-none-eabi",
            "riscv32imac-unknown-none-elf",
            "riscv32imc-unknown-none-elf",
            "riscv32e-unknown-none-elf",
            // f64 in hardware
            "armv7r-none-eabihf",
            "thumbv7a-none-eabihf",
            "armv7-unknown-linux-gnueabihf",
            "riscv32gc-unknown-linux-gnu",
            "riscv32imafdc-unknown-none-elf",
            "x86_64-unknown-linux-gnu",
            "aarch64-unknown-linux-gnu",
            "",
        ] {
            assert!(!f32_only(t), "{t}");
        }
    }
}
