//! One reading of a user's metric command (`bisect --metric-cmd`): a shell
//! command run with `sh -c`, stdout and stderr captured within the same
//! bounds as `runs` keeps, killed when it outlives its timeout or when the
//! caller is cancelled (Ctrl-C).
//!
//! The command runs in its own process group, so the whole group (a curl
//! under a shell, say) is killed together, at the timeout, on cancel, and
//! when the shell itself exits (what it left in the background goes with
//! it); a Ctrl-C typed at the terminal reaches numasleuth, which then stops
//! the command itself.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use numasleuth_model::stop::Stop;

use crate::error::MeasureError;
use crate::runs::child::{self, Exit};
use crate::runs::output::Output;

/// How often the waiting loop checks the timeout and the cancel flag.
const CHECK_EVERY: Duration = Duration::from_millis(50);

/// What one run of the command did.
#[derive(Debug, Clone)]
pub struct ShellRun {
    pub exit: Exit,
    pub output: Output,
    /// Killed at the timeout.
    pub timed_out: bool,
    /// Killed because a stop was requested of `cancel`.
    pub cancelled: bool,
    pub wall: Duration,
}

/// Runs `sh -c shell_command`, keeping the last line `matches` accepts.
pub fn run_shell(
    shell_command: &str,
    timeout: Duration,
    cancel: &Stop,
    matches: &(dyn Fn(&str) -> bool + Sync),
) -> Result<ShellRun, MeasureError> {
    let spawn_error = |reason: String| MeasureError::Spawn {
        program: "sh".into(),
        reason,
    };
    let (read, write) = child::pipe().map_err(|e| spawn_error(format!("cannot create a pipe: {e}")))?;
    let start = Instant::now();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(shell_command)
        .stdin(Stdio::null())
        .stdout(Stdio::from(write.try_clone().map_err(|e| spawn_error(e.to_string()))?))
        .stderr(Stdio::from(write))
        .process_group(0);
    let child = command.spawn().map_err(|e| spawn_error(e.to_string()))?;
    drop(command);
    let pid = child.id();
    let group = child::Group::new(pid);
    // Reaped by wait4 below, with the group still addressable until then.
    drop(child);
    let (mut timed_out, mut cancelled) = (false, false);
    let (waited, output) = child::supervise(&group, &read, matches, |fired| {
        let late = start.elapsed() > timeout;
        let stop = cancel.requested();
        if fired && (late || stop) && !(timed_out || cancelled) {
            timed_out = late && !stop;
            cancelled = stop;
            group.kill();
        }
        Some(CHECK_EVERY)
    })
    .map_err(|e| MeasureError::Invalid(format!("the metric command (pid {pid}): {e}")))?;
    let exit = waited
        .ok_or_else(|| MeasureError::Invalid("the waiting thread ended without an answer".into()))?
        .0
        .map_err(|e| MeasureError::Invalid(format!("cannot wait for the metric command (pid {pid}): {e}")))?;
    Ok(ShellRun {
        exit,
        output,
        timed_out,
        cancelled,
        wall: start.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_kernel::test_support::running_with;

    fn has_digit(line: &str) -> bool {
        line.bytes().any(|b| b.is_ascii_digit())
    }

    #[test]
    fn keeps_the_last_line_with_a_number_and_the_exit_code() {
        let never = Stop::new();
        let run = run_shell(
            "echo rate 10; echo; echo rate 42 ops; echo done >&2; exit 3",
            Duration::from_secs(20),
            &never,
            &has_digit,
        )
        .unwrap();
        assert_eq!(run.exit.code, Some(3));
        assert_eq!(
            run.output.last_match.as_ref().map(|(_, l)| l.as_str()),
            Some("rate 42 ops")
        );
        assert_eq!(run.output.tail.last().map(String::as_str), Some("done"));
        assert!(!run.timed_out && !run.cancelled);
    }

    #[test]
    fn a_command_that_hangs_is_killed_with_its_children_at_the_timeout() {
        let never = Stop::new();
        // The background sleep keeps the pipe open: the group kill ends it.
        let run = run_shell(
            "sleep 30.0606 & sleep 30.0606",
            Duration::from_millis(200),
            &never,
            &has_digit,
        )
        .unwrap();
        assert!(run.timed_out);
        assert_eq!(run.exit.signal, Some(libc::SIGKILL));
        assert!(run.wall < Duration::from_secs(20), "{:?}", run.wall);
        assert_eq!(running_with("30.0606", &[]), Vec::<String>::new());
    }

    #[test]
    fn what_the_command_left_in_the_background_ends_with_it() {
        let never = Stop::new();
        let run = run_shell("sleep 30.0707 & echo 5", Duration::from_secs(20), &never, &has_digit).unwrap();
        assert_eq!(run.exit.code, Some(0));
        assert_eq!(run.output.note, None, "the output was left open");
        assert_eq!(running_with("30.0707", &[]), Vec::<String>::new());
    }

    #[test]
    fn cancelling_kills_the_command() {
        let cancel = Stop::new();
        cancel.request();
        let run = run_shell(
            "sleep 30.0808 & sleep 30.0808",
            Duration::from_secs(60),
            &cancel,
            &has_digit,
        )
        .unwrap();
        assert!(run.cancelled && !run.timed_out);
        assert_eq!(running_with("30.0808", &[]), Vec::<String>::new());
    }

    #[test]
    fn endless_output_stays_bounded() {
        let never = Stop::new();
        let run = run_shell(
            "yes 123456789 | head -c 50000000",
            Duration::from_secs(60),
            &never,
            &has_digit,
        )
        .unwrap();
        assert_eq!(run.exit.code, Some(0));
        assert_eq!(run.output.bytes_total, 50_000_000);
        assert!(run.output.tail.len() <= crate::runs::output::TAIL_MAX_LINES);
    }
}
