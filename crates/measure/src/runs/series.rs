//! `runs`' series: the workload run `runs` times, each started on the
//! next start CPU in turn, until the series is done or a stop is
//! requested. What each run means (its metric and row) is derived in
//! analyze; printing stays with the caller.

use std::ffi::OsStr;
use std::time::Duration;

use numasleuth_model::stop::Stop;

use super::{run_once, RunRecord, RunSpec};
use crate::error::MeasureError;

/// What to run, how often and where.
pub struct Series<'a> {
    pub program: &'a OsStr,
    pub args: &'a [&'a OsStr],
    /// Taken in turn, one per run (the first run takes the first).
    pub start_cpus: &'a [u32],
    pub runs: u32,
    /// Widen every thread to these CPUs after this delay.
    pub release: Option<(Duration, &'a [u32])>,
    /// When to call the probe in each run.
    pub settle: Duration,
    /// Whether an output line is a metric line.
    pub matches: &'a (dyn Fn(&str) -> bool + Sync),
    /// Kill a run's workload (SIGKILL) if it runs longer than this.
    pub timeout: Option<Duration>,
    /// Checked before each run and passed to it (see [`RunSpec::stop`]).
    pub stop: &'a Stop,
}

/// Runs the series. Before each run `starting(number, cpu)` is told which
/// run (from 1) starts on which CPU; after it, `finished(index, record)`
/// gets the run's raw record (index from 0), and an error it returns ends
/// the series. `probe(pid)` samples each run at its settle time.
///
/// A stop requested before a run ends the series there; one that ends a
/// run under way leaves that run out (it is not a whole run) and returns
/// its number, so the caller can say which runs are missing.
pub fn run_series<S, E: From<MeasureError>>(
    series: &Series<'_>,
    mut probe: impl FnMut(u32) -> S,
    mut starting: impl FnMut(usize, u32),
    mut finished: impl FnMut(usize, RunRecord<S>) -> Result<(), E>,
) -> Result<Option<usize>, E> {
    if series.start_cpus.is_empty() {
        return Err(MeasureError::Invalid("no start CPU to run on".into()).into());
    }
    for index in 0..series.runs as usize {
        if series.stop.requested() {
            break;
        }
        let number = index + 1;
        let cpu = series.start_cpus[index % series.start_cpus.len()];
        starting(number, cpu);
        let spec = RunSpec {
            program: series.program,
            args: series.args,
            start_cpu: cpu,
            release: series.release,
            settle: series.settle,
            matches: series.matches,
            timeout: series.timeout,
            stop: series.stop,
        };
        let record = run_once(&spec, &mut probe)?;
        if record.stopped || series.stop.requested() {
            return Ok(Some(number));
        }
        finished(index, record)?;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::affinity::allowed_cpus;

    fn any_line(_: &str) -> bool {
        false
    }

    fn series<'a>(args: &'a [&'a OsStr], cpus: &'a [u32], runs: u32, stop: &'a Stop) -> Series<'a> {
        Series {
            program: OsStr::new("sh"),
            args,
            start_cpus: cpus,
            runs,
            release: None,
            settle: Duration::from_secs(30),
            matches: &any_line,
            timeout: None,
            stop,
        }
    }

    #[test]
    fn every_run_starts_on_the_next_cpu_in_turn_and_is_handed_over() {
        let allowed = allowed_cpus().unwrap();
        let cpus = [allowed[0], *allowed.last().unwrap()];
        let args = [OsStr::new("-c"), OsStr::new("exit 3")];
        let stop = Stop::new();
        let (mut started, mut records) = (Vec::new(), Vec::new());
        let end = run_series::<(), MeasureError>(
            &series(&args, &cpus, 3, &stop),
            |_| (),
            |number, cpu| started.push((number, cpu)),
            |index, record| {
                records.push((index, record.start_cpu, record.exit.code));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(end, None);
        assert_eq!(started, [(1, cpus[0]), (2, cpus[1]), (3, cpus[0])]);
        assert_eq!(
            records,
            [(0, cpus[0], Some(3)), (1, cpus[1], Some(3)), (2, cpus[0], Some(3))]
        );
    }

    #[test]
    fn a_stop_before_the_series_runs_nothing() {
        let cpus = [allowed_cpus().unwrap()[0]];
        let args = [OsStr::new("-c"), OsStr::new("exit 0")];
        let stop = Stop::new();
        stop.request();
        let end = run_series::<(), MeasureError>(
            &series(&args, &cpus, 2, &stop),
            |_| (),
            |_, _| panic!("no run starts after a stop"),
            |_, _| panic!("no run finishes after a stop"),
        )
        .unwrap();
        assert_eq!(end, None);
    }

    #[test]
    fn an_error_of_the_caller_ends_the_series() {
        let cpus = [allowed_cpus().unwrap()[0]];
        let args = [OsStr::new("-c"), OsStr::new("exit 0")];
        let stop = Stop::new();
        let mut starts = 0;
        let end = run_series::<(), MeasureError>(
            &series(&args, &cpus, 5, &stop),
            |_| (),
            |_, _| starts += 1,
            |_, _| Err(MeasureError::Invalid("enough".into())),
        );
        assert!(matches!(end, Err(MeasureError::Invalid(why)) if why == "enough"));
        assert_eq!(starts, 1);
    }

    #[test]
    fn no_start_cpu_is_an_error_not_a_panic() {
        let args = [OsStr::new("-c"), OsStr::new("exit 0")];
        let stop = Stop::new();
        let end = run_series::<(), MeasureError>(&series(&args, &[], 1, &stop), |_| (), |_, _| {}, |_, _| Ok(()));
        assert!(matches!(end, Err(MeasureError::Invalid(_))));
    }
}
