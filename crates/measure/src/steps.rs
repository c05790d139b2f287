//! A run of measurement steps (grid configurations, CPU pairs, buffer
//! sizes) that a stop request ends between steps.
//!
//! Why one loop: every benchmark grid must end the same way on Ctrl-C,
//! after the step under way, keeping every step measured so far, so the
//! report can say "stopped after 3 of 8". The caller watches each step
//! through an observer (the CLI's progress bar); nothing here prints.

use numasleuth_model::stop::Stop;

use crate::error::MeasureError;

/// A step that failed, which one, and why; the run ends at the first.
#[derive(Debug)]
pub struct StepError<S, E = MeasureError> {
    pub step: S,
    pub error: E,
}

/// Why a step that sets something up first (a buffer, a line on a node)
/// failed: in the setting up, or in the measuring, so the caller can say
/// which.
#[derive(Debug)]
pub enum PhaseError {
    Setup(MeasureError),
    Run(MeasureError),
}

/// Each of `steps` in turn until `stop` is requested: `observe` sees a
/// step just before it runs, `measure` runs it. Returns every step begun
/// with what it measured, in order; the stop is looked at only between
/// steps, so a step under way always finishes.
pub fn run<S, T, E>(
    steps: Vec<S>,
    stop: &Stop,
    observe: &mut dyn FnMut(&S),
    mut measure: impl FnMut(&S) -> Result<T, E>,
) -> Result<Vec<(S, T)>, StepError<S, E>> {
    let mut done = Vec::with_capacity(steps.len());
    for step in steps {
        if stop.requested() {
            break;
        }
        observe(&step);
        match measure(&step) {
            Ok(measured) => done.push((step, measured)),
            Err(error) => return Err(StepError { step, error }),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_is_observed_before_it_runs() {
        let mut log = Vec::new();
        let seen = std::cell::RefCell::new(Vec::new());
        let done = run(
            vec![1u32, 2, 3],
            &Stop::new(),
            &mut |s| seen.borrow_mut().push(*s),
            |s| {
                // The observer saw this step already.
                log.push(seen.borrow().clone());
                Ok::<_, MeasureError>(s * 10)
            },
        )
        .unwrap();
        assert_eq!(done, vec![(1, 10), (2, 20), (3, 30)]);
        assert_eq!(log, vec![vec![1], vec![1, 2], vec![1, 2, 3]]);
    }

    #[test]
    fn a_stop_mid_way_keeps_the_steps_measured() {
        let stop = Stop::new();
        let mut seen = Vec::new();
        let done = run(vec!['a', 'b', 'c', 'd'], &stop, &mut |s| seen.push(*s), |s| {
            if *s == 'b' {
                // Ctrl-C while the second step runs: it still finishes.
                stop.request();
            }
            Ok::<_, MeasureError>(s.to_ascii_uppercase())
        })
        .unwrap();
        assert_eq!(done, vec![('a', 'A'), ('b', 'B')]);
        assert_eq!(seen, vec!['a', 'b']);
    }

    #[test]
    fn the_first_error_ends_the_run_and_names_its_step() {
        let mut ran = 0;
        let err = run(vec![1, 2, 3], &Stop::new(), &mut |_| {}, |s| {
            ran += 1;
            if *s == 2 {
                Err(MeasureError::Invalid("no".into()))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert_eq!(err.step, 2);
        assert_eq!(ran, 2);
    }
}
