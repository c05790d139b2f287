//! `/proc/PID/numa_maps`: for each mapping, its memory policy and how many
//! of its resident pages sit on each node.
//!
//! This is the only file that says where a process's memory is, per node,
//! without ptrace. It is per VMA, not per page: `inspect` uses it for totals
//! and asks `move_pages` only for the few pages it must split by section.
//!
//! The kernel (`show_numa_map` in mm/mempolicy.c) writes
//! `start policy [file=PATH|heap|stack] [huge] [anon=] [dirty=] [mapped=]
//! [mapmax=] [swapcache=] [active=] [writeback=] [N<node>=]...
//! [kernelpagesize_kB=]`, and stops after the policy for a VMA with no
//! resident pages. The policy may hold a space (`prefer (many)`, `weighted
//! interleave`); the path escapes space, tab, newline and `=` as `\ooo`.
//! Counts are in pages of `kernelpagesize_kB` (huge pages for hugetlbfs).
//! Keys this parser does not know are kept, so a newer kernel's additions
//! degrade to "shown raw", never to an error.

use serde::Serialize;

use crate::cpulist::IdList;
use crate::error::{quote, ParseError};

#[path = "numa_maps_bytes.rs"]
mod bytes;
#[path = "numa_maps_kernel.rs"]
mod kernel;
pub use bytes::parse_bytes_into;

/// The mode of a memory policy, as `mpol_to_str` names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyMode {
    Default,
    Local,
    /// `prefer`: allocate on one node, fall back elsewhere.
    Prefer,
    /// `prefer (many)`: MPOL_PREFERRED_MANY (Linux 5.15+).
    PreferMany,
    Bind,
    Interleave,
    /// `weighted interleave` (Linux 6.9+).
    WeightedInterleave,
    /// A mode this parser does not know, kept verbatim.
    Other(String),
}

impl PolicyMode {
    fn name(&self) -> &str {
        match self {
            PolicyMode::Default => "default",
            PolicyMode::Local => "local",
            PolicyMode::Prefer => "prefer",
            PolicyMode::PreferMany => "prefer (many)",
            PolicyMode::Bind => "bind",
            PolicyMode::Interleave => "interleave",
            PolicyMode::WeightedInterleave => "weighted interleave",
            PolicyMode::Other(name) => name,
        }
    }

    /// Modes that restrict or steer allocation to their node mask.
    pub fn restricts_nodes(&self) -> bool {
        matches!(self, PolicyMode::Bind | PolicyMode::Prefer | PolicyMode::PreferMany)
    }

    pub fn interleaves(&self) -> bool {
        matches!(self, PolicyMode::Interleave | PolicyMode::WeightedInterleave)
    }
}

/// A VMA's memory policy: `bind=static:0-1` is mode bind, flag static,
/// nodes 0-1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Policy {
    pub mode: PolicyMode,
    /// `static`, `relative`, `balancing` (MPOL_F_* mode flags).
    pub flags: Vec<String>,
    pub nodes: Option<IdList>,
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.mode.name())?;
        if !self.flags.is_empty() {
            write!(f, "={}", self.flags.join("|"))?;
        }
        if let Some(nodes) = &self.nodes {
            write!(f, ":{nodes}")?;
        }
        Ok(())
    }
}

/// One line of numa_maps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NumaMapsEntry {
    pub start: u64,
    pub policy: Option<Policy>,
    /// `file=`, unescaped (`\040` back to a space).
    pub file: Option<String>,
    pub heap: bool,
    pub stack: bool,
    /// A hugetlbfs mapping; counts are then in huge pages.
    pub huge: bool,
    pub anon_pages: Option<u64>,
    pub dirty_pages: Option<u64>,
    pub mapped_pages: Option<u64>,
    /// The most processes any one page is mapped into.
    pub mapmax: Option<u64>,
    pub swapcache_pages: Option<u64>,
    pub active_pages: Option<u64>,
    pub writeback_pages: Option<u64>,
    /// Resident pages per node, in the order written (ascending node).
    pub pages_by_node: Vec<(u32, u64)>,
    pub kernel_page_size_kb: Option<u64>,
    /// `key=value` or bare words this parser does not know.
    pub unknown: Vec<String>,
}

