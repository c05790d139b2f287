use std::ops::Range;

use super::*;

/// A workload whose metric drops by `effect` when its culprit pages are
/// moved: all of them (`together`) or any of them.
struct Model {
    moved: Vec<bool>,
    culprits: Vec<usize>,
    together: bool,
    effect: f64,
    noise: f64,
    seed: u64,
    /// Fail the n-th measure call (0-based).
    fail_at: Option<usize>,
    /// Measure calls (0-based) during which the culprits have no effect:
    /// a noisy second on a busy host.
    hidden: Vec<usize>,
    measures: usize,
    max_moved_at_once: usize,
}

impl Model {
    fn new(pages: usize, culprits: &[usize]) -> Self {
        Model {
            moved: vec![false; pages],
            culprits: culprits.to_vec(),
            together: false,
            effect: 0.5,
            noise: 0.0,
            seed: 7,
            fail_at: None,
            hidden: Vec::new(),
            measures: 0,
            max_moved_at_once: 0,
        }
    }

    fn jitter(&mut self) -> f64 {
        // xorshift: deterministic noise in [-1, 1).
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        (self.seed % 2_000_001) as f64 / 1_000_000.0 - 1.0
    }

    fn all_home(&self) -> bool {
        self.moved.iter().all(|m| !m)
    }
}

impl Experiment for Model {
    type Error = String;

    fn move_away(&mut self, pages: Range<usize>) -> Result<u64, String> {
        for i in pages.clone() {
            assert!(!self.moved[i], "page {i} moved twice");
            self.moved[i] = true;
        }
        self.max_moved_at_once = self.max_moved_at_once.max(self.moved.iter().filter(|m| **m).count());
        Ok(pages.len() as u64)
    }

    fn move_back(&mut self, pages: Range<usize>) -> Result<(), String> {
        for i in pages {
            self.moved[i] = false;
        }
        Ok(())
    }

    fn measure(&mut self) -> Result<Readings, String> {
        let call = self.measures;
        self.measures += 1;
        if self.fail_at == Some(call) {
            return Err(format!("metric command failed at call {call}"));
        }
        let hit = |i: &usize| self.moved[*i];
        let slow = !self.hidden.contains(&call)
            && if self.together {
                !self.culprits.is_empty() && self.culprits.iter().all(hit)
            } else {
                self.culprits.iter().any(hit)
            };
        let base = if slow {
            100_000.0 * (1.0 - self.effect)
        } else {
            100_000.0
        };
        let values = (0..3).map(|_| base * (1.0 + self.noise * self.jitter())).collect();
        Ok(Readings::new(values).unwrap())
    }
}

#[test]
fn finds_every_single_culprit_and_leaves_every_page_home() {
    for pages in 1..=40 {
        for culprit in 0..pages {
            let mut model = Model::new(pages, &[culprit]);
            let search = bisect(&mut model, pages, DEFAULT_MIN_CHANGE).unwrap();
            assert_eq!(search.verdict, Some(Verdict::Page { index: culprit }), "{pages} pages");
            assert!(model.all_home());
            assert!(search.steps.len() <= max_steps(pages), "{} steps", search.steps.len());
            assert!(search.steps[0].change.significant);
            assert_eq!(search.steps[0].pages, 0..pages);
        }
    }
}

#[test]
fn no_effect_stops_after_moving_everything_once() {
    let mut model = Model::new(16, &[]);
    let search = bisect(&mut model, 16, DEFAULT_MIN_CHANGE).unwrap();
    assert_eq!(search.verdict, Some(Verdict::NoEffect));
    assert_eq!(search.steps.len(), 1);
    assert!(model.all_home());
}

#[test]
fn no_candidates_is_no_effect_without_moving() {
    let mut model = Model::new(0, &[]);
    let search = bisect(&mut model, 0, DEFAULT_MIN_CHANGE).unwrap();
    assert_eq!(search.verdict, Some(Verdict::NoEffect));
    assert!(search.steps.is_empty());
}

