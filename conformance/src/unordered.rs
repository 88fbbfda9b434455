//! `{ $unordered: [events...] }` inside an `events` step (`spec/README.md` § Results and matchers): a
//! group of events that must occupy the next consecutive positions, in any order, for sets whose order
//! upstream leaves free. The group is resolved against the actual events before the ordinary exact
//! comparison, so a mismatch still reports a path and a diff.

use serde_json::Value;

use crate::matchers::{self, MatchMode};

/// Groups larger than this are matched greedily (first fit) rather than by search.
const SEARCH_LIMIT: usize = 8;

/// The expectation with every `$unordered` group replaced by its members, reordered to follow the actual
/// events they match (members that match nothing keep their written order, after the matched ones, so
/// the comparison then fails at the right place). `Err` names a malformed group.
pub fn resolve(expected: &[Value], actual: &[Value]) -> Result<Vec<Value>, String> {
    let mut out = Vec::with_capacity(expected.len());
    let mut at = 0;
    for (i, item) in expected.iter().enumerate() {
        let Some(group) = group(item).map_err(|e| format!("events[{i}]: {e}"))? else {
            out.push(item.clone());
            at += 1;
            continue;
        };
        let window = actual.get(at..(at + group.len()).min(actual.len())).unwrap_or_default();
        out.extend(arrange(group, window).into_iter().cloned());
        at += group.len();
    }
    Ok(out)
}

/// The members of a `{ $unordered: [...] }` mapping, `None` for any other item.
fn group(item: &Value) -> Result<Option<&[Value]>, String> {
    let Value::Object(map) = item else { return Ok(None) };
    match (map.len(), map.get("$unordered")) {
        (1, Some(Value::Array(members))) if !members.is_empty() => Ok(Some(members)),
        (1, Some(_)) => Err("`$unordered` takes a non-empty list of events".into()),
        _ => Ok(None),
    }
}

/// The members in the order of the actual events they match.
fn arrange<'a>(members: &'a [Value], window: &[Value]) -> Vec<&'a Value> {
    let fits = |m: &Value, a: &Value| matchers::check(m, a, MatchMode::Exact).is_ok();
    let mut chosen: Vec<Option<usize>> = vec![None; window.len()];
    let mut used = vec![false; members.len()];
    if members.len() <= SEARCH_LIMIT {
        search(members, window, 0, &mut chosen, &mut used, &fits);
    }
    if chosen.iter().all(Option::is_none) {
        for (slot, actual) in window.iter().enumerate() {
            if let Some(m) = (0..members.len()).find(|&m| !used[m] && fits(&members[m], actual)) {
                used[m] = true;
                chosen[slot] = Some(m);
            }
        }
    }
    let mut arranged: Vec<&Value> = chosen.iter().flatten().map(|&m| &members[m]).collect();
    arranged.extend(members.iter().enumerate().filter(|(m, _)| !used[*m]).map(|(_, v)| v));
    arranged
}

/// Depth-first assignment of members to the window's slots; true once every slot has a member.
fn search(
    members: &[Value],
    window: &[Value],
    slot: usize,
    chosen: &mut [Option<usize>],
    used: &mut [bool],
    fits: &dyn Fn(&Value, &Value) -> bool,
) -> bool {
    if slot == window.len() {
        return true;
    }
    for m in 0..members.len() {
        if !used[m] && fits(&members[m], &window[slot]) {
            used[m] = true;
            chosen[slot] = Some(m);
            if search(members, window, slot + 1, chosen, used, fits) {
                return true;
            }
            used[m] = false;
            chosen[slot] = None;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(expected: Value, actual: Value) -> bool {
        let (Value::Array(e), Value::Array(a)) = (expected, actual) else { return false };
        let resolved = resolve(&e, &a).unwrap_or_default();
        matchers::check(&Value::Array(resolved), &Value::Array(a), MatchMode::Exact).is_ok()
    }

    #[test]
    fn a_group_matches_its_members_in_any_order() {
        let expected = json!([1, { "$unordered": [{ "x": 2 }, { "x": 3 }] }, 4]);
        assert!(run(expected.clone(), json!([1, { "x": 3 }, { "x": 2 }, 4])));
        assert!(run(expected, json!([1, { "x": 2 }, { "x": 3 }, 4])));
    }

    #[test]
    fn a_group_still_needs_its_members_and_its_positions() {
        let expected = json!([{ "$unordered": [{ "x": 2 }, { "x": 3 }] }, 4]);
        assert!(!run(expected.clone(), json!([{ "x": 2 }, { "x": 2 }, 4])));
        assert!(!run(expected.clone(), json!([{ "x": 2 }, 4, { "x": 3 }])));
        assert!(!run(expected, json!([{ "x": 3 }, { "x": 2 }])));
    }

    #[test]
    fn overlapping_matchers_are_assigned_by_search() {
        // A greedy first fit would give `$any` the first event and leave {x: 2} without a partner.
        let expected = json!([{ "$unordered": [{ "$any": true }, { "x": 2 }] }]);
        assert!(run(expected, json!([{ "x": 2 }, { "x": 5 }])));
    }

    #[test]
    fn a_malformed_group_is_an_error() {
        assert!(resolve(&[json!({ "$unordered": [] })], &[]).is_err());
        assert!(resolve(&[json!({ "$unordered": 3 })], &[]).is_err());
    }
}
