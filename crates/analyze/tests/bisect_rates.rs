//! How often `bisect`'s rule is wrong, on seeded noisy series: a grid of
//! multiplicative noise levels × effect sizes × outlier probabilities, a
//! whole search each time over 16 candidate pages with one culprit. The
//! table in docs/bisect.md is this test's output (between the
//! `bisect-rates` markers); `BISECT_RATES_UPDATE=1` rewrites it there, and
//! otherwise the test fails when the docs disagree with what it computes.
//!
//! The noise is deterministic (xorshift, arithmetic only), so the rates
//! are the same on every machine.

use std::ops::Range;
use std::path::Path;

use numasleuth_analyze::bisect::{bisect, Experiment, Readings, Verdict, DEFAULT_MIN_CHANGE};

const PAGES: usize = 16;
const TRIALS: usize = 200;
const ROUNDS: usize = 3;
const NOISE: [f64; 4] = [0.01, 0.05, 0.10, 0.20];
const OUTLIERS: [f64; 3] = [0.0, 0.05, 0.10];
/// Effects in multiples of the noise level; 0 is no effect.
const EFFECT_TIMES_NOISE: [f64; 4] = [0.0, 1.0, 2.0, 4.0];
/// The effect: the rate 2.6 times as high.
const LARGE_EFFECT: f64 = 1.6;

/// A workload whose rate is `1 + effect` times as high while its culprit
/// page is away; every reading is multiplied by `1 + noise × g` (g about
/// standard normal) and, with probability `outliers`, by a factor
/// anywhere in 0.5–2 (a busy host's second).
struct Noisy {
    away: Vec<bool>,
    culprit: usize,
    effect: f64,
    noise: f64,
    outliers: f64,
    state: u64,
}

impl Noisy {
    fn uniform(&mut self) -> f64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        (self.state >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Irwin–Hall: twelve uniforms less 6, mean 0 and variance 1.
    fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.uniform()).sum::<f64>() - 6.0
    }
}

impl Experiment for Noisy {
    type Error = ();
    fn move_away(&mut self, pages: Range<usize>) -> Result<u64, ()> {
        self.away[pages.clone()].fill(true);
        Ok(pages.len() as u64)
    }
    fn move_back(&mut self, pages: Range<usize>) -> Result<(), ()> {
        self.away[pages].fill(false);
        Ok(())
    }
    fn measure(&mut self) -> Result<Readings, ()> {
        let rate = if self.away[self.culprit] {
            1000.0 * (1.0 + self.effect)
        } else {
            1000.0
        };
        let values = (0..ROUNDS)
            .map(|_| {
                let mut value = rate * (1.0 + self.noise * self.normal());
                if self.uniform() < self.outliers {
                    value *= 0.5 + 1.5 * self.uniform();
                }
                value
            })
            .collect();
        Ok(Readings::new(values).unwrap())
    }
}

/// One cell of the grid: how often the search blamed some page, and how
/// often it named the culprit; and over its steps, how often a set
/// without the culprit was called changed (and one with it).
#[derive(Default)]
struct Cell {
    blamed: usize,
    found: usize,
    null_steps: usize,
    null_changed: usize,
    culprit_steps: usize,
    culprit_changed: usize,
    readings: usize,
}

fn cell(noise: f64, effect: f64, outliers: f64, salt: u64) -> Cell {
    let mut out = Cell::default();
    for trial in 0..TRIALS as u64 {
        let mut model = Noisy {
            away: vec![false; PAGES],
            culprit: (trial as usize * 7) % PAGES,
            effect,
            noise,
            outliers,
            state: (salt << 20 | trial).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        };
        let search = bisect(&mut model, PAGES, DEFAULT_MIN_CHANGE).unwrap();
        out.blamed += usize::from(search.verdict != Some(Verdict::NoEffect));
        out.found += usize::from(search.verdict == Some(Verdict::Page { index: model.culprit }));
        out.readings += search.baseline.map_or(0, |b| b.values.len());
        for step in &search.steps {
            out.readings += step.readings.values.len();
            if step.pages.contains(&model.culprit) && effect > 0.0 {
                out.culprit_steps += 1;
                out.culprit_changed += usize::from(step.change.significant);
            } else {
                out.null_steps += 1;
                out.null_changed += usize::from(step.change.significant);
            }
        }
    }
    out
}

