//! Archive detection and validation for `fzpack info` and `decompress` (and fuzzed:
//! `fuzz/fuzz_targets/cli_container.rs`): the facade's [`fzpack::archive`], which the CLI
//! uses as it is.

pub use fzpack::archive::{
    ArchiveKind, Summary, check, decode_all, describe, detect, foreign_magic, fzm_len,
};
