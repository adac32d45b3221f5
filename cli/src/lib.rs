//! The library part of the `fzpack` command-line tool: container detection and validation
//! (`container`), shared by the binary and the fuzz target `cli_container`.

pub mod container;
