//! Real `sh -c` commands; no timing is asserted beyond "did not wait for
//! what is not coming".

use std::time::{Duration, Instant};

use numasleuth_model::stop::Stop;

use super::*;

/// The first number of a line, as bisect takes it (a plain parse here).
fn first_word_number(line: &str) -> Option<f64> {
    line.split_whitespace().find_map(|w| w.parse().ok())
}

fn command<'a>(text: &'a str, stop: &'a Stop) -> MetricCommand<'a> {
    MetricCommand {
        command: text,
        timeout: Duration::from_secs(10),
        number: first_word_number,
        stop,
    }
}

#[test]
fn a_reading_is_the_number_of_the_last_line_holding_one() {
    let stop = Stop::new();
    assert_eq!(command("echo rate 1; echo rate 7.5; echo done", &stop).read(), Ok(7.5));
}

#[test]
fn a_failing_silent_or_slow_command_says_why() {
    let never = Stop::new();
    let failed = read_metric("echo oops; exit 3", Duration::from_secs(10), first_word_number, &never);
    assert_eq!(
        failed,
        Err(MetricStop::Failed(
            "the metric command `echo oops; exit 3` failed (exit status 3); its last lines: oops".into()
        ))
    );
    let silent = read_metric("true", Duration::from_secs(10), first_word_number, &never);
    assert_eq!(
        silent,
        Err(MetricStop::Failed(
            "the metric command `true` printed no number; it printed nothing".into()
        ))
    );
    let slow = read_metric("sleep 5", Duration::from_millis(100), first_word_number, &never);
    assert!(
        matches!(&slow, Err(MetricStop::Failed(why)) if why.contains("did not finish within 100 ms")),
        "{slow:?}"
    );
}

#[test]
fn a_wait_without_a_request_runs_its_course() {
    // The token's sleep (tested with requests in model::stop) does the
    // waiting; with no request it sleeps the whole time.
    let calm = Stop::new();
    let began = Instant::now();
    assert_eq!(command("echo 1", &calm).wait(Duration::from_millis(20)), Ok(()));
    assert!(began.elapsed() >= Duration::from_millis(20));
}

#[test]
fn an_interrupt_ends_readings_and_waits() {
    let stop = Stop::new();
    stop.request();
    // A reading under way is killed (a quick one may finish first).
    assert_eq!(command("sleep 5; echo 1", &stop).read(), Err(MetricStop::Interrupted));
    let metric = command("echo 1", &stop);
    assert_eq!(metric.rounds(3, Duration::ZERO), Err(MetricStop::Interrupted));
    assert_eq!(metric.wait(Duration::from_secs(60)), Err(MetricStop::Interrupted));
    // A zero wait checks nothing, as before the move.
    assert_eq!(metric.wait(Duration::ZERO), Ok(()));
    assert_eq!(
        metric.readings_while_settling(Duration::from_secs(60)),
        Err(MetricStop::Interrupted)
    );
}

#[test]
fn rounds_take_as_many_readings_as_asked() {
    let stop = Stop::new();
    assert_eq!(
        command("echo 4", &stop).rounds(3, Duration::from_millis(1)),
        Ok(vec![4.0; 3])
    );
    assert_eq!(command("echo 4", &stop).rounds(0, Duration::ZERO), Ok(vec![]));
}

#[test]
fn settling_reads_every_interval_and_lasts_the_settle_time() {
    let stop = Stop::new();
    let settle = PROBE_INTERVAL * 3;
    let start = Instant::now();
    let samples = command("echo 2", &stop).readings_while_settling(settle).unwrap();
    assert!(start.elapsed() >= settle);
    assert!(!samples.is_empty() && samples.len() <= 3, "{samples:?}");
    assert!(samples.iter().all(|(_, v)| *v == 2.0));
    assert!(samples.windows(2).all(|w| w[1].0 > w[0].0));
    // Too short a settle for one interval reads nothing, and still waits.
    assert_eq!(
        command("echo 2", &stop).readings_while_settling(PROBE_INTERVAL / 2),
        Ok(vec![])
    );
}
