//! `fzpack info`: an archive's format, parameters and layout, validated as `decompress`
//! validates it.

use std::path::Path;

use fzpack::pernix::Verify;
use fzpack_cli::container;

use crate::dispatch::archive_head;
use crate::fail::{Fail, lib};
use crate::files::Input;
use crate::szpcli;
use crate::ui::name;

pub fn run(file: &Path, verify: Verify) -> Result<(), Fail> {
    let nm = name(file);
    // The head is checked before anything else is read (`info /dev/zero` stops at once); a
    // regular file is mapped, a pipe read (capped), and validated exactly as decompress does.
    let input = Input::open_checked(file, archive_head(&nm))?;
    let bytes = input.bytes();
    let mut rows = container::describe(bytes, verify).map_err(|e| lib(&nm, e))?;
    // The array's shape and its missing values (SZp), after the values row, unless the
    // library's description has them already.
    let extra: Vec<_> = szpcli::info_rows(bytes)
        .into_iter()
        .filter(|(k, _)| !rows.iter().any(|(r, _)| r == k))
        .collect();
    let at = rows
        .iter()
        .position(|(k, _)| k == "values")
        .map_or(rows.len(), |i| i + 1);
    rows.splice(at..at, extra);
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    println!("{}", file.display());
    for (k, v) in rows {
        println!("  {k:<w$}  {v}");
    }
    Ok(())
}
