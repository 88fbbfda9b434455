//! `dsh-harness explore` (issue 40) end to end: every generated scenario loads as a scenario file; the
//! reference in-process and the reference adapter binary agree on a short seeded run (the CI run); and a
//! subject made to differ (the reference adapter with one word of its answers rewritten) is caught, the
//! disagreement shrunk to a minimal scenario, and the file written runs under `probe`: passing on the
//! differing subject whose answers it expects, failing on the reference.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod common;

use common::*;
use dsh_harness::run::explore::{emit, generate};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

#[test]
fn every_generated_scenario_loads_from_the_file_written_for_it() {
    let spec = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec");
    let catalog = dsh_conformance::load_suite(&spec).catalog;
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &[3; 32]));
    let (mut holds, mut steps) = (0, 0);
    for n in 0..400 {
        let plan = generate::plans().new_tree(&mut runner).unwrap().current();
        let value = plan.scenario(&format!("gen-{n}"), "REG-001");
        holds += usize::from(plan.hold.is_some());
        steps += value["steps"].as_array().unwrap().len();
        let text = emit::to_yaml(&value);
        let mut seen = Default::default();
        let loaded = dsh_conformance::loader::load_scenarios_text(std::path::Path::new("gen.yaml"), &text, &catalog, &mut seen);
        let (loaded, duplicates) = loaded.unwrap_or_else(|e| panic!("{text}\n{e:?}"));
        assert!(duplicates.is_empty());
        let expected: dsh_conformance::Scenario = serde_json::from_value(value).unwrap();
        assert_eq!(loaded[0].scenario, expected, "{text}");
    }
    // The generator reaches what it is for: holds (aborts) and several steps per scenario.
    assert!(holds > 60 && steps > 1200, "holds {holds}, steps {steps}");
}

#[test]
fn the_reference_in_process_and_its_adapter_agree_on_generated_scenarios() {
    let dir = temp_dir("explore-agree");
    let out = dir.join("out");
    let run = harness(
        &["explore", "--against", env!("CARGO_BIN_EXE_dsh-reference-adapter"), "--cases", "200", "--seed", "40", "--out", out.to_str().unwrap()],
        &[],
    );
    let shown = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(shown.contains("explore: 200 cases (0 skipped) and 0 shrink runs in ") && shown.contains(": 0 disagreement(s)"), "{shown}");
    assert!(!out.exists(), "nothing is written when the subjects agree");
}

#[test]
fn a_disagreement_is_shrunk_to_a_minimal_scenario_that_probe_runs() {
    let dir = temp_dir("explore-differ");
    let out = dir.join("out");
    // The reference adapter, except that every " says no" of its answers reads " says NO": a guard's denial.
    let differing = format!("{} | sed -u 's/ says no/ says NO/g'", env!("CARGO_BIN_EXE_dsh-reference-adapter"));
    let run = harness(&["explore", "--against", &differing, "--cases", "30", "--seed", "5", "--out", out.to_str().unwrap()], &[]);
    let shown = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    // Seed 5 meets a denying guard within its first thirty cases; later cases may show the same rewrite in
    // other forms (a denial whose content a post-execute listener replaced keeps the NO in its message).
    assert!(shown.contains("== disagreement 1 (after ") && !shown.contains(": 0 disagreement(s)"), "{shown}");
    let file = out.join("explore-5-1.yaml");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.contains("says NO") && written.contains("rules: [PROBE-000]"), "{written}");
    // Minimal: one listener (the denying guard), one tool, one execute, and the events step.
    let doc = dsh_conformance::yaml::parse(&written).unwrap().value;
    let hooks = doc["setup"]["hooks"].as_object().map_or(0, |h| h.values().map(|l| l.as_array().unwrap().len()).sum());
    let steps = doc["steps"].as_array().unwrap();
    assert!(hooks <= 1 && doc["setup"]["tools"].as_array().unwrap().len() == 1 && steps.len() <= 3, "{written}");

    let file = file.to_str().unwrap();
    let there = harness(&["probe", file, "--adapter", &differing], &[]);
    let shown = String::from_utf8_lossy(&there.stdout);
    assert_eq!(there.status.code(), Some(1), "{}", text(&there));
    assert!(shown.contains("== reference (in-process): FAIL") && shown.contains("sed -u 's/ says no/ says NO/g'): PASS"), "{shown}");
}
