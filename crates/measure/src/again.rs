//! Measuring again the steps (grid cells) whose figures did not hold,
//! within a budget.
//!
//! On a noisy VM one burst of another tenant's work can widen a cell's
//! spread past what a verdict may rest on. Measuring that cell again, a
//! moment later, often gives a steady figure; measuring it forever does
//! not help and costs the user's time. So: at most [`Budget::rounds`]
//! rounds, and at most [`Budget::steps`] steps measured again in all. The
//! caller says what "holds" means (analysis decides; this module only
//! measures); a step's latest measurement replaces its earlier one.

/// How much measuring again may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Passes over the steps that still do not hold.
    pub rounds: u32,
    /// Steps measured again, over every round together.
    pub steps: usize,
}

impl Budget {
    /// At most two more rounds, and no more steps again than were measured
    /// the first time: the run at most doubles.
    pub fn for_grid(steps: usize) -> Budget {
        Budget { rounds: 2, steps }
    }
}

/// Measures again, round by round, every step of `done` whose measurement
/// does not `hold`, until all hold, the budget is spent, or `measure`
/// returns fewer steps than asked (a stop was requested). `measure` gets
/// the steps in the order they are in `done` and returns what it measured;
/// each replaces that step's entry in `done`. Returns each step measured
/// again with how many more times it was measured, in the order of `done`.
pub fn again<S: Copy + PartialEq, T, E>(
    done: &mut [(S, T)],
    budget: Budget,
    hold: &dyn Fn(&T) -> bool,
    measure: &mut dyn FnMut(Vec<S>) -> Result<Vec<(S, T)>, E>,
) -> Result<Vec<(S, u32)>, E> {
    let mut times: Vec<(S, u32)> = Vec::new();
    let mut left = budget.steps;
    for _ in 0..budget.rounds {
        let pending: Vec<S> = done
            .iter()
            .filter(|(_, t)| !hold(t))
            .map(|(s, _)| *s)
            .take(left)
            .collect();
        if pending.is_empty() {
            break;
        }
        let asked = pending.len();
        let measured = measure(pending)?;
        let got = measured.len();
        left -= got.min(left);
        for (step, t) in measured {
            if let Some(slot) = done.iter_mut().find(|(s, _)| *s == step) {
                slot.1 = t;
            }
            match times.iter_mut().find(|(s, _)| *s == step) {
                Some(entry) => entry.1 += 1,
                None => times.push((step, 1)),
            }
        }
        if got < asked {
            break;
        }
    }
    let order = |s: &S| done.iter().position(|(d, _)| d == s);
    times.sort_by_key(|(s, _)| order(s));
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps 0..n with a spread each; a step holds at 20 or less.
    fn done(spreads: &[u32]) -> Vec<(usize, u32)> {
        spreads.iter().copied().enumerate().collect()
    }

    const HOLD: &dyn Fn(&u32) -> bool = &|spread| *spread <= 20;

    #[test]
    fn only_the_steps_that_do_not_hold_are_measured_again_and_replaced() {
        let mut grid = done(&[10, 50, 15, 40]);
        let mut asked = Vec::new();
        // The second measurement of each is steady.
        let times = again(&mut grid, Budget::for_grid(4), HOLD, &mut |steps| {
            asked.push(steps.clone());
            Ok::<_, ()>(steps.into_iter().map(|s| (s, 12)).collect())
        })
        .unwrap();
        assert_eq!(asked, [vec![1, 3]]);
        assert_eq!(grid, [(0, 10), (1, 12), (2, 15), (3, 12)]);
        assert_eq!(times, [(1, 1), (3, 1)]);
    }

    #[test]
    fn a_step_that_stays_noisy_is_measured_again_only_within_the_budget() {
        let mut grid = done(&[50, 60, 70]);
        let mut asked = Vec::new();
        let times = again(&mut grid, Budget { rounds: 3, steps: 4 }, HOLD, &mut |steps| {
            asked.push(steps.clone());
            Ok::<_, ()>(steps.into_iter().map(|s| (s, 45)).collect())
        })
        .unwrap();
        // Three in the first round, then only one more step is left.
        assert_eq!(asked, [vec![0, 1, 2], vec![0]]);
        assert_eq!(times, [(0, 2), (1, 1), (2, 1)]);
        assert_eq!(grid, [(0, 45), (1, 45), (2, 45)]);
        let mut untouched = done(&[50]);
        let none = again(
            &mut untouched,
            Budget { rounds: 0, steps: 9 },
            HOLD,
            &mut |_| -> Result<Vec<(usize, u32)>, ()> { panic!("no round to run") },
        );
        assert_eq!(none, Ok(Vec::new()));
    }

    #[test]
    fn a_stop_ends_the_rounds_and_an_error_is_returned() {
        let mut grid = done(&[50, 60]);
        let mut rounds = 0;
        // A stop after the first step of the first round.
        let times = again(&mut grid, Budget::for_grid(2), HOLD, &mut |steps| {
            rounds += 1;
            Ok::<_, ()>(steps.into_iter().take(1).map(|s| (s, 55)).collect())
        })
        .unwrap();
        assert_eq!((rounds, times), (1, vec![(0, 1)]));
        assert_eq!(grid, [(0, 55), (1, 60)]);
        let failed = again(&mut grid, Budget::for_grid(2), HOLD, &mut |_| {
            Err::<Vec<(usize, u32)>, _>("no")
        });
        assert_eq!(failed, Err("no"));
    }
}
