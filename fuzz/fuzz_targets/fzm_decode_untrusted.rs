//! See `fzpack_tests::checks::fzm_decode_untrusted`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fzpack_tests::checks::fzm_decode_untrusted(data));
