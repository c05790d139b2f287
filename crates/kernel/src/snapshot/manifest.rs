//! `numasleuth-snapshot.json`: who took a snapshot, when, of which machine.
//!
//! Written by `snapshot`, read back for the provenance line of every report
//! made from the snapshot. A snapshot is untrusted, so reading is lenient
//! field by field: a missing or mistyped field is unknown, never an error.

use serde::Serialize;

/// The schema this build writes.
pub const SCHEMA: &str = "numasleuth.snapshot/1";

/// Fields in name order: the file they make is the one earlier builds wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Manifest {
    /// The base page size of the machine captured: page counts in its
    /// files (zoneinfo, numa_maps without `kernelpagesize_kB`) are in it.
    /// `None` when the source itself did not say (a tree without one).
    pub base_page_bytes: Option<u64>,
    pub command_line: Vec<String>,
    pub created_unix_s: u64,
    pub hostname: Option<String>,
    pub kernel_release: Option<String>,
    pub numasleuth_version: String,
    pub schema: &'static str,
    /// The root the snapshot was taken from (`/` for the live system).
    pub source: String,
    /// The kernel's `uname`, from the system taking the snapshot.
    pub uname: Option<Uname>,
}

/// `uname -a`'s fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Uname {
    pub machine: String,
    pub nodename: String,
    pub release: String,
    pub sysname: String,
    pub version: String,
}

impl Manifest {
    pub fn to_json(&self) -> String {
        // Strings and numbers only: serialising cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// What a report needs from a snapshot's manifest; each field `None` when
/// the manifest is absent, malformed, or lacks it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// A power of two from 4 KiB to 1 MiB, or unknown.
    pub base_page_bytes: Option<u64>,
    pub created_unix_s: Option<u64>,
    pub numasleuth_version: Option<String>,
}

/// Parses a manifest's text leniently.
pub fn parse_origin(text: &str) -> Origin {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return Origin::default();
    };
    Origin {
        base_page_bytes: value["base_page_bytes"]
            .as_u64()
            .filter(|b| b.is_power_of_two() && (4096..=1 << 20).contains(b)),
        created_unix_s: value["created_unix_s"].as_u64(),
        numasleuth_version: value["numasleuth_version"].as_str().map(str::to_string),
    }
}

/// The running kernel's `uname`; `None` if the call fails.
pub fn uname() -> Option<Uname> {
    // SAFETY: utsname is plain old data; uname fills it or fails.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let field = |chars: &[libc::c_char]| {
        let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some(Uname {
        machine: field(&u.machine),
        nodename: field(&u.nodename),
        release: field(&u.release),
        sysname: field(&u.sysname),
        version: field(&u.version),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_keys_in_name_order_and_reads_back_the_origin() {
        let manifest = Manifest {
            base_page_bytes: Some(16384),
            command_line: vec!["numasleuth".into(), "snapshot".into()],
            created_unix_s: 951_782_400,
            hostname: Some("db1".into()),
            kernel_release: None,
            numasleuth_version: "0.1.0".into(),
            schema: SCHEMA,
            source: "/".into(),
            uname: uname(),
        };
        let json = manifest.to_json();
        let keys: Vec<usize> = [
            "base_page_bytes",
            "command_line",
            "created_unix_s",
            "hostname",
            "schema",
            "source",
            "uname",
        ]
        .iter()
        .map(|k| json.find(&format!("\"{k}\"")).unwrap())
        .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{json}");
        let origin = parse_origin(&json);
        assert_eq!(origin.created_unix_s, Some(951_782_400));
        assert_eq!(origin.numasleuth_version.as_deref(), Some("0.1.0"));
        assert_eq!(origin.base_page_bytes, Some(16384));
    }

    #[test]
    fn a_hostile_manifest_is_unknown_field_by_field() {
        assert_eq!(parse_origin("not json"), Origin::default());
        let origin = parse_origin(r#"{"created_unix_s": "yesterday", "numasleuth_version": "9.9"}"#);
        assert_eq!(origin.created_unix_s, None);
        assert_eq!(origin.numasleuth_version.as_deref(), Some("9.9"));
        assert_eq!(parse_origin("[1, 2]"), Origin::default());
        // A page size that is not one is unknown, not trusted.
        for bad in ["0", "4097", "1099511627776", "-4096", "\"4096\""] {
            let text = format!(r#"{{"base_page_bytes": {bad}}}"#);
            assert_eq!(parse_origin(&text).base_page_bytes, None, "{bad}");
        }
    }
}