impl NumaMapsEntry {
    /// Back to an empty line at `start`, keeping the buffers' capacity.
    fn reset(&mut self, start: u64) {
        let NumaMapsEntry {
            start: entry_start,
            policy,
            file: _,
            heap,
            stack,
            huge,
            anon_pages,
            dirty_pages,
            mapped_pages,
            mapmax,
            swapcache_pages,
            active_pages,
            writeback_pages,
            pages_by_node,
            kernel_page_size_kb,
            unknown,
        } = self;
        *entry_start = start;
        *policy = None;
        (*heap, *stack, *huge) = (false, false, false);
        for count in [
            anon_pages,
            dirty_pages,
            mapped_pages,
            mapmax,
            swapcache_pages,
            active_pages,
            writeback_pages,
            kernel_page_size_kb,
        ] {
            *count = None;
        }
        pages_by_node.clear();
        unknown.clear();
    }

    /// Saturates: a corrupt line's counts must not overflow the sum.
    pub fn resident_pages(&self) -> u64 {
        self.pages_by_node
            .iter()
            .fold(0u64, |sum, (_, n)| sum.saturating_add(*n))
    }

    /// Bytes per counted page; 4 KiB when the kernel did not say (a VMA
    /// with no resident pages, where it does not matter).
    pub fn page_size_bytes(&self) -> u64 {
        self.kernel_page_size_kb.unwrap_or(4).saturating_mul(1024)
    }
}

/// Parses `bind=static:0-1`, `prefer (many):0,2`, `weighted interleave:0-3`.
pub fn parse_policy(text: &str) -> Result<Policy, ParseError> {
    let (head, nodes) = match split_at_byte(text, b':') {
        Some((head, nodes)) => (head, Some(IdList::parse_nodes(nodes)?)),
        None => (text, None),
    };
    let (mode, flags) = match split_at_byte(head, b'=') {
        Some((mode, flags)) => (mode, flags.split('|').map(str::to_string).collect()),
        None => (head, Vec::new()),
    };
    let mode = match mode {
        "default" => PolicyMode::Default,
        "local" => PolicyMode::Local,
        "prefer" => PolicyMode::Prefer,
        "prefer (many)" => PolicyMode::PreferMany,
        "bind" => PolicyMode::Bind,
        "interleave" => PolicyMode::Interleave,
        "weighted interleave" => PolicyMode::WeightedInterleave,
        "" => return Err(ParseError::new("empty memory policy")),
        other => PolicyMode::Other(other.to_string()),
    };
    Ok(Policy { mode, flags, nodes })
}

/// Policy modes whose name holds a space, so they cannot be split on words.
const SPACED_MODES: [&str; 2] = ["prefer (many)", "weighted interleave"];

/// Parses one line.
pub fn parse_line(line: &str) -> Result<NumaMapsEntry, ParseError> {
    let mut entry = NumaMapsEntry::default();
    parse_line_into(line, &mut entry)?;
    Ok(entry)
}

