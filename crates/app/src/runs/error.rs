//! Why a series of runs could not be run or read, in `runs`' words.

use numasleuth_analyze::runs::metric::PatternError;
use numasleuth_measure::MeasureError;

#[derive(Debug, thiserror::Error)]
pub enum RunsError {
    #[error(transparent)]
    Pattern(#[from] PatternError),
    #[error("cannot read which CPUs this process may use: {0}")]
    Affinity(MeasureError),
    #[error("start CPU {cpu} is not one this process may run on ({allowed})")]
    StartCpuNotAllowed { cpu: u32, allowed: String },
    #[error("no command given after --")]
    NoCommand,
    #[error("run {number} (of {runs}, on CPU {cpu}) did not finish within --timeout {timeout_ms} ms and was killed")]
    TimedOut {
        number: usize,
        runs: u32,
        cpu: u32,
        timeout_ms: u128,
    },
    /// The output's last lines went to the observer before this.
    #[error(
        "run {number} (of {runs}, {exit}) printed no line matching --metric; its last {shown} of {lines_total} \
         output lines are above"
    )]
    NoMatch {
        number: usize,
        runs: u32,
        exit: String,
        shown: usize,
        lines_total: u64,
    },
    #[error("run {number} ({exit}): output line {line_number} matches --metric but holds no number: `{line}`")]
    NoNumber {
        number: usize,
        exit: String,
        line_number: u64,
        line: String,
    },
    #[error("stopped by a signal during run {number}, before any run finished; its process group was killed")]
    StoppedBeforeAny { number: usize },
    #[error(transparent)]
    Measure(#[from] MeasureError),
    #[error(transparent)]
    OutOfRange(#[from] crate::limits::OutOfRange),
}
