//! Reading `sysfs::pmu`; its format, types and parser are `numasleuth_parse::sysfs::pmu`.

pub use numasleuth_parse::sysfs::pmu::*;

use crate::error::{display_path, ReadError};
use crate::root::Root;
use crate::sysfs::pmu_format::{self, FormatField};
use crate::unread::Unread;
use std::collections::BTreeMap;

const DEVICES: &str = "sys/bus/event_source/devices";

/// Every PMU; an absent directory (no perf support) is an empty list.
pub fn read_pmus(root: &Root) -> Result<PmuReadings, ReadError> {
    let mut out = PmuReadings::default();
    let Some(mut names) = root.list(DEVICES)? else {
        return Ok(out);
    };
    if names.len() > MAX_PMUS {
        out.pmus_listed = Some(names.len());
        names.truncate(MAX_PMUS);
    }
    for name in names {
        match read_pmu(root, &name, &mut out.unread) {
            Ok(pmu) => out.pmus.push(pmu),
            Err(e) => out.unread.extend(Unread::from_error(&e)),
        }
    }
    Ok(out)
}

fn read_pmu(root: &Root, name: &str, unread: &mut Vec<Unread>) -> Result<Pmu, ReadError> {
    let dir = format!("{DEVICES}/{name}");
    let type_path = format!("{dir}/type");
    let text = root.read(&type_path)?;
    let type_id = text
        .trim()
        .parse::<u32>()
        .map_err(|_| ReadError::malformed(&type_path, format!("`{}` is not a PMU type", text.trim())))?;
    let system_wide = root.exists(&format!("{dir}/cpumask"));
    let formats = read_formats(root, &dir, unread)?;
    let mut event_names: Vec<String> = root
        .list(&format!("{dir}/events"))?
        .unwrap_or_default()
        .into_iter()
        // `x.scale`, `x.unit`, `x.per-pkg`, `x.snapshot` describe alias `x`.
        .filter(|n| !n.contains('.'))
        .collect();
    let mut events_listed = None;
    if event_names.len() > MAX_EVENTS_PER_PMU {
        events_listed = Some(event_names.len());
        event_names.truncate(MAX_EVENTS_PER_PMU);
    }
    let events = event_names
        .into_iter()
        .map(|event| {
            let path = format!("{dir}/events/{event}");
            let config = match root.read(&path) {
                Ok(text) => pmu_format::parse_event(&text)
                    .and_then(|terms| pmu_format::encode(&terms, &formats))
                    .map_err(|error| AliasError::Malformed {
                        path: display_path(&path),
                        error,
                    }),
                Err(e) => Err(AliasError::from(e)),
            };
            PmuEvent { name: event, config }
        })
        .collect();
    Ok(Pmu {
        name: name.to_string(),
        type_id,
        system_wide,
        formats,
        events,
        events_listed,
    })
}

