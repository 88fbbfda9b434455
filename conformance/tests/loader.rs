//! Loader errors carry the exact `file:line:column: field: message`, and one bad file never stops the
//! others.

use std::path::{Path, PathBuf};

use dsh_conformance::load_suite;

/// A fresh spec tree under the system temp dir, named after the test.
fn spec_tree(test: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("dsh-conformance-loader-{}-{test}", std::process::id())).join("spec");
    let _ = std::fs::remove_dir_all(&root);
    for (rel, text) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    root
}

const RULES: &str = "\
area: REG
title: Registration
rules:
  - id: REG-001
    statement: Registering a duplicate name throws.
    source: seed 000
    level: must
  - id: REG-002
    statement: Hidden.
    source: seed 000
    level: should
    observable: false
    reason: unit test reg::hidden
";

const GOOD: &str = "\
id: reg-good
rules: [REG-001]
level: must
description: fine
setup:
  tools:
    - name: echo
      body: [{ returnArgument: text }]
steps:
  - execute: { name: echo, arguments: { text: hi } }
    expect:
      result: { isError: false, value: hi, content: [{ type: text, text: hi }] }
";

fn messages(root: &Path) -> Vec<String> {
    load_suite(root).errors.iter().map(ToString::to_string).collect()
}

#[test]
fn good_files_load() {
    let root = spec_tree("good", &[("rules/reg.yaml", RULES), ("scenarios/reg/good.yaml", GOOD)]);
    let suite = load_suite(&root);
    assert!(suite.errors.is_empty(), "{:?}", suite.errors);
    assert_eq!(suite.scenarios.len(), 1);
    assert_eq!(suite.scenarios[0].file, Path::new("spec/scenarios/reg/good.yaml"));
    assert_eq!(suite.scenarios[0].line, 1);
    let rule = suite.catalog.get("REG-002").expect("rule");
    assert!(!rule.observable);
    assert_eq!(rule.area, "REG");
    assert_eq!(rule.profile, "dsh-tools-0.1");
}

#[test]
fn yaml_syntax_error_has_its_position() {
    let bad = "id: reg-bad\nrules: [REG-001\nlevel: must\n";
    let root = spec_tree("syntax", &[("rules/reg.yaml", RULES), ("scenarios/reg/bad.yaml", bad), ("scenarios/reg/good.yaml", GOOD)]);
    let suite = load_suite(&root);
    assert_eq!(suite.scenarios.len(), 1, "the good file still loads");
    let msgs: Vec<String> = suite.errors.iter().map(ToString::to_string).collect();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0], "spec/scenarios/reg/bad.yaml:3:6: YAML syntax: illegal placement of ':' indicator");
}

