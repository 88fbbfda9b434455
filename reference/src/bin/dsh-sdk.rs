//! `dsh-sdk --language typescript|python FILE`: print the Code Mode SDK section for a JSON tool list
//! (a list of `{name, description, parameters, output}` or an MCP `tools/list` result; `-` is stdin),
//! exactly the text the renderer returns followed by one newline. Bad input exits 2 with a message
//! naming the tool and the JSON path.

use std::io::{Read, Write};
use std::process::ExitCode;

use dsh_tools::sdk::{parse_tool_list, render_tools_sdk, render_tools_sdk_py};
use serde::Deserialize;

const USAGE: &str = "usage: dsh-sdk --language typescript|python FILE   (FILE may be - for stdin)";

#[derive(Clone, Copy)]
enum Language {
    TypeScript,
    Python,
}

fn parse_args(args: &[String]) -> Result<(Language, String), String> {
    let mut language = None;
    let mut file = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let value = if arg == "--language" || arg == "-l" {
            Some(iter.next().ok_or("--language needs a value")?.as_str())
        } else {
            arg.strip_prefix("--language=")
        };
        match value {
            Some("typescript" | "ts") => language = Some(Language::TypeScript),
            Some("python" | "py") => language = Some(Language::Python),
            Some(other) => return Err(format!("unknown language {other:?} (typescript or python)")),
            None if file.is_none() && (arg == "-" || !arg.starts_with('-')) => file = Some(arg.clone()),
            None => return Err(format!("unexpected argument {arg:?}")),
        }
    }
    Ok((language.ok_or("--language is required")?, file.ok_or("FILE is required")?))
}

/// Everything after argument parsing; runs on a thread with a large stack so deep schemas parse,
/// render and drop without overflowing.
fn run(language: Language, file: &str) -> Result<String, String> {
    let mut text = String::new();
    if file == "-" {
        std::io::stdin().read_to_string(&mut text).map_err(|e| format!("stdin: {e}"))?;
    } else {
        text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    }
    let mut deserializer = serde_json::Deserializer::from_str(&text);
    deserializer.disable_recursion_limit();
    let value = serde_json::Value::deserialize(&mut deserializer).map_err(|e| format!("{file}: invalid JSON: {e}"))?;
    deserializer.end().map_err(|e| format!("{file}: invalid JSON: {e}"))?;
    let tools = parse_tool_list(value).map_err(|e| format!("{file}: {e}"))?;
    Ok(match language {
        Language::TypeScript => render_tools_sdk(&tools),
        Language::Python => render_tools_sdk_py(&tools),
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let (language, file) = match parse_args(&args) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("dsh-sdk: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let worker = std::thread::Builder::new().stack_size(512 << 20).spawn(move || run(language, &file));
    let outcome = match worker {
        Ok(handle) => handle.join().unwrap_or_else(|_| Err("internal error".to_owned())),
        Err(e) => Err(format!("cannot start worker thread: {e}")),
    };
    match outcome {
        Ok(text) => {
            let mut stdout = std::io::stdout().lock();
            if writeln!(stdout, "{text}").and_then(|()| stdout.flush()).is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("dsh-sdk: {message}");
            ExitCode::from(2)
        }
    }
}