/// A malformed field is noted and left out; the aliases that use it then
/// say they name a field not in `format/`.
fn read_formats(root: &Root, dir: &str, unread: &mut Vec<Unread>) -> Result<BTreeMap<String, FormatField>, ReadError> {
    let mut formats = BTreeMap::new();
    let names = root.list(&format!("{dir}/format"))?.unwrap_or_default();
    for field in names.into_iter().take(MAX_FORMAT_FIELDS) {
        let path = format!("{dir}/format/{field}");
        let parsed = root
            .read(&path)
            .and_then(|text| pmu_format::parse_format(&text).map_err(|e| ReadError::malformed(&path, e.0)));
        match parsed {
            Ok(format) => {
                formats.insert(field, format);
            }
            Err(e) => unread.extend(Unread::from_error(&e)),
        }
    }
    Ok(formats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// This VM's tree (see pmu_format_tests.rs), plus an Intel-like `cpu`
    /// PMU and an uncore PMU with a cpumask.
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("software/type", "1\n"),
            ("msr/type", "9\n"),
            ("msr/format/event", "config:0-63\n"),
            ("msr/events/tsc", "event=0x00\n"),
            ("cpu/type", "4\n"),
            ("cpu/format/event", "config:0-7\n"),
            ("cpu/format/umask", "config:8-15\n"),
            ("cpu/format/broken", "config:9-99\n"),
            ("cpu/events/cpu-cycles", "event=0x3c\n"),
            ("cpu/events/ref-cycles", "event=0x00,umask=0x03\n"),
            ("cpu/events/odd", "event=0x3c,broken=1\n"),
            ("cpu/events/garbage", "event=\n"),
            ("uncore_imc_0/type", "14\n"),
            ("uncore_imc_0/cpumask", "0,18\n"),
            ("uncore_imc_0/format/event", "config:0-7\n"),
            ("uncore_imc_0/format/umask", "config:8-15\n"),
            ("uncore_imc_0/events/cas_count_read", "event=0x04,umask=0x03\n"),
            ("uncore_imc_0/events/cas_count_read.scale", "6.103515625e-5\n"),
            ("uncore_imc_0/events/cas_count_read.unit", "MiB\n"),
            ("bad/type", "four\n"),
        ];
        for (path, text) in files {
            let at = dir.path().join(DEVICES).join(path);
            fs::create_dir_all(at.parent().unwrap()).unwrap();
            fs::write(at, text).unwrap();
        }
        dir
    }

    #[test]
    fn reads_types_formats_and_aliases() {
        let dir = tree();
        let read = read_pmus(&Root::directory(dir.path()).unwrap()).unwrap();
        let names: Vec<&str> = read.pmus.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["cpu", "msr", "software", "uncore_imc_0"]);
        let cpu = &read.pmus[0];
        assert_eq!(cpu.type_id, 4);
        assert!(!cpu.system_wide);
        let event = |name: &str| cpu.events.iter().find(|e| e.name == name).unwrap().config.clone();
        assert_eq!(event("cpu-cycles").unwrap().config, 0x3c);
        assert_eq!(event("ref-cycles").unwrap().config, 0x300);
        assert!(event("odd")
            .unwrap_err()
            .to_string()
            .contains("`broken` is not a field"));
        let garbage = event("garbage").unwrap_err();
        assert!(
            matches!(&garbage, AliasError::Malformed { path, .. } if path == "/sys/bus/event_source/devices/cpu/events/garbage"),
            "{garbage}"
        );
        let msr = &read.pmus[1];
        assert_eq!((msr.type_id, msr.events[0].config.clone().unwrap().config), (9, 0));
        let imc = &read.pmus[3];
        assert!(imc.system_wide);
        assert_eq!(imc.events.len(), 1, "the .scale and .unit files are not aliases");
        // The malformed type and the malformed field are said, not dropped silently.
        let unread: Vec<String> = read.unread.iter().map(|u| u.to_string()).collect();
        assert_eq!(unread.len(), 2, "{unread:?}");
        assert!(unread[0].starts_with("/sys/bus/event_source/devices/bad/type: malformed"));
        assert!(unread[1].starts_with("/sys/bus/event_source/devices/cpu/format/broken: malformed"));
    }

    #[test]
    fn no_event_source_directory_is_no_pmus() {
        let dir = tempfile::tempdir().unwrap();
        let read = read_pmus(&Root::directory(dir.path()).unwrap()).unwrap();
        assert_eq!(read, PmuReadings::default());
    }

    #[test]
    fn pmus_and_aliases_are_capped_and_the_cap_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join(DEVICES);
        for i in 0..MAX_PMUS + 3 {
            fs::create_dir_all(base.join(format!("p{i:04}"))).unwrap();
            fs::write(base.join(format!("p{i:04}/type")), format!("{}\n", 100 + i)).unwrap();
        }
        let events = base.join("p0000/events");
        fs::create_dir_all(&events).unwrap();
        for i in 0..MAX_EVENTS_PER_PMU + 1 {
            fs::write(events.join(format!("e{i:05}")), "config=1\n").unwrap();
        }
        let read = read_pmus(&Root::directory(dir.path()).unwrap()).unwrap();
        assert_eq!(read.pmus.len(), MAX_PMUS);
        assert_eq!(read.pmus_listed, Some(MAX_PMUS + 3));
        assert_eq!(read.pmus[0].events.len(), MAX_EVENTS_PER_PMU);
        assert_eq!(read.pmus[0].events_listed, Some(MAX_EVENTS_PER_PMU + 1));
    }
}
