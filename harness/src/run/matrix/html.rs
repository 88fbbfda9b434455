//! The HTML matrix (`matrix --html FILE REPORTS… [--before EARLIER…]`): one self-contained file (no
//! network: styles and the small filter script are inline) that opens from a CI artifact.
//!
//! Columns are the implementations (one per report); rows are rule areas → rules → trials, a trial listed
//! under **every** rule it cites (its first row carries the `#t=<id>` anchor; a trial citing no rule is
//! filed under its source's area, `junit::source_area`). Each cell expands (`<details>`) to the trial's
//! file and line, the `dsh-harness explain` command, its message and, when earlier reports were given
//! (`--before`, in the same order), what it was before. Rule rows carry the per-rule coverage (passed /
//! trials citing the rule, per implementation); a rule of the catalog with no trial is `unit-tested` when
//! it is marked `observable: false` (its reason as tooltip), `uncovered` otherwise. Filters by area,
//! profile, outcome (or "not passing": FAIL, XPASS, ERROR, TIMEOUT, CRASH in any column) and "changed
//! only" live in the URL fragment (`#area=REG&outcome=not-passing`), so a filtered view is a link; a rule
//! or area a filter leaves without a trial collapses. `#t=<id>` is a permalink that shows that trial's
//! first row only. Rule statements, profiles, scenario lines and the uncovered rules come from the
//! workspace's spec (`cli::DEFAULT_SPEC`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
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

/// What the spec says of a scenario trial: its profile, and its file and line.
struct Known {
    profile: String,
    at: String,
}

/// The outcomes a "not passing" filter shows: those that fail a run.
const NOT_PASSING: [OutcomeName; 5] = [OutcomeName::Fail, OutcomeName::Xpass, OutcomeName::Error, OutcomeName::Timeout, OutcomeName::Crash];

