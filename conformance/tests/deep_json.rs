//! 100,000-deep values cross the harness intact on a normal 8 MiB thread: parse → validate → compare →
//! print → drop (by dismantling).

use dsh_conformance::json::{self, Deep};
use dsh_conformance::messages::MessageValidator;

const DEPTH: usize = 100_000;

fn on_8mib_thread(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(8 * 1024 * 1024)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("thread survived");
}

fn deep_array_line() -> String {
    let mut s = String::from(r#"{"eventsThrough":0,"result":{"isError":false,"value":"#);
    s.push_str(&"[".repeat(DEPTH));
    s.push_str(&"]".repeat(DEPTH));
    s.push_str(r#","content":[{"type":"text","text":"x"}]}}"#);
    s
}

fn deep_object_line() -> String {
    let mut s = String::from(r#"{"session":"s","seq":1,"event":{"type":"mark","label":"l","decision":"#);
    s.push_str(&r#"{"a":"#.repeat(DEPTH));
    s.push_str("null");
    s.push_str(&"}".repeat(DEPTH));
    s.push_str("}}");
    s
}

#[test]
fn deep_result_parses_validates_compares_prints_and_drops() {
    on_8mib_thread(|| {
        let line = deep_array_line();
        let a = Deep(json::parse_line(&line).expect("parse"));
        let b = Deep(json::parse_line(&line).expect("parse"));
        let validator = MessageValidator::new().expect("schemas");
        validator.result("call/await", &a.0).expect("valid");
        assert!(json::deep_eq(&a.0, &b.0));
        assert_eq!(dsh_conformance::matchers::check(&a.0, &b.0, dsh_conformance::matchers::MatchMode::Exact), Ok(()));
        assert_eq!(json::depth(&a.0), DEPTH + 1);
        assert_eq!(json::write(&a.0, false), line);
        let pretty = json::write(&a.0, true);
        assert!(pretty.len() > line.len());
        drop(a);
        drop(b);
    });
}

#[test]
fn deep_event_parses_validates_and_drops() {
    on_8mib_thread(|| {
        let line = deep_object_line();
        let v = Deep(json::parse_line(&line).expect("parse"));
        MessageValidator::new().expect("schemas").event_params(&v.0).expect("valid");
        assert_eq!(json::write(&v.0, false), line);
    });
}

#[test]
fn malformed_deep_line_is_an_error_not_a_crash() {
    on_8mib_thread(|| {
        let mut line = String::from("[");
        line.push_str(&"[".repeat(DEPTH));
        line.push_str(&"]".repeat(DEPTH));
        line.push_str(", }");
        assert!(json::parse_line(&line).is_err());
    });
}
