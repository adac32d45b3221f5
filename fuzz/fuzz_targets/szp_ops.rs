//! See `fzpack_tests::ops_checks::szp_ops`: compressed-domain ops vs the scalar reference and
//! the float reference, hostile archives included.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fzpack_tests::ops_checks::szp_ops(data));
