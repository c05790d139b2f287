//! Reading `sysfs::cpu`; its format, types and parser are `numasleuth_parse::sysfs::cpu`.

pub use numasleuth_parse::sysfs::cpu::*;

use crate::cpulist::{IdList, MAX_CPU_IDS};
use crate::error::{quote, ParseError, ReadError};
use crate::read;
use crate::root::Root;
use crate::unread::Gaps;
use std::collections::{BTreeMap, BTreeSet};

/// Cache levels and kinds one CPU lists (`index0`…): real CPUs have at most
/// six (L1d, L1i, L2, L3, L4, a memory-side cache). Each index holds a CPU
/// list, so a hostile tree of thousands would multiply memory per CPU.
const MAX_CACHE_INDICES: usize = 32;

/// What is left of [`MAX_LIST_IDS_IN_ALL`] while one tree is read.
struct ListBudget {
    ids_left: usize,
    noted: bool,
}

impl ListBudget {
    /// Keeps `list` if it fits what is left; past the budget, lists are
    /// dropped (read as unknown) and the first drop is noted.
    fn admit(&mut self, path: &str, list: Option<IdList>, gaps: &mut Gaps) -> Option<IdList> {
        let list = list?;
        if list.len() <= self.ids_left {
            self.ids_left -= list.len();
            return Some(list);
        }
        if !self.noted {
            self.noted = true;
            gaps.note(&ReadError::malformed(
                path,
                format!(
                    "the per-CPU lists hold more than {MAX_LIST_IDS_IN_ALL} CPU ids in all, more than any machine; \
                     this and later lists are left out"
                ),
            ));
        }
        None
    }
}

/// `None` when there is no CPU sysfs at all (a stripped container) or it
/// cannot be listed (noted in `gaps`). An unusable per-CPU file is noted
/// and read as unknown.
pub fn read(root: &Root, gaps: &mut Gaps) -> Option<CpuSysfs> {
    let names = gaps.keep(root.list(CPU_DIR))?;
    let mut list = |name: &str| gaps.keep(read::list(root, &format!("{CPU_DIR}/{name}")));
    let states = CpuStates {
        online: list("online"),
        offline: list("offline"),
        present: list("present"),
        possible: list("possible"),
    };
    let ids = crate::unread::ids_below(cpu_ids(&names), MAX_CPU_IDS, CPU_DIR, ("cpu", "CPUs"), gaps);
    let mut budget = ListBudget {
        ids_left: MAX_LIST_IDS_IN_ALL,
        noted: false,
    };
    let mut shared = SharedCaches {
        to_read: ids.iter().copied().collect(),
        known: BTreeSet::new(),
    };
    let mut cpus: Vec<CpuFiles> = Vec::with_capacity(ids.len());
    // CPU id -> position in `cpus` of an earlier CPU that named it a
    // thread sibling: see `read_cpu`.
    let mut sibling_of: BTreeMap<u32, usize> = BTreeMap::new();
    for id in ids {
        let described = sibling_of.get(&id).map(|at| &cpus[*at]);
        let cpu = read_cpu(root, (id, described), gaps, &mut budget, &mut shared);
        for other in cpu.thread_siblings.iter().flat_map(IdList::iter) {
            if other > id && shared.to_read.contains(&other) {
                sibling_of.entry(other).or_insert(cpus.len());
            }
        }
        cpus.push(cpu);
    }
    Some(CpuSysfs { states, cpus })
}

/// Cache leaves already read, by index directory and CPU. A CPU listed in
/// an earlier CPU's `shared_cpu_list` for the same index has that very
/// cache, so its files are not read again: the model keeps one domain per
/// shared cache either way. A 64-core, 128-thread machine with eight L3s
/// then reads 200 cache leaves instead of 512, five files each.
struct SharedCaches {
    /// The CPUs this pass reads; only they are remembered, so a hostile
    /// list of millions of ids costs no memory here.
    to_read: BTreeSet<u32>,
    known: BTreeSet<(String, u32)>,
}

