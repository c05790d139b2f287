#!/usr/bin/env python3
"""Issue 35's two cost goals, side by side in one run on one machine:

    inspect -p PID (text and --json)  vs  numastat -p PID       (goal <= 1.0x)
                                      vs  cat maps numa_maps    (goal <= 1.1x)
    meminfo                           vs  numastat -m           (goal <= 1.0x)

PID is bench/many-maps.c holding MAPPINGS one-page mappings (50,000 by
default). The script builds what it needs (the release binary, many-maps;
numastat comes from Debian's numactl, installed with apt if missing).

Each round runs a batch of every command of a group back to back
(interleaved), so drift on a shared machine hits them alike. Per run it
takes the wall time and the child's CPU time (user + system of all its
threads, from wait4's rusage). A command's figure per round is the median of
its batch; the tables give the median over rounds with the min-max of the
rounds, and each ratio is the median of the per-round ratios with their
min-max. CPU time is the figure to read on a loaded machine: another
process's work delays a run's wall time but is not charged to it.

    python3 bench/inspect-meminfo.py                 # about 2 minutes
    ROUNDS=15 MAPPINGS=50000 python3 bench/inspect-meminfo.py
    NUMASLEUTH=/path/to/numasleuth python3 bench/inspect-meminfo.py   # no build
    BEFORE=/path/to/older/numasleuth python3 bench/inspect-meminfo.py # and an older
        # build in the same interleaved rounds, rows marked "(before)"

A benchmark, not a test: it prints numbers and ratios and never fails on one.
"""

import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# (wall ms, CPU ms) of one run, output discarded: pair.py's, one definition.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pair import one  # noqa: E402


def series(commands, rounds, batch):
    """Per command, per round: (median wall ms, median CPU ms) of a batch."""
    for argv in commands.values():
        one(argv)  # warm the page cache, the dentries and the binary
    out = {name: [] for name in commands}
    for _ in range(rounds):
        for name, argv in commands.items():
            runs = [one(argv) for _ in range(batch)]
            out[name].append((statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)))
    return out


def spread(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def report(title, results, ratios, rounds, batch):
    print(f"### {title}: {rounds} rounds of {batch} runs of each, interleaved")
    print()
    print("| command | wall ms, median (min–max of rounds) | CPU ms (user+sys), median (min–max) |")
    print("|---|---|---|")
    for name, per_round in results.items():
        print(f"| `{name}` | {spread([r[0] for r in per_round])} | {spread([r[1] for r in per_round])} |")
    print()
    print("| ratio (median of per-round ratios, min–max) | CPU | wall | goal |")
    print("|---|---|---|---|")
    for ours, peer, goal in ratios:
        cells = []
        for index in (1, 0):
            pairs = zip(results[ours], results[peer])
            values = [o[index] / p[index] for o, p in pairs if p[index] > 0]
            cells.append(spread(values))
        print(f"| `{ours}` / `{peer}` | {cells[0]} | {cells[1]} | {goal} |")
    print()


def build(target):
    if os.environ.get("NUMASLEUTH"):
        return os.environ["NUMASLEUTH"]
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "numasleuth"], cwd=ROOT, check=True)
    return os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "numasleuth")


def machine():
    def read(path):
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return "?"

    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    caches = "/sys/devices/system/cpu/cpu0/cache"
    l3 = [read(f"{caches}/{d}/size") for d in sorted(os.listdir(caches)) if read(f"{caches}/{d}/level") == "3"]
    load = read("/proc/loadavg").split()[:3]
    return (
        f"machine: {os.cpu_count()} CPUs ({model}), L3 {', '.join(l3) or 'none'}, Linux {os.uname().release}; "
        f"load average {' '.join(load)} at {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )


def main():
    rounds = int(os.environ.get("ROUNDS", "9"))
    mappings = os.environ.get("MAPPINGS", "50000")
    if not shutil.which("numastat"):
        subprocess.run("apt-get update -qq && apt-get install -y -qq numactl", shell=True, check=True)
    peers = os.path.join(ROOT, "target", "bench-peers")
    os.makedirs(peers, exist_ok=True)
    many_maps = os.path.join(peers, "many-maps")
    subprocess.run(["gcc", "-O2", "-o", many_maps, os.path.join(ROOT, "bench", "many-maps.c")], check=True)
    numasleuth = build(ROOT)
    before = os.environ.get("BEFORE")
    target = subprocess.Popen([many_maps, mappings], stdout=subprocess.PIPE, text=True)
    try:
        pid = target.stdout.readline().strip()
        with open(f"/proc/{pid}/maps") as f:
            count = sum(1 for _ in f)
        print(machine())
        print(f"binary: {numasleuth}{f' (before: {before})' if before else ''}; target: bench/many-maps.c, {count} mappings (pid {pid})")
        print()
        inspect = {
            "inspect -p PID": [numasleuth, "inspect", "-p", pid],
            "inspect -p PID --json": [numasleuth, "inspect", "-p", pid, "--json"],
            "cat maps numa_maps": ["cat", f"/proc/{pid}/maps", f"/proc/{pid}/numa_maps"],
            "numastat -p PID": ["numastat", "-p", pid],
        }
        ratios = [
            ("inspect -p PID", "numastat -p PID", "≤ 1.00"),
            ("inspect -p PID", "cat maps numa_maps", "≤ 1.10"),
            ("inspect -p PID --json", "numastat -p PID", "≤ 1.00"),
            ("inspect -p PID --json", "cat maps numa_maps", "≤ 1.10"),
        ]
        if before:
            inspect["inspect -p PID (before)"] = [before, "inspect", "-p", pid]
            ratios.append(("inspect -p PID (before)", "numastat -p PID", "≤ 1.00"))
            ratios.append(("inspect -p PID (before)", "cat maps numa_maps", "≤ 1.10"))
            ratios.append(("inspect -p PID", "inspect -p PID (before)", "after / before"))
        batch = int(os.environ.get("BATCH_INSPECT", "3"))
        report("inspect", series(inspect, rounds, batch), ratios, rounds, batch)
    finally:
        target.kill()
        target.wait()
    meminfo = {
        "meminfo": [numasleuth, "meminfo"],
        "numastat -m": ["numastat", "-m"],
        "numasleuth --version": [numasleuth, "--version"],
        "true": ["true"],
    }
    ratios = [
        ("meminfo", "numastat -m", "≤ 1.00"),
        ("numasleuth --version", "numastat -m", "(start-up alone)"),
    ]
    if before:
        meminfo["meminfo (before)"] = [before, "meminfo"]
        ratios.append(("meminfo (before)", "numastat -m", "≤ 1.00"))
    batch = int(os.environ.get("BATCH_MEMINFO", "20"))
    report("meminfo", series(meminfo, rounds, batch), ratios, rounds, batch)


if __name__ == "__main__":
    main()
