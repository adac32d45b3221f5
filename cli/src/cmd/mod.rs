//! One module per subcommand family; `main.rs` parses the command line and calls their `run`
//! (`ops` holds `add`, `sum`, `scale` and `stats`).

pub mod compress;
pub mod decompress;
pub mod info;
pub mod ops;
pub mod verify;
