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
/// if all were). `k` is `[hi, a, b]`. Uses `r0`–`r3` and `s0`–`s15` (caller-saved) only.
///
/// Four values a step, with one test for the four: `t = Σ (y2 − y1)·x` is 0 exactly when
/// every `y1 == y2` ([`crate::bits::Fused32`]: each term is 0 or a positive normal f32, so the
/// sum is 0 or positive). A step whose sum is not 0 is redone one value at a time, which stops
/// at its undecided value. The values after the last whole step go one at a time too.
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
        "lsrs r2, r1, #2",      // steps of four
        "beq 3f",
        // Four values a step: x in s4–s7, y1 in s8–s11, y2 (then y2 − y1) in s12–s15.
        "1:",
        "vldmia r0, {{s4-s7}}",
        "vcvt.f32.s32 s4, s4",
        "vcvt.f32.s32 s5, s5",
        "vcvt.f32.s32 s6, s6",
        "vcvt.f32.s32 s7, s7",
        "vmul.f32 s8, s4, s2",
        "vmul.f32 s12, s4, s3",
        "vmul.f32 s9, s5, s2",
        "vmul.f32 s13, s5, s3",
        "vmul.f32 s10, s6, s2",
        "vmul.f32 s14, s6, s3",
        "vmul.f32 s11, s7, s2",
        "vmul.f32 s15, s7, s3",
        "vfma.f32 s8, s4, s1",
        "vfma.f32 s12, s4, s1",
        "vfma.f32 s9, s5, s1",
        "vfma.f32 s13, s5, s1",
        "vfma.f32 s10, s6, s1",
        "vfma.f32 s14, s6, s1",
        "vfma.f32 s11, s7, s1",
        "vfma.f32 s15, s7, s1",
        "vsub.f32 s12, s12, s8",
        "vsub.f32 s13, s13, s9",
        "vsub.f32 s14, s14, s10",
        "vsub.f32 s15, s15, s11",
        "vmul.f32 s0, s12, s4",
        "vfma.f32 s0, s13, s5",
        "vfma.f32 s0, s14, s6",
        "vfma.f32 s0, s15, s7",
        "vcmp.f32 s0, #0",
        "vmrs APSR_nzcv, fpscr",
        "bne 2f",
        "vstmia r0!, {{s8-s11}}",
        "subs r2, #1",
        "bne 1b",
        // The last `n mod 4` values, one at a time.
        "3:",
        "ands r2, r1, #3",
        "beq 5f",
        "4:",
        "vldr s4, [r0]",
        "vcvt.f32.s32 s4, s4",
        bracket!("s4", "s8", "s9"),
        "bne 5f",
        "vstr s8, [r0]",
        "adds r0, #4",
        "subs r2, #1",
        "bne 4b",
        "5:",
        "subs r0, r0, r3",
        "lsrs r0, r0, #2",
        "bx lr",
        // A step with an undecided value: its four one at a time, up to that value.
        "2:",
        "movs r2, #4",
        "b 4b",
    )
}
