//! The lab's configurations as types: what `measure` runs, what `analyze`
//! compares and what `report` prints. One enum each, so no layer compares
//! strings; serialized as the same kebab-case words the JSON always had.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How the false-sharing counters sit in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// Adjacent 8-byte counters: threads 0-7 share one 64-byte line.
    Packed,
    /// Each counter alone in its own 128-byte block.
    Padded,
}

impl Layout {
    pub const ALL: [Layout; 2] = [Layout::Packed, Layout::Padded];

    pub fn name(self) -> &'static str {
        match self {
            Layout::Packed => "packed",
            Layout::Padded => "padded",
        }
    }
}

/// What each false-sharing thread does to its counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// Atomic fetch-add.
    Atomic,
    /// Load, add one, store.
    Store,
}

impl Op {
    pub const ALL: [Op; 2] = [Op::Atomic, Op::Store];

    pub fn name(self) -> &'static str {
        match self {
            Op::Atomic => "atomic",
            Op::Store => "store",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockKind {
    Ticket,
    Mcs,
    Mutex,
    /// No lock: one atomic fetch-add per operation.
    Atomic,
}

impl LockKind {
    pub const ALL: [LockKind; 4] = [LockKind::Ticket, LockKind::Mcs, LockKind::Mutex, LockKind::Atomic];

    pub fn name(self) -> &'static str {
        match self {
            LockKind::Ticket => "ticket",
            LockKind::Mcs => "mcs",
            LockKind::Mutex => "mutex",
            LockKind::Atomic => "atomic",
        }
    }

    /// Waiters spin rather than sleep, so oversubscription hurts them.
    pub fn spins(self) -> bool {
        matches!(self, LockKind::Ticket | LockKind::Mcs)
    }
}

/// What the lock's critical section does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Load {
    Empty,
    /// An atomic add on the lock's own line inside the critical section.
    OneLoad,
}

impl Load {
    pub const ALL: [Load; 2] = [Load::Empty, Load::OneLoad];

    pub fn name(self) -> &'static str {
        match self {
            Load::Empty => "empty",
            Load::OneLoad => "one-load",
        }
    }
}

/// Where the remote-global lab's global lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Global {
    /// One shared global on the workers' own node.
    Local,
    /// One shared global on another node.
    Remote,
    /// Each worker writes its own padded copy: the fix.
    PerThread,
}

impl Global {
    pub fn name(self) -> &'static str {
        match self {
            Global::Local => "local",
            Global::Remote => "remote",
            Global::PerThread => "per-thread",
        }
    }
}

/// Where the lab's threads go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Fill one node's CPUs before the next node's.
    Compact,
    /// Alternate between nodes, so every pair of neighbours crosses one.
    Spread,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::Compact => "compact",
            Placement::Spread => "spread",
        }
    }
}

macro_rules! display_by_name {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    )*};
}

display_by_name!(Layout, Op, LockKind, Load, Global, Placement);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serialized_words() {
        // JSON stays what it was when these were strings.
        for (json, name) in [
            (serde_json::to_string(&Layout::Packed).unwrap(), Layout::Packed.name()),
            (serde_json::to_string(&Load::OneLoad).unwrap(), Load::OneLoad.name()),
            (
                serde_json::to_string(&Global::PerThread).unwrap(),
                Global::PerThread.name(),
            ),
            (serde_json::to_string(&LockKind::Mcs).unwrap(), LockKind::Mcs.name()),
            (
                serde_json::to_string(&Placement::Spread).unwrap(),
                Placement::Spread.name(),
            ),
            (serde_json::to_string(&Op::Store).unwrap(), Op::Store.name()),
        ] {
            assert_eq!(json, format!("\"{name}\""));
        }
        assert_eq!(Global::PerThread.to_string(), "per-thread");
    }
}
