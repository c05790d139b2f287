//! Where a report came from: which machine and kernel, when, which
//! numasleuth, and whether it read the live system or a snapshot (then
//! that snapshot's own machine and time). Every doctor and topo report,
//! text, JSON and HTML, carries it, so a pasted report can be traced.

use numasleuth_model::stop::RunSpan;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotOrigin {
    /// The `--root` path as given.
    pub path: String,
    /// When `snapshot` captured it, from its manifest.
    pub created_unix_s: Option<u64>,
    pub created_utc: Option<String>,
    /// The numasleuth that captured it.
    pub numasleuth_version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provenance {
    /// This numasleuth, `0.1.0` or `0.1.0 (git abc1234)`.
    pub numasleuth_version: String,
    pub generated_unix_s: u64,
    pub generated_utc: String,
    /// The machine the data describes: this one, or the snapshot's.
    pub hostname: Option<String>,
    pub kernel_release: Option<String>,
    /// `live` or `snapshot`.
    pub source: &'static str,
    pub snapshot: Option<SnapshotOrigin>,
    /// How long a command that runs over time ran, and whether it was
    /// stopped early (Ctrl-C): present for those commands only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<RunSpan>,
}

/// `2026-11-23 17:30:05 UTC` from seconds since the epoch (proleptic
/// Gregorian calendar, as `date -u` prints it).
pub fn utc(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let seconds = unix_s % 86_400;
    // Days to civil date (Howard Hinnant's algorithm, shifted to 0000-03-01).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

impl Provenance {
    /// One line for the top of a text report.
    pub fn line(&self) -> String {
        let host = self.hostname.as_deref().unwrap_or("unknown host");
        let kernel = self
            .kernel_release
            .as_deref()
            .map_or(String::new(), |k| format!(" (Linux {k})"));
        match &self.snapshot {
            Some(s) => format!(
                "reading snapshot {} of {host}{kernel} taken {}; numasleuth {}, {}",
                s.path,
                s.created_utc.as_deref().unwrap_or("at an unknown time"),
                self.numasleuth_version,
                self.generated_utc
            ),
            None => format!(
                "{host}{kernel}, live system, {}; numasleuth {}",
                self.generated_utc, self.numasleuth_version
            ),
        }
    }
}

/// `1.5 s`, `30 s`, `2 min 5 s`: a length of time for the run line.
fn seconds(s: f64) -> String {
    if s >= 120.0 {
        let whole = s.round() as u64;
        return format!("{} min {} s", whole / 60, whole % 60);
    }
    let text = format!("{s:.1}");
    format!("{} s", text.strip_suffix(".0").unwrap_or(&text))
}

/// "stopped after 1.5 s of 30 s", or `None` for a run that ran its course.
pub fn run_line(span: &RunSpan) -> Option<String> {
    if !span.stopped_early {
        return None;
    }
    let mut line = format!("stopped after {}", seconds(span.ran_s));
    if let Some(planned) = span.planned_s {
        line.push_str(&format!(" of {}", seconds(planned)));
    }
    if let Some(steps) = &span.steps {
        line.push_str(&format!(", {} of {} {} done", steps.done, steps.planned, steps.unit));
    }
    line.push_str(": the report shows what was gathered until then");
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_matches_date_u() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        // date -u -d @951782400: the leap day of a century leap year.
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_795_248_719), "2026-11-21 08:11:59 UTC");
        assert_eq!(utc(4_102_444_799), "2099-12-31 23:59:59 UTC");
        // Never panics, even at the end of time.
        assert!(utc(u64::MAX).ends_with("UTC"));
    }

    #[test]
    fn the_line_says_live_or_which_snapshot() {
        let mut p = Provenance {
            numasleuth_version: "0.1.0".into(),
            generated_unix_s: 0,
            generated_utc: utc(0),
            hostname: Some("db1".into()),
            kernel_release: Some("6.1.0".into()),
            source: "live",
            snapshot: None,
            run: None,
        };
        assert_eq!(
            p.line(),
            "db1 (Linux 6.1.0), live system, 1970-01-01 00:00:00 UTC; numasleuth 0.1.0"
        );
        p.source = "snapshot";
        p.snapshot = Some(SnapshotOrigin {
            path: "s.tar.gz".into(),
            created_unix_s: Some(951_782_400),
            created_utc: Some(utc(951_782_400)),
            numasleuth_version: Some("0.1.0".into()),
        });
        assert!(p
            .line()
            .starts_with("reading snapshot s.tar.gz of db1 (Linux 6.1.0) taken 2000-02-29 00:00:00 UTC"));
    }

    #[test]
    fn a_stopped_run_says_how_far_it_got() {
        let span = |ran_s: f64, planned_s: Option<f64>, stopped_early: bool| RunSpan {
            ran_s,
            planned_s,
            stopped_early,
            steps: None,
        };
        assert_eq!(run_line(&span(30.0, Some(30.0), false)), None);
        assert_eq!(
            run_line(&span(1.52, Some(30.0), true)).unwrap(),
            "stopped after 1.5 s of 30 s: the report shows what was gathered until then"
        );
        assert!(run_line(&span(125.0, None, true))
            .unwrap()
            .starts_with("stopped after 2 min 5 s:"));
        let mut stepped = span(3.0, None, true);
        stepped.steps = Some(numasleuth_model::stop::Steps {
            done: 3,
            planned: 8,
            unit: "cells".into(),
        });
        assert!(run_line(&stepped)
            .unwrap()
            .starts_with("stopped after 3 s, 3 of 8 cells done:"));
    }
}
