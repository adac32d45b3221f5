//! The AVX-512 VBMI leaf: PERNIX kernels and the SZp kernels (hand-written).

mod pernix;
pub(crate) mod szp;

pub(super) use pernix::{compress_f32, compress_f64, decompress_f32, decompress_f64};
pub(crate) use pernix::{pack_tables, pack16};
