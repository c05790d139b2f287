//! What a watch saw: writes per second in total and per thread, and the
//! code that writes, ranked. Pure functions of the raw counts and sampled
//! addresses (`probe`) and their names (`symbols`).
//!
//! Also the choice of the watched length: x86 debug registers watch an
//! aligned 1, 2, 4 or 8 bytes, so a symbol is watched over the largest
//! aligned length that fits inside it, and a misaligned request is refused
//! here with the reason rather than as the kernel's bare EINVAL.

use std::collections::BTreeMap;

use numasleuth_model::perf::watch::{Access, WatchRaw};
use numasleuth_model::symbol::CodeLocation;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadRate {
    pub tid: u32,
    pub writes: u64,
    pub writes_per_sec: f64,
    pub watched_s: f64,
    pub attached_at_s: f64,
    pub exited: bool,
}

/// One writing statement (or instruction, without debug info). Its fields
/// are in the order `watch --json` writes them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Writer {
    pub function: Option<String>,
    /// The file name alone; `path` as the debug info records it.
    pub file: Option<String>,
    pub line: Option<u32>,
    pub samples: u64,
    /// Of all samples.
    pub share: f64,
    pub path: Option<String>,
    pub inlined_into: Option<String>,
    /// The ELF symbol plus offset of the first address, e.g. `apply_op+0x2b`.
    pub symbol: Option<String>,
    pub object: Option<String>,
    /// The sampled instruction addresses (as reported: after the write on
    /// x86), hex strings in JSON.
    #[serde(serialize_with = "numasleuth_model::hex::serialize_all")]
    pub addresses: Vec<u64>,
    pub tids: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WatchSummary {
    pub pid: u32,
    /// A hex string in JSON.
    #[serde(serialize_with = "numasleuth_model::hex::serialize")]
    pub address: u64,
    pub symbol: Option<String>,
    pub object: Option<String>,
    pub len_bytes: u64,
    pub access: Access,
    pub duration_s: f64,
    pub writes_total: u64,
    pub writes_per_sec: f64,
    /// Most writes first.
    pub threads: Vec<ThreadRate>,
    /// Most samples first.
    pub writers: Vec<Writer>,
    pub samples_total: u64,
    pub lost_samples: u64,
    pub threads_missed: u64,
    pub process_exited: bool,
    pub notes: Vec<String>,
}

/// What was asked for, as the user named it.
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub symbol: Option<String>,
    pub object: Option<String>,
}

fn rate(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// `locations` names each distinct sampled address (any order).
pub fn summarize(raw: &WatchRaw, locations: &[CodeLocation], target: Target) -> WatchSummary {
    let by_address: BTreeMap<u64, &CodeLocation> = locations.iter().map(|l| (l.address, l)).collect();
    let mut threads: Vec<ThreadRate> = raw
        .threads
        .iter()
        .map(|t| ThreadRate {
            tid: t.tid,
            writes: t.hits,
            writes_per_sec: rate(t.hits, t.watched_s),
            watched_s: t.watched_s,
            attached_at_s: t.attached_at_s,
            exited: t.exited,
        })
        .collect();
    threads.sort_by(|a, b| b.writes.cmp(&a.writes).then(a.tid.cmp(&b.tid)));
    let writes_total: u64 = raw.threads.iter().map(|t| t.hits).sum();
    let samples_total: u64 = raw.threads.iter().flat_map(|t| &t.ip_hits).map(|h| h.samples).sum();
    let lost_samples: u64 = raw.threads.iter().map(|t| t.lost_samples).sum();

    let writers = writers(raw, &by_address, samples_total);
    let notes = notes(raw, writes_total, lost_samples);
    WatchSummary {
        pid: raw.pid,
        address: raw.address,
        symbol: target.symbol,
        object: target.object,
        len_bytes: raw.len_bytes,
        access: raw.access,
        duration_s: raw.duration_s,
        writes_total,
        writes_per_sec: rate(writes_total, raw.duration_s),
        threads,
        writers,
        samples_total,
        lost_samples,
        threads_missed: raw.threads_missed,
        process_exited: raw.process_exited,
        notes,
    }
}

/// The sampled instructions grouped by statement (function, file, line),
/// or by address alone when the statement is unknown, most samples first.
fn writers(raw: &WatchRaw, by_address: &BTreeMap<u64, &CodeLocation>, samples_total: u64) -> Vec<Writer> {
    // Group by statement: (function, path, line), or by address alone.
    type Key = (Option<String>, Option<String>, Option<u32>, Option<u64>);
    let mut groups: BTreeMap<Key, Writer> = BTreeMap::new();
    for thread in &raw.threads {
        for hit in &thread.ip_hits {
            let location = by_address.get(&hit.ip);
            let function = location.and_then(|l| l.function.clone());
            let path = location.and_then(|l| l.path.clone());
            let line = location.and_then(|l| l.line);
            let alone = (function.is_none() || (path.is_none() && line.is_none())).then_some(hit.ip);
            let writer = groups
                .entry((function.clone(), path.clone(), line, alone))
                .or_insert_with(|| Writer {
                    function,
                    inlined_into: location.and_then(|l| l.inlined_into.clone()),
                    symbol: location.and_then(|l| {
                        let offset = l.offset_bytes.unwrap_or(0);
                        l.symbol.as_ref().map(|s| format!("{s}+{offset:#x}"))
                    }),
                    object: location.and_then(|l| l.object.clone()),
                    file: path.as_ref().map(|p| p.rsplit('/').next().unwrap_or(p).to_string()),
                    path,
                    line,
                    addresses: Vec::new(),
                    samples: 0,
                    share: 0.0,
                    tids: Vec::new(),
                });
            writer.samples += hit.samples;
            if !writer.addresses.contains(&hit.ip) {
                writer.addresses.push(hit.ip);
            }
            if !writer.tids.contains(&thread.tid) {
                writer.tids.push(thread.tid);
            }
        }
    }
    let mut writers: Vec<Writer> = groups.into_values().collect();
    for writer in &mut writers {
        writer.share = rate(writer.samples, samples_total as f64);
        writer.addresses.sort_unstable();
        writer.tids.sort_unstable();
    }
    writers.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.addresses.cmp(&b.addresses)));
    writers
}

