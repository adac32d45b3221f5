//! `fzpack add | sum | scale | stats`: compressed-domain arithmetic on SZp archives
//! (`fzpack::ops`), without decompressing. Mismatched archives fail with a message naming the
//! differing field; inputs are read as every other command reads them (`-` is standard input,
//! regular files are mapped, a pipe is capped), and outputs go through the CLI's atomic writer
//! ([`Output`]: temporary file + no-clobber publish, `--force` to overwrite, `-o -` for
//! standard output), which refuses an output that is one of the inputs even with `--force`.
//! Exit codes are those of every command: 5 for a corrupt archive (a checksum mismatch
//! included), 4 for archives that cannot be combined.

use std::path::{Path, PathBuf};

use fzpack::szp;

use crate::dispatch::archive_head;
use crate::fail::{Fail, Kind, lib};
use crate::files::{Input, Output};

fn fail_of(paths: &[&Path], e: fzpack::Error) -> Fail {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let names = names.join(", ");
    match e {
        fzpack::Error::Szp(szp::Error::OpsMismatch { what }) => {
            let hint = if what.contains("layout") {
                " (compress them with the same --layout; `fzpack info` shows an archive's)"
            } else {
                " (compress with the same --abs bound and --max-abs)"
            };
            Fail::new(
                Kind::Input,
                format!(
                    "{names}: the archives differ in {what}; compressed-domain operations need \
                     the same dtype, length, block size, block layout and quantizer bound{hint}"
                ),
            )
        }
        fzpack::Error::Szp(szp::Error::OpsUnsupported { .. }) => {
            Fail::new(Kind::Input, format!("{names}: {e}"))
        }
        // Everything else as every command maps it (corrupt and checksum errors: exit 5).
        other => lib(&names, other),
    }
}

/// Opens the archives (`-`: standard input, at most once).
fn open_all(paths: &[&Path]) -> Result<Vec<Input>, Fail> {
    if paths.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(Fail::new(
            Kind::Usage,
            "standard input (`-`) can be given only once",
        ));
    }
    paths
        .iter()
        .map(|p| Input::open_checked(p, archive_head(&p.display().to_string())))
        .collect()
}

/// `fzpack add A B -o C [--force]` (`--sub` for A − B).
pub fn add(a: &Path, b: &Path, out: &Path, subtract: bool, force: bool) -> Result<String, Fail> {
    let ins = open_all(&[a, b])?;
    let (x, y) = (ins[0].bytes(), ins[1].bytes());
    let r = if subtract {
        fzpack::ops::sub(x, y)
    } else {
        fzpack::ops::add(x, y)
    }
    .map_err(|e| fail_of(&[a, b], e))?;
    finish(out, &r, force, &ins)
}

/// `fzpack sum A B C ... -o S [--force]`.
pub fn sum(inputs: &[PathBuf], out: &Path, force: bool) -> Result<String, Fail> {
    if inputs.is_empty() {
        return Err(Fail::new(Kind::Usage, "sum needs at least one archive"));
    }
    let paths: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
    let ins = open_all(&paths)?;
    let refs: Vec<&[u8]> = ins.iter().map(|i| i.bytes()).collect();
    let r = fzpack::ops::sum(&refs).map_err(|e| fail_of(&paths, e))?;
    finish(out, &r, force, &ins)
}

/// `fzpack scale A --by K -o C [--force]` (K an integer; negative negates).
pub fn scale(a: &Path, by: i64, out: &Path, force: bool) -> Result<String, Fail> {
    let ins = open_all(&[a])?;
    let r = fzpack::ops::scale_int(ins[0].bytes(), by).map_err(|e| fail_of(&[a], e))?;
    finish(out, &r, force, &ins)
}

fn finish(out: &Path, archive: &[u8], force: bool, inputs: &[Input]) -> Result<String, Fail> {
    let h = szp::header(archive).map_err(|e| Fail::new(Kind::Corrupt, e.to_string()))?;
    let refs: Vec<&Input> = inputs.iter().collect();
    let mut o = Output::create(out, force, &refs)?;
    o.write_all(archive)?;
    o.finish(force)?;
    Ok(format!(
        "{}: {} values, {} bytes, bound {:e}",
        out.display(),
        h.n,
        archive.len(),
        h.bound()
    ))
}

/// `fzpack stats A [--json]`: n, sum, mean, min, max, levels and bound, from the levels; the
/// missing values (NaN, ±inf) are left out of them and counted (`missing`).
pub fn stats(a: &Path, json: bool) -> Result<String, Fail> {
    let ins = open_all(&[a])?;
    let s = fzpack::ops::stats(ins[0].bytes()).map_err(|e| fail_of(&[a], e))?;
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
            "{{\"file\":{:?},\"n\":{},\"missing\":{},\"sum\":{},\"mean\":{},\"min\":{},\"max\":{},\"min_level\":{ql},\"max_level\":{qh},\"level_sum\":\"{}\",\"quant_eb\":{:e},\"bound\":{:e}}}",
            a.display().to_string(),
            s.n,
            s.missing,
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
            "{}: n={}{} sum={} mean={} min={} max={} levels=[{ql}, {qh}] bound={:e} ({})",
            a.display(),
            s.n,
            if s.missing > 0 {
                format!(" missing={}", s.missing)
            } else {
                String::new()
            },
            num(s.sum()),
            num(mean),
            num(lo),
            num(hi),
            s.bound,
            if s.missing > 0 {
                "missing values left out: sum within (n-missing)*bound, mean within bound of \
                 the original's other values"
            } else {
                "sum within n*bound, mean within bound of the original data"
            }
        )
    })
}
