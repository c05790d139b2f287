//! `pmu` for people: what was counted and for how long, IPC or why there
//! is none, every counted event (scaled ones marked with how long they
//! really ran), then the events that could not be opened grouped by
//! reason, and the notes.

use std::collections::BTreeMap;

use numasleuth_analyze::pmu::{EventCount, PmuSummary};
use numasleuth_model::perf::pmu::TargetRaw;

use crate::layout::TextLayout;
use crate::table::{table, Col};

/// `1234567` → `1,234,567`; fractions keep two decimals below 1000, and
/// three significant digits below 1 (a per-instruction rate is tiny).
pub fn grouped(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let magnitude = value.abs();
    if magnitude > 0.0 && magnitude < 1e-9 {
        return format!("{value:.2e}");
    }
    if magnitude > 0.0 && magnitude < 1.0 {
        let decimals = (2 - magnitude.log10().floor() as i32).clamp(2, 12) as usize;
        return format!("{value:.decimals$}");
    }
    if magnitude < 1000.0 && value.fract() != 0.0 {
        return format!("{value:.2}");
    }
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if value < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// An argument as a shell would need it typed: bare when plain, else in
/// single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn headline(s: &PmuSummary) -> String {
    match &s.target {
        TargetRaw::Command {
            argv,
            pid,
            exit_code,
            signal,
        } => {
            let ended = match (exit_code, signal) {
                (_, Some(signal)) => format!("was killed by signal {signal}"),
                (Some(code), None) => format!("exited {code}"),
                (None, None) => "ended".to_string(),
            };
            let command: Vec<String> = argv.iter().map(|a| shell_word(a)).collect();
            format!(
                "pmu: `{}` (pid {pid}) {ended} after {:.3} s\n",
                command.join(" "),
                s.duration_s
            )
        }
        TargetRaw::Pid {
            pid, threads_attached, ..
        } => format!(
            "pmu: process {pid}, {threads_attached} thread(s), counted for {:.3} s\n",
            s.duration_s
        ),
    }
}

fn row(e: &EventCount) -> Vec<String> {
    let scaled = match (e.scaled_value, e.scaled) {
        (None, _) => "no value: never ran".to_string(),
        (Some(v), true) => {
            let share = 100.0 * e.time_running_ns as f64 / e.time_enabled_ns.max(1) as f64;
            format!("≈ {} (scaled, counted {share:.0}% of the time)", grouped(v))
        }
        (Some(_), false) => "-".to_string(),
    };
    vec![e.name.clone(), e.pmu.clone(), grouped(e.value as f64), scaled]
}

/// `1 event`, `3 events`.
fn events(n: usize) -> String {
    format!("{n} event{}", if n == 1 { "" } else { "s" })
}

pub fn render(s: &PmuSummary, layout: &TextLayout) -> String {
    let mut out = headline(s);
    out.push_str(&match s.ipc {
        Some(ipc) => format!("IPC: {ipc:.2} instructions per cycle\n"),
        None if !s.hardware_pmu => "IPC: unavailable (no hardware events counted; see notes)\n".to_string(),
        None => "IPC: unavailable (see notes)\n".to_string(),
    });
    out.push_str(&format!("\ncounted ({}):\n", events(s.events.len())));
    let mut rows = vec![vec![
        "event".to_string(),
        "pmu".to_string(),
        "value".to_string(),
        "scaled".to_string(),
    ]];
    rows.extend(s.events.iter().map(row));
    for line in table(&rows, &[Col::Name], &layout.indented(2)).lines() {
        out.push_str(&format!("  {line}\n"));
    }
    if !s.unavailable.is_empty() {
        out.push_str(&format!("\nnot counted ({}):\n", events(s.unavailable.len())));
        // why → pmu → names, so 42 cache events read as one line.
        let mut by_why: BTreeMap<&str, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
        for u in &s.unavailable {
            by_why
                .entry(u.why.as_str())
                .or_default()
                .entry(u.pmu.as_str())
                .or_default()
                .push(u.name.as_str());
        }
        for (why, pmus) in by_why {
            out.push_str(&format!("  {why}:\n"));
            for (pmu, names) in pmus {
                out.push_str(&format!("    {pmu}: {}\n", names.join(", ")));
            }
        }
    }
    if !s.notes.is_empty() {
        out.push_str("\nnotes:\n");
        for note in &s.notes {
            out.push_str(&format!("  - {note}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_analyze::pmu::Unavailable;

    fn event(name: &str, value: u64, enabled: u64, running: u64, scaled_value: Option<f64>) -> EventCount {
        EventCount {
            name: name.into(),
            pmu: "software".into(),
            value,
            time_enabled_ns: enabled,
            time_running_ns: running,
            scaled_value,
            scaled: running < enabled,
            threads: 1,
        }
    }

    #[test]
    fn arguments_are_quoted_as_a_shell_needs() {
        assert_eq!(shell_word("python3"), "python3");
        assert_eq!(shell_word("b=bytearray(1)"), "'b=bytearray(1)'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(grouped(1234567.0), "1,234,567");
        assert_eq!(grouped(999.0), "999");
        assert_eq!(grouped(0.75), "0.750");
        assert_eq!(grouped(0.0000807), "0.0000807");
        assert_eq!(grouped(0.0123456), "0.0123");
        assert_eq!(grouped(3e-12), "3.00e-12");
        assert_eq!(grouped(0.0), "0");
        assert_eq!(grouped(12.5), "12.50");
        assert_eq!(grouped(-1000.0), "-1,000");
        assert_eq!(grouped(f64::INFINITY), "inf");
    }

    #[test]
    fn counted_scaled_and_unavailable_events() {
        let unavailable = |name: &str, pmu: &str| Unavailable {
            name: name.into(),
            pmu: pmu.into(),
            why: "not on this CPU or VM (ENOENT)".into(),
        };
        let s = PmuSummary {
            target: TargetRaw::Command {
                argv: vec!["sleep".into(), "0".into()],
                pid: 42,
                exit_code: Some(0),
                signal: None,
            },
            duration_s: 0.0123,
            events: vec![
                event("task-clock", 1_234_567, 10, 10, Some(1_234_567.0)),
                event("branches", 1000, 100, 25, Some(4000.0)),
                event("cycles", 0, 100, 0, None),
            ],
            unavailable: vec![
                unavailable("cycles", "hardware"),
                unavailable("instructions", "hardware"),
                unavailable("LLC-loads", "hw-cache"),
            ],
            ipc: None,
            hardware_pmu: false,
            kernel_included: true,
            notes: vec!["no hardware PMU (virtualised?): IPC unavailable".into()],
        };
        let text = render(&s, &TextLayout::new(200, false));
        assert!(
            text.starts_with("pmu: `sleep 0` (pid 42) exited 0 after 0.012 s\nIPC: unavailable"),
            "{text}"
        );
        assert!(text.contains("task-clock  software  1,234,567  -\n"), "{text}");
        assert!(text.contains("≈ 4,000 (scaled, counted 25% of the time)"), "{text}");
        assert!(text.contains("no value: never ran"), "{text}");
        assert!(
            text.contains(
                "  not on this CPU or VM (ENOENT):\n    hardware: cycles, instructions\n    hw-cache: LLC-loads\n"
            ),
            "{text}"
        );
        assert!(
            text.ends_with("notes:\n  - no hardware PMU (virtualised?): IPC unavailable\n"),
            "{text}"
        );
    }
}
