//! The `.pnx` stream reader on untrusted bytes: see `fzpack_cli::checks::pnx_stream`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fzpack_cli::checks::pnx_stream(data));