/// Parses one line into `entry`, reusing its buffers (the per-node counts,
/// the path, unknown words): a stream of 50,000 lines then allocates only
/// while a buffer grows, not once or twice per line. On an error `entry`
/// holds a partial line and must not be used.
pub fn parse_line_into(line: &str, entry: &mut NumaMapsEntry) -> Result<(), ParseError> {
    let line = line.trim_end();
    let bad = |what: String| ParseError::new(format!("{what} in numa_maps line `{}`", quote(line)));
    let (start, rest) = split_at_byte(line, b' ').unwrap_or((line, ""));
    let start = (!start.is_empty() && start.len() <= 16)
        .then(|| u64::from_str_radix(start, 16).ok())
        .flatten()
        .ok_or_else(|| bad(format!("start address `{}` is not hex", quote(start))))?;
    entry.reset(start);
    let mut has_file = false;
    let rest = rest.trim_start();
    let policy_len = SPACED_MODES
        .iter()
        .find(|mode| rest.starts_with(*mode))
        .map(|mode| mode.len() + byte_at(&rest[mode.len()..], b' ').unwrap_or(rest.len() - mode.len()))
        .unwrap_or_else(|| byte_at(rest, b' ').unwrap_or(rest.len()));
    let (policy, fields) = rest.split_at(policy_len);
    if !policy.is_empty() {
        entry.policy = Some(parse_policy(policy).map_err(|e| bad(e.0))?);
    }
    // ASCII whitespace only: the kernel separates with spaces and escapes
    // the blanks a path may hold; a byte search beats a char search on
    // words this short.
    for word in fields.split_ascii_whitespace() {
        let (key, value) = match word.bytes().position(|b| b == b'=') {
            Some(at) => (&word[..at], Some(&word[at + 1..])),
            None => (word, None),
        };
        let count = || -> Result<u64, ParseError> {
            value
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| bad(format!("`{}` has no count", quote(word))))
        };
        match (key, value) {
            ("file", Some(path)) => {
                has_file = true;
                let file = entry.file.get_or_insert_with(String::new);
                file.clear();
                unescape_into(path, file);
            }
            ("heap", None) => entry.heap = true,
            ("stack", None) => entry.stack = true,
            ("huge", None) => entry.huge = true,
            ("anon", _) => entry.anon_pages = Some(count()?),
            ("dirty", _) => entry.dirty_pages = Some(count()?),
            ("mapped", _) => entry.mapped_pages = Some(count()?),
            ("mapmax", _) => entry.mapmax = Some(count()?),
            ("swapcache", _) => entry.swapcache_pages = Some(count()?),
            ("active", _) => entry.active_pages = Some(count()?),
            ("writeback", _) => entry.writeback_pages = Some(count()?),
            ("kernelpagesize_kB", _) => entry.kernel_page_size_kb = Some(count()?),
            (node, _) if is_node_key(node) => {
                let id = node_id(&node.as_bytes()[1..]).ok_or_else(|| bad(format!("bad node in `{}`", quote(word))))?;
                entry.pages_by_node.push((id, count()?));
            }
            _ => entry.unknown.push(word.to_string()),
        }
    }
    if !has_file {
        entry.file = None;
    }
    Ok(())
}

/// Where `byte` (ASCII) first is in `text`: a byte search, where a `char`
/// pattern costs a searcher per call on these short lines.
fn byte_at(text: &str, byte: u8) -> Option<usize> {
    text.bytes().position(|b| b == byte)
}

/// `text` around the first `separator` (ASCII), like `split_once`.
fn split_at_byte(text: &str, separator: u8) -> Option<(&str, &str)> {
    let at = byte_at(text, separator)?;
    Some((&text[..at], &text[at + 1..]))
}

/// The node an `N<id>=` key names: decimal digits, a node this tool can
/// hold (every numa_maps parser reads it here).
fn node_id(digits: &[u8]) -> Option<u32> {
    let id = u32::try_from(crate::procfs::digits::decimal(digits)?).ok()?;
    (id < crate::cpulist::MAX_NODE_IDS).then_some(id)
}

fn is_node_key(key: &str) -> bool {
    key.len() > 1 && key.starts_with('N') && key[1..].bytes().all(|b| b.is_ascii_digit())
}

/// Undoes the kernel's `\ooo` octal escapes (`seq_path` with "\n\t= ").
pub fn unescape(text: &str) -> String {
    let mut out = String::new();
    unescape_into(text, &mut out);
    out
}

/// [`unescape`], appending to `out`; a path without a backslash (nearly
/// all) is copied as it is.
pub fn unescape_into(text: &str, out: &mut String) {
    if !text.contains('\\') {
        out.push_str(text);
        return;
    }
    out.push_str(&unescape_bytes(text));
}

