//! dsh-harness library (skeleton).
