//! dsh-harness runner (skeleton).
fn main() {}
