//! `fzpack add | sum | scale | stats`: compressed-domain arithmetic on SZp archives
//! (`fzpack::ops`), without decompressing. Mismatched archives fail with a message naming the
//! differing field; outputs go through the CLI's atomic writer (`data::write_output`:
//! temporary file + rename, `--force` to overwrite). Wiring: /work/notes/ops-cli-wiring.md.

use std::path::{Path, PathBuf};

use fzpack::szp;

use crate::data::{read_file, write_output};
use crate::fail::{Fail, Kind};

fn fail_of(paths: &[&Path], e: fzpack::Error) -> Fail {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let names = names.join(", ");
    match e {
        fzpack::Error::Szp(szp::Error::OpsMismatch { what }) => Fail::new(
            Kind::Input,
            format!(
                "{names}: the archives differ in {what}; compressed-domain operations need the same dtype, length, block size and quantizer bound (compress with the same --eb and --max-abs)"
            ),
        ),
        fzpack::Error::Szp(
            szp::Error::Truncated
            | szp::Error::BadMagic
            | szp::Error::UnsupportedVersion { .. }
            | szp::Error::Corrupt(_)
            | szp::Error::Implausible { .. },
        ) => Fail::new(Kind::Corrupt, format!("{names}: {e}")),
        other => Fail::new(Kind::Input, format!("{names}: {other}")),
    }
}

fn read_all(paths: &[PathBuf]) -> Result<Vec<Vec<u8>>, Fail> {
    paths.iter().map(|p| read_file(p)).collect()
}

/// `fzpack add A B -o C [--force]` (`--sub` for A − B).
pub fn add(a: &Path, b: &Path, out: &Path, subtract: bool, force: bool) -> Result<String, Fail> {
    let (x, y) = (read_file(a)?, read_file(b)?);
    let r = if subtract {
        fzpack::ops::sub(&x, &y)
    } else {
        fzpack::ops::add(&x, &y)
    }
    .map_err(|e| fail_of(&[a, b], e))?;
    finish(out, &r, force)
}

/// `fzpack sum A B C ... -o S [--force]`.
pub fn sum(inputs: &[PathBuf], out: &Path, force: bool) -> Result<String, Fail> {
    if inputs.is_empty() {
        return Err(Fail::new(Kind::Usage, "sum needs at least one archive"));
    }
    let all = read_all(inputs)?;
    let refs: Vec<&[u8]> = all.iter().map(|v| v.as_slice()).collect();
    let paths: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
    let r = fzpack::ops::sum(&refs).map_err(|e| fail_of(&paths, e))?;
    finish(out, &r, force)
}

/// `fzpack scale A --by K -o C [--force]` (K an integer; negative negates).
pub fn scale(a: &Path, by: i64, out: &Path, force: bool) -> Result<String, Fail> {
    let x = read_file(a)?;
    let r = fzpack::ops::scale_int(&x, by).map_err(|e| fail_of(&[a], e))?;
    finish(out, &r, force)
}

fn finish(out: &Path, archive: &[u8], force: bool) -> Result<String, Fail> {
    let h = szp::header(archive).map_err(|e| Fail::new(Kind::Corrupt, e.to_string()))?;
    write_output(out, archive, force)?;
    Ok(format!(
        "{}: {} values, {} bytes, bound {:e}",
        out.display(),
        h.n,
        archive.len(),
        h.bound()
    ))
}

/// `fzpack stats A [--json]`: n, sum, mean, min, max, levels and bound, from the levels.
pub fn stats(a: &Path, json: bool) -> Result<String, Fail> {
    let x = read_file(a)?;
    let s = fzpack::ops::stats(&x).map_err(|e| fail_of(&[a], e))?;
    let (lo, hi) = s.min_max().map_or((f64::NAN, f64::NAN), |m| m);
    let (ql, qh) = s.min_max_levels.unwrap_or((0, 0));
    let mean = s.mean().unwrap_or(f64::NAN);
    let num = |v: f64| {
        if v.is_finite() {
            format!("{v:e}")
        } else {
            "null".into()
        }
    };
    Ok(if json {
        format!(
            "{{\"file\":{:?},\"n\":{},\"sum\":{},\"mean\":{},\"min\":{},\"max\":{},\"min_level\":{ql},\"max_level\":{qh},\"level_sum\":\"{}\",\"quant_eb\":{:e},\"bound\":{:e}}}",
            a.display().to_string(),
            s.n,
            num(s.sum()),
            num(mean),
            num(lo),
            num(hi),
            s.level_sum,
            s.quant_eb,
            s.bound
        )
    } else {
        format!(
            "{}: n={} sum={} mean={} min={} max={} levels=[{ql}, {qh}] bound={:e} (sum within n*bound, mean within bound of the original data)",
            a.display(),
            s.n,
            num(s.sum()),
            num(mean),
            num(lo),
            num(hi),
            s.bound
        )
    })
}
