//! The exporter's metrics in the Prometheus text format 0.0.4, for
//! node_exporter's textfile collector and for scrapers that do not ask for
//! OpenMetrics.
//!
//! node_exporter (1.5 in Debian 12) parses `.prom` files as 0.0.4 only: an
//! OpenMetrics file failed with `unknown metric type "info"` and set
//! `node_textfile_scrape_error 1`, so none of our series reached
//! Prometheus (issue 36). The two formats share their sample lines; they
//! differ in what surrounds them:
//!
//! - 0.0.4 has no `# EOF` and no `# UNIT`;
//! - its types are `counter gauge histogram summary untyped`: an
//!   OpenMetrics `info` is a gauge of value 1 named `…_info`, a `stateset`
//!   a gauge, `unknown` is `untyped`, a `gaugehistogram` a histogram;
//! - `# HELP` and `# TYPE` name the series as sampled, so a counter's
//!   family `x` is `x_total` there, and an info's `x` is `x_info`;
//! - there are no `_created` series and no exemplars;
//! - HELP escapes only `\\` and `\n` (OpenMetrics also escapes `"`).
//!
//! So this module takes [`crate::openmetrics::encode_text`]'s output and
//! rewrites those lines; the metric names and values stay defined once.
//! Timestamps, which differ in unit, are never written by our encoder.

use std::collections::HashMap;

use crate::openmetrics::Exposition;

/// Content type of [`encode_text`]'s output.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The whole exposition in the Prometheus text format 0.0.4.
pub fn encode_text(e: &Exposition) -> String {
    from_openmetrics(&crate::openmetrics::encode_text(e))
}

/// An OpenMetrics text exposition rewritten as Prometheus text 0.0.4.
pub fn from_openmetrics(openmetrics: &str) -> String {
    let kinds: HashMap<&str, &str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.split_once(' '))
        .collect();
    let mut text = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        let rewritten = if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            let kind = kinds.get(name).copied().unwrap_or("unknown");
            Some(format!("# HELP {} {}", sampled_name(name, kind), help_004(help)))
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "unknown"));
            Some(format!("# TYPE {} {}", sampled_name(name, kind), kind_004(kind)))
        } else if line == "# EOF" || line.starts_with("# UNIT ") {
            None
        } else if line.starts_with('#') || line.is_empty() {
            Some(line.to_string())
        } else if is_created(line, &kinds) {
            None
        } else {
            Some(without_exemplar(line).to_string())
        };
        if let Some(line) = rewritten {
            text.push_str(&line);
            text.push('\n');
        }
    }
    text
}

/// The name 0.0.4 gives a family: the name its samples carry.
fn sampled_name(family: &str, kind: &str) -> String {
    match kind {
        "counter" => format!("{family}_total"),
        "info" => format!("{family}_info"),
        _ => family.to_string(),
    }
}

fn kind_004(kind: &str) -> &str {
    match kind {
        "counter" | "gauge" | "histogram" | "summary" => kind,
        "gaugehistogram" => "histogram",
        "info" | "stateset" => "gauge",
        _ => "untyped",
    }
}

/// HELP text with OpenMetrics' `\"` written as a bare quote, which is all
/// 0.0.4 accepts besides `\\` and `\n`.
fn help_004(help: &str) -> String {
    let mut out = String::with_capacity(help.len());
    let mut chars = help.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some(next) => {
                out.push('\\');
                out.push(next);
            }
            // A lone backslash at the end: written escaped, as 0.0.4 wants.
            None => out.push_str("\\\\"),
        }
    }
    out
}

/// The sample's metric name: up to its labels or its value.
fn sample_name(line: &str) -> &str {
    line.split(['{', ' ']).next().unwrap_or(line)
}

/// A counter's, histogram's or summary's `_created` series, which 0.0.4
/// does not have.
fn is_created(line: &str, kinds: &HashMap<&str, &str>) -> bool {
    sample_name(line)
        .strip_suffix("_created")
        .and_then(|family| kinds.get(family))
        .is_some_and(|kind| matches!(*kind, "counter" | "histogram" | "summary" | "gaugehistogram"))
}

/// The sample without an exemplar (` # {…} value`). A `#` inside a quoted
/// label value is not one.
fn without_exemplar(line: &str) -> &str {
    let (mut quoted, mut escaped, mut labels_end) = (false, false, 0);
    if line.as_bytes().get(sample_name(line).len()) == Some(&b'{') {
        for (i, b) in line.bytes().enumerate() {
            match b {
                _ if escaped => escaped = false,
                b'\\' if quoted => escaped = true,
                b'"' => quoted = !quoted,
                b'}' if !quoted => {
                    labels_end = i;
                    break;
                }
                _ => {}
            }
        }
    }
    match line[labels_end..].find(" # ") {
        Some(at) => &line[..labels_end + at],
        None => line,
    }
}

#[cfg(test)]
#[path = "prometheus_text_tests.rs"]
mod tests;
