//! The library part of the `fzpack` command-line tool: container detection and validation
//! (`container`), shared by the binary and the fuzz target `cli_container`, and the fuzzed
//! properties of the CLI's readers (`checks`).

pub mod checks;
pub mod container;
