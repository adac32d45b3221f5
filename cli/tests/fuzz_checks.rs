//! The fuzz targets `pnx_stream_decode` and `cli_container` (`fzpack_cli::checks`) on stable:
//! their seed corpora and a few thousand deterministic mutations of them (bit flips,
//! truncations, byte overwrites, appended bytes), so every `cargo test` runs the properties.

use std::path::Path;

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut v: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .expect("seed corpus present")
        .map(|e| e.unwrap().path())
        // the committed seeds (fuzz/.gitignore keeps only seed*), not a local fuzzer's finds
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("seed"))
        })
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    v.sort();
    assert!(!v.is_empty());
    v
}

/// `rounds` mutations of every seed, from a fixed xorshift stream.
fn mutate_all(seeds: &[Vec<u8>], rounds: usize, mut check: impl FnMut(&[u8])) -> usize {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut n = 0;
    for seed in seeds {
        check(seed);
        check(&seed[..seed.len() / 2]);
        check(&[]);
        for _ in 0..rounds {
            let mut b = seed.clone();
            match next() % 4 {
                0 => {
                    let bit = (next() % (b.len() as u64 * 8)) as usize;
                    b[bit / 8] ^= 1 << (bit % 8);
                }
                1 => b.truncate((next() % b.len() as u64) as usize),
                2 => {
                    let i = (next() % b.len() as u64) as usize;
                    b[i] = next() as u8;
                }
                _ => b.extend_from_slice(&next().to_le_bytes()[..(next() % 8) as usize + 1]),
            }
            check(&b);
            n += 1;
        }
    }
    n
}

/// The seeds of `target` and 500 mutations of each through `check`; prints the count.
fn run_target(target: &str, check: impl FnMut(&[u8])) {
    let seeds = corpus(target);
    let n = mutate_all(&seeds, 500, check);
    println!("{target}: {} seeds, {n} mutations checked", seeds.len());
}

#[test]
fn pnx_stream_decode_properties() {
    run_target("pnx_stream_decode", fzpack_cli::checks::pnx_stream);
}

#[test]
fn cli_container_properties() {
    run_target("cli_container", fzpack_cli::checks::container);
}
