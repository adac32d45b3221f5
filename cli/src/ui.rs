//! What the commands say: report lines on stdout (stderr when stdout carries the payload),
//! progress bars and spinners on stderr, and file names in messages.

use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Prints a subcommand's report line(s) to stdout.
pub fn say(text: String) {
    println!("{text}");
}

/// Prints the report of a command that wrote `output`: to stderr when the output is standard
/// output (`-o -`), so that stdout holds the payload and nothing else.
pub fn report(output: &Path, text: &str) {
    if output.as_os_str() == "-" {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn bar(len: u64, msg: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {bytes}/{total_bytes} ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(msg.to_string());
    pb
}

/// A spinner for work of unknown length.
pub fn spinner(msg: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(100));
    pb
}

pub fn name(p: &Path) -> String {
    p.display().to_string()
}
