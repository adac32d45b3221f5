//! RV32 F code the compiler does not emit: the f32 fused multiply-add (`fmadd.s`).
//!
//! `f32::mul_add` is not in `core` and LLVM fuses no `a * b + c`. Unlike Arm's FPv4-SP
//! (`arch::arm`), RV32's `freg` inline-asm class is available wherever the target has F, so
//! the one instruction is inline assembly and the loop around it stays in Rust
//! (`bits::Fused32::run_with`). Compiled only where the build script names an f32-only FPU on
//! RV32 (`fzpack_f32_fpu`: F without D).

/// `RN32(a·b + c)` with one rounding: `fmadd.s` with its static rounding mode set to round to
/// nearest, ties to even (whatever the dynamic mode in `frm`).
#[inline(always)]
pub(crate) fn fma32(a: f32, b: f32, c: f32) -> f32 {
    let r: f32;
    // One F instruction on registers (the build script names F on this target).
    // SAFETY: it touches no memory and no stack, and its rounding mode is static.
    unsafe {
        core::arch::asm!(
            "fmadd.s {r}, {a}, {b}, {c}, rne",
            r = lateout(freg) r,
            a = in(freg) a,
            b = in(freg) b,
            c = in(freg) c,
            options(pure, nomem, nostack),
        );
    }
    r
}
