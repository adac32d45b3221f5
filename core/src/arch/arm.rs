//! Cortex-M FPU code that the compiler does not emit on a stable toolchain.
//!
//! The f32 fused multiply-add (`VFMA.F32`) is in every FPU of the targets the build script
//! names on Arm (`fzpack_f32_fpu`: FPv4-SP of Cortex-M4F/M7, FPv5 of Cortex-M33/M35P), but
//! `f32::mul_add` needs `std`, LLVM fuses no `a * b + c`, and a stable rustc of this
//! project's versions refuses `asm!` operands in single-precision registers on these targets
//! (its `sreg` class requires the `vfp2` feature, which FPv4-SP lacks). A naked function
//! takes its operands through the ABI instead, and works on a whole run of values.

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
        // Two values a step: x (s6, s7) exact (|q| <= 2^24); y1 = RN32(x·hi + RN32(x·a)),
        // y2 = RN32(x·hi + RN32(x·b)); stop before the first value whose two differ.
        "1:",
        "vldmia r0, {{s6-s7}}",
        "vcvt.f32.s32 s6, s6",
        "vcvt.f32.s32 s7, s7",
        "vmul.f32 s8, s6, s2",
        "vmul.f32 s9, s6, s3",
        "vfma.f32 s8, s6, s1",
        "vfma.f32 s9, s6, s1",
        "vcmp.f32 s8, s9",
        "vmrs APSR_nzcv, fpscr",
        "bne 5f",
        "vstr s8, [r0]",
        "vmul.f32 s10, s7, s2",
        "vmul.f32 s11, s7, s3",
        "vfma.f32 s10, s7, s1",
        "vfma.f32 s11, s7, s1",
        "vcmp.f32 s10, s11",
        "vmrs APSR_nzcv, fpscr",
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
        "vmul.f32 s8, s6, s2",
        "vmul.f32 s9, s6, s3",
        "vfma.f32 s8, s6, s1",
        "vfma.f32 s9, s6, s1",
        "vcmp.f32 s8, s9",
        "vmrs APSR_nzcv, fpscr",
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
