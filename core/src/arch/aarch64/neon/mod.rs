//! The NEON leaf: PERNIX kernels and the SZp kernels.

pub(super) mod pernix;
pub(crate) mod szp;