fn unescape_bytes(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                let value = (d[0] - b'0') as u32 * 64 + (d[1] - b'0') as u32 * 8 + (d[2] - b'0') as u32;
                out.push(value as u8);
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses a whole file; blank lines are skipped.
pub fn parse(text: &str) -> Result<Vec<NumaMapsEntry>, ParseError> {
    text.lines().filter(|l| !l.trim().is_empty()).map(parse_line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `cat /proc/PID/numa_maps` of a python3 process on the development VM
    /// (kernel 6.18, one node), trimmed: an executable's file and COW pages,
    /// heap, an unpopulated guard, a memfd, shared anonymous memory, a path
    /// with spaces, an unlinked file, a page-cache file shared by 6 mappers
    /// and the stack.
    const PYTHON: &str = "\
5562752e0000 default file=/root/.pyenv/versions/3.11.7/bin/python3.11 mapped=1 N0=1 kernelpagesize_kB=4
5562752e2000 default file=/root/.pyenv/versions/3.11.7/bin/python3.11
5562752e4000 default file=/root/.pyenv/versions/3.11.7/bin/python3.11 anon=1 dirty=1 active=0 N0=1 kernelpagesize_kB=4
55628edb6000 default heap anon=396 dirty=396 active=0 N0=396 kernelpagesize_kB=4
7f68a4021000 default
7f68b24fc000 default file=/memfd:capmemfd\\040(deleted) dirty=1 active=0 N0=1 kernelpagesize_kB=4
7f68b24fd000 default file=/dev/zero\\040(deleted) dirty=1 active=0 N0=1 kernelpagesize_kB=4
7f68b31ba000 default file=/tmp/cap\\040dir/my\\040file.bin dirty=2 active=0 N0=2 kernelpagesize_kB=4
7f68b3206000 default file=/tmp/cap-deleted.bin\\040(deleted) dirty=1 active=0 N0=1 kernelpagesize_kB=4
7f68b320b000 default file=/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache mapped=7 mapmax=6 N0=7 kernelpagesize_kB=4
7ffc9c7d7000 default stack anon=15 dirty=15 active=1 N0=15 kernelpagesize_kB=4
";

    /// `numactl --interleave=0 / --membind=0 / --preferred=0 / --localalloc
    /// cat /proc/self/numa_maps` on the development VM: one line of each.
    const POLICIES: &str = "\
55f344764000 interleave:0 file=/usr/bin/cat mapped=2 N0=2 kernelpagesize_kB=4
560bd1856000 bind:0 file=/usr/bin/cat mapped=2 N0=2 kernelpagesize_kB=4
564deb01b000 prefer:0 file=/usr/bin/cat mapped=2 N0=2 kernelpagesize_kB=4
55816f33f000 local file=/usr/bin/cat mapped=2 N0=2 kernelpagesize_kB=4
";

    #[test]
    fn real_capture_every_field_seen() {
        let entries = parse(PYTHON).unwrap();
        assert_eq!(entries.len(), 11);
        let exe = &entries[0];
        assert_eq!(exe.start, 0x5562752e0000);
        assert_eq!(exe.policy.as_ref().unwrap().mode, PolicyMode::Default);
        assert_eq!(exe.file.as_deref(), Some("/root/.pyenv/versions/3.11.7/bin/python3.11"));
        assert_eq!(exe.mapped_pages, Some(1));
        assert_eq!(exe.pages_by_node, vec![(0, 1)]);
        assert_eq!(exe.kernel_page_size_kb, Some(4));
        let empty = &entries[1];
        assert_eq!((empty.resident_pages(), empty.kernel_page_size_kb), (0, None));
        let heap = &entries[3];
        assert!(heap.heap && heap.file.is_none());
        assert_eq!(
            (heap.anon_pages, heap.dirty_pages, heap.active_pages),
            (Some(396), Some(396), Some(0))
        );
        assert_eq!(heap.resident_pages(), 396);
        assert_eq!(heap.page_size_bytes(), 4096);
        assert_eq!(entries[5].file.as_deref(), Some("/memfd:capmemfd (deleted)"));
        assert_eq!(entries[7].file.as_deref(), Some("/tmp/cap dir/my file.bin"));
        assert_eq!(entries[9].mapmax, Some(6));
        assert!(entries[10].stack);
        assert!(entries.iter().all(|e| e.unknown.is_empty()));
    }

    #[test]
    fn real_policies() {
        let modes: Vec<String> = parse(POLICIES)
            .unwrap()
            .iter()
            .map(|e| e.policy.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(modes, ["interleave:0", "bind:0", "prefer:0", "local"]);
    }

    #[test]
    fn policies_with_spaces_and_flags() {
        // Formats of mpol_to_str (mm/mempolicy.c); hugetlb and multi-node
        // counts as the kernel prints them for a 3-node machine.
        let line = "7f1c00000000 prefer (many)=static:0,2 huge dirty=4 swapcache=1 writeback=2 N0=1 N2=3 kernelpagesize_kB=2048";
        let entry = parse_line(line).unwrap();
        let policy = entry.policy.clone().unwrap();
        assert_eq!(policy.mode, PolicyMode::PreferMany);
        assert_eq!(policy.flags, ["static"]);
        assert_eq!(policy.nodes.unwrap().ids(), [0, 2]);
        assert!(entry.huge);
        assert_eq!((entry.swapcache_pages, entry.writeback_pages), (Some(1), Some(2)));
        assert_eq!(entry.pages_by_node, vec![(0, 1), (2, 3)]);
        assert_eq!(entry.page_size_bytes(), 2 << 20);
        let weighted = parse_line("7f00 weighted interleave=relative|balancing:0-2 anon=3 N0=1 N1=1 N2=1").unwrap();
        let policy = weighted.policy.unwrap();
        assert_eq!(policy.mode, PolicyMode::WeightedInterleave);
        assert_eq!(policy.to_string(), "weighted interleave=relative|balancing:0-2");
        assert!(policy.mode.interleaves());
        let bare = parse_line("7f00 prefer (many)").unwrap();
        assert_eq!(bare.policy.unwrap().mode, PolicyMode::PreferMany);
    }

    #[test]
    fn unknown_keys_are_kept() {
        let entry = parse_line("7f00 default anon=1 shiny=3 glowing N0=1 kernelpagesize_kB=4").unwrap();
        assert_eq!(entry.unknown, ["shiny=3", "glowing"]);
        assert_eq!(entry.resident_pages(), 1);
        let mode = parse_line("7f00 tiered:1").unwrap().policy.unwrap();
        assert_eq!(mode.mode, PolicyMode::Other("tiered".into()));
    }

    #[test]
    fn malformed_lines_are_errors() {
        for line in [
            "",
            "xyz default",
            "7f00 bind:zz",
            "7f00 default anon=",
            "7f00 default N0=x",
            "7f00 default kernelpagesize_kB=-4",
            // Beyond MAX_NUMNODES: no kernel writes these.
            "7f00 default N1024=1",
            "7f00 bind:0-4000000 N0=1",
        ] {
            assert!(parse_line(line).is_err(), "accepted `{line}`");
        }
        // `N` alone or `Nfoo=1` is not a node count: kept as unknown.
        assert_eq!(parse_line("7f00 default Nfoo=1").unwrap().unknown, ["Nfoo=1"]);
    }

    #[test]
    fn truncated_line_keeps_what_is_whole() {
        let cut = &PYTHON[..PYTHON.find("N0=396").unwrap() + 2];
        let entries = parse(cut);
        assert!(entries.is_err(), "`N0` cut before its count must be an error");
        let cut = &PYTHON[..PYTHON.find("active=0 N0=396").unwrap()];
        assert_eq!(parse(cut).unwrap().last().unwrap().resident_pages(), 0);
    }

    /// A reused entry must hold only the new line: nothing of a longer
    /// line parsed into it before may survive.
    #[test]
    fn parse_line_into_forgets_the_previous_line() {
        let long = "7f00 bind=static:0 file=/a\\040b huge anon=3 dirty=2 N0=1 N1=2 kernelpagesize_kB=2048 new=1";
        let short = "7f10 default heap N0=5";
        let mut entry = NumaMapsEntry::default();
        parse_line_into(long, &mut entry).unwrap();
        assert_eq!(entry.file.as_deref(), Some("/a b"));
        parse_line_into(short, &mut entry).unwrap();
        assert_eq!(entry, parse_line(short).unwrap());
        parse_line_into(long, &mut entry).unwrap();
        assert_eq!(entry, parse_line(long).unwrap());
    }

    #[test]
    fn unescape_octal() {
        assert_eq!(unescape("/a\\040b\\075c\\012"), "/a b=c\n");
        assert_eq!(unescape("/a\\09"), "/a\\09");
        assert_eq!(unescape("\\"), "\\");
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,120}") {
            let _ = parse(&text);
        }

        #[test]
        fn never_panics_on_plausible_lines(
            words in proptest::collection::vec("(N[0-9]{1,3}|anon|dirty|heap|file|huge|prefer|\\(many\\))(=[0-9a-z\\\\]{0,6})?", 0..8),
        ) {
            let _ = parse_line(&format!("7f00 {}", words.join(" ")));
        }
    }

    /// Found by fuzzing (`numa_maps` target; crashers in
    /// fuzz/regressions/numa_maps/): per-node counts adding past u64::MAX
    /// made `resident_pages` panic with overflow checks on and wrap without.
    #[test]
    fn resident_pages_of_huge_counts_saturate() {
        let entry = parse_line("0 default N0=18446744073709551615 N1=1").unwrap();
        assert_eq!(entry.resident_pages(), u64::MAX);
    }
}
