//! `NAME.console`: reading `lstopo`'s verbose tree and latency matrix. This
//! is the independent side of the comparison, so it is kept apart from our
//! model and only turns text into node ids, PU sets, printed sizes and
//! distances, without any knowledge of how numasleuth reads the machine.

use std::collections::{BTreeMap, BTreeSet};

/// A size as lstopo printed it: `8190MiB` is `value` 8190 at `shift` 20.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Printed {
    pub(crate) value: u64,
    pub(crate) shift: u32,
}

impl Printed {
    fn parse(text: &str) -> Option<Printed> {
        let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let value = text[..digits].parse().ok()?;
        let shift = match &text[digits..] {
            "B" => 0,
            "KiB" | "KB" | "kB" => 10,
            "MiB" | "MB" => 20,
            "GiB" | "GB" => 30,
            "TiB" | "TB" => 40,
            _ => return None,
        };
        Some(Printed { value, shift })
    }

    /// `bytes` in this unit, rounded to nearest with halves up, as lstopo
    /// rounds: 56 nodes in the corpus only match that way, none only by
    /// truncating (8em64t-2s2ca2c's 15.995 GiB prints as `local=16GiB`).
    pub(crate) fn round(&self, bytes: u64) -> u64 {
        if self.shift == 0 {
            return bytes;
        }
        (bytes + (1 << (self.shift - 1))) >> self.shift
    }
}

impl std::fmt::Display for Printed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = match self.shift {
            0 => "B",
            10 => "KiB",
            20 => "MiB",
            30 => "GiB",
            _ => "TiB",
        };
        write!(f, "{}{unit}", self.value)
    }
}

#[derive(Debug)]
pub(crate) struct ConsoleNode {
    pub(crate) local: Option<Printed>,
    /// The PUs below the node's parent object: the CPUs hwloc considers
    /// local to this memory.
    pub(crate) cpus: BTreeSet<u32>,
}

#[derive(Debug)]
pub(crate) struct Console {
    pub(crate) nodes: BTreeMap<u32, ConsoleNode>,
    /// Every PU in the tree.
    pub(crate) pus: BTreeSet<u32>,
    /// The `NUMALatency` matrix, when lstopo printed one.
    pub(crate) distances: Option<Distances>,
}

/// `(from, to) -> value`, by OS index.
pub(crate) type Distances = BTreeMap<(u32, u32), u32>;

/// Reads lstopo's verbose console output. The tree comes first, one object
/// per line, nesting shown by indentation, and ends at the first line that is
/// not indented (`depth 0: ...`). A NUMA node is a memory child of the
/// object it hangs under, so the CPUs it serves are the PUs in its parent's
/// subtree: the nearest preceding line indented less than the node, looking
/// past memory-side caches (`MemCache`), which sit between a node and that
/// object (memorysidecaches). The `NUMALatency` matrix follows the tree.
pub(crate) fn parse_console(text: &str) -> Result<Console, String> {
    let mut lines = text.lines();
    let first = lines.next().ok_or("empty file")?;
    if !first.starts_with("Machine") {
        return Err(format!("first line is not the Machine: `{first}`"));
    }
    let mut tree: Vec<(usize, &str)> = vec![(0, first)];
    let mut rest = Vec::new();
    let mut in_tree = true;
    for line in lines {
        if in_tree && line.starts_with(' ') {
            let body = line.trim_start_matches(' ');
            tree.push((line.len() - body.len(), body));
        } else {
            in_tree = false;
            rest.push(line);
        }
    }

    let pu_id = |body: &str| -> Result<Option<u32>, String> {
        if !body.starts_with("PU ") {
            return Ok(None);
        }
        os_index(body)
            .map(Some)
            .ok_or_else(|| format!("PU without P#: `{body}`"))
    };
    let mut pus = BTreeSet::new();
    for (_, body) in &tree {
        if let Some(id) = pu_id(body)? {
            pus.insert(id);
        }
    }

    let mut nodes = BTreeMap::new();
    let mut logical_to_os = BTreeMap::new();
    for (index, (_, body)) in tree.iter().enumerate() {
        let Some(after) = body.strip_prefix("NUMANode") else {
            continue;
        };
        if !(after.starts_with(' ') || after.starts_with('(')) {
            continue;
        }
        let id = os_index(body).ok_or_else(|| format!("NUMANode without P#: `{body}`"))?;
        let logical = logical_index(body).ok_or_else(|| format!("NUMANode without L#: `{body}`"))?;
        let local = match attribute(body, "local") {
            Some(text) => Some(Printed::parse(text).ok_or_else(|| format!("bad local= in `{body}`"))?),
            None => None,
        };
        // A memory-side cache (`MemCache`, e.g. DDR in front of Optane) sits
        // between the node and the object that holds its CPUs; look past it.
        let mut parent = index;
        loop {
            let below = tree[parent].0;
            parent = (0..parent)
                .rev()
                .find(|&j| tree[j].0 < below)
                .ok_or_else(|| format!("NUMANode without a parent: `{body}`"))?;
            if !tree[parent].1.starts_with("MemCache") {
                break;
            }
        }
        let mut cpus = BTreeSet::new();
        for (child_indent, child) in &tree[parent + 1..] {
            if *child_indent <= tree[parent].0 {
                break;
            }
            if let Some(pu) = pu_id(child)? {
                cpus.insert(pu);
            }
        }
        logical_to_os.insert(logical, id);
        if nodes.insert(id, ConsoleNode { local, cpus }).is_some() {
            return Err(format!("NUMANode P#{id} shown twice"));
        }
    }

    let distances = parse_latency_matrix(&rest, &logical_to_os)?;
    Ok(Console { nodes, pus, distances })
}