/// Reads the reports (and the earlier ones), the spec's catalog and profiles, and writes the page.
pub fn write(reports: &[PathBuf], before: &[PathBuf], target: &Path) -> Result<(), String> {
    if !before.is_empty() && before.len() != reports.len() {
        return Err(format!("--before names {} report(s) for {} column(s): give one earlier report per report, in order", before.len(), reports.len()));
    }
    let columns = reports.iter().map(|p| read(p)).collect::<Result<Vec<_>, _>>()?;
    let earlier = before.iter().map(|p| read(p)).collect::<Result<Vec<_>, _>>()?;
    let spec = dsh_conformance::load_suite(Path::new(cli::DEFAULT_SPEC));
    let known: HashMap<String, Known> = spec
        .scenarios
        .iter()
        .map(|s| {
            let at = format!("{}:{}", s.file.display(), s.line);
            (s.scenario.id.clone(), Known { profile: s.scenario.profile().to_owned(), at })
        })
        .collect();
    let page = render(&columns, &earlier, &spec.catalog, &known);
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

/// The rule rows a trial goes under: every rule it cites, `(no rule)` in its source's area when none.
fn placed(trial: &TrialLine) -> Vec<(String, String)> {
    if trial.rules.is_empty() {
        return vec![(junit::source_area(&trial.file).to_owned(), "(no rule)".to_owned())];
    }
    let mut seen = BTreeSet::new();
    trial
        .rules
        .iter()
        .filter(|r| seen.insert(r.as_str()))
        .map(|r| (r.split('-').next().unwrap_or(r).to_owned(), r.clone()))
        .collect()
}

fn render(columns: &[Column], earlier: &[Column], catalog: &dsh_conformance::Catalog, known: &HashMap<String, Known>) -> String {
    // area → rule → trial ids: every rule each trial cites, as seen in any report.
    let mut tree: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut first: HashMap<&str, &TrialLine> = HashMap::new();
    for column in columns {
        for trial in column.trials.values() {
            first.entry(trial.id.as_str()).or_insert(trial);
            for (area, rule) in placed(trial) {
                tree.entry(area).or_default().entry(rule).or_default().insert(trial.id.clone());
            }
        }
    }
    for rule in catalog.rules.values() {
        tree.entry(rule.area.clone()).or_default().entry(rule.id.clone()).or_default();
    }
    let profile_of = |id: &str| known.get(id).map_or_else(|| dsh_conformance::scenario::DEFAULT_PROFILE.to_owned(), |k| k.profile.clone());
    let all_profiles: BTreeSet<String> = first.keys().map(|id| profile_of(id)).collect();
    let mut body = String::new();
    let mut changes = BTreeSet::new();
    let mut anchored: HashSet<&str> = HashSet::new();
    for (area, rules) in &tree {
        let _ = writeln!(body, r#"<tbody class="area" data-area="{}"><tr class="area-row"><th colspan="{}">{}</th></tr>"#, esc(area), columns.len() + 1, esc(area));
        for (rule, ids) in rules {
            let entry = catalog.get(rule);
            let statement = entry.map(|r| r.statement.trim().to_owned()).unwrap_or_default();
            let _ = write!(body, r#"<tr class="rule" data-area="{0}" data-rule="{1}"><th scope="row" title="{2}">{1}</th>"#, esc(area), esc(rule), esc(&statement));
            for column in columns {
                let counted: Vec<&TrialLine> = ids.iter().filter_map(|id| column.trials.get(id)).collect();
                let passed = counted.iter().filter(|t| matches!(t.outcome, OutcomeName::Pass)).count();
                match entry.filter(|r| ids.is_empty() && !r.observable) {
                    Some(r) => {
                        let why = r.reason.as_deref().unwrap_or("observable: false").trim();
                        let _ = write!(body, r#"<td class="coverage unit" title="{}">unit-tested</td>"#, esc(why));
                    }
                    None if ids.is_empty() => body.push_str(r#"<td class="coverage uncovered">uncovered</td>"#),
                    None => {
                        let _ = write!(body, r#"<td class="coverage" data-cited="{}">{passed}/{}</td>"#, counted.len(), counted.len());
                    }
                }
            }
            body.push_str("</tr>\n");
            for id in ids {
                let anchor = anchored.insert(id.as_str());
                body.push_str(&trial_row(id, area, rule, anchor, columns, earlier, known, &profile_of(id), &mut changes, first.get(id.as_str()).copied()));
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
    let not_passing = NOT_PASSING.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
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
<label>outcome <select id="f-outcome"><option value="">all</option><option value="not-passing" title="{not_passing}">not passing</option>{outcome_options}</select></label>
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

/// One trial's row under `rule`; `anchor`: its first row, which carries the permalink target.
#[allow(clippy::too_many_arguments)] // one row's whole context; a struct would only rename these
fn trial_row(
    id: &str,
    area: &str,
    rule: &str,
    anchor: bool,
    columns: &[Column],
    earlier: &[Column],
    known: &HashMap<String, Known>,
    profile: &str,
    changes: &mut BTreeSet<String>,
    any: Option<&TrialLine>,
) -> String {
    let mut outcomes = BTreeSet::new();
    let mut cells = String::new();
    let (mut changed, mut failing) = (false, false);
    let at = known.get(id).map_or_else(|| any.map(|t| t.file.clone()).unwrap_or_default(), |k| k.at.clone());
    for (n, column) in columns.iter().enumerate() {
        let was = earlier.get(n).and_then(|c| c.trials.get(id));
        let Some(trial) = column.trials.get(id) else {
            cells.push_str(r#"<td class="cell none">–</td>"#);
            continue;
        };
        outcomes.insert(trial.outcome.to_string());
        failing |= NOT_PASSING.contains(&trial.outcome);
        let label = label_of(trial);
        let moved = earlier.get(n).is_some() && was.map(label_of) != Some(label.clone());
        if moved {
            changed = true;
            let before = was.map_or("absent".to_owned(), label_of);
            changes.insert(format!("{id}: {}: {before} → {label}", column.title));
        }
        let class = trial.outcome.to_string().to_lowercase();
        let note = if moved { format!(r#" <span class="was">was {}</span>"#, esc(&was.map_or("absent".to_owned(), label_of))) } else { String::new() };
        let message = if trial.message.is_empty() { String::new() } else { format!("<pre>{}</pre>", esc(&trial.message)) };
        let _ = write!(
            cells,
            r#"<td class="cell {class}"><details><summary>{}{note}</summary><div class="where">{}<br><code>dsh-harness explain '{}'</code></div>{message}</details></td>"#,
            esc(&label),
            esc(&at),
            esc(id)
        );
    }
    let outcomes: Vec<String> = outcomes.into_iter().collect();
    let also: Vec<&str> = any.map(|t| t.rules.iter().map(String::as_str).filter(|r| *r != rule).collect()).unwrap_or_default();
    let also = if also.is_empty() { String::new() } else { format!(r#" <span class="also">also {}</span>"#, esc(&also.join(", "))) };
    let target = if anchor { format!(r#" id="t={}""#, esc(id)) } else { String::new() };
    format!(
        r##"<tr class="trial"{target} data-id="{0}" data-first="{anchor}" data-rule="{1}" data-area="{2}" data-profile="{3}" data-outcomes=" {4} " data-changed="{changed}" data-failing="{failing}"><td><a href="#t={0}">{0}</a>{also}</td>{cells}</tr>
"##,
        esc(id),
        esc(rule),
        esc(area),
        esc(profile),
        esc(&outcomes.join(" "))
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
.area-row th{background:#333;color:#fff}.rule th,.rule td{background:#eef}.rule td.uncovered{background:#fdd}\
.rule td.unit{background:#eee;font-style:italic}.also{font-size:80%;color:#666}\
.pass{background:#dfd}.fail,.xpass,.error,.timeout,.crash{background:#fdd}.xfail{background:#ffd}\
.skip{background:#eee}.was{font-size:80%;color:#a00}pre{white-space:pre-wrap;max-width:60em;margin:0}\
.where{font-size:85%;color:#444;margin:2px 0}#filters{margin:1em 0}label{margin-right:1em}";

/// Applies the filters of the URL fragment (and of the form, which writes the fragment), then collapses
/// the rules and areas they leave without a trial.
const SCRIPT: &str = r#"
function params(){const p=new URLSearchParams(location.hash.slice(1));return p;}
function apply(){
  const p=params(),area=p.get('area')||'',profile=p.get('profile')||'',outcome=p.get('outcome')||'',
    changed=p.get('changed')==='1',only=p.get('t')||'';
  document.getElementById('f-area').value=area;document.getElementById('f-profile').value=profile;
  document.getElementById('f-outcome').value=outcome;
  const c=document.getElementById('f-changed');if(c)c.checked=changed;
  const rowFilter=!!(profile||outcome||changed||only),shown=new Set();
  for(const row of document.querySelectorAll('tr.trial')){
    const ok=(!area||row.dataset.area===area)&&(!profile||row.dataset.profile===profile)&&
      (!outcome||(outcome==='not-passing'?row.dataset.failing==='true':row.dataset.outcomes.includes(' '+outcome+' ')))&&
      (!changed||row.dataset.changed==='true')&&(!only||(row.dataset.id===only&&row.dataset.first==='true'));
    row.hidden=!ok;if(ok)shown.add(row.dataset.id);
  }
  for(const body of document.querySelectorAll('tbody.area')){
    let rule=null,any=false,visible=0;
    const close=()=>{if(rule){rule.hidden=rowFilter&&!any;if(!rule.hidden)visible++;}};
    for(const row of body.rows){
      if(row.classList.contains('rule')){close();rule=row;any=false;}
      else if(row.classList.contains('trial')&&!row.hidden)any=true;
    }
    close();
    body.hidden=(!!area&&body.dataset.area!==area)||visible===0;
  }
  document.getElementById('shown').textContent=shown.size+' trial(s) shown';
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