#[test]
fn an_effect_needing_two_pages_in_different_halves_is_reported_together() {
    let mut model = Model::new(16, &[3, 12]);
    model.together = true;
    let search = bisect(&mut model, 16, DEFAULT_MIN_CHANGE).unwrap();
    assert_eq!(search.verdict, Some(Verdict::Together { pages: 0..16 }));
    // Neither half changed it, so the set and both halves were measured
    // again before saying so; the set's change repeated, so no note.
    let rechecks: Vec<_> = search
        .steps
        .iter()
        .filter(|s| s.recheck)
        .map(|s| s.pages.clone())
        .collect();
    assert_eq!(rechecks, vec![0..16, 0..8, 8..16]);
    assert_eq!(search.steps.len(), 6);
    assert!(search.notes.is_empty(), "{:?}", search.notes);
    assert!(model.all_home());
}

/// Issue 33's second run: during a noisy second the half holding the hot
/// page read like the baseline, and the search said the 34 pages act only
/// together without measuring again. Measured again, that half changes the
/// metric, and the search goes on down to the page.
#[test]
fn a_half_hidden_by_a_noisy_second_is_found_when_measured_again() {
    let mut model = Model::new(16, &[10]);
    // Calls 0-1: the baseline; 2: all 16 pages; 3: pages 0-7; 4: pages 8-15.
    model.hidden = vec![4];
    let search = bisect(&mut model, 16, DEFAULT_MIN_CHANGE).unwrap();
    assert_eq!(search.verdict, Some(Verdict::Page { index: 10 }));
    let step = |i: usize| {
        (
            search.steps[i].pages.clone(),
            search.steps[i].recheck,
            search.steps[i].change.significant,
        )
    };
    assert_eq!(step(2), (8..16, false, false));
    assert_eq!(step(3), (0..16, true, true));
    assert_eq!(step(5), (8..16, true, true));
    assert!(search.steps.len() <= max_steps(16));
    assert!(model.all_home());
}

/// A set that changed the metric once, and neither it nor its halves ever
/// again: the verdict stays `together`, with a note that it did not repeat.
#[test]
fn a_change_that_does_not_repeat_is_said_so() {
    let mut model = Model::new(16, &[10]);
    // The first halving's both halves and the whole set measured again.
    model.hidden = vec![3, 4, 5, 6, 7];
    let search = bisect(&mut model, 16, DEFAULT_MIN_CHANGE).unwrap();
    assert_eq!(search.verdict, Some(Verdict::Together { pages: 0..16 }));
    assert_eq!(search.notes.len(), 1);
    assert!(
        search.notes[0]
            .starts_with("candidate pages 0-15 changed the metric when first moved but not when moved again"),
        "{}",
        search.notes[0]
    );
}

/// Readings in between take more batches, of the step and of the
/// baseline, up to the bound: the step records them all.
#[test]
fn evidence_in_between_takes_more_readings_up_to_the_bound() {
    struct Script(Vec<Vec<f64>>, usize);
    impl Experiment for Script {
        type Error = ();
        fn move_away(&mut self, pages: Range<usize>) -> Result<u64, ()> {
            Ok(pages.len() as u64)
        }
        fn move_back(&mut self, _: Range<usize>) -> Result<(), ()> {
            Ok(())
        }
        fn measure(&mut self) -> Result<Readings, ()> {
            self.1 += 1;
            Ok(Readings::new(self.0[(self.1 - 1).min(self.0.len() - 1)].clone()).unwrap())
        }
    }
    let base = vec![100.0, 94.0, 97.0];
    // The step straddles the baseline each time: never separated, and never
    // like it; after the third batch, 2 of 3 readings below is not enough.
    let straddle = vec![80.0, 110.0, 80.0];
    let script = vec![
        base.clone(),
        base.clone(),
        straddle.clone(),
        base.clone(),
        straddle.clone(),
        base.clone(),
        straddle,
    ];
    let mut experiment = Script(script, 0);
    let search = bisect(&mut experiment, 4, DEFAULT_MIN_CHANGE).unwrap();
    assert_eq!(search.verdict, Some(Verdict::NoEffect));
    let step = &search.steps[0];
    assert_eq!((step.batches, step.readings.values.len()), (BATCHES_MAX, 9));
    assert_eq!(step.change.evidence, Evidence::Unchanged);
    // The baseline: two batches, then one after each batch but the last.
    assert_eq!(step.baseline_readings, 12);
    assert_eq!(search.baseline.unwrap().values.len(), 12);
    assert_eq!(experiment.1, 7);
}

