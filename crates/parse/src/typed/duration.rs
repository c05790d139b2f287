//! Durations as typed: `500ms`, `1s`, `1.5s`, `2m`, `1h`.

use std::time::Duration;

use super::{whole_in, DurationRange, TypedError};

/// A duration between `min` and `max`. The unit is required: a bare `500`
/// meant milliseconds to some users and seconds to others. The range is
/// checked on the number before any `Duration` is built, so no input can
/// overflow or panic.
pub fn duration_in(text: &str, min: Duration, max: Duration) -> Result<Duration, TypedError> {
    let text = text.trim();
    let range = DurationRange { min, max };
    let not_duration = || TypedError::NotDuration {
        text: text.to_string(),
        range,
    };
    let Some((number, seconds_per_unit)) = [("ms", 1e-3), ("s", 1.0), ("m", 60.0), ("h", 3600.0)]
        .into_iter()
        .find_map(|(unit, scale)| Some((text.strip_suffix(unit)?, scale)))
    else {
        return Err(match text.parse::<f64>() {
            Ok(_) => TypedError::NoUnit {
                text: text.to_string(),
                range,
            },
            Err(_) => not_duration(),
        });
    };
    let value: f64 = number.trim().parse().map_err(|_| not_duration())?;
    let seconds = value * seconds_per_unit;
    if !seconds.is_finite() || seconds < min.as_secs_f64() || seconds > max.as_secs_f64() {
        return Err(TypedError::DurationOutOfRange {
            text: text.to_string(),
            range,
        });
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Milliseconds, as a flag named `--…-ms` says (`40`, refused as `what`
/// out of range), or any duration with its unit (`40ms`, `0.5s`), from
/// `min` to `max`; the answer in whole milliseconds.
pub fn millis_in(text: &str, min: Duration, max: Duration, what: &'static str) -> Result<u64, TypedError> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        let (min_ms, max_ms) = (min.as_millis() as u64, max.as_millis() as u64);
        return whole_in(trimmed, min_ms, max_ms, what);
    }
    duration_in(trimmed, min, max).map(|d| d.as_millis() as u64)
}
