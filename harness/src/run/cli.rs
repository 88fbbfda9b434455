//! Command-line parsing: our own flags first, the rest handed to libtest-mimic's `Arguments`.
//!
//! ```text
//! dsh-harness [--adapter CMD] [--spec DIR] [--corpus DIR] [--sdk-corpus DIR] [--report FILE.jsonl] [--expectations FILE.yaml]
//!             [--junit FILE.xml] [--update-expectations FILE.yaml]
//!             [--step-timeout SECS] [--fail-fast] [libtest flags: FILTER --exact --skip F --list --test-threads N ...]
//! dsh-harness matrix REPORT.jsonl... [--update README.md] [--html FILE.html [--before REPORT.jsonl...]]
//! dsh-harness explain ID [--spec DIR]
//! dsh-harness probe FILE.yaml [--adapter CMD] [--spec DIR] [--step-timeout SECS]
//! dsh-harness explore --against CMD [--base CMD] [--cases N] [--seed S] [--out DIR] [--max-shrink N]
//! ```

use std::path::PathBuf;
use std::time::Duration;

/// The default spec directory: the workspace's `spec/`, fixed at build time.
pub const DEFAULT_SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec");
/// Default per-request timeout (`conformance/PROTOCOL.md` § Lifecycle).
pub const DEFAULT_STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// `--help`: the harness's own options, then libtest's.
pub const USAGE: &str = "\
dsh-harness: runs the dsh-tools conformance suite and prints a summary; exit status 0 exactly when no
outcome was unexpected (101 when one was, 2 when nothing could be run, 130/143 when interrupted).

USAGE:
    dsh-harness [OPTIONS] [FILTER] [LIBTEST OPTIONS]
    dsh-harness matrix REPORT.jsonl... [--update README.md] [--html FILE.html [--before REPORT.jsonl...]]
    dsh-harness explain ID [--spec DIR]
    dsh-harness probe FILE.yaml [--adapter CMD] [--spec DIR] [--step-timeout SECS]
    dsh-harness explore --against CMD [--base CMD] [--cases N] [--seed S] [--out DIR] [--max-shrink N]
                        [--code-mode SHARE]

