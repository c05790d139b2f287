//! The four machines the test bed boots. Each mirrors a situation numasleuth
//! must read correctly and that our single-node machines cannot show.
//!
//! Why the shapes: two plain nodes (QEMU's default distances), three nodes
//! with a CPU-less one and a NIC behind a PCI expander bridge on node 1, four
//! nodes with non-uniform and one asymmetric distance, and a CPU taken
//! offline at run time.

use crate::env::{Arch, Kernel};
use crate::guest::{GuestSpec, NodeSpec};

/// What every guest runs after its setup, in this order. The snapshot is
/// printed base64-encoded because the serial console is the only way out.
pub fn standard_commands() -> Vec<(String, String)> {
    [
        ("topo", "numasleuth topo --json"),
        ("snapshot", "numasleuth snapshot -o /tmp/snap.tar.gz"),
        ("snapshot.b64", "base64 /tmp/snap.tar.gz"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

fn node(cpus: Option<&str>, mem_mib: u64) -> NodeSpec {
    NodeSpec {
        cpus: cpus.map(str::to_string),
        mem_mib,
    }
}

fn base(name: &str, smp: &str, nodes: Vec<NodeSpec>) -> GuestSpec {
    GuestSpec {
        name: name.to_string(),
        arch: Arch::default(),
        kernel: Kernel::default(),
        smp: smp.to_string(),
        cpu: Arch::default().default_cpu().to_string(),
        nodes,
        distances: Vec::new(),
        extra_qemu: Vec::new(),
        load_e1000: false,
        extra_files: Vec::new(),
        setup: Vec::new(),
        commands: standard_commands(),
    }
}

/// `spec` booted on `kernel`; a kernel other than the default adds its
/// version to the name (`two-nodes-victim-6.12`), so the two runs keep
/// apart work dirs and fixtures.
pub fn on_kernel(mut spec: GuestSpec, kernel: Kernel) -> GuestSpec {
    if kernel != Kernel::default() {
        spec.name = format!("{}-{}", spec.name, kernel.version());
    }
    spec.kernel = kernel;
    spec
}

/// `spec` on `arch`, with that architecture's CPU; an architecture other
/// than the default adds its Debian name (`two-nodes-victim-arm64`), as
/// [`on_kernel`] does. Apply it before `on_kernel`.
pub fn on_arch(mut spec: GuestSpec, arch: Arch) -> GuestSpec {
    if arch != Arch::default() {
        spec.name = format!("{}-{}", spec.name, arch.debian_name());
    }
    spec.arch = arch;
    spec.cpu = arch.default_cpu().to_string();
    spec
}

/// (a) Two nodes of two CPUs and 512 MiB each, no `-numa dist`.
pub fn two_nodes() -> GuestSpec {
    base(
        "two-nodes",
        "4,sockets=2,cores=2",
        vec![node(Some("0-1"), 512), node(Some("2-3"), 512)],
    )
}

/// Distances of the three-node guest; one direction per pair, QEMU mirrors.
pub const THREE_NODE_DISTANCES: [(u32, u32, u32); 3] = [(0, 1, 21), (0, 2, 30), (1, 2, 21)];

/// (b) Nodes 0 and 1 with CPUs, node 2 memory-only, 1 GiB each, and an e1000
/// NIC on a PCI expander bridge (bus 0x10) that belongs to node 1.
pub fn three_nodes_nic() -> GuestSpec {
    let mut g = base(
        "three-nodes-nic",
        "4,sockets=2,cores=2",
        vec![node(Some("0-1"), 1024), node(Some("2-3"), 1024), node(None, 1024)],
    );
    g.distances = THREE_NODE_DISTANCES.to_vec();
    // `pxb` is for the pc machine only (q35 needs pxb-pcie plus a root port).
    g.extra_qemu = [
        "-device",
        "pxb,id=pxb1,bus_nr=16,numa_node=1,bus=pci.0",
        "-netdev",
        "user,id=n1",
        "-device",
        "e1000,netdev=n1,bus=pxb1,addr=0x1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    g.load_e1000 = true;
    // An interface that is down has no IRQ handler; bring it up so the NIC's
    // interrupt exists, served (by default) from node 0's CPUs.
    g.setup = vec!["ip link set eth0 up".to_string()];
    g.commands.extend(irq_round_trip_commands());
    g.commands.extend(placement_commands());
    g
}

/// Measurement placement on a real 3-node kernel: buffers bound to each
/// node (the CPU-less one included) must be verified there. TCG timings
/// mean nothing, so only structure and placement are asserted.
pub fn placement_commands() -> Vec<(String, String)> {
    [
        (
            "mem",
            "numasleuth mem --json --quick --size 16M --samples 3 --sample-ms 2",
        ),
        (
            "c2c",
            "numasleuth c2c --json --home-node 2 --cpus 0,2 --samples 2 --transfers 20",
        ),
        ("mem-bad-node", "numasleuth mem latency --sizes 16K --node 7"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

/// `doctor` must flag the NIC's IRQ, `irq --apply` must move it onto node
/// 1's CPUs with a journal, and `undo` must put back what was there.
pub fn irq_round_trip_commands() -> Vec<(String, String)> {
    [
        ("doctor", "numasleuth doctor --json"),
        (
            "irq-apply",
            "numasleuth irq --apply --json --journal /tmp/irq.journal.json",
        ),
        ("irq-after", "numasleuth irq --json"),
        ("undo", "numasleuth undo /tmp/irq.journal.json"),
        ("irq-undone", "numasleuth irq --json"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

/// The full matrix of the four-node guest, row = source node. Every pair is
/// given in both directions, which is what QEMU demands as soon as one pair
/// is asymmetric; 0->3 (31) and 3->0 (28) differ on purpose.
pub const FOUR_NODE_DISTANCES: [[u32; 4]; 4] = [[10, 12, 20, 31], [12, 10, 17, 25], [20, 17, 10, 14], [28, 25, 14, 10]];

/// (c) Four single-CPU nodes of 256 MiB with non-uniform distances.
pub fn four_nodes_asymmetric() -> GuestSpec {
    let mut g = base(
        "four-nodes-asymmetric",
        "4,sockets=4,cores=1",
        (0..4).map(|i| node(Some(&i.to_string()), 256)).collect(),
    );
    for (src, row) in FOUR_NODE_DISTANCES.iter().enumerate() {
        for (dst, &val) in row.iter().enumerate() {
            if src != dst {
                g.distances.push((src as u32, dst as u32, val));
            }
        }
    }
    g
}

/// (d) Like two-nodes, with CPU 3 taken offline before anything is read.
pub fn offline_cpu() -> GuestSpec {
    let mut g = two_nodes();
    g.name = "offline-cpu".to_string();
    g.setup = vec!["echo 0 > /sys/devices/system/cpu/cpu3/online".to_string()];
    g
}

/// The shell words that give the victim's PID inside the guest.
const VICTIM_PID: &str = "$(cat /tmp/victim.pid)";

/// (e) The database incident on two nodes: the static victim (its path on
/// the host) first-touches its globals on CPU 2 (node 1), then runs its
/// workers on CPUs 0-1 (node 0). `inspect` must flag it, `move --apply`
/// fix it, `undo` restore it, and `watch` count the writes.
///
/// AutoNUMA is turned off first: it would migrate the hot page by itself
/// (racing the test). Pages hidden from move_pages by its hinting faults
/// are the subject of [`two_nodes_detective`].
pub fn two_nodes_victim(victim: &std::path::Path) -> GuestSpec {
    let mut g = two_nodes();
    g.name = "two-nodes-victim".to_string();
    g.extra_files = vec![("victim".to_string(), victim.to_path_buf())];
    g.setup = [
        "if [ -w /proc/sys/kernel/numa_balancing ]; then echo 0 > /proc/sys/kernel/numa_balancing; fi",
        "/victim --workers 2 --start-cpu 2 --worker-cpus 0-1 > /tmp/victim.out 2>&1 &",
        "record-pid victim",
        // Let the workers start and move every thread to node 0's CPUs.
        "sleep 1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let pid = VICTIM_PID;
    let sh = |name: &str, cmd: String| (name.to_string(), format!("sh -c '{cmd}'"));
    g.commands.extend([
        ("victim".to_string(), "cat /tmp/victim.out".to_string()),
        sh("inspect-before", format!("numasleuth inspect {pid} --json")),
        sh("doctor-pid", format!("numasleuth doctor --pid {pid} --json")),
        // The same report as a person reads it (docs/doctor.md shows it).
        sh("doctor-pid-text", format!("numasleuth doctor --pid {pid}")),
        sh(
            "move-dry",
            format!("numasleuth move {pid} --section .bss --to-node 0 --json"),
        ),
        sh(
            "move-apply",
            format!("numasleuth move {pid} --section .bss --to-node 0 --apply --journal /tmp/m.json --json"),
        ),
        sh("inspect-moved", format!("numasleuth inspect {pid} --json")),
        ("undo".to_string(), "numasleuth undo /tmp/m.json".to_string()),
        sh("inspect-undone", format!("numasleuth inspect {pid} --json")),
        sh(
            "watch",
            format!("numasleuth watch {pid} --symbol nil_root --duration 2s --json"),
        ),
        sh(
            "move-bad-node",
            format!("numasleuth move {pid} --section .bss --to-node 5"),
        ),
    ]);
    g
}

/// The victim guest's last command: the contention alone. The incident's
/// victim is stopped and a second one started on node 0 whole (its .bss
/// and its threads' stacks first touched there), so its one problem is the
/// line nil_root shares with the read-mostly log_level, written from both
/// workers. Last, since every command before it asks about the first.
pub fn victim_contention_alone() -> (String, String) {
    let pid = VICTIM_PID;
    (
        "doctor-local".to_string(),
        format!(
            "sh -c 'kill {pid}; /victim --workers 2 --start-cpu 0 --worker-cpus 0-1 >/tmp/local.out 2>&1 & l=$!; \
             sleep 1; numasleuth doctor --pid $l --json; rc=$?; kill $l; exit $rc'"
        ),
    )
}

/// Prints `mm->numa_scan_seq` from a `sched` file named next: how many
/// whole NUMA-balancing scan passes the process's memory has had.
const SCAN_SEQ: &str = "awk '/numa_scan_seq/ {print $3}'";
/// The same, for a command wrapped in `sh -c '…'` (no single quotes).
const SCAN_SEQ_SH: &str = "awk \"/numa_scan_seq/ {print \\$3}\"";

/// (f) The detective on real process states, two nodes with AutoNUMA left
/// on (`kernel.numa_balancing=1`, the multi-node default):
/// - a "sleeper" victim first-touches its globals on CPU 2 (node 1) and
///   sleeps; it is then re-pinned to node 0 with `taskset -a -p -c 0-1`,
///   as a service is pinned after it starts. Asleep, it keeps CPU 2 in
///   `stat`; `inspect` must place it on node 0 and raise
///   `static-data-remote`, saying why.
/// - a "spinner" victim first-touches its globals on node 1, then runs a
///   worker on CPU 0 that touches no global: the scanner marks the globals'
///   pages PROT_NONE and nothing ends those hinting faults, so on 6.1
///   move_pages calls them "not present". `inspect` must say so, `move
///   --apply` must move them all, and `undo` must move them back once the
///   scanner has hidden them again.
pub fn two_nodes_detective(victim: &std::path::Path) -> GuestSpec {
    let mut g = two_nodes();
    g.name = "two-nodes-detective".to_string();
    g.extra_files = vec![("victim".to_string(), victim.to_path_buf())];
    g.setup = vec![
        "/victim --workers 0 --start-cpu 2 > /tmp/sleeper.out 2>&1 &".to_string(),
        "record-pid sleeper".to_string(),
        "taskset -a -p -c 0-1 $(cat /tmp/sleeper.pid) > /dev/null".to_string(),
        "/victim --workers 1 --start-cpu 2 --worker-cpus 0 --quiet-workers > /tmp/spinner.out 2>&1 &".to_string(),
        "record-pid spinner".to_string(),
        // The scanner starts about a second after the process and marks
        // its pages one pass at a time; the kernel counts finished passes in
        // `mm->numa_scan_seq` (sched). Wait (at most 90 s) for one whole
        // pass, judged by the kernel, not by numasleuth.
        format!("n=0; until [ \"$({SCAN_SEQ} /proc/$(cat /tmp/spinner.pid)/sched)\" -ge 1 ]; do n=$((n+1)); [ $n -lt 90 ]; sleep 1; done"),
    ];
    let sh = |name: &str, cmd: String| (name.to_string(), format!("sh -c '{cmd}'"));
    let (sleeper, spinner) = ("$(cat /tmp/sleeper.pid)", "$(cat /tmp/spinner.pid)");
    g.commands.extend([
        (
            "numa-balancing".to_string(),
            "cat /proc/sys/kernel/numa_balancing".to_string(),
        ),
        sh("sleeper-cpu", format!("cut -d\" \" -f39 /proc/{sleeper}/stat")),
        sh("sleeper-pid", "cat /tmp/sleeper.pid".to_string()),
        sh("inspect-sleeper", format!("numasleuth inspect {sleeper} --json")),
        sh("inspect-hinting", format!("numasleuth inspect {spinner} --json")),
        sh(
            "move-dry-hinting",
            format!("numasleuth move {spinner} --section .bss --to-node 0 --json"),
        ),
        sh(
            "move-apply-hinting",
            format!("numasleuth move {spinner} --section .bss --to-node 0 --apply --journal /tmp/h.json --json"),
        ),
        sh("inspect-hinting-moved", format!("numasleuth inspect {spinner} --json")),
        // The scanner marks the moved pages again (the process has two
        // threads, so pages already on their node are marked too): wait for
        // two more whole passes (one may have been under way during the
        // move), then undo must read them back into view to move them back.
        sh(
            "wait-scan-again",
            format!(
                "s=$({SCAN_SEQ_SH} /proc/{spinner}/sched); n=0; \
                 until [ $({SCAN_SEQ_SH} /proc/{spinner}/sched) -ge $((s+2)) ]; \
                 do n=$((n+1)); [ $n -lt 90 ] || exit 1; sleep 1; done; echo $n"
            ),
        ),
        sh("inspect-hinting-again", format!("numasleuth inspect {spinner} --json")),
        ("undo-hinting".to_string(), "numasleuth undo /tmp/h.json".to_string()),
        sh("inspect-hinting-undone", format!("numasleuth inspect {spinner} --json")),
    ]);
    g
}
