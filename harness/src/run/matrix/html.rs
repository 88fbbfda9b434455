//! The HTML matrix (`matrix --html FILE REPORTS… [--before EARLIER…]`): one self-contained file (no
//! network: styles and the small filter script are inline) that opens from a CI artifact.
//!
//! Columns are the implementations (one per report); rows are rule areas → rules → trials, a trial listed
//! under its first rule. Each cell shows the outcome, its message on expand (`<details>`), and, when
//! earlier reports were given (`--before`, in the same order), what it was before. Rule rows carry the
//! per-rule coverage (passed / trials per implementation; rules of the catalog with no trial are listed
//! as uncovered). Filters by area, profile, outcome and "changed only" live in the URL fragment
//! (`#area=REG&outcome=FAIL`), so a filtered view is a link; every trial row has its id as anchor
//! (`#t=<id>`, a permalink that filters to that trial). Rule statements, profiles and the uncovered rules
//! come from the workspace's spec (`cli::DEFAULT_SPEC`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use dsh_conformance::OutcomeName;
use dsh_conformance::report::{ReportLine, TrialLine};

use crate::run::{cli, junit};

/// One report read back.
struct Column {
    title: String,
    trials: HashMap<String, TrialLine>,
}

/// Reads the reports (and the earlier ones), the spec's catalog and profiles, and writes the page.
pub fn write(reports: &[PathBuf], before: &[PathBuf], target: &Path) -> Result<(), String> {
    if !before.is_empty() && before.len() != reports.len() {
        return Err(format!("--before names {} report(s) for {} column(s): give one earlier report per report, in order", before.len(), reports.len()));
    }
    let columns = reports.iter().map(|p| read(p)).collect::<Result<Vec<_>, _>>()?;
    let earlier = before.iter().map(|p| read(p)).collect::<Result<Vec<_>, _>>()?;
    let spec = dsh_conformance::load_suite(Path::new(cli::DEFAULT_SPEC));
    let profiles: HashMap<String, String> =
        spec.scenarios.iter().map(|s| (s.scenario.id.clone(), s.scenario.profile().to_owned())).collect();
    let page = render(&columns, &earlier, &spec.catalog, &profiles);
    std::fs::write(target, page).map_err(|e| format!("cannot write {}: {e}", target.display()))
}

