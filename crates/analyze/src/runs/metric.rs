//! The metric a workload prints: the group named `value`, or else the
//! first number, of the last output line `--metric` matches.
//!
//! Why byte-wise and ASCII-only (`\d`, `\w`, `\s`, `(?i)`): the regex
//! crate's Unicode tables are about 180 KB of pointers that the dynamic
//! loader relocates, page by page, at every start of every command (48
//! page faults, 0.7 ms of `numasleuth --version`'s 1.8 ms). A metric line
//! is digits and ASCII words; a non-ASCII character in a pattern still
//! matches itself.

use regex::bytes::{Regex, RegexBuilder};

/// A pattern longer than this is not a metric line anyone types.
pub const PATTERN_MAX_CHARS: usize = 1000;
/// Compiled-program budget: a pattern like `(a{1000}){1000}` is refused
/// instead of eating memory.
const COMPILED_MAX_BYTES: usize = 1 << 20;

#[derive(Debug, Clone)]
pub struct MetricPattern {
    regex: Regex,
    has_value_group: bool,
}

/// A decimal number as benchmarks print it: sign, digits, fraction,
/// exponent (`-1.5e3`, `.25`, `42`).
fn number() -> &'static Regex {
    static NUMBER: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    NUMBER.get_or_init(|| {
        RegexBuilder::new(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
            .unicode(false)
            .build()
            .expect("a fixed, valid pattern")
    })
}

/// The first finite number in `text`.
pub fn first_number(text: &str) -> Option<f64> {
    first_number_in(text.as_bytes())
}

fn first_number_in(bytes: &[u8]) -> Option<f64> {
    number().find_iter(bytes).find_map(|m| {
        // The pattern matches ASCII only, so this never fails.
        let text = std::str::from_utf8(m.as_bytes()).ok()?;
        text.parse::<f64>().ok().filter(|v| v.is_finite())
    })
}

/// Why a `--metric` pattern is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("the --metric pattern is longer than {PATTERN_MAX_CHARS} characters", PATTERN_MAX_CHARS = PATTERN_MAX_CHARS)]
    TooLong,
    /// The pattern asks for Unicode, which this build's regex leaves out.
    #[error(
        "invalid --metric pattern `{pattern}`: {what}; patterns match bytes, and \\d, \\w, \\s and (?i) cover ASCII only"
    )]
    Unicode { pattern: String, what: String },
    /// `detail`: the regex crate's cause, on one line.
    #[error("invalid --metric pattern `{pattern}`: {detail}")]
    Invalid { pattern: String, detail: String },
}

/// The regex crate's message, on one line and naming the pattern.
fn pattern_error(pattern: &str, message: &str) -> PatternError {
    // The message spans lines, the cause on the last.
    let last = message.lines().last().unwrap_or_default().trim();
    let detail = last.strip_prefix("error:").unwrap_or(last).trim();
    let pattern = pattern.to_string();
    // `(?u)` asks for Unicode tables this build leaves out; the crate's
    // hint about its build features means nothing to a user.
    match detail.split_once(" (make sure the ") {
        Some((what, _)) => PatternError::Unicode {
            pattern,
            what: what.to_string(),
        },
        None => PatternError::Invalid {
            pattern,
            detail: detail.to_string(),
        },
    }
}

impl MetricPattern {
    pub fn new(pattern: &str) -> Result<Self, PatternError> {
        if pattern.chars().count() > PATTERN_MAX_CHARS {
            return Err(PatternError::TooLong);
        }
        let regex = RegexBuilder::new(pattern)
            .unicode(false)
            .size_limit(COMPILED_MAX_BYTES)
            .build()
            .map_err(|e| pattern_error(pattern, &e.to_string()))?;
        let has_value_group = regex.capture_names().any(|n| n == Some("value"));
        Ok(MetricPattern { regex, has_value_group })
    }

    pub fn matches(&self, line: &str) -> bool {
        self.regex.is_match(line.as_bytes())
    }

    /// The metric of a matching line: the first number inside the group
    /// `value` when the pattern has one (and it took part in the match),
    /// else the first number of the whole line.
    pub fn value(&self, line: &str) -> Option<f64> {
        if self.has_value_group {
            let group = self.regex.captures(line.as_bytes())?.name("value")?;
            return first_number_in(group.as_bytes());
        }
        first_number(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_number_or_the_value_group() {
        let plain = MetricPattern::new("ops/s").unwrap();
        assert_eq!(plain.value("ops/s: 51234.5 (run 3)"), Some(51234.5));
        assert_eq!(plain.value("run 3: 51234 ops/s"), Some(3.0));
        let named = MetricPattern::new(r"run \d+: (?P<value>\S+) ops/s").unwrap();
        assert_eq!(named.value("run 3: 51234 ops/s"), Some(51234.0));
        assert_eq!(named.value("run 3: -1.5e3 ops/s"), Some(-1500.0));
        assert_eq!(named.value("run 3: fast ops/s"), None);
        assert_eq!(first_number("x .25 y"), Some(0.25));
        assert_eq!(first_number("no digits here"), None);
        // Too large for f64 is not a number we can compare.
        assert_eq!(first_number("1e999 then 7"), Some(7.0));
    }

    #[test]
    fn byte_wise_ascii_classes_and_any_character() {
        let any = MetricPattern::new(r"^.*latency (?i:P99)").unwrap();
        assert!(any.matches("µs latency p99 12.5"));
        assert_eq!(any.value("µs latency p99 12.5"), Some(99.0));
        let unit = MetricPattern::new(r"(?P<value>[0-9.]+) µs").unwrap();
        assert_eq!(unit.value("took 12.5 µs"), Some(12.5));
        assert!(!unit.matches("took 12.5 us"));
        let word = MetricPattern::new(r"^\w+: (?P<value>\S+)$").unwrap();
        assert_eq!(word.value("ops: 7"), Some(7.0));
        assert!(!word.matches("opé: 7"), "\\w is ASCII");
        let digits = MetricPattern::new(r"[[:digit:]]+ ops").unwrap();
        assert!(digits.matches("5 ops"));
        // `(?u)\w` needs a table the release build leaves out (tests may
        // link it through a dev-dependency, so the message is checked on
        // the crate's text).
        let message = "regex parse error:\n    (?u)\\w+\n        ^^\nerror: Unicode-aware Perl class not found (make sure the unicode-perl feature is enabled)";
        assert_eq!(
            pattern_error(r"(?u)\w+", message).to_string(),
            r"invalid --metric pattern `(?u)\w+`: Unicode-aware Perl class not found; patterns match bytes, and \d, \w, \s and (?i) cover ASCII only"
        );
    }

    #[test]
    fn bad_patterns_are_one_line_errors() {
        let error = MetricPattern::new("ops(").unwrap_err().to_string();
        assert_eq!(error, "invalid --metric pattern `ops(`: unclosed group");
        assert!(!error.contains('\n'), "{error}");
        let huge = MetricPattern::new("(a{1000}){1000}").unwrap_err().to_string();
        assert!(huge.contains("invalid --metric pattern"), "{huge}");
        assert!(MetricPattern::new(&"a".repeat(1001))
            .unwrap_err()
            .to_string()
            .contains("longer than 1000"));
    }
}
