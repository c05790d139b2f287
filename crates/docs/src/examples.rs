//! Examples and exit statuses for the man pages and docs/commands.md:
//! one table, so both say the same. Each example is a command line a
//! person can paste, and what it answers.

/// `(command path, [(command line, what it does)])`; the path is the page
/// name without `numasleuth` (`mem latency`).
pub const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "",
        &[
            (
                "numasleuth doctor",
                "Every check on this machine: ranked findings, evidence, remedies.",
            ),
            (
                "numasleuth doctor -p postgres",
                "The same, plus where one process's memory and threads live.",
            ),
            (
                "numasleuth hotlines -p 4242",
                "The cache lines a process's threads fight over, without a PMU.",
            ),
        ],
    ),
    (
        "topo",
        &[
            (
                "numasleuth topo",
                "Nodes, CPUs, memory, distances, caches and devices of this machine.",
            ),
            (
                "numasleuth --root snap.tar.gz topo --json",
                "The same for a snapshot, as JSON.",
            ),
        ],
    ),
    (
        "snapshot",
        &[(
            "numasleuth snapshot -o db1.tar.gz",
            "Capture what numasleuth reads, to analyse elsewhere with --root.",
        )],
    ),
    (
        "doctor",
        &[
            ("numasleuth doctor", "Every static check, findings ranked by severity."),
            (
                "numasleuth doctor -p 4242 -o report.html",
                "Also judge process 4242; write the HTML report.",
            ),
            (
                "numasleuth doctor --fail-on warning",
                "Exit 1 when there is a warning or worse (for CI and cron).",
            ),
        ],
    ),
    (
        "irq",
        &[
            ("numasleuth irq", "Which IRQs may run off their device's node."),
            (
                "numasleuth irq --fix",
                "The affinity change that would fix them (nothing is changed).",
            ),
            (
                "numasleuth irq --apply",
                "Make the change, with a journal that `numasleuth undo` reverses.",
            ),
        ],
    ),
    (
        "undo",
        &[(
            "numasleuth undo numasleuth-irq-20260101T000000.journal.json",
            "Put back what an --apply changed.",
        )],
    ),
    (
        "memwatch",
        &[
            (
                "numasleuth memwatch --duration 1m",
                "Free memory against watermarks, reclaim and numa_miss per second.",
            ),
            (
                "numasleuth memwatch -o mem.json -o mem.svg",
                "Also keep the samples and a chart.",
            ),
        ],
    ),
    (
        "meminfo",
        &[
            (
                "numasleuth meminfo",
                "Each node's meminfo in MiB with a total, as numastat -m shows it.",
            ),
            (
                "numasleuth meminfo -N 0-1 --json",
                "Nodes 0 and 1 only, in bytes, as JSON.",
            ),
        ],
    ),
    (
        "mem",
        &[
            (
                "numasleuth mem",
                "The node×node latency and bandwidth matrices, each cell with its spread.",
            ),
            ("numasleuth mem --quick --csv", "A quicker run, as CSV."),
        ],
    ),
    (
        "mem latency",
        &[
            ("numasleuth mem latency", "The idle latency matrix."),
            (
                "numasleuth mem latency --sizes 16K..64M",
                "Latency against buffer size: the caches, then DRAM.",
            ),
        ],
    ),
    (
        "mem bandwidth",
        &[(
            "numasleuth mem bandwidth --mix 2:1",
            "The bandwidth matrix for two reads per write.",
        )],
    ),
    (
        "mem loaded",
        &[(
            "numasleuth mem loaded",
            "Latency while the other CPUs read memory ever harder.",
        )],
    ),
    (
        "c2c",
        &[
            (
                "numasleuth c2c",
                "Core-to-core cache-line latency between every pair of CPUs.",
            ),
            (
                "numasleuth c2c -C 0-3 --home-node 1",
                "CPUs 0 to 3, with the contended line on node 1.",
            ),
        ],
    ),
    (
        "lab",
        &[(
            "numasleuth lab false-sharing",
            "Reproduce false sharing on this machine and explain the numbers.",
        )],
    ),
    (
        "lab false-sharing",
        &[(
            "numasleuth lab false-sharing --thread-sweep 1,2,4 -o fs.svg",
            "Packed against padded counters at 1, 2 and 4 threads, with a chart.",
        )],
    ),
    (
        "lab locks",
        &[(
            "numasleuth lab locks",
            "Ticket against MCS spinlocks, a mutex and a bare atomic.",
        )],
    ),
    (
        "lab remote-global",
        &[(
            "numasleuth lab remote-global",
            "A global written from one node, living on another.",
        )],
    ),
    (
        "inspect",
        &[
            (
                "numasleuth inspect -p postgres",
                "Where its memory and threads live, with findings.",
            ),
            (
                "numasleuth inspect -p 4242 --sections",
                "Every thread, and every static section page by page.",
            ),
        ],
    ),
    (
        "lines",
        &[
            (
                "numasleuth lines /usr/sbin/mysqld",
                "Which data symbols share a cache line.",
            ),
            (
                "numasleuth lines -p 4242 --symbol counter",
                "The line holding `counter` in process 4242.",
            ),
        ],
    ),
    (
        "watch",
        &[(
            "numasleuth watch -p 4242 --symbol counter --duration 5s",
            "Count writes to `counter` and name the code that writes.",
        )],
    ),
    (
        "move",
        &[
            (
                "numasleuth move -p 4242 --section .bss --to-node 0",
                "What would move (nothing is changed).",
            ),
            (
                "numasleuth move -p 4242 --section .bss --to-node 0 --apply",
                "Move it, with an undo journal.",
            ),
        ],
    ),
    (
        "pmu",
        &[
            (
                "numasleuth pmu -- ./bench --quick",
                "Every PMU event on a command, with IPC.",
            ),
            (
                "numasleuth pmu -p 4242 --duration 10s --json > bad.json",
                "Count a running process for 10 s.",
            ),
        ],
    ),
    (
        "pmu diff",
        &[(
            "numasleuth pmu diff good.json bad.json",
            "Rank what changed between a good and a bad run.",
        )],
    ),
    (
        "runs",
        &[(
            "numasleuth runs -n 12 --start-cpus spread -- ./bench",
            "Twelve runs from alternating nodes: bimodal or not, and why.",
        )],
    ),
    (
        "bisect",
        &[(
            "numasleuth bisect -p 4242 --section .bss --metric-cmd 'curl -s localhost:9/ops' --apply",
            "Find the one page whose node changes the workload's rate.",
        )],
    ),
    (
        "serve",
        &[
            ("numasleuth serve", "Serve /metrics on 127.0.0.1:9464 for Prometheus."),
            (
                "numasleuth serve --textfile /var/lib/node_exporter/textfile_collector",
                "Write the metrics for node_exporter instead.",
            ),
        ],
    ),
    (
        "readers",
        &[(
            "numasleuth readers --duration 30s",
            "Who opened /proc/slabinfo and the other files that take the allocator's locks, and how often.",
        )],
    ),
    (
        "probe-latency",
        &[(
            "numasleuth probe-latency --rate 1000 --duration 1m",
            "Write latency corrected for coordinated omission, beside memory events.",
        )],
    ),
    (
        "top",
        &[(
            "numasleuth top",
            "The live view: nodes, reclaim, and the processes with remote memory.",
        )],
    ),
    (
        "migrations",
        &[
            (
                "numasleuth migrations -p 4242 --duration 10s",
                "Each thread's moves between CPUs and nodes.",
            ),
            ("numasleuth migrations --all", "Every task on the machine."),
        ],
    ),
    (
        "hotlines",
        &[(
            "numasleuth hotlines -p 4242 --duration 5s",
            "Contended cache lines, false sharing flagged, and the watch command that confirms it.",
        )],
    ),
    (
        "hotpages",
        &[(
            "numasleuth hotpages -p 4242 --duration 10s",
            "Its hot memory from DAMON, where those pages live and what they are, hottest remote first.",
        )],
    ),
    (
        "completions",
        &[(
            "numasleuth completions bash > /etc/bash_completion.d/numasleuth",
            "Bash completion.",
        )],
    ),
    (
        "man",
        &[
            ("numasleuth man | man -l -", "Read numasleuth(1)."),
            (
                "numasleuth man --dir /usr/local/share/man/man1",
                "Install a page per command.",
            ),
            (
                "numasleuth man --markdown > docs/commands.md",
                "The command reference as Markdown.",
            ),
        ],
    ),
];