fn notes(raw: &WatchRaw, writes_total: u64, lost_samples: u64) -> Vec<String> {
    let what = match raw.access {
        Access::Write => "write",
        Access::ReadWrite => "access",
    };
    let mut notes = Vec::new();
    if writes_total > 0 {
        notes.push(format!(
            "every watched {what} traps into the kernel once, so the program runs slower while watched: \
             these rates are a lower bound of its unwatched rate"
        ));
    } else {
        notes.push(format!(
            "no {what} by user code in {:.1} s (accesses made by the kernel on the process's behalf are not counted)",
            raw.duration_s
        ));
    }
    if lost_samples > 0 {
        notes.push(format!(
            "{lost_samples} sample(s) lost (ring buffer full): writers are ranked from the rest; the count is exact"
        ));
    }
    let unsampled = raw.threads.iter().filter(|t| !t.sampled).count();
    if unsampled > 0 {
        notes.push(format!(
            "{unsampled} thread(s) counted but not sampled: no ring buffer could be mapped (locked-memory limit, \
             kernel.perf_event_mlock_kb); run as root for all"
        ));
    }
    // Threads found by a rescan were attached at least one interval in.
    let first_rescan_s = raw.rescan_interval_ms as f64 / 1000.0;
    let late = raw.threads.iter().filter(|t| t.attached_at_s >= first_rescan_s).count();
    let joined = match late {
        0 => "none started".to_string(),
        n => format!("{n} joined late; their writes before that are not counted"),
    };
    notes.push(format!(
        "threads started during the watch are attached when /proc/{}/task is next listed, every {} ms ({joined})",
        raw.pid, raw.rescan_interval_ms
    ));
    if raw.threads_missed > 0 {
        notes.push(format!(
            "{} thread(s) exited before they could be watched",
            raw.threads_missed
        ));
    }
    if raw.process_exited {
        notes.push(format!("process {} exited during the watch", raw.pid));
    }
    notes.extend(raw.problems.iter().cloned());
    notes
}

/// Why a `--len` cannot be watched at the address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LenError {
    #[error("--len {len}: a watchpoint covers 1, 2, 4 or 8 bytes")]
    NotAWatchLen { len: u64 },
    #[error(
        "address {address:#x} is not aligned to {len} bytes: debug registers watch aligned 1, 2, 4 or 8-byte \
         ranges; use a smaller --len or an aligned --addr"
    )]
    Unaligned { address: u64, len: u64 },
}

/// The watched length: `requested` if aligned, else the largest aligned
/// 8, 4, 2 or 1 bytes that fit in `object_size` (8 when unknown).
pub fn choose_len(address: u64, object_size: Option<u64>, requested: Option<u64>) -> Result<u64, LenError> {
    if let Some(len) = requested {
        if ![1, 2, 4, 8].contains(&len) {
            return Err(LenError::NotAWatchLen { len });
        }
        if !address.is_multiple_of(len) {
            return Err(LenError::Unaligned { address, len });
        }
        return Ok(len);
    }
    let fits = object_size.filter(|s| *s > 0).unwrap_or(8);
    Ok([8u64, 4, 2, 1]
        .into_iter()
        .find(|len| address.is_multiple_of(*len) && *len <= fits)
        .unwrap_or(1))
}

/// What a `--len` wider than the watched symbol also covers, said before
/// the count is taken for the symbol's alone: `None` when it fits (or the
/// size is unknown).
pub fn len_beyond_object(len_bytes: u64, object_size: Option<u64>) -> Option<String> {
    let size = object_size.filter(|s| *s > 0 && *s < len_bytes)?;
    Some(format!(
        "--len {len_bytes} is wider than the symbol ({size} bytes): the watchpoint also counts writes to the {} \
         byte(s) after it, which belong to its neighbour; leave --len out to watch the symbol alone",
        len_bytes - size
    ))
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
