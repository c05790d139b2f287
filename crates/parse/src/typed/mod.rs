//! Values as people type them on a command line: durations (`500ms`,
//! `1.5s`), whole numbers in a range, lists of them, byte sizes (`64K`,
//! `1.5G`) and sweeps of sizes (`16K..1G`), CPU and node lists (`0-3,8`).
//!
//! Every parser takes its limits as arguments and checks the range on the
//! number it read, before any `Duration` or buffer is built, so no input
//! can overflow, panic or ask for a petabyte. The limits themselves belong
//! to the requests that carry the values (`numasleuth_app::limits`); the
//! messages quote them, so each is named once.

mod duration;
mod size;

use std::fmt;
use std::time::Duration;

use crate::{IdList, ParseError};

pub use duration::{duration_in, millis_in};
pub use size::{buffer_bytes, size_bytes, size_sweep, Sizes};

/// Why a typed value was refused: one line, quoting what was typed and
/// the range it had to be in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypedError {
    #[error("`{text}` has no unit: write {text}ms or {text}s (units: ms, s, m, h); give {range}")]
    NoUnit { text: String, range: DurationRange },
    #[error("`{text}` is not a duration like 500ms, 1s, 2m or 1h; give {range}")]
    NotDuration { text: String, range: DurationRange },
    #[error("`{text}` is out of range: give {range}")]
    DurationOutOfRange { text: String, range: DurationRange },
    /// Not digits alone, or outside `min..=max`.
    #[error("`{text}` is not {what} from {min} to {max}")]
    NotWhole {
        text: String,
        what: &'static str,
        min: u64,
        max: u64,
    },
    /// A list with more entries than `max`; `what` names them (`delays`).
    #[error("{count} {what} given; at most {max}")]
    TooMany {
        count: usize,
        what: &'static str,
        max: usize,
    },
    #[error("`{text}` is not a size such as 64K, 256M or 1G")]
    NotSize { text: String },
    #[error("`{text}` is out of range (1 byte to 1 PiB)")]
    SizeOutOfRange { text: String },
    #[error("`{text}` is out of range: a buffer is {} to {}", size::short(*.min_bytes), size::short(*.max_bytes))]
    BufferOutOfRange {
        text: String,
        min_bytes: usize,
        max_bytes: usize,
    },
    #[error("`{text}`: the range runs backwards")]
    Backwards { text: String },
    #[error("the list is {text_bytes} bytes long; at most {max_bytes} (write ranges like 0-63 or 0-62:2)")]
    IdListTooLong { text_bytes: usize, max_bytes: usize },
    #[error("the list is empty; give ids like 0-3,8 or 0-30:2")]
    EmptyIdList,
    #[error(transparent)]
    Ids(#[from] ParseError),
}

/// The range a duration had to be in, as a message says it: "a duration
/// from 1ms to 7 days (168h)".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationRange {
    pub min: Duration,
    pub max: Duration,
}

impl fmt::Display for DurationRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a duration from {} to {}", show(self.min), show(self.max))
    }
}

/// How a limit reads in a message: `100ms`, `1h`, `7 days (168h)`.
fn show(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        ms if ms < 1000 => format!("{ms}ms"),
        86_400_000 => "1 day (24h)".to_string(),
        ms if ms % 86_400_000 == 0 => format!("{} days ({}h)", ms / 86_400_000, ms / 3_600_000),
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

/// A whole number from `min` to `max`, `what` naming it in the refusal
/// ("a thread count"); anything else (signs, fractions, hex, overflow) is
/// refused with the range.
pub fn whole_in(text: &str, min: u64, max: u64, what: &'static str) -> Result<u64, TypedError> {
    let trimmed = text.trim();
    let refused = || TypedError::NotWhole {
        text: trimmed.to_string(),
        what,
        min,
        max,
    };
    if trimmed.is_empty() || !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refused());
    }
    let value: u64 = trimmed.parse().map_err(|_| refused())?;
    if !(min..=max).contains(&value) {
        return Err(refused());
    }
    Ok(value)
}

/// `mem loaded --delays`: a comma list of busy-wait times in ns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelaysNs(pub Vec<u64>);

/// A comma list of delays in ns, each 0 to `max_ns`, at most `max_count`.
pub fn delays_ns(text: &str, max_ns: u64, max_count: usize) -> Result<DelaysNs, TypedError> {
    let delays = text
        .split(',')
        .map(|d| whole_in(d, 0, max_ns, "a delay in ns"))
        .collect::<Result<Vec<_>, _>>()?;
    if delays.len() > max_count {
        return Err(TypedError::TooMany {
            count: delays.len(),
            what: "delays",
            max: max_count,
        });
    }
    Ok(DelaysNs(delays))
}

/// A CPU or node list as typed (numactl's `0-3,8`, or the strided
/// `0-30:2` numasleuth prints), read by `parse` (the CPU or the node form
/// of [`IdList`]'s input parser); text longer than `max_text_bytes` is
/// refused before it is read, and so is a list that names no id.
pub fn id_list(
    text: &str,
    parse: fn(&str) -> Result<IdList, ParseError>,
    max_text_bytes: usize,
) -> Result<IdList, TypedError> {
    if text.len() > max_text_bytes {
        return Err(TypedError::IdListTooLong {
            text_bytes: text.len(),
            max_bytes: max_text_bytes,
        });
    }
    let list = parse(text)?;
    if list.is_empty() {
        return Err(TypedError::EmptyIdList);
    }
    Ok(list)
}

#[cfg(test)]
mod tests;
