//! `/proc/PID/status`: the CPUs and memory nodes a task may use, and the
//! signals it ignores.
//!
//! The allowed lists are the kernel's final word on placement after
//! cgroups, taskset and `set_mempolicy`-independent cpuset limits, so `topo`
//! reports them as the restriction the user actually lives under.

use crate::cpulist::IdList;
use crate::error::{quote, ParseError};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowed {
    pub cpus: Option<IdList>,
    pub mems: Option<IdList>,
}

pub fn parse_allowed(text: &str) -> Result<Allowed, ParseError> {
    let mut allowed = Allowed::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let slot = match key.trim() {
            "Cpus_allowed_list" => &mut allowed.cpus,
            "Mems_allowed_list" => &mut allowed.mems,
            _ => continue,
        };
        let parse = if key.trim() == "Mems_allowed_list" {
            IdList::parse_nodes
        } else {
            IdList::parse
        };
        let list = parse(value).map_err(|e| ParseError::new(format!("{}: {}", quote(key.trim()), e.0)))?;
        *slot = Some(list);
    }
    Ok(allowed)
}

/// The signals set to be ignored (`SigIgn`, a hex mask): bit `n - 1` is
/// signal `n`. `None` when the line is absent.
pub fn parse_ignored_signals(text: &str) -> Result<Option<SignalMask>, ParseError> {
    let Some(value) = text.lines().find_map(|line| line.strip_prefix("SigIgn:")) else {
        return Ok(None);
    };
    let value = value.trim();
    u64::from_str_radix(value, 16)
        .map(|bits| Some(SignalMask(bits)))
        .map_err(|_| ParseError::new(format!("SigIgn: {} is not a hex mask", quote(value))))
}

/// A set of signals 1 to 64, as the kernel prints them in `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SignalMask(pub u64);

impl SignalMask {
    pub fn contains(self, signal: i32) -> bool {
        (1..=64).contains(&signal) && self.0 & (1u64 << (signal - 1)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn allowed_lists() {
        // Abridged /proc/self/status from this project's development VM.
        let text = "Name:\tcat\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed:\t00000000,00000001\nMems_allowed_list:\t0\n";
        let allowed = parse_allowed(text).unwrap();
        assert_eq!(allowed.cpus.unwrap().to_string(), "0-1");
        assert_eq!(allowed.mems.unwrap().to_string(), "0");
    }

    #[test]
    fn ignored_signals() {
        // Abridged /proc/self/status of `nohup cat` on the development VM:
        // SIGHUP (1) ignored.
        let text = "Name:\tcat\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000000001\nSigCgt:\t0000000000000000\n";
        let mask = parse_ignored_signals(text).unwrap().unwrap();
        assert!(mask.contains(1));
        assert!(!mask.contains(2) && !mask.contains(0) && !mask.contains(65) && !mask.contains(-1));
        assert!(SignalMask(1 << 63).contains(64));
        assert_eq!(parse_ignored_signals("Name:\tcat\n").unwrap(), None);
        assert!(parse_ignored_signals("SigIgn:\tzz\n").is_err());
    }

    #[test]
    fn garbage_list_is_an_error() {
        assert!(parse_allowed("Cpus_allowed_list:\tfoo\n").is_err());
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,80}") {
            let _ = parse_allowed(&text);
            let _ = parse_ignored_signals(&text);
        }
    }
}
