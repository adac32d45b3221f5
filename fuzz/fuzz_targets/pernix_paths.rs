//! Every PERNIX backend equals the scalar path on arbitrary floats, widths, sizes and scales.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fzpack_tests::checks::pernix_paths(data));
