//! Validation of every message the harness receives against `spec/schema/protocol/` (embedded,
//! compiled once into a [`MessageValidator`]).
//!
//! Depth: the protocol schemas leave every payload that may nest arbitrarily deep unconstrained
//! (`value`, `meta`, `parameters`, `arguments`, `sections`, `decision`, error `data`, the compiled `schema`), so validation
//! never descends into them and is safe on a normal stack for 100,000-deep values. Error messages are
//! masked (they never print the instance), because printing a deep value is recursive.

use std::collections::HashMap;
use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

use crate::schemas::compile;

macro_rules! protocol_schemas {
    ($($name:literal),* $(,)?) => {
        /// Every protocol schema: (file name without `.schema.json`, text).
        pub const PROTOCOL_SCHEMAS: &[(&str, &str)] = &[
            $(($name, include_str!(concat!("../../spec/schema/protocol/", $name, ".schema.json"))),)*
        ];
    };
}

protocol_schemas!(
    "initialize.result",
    "session-open.result",
    "tools-register.result",
    "hooks-add.result",
    "scope-restrict.result",
    "scope-presentAs.result",
    "scope-open.result",
    "scope-drop.result",
    "plugin-dispose.result",
    "registry-dispose.result",
    "approval-unmount.result",
    "handle-dispose.result",
    "tools-get.result",
    "tools-schemas.result",
    "tools-executionMode.result",
    "tools-present.result",
    "tools-definition.result",
    "call-start.result",
    "call-await.result",
    "call-abort.result",
    "gate-open.result",
    "events-waitFor.result",
    "prompt-assemble.result",
    "sdk-render.result",
    "codemode-environments.result",
    "schema-check.result",
    "schema-validate.result",
    "schema-compile.result",
    "session-close.result",
    "leaks",
    "response",
    "error-response",
    "event",
    "request",
);

/// Compiled validators for the messages an adapter sends.
pub struct MessageValidator {
    by_name: HashMap<&'static str, Validator>,
    event_params: Validator,
}

impl std::fmt::Debug for MessageValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageValidator").field("schemas", &self.by_name.len()).finish()
    }
}

impl MessageValidator {
    /// Compiles every protocol schema.
    pub fn new() -> Result<MessageValidator, String> {
        let mut by_name = HashMap::new();
        let mut event_schema = None;
        for (name, text) in PROTOCOL_SCHEMAS {
            by_name.insert(*name, compile(name, text)?);
            if *name == "event" {
                event_schema = Some(text);
            }
        }
        let event: Value = serde_json::from_str(event_schema.ok_or("no event schema")?).map_err(|e| e.to_string())?;
        // The `params` of the notification, with the same `$defs`: subjects hand over params only.
        let mut params = event.pointer("/properties/params").cloned().ok_or("event schema has no params")?;
        if let (Value::Object(p), Some(defs)) = (&mut params, event.get("$defs")) {
            p.insert("$defs".into(), defs.clone());
            p.insert("$schema".into(), Value::String("https://json-schema.org/draft/2020-12/schema".into()));
        }
        let event_params = jsonschema::draft202012::new(&params).map_err(|e| format!("event params: {e}"))?;
        Ok(MessageValidator { by_name, event_params })
    }

    /// The process-wide instance.
    pub fn shared() -> Result<&'static MessageValidator, String> {
        static V: OnceLock<Result<MessageValidator, String>> = OnceLock::new();
        V.get_or_init(MessageValidator::new).as_ref().map_err(Clone::clone)
    }

    fn check(validator: &Validator, what: &str, value: &Value) -> Result<(), String> {
        let errors: Vec<String> = validator
            .iter_errors(value)
            .take(5)
            .map(|e| {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() { String::from("(root)") } else { path };
                format!("{at}: {}", e.masked_with("the value"))
            })
            .collect();
        if errors.is_empty() { Ok(()) } else { Err(format!("{what} does not match its schema: {}", errors.join("; "))) }
    }

    fn named(&self, name: &str) -> Result<&Validator, String> {
        self.by_name.get(name).ok_or_else(|| format!("no protocol schema {name:?}"))
    }

    /// Validates the `result` of a successful response to `method` (`initialize`, `tools/get`, ...).
    pub fn result(&self, method: &str, result: &Value) -> Result<(), String> {
        let name = format!("{}.result", method.replace('/', "-"));
        Self::check(self.named(&name)?, &format!("the result of {method}"), result)
    }

    /// Validates the `params` of an `event` notification.
    pub fn event_params(&self, params: &Value) -> Result<(), String> {
        Self::check(&self.event_params, "an event notification", params)
    }

    /// Validates a whole message by schema name (`response`, `error-response`, `event`, `request`, ...).
    pub fn message(&self, schema: &str, message: &Value) -> Result<(), String> {
        Self::check(self.named(schema)?, schema, message)
    }
}
