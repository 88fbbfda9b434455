//! What the runner says about a subject's declared capabilities: a warning for every feature name the
//! suite does not know (a typo there would otherwise skip trials silently), and the end summary's static
//! skips grouped by what the subject lacks.

use std::collections::BTreeMap;

use dsh_conformance::features;
use dsh_conformance::subject::SubjectInfo;

use super::verdict::Verdict;
use crate::adapter::wire;

/// Every feature name the suite knows (`spec/README.md` § Features; `conformance/ADAPTERS.md`).
pub const KNOWN_FEATURES: [&str; 18] = [
    features::AGENTS,
    features::APPROVAL,
    features::EXECUTE_WRAPPERS,
    features::POST_EXECUTE,
    features::FINALIZE_CONTENT,
    features::RESULT_LISTENERS,
    features::CHANGE_LISTENERS,
    features::CODE_MODE,
    features::PROMPT,
    features::SDK,
    features::SCHEMA,
    features::CODEMODE,
    features::CODEMODE_REFERENCE,
    features::PLUGINS,
    features::PRESENTERS,
    features::DISPATCH_LOG,
    features::SESSION_LOG,
    features::PLAIN_CONTEXT_RESTRICT,
];

/// The code runtimes the suite knows (`setup.runtime`).
pub const KNOWN_RUNTIMES: [&str; 2] = ["typescript", "python"];

/// How many unknown feature (and runtime) names are warned about one by one; the rest are counted.
pub const WARNED_NAMES: usize = 10;
/// How many bytes of an unknown name a warning shows.
pub const SHOWN_NAME: usize = 64;

/// One warning per declared feature or runtime the suite does not know, naming the nearest known one: at
/// most [`WARNED_NAMES`] of each, each name cut to [`SHOWN_NAME`] bytes, then one line counting the rest.
pub fn warnings(info: &SubjectInfo) -> Vec<String> {
    let who = format!("{} {}", shorten(&info.name), shorten(&info.version));
    let mut out = Vec::new();
    let unknown: Vec<&String> = info.features.iter().filter(|f| !KNOWN_FEATURES.contains(&f.as_str())).collect();
    for feature in unknown.iter().take(WARNED_NAMES) {
        out.push(format!(
            "{who} declares feature `{}`, which the suite does not know{}; known features: {}",
            shorten(feature),
            nearest(feature, &KNOWN_FEATURES).map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default(),
            KNOWN_FEATURES.join(", ")
        ));
    }
    out.extend(rest(&who, "feature", unknown.len()));
    let unknown: Vec<&String> = info.runtimes.iter().filter(|r| !KNOWN_RUNTIMES.contains(&r.as_str())).collect();
    for runtime in unknown.iter().take(WARNED_NAMES) {
        out.push(format!(
            "{who} declares runtime `{}`, which no scenario uses; known runtimes: {}",
            shorten(runtime),
            KNOWN_RUNTIMES.join(", ")
        ));
    }
    out.extend(rest(&who, "runtime", unknown.len()));
    out
}

fn shorten(name: &str) -> String {
    wire::shorten(name, SHOWN_NAME)
}

/// The line counting the unknown names not warned about one by one, if any.
fn rest(who: &str, what: &str, unknown: usize) -> Option<String> {
    (unknown > WARNED_NAMES).then(|| {
        format!("{who} declares {} more unknown {what} names, not shown (the first {WARNED_NAMES} are)", unknown - WARNED_NAMES)
    })
}

/// The skipped trials grouped by reason (for not-applicable skips, the capabilities missing), the
/// largest group first, each with its trial ids.
pub fn skip_summary(skipped: &[(&str, &Verdict)]) -> String {
    let mut groups: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (id, verdict) in skipped {
        let key = match verdict.detail.as_deref() {
            Some("not-applicable") => verdict.message.clone(),
            _ => format!("{}: {}", verdict.label(), verdict.message),
        };
        groups.entry(key).or_default().push(id);
    }
    let mut groups: Vec<(String, Vec<&str>)> = groups.into_iter().collect();
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    let mut out = format!("skipped (not run): {} trial(s), by reason:\n", skipped.len());
    for (reason, ids) in groups {
        out.push_str(&format!("  {} × {reason}\n", ids.len()));
        for id in ids {
            out.push_str(&format!("      {id}\n"));
        }
    }
    out
}

/// The known name within edit distance 2 of `name`, if exactly one is nearest.
fn nearest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    if name.len() > SHOWN_NAME {
        return None; // farther than 2 edits from every known name
    }
    let mut best: Option<(usize, &str)> = None;
    for k in known {
        let d = distance(name, k);
        if d <= 2 && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_conformance::OutcomeName;

    #[test]
    fn unknown_features_are_warned_with_the_nearest_name() {
        let info = SubjectInfo {
            protocol_version: "1.0".into(),
            name: "x".into(),
            version: "1".into(),
            language: "py".into(),
            profiles: vec![],
            features: vec!["agents".into(), "change-listener".into(), "teleport".into()],
            runtimes: vec!["typescript".into(), "lua".into()],
        };
        let w = warnings(&info);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("`change-listener`") && w[0].contains("did you mean `change-listeners`?"), "{}", w[0]);
        assert!(w[1].contains("`teleport`") && !w[1].contains("did you mean"), "{}", w[1]);
        assert!(w[2].contains("runtime `lua`"), "{}", w[2]);
    }

    #[test]
    fn skips_group_by_missing_capability() {
        let lacks = Verdict::new(OutcomeName::Skip, Some("not-applicable"), "subject lacks code-mode");
        let other = Verdict::new(OutcomeName::Skip, Some("expectation"), "too slow");
        let text = skip_summary(&[("a", &lacks), ("b", &other), ("c", &lacks)]);
        assert_eq!(
            text,
            "skipped (not run): 3 trial(s), by reason:\n  2 × subject lacks code-mode\n      a\n      c\n  1 × SKIP(expectation): too slow\n      b\n"
        );
    }
}
