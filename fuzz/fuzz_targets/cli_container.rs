//! The CLI's container detection and validation (`fzpack info`/`decompress`) on untrusted
//! bytes: see `fzpack_cli::checks::container`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fzpack_cli::checks::container(data));