#[test]
fn unknown_field_deep_in_a_step() {
    let bad = "\
id: reg-dup
rules: [REG-001]
level: must
description: typo
steps:
  - openGate: g
  - openGate: h
  - get: { name: echo }
    expect: { tool: null }
  - register: { tool: echo }
    expect:
      ok: true
      thrw: { message: x }
";
    let root = spec_tree("deepfield", &[("rules/reg.yaml", RULES), ("scenarios/reg/dup.yaml", bad)]);
    assert_eq!(messages(&root), vec![r#"spec/scenarios/reg/dup.yaml:13:7: steps[3].expect: unknown field "thrw""#]);
}

#[test]
fn unknown_field_in_a_flow_list_item() {
    let bad = "\
id: reg-flow
rules: [REG-001]
level: must
description: typo
setup:
  tools:
    - name: echo
      body: [{ emit: a }, { emti: b }]
";
    let root = spec_tree("flow", &[("rules/reg.yaml", RULES), ("scenarios/reg/flow.yaml", bad)]);
    assert_eq!(messages(&root), vec![r#"spec/scenarios/reg/flow.yaml:8:29: setup.tools[0].body[1]: unknown field "emti""#]);
}

#[test]
fn wrong_type_and_missing_field() {
    let bad = "\
id: reg-types
rules: [REG-001]
level: sometimes
steps:
  - get: { agent: a1 }
";
    let root = spec_tree("types", &[("rules/reg.yaml", RULES), ("scenarios/reg/types.yaml", bad)]);
    let msgs = messages(&root);
    assert_eq!(msgs.len(), 3, "{msgs:?}");
    assert_eq!(msgs[0], r#"spec/scenarios/reg/types.yaml:1:1: missing field "description""#);
    assert!(msgs[1].starts_with("spec/scenarios/reg/types.yaml:3:1: level: "), "{msgs:?}");
    assert_eq!(msgs[2], r#"spec/scenarios/reg/types.yaml:5:5: steps[0].get: missing field "name""#);
}

#[test]
fn unknown_rule_id() {
    let bad = "id: reg-unknown\nrules:\n  - REG-001\n  - REG-999\nlevel: must\ndescription: d\n";
    let root = spec_tree("unknownrule", &[("rules/reg.yaml", RULES), ("scenarios/reg/u.yaml", bad)]);
    let suite = load_suite(&root);
    assert!(suite.scenarios.is_empty());
    let msgs: Vec<String> = suite.errors.iter().map(ToString::to_string).collect();
    assert_eq!(msgs, vec![r#"spec/scenarios/reg/u.yaml:4:5: rules[1]: unknown rule id "REG-999""#]);
}

#[test]
fn duplicate_scenario_and_rule_ids() {
    let family = "\
scenarios:
  - id: reg-good
    rules: [REG-001]
    level: must
    description: same id as good.yaml
";
    let rules2 = "\
area: REG
title: Again
rules:
  - id: REG-001
    statement: Again.
    source: x
    level: may
  - id: PIPE-001
    statement: Wrong area.
    source: x
    level: may
";
    let root = spec_tree(
        "dup",
        &[("rules/reg.yaml", RULES), ("rules/reg2.yaml", rules2), ("scenarios/a/good.yaml", GOOD), ("scenarios/b/fam.yaml", family)],
    );
    let suite = load_suite(&root);
    let msgs: Vec<String> = suite.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        msgs,
        vec![
            r#"spec/rules/reg2.yaml:4:5: rules[0].id: duplicate rule id "REG-001" (first at spec/rules/reg.yaml:4:5)"#,
            r#"spec/rules/reg2.yaml:8:5: rules[1].id: rule id "PIPE-001" does not start with the file's area "REG""#,
            r#"spec/scenarios/b/fam.yaml:2:5: scenarios[0].id: duplicate scenario id "reg-good" (first at spec/scenarios/a/good.yaml:1:1); this one is not run"#,
        ]
    );
    assert_eq!(suite.scenarios.len(), 1);
    assert_eq!(suite.catalog.get("REG-001").map(|r| r.statement.as_str()), Some("Registering a duplicate name throws."));
}

#[test]
fn yml_extension_and_multiple_documents() {
    let root = spec_tree(
        "yml",
        &[("rules/reg.yaml", RULES), ("scenarios/x.yml", GOOD), ("scenarios/two.yaml", "id: a\n---\nid: b\n")],
    );
    let msgs = messages(&root);
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(msgs.iter().any(|m| m.starts_with("spec/scenarios/x.yml:1:1: ")));
    assert!(msgs.iter().any(|m| m.starts_with("spec/scenarios/two.yaml:2:1: YAML syntax: ")), "{msgs:?}");
}

#[test]
fn malformed_nested_matcher_names_file_line_and_field() {
    let bad = GOOD.replace(
        "      result: { isError: false, value: hi, content: [{ type: text, text: hi }] }\n",
        "      result:\n        isError: false\n        value: { $nested: { depth: many, leaf: hi } }\n        content: [{ type: text, text: hi }]\n",
    );
    let root = spec_tree("nested", &[("rules/reg.yaml", RULES), ("scenarios/reg/bad.yaml", &bad)]);
    let got = messages(&root);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with("spec/scenarios/reg/bad.yaml:14:9: steps[0].expect.result.value: `$nested` takes"),
        "{got:?}"
    );
    assert!(got[0].ends_with("`depth` is \"many\""), "{got:?}");
}
