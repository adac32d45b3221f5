//! Cuts the committed compact golden subset (`tests/golden/pernix/subset_*.bin`) out of the
//! full upstream vector set. Run only after the full set matches:
//! `cargo run -p fzpack-tests --bin make_pernix_subset [-- --stats]`.
//!
//! Selection: every bit width × block size × sign mode × element type is covered. Block sizes
//! 64 and 128 keep random kinds (uniform, over_range, nonfinite, multi_block) with their
//! inputs, and the failing all_denormal cases; for 256, 512 and 1024 the uniform records keep
//! their compressed bytes and decoded hashes for every bit width and sign (decompression
//! checks) but their inputs only for N >= 16 with sign_values (compression checks), because
//! the inputs of small widths in big blocks would make the subset megabytes.

use fzpack_tests::vectors::{self, Record};
use std::collections::BTreeMap;

fn keep(r: &Record) -> bool {
    let sign = r.sign_values;
    match (r.block_size, r.kind) {
        (64, 1 | 7) => sign,
        (64, 5) => !sign,
        (64, 9 | 10) => matches!(r.bits, 3 | 11 | 17 | 24),
        (128, 1) => sign,
        (128, 5) => !sign,
        (_, 1) => r.block_size >= 256,
        _ => false,
    }
}

/// Drops the input of big-block records that only serve the decompression check.
fn trim(mut r: Record) -> Record {
    if r.block_size >= 256 && !(r.bits >= 16 && r.sign_values) {
        r.input.clear();
        r.compress_status = 99;
    }
    r
}

fn main() {
    let stats = std::env::args().any(|a| a == "--stats");
    let dir = vectors::upstream_dir().expect("no upstream vector directory");
    let out_dir = vectors::subset_dir();
    std::fs::create_dir_all(&out_dir).unwrap();
    for (src, dst) in [
        ("vectors_f32.bin", "subset_f32.bin"),
        ("vectors_f64.bin", "subset_f64.bin"),
    ] {
        let recs = vectors::parse(&std::fs::read(dir.join(src)).unwrap()).unwrap();
        if stats {
            let mut kinds: BTreeMap<(u16, u8), usize> = BTreeMap::new();
            for r in &recs {
                *kinds.entry((r.block_size, r.kind)).or_default() += 1;
            }
            println!("{src}: (block size, kind) -> records: {kinds:?}");
        }
        let kept: Vec<Record> = recs.into_iter().filter(keep).map(trim).collect();
        let mut cover = std::collections::BTreeSet::new();
        for r in &kept {
            cover.insert((r.bits, r.block_size, r.sign_values));
        }
        assert_eq!(
            cover.len(),
            24 * 5 * 2,
            "{src}: subset does not cover every N x BS x sign"
        );
        let bytes = vectors::write_compact(&kept);
        std::fs::write(out_dir.join(dst), &bytes).unwrap();
        println!("{dst}: {} records, {} bytes", kept.len(), bytes.len());
    }
}