#[test]
fn either_of_two_culprits_is_found() {
    let mut model = Model::new(32, &[5, 20]);
    let search = bisect(&mut model, 32, DEFAULT_MIN_CHANGE).unwrap();
    assert!(
        matches!(search.verdict, Some(Verdict::Page { index: 5 | 20 })),
        "{:?}",
        search.verdict
    );
}

#[test]
fn noisy_readings_still_find_a_large_effect() {
    for seed in 1..50 {
        let mut model = Model::new(24, &[17]);
        model.noise = 0.01;
        model.seed = seed;
        let search = bisect(&mut model, 24, DEFAULT_MIN_CHANGE).unwrap();
        assert_eq!(search.verdict, Some(Verdict::Page { index: 17 }), "seed {seed}");
    }
}

#[test]
fn an_effect_below_min_change_is_not_a_finding() {
    // 2% effect, ±1% noise: the medians are at most ~4% apart, under 5%.
    for seed in 1..50 {
        let mut model = Model::new(24, &[17]);
        model.noise = 0.01;
        model.effect = 0.02;
        model.seed = seed;
        let search = bisect(&mut model, 24, DEFAULT_MIN_CHANGE).unwrap();
        assert_eq!(search.verdict, Some(Verdict::NoEffect), "seed {seed}");
    }
}

#[test]
fn a_failure_part_way_keeps_the_record_and_moves_the_pages_back_first() {
    for fail_at in 0..8 {
        let mut model = Model::new(64, &[40]);
        model.fail_at = Some(fail_at);
        let stopped = bisect(&mut model, 64, DEFAULT_MIN_CHANGE).unwrap_err();
        assert!(stopped.error.contains("failed"));
        assert_eq!(stopped.search.verdict, None);
        assert_eq!(stopped.search.baseline.is_some(), fail_at > 0);
        // Two baseline batches, then one measurement per step.
        assert_eq!(stopped.search.steps.len(), fail_at.saturating_sub(2));
        assert!(model.all_home(), "fail at {fail_at}");
    }
}

#[test]
fn only_one_set_is_ever_moved_at_a_time() {
    let mut model = Model::new(33, &[32]);
    bisect(&mut model, 33, DEFAULT_MIN_CHANGE).unwrap();
    assert_eq!(model.max_moved_at_once, 33);
    let mut model = Model::new(33, &[]);
    bisect(&mut model, 33, DEFAULT_MIN_CHANGE).unwrap();
    assert_eq!(model.max_moved_at_once, 33);
}

#[test]
fn a_move_that_moved_nothing_is_not_significant() {
    struct Stuck;
    impl Experiment for Stuck {
        type Error = ();
        fn move_away(&mut self, _: Range<usize>) -> Result<u64, ()> {
            Ok(0)
        }
        fn move_back(&mut self, _: Range<usize>) -> Result<(), ()> {
            Ok(())
        }
        fn measure(&mut self) -> Result<Readings, ()> {
            // A drifting workload: each reading lower than the last.
            static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) as f64;
            Ok(Readings::new(vec![1000.0 - 300.0 * n]).unwrap())
        }
    }
    let search = bisect(&mut Stuck, 8, DEFAULT_MIN_CHANGE).unwrap();
    assert_eq!(search.verdict, Some(Verdict::NoEffect));
}

#[test]
fn readings_refuse_non_finite_and_empty_sets() {
    assert!(Readings::new(vec![]).is_none());
    assert!(Readings::new(vec![1.0, f64::NAN]).is_none());
    assert!(Readings::new(vec![f64::INFINITY]).is_none());
    let r = Readings::new(vec![3.0, 1.0, 2.0, 10.0]).unwrap();
    assert_eq!((r.median, r.min, r.max, r.spread()), (2.5, 1.0, 10.0, 9.0));
}

