//! Conformance with the C PERNIX library: replays golden vectors through the scalar path.
//!
//! Reads `$PERNIX_VECTORS_DIR` if set, else `../shared/vectors/pernix`; when neither exists it
//! says so and checks only the committed compact subset (`tests/golden/pernix`), which always
//! runs. Ends with `pernix vectors: N records checked, M mismatches`.

use fzpack_core::pernix::{Backend, Dispatcher};
use fzpack_tests::vectors::{self, Record};
use std::path::Path;

fn load(dir: &Path, names: &[&str]) -> Vec<(String, Vec<Record>)> {
    let mut sets = Vec::new();
    for name in names {
        let path = dir.join(name);
        match std::fs::read(&path) {
            Ok(data) => {
                let recs =
                    vectors::parse(&data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                sets.push((path.display().to_string(), recs));
            }
            Err(e) => println!("pernix vectors: {} not read ({e})", path.display()),
        }
    }
    sets
}

fn replay_all(sets: &[(String, Vec<Record>)], label: &str) -> (usize, usize) {
    let d = Dispatcher::new(Backend::Fallback).expect("the fallback backend always exists");
    let (mut checked, mut mismatches) = (0, 0);
    for (path, recs) in sets {
        for rec in recs {
            let bad = vectors::replay(rec, &d);
            checked += 1;
            if !bad.is_empty() {
                mismatches += 1;
                if mismatches <= 20 {
                    for b in bad {
                        println!("{label} {path}: {b}");
                    }
                }
            }
        }
    }
    (checked, mismatches)
}

#[test]
fn upstream_vectors_match() {
    let Some(dir) = vectors::upstream_dir() else {
        println!(
            "pernix vectors: no upstream vector directory (set PERNIX_VECTORS_DIR or provide \
             ../shared/vectors/pernix); only the committed subset is checked"
        );
        return;
    };
    let sets = load(&dir, &["vectors_f32.bin", "vectors_f64.bin"]);
    assert!(!sets.is_empty(), "{} has no vector files", dir.display());
    let (n, m) = replay_all(&sets, "upstream");
    println!("pernix vectors: {n} records checked, {m} mismatches");
    assert!(n > 0);
    assert_eq!(m, 0, "{m} of {n} upstream records differ");
}

#[test]
fn committed_subset_matches() {
    let sets = load(
        &vectors::subset_dir(),
        &["subset_f32.bin", "subset_f64.bin"],
    );
    assert_eq!(sets.len(), 2, "the committed golden subset is missing");
    let (n, m) = replay_all(&sets, "subset");
    println!("pernix vectors (committed subset): {n} records checked, {m} mismatches");
    assert!(n >= 500, "only {n} subset records");
    assert_eq!(m, 0, "{m} of {n} subset records differ");
}

/// Negative control: the replay does notice a wrong byte, a wrong decoded value and a wrong
/// status, so a green run above means something.
#[test]
fn replay_detects_tampering() {
    let sets = load(&vectors::subset_dir(), &["subset_f32.bin"]);
    let d = Dispatcher::new(Backend::Fallback).unwrap();
    let rec = sets[0]
        .1
        .iter()
        .find(|r| r.compress_status == 0 && r.decompress_status == 0)
        .expect("an OK record");
    assert!(vectors::replay(rec, &d).is_empty());
    let mut bad = rec.clone();
    bad.compressed[0] ^= 1;
    assert!(
        !vectors::replay(&bad, &d).is_empty(),
        "flipped compressed bit not seen"
    );
    let mut bad = rec.clone();
    bad.decoded = vectors::Decoded::Hash(0);
    assert!(
        !vectors::replay(&bad, &d).is_empty(),
        "wrong decoded hash not seen"
    );
    let mut bad = rec.clone();
    bad.compress_status = -1;
    assert!(
        !vectors::replay(&bad, &d).is_empty(),
        "wrong status not seen"
    );
}