fn read(path: &Path) -> Result<Column, String> {
    let read = super::read_back(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut column = Column { title: String::new(), trials: HashMap::new() };
    for record in read.records {
        match record {
            ReportLine::Header(h) => column.title = super::title(&h),
            ReportLine::Trial(t) => {
                column.trials.insert(t.id.clone(), t);
            }
            ReportLine::Footer(_) => {}
        }
    }
    if column.title.is_empty() {
        return Err(format!("{}: no header: not a dsh-harness report", path.display()));
    }
    if let Some(line) = read.cut_at {
        column.title.push_str(&format!(" — incomplete: report cut off at line {line}"));
    }
    Ok(column)
}

fn render(
    columns: &[Column],
    earlier: &[Column],
    catalog: &dsh_conformance::Catalog,
    profiles: &HashMap<String, String>,
) -> String {
    // area → rule → trial ids (first rule of each trial, as seen in any report).
    let mut tree: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut first: HashMap<&str, &TrialLine> = HashMap::new();
    for column in columns {
        for trial in column.trials.values() {
            first.entry(trial.id.as_str()).or_insert(trial);
            let rule = trial.rules.first().cloned().unwrap_or_else(|| "(no rule)".into());
            tree.entry(junit::area(trial)).or_default().entry(rule).or_default().insert(trial.id.clone());
        }
    }
    for rule in catalog.rules.values() {
        tree.entry(rule.area.clone()).or_default().entry(rule.id.clone()).or_default();
    }
    let profile_of = |id: &str| profiles.get(id).cloned().unwrap_or_else(|| dsh_conformance::scenario::DEFAULT_PROFILE.to_owned());
    let all_profiles: BTreeSet<String> = first.keys().map(|id| profile_of(id)).collect();
    let mut body = String::new();
    let mut changes = Vec::new();
    for (area, rules) in &tree {
        let _ = writeln!(body, r#"<tbody class="area" data-area="{}"><tr class="area-row"><th colspan="{}">{}</th></tr>"#, esc(area), columns.len() + 1, esc(area));
        for (rule, ids) in rules {
            let statement = catalog.get(rule).map(|r| r.statement.trim().to_owned()).unwrap_or_default();
            let _ = write!(body, r#"<tr class="rule" data-area="{}"><th scope="row" title="{}">{}</th>"#, esc(area), esc(&statement), esc(rule));
            for column in columns {
                let counted: Vec<&TrialLine> = ids.iter().filter_map(|id| column.trials.get(id)).collect();
                let passed = counted.iter().filter(|t| matches!(t.outcome, OutcomeName::Pass)).count();
                let text = if ids.is_empty() { "uncovered".to_owned() } else { format!("{passed}/{}", counted.len()) };
                let _ = write!(body, r#"<td class="coverage">{text}</td>"#);
            }
            body.push_str("</tr>\n");
            for id in ids {
                let profile = profile_of(id);
                let mut outcomes = BTreeSet::new();
                let mut cells = String::new();
                let mut changed = false;
                for (n, column) in columns.iter().enumerate() {
                    let was = earlier.get(n).and_then(|c| c.trials.get(id));
                    let Some(trial) = column.trials.get(id) else {
                        cells.push_str(r#"<td class="cell none">–</td>"#);
                        continue;
                    };
                    outcomes.insert(trial.outcome.to_string());
                    let label = label_of(trial);
                    let moved = earlier.get(n).is_some() && was.map(label_of) != Some(label.clone());
                    if moved {
                        changed = true;
                        let before = was.map_or("absent".to_owned(), label_of);
                        changes.push(format!("{id}: {}: {before} → {label}", column.title));
                    }
                    let class = trial.outcome.to_string().to_lowercase();
                    let note = if moved { format!(r#" <span class="was">was {}</span>"#, esc(&was.map_or("absent".to_owned(), label_of))) } else { String::new() };
                    if trial.message.is_empty() {
                        let _ = write!(cells, r#"<td class="cell {class}">{}{note}</td>"#, esc(&label));
                    } else {
                        let _ = write!(cells, r#"<td class="cell {class}"><details><summary>{}{note}</summary><pre>{}</pre></details></td>"#, esc(&label), esc(&trial.message));
                    }
                }
                let outcomes: Vec<String> = outcomes.into_iter().collect();
                let _ = writeln!(
                    body,
                    r##"<tr class="trial" id="t={}" data-id="{}" data-area="{}" data-profile="{}" data-outcomes=" {} " data-changed="{}"><td><a href="#t={}">{}</a></td>{cells}</tr>"##,
                    esc(id), esc(id), esc(area), esc(&profile), esc(&outcomes.join(" ")), changed, esc(id), esc(id)
                );
            }
        }
        body.push_str("</tbody>\n");
    }
    let heads: String = columns.iter().map(|c| format!(r#"<th class="impl">{}</th>"#, esc(&c.title))).collect();
    let totals: String = columns
        .iter()
        .map(|c| {
            let mut counts: BTreeMap<OutcomeName, usize> = BTreeMap::new();
            for t in c.trials.values() {
                *counts.entry(t.outcome).or_default() += 1;
            }
            let parts: Vec<String> = counts.iter().map(|(o, n)| format!("{n} {o}")).collect();
            format!("<td>{}</td>", esc(&parts.join(", ")))
        })
        .collect();
    let options = |values: Vec<String>| values.iter().map(|v| format!(r#"<option value="{0}">{0}</option>"#, esc(v))).collect::<String>();
    let areas = options(tree.keys().cloned().collect());
    let profile_options = options(all_profiles.into_iter().collect());
    let outcome_options = options(OutcomeName::ALL.iter().map(ToString::to_string).collect());
    let changes_html = if earlier.is_empty() {
        String::new()
    } else if changes.is_empty() {
        r#"<section id="changes"><h2>Changes against the earlier reports</h2><p>none</p></section>"#.to_owned()
    } else {
        let items: String = changes.iter().map(|c| format!("<li>{}</li>", esc(c))).collect();
        format!(r#"<section id="changes"><h2>Changes against the earlier reports ({})</h2><ul>{items}</ul></section>"#, changes.len())
    };
    let changed_filter = if earlier.is_empty() { "" } else { r#"<label><input type="checkbox" id="f-changed"> changed only</label>"# };
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dsh-conformance matrix</title>
<style>{STYLE}</style></head>
<body><h1>dsh-conformance matrix</h1>
<form id="filters">
<label>area <select id="f-area"><option value="">all</option>{areas}</select></label>
<label>profile <select id="f-profile"><option value="">all</option>{profile_options}</select></label>
<label>outcome <select id="f-outcome"><option value="">all</option>{outcome_options}</select></label>
{changed_filter} <span id="shown"></span>
</form>
{changes_html}
<table id="matrix"><thead><tr><th>rule / trial</th>{heads}</tr><tr class="totals"><th>all trials</th>{totals}</tr></thead>
{body}</table>
<script>{SCRIPT}</script>
</body></html>
"#
    )
}

fn label_of(trial: &TrialLine) -> String {
    match &trial.detail {
        Some(d) => format!("{}({d})", trial.outcome),
        None => trial.outcome.to_string(),
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:1em}table{border-collapse:collapse}\
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}\
.area-row th{background:#333;color:#fff}.rule th,.rule td{background:#eef}\
.pass{background:#dfd}.fail,.xpass,.error,.timeout,.crash{background:#fdd}.xfail{background:#ffd}\
.skip{background:#eee}.was{font-size:80%;color:#a00}pre{white-space:pre-wrap;max-width:60em;margin:0}\
#filters{margin:1em 0}label{margin-right:1em}";

/// Applies the filters of the URL fragment (and of the form, which writes the fragment).
const SCRIPT: &str = r#"
function params(){const p=new URLSearchParams(location.hash.slice(1));return p;}
function apply(){
  const p=params(),area=p.get('area')||'',profile=p.get('profile')||'',outcome=p.get('outcome')||'',
    changed=p.get('changed')==='1',only=p.get('t')||'';
  document.getElementById('f-area').value=area;document.getElementById('f-profile').value=profile;
  document.getElementById('f-outcome').value=outcome;
  const c=document.getElementById('f-changed');if(c)c.checked=changed;
  let shown=0;
  for(const row of document.querySelectorAll('tr.trial')){
    const ok=(!area||row.dataset.area===area)&&(!profile||row.dataset.profile===profile)&&
      (!outcome||row.dataset.outcomes.includes(' '+outcome+' '))&&(!changed||row.dataset.changed==='true')&&
      (!only||row.dataset.id===only);
    row.hidden=!ok;if(ok)shown++;
  }
  for(const body of document.querySelectorAll('tbody.area'))body.hidden=!!area&&body.dataset.area!==area;
  document.getElementById('shown').textContent=shown+' trial(s) shown';
}
function write(){
  const p=new URLSearchParams();
  for(const [k,id] of [['area','f-area'],['profile','f-profile'],['outcome','f-outcome']]){
    const v=document.getElementById(id).value;if(v)p.set(k,v);}
  const c=document.getElementById('f-changed');if(c&&c.checked)p.set('changed','1');
  location.hash=p.toString();
}
document.getElementById('filters').addEventListener('change',write);
window.addEventListener('hashchange',apply);apply();
"#;
