//! The AVX-512 VBMI leaf: PERNIX kernels, the SZp kernels and the combines of the
//! compressed-domain operations (hand-written).

pub(crate) mod ops;
mod pernix;
pub(crate) mod szp;

pub(super) use pernix::{compress, decompress};
pub(crate) use pernix::{pack_tables, pack16};
