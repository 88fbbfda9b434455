//! The conformance suite as a `cargo test` / nextest target (`harness = false`): every scenario,
//! validation-corpus group and SDK-corpus case is its own libtest-mimic trial against the in-process
//! reference, so `cargo test -p dsh-harness --test conformance -- pipe-` runs a slice and
//! `cargo nextest run -p dsh-harness --test conformance` lists and runs the trials one by one, each in a
//! process of its own (an exact filter loads only the source of its trial: `run::suite::Sources`).
//!
//! It is the `dsh-harness` runner itself (`run::run`, the harness flags accepted too, e.g. `--report`),
//! with a step timeout of 300 s unless one is given: this is a debug build judging outcomes, and the
//! 100,000-level corpus groups take seconds a step here. `tests/suite.rs` stays for the in-process vs
//! adapter comparison.

use std::process::ExitCode;

use dsh_harness::run::{self, cli, pool};

fn main() -> ExitCode {
    let mut args = vec!["--step-timeout".to_owned(), "300".to_owned()];
    for arg in std::env::args_os().skip(1) {
        match arg.into_string() {
            Ok(arg) => args.push(arg),
            Err(arg) => {
                eprintln!("conformance: argument {arg:?} is not UTF-8");
                return ExitCode::from(2);
            }
        }
    }
    match cli::parse(args) {
        Ok(cli::Command::Run(opts)) if opts.adapter.is_none() => run::run(*opts, pool::in_process(), "in-process"),
        Ok(cli::Command::Run(_)) => {
            eprintln!("conformance: this target runs the in-process reference; use dsh-harness --adapter for an adapter");
            ExitCode::from(2)
        }
        Ok(cli::Command::Help) => {
            print!("{}", cli::USAGE);
            ExitCode::SUCCESS
        }
        Ok(_) => {
            eprintln!("conformance: subcommands belong to dsh-harness (cargo run -p dsh-harness -- ...)");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("conformance: {e}");
            ExitCode::from(2)
        }
    }
}