/// Reads one CPU. `sibling` is an earlier CPU whose `thread_siblings_list`
/// named this one: the same core, so the same list, which is taken from
/// it rather than read again (one file fewer per SMT thread). In a hostile
/// tree whose siblings disagree, the lowest-numbered CPU's list wins, as it
/// does for a shared cache ([`SharedCaches`]).
fn read_cpu(
    root: &Root,
    (id, sibling): (u32, Option<&CpuFiles>),
    gaps: &mut Gaps,
    budget: &mut ListBudget,
    shared: &mut SharedCaches,
) -> CpuFiles {
    let dir = format!("{CPU_DIR}/cpu{id}");
    // The CPU's directory is listed anyway (for its node link); a name it
    // lacks is not probed: `online` is absent on most CPU 0s and whole
    // architectures, `topology` and `cache` on offline CPUs. A listing
    // that fails says nothing, and every name is tried as before.
    let names = gaps.keep(root.list(&dir));
    let has = |name: &str| names.as_ref().is_none_or(|names| names.iter().any(|n| n == name));
    // Some kernels (ia64) leave the file empty: unknown, read as online.
    let online = if has("online") {
        read_online(root, &dir, gaps)
    } else {
        None
    };
    let mut cpu = if has("topology") {
        read_topology(root, (id, &dir), sibling, gaps, budget)
    } else {
        CpuFiles {
            id,
            ..CpuFiles::default()
        }
    };
    cpu.online = online;
    cpu.node = names
        .iter()
        .flatten()
        .find_map(|n| n.strip_prefix("node")?.parse().ok());
    if has("cache") {
        cpu.caches = read_caches(root, (id, &dir), gaps, budget, shared);
    }
    cpu
}

fn read_online(root: &Root, dir: &str, gaps: &mut Gaps) -> Option<bool> {
    gaps.keep(read::parsed(root, &format!("{dir}/online"), |t| match t.trim() {
        "0" => Ok(Some(false)),
        "1" => Ok(Some(true)),
        "" => Ok(None),
        other => Err(ParseError::new(format!("`{}` is not 0 or 1", quote(other)))),
    }))
    .flatten()
}

/// `cpuN/topology`: ids and thread siblings (see [`read_cpu`] for `sibling`).
fn read_topology(
    root: &Root,
    (id, dir): (u32, &str),
    sibling: Option<&CpuFiles>,
    gaps: &mut Gaps,
    budget: &mut ListBudget,
) -> CpuFiles {
    let topo = format!("{dir}/topology");
    let mut id_of = |name: &str| gaps.keep(read::id(root, &format!("{topo}/{name}")));
    let (package, die, cluster, core) = (
        id_of("physical_package_id"),
        id_of("die_id"),
        // x86 fills cluster_id with BAD_APICID (0xffff) when it has no L2
        // cluster information; that is "unknown", not cluster 65535.
        id_of("cluster_id").filter(|id| *id != 0xffff),
        id_of("core_id"),
    );
    let siblings_path = format!("{topo}/thread_siblings_list");
    let siblings = match sibling {
        Some(earlier) => earlier.thread_siblings.clone(),
        None => gaps.keep(read::list_or_mask(
            root,
            &siblings_path,
            &format!("{topo}/thread_siblings"),
        )),
    };
    CpuFiles {
        id,
        package,
        die,
        cluster,
        core,
        // A copied list counts again: it is held twice.
        thread_siblings: budget.admit(&siblings_path, siblings, gaps),
        ..CpuFiles::default()
    }
}

fn read_caches(
    root: &Root,
    (cpu, cpu_dir): (u32, &str),
    gaps: &mut Gaps,
    budget: &mut ListBudget,
    known: &mut SharedCaches,
) -> Vec<CacheFiles> {
    let cache_dir = format!("{cpu_dir}/cache");
    let Some(names) = gaps.keep(root.list(&cache_dir)) else {
        return Vec::new();
    };
    let mut caches = Vec::new();
    let indices: Vec<_> = names.iter().filter(|n| n.starts_with("index")).collect();
    if indices.len() > MAX_CACHE_INDICES {
        gaps.note(&ReadError::malformed(
            &cache_dir,
            format!(
                "{} cache indices; no CPU has more than {MAX_CACHE_INDICES}",
                indices.len()
            ),
        ));
        return Vec::new();
    }
    for name in indices {
        if known.known.contains(&(name.clone(), cpu)) {
            continue;
        }
        let dir = format!("{cache_dir}/{name}");
        let Some(level) = gaps.keep(read::id(root, &format!("{dir}/level"))) else {
            continue;
        };
        let shared_path = format!("{dir}/shared_cpu_list");
        let shared = gaps.keep(read::list_or_mask(root, &shared_path, &format!("{dir}/shared_cpu_map")));
        let shared_cpus = budget.admit(&shared_path, shared, gaps);
        // Lists count against the budget, so this walk is bounded too.
        for other in shared_cpus.iter().flat_map(IdList::iter) {
            if other > cpu && known.to_read.contains(&other) {
                known.known.insert((name.clone(), other));
            }
        }
        caches.push(CacheFiles {
            level,
            kind: gaps
                .keep(root.read_optional(&format!("{dir}/type")))
                .map(|t| t.trim().to_string())
                .unwrap_or_else(|| "Unified".into()),
            size_bytes: gaps.keep(read::parsed(root, &format!("{dir}/size"), parse_size)),
            line_size_bytes: gaps.keep(read::id(root, &format!("{dir}/coherency_line_size"))),
            shared_cpus,
        });
    }
    caches
}
