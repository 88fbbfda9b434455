//! The `dsh-harness` binary: runs the conformance suite against the in-process reference or an adapter
//! process (`--adapter '<command line>'`), or prints the conformance matrix of reports (`matrix`).
//! See `run/cli.rs` for the usage.

use std::process::ExitCode;

use dsh_conformance::subject::{Subject, SubjectError};
use dsh_harness::adapter::AdapterSubject;
use dsh_harness::refserver::ReferenceSubject;
use dsh_harness::run::{self, cli, matrix, pool::Factory};

fn main() -> ExitCode {
    let mut args = Vec::new();
    for arg in std::env::args_os().skip(1) {
        match arg.into_string() {
            Ok(arg) => args.push(arg),
            Err(arg) => {
                eprintln!("dsh-harness: argument {arg:?} is not UTF-8");
                return ExitCode::from(2);
            }
        }
    }
    match cli::parse(args) {
        Err(e) => {
            eprintln!("dsh-harness: {e}");
            ExitCode::from(2)
        }
        Ok(cli::Command::Help) => {
            print!("{}", cli::USAGE);
            ExitCode::SUCCESS
        }
        Ok(cli::Command::Matrix { reports, update }) => matrix::main(&reports, update.as_deref()),
        Ok(cli::Command::Run(opts)) => {
            let (factory, subject): (Factory, String) = match opts.adapter.clone() {
                Some(command) => {
                    let timeout = opts.step_timeout;
                    let factory: Factory = Box::new(move || {
                        AdapterSubject::spawn(&command, timeout).map(|s| Box::new(s) as Box<dyn Subject>)
                    });
                    (factory, format!("adapter: {}", opts.adapter.as_deref().unwrap_or_default()))
                }
                None => (in_process(), "in-process".to_owned()),
            };
            run::run(*opts, factory, &subject)
        }
    }
}

/// The reference served in-process: one `ReferenceSubject` per pooled subject.
fn in_process() -> Factory {
    Box::new(|| {
        ReferenceSubject::new().map(|s| Box::new(s) as Box<dyn Subject>).map_err(|e| SubjectError::Crash {
            status: format!("the in-process reference could not start: {e}"),
            stderr_tail: String::new(),
        })
    })
}
