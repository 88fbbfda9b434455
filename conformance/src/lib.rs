//! dsh-conformance: scenario model and adapter protocol (skeleton).
