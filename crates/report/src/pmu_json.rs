//! `pmu --json`, schema `numasleuth.pmu/1`, and reading such a file back
//! for `pmu diff`.
//!
//! Kept names: `schema`, `target` (`kind` `command` with `argv`, `pid`,
//! `exit_code`, `signal`; or `kind` `pid` with `pid`, `threads_attached`,
//! `process_exited`), `duration_s`, `events[]` (`name`, `pmu`, `value`,
//! `time_enabled_ns`, `time_running_ns`, `scaled_value`, `scaled`),
//! `unavailable[]` (`name`, `pmu`, `why`), `ipc`, `notes`. Fields may be
//! added, never renamed. `scaled_value` is null for an event that was
//! enabled but never got a counter; `ipc` is null without cycles and
//! instructions.
//!
//! Reading back treats the file as untrusted: the schema is checked before
//! anything else is parsed, and only the fields `diff` uses are kept.

use numasleuth_analyze::pmu::diff::{Counted, RunCounts};
use numasleuth_analyze::pmu::PmuSummary;
use serde::Deserialize;
use thiserror::Error;

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.pmu/1";

/// Why a file is not a `numasleuth.pmu/1` document `diff` can read. The
/// caller names the file first: each message starts with a verb.
#[derive(Debug, Error)]
pub enum PmuFileError {
    #[error("is not a JSON object, so not a {SCHEMA} file", SCHEMA = SCHEMA)]
    NotAnObject,
    #[error("is not valid JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("is a {schema} file, not {SCHEMA} (write one with `numasleuth pmu --json`)", SCHEMA = SCHEMA)]
    OtherSchema { schema: String },
    #[error("has no schema: not a {SCHEMA} file (write one with `numasleuth pmu --json`)", SCHEMA = SCHEMA)]
    NoSchema,
    #[error("malformed {SCHEMA}: {0}", SCHEMA = SCHEMA)]
    Malformed(serde_json::Error),
}

/// The document: analyze's summary, whose fields are the schema's, after
/// the schema.
pub fn build(s: &PmuSummary) -> Schema<'_, PmuSummary> {
    Schema::new(SCHEMA, s)
}

/// Only the schema: read first, so a file of another kind is named as
/// such rather than failing on some field deep inside it.
#[derive(Deserialize)]
struct Head {
    schema: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct FileEvent {
    name: String,
    pmu: String,
    scaled_value: Option<f64>,
}

#[derive(Deserialize)]
struct File {
    duration_s: f64,
    events: Vec<FileEvent>,
}

/// A `numasleuth.pmu/1` document as `diff` needs it.
pub fn parse(text: &str) -> Result<RunCounts, PmuFileError> {
    if !text.trim_start().starts_with('{') {
        return Err(PmuFileError::NotAnObject);
    }
    let head: Head = serde_json::from_str(text).map_err(PmuFileError::NotJson)?;
    match head.schema {
        Some(serde_json::Value::String(s)) if s == SCHEMA => {}
        Some(serde_json::Value::String(schema)) => return Err(PmuFileError::OtherSchema { schema }),
        _ => return Err(PmuFileError::NoSchema),
    }
    let file: File = serde_json::from_str(text).map_err(PmuFileError::Malformed)?;
    Ok(RunCounts {
        duration_s: file.duration_s,
        events: file
            .events
            .into_iter()
            .map(|e| Counted {
                name: e.name,
                pmu: e.pmu,
                scaled_value: e.scaled_value,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_diff_needs() {
        let text = r#"{"schema": "numasleuth.pmu/1", "duration_s": 0.5, "future_field": [1, {"x": 2}],
            "events": [{"name": "task-clock", "pmu": "software", "value": 10, "scaled_value": 10.0, "scaled": false},
                       {"name": "cycles", "pmu": "hardware", "value": 0, "scaled_value": null, "scaled": true}]}"#;
        let run = parse(text).unwrap();
        assert_eq!(run.duration_s, 0.5);
        assert_eq!(run.events.len(), 2);
        assert_eq!(run.events[1].scaled_value, None);
    }

    #[test]
    fn other_schemas_and_malformed_files_are_named() {
        let watch = parse(r#"{"schema": "numasleuth.watch/1", "pid": 1}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(
            watch,
            "is a numasleuth.watch/1 file, not numasleuth.pmu/1 (write one with `numasleuth pmu --json`)"
        );
        assert!(matches!(parse(r#"{"events": []}"#), Err(PmuFileError::NoSchema)));
        assert!(matches!(parse(r#"{"schema": 7}"#), Err(PmuFileError::NoSchema)));
        assert!(parse("[1, 2]")
            .unwrap_err()
            .to_string()
            .starts_with("is not a JSON object"));
        assert!(parse("").unwrap_err().to_string().starts_with("is not a JSON object"));
        let cut = parse("{\"schema\": \"numasleuth.pmu/1\", ").unwrap_err().to_string();
        assert!(cut.starts_with("is not valid JSON: EOF while parsing"), "{cut}");
        let missing = parse(r#"{"schema": "numasleuth.pmu/1", "events": []}"#)
            .unwrap_err()
            .to_string();
        assert!(missing.contains("missing field `duration_s`"), "{missing}");
        let wrong = parse(r#"{"schema": "numasleuth.pmu/1", "duration_s": 1, "events": [{"name": 1}]}"#)
            .unwrap_err()
            .to_string();
        assert!(wrong.starts_with("malformed numasleuth.pmu/1"), "{wrong}");
        // Deep nesting hits serde_json's recursion limit, not our stack.
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&deep).is_err());
    }
}
