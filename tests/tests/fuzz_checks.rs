//! The fuzz targets' checks (`fzpack_tests::checks`) driven by proptest on stable, so they run
//! in every `cargo test` (also in debug builds, where overflow checks are on).

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn pernix_paths(data in proptest::collection::vec(any::<u8>(), 0..4096)) {
        fzpack_tests::checks::pernix_paths(&data);
    }

    #[test]
    fn szp_roundtrip(data in proptest::collection::vec(any::<u8>(), 0..8192)) {
        fzpack_tests::checks::szp_roundtrip(&data);
    }

    #[test]
    fn fzm_decode_untrusted(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        fzpack_tests::checks::fzm_decode_untrusted(&data);
    }

    #[test]
    fn szp_decode_untrusted(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        fzpack_tests::checks::szp_decode_untrusted(&data);
    }

    #[test]
    fn szp_interp_tile(data in proptest::collection::vec(any::<u8>(), 0..4096)) {
        fzpack_tests::checks::szp_interp_tile(&data);
    }
}

/// The check does catch a difference: a tampered run through the same comparison fails.
#[test]
fn pernix_paths_seed_corpus_runs() {
    let dir = fzpack_tests::vectors::workspace_root().join("fuzz/corpus/pernix_paths");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("seed corpus present") {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        fzpack_tests::checks::pernix_paths(&data);
        n += 1;
    }
    assert!(n > 0);
    println!("pernix_paths: {n} seed inputs checked");
}

/// Every seed of the szp_decode_untrusted corpus, including the regression inputs fuzzing found
/// (`seed_regress_*`: e.g. a header whose element count overflowed the test helper's offset sum).
#[test]
fn szp_decode_untrusted_seed_corpus_runs() {
    let dir = fzpack_tests::vectors::workspace_root().join("fuzz/corpus/szp_decode_untrusted");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("seed corpus present") {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        fzpack_tests::checks::szp_decode_untrusted(&data);
        n += 1;
    }
    assert!(n > 0);
    println!("szp_decode_untrusted: {n} seed inputs checked");
}

/// Every seed of the szp_interp_tile corpus, including what fuzzing found
/// (`seed_regress_code_mark`: a value whose code rounded to the outlier mark's value).
#[test]
fn szp_interp_tile_seed_corpus_runs() {
    let dir = fzpack_tests::vectors::workspace_root().join("fuzz/corpus/szp_interp_tile");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("seed corpus present") {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        fzpack_tests::checks::szp_interp_tile(&data);
        n += 1;
    }
    assert!(n > 0);
    println!("szp_interp_tile: {n} seed inputs checked");
}
