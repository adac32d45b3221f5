//! Placeholder until the SZp codec lands (issue 4).
fn main() {}
