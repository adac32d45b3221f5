//! Shared helpers of the cross-crate test suite (`fzpack-tests`).

pub mod alloc_guard;
pub mod checks;
pub mod golden;
pub mod ops_checks;
pub mod pernix_model;
pub mod vectors;
