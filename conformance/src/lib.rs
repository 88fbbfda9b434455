//! dsh-conformance: the scenario and rule model, loader and linter, the `Subject` seam, the adapter
//! protocol, the checker, the outcome taxonomy and report records.

pub mod fixture;
pub mod listener;
pub mod scenario;
pub mod subject;

pub use fixture::{Instruction, Setup, ToolFixture};
pub use listener::{Hooks, Listener};
pub use scenario::{Action, Call, Expect, Scenario, ScenarioFile, Step};
