//! dsh-conformance: the scenario and rule model, loader and linter, the `Subject` seam, the adapter
//! protocol, the checker, the outcome taxonomy and report records.

pub mod catalog;
pub mod checker;
pub mod corpus;
pub mod corpus_index;
pub mod diff;
pub mod eventlog;
pub mod features;
pub mod files;
pub mod fixture;
pub mod instruction;
pub mod json;
mod json_scan;
pub mod listener;
pub mod loader;
pub mod matchers;
pub mod nested;
pub mod messages;
pub mod outcome;
pub mod presenter;
pub mod prompt_setup;
pub mod protocol;
pub mod report;
pub mod scenario;
pub mod schemas;
pub mod sdk_corpus;
pub mod subject;
pub mod unordered;
pub mod yaml;

pub use catalog::{Catalog, Rule};
pub use fixture::{AgentDecl, NestedAgent, Setup, ToolFixture};
pub use instruction::Instruction;
pub use listener::{Hooks, Listener};
pub use loader::{LoadError, LoadedScenario, Suite, load_suite};
pub use scenario::{Action, Call, Expect, Scenario, ScenarioFile, Step};
pub use checker::{CheckOptions, check_trial, run_scenario};
pub use features::{applicability, required_features};
pub use outcome::{ErrorKind, Outcome, OutcomeName, SkipKind, TrialRecord};
pub use report::{Expected, Footer, Header, ReportLine, TrialLine};
