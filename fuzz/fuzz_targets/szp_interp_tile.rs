//! See `fzpack_tests::checks::szp_interp_tile`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fzpack_tests::checks::szp_interp_tile(data));
