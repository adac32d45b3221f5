//! `fzpack info`: an archive's format, parameters and layout, validated as `decompress`
//! validates it.

use std::path::Path;

use fzpack::pernix::Verify;
use fzpack_cli::container;

use crate::dispatch::archive_head;
use crate::fail::{Fail, lib};
use crate::files::Input;
use crate::ui::name;

pub fn run(file: &Path, verify: Verify) -> Result<(), Fail> {
    let nm = name(file);
    // The head is checked before anything else is read (`info /dev/zero` stops at once); a
    // regular file is mapped, a pipe read (capped), and validated exactly as decompress does.
    let input = Input::open_checked(file, archive_head(&nm))?;
    let rows = container::describe(input.bytes(), verify).map_err(|e| lib(&nm, e))?;
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    println!("{}", file.display());
    for (k, v) in rows {
        println!("  {k:<w$}  {v}");
    }
    Ok(())
}
