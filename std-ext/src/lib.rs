//! # fzpack
//!
//! The std facade of fzpack: everything of [`fzpack_core`] re-exported, plus (as they land)
//! runtime dispatch, `Vec`/`io` helpers, the rayon multi-block driver and the `fzpack` CLI.

pub use fzpack_core::*;
