//! The two small languages of `/sys/bus/event_source/devices/PMU/`:
//! - `format/FIELD` says where a field's bits go in `perf_event_attr`,
//!   e.g. `config:0-7` or, for AMD's 12-bit event select,
//!   `config:0-7,32-35`;
//! - `events/ALIAS` names an event by its field values, e.g.
//!   `event=0x3c,umask=0x00`, with `cpu=?` for a value the user must give.
//!
//! `encode` joins the two into the `config`, `config1`, `config2` and
//! `config3` words `perf_event_open` takes, the way the perf tool does
//! (the value's bits fill the field's bits from the lowest up). Everything
//! here is pure, so hostile or odd sysfs text is tested without a kernel.

use std::collections::BTreeMap;

use crate::error::ParseError;

/// A format or alias file longer than this is not one the kernel wrote
/// (the longest real aliases are under 200 bytes).
pub const MAX_SPEC_BYTES: usize = 4096;
/// Terms in one alias; real ones have at most about eight.
pub const MAX_TERMS: usize = 64;

/// Which `perf_event_attr` word a field lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConfigWord {
    Config,
    Config1,
    Config2,
    Config3,
}

impl ConfigWord {
    fn from_name(name: &str) -> Option<Self> {
        match name {
            "config" => Some(ConfigWord::Config),
            "config1" => Some(ConfigWord::Config1),
            "config2" => Some(ConfigWord::Config2),
            "config3" => Some(ConfigWord::Config3),
            _ => None,
        }
    }
}

/// One `format/` file: the bits of one word a field occupies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatField {
    pub word: ConfigWord,
    /// Set bits are the field's; the value fills them from the lowest.
    pub mask: u64,
}

impl FormatField {
    pub fn width_bits(&self) -> u32 {
        self.mask.count_ones()
    }
}

/// `config:0-7`, `config1:0-63`, `config:21`, `config:0-7,32-35`.
pub fn parse_format(text: &str) -> Result<FormatField, ParseError> {
    let text = text.trim();
    if text.len() > MAX_SPEC_BYTES {
        return Err(ParseError::new(format!(
            "{} bytes, more than a format spec",
            text.len()
        )));
    }
    let (word, ranges) = text
        .split_once(':')
        .ok_or_else(|| ParseError::new(format!("`{text}` is not `configN:BITS`")))?;
    let word =
        ConfigWord::from_name(word.trim()).ok_or_else(|| ParseError::new(format!("unknown word `{}`", word.trim())))?;
    let mut mask = 0u64;
    for range in ranges.split(',') {
        let range = range.trim();
        let (lo, hi) = match range.split_once('-') {
            Some((lo, hi)) => (bit(lo)?, bit(hi)?),
            None => (bit(range)?, bit(range)?),
        };
        if lo > hi {
            return Err(ParseError::new(format!("bit range `{range}` runs backwards")));
        }
        // lo..=hi within 0..=63, so the shift never overflows.
        let width = hi - lo + 1;
        let bits = if width == 64 {
            u64::MAX
        } else {
            ((1u64 << width) - 1) << lo
        };
        mask |= bits;
    }
    Ok(FormatField { word, mask })
}

fn bit(text: &str) -> Result<u32, ParseError> {
    let text = text.trim();
    match text.parse::<u32>() {
        Ok(b) if b < 64 && !text.starts_with('+') => Ok(b),
        _ => Err(ParseError::new(format!("`{text}` is not a bit from 0 to 63"))),
    }
}

/// The value of one alias term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermValue {
    Number(u64),
    /// `cpu=?`: the user must supply it (uncore PMUs, per-CPU parameters).
    Ask,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub name: String,
    pub value: TermValue,
}

/// `event=0x3c,umask=0x00`, `event=0xcd,umask=0x1,ldlat=3`, `edge`
/// (a bare term is 1), `cpu=?`. Numbers are hex with `0x`, else decimal,
/// as the perf tool reads them.
pub fn parse_event(text: &str) -> Result<Vec<Term>, ParseError> {
    let text = text.trim();
    if text.len() > MAX_SPEC_BYTES {
        return Err(ParseError::new(format!(
            "{} bytes, more than an event alias",
            text.len()
        )));
    }
    if text.is_empty() {
        return Err(ParseError::new("empty event alias"));
    }
    let mut terms: Vec<Term> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (name, value) = match part.split_once('=') {
            Some((name, value)) => (name.trim(), value.trim()),
            None => (part, "1"),
        };
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(ParseError::new(format!("`{part}` is not `name=value`")));
        }
        let value = if value == "?" {
            TermValue::Ask
        } else {
            TermValue::Number(
                number(value).ok_or_else(|| ParseError::new(format!("`{part}`: `{value}` is not a number")))?,
            )
        };
        if terms.iter().any(|t| t.name == name) {
            return Err(ParseError::new(format!("`{name}` is given twice")));
        }
        if terms.len() == MAX_TERMS {
            return Err(ParseError::new(format!("more than {MAX_TERMS} terms")));
        }
        terms.push(Term {
            name: name.to_string(),
            value,
        });
    }
    Ok(terms)
}

fn number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => u64::from_str_radix(hex, 16).ok(),
        Some(_) => None,
        None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
        None => None,
    }
}

/// The words `perf_event_open` takes for one event of a PMU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Config {
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
    pub config3: u64,
}

impl Config {
    fn word_mut(&mut self, word: ConfigWord) -> &mut u64 {
        match word {
            ConfigWord::Config => &mut self.config,
            ConfigWord::Config1 => &mut self.config1,
            ConfigWord::Config2 => &mut self.config2,
            ConfigWord::Config3 => &mut self.config3,
        }
    }
}

/// Terms the perf tool accepts that set sampling, not the event; counting
/// ignores them.
const SAMPLING_TERMS: [&str; 2] = ["period", "freq"];

/// Places each term's value in the bits its `format/` field names. A term
/// named `config`, `config1`… without a field of that name sets the whole
/// word, as perf allows.
pub fn encode(terms: &[Term], formats: &BTreeMap<String, FormatField>) -> Result<Config, ParseError> {
    let mut out = Config::default();
    for term in terms {
        let value = match term.value {
            TermValue::Number(v) => v,
            TermValue::Ask => {
                return Err(ParseError::new(format!(
                    "needs a value for `{}` ({}=?), which only the user can choose",
                    term.name, term.name
                )))
            }
        };
        if let Some(field) = formats.get(&term.name) {
            let width = field.width_bits();
            if width < 64 && value >> width != 0 {
                return Err(ParseError::new(format!(
                    "`{}={value:#x}` does not fit the field's {width} bits",
                    term.name
                )));
            }
            *out.word_mut(field.word) |= deposit(value, field.mask);
        } else if let Some(word) = ConfigWord::from_name(&term.name) {
            *out.word_mut(word) |= value;
        } else if !SAMPLING_TERMS.contains(&term.name.as_str()) {
            return Err(ParseError::new(format!("`{}` is not a field in format/", term.name)));
        }
    }
    Ok(out)
}

/// The low bits of `value` placed, in order, on the set bits of `mask`
/// (what x86's PDEP does).
fn deposit(value: u64, mask: u64) -> u64 {
    let mut out = 0u64;
    let mut remaining = mask;
    let mut source = value;
    while remaining != 0 {
        let lowest = remaining & remaining.wrapping_neg();
        if source & 1 == 1 {
            out |= lowest;
        }
        source >>= 1;
        remaining &= remaining - 1;
    }
    out
}

#[cfg(test)]
#[path = "pmu_format_tests.rs"]
mod tests;
