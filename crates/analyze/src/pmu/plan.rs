//! Which events to open: the generic catalogue plus every sysfs alias, or
//! the list the user gave (`cycles`, `msr/tsc`, or raw terms of a PMU such
//! as `cpu/event=0x3c,umask=0x00/`). Aliases that cannot be counted here
//! are set apart with the reason before anything is opened:
//! - an alias whose text or format is unusable (see `kernel::sysfs::pmu`);
//! - every alias of a system-wide PMU (one with a `cpumask`: uncore,
//!   power, cstate), which counts a package or the machine, never one
//!   process, so the kernel would refuse it for a task anyway.

use std::collections::BTreeSet;

use numasleuth_model::perf::catalog;
use numasleuth_model::perf::pmu::EventSpec;
use numasleuth_parse::error::ParseError;
use numasleuth_parse::sysfs::pmu::{AliasError, Pmu, PmuReadings, MAX_EVENTS_PER_PMU, MAX_PMUS};
use numasleuth_parse::sysfs::pmu_format::{self, Config};
use thiserror::Error;

use super::Unavailable;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    All,
    List(Vec<String>),
}

/// Why a name in `--events` names nothing that can be opened here.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlanError {
    #[error(
        "unknown event `{name}`: give a generic event (cycles, instructions, task-clock, page-faults, \
         LLC-load-misses, …), PMU/ALIAS from /sys/bus/event_source/devices/PMU/events, or PMU/TERMS such as \
         cpu/event=0x3c,umask=0x00/"
    )]
    UnknownEvent { name: String },
    #[error("event `{name}`: {error}")]
    BadTerms { name: String, error: ParseError },
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub events: Vec<EventSpec>,
    pub not_tried: Vec<Unavailable>,
    pub notes: Vec<String>,
}

/// The perf event of a sysfs PMU event: its PMU's type and the encoded
/// config words.
pub fn spec(name: &str, pmu: &Pmu, config: Config) -> EventSpec {
    EventSpec {
        name: name.to_string(),
        pmu: pmu.name.clone(),
        type_id: pmu.type_id,
        config: config.config,
        config1: config.config1,
        config2: config.config2,
        config3: config.config3,
    }
}

fn system_wide_why(pmu: &Pmu) -> String {
    format!(
        "{} counts a whole package or the machine (it has a cpumask), not one process: use `perf stat -a -e {}/…/`",
        pmu.name, pmu.name
    )
}

/// One sysfs alias: counted, or set apart with why.
fn alias(pmu: &Pmu, name: &str, config: &Result<Config, AliasError>) -> Result<EventSpec, Unavailable> {
    let unavailable = |why: String| Unavailable {
        name: name.to_string(),
        pmu: pmu.name.clone(),
        why,
    };
    if pmu.system_wide {
        return Err(unavailable(system_wide_why(pmu)));
    }
    match config {
        Ok(config) => Ok(spec(name, pmu, *config)),
        Err(why) => Err(unavailable(why.to_string())),
    }
}

fn reading_notes(readings: &PmuReadings) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(listed) = readings.pmus_listed {
        notes.push(format!(
            "only the first {MAX_PMUS} of {listed} PMUs under /sys/bus/event_source/devices were read"
        ));
    }
    for pmu in &readings.pmus {
        if let Some(listed) = pmu.events_listed {
            notes.push(format!(
                "only the first {MAX_EVENTS_PER_PMU} of {listed} aliases of PMU {} were read",
                pmu.name
            ));
        }
    }
    notes.extend(readings.unread.iter().map(|u| format!("could not read {u}")));
    notes
}

pub fn plan(readings: &PmuReadings, selection: &Selection) -> Result<Plan, PlanError> {
    let mut out = Plan {
        notes: reading_notes(readings),
        ..Plan::default()
    };
    match selection {
        Selection::All => {
            out.events = catalog::generic_events();
            for pmu in &readings.pmus {
                for event in &pmu.events {
                    match alias(pmu, &event.name, &event.config) {
                        Ok(spec) => out.events.push(spec),
                        Err(unavailable) => out.not_tried.push(unavailable),
                    }
                }
            }
        }
        Selection::List(names) => {
            let generic = catalog::generic_events();
            let mut seen = BTreeSet::new();
            for name in names {
                let name = name.trim().trim_end_matches('/');
                if !seen.insert(name.to_string()) {
                    continue;
                }
                match lookup(readings, &generic, name)? {
                    Ok(spec) => out.events.push(spec),
                    Err(unavailable) => out.not_tried.push(unavailable),
                }
            }
        }
    }
    Ok(out)
}

