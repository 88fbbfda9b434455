//! The reference served over the adapter protocol (skeleton).
fn main() {}
