//! The reference `dsh-tools` served over the adapter protocol on stdio (`conformance/PROTOCOL.md`):
//! requests one per line on stdin, notifications and responses one per line on stdout through one
//! ordered channel, logs on stderr. Exits 0 on stdin EOF after closing every session.

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;
use std::sync::mpsc;
use std::thread;

use dsh_harness::refserver::rpc::{self, Failure, PARSE_ERROR};
use dsh_harness::refserver::{Server, deep, runtime};
use serde_json::Value;

fn main() -> ExitCode {
    // Deep JSON is parsed, handled and written on threads with big stacks.
    let main = thread::Builder::new().name("adapter".into()).stack_size(runtime::THREAD_STACK).spawn(serve);
    match main.map(|t| t.join()) {
        Ok(Ok(Ok(()))) => ExitCode::SUCCESS,
        Ok(Ok(Err(e))) => {
            eprintln!("dsh-reference-adapter: {e}");
            ExitCode::FAILURE
        }
        Ok(Err(_)) | Err(_) => {
            eprintln!("dsh-reference-adapter: the serving thread failed");
            ExitCode::FAILURE
        }
    }
}

fn serve() -> io::Result<()> {
    let runtime = runtime::build()?;
    let (out, outgoing) = mpsc::channel::<Value>();
    let writer = thread::Builder::new().name("stdout".into()).stack_size(runtime::THREAD_STACK).spawn(move || write_all(outgoing))?;
    let sink = out.clone();
    let server = Server::new(move |notification| {
        // A send fails only once the writer is gone (stdout closed): nothing left to tell.
        let _ = sink.send(notification);
    });
    let mut stdin = io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        if stdin.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let text = match std::str::from_utf8(&line) {
            Ok(text) => text.trim(),
            Err(e) => {
                let _ = out.send(rpc::error(Value::Null, Failure::new(PARSE_ERROR, format!("not UTF-8: {e}"))));
                continue;
            }
        };
        if text.is_empty() {
            continue;
        }
        match deep::parse(text) {
            Ok(request) => {
                runtime.block_on(server.handle_with(&request, |response| {
                    let _ = out.send(response);
                }));
                deep::dismantle(request);
            }
            Err(e) => {
                let _ = out.send(rpc::error(Value::Null, Failure::new(PARSE_ERROR, format!("parse error: {e}"))));
            }
        }
    }
    runtime.block_on(server.close_all());
    drop(server);
    drop(out);
    runtime.shutdown_background();
    match writer.join() {
        Ok(result) => result,
        Err(_) => Err(io::Error::other("the stdout writer panicked")),
    }
}

/// Writes each message as one line, flushing after each.
fn write_all(outgoing: mpsc::Receiver<Value>) -> io::Result<()> {
    let mut stdout = BufWriter::new(io::stdout().lock());
    for message in outgoing {
        deep::write_compact(&mut stdout, &message, usize::MAX)?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
        deep::dismantle(message);
    }
    Ok(())
}
