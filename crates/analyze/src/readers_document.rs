//! `readers`' document, as `numasleuth.readers/1` writes it (report puts
//! the schema over it): the summary of who read, the first opens one by
//! one in time order, and the findings. Text renders the same summary.

use numasleuth_model::readers::{LockFile, Open};
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::findings::Finding;
use crate::readers::Summary;

/// Opens listed one by one; every one is counted in `readers`.
pub const MAX_OPENS_LISTED: usize = 10_000;

/// What the document is written from: the summary, the raw opens in time
/// order (own-smaps reads included, marked by their target), the findings.
#[derive(Debug, Clone, Copy)]
pub struct ReadersDocument<'a> {
    pub summary: &'a Summary,
    pub opens: &'a [Open],
    pub findings: &'a [Finding],
}

impl<'a> ReadersDocument<'a> {
    pub fn new(summary: &'a Summary, opens: &'a [Open], findings: &'a [Finding]) -> Self {
        ReadersDocument {
            summary,
            opens,
            findings,
        }
    }
}

/// A watched file as the document lists it: its name, its path, and the
/// lock it takes, each from model's one definition.
struct Watched(LockFile);

impl Serialize for Watched {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut file = serializer.serialize_struct("LockFile", 3)?;
        file.serialize_field("name", self.0.name())?;
        file.serialize_field("path", &self.0.path())?;
        file.serialize_field("lock", self.0.reason())?;
        file.end()
    }
}

/// By hand because the summary's fields sit among the document's own
/// (`opens_total`, the capped `opens` and their count, the findings).
impl Serialize for ReadersDocument<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let summary = self.summary;
        let listed = &self.opens[..self.opens.len().min(MAX_OPENS_LISTED)];
        let files: Vec<Watched> = summary.files.iter().map(|f| Watched(*f)).collect();
        let mut doc = serializer.serialize_struct("ReadersDocument", 10)?;
        doc.serialize_field("method", &summary.method)?;
        doc.serialize_field("duration_s", &summary.duration_s)?;
        doc.serialize_field("files", &files)?;
        doc.serialize_field("opens_total", &summary.opens)?;
        doc.serialize_field("readers", &summary.readers)?;
        doc.serialize_field("opens_listed", &listed.len())?;
        doc.serialize_field("opens", listed)?;
        doc.serialize_field("own_reads_left_out", &summary.own_reads_left_out)?;
        doc.serialize_field("findings", self.findings)?;
        doc.serialize_field("notes", &summary.notes)?;
        doc.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_model::readers::{Method, Target};

    fn open(t_s: f64) -> Open {
        Open {
            t_s,
            pid: 7,
            tid: 7,
            file: LockFile::Slabinfo,
            target: Target::System,
        }
    }

    /// The golden test lists a handful; past the cap the opens are counted,
    /// not listed.
    #[test]
    fn opens_past_the_cap_are_counted_not_listed() {
        let summary = Summary {
            method: Method::Kprobe,
            files: vec![LockFile::Slabinfo],
            duration_s: 1.0,
            readers: vec![],
            opens: MAX_OPENS_LISTED as u64 + 5,
            own_reads_left_out: 0,
            notes: vec![],
        };
        let opens: Vec<Open> = (0..MAX_OPENS_LISTED + 5).map(|i| open(i as f64)).collect();
        let document = ReadersDocument {
            summary: &summary,
            opens: &opens,
            findings: &[],
        };
        let json = serde_json::to_value(document).unwrap();
        assert_eq!(json["opens_total"], MAX_OPENS_LISTED as u64 + 5);
        assert_eq!(json["opens_listed"], MAX_OPENS_LISTED);
        let listed = json["opens"].as_array().unwrap();
        assert_eq!(listed.len(), MAX_OPENS_LISTED);
        assert_eq!(listed.last().unwrap()["t_s"], (MAX_OPENS_LISTED - 1) as f64);
        assert_eq!(json["files"][0]["path"], "/proc/slabinfo");
    }
}
