//! The AVX2 leaf: PERNIX kernels (hand-written) and the SZp kernels (the portable kernels
//! compiled under AVX2 + BMI2).

mod pernix;
pub(crate) mod szp;

pub(super) use pernix::{compress, decompress, decompress_frames};