#[test]
fn max_steps_counts_the_full_move_and_five_per_halving() {
    assert_eq!(max_steps(1), 1);
    assert_eq!(max_steps(2), 6);
    assert_eq!(max_steps(3), 11);
    assert_eq!(max_steps(1 << 24), 121);
    assert_eq!(max_moves(2), 18);
}

#[test]
fn a_verdict_names_the_pages_it_blames() {
    assert_eq!(Verdict::NoEffect.blamed(), 0..0);
    assert_eq!(Verdict::Page { index: 4 }.blamed(), 4..5);
    assert_eq!(Verdict::Together { pages: 2..6 }.blamed(), 2..6);
    let json = |v: Verdict| serde_json::to_value(v.kind()).unwrap();
    assert_eq!(json(Verdict::Together { pages: 2..6 }), "together");
    assert_eq!(json(Verdict::Page { index: 0 }), "page");
    assert_eq!(json(Verdict::NoEffect), "no_effect");
}

#[test]
fn the_period_is_the_median_time_between_changes() {
    let ms = 1_000_000;
    // Read every 100 ms, the value changes every second.
    let samples: Vec<(u64, f64)> = (0..35).map(|i| (i * 100 * ms, (i / 10) as f64)).collect();
    assert_eq!(period_ns(&samples), Some(1000 * ms));
    // Changing at every read: the reading interval.
    let every: Vec<(u64, f64)> = (0..5).map(|i| (i * 100 * ms, i as f64)).collect();
    assert_eq!(period_ns(&every), Some(100 * ms));
    // One change or none cannot be timed.
    assert_eq!(period_ns(&[(0, 1.0), (ms, 1.0), (2 * ms, 2.0)]), None);
    assert_eq!(period_ns(&[(0, 1.0)]), None);
    assert_eq!(period_ns(&[]), None);
}

#[test]
fn the_settle_readings_give_the_period_and_a_capped_spacing() {
    let ms = 1_000_000;
    let samples: Vec<(u64, f64)> = (0..35).map(|i| (i * 100 * ms, (i / 10) as f64)).collect();
    let period = MetricPeriod::of(&samples);
    assert_eq!(period.readings, 35);
    assert_eq!(period.over, std::time::Duration::from_millis(3400));
    assert_eq!(period.period, Some(std::time::Duration::from_secs(1)));
    assert_eq!(period.spacing(), std::time::Duration::from_secs(1));
    // A metric that never changed is read back to back.
    let still = MetricPeriod::of(&[(0, 1.0), (ms, 1.0)]);
    assert_eq!((still.period, still.spacing()), (None, std::time::Duration::ZERO));
    assert_eq!(MetricPeriod::of(&[]).over, std::time::Duration::ZERO);
    // A slow metric is still read at least every SPACING_MAX.
    let slow: Vec<(u64, f64)> = (0..4).map(|i| (i * 120_000 * ms, i as f64)).collect();
    assert_eq!(MetricPeriod::of(&slow).spacing(), SPACING_MAX);
}

#[test]
fn repeated_readings_are_called_quantised() {
    let repeats = Readings::new(vec![90.0, 90.0, 90.0]).unwrap();
    let varied = Readings::new(vec![100.0, 94.0, 97.0]).unwrap();
    let note = quantised([&varied, &repeats, &repeats], 0.05).unwrap();
    assert!(
        note.starts_with("the readings look quantised: 4 of 6 repeated"),
        "{note}"
    );
    assert!(
        note.contains("--min-change (5.0%)") && note.contains("(spread 6)"),
        "{note}"
    );
    assert_eq!(
        quantised([&varied, &repeats], 0.05),
        None,
        "2 of 4 is not more than half"
    );
    assert_eq!(quantised([&Readings::new(vec![1.0]).unwrap()], 0.05), None);
}
