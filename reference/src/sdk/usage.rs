//! The usage text above the SDK declarations, in both languages, for the transport it documents: its name,
//! whether it attaches image results after the run, whether it schedules program calls, and what it says
//! of state between runs. With
//! [`SdkUsage::RUN_CODE`] it is upstream's text byte for byte (the registry's `run_code`); another transport
//! (dsh-codemode's `code_run`) gets the same contract under its own name, with no sentence that is not true
//! of it — the text is written from these parameters, never patched afterwards.
//!
//! Spec: SDK-001, SDK-003, CDM-016, CDM-045.

/// What a program's state does between two runs of the transport, as the usage text tells the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProgramState {
    /// Say nothing (upstream's text: `run_code` always runs fresh, and its text does not say so).
    Unstated,
    /// Every run starts fresh.
    Fresh,
    /// What a run defines at top level survives to the same agent's next run.
    Persistent,
}

/// The transport an SDK section documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdkUsage<'a> {
    /// The tool the model calls with a program.
    pub transport: &'a str,
    /// Whether image results of program calls are attached after the run.
    pub attaches_images: bool,
    /// Whether program calls are scheduled (concurrency-safe ones overlap, mutating ones run alone).
    pub schedules_calls: bool,
    /// What the text says of state between runs.
    pub state: ProgramState,
}

impl SdkUsage<'static> {
    /// Upstream's registry transport: `run_code`, images attached, calls scheduled, state unstated.
    pub const RUN_CODE: Self = Self { transport: "run_code", attaches_images: true, schedules_calls: true, state: ProgramState::Unstated };
}

const IMAGES: &str = "A successful tool result containing an image is attached after the run so you can inspect it on the next step; every other intermediate result stays out of the conversation, so extract just what you need.";
const NO_IMAGES: &str = "Every intermediate result stays out of the conversation, so extract just what you need.";

const SCHEDULED: &str = " (safe calls run concurrently; mutating calls run alone, in submission order)";
const UNSCHEDULED: &str = " (calls are not scheduled: nothing holds a mutating call back, so overlap only calls that change nothing)";

const TYPESCRIPT_BODY: &str = " two required arguments: `code` — the body of an async TypeScript function (erasable syntax only — no `enum` or namespaces; type annotations are advisory, the code runs type-stripped) — and `description`, a short summary of what the program does. Inside the program:

- Call tools as `await tools.name(args)` — quoted access for exotic names: `tools[\"my-tool\"](args)`. Every call resolves to the tool's typed canonical JSON value. Tool arguments must be lossless JSON.
- A FAILED tool call rejects with `ToolCallError`, whose `toolName` identifies the failed tool and whose `message` is human-readable — `try/catch` it to handle and continue.
- Independent read-only calls MAY overlap under `Promise.all`";

const TYPESCRIPT_REST: &str = ". Sequence dependent work with `await`.
- Emit results with `return` and/or `console.log(...)`. Only what you print or return is program output. ";

const PYTHON_BODY: &str = " two required arguments: `code` — the body of an async Python function (top-level `await` and `return` both work) — and `description`, a short summary of what the program does. At run time exactly two of the names declared below are bound: `tools` and `ToolCallError`. Everything else is a STATIC STUB describing argument and return types — in particular the `TypedDict` classes do NOT exist at run time, so build arguments as plain `dict`/`list` JSON values: `await tools.name({\"field\": 1})`, never `FooArgs(field=1)`, which raises `NameError`. Inside the program:

- Call tools as `await tools.name(args)` — subscript access for exotic, reserved, or underscore-leading names: `await tools[\"my-tool\"](args)`. Every call resolves to the tool's typed canonical JSON value (each method's return type below). Tool arguments must be lossless JSON.
- A FAILED tool call raises `ToolCallError`, whose `toolName` identifies the failed tool and whose message is human-readable — wrap in `try/except` to handle and continue.
- Independent read-only calls MAY overlap under `asyncio.gather`";

const PYTHON_REST: &str = ". Sequence dependent work with `await`.
- Emit the run's answer with `print(...)` and/or a top-level `return <value>`; the returned value must be lossless JSON. Only what you print and return is program output. ";

/// The TypeScript usage text.
pub(super) fn push_typescript(out: &mut String, usage: &SdkUsage<'_>) {
    push(out, usage, [TYPESCRIPT_BODY, TYPESCRIPT_REST], "variables, functions and classes");
}

/// The Python usage text.
pub(super) fn push_python(out: &mut String, usage: &SdkUsage<'_>) {
    push(out, usage, [PYTHON_BODY, PYTHON_REST], "variables, functions, classes and imports");
}

fn push(out: &mut String, usage: &SdkUsage<'_>, [body, rest]: [&str; 2], kept: &str) {
    let transport = usage.transport;
    out.push_str("## Writing code for ");
    out.push_str(transport);
    out.push_str("\n\n`");
    out.push_str(transport);
    out.push_str("` takes");
    out.push_str(body);
    out.push_str(if usage.schedules_calls { SCHEDULED } else { UNSCHEDULED });
    out.push_str(rest);
    out.push_str(if usage.attaches_images { IMAGES } else { NO_IMAGES });
    match usage.state {
        ProgramState::Unstated => {}
        ProgramState::Fresh => {
            out.push_str("\n- Every `");
            out.push_str(transport);
            out.push_str("` call starts fresh: nothing a program defines survives to the next call.");
        }
        ProgramState::Persistent => {
            out.push_str("\n- State persists between your `");
            out.push_str(transport);
            out.push_str("` calls: the top-level ");
            out.push_str(kept);
            out.push_str(" a program defines are still there in your next call. A run that times out, is aborted or overflows its output discards them.");
        }
    }
    out.push_str("\n\nThe available tools:");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_transport_is_named_alone_and_told_what_it_does() {
        for push in [push_typescript, push_python] {
            for state in [ProgramState::Unstated, ProgramState::Fresh, ProgramState::Persistent] {
                let mut text = String::new();
                push(&mut text, &SdkUsage { transport: "code_run", attaches_images: false, schedules_calls: false, state });
                assert!(!text.contains("run_code") && text.starts_with("## Writing code for code_run\n\n`code_run` takes"), "{text}");
                assert!(!text.contains("mutating calls run alone"), "{text}");
                assert!(!text.contains("image") && text.ends_with("\n\nThe available tools:"), "{text}");
                assert_eq!(text.contains("State persists between your `code_run` calls"), state == ProgramState::Persistent, "{text}");
                assert_eq!(text.contains("call starts fresh"), state == ProgramState::Fresh, "{text}");
            }
        }
    }
}