/// One name from `--events`: `Err` when it names nothing this kernel has.
fn lookup(
    readings: &PmuReadings,
    generic: &[EventSpec],
    name: &str,
) -> Result<Result<EventSpec, Unavailable>, PlanError> {
    if let Some(event) = generic.iter().find(|e| e.name == name) {
        return Ok(Ok(event.clone()));
    }
    let unknown = || PlanError::UnknownEvent { name: name.to_string() };
    let Some((pmu_name, rest)) = name.split_once('/') else {
        return Err(unknown());
    };
    let pmu = readings.pmus.iter().find(|p| p.name == pmu_name).ok_or_else(unknown)?;
    if let Some(event) = pmu.events.iter().find(|e| e.name == rest) {
        return Ok(alias(pmu, name, &event.config).map(|mut s| {
            s.name = rest.to_string();
            s
        }));
    }
    if !rest.contains('=') {
        return Err(unknown());
    }
    let config = pmu_format::parse_event(rest)
        .and_then(|terms| pmu_format::encode(&terms, &pmu.formats))
        .map_err(|error| PlanError::BadTerms {
            name: name.to_string(),
            error,
        })?;
    Ok(alias(pmu, rest, &Ok(config)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_parse::sysfs::pmu::PmuEvent;
    use std::collections::BTreeMap;

    fn readings() -> PmuReadings {
        let mut formats = BTreeMap::new();
        formats.insert("event".into(), pmu_format::parse_format("config:0-7").unwrap());
        formats.insert("umask".into(), pmu_format::parse_format("config:8-15").unwrap());
        let cpu = Pmu {
            name: "cpu".into(),
            type_id: 4,
            system_wide: false,
            formats: formats.clone(),
            events: vec![
                PmuEvent {
                    name: "cpu-cycles".into(),
                    config: Ok(Config {
                        config: 0x3c,
                        ..Config::default()
                    }),
                },
                PmuEvent {
                    name: "odd".into(),
                    config: Err(AliasError::Malformed {
                        path: "/sys/bus/event_source/devices/cpu/events/odd".into(),
                        error: numasleuth_parse::error::ParseError::new("`frob` is not a field in format/"),
                    }),
                },
            ],
            events_listed: None,
        };
        let imc = Pmu {
            name: "uncore_imc_0".into(),
            type_id: 14,
            system_wide: true,
            formats,
            events: vec![PmuEvent {
                name: "cas_count_read".into(),
                config: Ok(Config::default()),
            }],
            events_listed: Some(5000),
        };
        PmuReadings {
            pmus: vec![cpu, imc],
            pmus_listed: None,
            unread: Vec::new(),
        }
    }

    #[test]
    fn all_is_the_catalogue_plus_every_alias_that_can_count_a_process() {
        let plan = plan(&readings(), &Selection::All).unwrap();
        assert_eq!(plan.events.len(), catalog::generic_events().len() + 1);
        let last = plan.events.last().unwrap();
        assert_eq!(
            (last.name.as_str(), last.pmu.as_str(), last.type_id, last.config),
            ("cpu-cycles", "cpu", 4, 0x3c)
        );
        let why: Vec<(&str, &str)> = plan
            .not_tried
            .iter()
            .map(|u| (u.name.as_str(), u.why.as_str()))
            .collect();
        assert_eq!(
            why[0],
            (
                "odd",
                "/sys/bus/event_source/devices/cpu/events/odd: `frob` is not a field in format/"
            )
        );
        assert!(why[1].1.contains("uncore_imc_0 counts a whole package"), "{why:?}");
        assert_eq!(
            plan.notes,
            ["only the first 4096 of 5000 aliases of PMU uncore_imc_0 were read"]
        );
    }

    #[test]
    fn a_list_takes_generic_names_aliases_and_raw_terms() {
        let list = [
            "cycles",
            "cpu/cpu-cycles/",
            "cpu/event=0xc0,umask=0x1/",
            "cycles",
            "uncore_imc_0/cas_count_read",
        ];
        let plan = plan(
            &readings(),
            &Selection::List(list.iter().map(|s| s.to_string()).collect()),
        )
        .unwrap();
        let names: Vec<&str> = plan.events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["cycles", "cpu-cycles", "event=0xc0,umask=0x1"]);
        assert_eq!(plan.events[2].config, 0x1c0);
        assert_eq!(plan.not_tried.len(), 1, "the uncore alias is set apart, not dropped");
    }

    #[test]
    fn unknown_names_and_bad_terms_are_errors() {
        for (name, says) in [
            ("cycels", "unknown event `cycels`"),
            ("nopmu/x", "unknown event `nopmu/x`"),
            ("cpu/no-such-alias", "unknown event `cpu/no-such-alias`"),
            ("cpu/event=0x100", "does not fit the field's 8 bits"),
            ("cpu/frob=1", "`frob` is not a field in format/"),
        ] {
            let error = plan(&readings(), &Selection::List(vec![name.into()]))
                .unwrap_err()
                .to_string();
            assert!(error.contains(says), "{name}: {error}");
        }
    }
}
