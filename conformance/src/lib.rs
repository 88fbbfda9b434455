//! dsh-conformance: the scenario and rule model, loader and linter, the `Subject` seam, the adapter
//! protocol, the checker, the outcome taxonomy and report records.

pub mod subject;
