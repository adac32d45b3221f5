//! The AVX-512 VBMI leaf: PERNIX kernels and the SZp kernels (hand-written).

mod pernix;
pub(crate) mod szp;

pub(super) use pernix::{compress, decompress};
pub(crate) use pernix::{pack_tables, pack16};
