//! dsh-harness: the runner of the dsh-tools conformance suite (`AdapterSubject`, the libtest-mimic runner,
//! expectations, JSON Lines reports, the conformance matrix) and the reference served over the protocol.

pub mod adapter;
pub mod allocator;
pub mod run;
pub mod refserver;
