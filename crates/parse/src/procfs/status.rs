//! `/proc/PID/status`: the CPUs and memory nodes a task may use.
//!
//! These are the kernel's final word on placement after cgroups, taskset and
//! `set_mempolicy`-independent cpuset limits, so `topo` reports them as the
//! restriction the user actually lives under.

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
    fn garbage_list_is_an_error() {
        assert!(parse_allowed("Cpus_allowed_list:\tfoo\n").is_err());
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,80}") {
            let _ = parse_allowed(&text);
        }
    }
}