/// The examples of the command at `path` (`mem latency`; `` for the top).
pub fn examples(path: &str) -> &'static [(&'static str, &'static str)] {
    EXAMPLES.iter().find(|(p, _)| *p == path).map_or(&[], |(_, e)| e)
}

/// Commands that sample over time, where the stop mechanism applies.
const SAMPLING: &[&str] = &[
    "memwatch",
    "mem",
    "c2c",
    "lab",
    "watch",
    "pmu",
    "runs",
    "probe-latency",
    "top",
    "migrations",
    "hotlines",
    "hotpages",
    "serve",
    "readers",
];

/// `(status, meaning)` for the command at `path`.
pub fn exit_statuses(path: &str) -> Vec<(&'static str, &'static str)> {
    let top = path.split(' ').next().unwrap_or("");
    let mut out = vec![("0", "Success.")];
    if path.is_empty() || top == "doctor" {
        out.push((
            "1",
            "doctor: a finding at or above --fail-on, or a check that could raise one could not read all its \
             inputs.",
        ));
    }
    out.push((
        "2",
        "An error: bad arguments, unreadable or hostile input, a refused operation. One line on stderr, \
         `numasleuth: error: …`; nothing was changed.",
    ));
    if path.is_empty() || path == "pmu" {
        out.push((
            "1-255",
            "pmu -- CMD: the command's own exit status, or 128 + the signal that killed it (130 for the Ctrl-C \
             passed on to it), as perf stat passes it on. An error of numasleuth's own is 2 whatever the \
             command did.",
        ));
    }
    if path.is_empty() || SAMPLING.contains(&top) {
        out.push((
            "130",
            "A second Ctrl-C (SIGINT) or SIGTERM. The first stops the sampling and reports what was gathered.",
        ));
    }
    out
}
