//! CPU feature detection and the SIMD kernels.
//!
//! Detection works without `std`: on x86_64 it uses `cpuid` and `xgetbv` through
//! [`core::arch`] with exactly the rules of the PERNIX specification (§8): AVX needs OSXSAVE and
//! the OS saving XMM+YMM state; AVX-512 additionally needs the OS saving opmask/ZMM state
//! (XCR0 bits 5, 6, 7). On aarch64 NEON is architectural; SVE2 is taken from the compile-time
//! target features (there is no portable user-space way to ask without an OS).
//!
//! The result is cached once in an atomic word — the only global state of the crate.
//!
//! Under Miri (`cfg(miri)`) detection reports no features: Miri cannot execute `cpuid`,
//! `xgetbv` or the `core::arch` SIMD intrinsics, so every proof token is unavailable and `Auto`
//! resolves to the portable paths, which are the code Miri checks (`scripts/miri.sh`).

use core::sync::atomic::{AtomicU32, Ordering};

pub mod generic;
pub(crate) mod szp;

#[cfg(target_arch = "x86_64")]
pub mod x86_64;

#[cfg(target_arch = "aarch64")]
pub mod aarch64;

#[cfg(all(fzpack_f32_fpu, target_arch = "arm"))]
pub(crate) mod arm;
#[cfg(all(fzpack_f32_fpu, target_arch = "riscv32"))]
pub(crate) mod riscv;

/// A hint for streaming loops outside the kernels (the `fzpack` crate's `.pnx` frame
/// scaling): starts loading the cache line a fixed distance (2 KiB) past `p` into the cache.
/// Any address is fine: a prefetch never faults and reads nothing the program sees. A no-op
/// off x86_64. See `arch::x86_64::PREFETCH_IN` for why the kernels prefetch at all.
#[inline(always)]
pub fn prefetch_ahead<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    x86_64::prefetch_in(p);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A set of CPU features relevant to fzpack's kernels.
///
/// A `CpuFeatures` value obtained from [`CpuFeatures::detect`] describes the running CPU; the
/// SIMD proof tokens are constructed from it, so a token can only exist where its ISA works.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CpuFeatures(u32);

impl CpuFeatures {
    /// AVX2 (with OS YMM support).
    pub const AVX2: u32 = 1 << 0;
    /// BMI2 (`pdep`/`pext`).
    pub const BMI2: u32 = 1 << 1;
    /// AVX-512 Foundation (with OS ZMM support).
    pub const AVX512F: u32 = 1 << 2;
    /// AVX-512 DQ.
    pub const AVX512DQ: u32 = 1 << 3;
    /// AVX-512 BW.
    pub const AVX512BW: u32 = 1 << 4;
    /// AVX-512 VL.
    pub const AVX512VL: u32 = 1 << 5;
    /// AVX-512 VBMI (`vpermb`, `vpmultishiftqb`).
    pub const AVX512VBMI: u32 = 1 << 6;
    /// ARM NEON (Advanced SIMD).
    pub const NEON: u32 = 1 << 7;
    /// ARM SVE2.
    pub const SVE2: u32 = 1 << 8;
    /// Bit set in the cache once detection has run.
    const DETECTED: u32 = 1 << 31;

    /// The empty set: what the portable scalar paths need.
    pub const fn none() -> Self {
        Self(0)
    }

    /// The features of the running CPU, detected once and cached.
    pub fn detect() -> Self {
        static CACHE: AtomicU32 = AtomicU32::new(0);
        let cached = CACHE.load(Ordering::Relaxed);
        if cached & Self::DETECTED != 0 {
            return Self(cached & !Self::DETECTED);
        }
        let bits = detect_uncached();
        CACHE.store(bits | Self::DETECTED, Ordering::Relaxed);
        Self(bits)
    }

    /// The raw feature bits (the `CpuFeatures::*` constants).
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether every feature bit in `mask` is present.
    pub const fn has(self, mask: u32) -> bool {
        self.0 & mask == mask
    }

    /// This set with the features in `mask` removed (for tests that force a slower path).
    pub const fn without(self, mask: u32) -> Self {
        Self(self.0 & !mask)
    }

    /// AVX2 usable.
    pub const fn avx2(self) -> bool {
        self.has(Self::AVX2)
    }

    /// The upstream BMI2 backend requirement: AVX2 **and** BMI2.
    pub const fn avx2_bmi2(self) -> bool {
        self.has(Self::AVX2 | Self::BMI2)
    }

    /// NEON (Advanced SIMD) usable: architectural on aarch64, never set elsewhere.
    pub const fn neon(self) -> bool {
        self.has(Self::NEON)
    }

