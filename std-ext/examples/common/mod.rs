//! What the examples share (each example is its own crate; `mod common;` in each).

/// The argument after the first `k` on the command line, if any.
pub fn opt(k: &str) -> Option<String> {
    let mut args = std::env::args();
    args.position(|a| a == k).and_then(|_| args.next())
}
