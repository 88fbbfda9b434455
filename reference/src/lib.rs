//! dsh-tools: reference implementation (skeleton).