OPTIONS:
    --adapter CMD          run against the adapter `sh -c CMD` (default: the reference, in-process)
    --spec DIR             the spec directory (default: the workspace's spec/); must exist
    --corpus DIR           the validation corpus (default: corpus/validation next to the spec); must exist
    --sdk-corpus DIR       the SDK corpus (default: corpus/sdk next to the spec); must exist
    --report FILE.jsonl    write the JSON Lines report (truncated at start; a footer says how the run ended)
    --expectations FILE    the implementation's expectations file (strict both ways); must exist
    --step-timeout SECS    how long one request may go unanswered, writing it included (default 10; a trial
                           moving a large value gets one more per 2 MiB it moves, at most 12 in all)
    --junit FILE.xml       also write JUnit XML: one testcase per trial (written with the report's footer)
    --fail-fast            stop at the first unexpected outcome: trials not yet started are not run,
                           trials in flight are abandoned (their adapters killed, their outcomes not
                           recorded); the report's footer says where it stopped; exit status 101; not
                           with --update-expectations
    --update-expectations FILE
                           after the run, rewrite FILE (may be the --expectations file) from the outcomes:
                           unchanged entries keep their reasons, passing ones are dropped, new failures get
                           a placeholder reason that fails the next run until someone writes a real one
    -h, --help             this text

SUBCOMMANDS:
    matrix                 print the conformance matrix of reports, or splice it into a Markdown file;
                           --html FILE writes the self-contained HTML matrix (--before: the reports to diff
                           against, in the same order)
    explain ID             print a trial's file and line, its rules (statement, notes), setup and steps
    probe FILE.yaml        run one scenario file written on the spot (id, level, description and rules may
                           be left out) against the in-process reference and, with --adapter, the adapter;
                           print both transcripts and their difference (exit 0 when both pass, 1 if not)
    explore                generate N scenarios (default 256) from seed S (default 0), run each on the
                           reference in-process (or --base CMD) and on --against CMD without expectations,
                           compare what they answered; shrink each distinct disagreement to a minimal
                           scenario, print it and write it (--out DIR, default a temp dir) with --against's
                           answers as expectations (exit 0 when they always agreed, 1 if not);
                           --code-mode SHARE puts that share of cases under a code mode with run_code

LIBTEST OPTIONS (the usual ones):
    FILTER                 run only trials whose name contains FILTER (one filter; load errors always run)
    --exact                filters match whole names
    --skip FILTER          leave out trials whose name contains FILTER
    --list                 list the trials instead of running them
    --ignored, --include-ignored
                           run the statically skipped trials (not applicable, SKIP expectations)
    --test-threads N       trials in parallel (default: in-process, two per core plus eight; with --adapter,
                           one per core, each thread with its own adapter process: pass 1 when two
                           processes of the adapter cannot run side by side)
    --format pretty|terse|json, --color auto|always|never, -q/--quiet, --nocapture

See README.md and conformance/PROTOCOL.md.
";

/// What to do.
#[derive(Debug)]
pub enum Command {
    /// Print `USAGE`.
    Help,
    /// Run the suite.
    Run(Box<RunOptions>),
    /// Print (or splice into a file) the conformance matrix of some reports.
    Matrix {
        /// The JSON Lines reports.
        reports: Vec<PathBuf>,
        /// A Markdown file whose `<!-- matrix:begin -->`/`<!-- matrix:end -->` section is replaced.
        update: Option<PathBuf>,
        /// Where to write the HTML matrix.
        html: Option<PathBuf>,
        /// Earlier reports the HTML matrix shows changes against.
        before: Vec<PathBuf>,
    },
    /// Run one scenario file against the reference and an adapter, side by side.
    Probe(super::probe::Probe),
    /// Compare two subjects on generated scenarios (`run/explore`).
    Explore(super::explore::Explore),
    /// Print what a trial checks.
    Explain {
        /// The trial id.
        id: String,
        /// The spec directory.
        spec: PathBuf,
    },
}

/// Options of a suite run.
#[derive(Debug)]
pub struct RunOptions {
    /// `sh -c` command line of an adapter; `None` runs the reference in-process.
    pub adapter: Option<String>,
    /// The spec directory.
    pub spec: PathBuf,
    /// The validation corpus directory (default: `corpus/validation` next to the spec directory).
    pub corpus: Option<PathBuf>,
    /// The SDK corpus directory (default: `corpus/sdk` next to the spec directory).
    pub sdk_corpus: Option<PathBuf>,
    /// Where to write the JSON Lines report.
    pub report: Option<PathBuf>,
    /// The expectations file.
    pub expectations: Option<PathBuf>,
    /// Where to write JUnit XML.
    pub junit: Option<PathBuf>,
    /// The expectations file to rewrite from the run's outcomes.
    pub update_expectations: Option<PathBuf>,
    /// Per-request timeout.
    pub step_timeout: Duration,
    /// libtest-mimic's arguments.
    pub libtest: libtest_mimic::Arguments,
    /// Whether `--test-threads` was given.
    pub threads_given: bool,
    /// `--fail-fast`: stop starting trials after the first unexpected outcome.
    pub fail_fast: bool,
}

/// Parses the process arguments (without the program name).
pub fn parse(args: Vec<String>) -> Result<Command, String> {
    if args.first().map(String::as_str) == Some("matrix") {
        return parse_matrix(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("explain") {
        return parse_explain(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("explore") {
        return super::explore::parse(&args[1..]).map(Command::Explore);
    }
    if args.first().map(String::as_str) == Some("probe") {
        return parse_probe(&args[1..]);
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return Ok(Command::Help);
    }
    let mut adapter = None;
    let mut spec = PathBuf::from(DEFAULT_SPEC);
    let mut report = None;
    let mut corpus = None;
    let mut sdk_corpus = None;
    let mut expectations = None;
    let mut junit = None;
    let mut update_expectations = None;
    let mut step_timeout = DEFAULT_STEP_TIMEOUT;
    let mut rest = vec!["dsh-harness".to_owned()];
    let mut threads_given = false;
    let mut fail_fast = false;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| inline.clone().or_else(|| it.next()).ok_or(format!("{name} needs a value"));
        match flag.as_str() {
            "--adapter" => adapter = Some(value("--adapter")?),
            "--spec" => spec = PathBuf::from(value("--spec")?),
            "--corpus" => corpus = Some(PathBuf::from(value("--corpus")?)),
            "--sdk-corpus" => sdk_corpus = Some(PathBuf::from(value("--sdk-corpus")?)),
            "--report" => report = Some(PathBuf::from(value("--report")?)),
            "--expectations" => expectations = Some(PathBuf::from(value("--expectations")?)),
            "--junit" => junit = Some(PathBuf::from(value("--junit")?)),
            "--update-expectations" => update_expectations = Some(PathBuf::from(value("--update-expectations")?)),
            "--step-timeout" => step_timeout = seconds(&value("--step-timeout")?)?,
            "--fail-fast" => fail_fast = true,
            _ => {
                threads_given |= flag == "--test-threads";
                rest.push(arg);
            }
        }
    }
    if fail_fast && update_expectations.is_some() {
        // A stopped run has no outcome for the trials it never started: a rewrite would drop their entries.
        return Err("--fail-fast and --update-expectations cannot be used together: a run stopped early has no \
                    outcome for the trials it did not start"
            .into());
    }
    let libtest = libtest_mimic::Arguments::from_iter(rest);
    Ok(Command::Run(Box::new(RunOptions {
        adapter,
        spec,
        corpus,
        sdk_corpus,
        report,
        expectations,
        junit,
        update_expectations,
        step_timeout,
        libtest,
        threads_given,
        fail_fast,
    })))
}

fn parse_matrix(args: &[String]) -> Result<Command, String> {
    let mut reports = Vec::new();
    let mut before = Vec::new();
    let mut in_before = false;
    let mut update = None;
    let mut html = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--update" => update = Some(PathBuf::from(it.next().ok_or("--update needs a file")?)),
            a if a.starts_with("--update=") => update = Some(PathBuf::from(&a["--update=".len()..])),
            "--html" => html = Some(PathBuf::from(it.next().ok_or("--html needs a file")?)),
            a if a.starts_with("--html=") => html = Some(PathBuf::from(&a["--html=".len()..])),
            "--before" => in_before = true,
            a if a.starts_with('-') => return Err(format!("matrix: unknown flag `{a}`")),
            a if in_before => before.push(PathBuf::from(a)),
            a => reports.push(PathBuf::from(a)),
        }
    }
    if reports.is_empty() {
        return Err("matrix needs at least one REPORT.jsonl".into());
    }
    if !before.is_empty() && html.is_none() {
        return Err("matrix: --before is for the HTML matrix: give --html FILE too".into());
    }
    Ok(Command::Matrix { reports, update, html, before })
}

fn parse_explain(args: &[String]) -> Result<Command, String> {
    let mut id = None;
    let mut spec = PathBuf::from(DEFAULT_SPEC);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--spec" => spec = PathBuf::from(it.next().ok_or("--spec needs a directory")?),
            a if a.starts_with("--spec=") => spec = PathBuf::from(&a["--spec=".len()..]),
            a if a.starts_with('-') => return Err(format!("explain: unknown flag `{a}`")),
            a if id.is_none() => id = Some(a.to_owned()),
            a => return Err(format!("explain takes one trial id (got a second: `{a}`)")),
        }
    }
    let id = id.ok_or("explain needs a trial id (see `dsh-harness --list`)")?;
    Ok(Command::Explain { id, spec })
}

fn parse_probe(args: &[String]) -> Result<Command, String> {
    let mut probe = super::probe::Probe {
        file: PathBuf::new(),
        adapter: None,
        spec: PathBuf::from(DEFAULT_SPEC),
        step_timeout: DEFAULT_STEP_TIMEOUT,
    };
    let mut file = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--adapter" => probe.adapter = Some(it.next().ok_or("--adapter needs a command")?.clone()),
            "--spec" => probe.spec = PathBuf::from(it.next().ok_or("--spec needs a directory")?),
            "--step-timeout" => probe.step_timeout = seconds(it.next().ok_or("--step-timeout needs a number of seconds")?)?,
            a if a.starts_with('-') => return Err(format!("probe: unknown flag `{a}`")),
            a if file.is_none() => file = Some(PathBuf::from(a)),
            a => return Err(format!("probe takes one scenario file (got a second: `{a}`)")),
        }
    }
    probe.file = file.ok_or("probe needs a scenario file (FILE.yaml)")?;
    if !probe.file.is_file() {
        return Err(format!("probe {}: no such file", probe.file.display()));
    }
    Ok(Command::Probe(probe))
}

/// A `--step-timeout` value.
fn seconds(text: &str) -> Result<Duration, String> {
    let secs: f64 = text.parse().map_err(|_| format!("--step-timeout: `{text}` is not a number"))?;
    Duration::try_from_secs_f64(secs).map_err(|_| format!("--step-timeout: `{text}` is not a duration"))
}