    /// The upstream AVX-512 VBMI backend requirement: F, DQ, BW, VL and VBMI.
    pub const fn avx512_vbmi(self) -> bool {
        self.has(
            Self::AVX512F | Self::AVX512DQ | Self::AVX512BW | Self::AVX512VL | Self::AVX512VBMI,
        )
    }

    /// What fzpack's AVX-512 VBMI PERNIX backend needs: [`CpuFeatures::avx512_vbmi`] and AVX2,
    /// which every AVX-512 CPU implements. The backend runs the AVX2 fused frame loop for
    /// `.pnx` streams (`Dispatcher::decompress_frames`), so its token must prove both.
    pub const fn avx512_vbmi_avx2(self) -> bool {
        self.avx512_vbmi() && self.avx2()
    }
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
fn detect_uncached() -> u32 {
    use core::arch::x86_64::CpuidResult;

    // `cpuid` exists on every x86_64 CPU and every leaf may be queried (unknown leaves return
    // the highest basic leaf's values), so the intrinsics are safe to call; recent Rust marks
    // them safe, and the `unsafe` block keeps older compilers (the MSRV) building.
    #[allow(unused_unsafe)]
    fn cpuid(leaf: u32, sub: u32) -> CpuidResult {
        // SAFETY: see above: `cpuid` is available and defined for every leaf on x86_64.
        unsafe { core::arch::x86_64::__cpuid_count(leaf, sub) }
    }
    let max_leaf = cpuid(0, 0).eax;
    if max_leaf < 1 {
        return 0;
    }
    let leaf1 = cpuid(1, 0);
    let osxsave = leaf1.ecx & (1 << 27) != 0;
    let avx = leaf1.ecx & (1 << 28) != 0;
    if !(osxsave && avx) {
        return 0;
    }
    // SAFETY: OSXSAVE is set, so the OS has enabled `xgetbv`, and XCR0 (index 0) exists.
    let xcr0 = unsafe { xgetbv0() };
    let ymm = xcr0 & 0b110 == 0b110;
    let zmm = xcr0 & 0b1110_0000 == 0b1110_0000;
    if !ymm || max_leaf < 7 {
        return 0;
    }
    let leaf7 = cpuid(7, 0);
    let mut bits = 0;
    if leaf7.ebx & (1 << 5) != 0 {
        bits |= CpuFeatures::AVX2;
    }
    if leaf7.ebx & (1 << 8) != 0 {
        bits |= CpuFeatures::BMI2;
    }
    if zmm {
        for (reg, bit, flag) in [
            (leaf7.ebx, 16, CpuFeatures::AVX512F),
            (leaf7.ebx, 29, CpuFeatures::AVX512DQ),
            (leaf7.ebx, 30, CpuFeatures::AVX512BW),
            (leaf7.ebx, 31, CpuFeatures::AVX512VL),
            (leaf7.ecx, 1, CpuFeatures::AVX512VBMI),
        ] {
            if reg & (1 << bit) != 0 {
                bits |= flag;
            }
        }
    }
    bits
}

/// Reads XCR0.
///
/// # Safety
/// The caller must have checked `cpuid(1).ecx` bit 27 (OSXSAVE).
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "xsave")]
unsafe fn xgetbv0() -> u64 {
    // SAFETY: the caller guarantees OSXSAVE, so `xgetbv` with ECX = 0 cannot fault.
    unsafe { core::arch::x86_64::_xgetbv(0) }
}

#[cfg(all(target_arch = "aarch64", not(miri)))]
fn detect_uncached() -> u32 {
    let mut bits = 0;
    if cfg!(target_feature = "neon") {
        bits |= CpuFeatures::NEON;
    }
    if cfg!(target_feature = "sve2") {
        bits |= CpuFeatures::SVE2;
    }
    bits
}

/// No SIMD features: targets without kernels, and Miri (which runs the portable paths only).
#[cfg(any(miri, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
fn detect_uncached() -> u32 {
    0
}

#[cfg(test)]
mod tests {
    use super::CpuFeatures;

    #[test]
    fn detection_is_cached_and_consistent() {
        let a = CpuFeatures::detect();
        let b = CpuFeatures::detect();
        assert_eq!(a, b);
        // The upstream rule: the VBMI backend needs all five AVX-512 bits.
        if a.avx512_vbmi() {
            assert!(a.has(CpuFeatures::AVX512F | CpuFeatures::AVX512BW));
        }
        assert!(!a.without(CpuFeatures::AVX2).avx2());
        assert!(!a.without(CpuFeatures::NEON).neon());
        // NEON is architectural on aarch64 (every aarch64 Rust target enables it); under Miri
        // detection reports nothing, so that only the portable paths run.
        assert_eq!(a.neon(), cfg!(all(target_arch = "aarch64", not(miri))));
        if cfg!(miri) {
            assert_eq!(a, CpuFeatures::none());
        }
    }
}
