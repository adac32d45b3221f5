//! Golden archives: written once, then reproduced byte for byte by every later build.

use std::path::Path;

/// The golden file `dir/name`, which must equal `bytes` (the archive this build writes);
/// with `FZPACK_BLESS` set in the environment it is first rewritten from `bytes` (a format
/// change: bump the version instead of blessing old names). Panics naming the file when it
/// is missing or differs; returns its bytes.
pub fn check_or_bless(dir: &Path, name: &str, bytes: &[u8]) -> Vec<u8> {
    let path = dir.join(name);
    if std::env::var_os("FZPACK_BLESS").is_some() {
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let want = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (FZPACK_BLESS=1 writes it)", path.display()));
    assert!(want == bytes, "{name}: archive bytes changed");
    want
}

/// The interpolation layout through the core's serial codec (`szp::tiled`), scratch allocated
/// here: what the facade's bytes are checked against.
pub fn tiled_compress<T: fzpack_core::szp::SzpFloat>(
    x: &[T],
    cfg: &fzpack_core::szp::Config,
) -> Result<Vec<u8>, fzpack_core::szp::Error> {
    use fzpack_core::szp::tiled::{self, Scratch};
    let plan = tiled::plan(x, cfg)?;
    let l = tiled::scratch_lens(plan.max_tile_len());
    let z = T::from_f64(0.0);
    let (mut v, mut d, mut o) = (vec![z; l.values], vec![z; l.values], vec![z; l.values]);
    let (mut c, mut lv, mut cd) = (
        vec![0i32; l.codes],
        vec![0i64; l.levels],
        vec![0u8; l.coded],
    );
    let mut s = Scratch {
        values: &mut v,
        decoded: &mut d,
        outliers: &mut o,
        codes: &mut c,
        levels: &mut lv,
        coded: &mut cd,
    };
    let mut out = vec![0u8; plan.worst_len(x)?];
    let len = tiled::compress(x, cfg, &mut s, &mut out)?;
    out.truncate(len);
    Ok(out)
}

/// The interpolation layout's archive `a` decoded by the core's serial codec, scratch
/// allocated here.
pub fn tiled_decompress<T: fzpack_core::szp::SzpFloat>(
    a: &[u8],
    verify: fzpack_core::szp::Verify,
) -> Result<Vec<T>, fzpack_core::szp::Error> {
    use fzpack_core::szp::tiled;
    let view = tiled::parse(a, verify)?;
    let l = tiled::scratch_lens(view.max_tile_len());
    let mut out = vec![T::from_f64(0.0); view.n];
    let (mut c, mut lv) = (vec![0i32; l.codes], vec![0i64; l.levels]);
    tiled::decompress(a, &mut out, &mut c, &mut lv, verify)?;
    Ok(out)
}
