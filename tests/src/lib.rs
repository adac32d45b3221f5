//! Shared helpers of the cross-crate test suite (`fzpack-tests`).

pub mod vectors;
