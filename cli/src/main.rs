//! `fzpack`: compress, decompress, inspect, verify and benchmark scientific float files with
//! SZp and PERNIX. Usage: `docs/cli.md`.
//!
//! This file only parses the command line and calls a subcommand. The modules, each importing
//! only those below it (no circles; `grep -rn 'crate::\|super::' cli/src` lists the edges):
//!
//! - `cmd/` — one module per subcommand family: `compress`, `decompress`, `info`, `verify`,
//!   `ops` (`add`, `sum`, `scale`, `stats`).
//! - `bench/` — `fzpack bench`: `args` (the command line, settings, paths, datasets), `run`
//!   (the rows), `timing` (kernels, clocks, per-codec timing), `report` (rows, JSON, table,
//!   plot series), `plot` (SVG of neutral series).
//! - `dispatch` — compress with a setting, decompress or bound any archive by its magic;
//!   `szpcli` (SZp on the three paths) and `szpstream` (SZp streamed by block ranges) below it.
//! - `codec` — the vocabulary: codec, path, mode and layout arguments, settings, engines,
//!   values of either type, bounds.
//! - `files` (safe input and atomic output), `data` (raw values, quality, generated fields),
//!   `ui` (report lines and progress), `fail` (errors and exit codes); the library part
//!   (`lib.rs`: `container`, `checks`) is shared with the fuzz targets.

mod bench;
mod cmd;
mod codec;
mod data;
mod dispatch;
mod fail;
mod files;
mod gpu;
mod npy;
mod szpcli;
mod szpstream;
mod ui;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use cmd::compress::CompressArgs;
use cmd::decompress::DecompressArgs;
use cmd::verify::VerifyArgs;
use codec::verify_of;
use ui::{report, say};

/// Error-bounded (SZp) and fixed-rate (PERNIX) lossy compression of raw f32/f64 files.
#[derive(Parser, Debug)]
#[command(name = "fzpack", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Compress a raw little-endian f32/f64 file or a NumPy .npy file (float32/float64).
    Compress(CompressArgs),
    /// Decompress an archive back to a raw little-endian file (or .npy: -o NAME.npy, or the
    /// default for an archive of a .npy).
    Decompress(DecompressArgs),
    /// Describe an archive.
    Info {
        /// The archive (.szp, .fzm or .pnx); `-` reads standard input.
        file: PathBuf,
        /// Do not verify the .pnx / .szp v2 checksums (the structure is still checked).
        #[arg(long)]
        no_verify: bool,
    },
    /// Check an archive against the original: the error bound, max error, RMSE and PSNR.
    Verify(VerifyArgs),
    /// Measure ratio, quality and speed of every codec, setting and path.
    Bench(bench::BenchArgs),
    /// Add two SZp archives in the compressed domain (same dtype, length, block size and
    /// quantizer bound).
    Add {
        /// First archive.
        a: PathBuf,
        /// Second archive.
        b: PathBuf,
        /// Output archive.
        #[arg(short, long)]
        output: PathBuf,
        /// A - B instead of A + B.
        #[arg(long)]
        sub: bool,
        /// Replace an existing output (regular files only).
        #[arg(long)]
        force: bool,
    },
    /// Sum any number of SZp archives in the compressed domain.
    Sum {
        /// The archives.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Output archive.
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing output (regular files only).
        #[arg(long)]
        force: bool,
    },
    /// Multiply an SZp archive by an integer in the compressed domain.
    Scale {
        /// The archive.
        a: PathBuf,
        /// The integer factor.
        #[arg(long, allow_negative_numbers = true)]
        by: i64,
        /// Output archive.
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing output (regular files only).
        #[arg(long)]
        force: bool,
    },
    /// Sum, mean, min and max of an SZp archive from its quantized levels.
    Stats {
        /// The archive.
        a: PathBuf,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    files::install_signal_cleanup();
    let r = match cli.cmd {
        Cmd::Compress(a) => cmd::compress::run(a),
        Cmd::Decompress(a) => cmd::decompress::run(a),
        Cmd::Info { file, no_verify } => cmd::info::run(&file, verify_of(no_verify)),
        Cmd::Verify(a) => cmd::verify::run(a),
        Cmd::Bench(a) => bench::run(a),
        Cmd::Add {
            a,
            b,
            output,
            sub,
            force,
        } => cmd::ops::add(&a, &b, &output, sub, force).map(|t| report(&output, &t)),
        Cmd::Sum {
            inputs,
            output,
            force,
        } => cmd::ops::sum(&inputs, &output, force).map(|t| report(&output, &t)),
        Cmd::Scale {
            a,
            by,
            output,
            force,
        } => cmd::ops::scale(&a, by, &output, force).map(|t| report(&output, &t)),
        Cmd::Stats { a, json } => cmd::ops::stats(&a, json).map(say),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("fzpack: error: {f}");
            ExitCode::from(f.exit_code())
        }
    }
}