fn os_index(body: &str) -> Option<u32> {
    number_after(body, "(P#")
}

fn logical_index(body: &str) -> Option<u32> {
    number_after(body, " L#")
}

fn number_after(body: &str, marker: &str) -> Option<u32> {
    let start = body.find(marker)? + marker.len();
    let digits: String = body[start..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `local=8190MiB` inside the object's parenthesised attributes.
fn attribute<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    let open = body.find('(')?;
    body[open + 1..]
        .trim_end_matches(')')
        .split_whitespace()
        .find_map(|word| word.strip_prefix(name)?.strip_prefix('='))
        .map(|value| value.trim_end_matches(')'))
}

/// ```text
/// Relative latency matrix (name NUMALatency kind 5) between 2 NUMANodes (depth -3) by logical indexes:
///  index     0     1
///      0    10    20
///      1    20    10
/// ```
fn parse_latency_matrix(lines: &[&str], logical_to_os: &BTreeMap<u32, u32>) -> Result<Option<Distances>, String> {
    let Some(start) = lines
        .iter()
        .position(|l| l.contains("latency matrix") && l.contains("name NUMALatency"))
    else {
        return Ok(None);
    };
    let logical = if lines[start].contains("by logical indexes") {
        true
    } else if lines[start].contains("by physical indexes") {
        false
    } else {
        return Err(format!("matrix indexed how? `{}`", lines[start]));
    };
    let to_os = |index: u32| -> Result<u32, String> {
        if logical {
            logical_to_os
                .get(&index)
                .copied()
                .ok_or_else(|| format!("latency matrix names NUMANode L#{index}, which the tree lacks"))
        } else {
            Ok(index)
        }
    };
    let header = lines.get(start + 1).ok_or("latency matrix without header")?;
    let mut words = header.split_whitespace();
    if words.next() != Some("index") {
        return Err(format!("latency matrix header `{header}`"));
    }
    let columns: Vec<u32> = words
        .map(|w| {
            w.parse()
                .map_err(|_| format!("latency matrix header `{header}`"))
                .and_then(to_os)
        })
        .collect::<Result<_, _>>()?;
    let mut matrix = BTreeMap::new();
    for row in 0..columns.len() {
        let line = lines.get(start + 2 + row).ok_or("latency matrix cut short")?;
        let mut words = line.split_whitespace();
        let from = words
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| format!("latency matrix row `{line}`"))
            .and_then(to_os)?;
        for &to in &columns {
            let value = words
                .next()
                .and_then(|w| w.parse().ok())
                .ok_or_else(|| format!("latency matrix row `{line}`"))?;
            matrix.insert((from, to), value);
        }
    }
    Ok(Some(matrix))
}
