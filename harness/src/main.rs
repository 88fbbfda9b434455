//! The `dsh-harness` binary: runs the conformance suite against the in-process reference or an adapter
//! process (`--adapter '<command line>'`), or prints the conformance matrix of reports (`matrix`).
//! See `run/cli.rs` for the usage.

use std::process::ExitCode;

use dsh_conformance::subject::Subject;
use dsh_harness::adapter::AdapterSubject;
use dsh_harness::run::{self, cli, explain, explore, matrix, pool::{self, Factory}, probe};

/// mimalloc, not the system allocator: a 100,000-level corpus value is millions of small maps built and
/// freed, and glibc's free-list coalescing was a fifth of those trials (the reference library itself
/// leaves the choice to whoever embeds it).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    dsh_harness::allocator::keep_freed_memory();
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
        Ok(cli::Command::Matrix { reports, update, html, before }) => {
            matrix::main(&reports, update.as_deref(), html.as_deref(), &before)
        }
        Ok(cli::Command::Explain { id, spec }) => explain::main(&id, &spec),
        Ok(cli::Command::Probe(p)) => probe::main(p),
        Ok(cli::Command::Explore(e)) => explore::main(e),
        Ok(cli::Command::Run(opts)) => {
            let (factory, subject): (Factory, String) = match opts.adapter.clone() {
                Some(command) => {
                    let timeout = opts.step_timeout;
                    let factory: Factory = Box::new(move || {
                        AdapterSubject::spawn(&command, timeout).map(|s| Box::new(s) as Box<dyn Subject>)
                    });
                    (factory, format!("adapter: {}", opts.adapter.as_deref().unwrap_or_default()))
                }
                None => (pool::in_process(), "in-process".to_owned()),
            };
            run::run(*opts, factory, &subject)
        }
    }
}
