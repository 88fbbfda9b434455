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

/// mimalloc, not the system allocator: a 100,000-level corpus value is millions of small maps built and
/// freed, and glibc's free-list coalescing was a fifth of those trials (the reference library itself
/// leaves the choice to whoever embeds it).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    dsh_harness::allocator::keep_freed_memory();
    // Deep JSON is parsed, handled and written on threads with big stacks.
    let serving = thread::Builder::new()
        .name("adapter".into())
        .stack_size(runtime::THREAD_STACK)
        .spawn(|| serve(io::stdin().lock(), io::stdout()));
    match serving.map(|t| t.join()) {
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

/// Serves requests from `input` until EOF, writing every message to `output` in one ordered stream.
fn serve(mut input: impl BufRead, output: impl Write + Send + 'static) -> io::Result<()> {
    let runtime = runtime::build()?;
    let (out, outgoing) = mpsc::channel::<Value>();
    let writer = thread::Builder::new()
        .name("stdout".into())
        .stack_size(runtime::THREAD_STACK)
        .spawn(move || write_all(outgoing, output))?;
    let sink = out.clone();
    let server = Server::new(move |notification| {
        // A send fails only once the writer is gone (output closed): nothing left to tell.
        let _ = sink.send(notification);
    });
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
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
    eprintln!("dsh-reference-adapter: stdin closed; closing sessions");
    runtime.block_on(server.close_all());
    drop(server);
    drop(out);
    runtime.shutdown_background();
    match writer.join() {
        Ok(result) => result,
        Err(_) => Err(io::Error::other("the output writer panicked")),
    }
}

/// Writes each message as one line, flushing after each.
fn write_all(outgoing: mpsc::Receiver<Value>, output: impl Write) -> io::Result<()> {
    let mut output = BufWriter::new(output);
    for message in outgoing {
        deep::write_compact(&mut output, &message, usize::MAX)?;
        output.write_all(b"\n")?;
        output.flush()?;
        deep::dismantle(message);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The binary's own loop, driven through in-memory input and output.

    use std::io::Cursor;
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap_or_else(|p| p.into_inner()).extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Runs `serve` over `input` on a big-stack thread; returns the output lines, parsed.
    fn exchange(input: String) -> Vec<Value> {
        let out = Shared::default();
        let sink = out.clone();
        let served = thread::Builder::new()
            .stack_size(runtime::THREAD_STACK)
            .spawn(move || serve(Cursor::new(input.into_bytes()), sink))
            .expect("spawn")
            .join()
            .expect("no panic");
        served.expect("serve ends cleanly at EOF");
        let bytes = out.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let text = String::from_utf8(bytes).expect("utf-8");
        text.lines().map(|l| deep::parse(l).expect("every line is JSON")).collect()
    }

    fn depth(mut v: &Value) -> usize {
        let mut d = 0;
        while let Some(inner) = v.as_array().and_then(|a| a.first()) {
            d += 1;
            v = inner;
        }
        d
    }

    #[test]
    fn garbage_gets_a_parse_error_and_the_loop_goes_on() {
        let input = "{not json\n\n[1,2\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\",\"params\":{}}\n";
        let lines = exchange(input.to_owned());
        assert_eq!(lines.len(), 3, "{lines:?}");
        for parse_error in &lines[..2] {
            assert_eq!(parse_error["id"], Value::Null);
            assert_eq!(parse_error["error"]["code"], PARSE_ERROR);
        }
        assert_eq!(lines[2]["id"], 7);
        assert_eq!(lines[2]["result"]["protocolVersion"], "1.0");
    }

    #[test]
    fn a_100000_deep_value_crosses_both_ways() {
        let deep_args = format!("{}0{}", "[".repeat(100_000), "]".repeat(100_000));
        let setup = r#"{"tools":[{"name":"echo","rawParameters":{},"output":{"schema":{},"render":{"content":[]}},"body":[{"returnArgument":""}]}]}"#;
        let input = [
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"session/open","params":{{"session":"s","setup":{setup}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":2,"method":"call/start","params":{{"session":"s","callId":"c","name":"echo","arguments":{deep_args}}}}}"#),
            r#"{"jsonrpc":"2.0","id":3,"method":"call/await","params":{"session":"s","callId":"c"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":4,"method":"session/close","params":{"session":"s"}}"#.to_owned(),
        ]
        .join("\n");
        let lines = exchange(input);
        let awaited = lines.iter().find(|l| l["id"] == 3).expect("call/await answered");
        assert_eq!(awaited["result"]["result"]["isError"], false, "{}", deep::to_line(&awaited["result"]["result"]["error"]));
        assert_eq!(depth(&awaited["result"]["result"]["value"]), 100_000);
        let event = lines.iter().find(|l| l["method"] == "event").expect("the result event");
        assert_eq!(depth(&event["params"]["event"]["result"]["value"]), 100_000);
        let closed = lines.iter().find(|l| l["id"] == 4).expect("close answered");
        assert_eq!(closed["result"]["leaks"]["pendingCalls"], serde_json::json!([]));
        for line in lines {
            deep::dismantle(line);
        }
    }

    #[test]
    fn the_binary_and_the_in_process_subject_give_the_same_exchange() {
        use dsh_conformance::subject::Subject;
        use serde_json::json;
        let setup = json!({ "agents": ["a"], "tools": [
            { "name": "t", "rawParameters": {}, "output": { "schema": {}, "render": "json" },
              "body": [{ "emit": "in" }, { "waitOrAbort": "g" }, { "emitSignal": "out" }, { "returnArgument": "x" }] },
            { "name": "dup", "agent": "a", "register": false, "rawParameters": {}, "output": { "schema": {}, "render": "text" } },
        ], "hooks": { "preExecute": [{ "id": "p", "decide": { "afterNext": "next" } }] } });
        let requests = [
            ("session/open", json!({ "session": "s", "setup": setup })),
            ("call/start", json!({ "session": "s", "callId": "c1", "name": "t", "arguments": { "x": 1 } })),
            ("call/start", json!({ "session": "s", "callId": "c2", "name": "t", "arguments": { "x": 2 }, "parent": "c1" })),
            ("call/abort", json!({ "session": "s", "callId": "c1" })),
            ("gate/open", json!({ "session": "s", "gate": "g" })),
            ("call/await", json!({ "session": "s", "callId": "c1" })),
            ("call/await", json!({ "session": "s", "callId": "c2" })),
            ("tools/register", json!({ "session": "s", "tool": "dup" })),
            ("tools/register", json!({ "session": "s", "tool": "dup" })),
            ("tools/schemas", json!({ "session": "s", "agent": "a" })),
            ("no/such", json!({ "session": "s" })),
            ("session/close", json!({ "session": "s" })),
        ];
        // Through the binary's loop: (events before each response, the response's result or error).
        let input: Vec<String> = requests
            .iter()
            .enumerate()
            .map(|(i, (m, p))| json!({ "jsonrpc": "2.0", "id": i + 1, "method": m, "params": p }).to_string())
            .collect();
        let mut binary = Vec::new();
        let mut events = Vec::new();
        for line in exchange(input.join("\n")) {
            match line.get("id") {
                None => events.push(line["params"].clone()),
                Some(_) => {
                    let outcome = line.get("result").cloned().unwrap_or_else(|| json!({ "error": line["error"]["code"] }));
                    binary.push((std::mem::take(&mut events), outcome));
                }
            }
        }
        let mut subject = dsh_harness::refserver::ReferenceSubject::new().expect("subject");
        let in_process: Vec<_> = requests
            .iter()
            .map(|(m, p)| {
                let reply = subject.request(m, p.clone(), std::time::Duration::from_secs(10)).expect("reply");
                let outcome = reply.result.unwrap_or_else(|e| json!({ "error": e.code }));
                (reply.events, outcome)
            })
            .collect();
        assert_eq!(binary, in_process);
    }
}
