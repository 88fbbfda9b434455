//! The teardown race of REPL retention, on the table itself (no black-box caller can stop a `code_run`
//! between resolving its body and asking for its owner): once the teardown began no owner is minted, and a
//! lease held across a release releases its owner again as it drops — only then.
//!
//! Spec: CDM-038, CDM-044.

#![allow(clippy::unwrap_used)] // tests fail loudly

use std::sync::{Arc, Mutex};

use dsh_tools::code::{CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeMisuse, StateOwner};
use dsh_tools::{BoxFuture, ScopeKey, ToolRuntime, ToolsConfig};

use super::{Retention, UNLOADING};

/// A runtime recording each release.
#[derive(Default)]
struct Releases(Mutex<Vec<StateOwner>>);

impl CodeRuntime for Releases {
    fn language(&self) -> &str {
        "typescript"
    }

    fn run(&self, _: CodeRunRequest) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeMisuse>> {
        Box::pin(async { Ok(CodeRunResult::default()) })
    }

    fn release(&self, owner: &StateOwner) -> bool {
        self.0.lock().unwrap().push(owner.clone());
        true
    }
}

fn setup() -> (ToolRuntime, Arc<Releases>, Arc<Retention>, ScopeKey) {
    let releases = Arc::new(Releases::default());
    let retention = Retention::new(Arc::clone(&releases) as Arc<dyn CodeRuntime>);
    (ToolRuntime::new(ToolsConfig::default()), releases, retention, ScopeKey::new("A"))
}

#[test]
fn no_owner_is_minted_once_the_teardown_began() {
    let (runtime, releases, retention, agent) = setup();
    retention.release_all();
    let refused = retention.owner(&runtime, Some(&agent)).err().unwrap();
    assert_eq!(refused.message, UNLOADING);
    // Nothing was attached to the agent scope: disposing it releases nothing.
    runtime.dispose_scope(&agent);
    assert!(releases.0.lock().unwrap().is_empty());
    // A call without an agent has no owner either way.
    assert!(retention.owner(&runtime, None).unwrap().is_none());
}

#[test]
fn a_lease_held_across_the_teardown_releases_its_owner_again() {
    let (runtime, releases, retention, agent) = setup();
    let lease = retention.owner(&runtime, Some(&agent)).unwrap().unwrap();
    let owner = lease.owner();
    retention.release_all();
    assert_eq!(*releases.0.lock().unwrap(), std::slice::from_ref(&owner));
    // The run that held it may have started an environment after the release: it goes as the run settles.
    drop(lease);
    assert_eq!(*releases.0.lock().unwrap(), [owner.clone(), owner]);
}

#[test]
fn a_lease_held_across_the_agents_disposal_releases_its_owner_again() {
    let (runtime, releases, retention, agent) = setup();
    let lease = retention.owner(&runtime, Some(&agent)).unwrap().unwrap();
    let owner = lease.owner();
    runtime.dispose_scope(&agent);
    drop(lease);
    assert_eq!(*releases.0.lock().unwrap(), [owner.clone(), owner]);
}

#[test]
fn a_lease_dropped_before_any_release_releases_nothing() {
    let (runtime, releases, retention, agent) = setup();
    let first = retention.owner(&runtime, Some(&agent)).unwrap().unwrap();
    let second = retention.owner(&runtime, Some(&agent)).unwrap().unwrap();
    assert_eq!(first.owner(), second.owner(), "one owner per agent");
    drop((first, second));
    assert!(releases.0.lock().unwrap().is_empty());
    retention.release_all();
    assert_eq!(releases.0.lock().unwrap().len(), 1);
}

#[test]
fn a_call_after_its_agents_disposal_runs_fresh_and_mints_no_owner() {
    let (runtime, releases, retention, agent) = setup();
    runtime.dispose_scope(&agent);
    // CDM-050: nothing would release an owner attached to a disposed scope; the late call keeps no state.
    assert!(retention.owner(&runtime, Some(&agent)).unwrap().is_none());
    // A live agent still gets its owner.
    let other = ScopeKey::new("B");
    let lease = retention.owner(&runtime, Some(&other)).unwrap().expect("a live agent's owner");
    let owner = lease.owner();
    drop(lease);
    retention.release_all();
    assert_eq!(*releases.0.lock().unwrap(), [owner], "only the live agent's owner was minted, so only it is released");
}