fn percent(part: usize, whole: usize) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

struct Grid {
    table: String,
    /// (noise, outliers, effect, % of searches that blamed a page or found the culprit)
    rows: Vec<(f64, f64, f64, f64)>,
    null_steps: (usize, usize),
}

fn grid() -> Grid {
    let mut table = String::from(
        "| noise | outliers | effect | searches blaming a page | culprit found | sets without it called changed | \
         sets with it called changed | readings per search |\n|---|---|---|---|---|---|---|---|\n",
    );
    let (mut rows, mut null_steps, mut salt) = (Vec::new(), (0, 0), 0);
    for noise in NOISE {
        for outliers in OUTLIERS {
            let effects = EFFECT_TIMES_NOISE.map(|k| k * noise);
            for effect in effects.into_iter().chain([LARGE_EFFECT]) {
                salt += 1;
                let c = cell(noise, effect, outliers, salt);
                let rate = if effect == 0.0 {
                    percent(c.blamed, TRIALS)
                } else {
                    percent(c.found, TRIALS)
                };
                rows.push((noise, outliers, effect, rate));
                null_steps.0 += c.null_changed;
                null_steps.1 += c.null_steps;
                let with = if effect > 0.0 {
                    format!("{:.1}%", percent(c.culprit_changed, c.culprit_steps))
                } else {
                    "-".into()
                };
                let found = if effect > 0.0 {
                    format!("{:.1}%", percent(c.found, TRIALS))
                } else {
                    "-".into()
                };
                table.push_str(&format!(
                    "| ±{:.0}% | {:.0}% | {} | {:.1}% | {found} | {:.1}% | {with} | {:.0} |\n",
                    noise * 100.0,
                    outliers * 100.0,
                    if effect == 0.0 {
                        "none".to_string()
                    } else {
                        format!("+{:.0}%", effect * 100.0)
                    },
                    percent(c.blamed, TRIALS),
                    percent(c.null_changed, c.null_steps),
                    c.readings as f64 / TRIALS as f64,
                ));
            }
        }
    }
    table.push_str(&format!(
        "\n{TRIALS} searches per row over {PAGES} pages, {ROUNDS} readings per batch, --min-change {:.0}%; over all \
         rows, {:.2}% of the sets without the culprit were called changed ({} of {}).\n",
        DEFAULT_MIN_CHANGE * 100.0,
        percent(null_steps.0, null_steps.1),
        null_steps.0,
        null_steps.1
    ));
    Grid {
        table,
        rows,
        null_steps,
    }
}

const START: &str = "<!-- bisect-rates:start -->\n";
const END: &str = "<!-- bisect-rates:end -->";

#[test]
fn the_rule_rarely_blames_noise_and_finds_effects_four_times_the_noise() {
    let grid = grid();
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/bisect.md");
    let text = std::fs::read_to_string(&docs).unwrap();
    let (Some(a), Some(b)) = (text.find(START), text.find(END)) else {
        panic!("docs/bisect.md lacks the bisect-rates markers");
    };
    let current = &text[a + START.len()..b];
    if std::env::var_os("BISECT_RATES_UPDATE").is_some() {
        let updated = format!("{}{START}{}{}", &text[..a], grid.table, &text[b..]);
        std::fs::write(&docs, updated).unwrap();
    } else {
        assert_eq!(
            current, grid.table,
            "docs/bisect.md's rates are stale: run with BISECT_RATES_UPDATE=1"
        );
    }
    for &(noise, outliers, effect, rate) in &grid.rows {
        if effect == 0.0 {
            assert!(
                rate <= 5.0,
                "±{noise} noise, {outliers} outliers: {rate}% of searches blamed a page"
            );
        } else if effect >= 4.0 * noise && effect >= 2.0 * DEFAULT_MIN_CHANGE {
            // Twice the noise is found only 0-76% of the time (docs/bisect.md):
            // three readings a batch cannot tell it from noise often enough.
            assert!(
                rate >= 90.0,
                "±{noise} noise, {outliers} outliers, +{effect}: culprit found {rate}%"
            );
        }
    }
    let (wrong, of) = grid.null_steps;
    assert!(
        percent(wrong, of) <= 2.0,
        "{wrong} of {of} sets without the culprit called changed"
    );
}
