//! SDK render benchmark (placeholder, replaced below).
fn main() {}
