//! The AVX-512 VBMI leaf: PERNIX kernels and the SZp kernels (hand-written).

pub(crate) mod ops;
mod pernix;
pub(crate) mod szp;

pub(super) use pernix::{compress, decompress};
pub(crate) use pernix::{pack_tables, pack16};
