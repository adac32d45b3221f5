//! Cortex-M FPU code that the compiler does not emit on a stable toolchain.
//!
//! The f32 fused multiply-add (`VFMA.F32`) is in every FPU of the targets the build script
//! names on Arm (`fzpack_f32_fpu`: FPv4-SP of Cortex-M4F/M7, FPv5 of Cortex-M33/M35P), but
//! `f32::mul_add` is not in `core`, LLVM fuses no `a * b + c`, and a stable rustc of this
//! project's versions refuses `asm!` operands in single-precision registers on these targets
//! (its `sreg` class requires the `vfp2` feature, which FPv4-SP lacks). A naked function
//! takes its operands through the ABI instead, and works on a whole run of values.

/// The method on one value: `x` (exact: `|q| <= 2^24`) in `$x`, `y1 = RN32(x·hi + RN32(x·a))`
/// into `$y1`, `y2 = RN32(x·hi + RN32(x·b))` into `$y2` (`hi`, `a`, `b` in `s1`–`s3`), then
/// the flags of `y1 == y2` (`Z` set where the value is decided).
macro_rules! bracket {
    ($x:literal, $y1:literal, $y2:literal) => {
        concat!(
            "vmul.f32 ",
            $y1,
            ", ",
            $x,
            ", s2\n",
            "vmul.f32 ",
            $y2,
            ", ",
            $x,
            ", s3\n",
            "vfma.f32 ",
            $y1,
            ", ",
            $x,
            ", s1\n",
            "vfma.f32 ",
            $y2,
            ", ",
            $x,
            ", s1\n",
            "vcmp.f32 ",
            $y1,
            ", ",
            $y2,
            "\n",
            "vmrs APSR_nzcv, fpscr"
        )
    };
}

/// [`crate::bits::Fused32`]'s method on `n` levels in place: each `p[i]` holds a level's `i32`
/// bits (`|level| <= 2^24`) and is replaced by its reconstruction's `f32` bits, from the
/// first on, until one is undecided (the two FMAs differ); returns how many were replaced (`n`
/// if all were). `k` is `[hi, a, b]`. Uses `r0`–`r3` and `s1`–`s11` (caller-saved) only.
///
/// # Safety
/// `p` must be valid for reads and writes of `n` 4-byte-aligned `u32`s, and `k` for reading
/// three `f32`s.
#[unsafe(naked)]
pub(crate) unsafe extern "C" fn fused_run(p: *mut u32, n: usize, k: *const [f32; 3]) -> usize {
    core::arch::naked_asm!(
        // With LTO the function is assembled as module assembly, without the target's FPU
        // features: name the FPU (FPv4-SP's instructions, which FPv5 also has).
        ".fpu fpv4-sp-d16",
        "mov r3, r0",
        "vldmia r2, {{s1-s3}}", // s1 = hi, s2 = a, s3 = b
        "lsrs r2, r1, #1",      // pairs
        "beq 3f",
        // Two values a step (s6, s7); stop before the first undecided one.
        "1:",
        "vldmia r0, {{s6-s7}}",
        "vcvt.f32.s32 s6, s6",
        "vcvt.f32.s32 s7, s7",
        bracket!("s6", "s8", "s9"),
        "bne 5f",
        "vstr s8, [r0]",
        bracket!("s7", "s10", "s11"),
        "bne 4f",
        "vstr s10, [r0, #4]",
        "adds r0, #8",
        "subs r2, #1",
        "bne 1b",
        // The last value of an odd count.
        "3:",
        "tst r1, #1",
        "beq 5f",
        "vldr s6, [r0]",
        "vcvt.f32.s32 s6, s6",
        bracket!("s6", "s8", "s9"),
        "bne 5f",
        "vstr s8, [r0]",
        "4:",
        "adds r0, #4",
        "5:",
        "subs r0, r0, r3",
        "lsrs r0, r0, #2",
        "bx lr",
    )
}
