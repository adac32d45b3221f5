//! Kernels that run everywhere: the SZp reference (a direct reading of the spec) and the
//! portable, vectorization-friendly SZp kernels (which LLVM auto-vectorizes for the target's
//! baseline, and which the x86_64 AVX2 leaf compiles under its target features).

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) mod pernix;
pub(crate) mod szp;

/// The SZp reference kernels (the `Scalar` path): the spec's steps one value at a time, the
/// bytes every other kernel must reproduce. Always available.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Reference(());

impl Reference {
    /// The token (the reference needs no CPU feature).
    pub const fn new() -> Self {
        Reference(())
    }
}

/// The portable SZp kernels (branch-free block passes written for auto-vectorization).
/// Always available.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Portable(());

impl Portable {
    /// The token (the portable kernels need no CPU feature).
    pub const fn new() -> Self {
        Portable(())
    }
}
