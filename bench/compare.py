"""Runs numasleuth and its peers alternately and prints ratios ours/peer.

Each comparison runs ROUNDS rounds of (ours, peer) back to back, so slow
drift on a shared VM hits both alike. Each tool's figure is the median of
its per-round medians; the spread shown is the range of those round
medians. Nothing here is a test: it only reports.
"""

import json
import os
import platform
import re
import statistics
import subprocess
import time

OURS = os.environ["NUMASLEUTH"]
C2C_PEER = os.environ["C2C_PEER"]
CHASE_PEER = os.environ["CHASE_PEER"]
ROUNDS = int(os.environ.get("ROUNDS", "3"))
CPUS = "0-1"


def run(args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def ours_json(args):
    return json.loads(run([OURS, *args, "--json"]))


def rounds(ours, peer, count=None):
    mine, theirs = [], []
    for _ in range(count or ROUNDS):
        mine.append(ours())
        theirs.append(peer())
    return mine, theirs


def row(what, mine, theirs, unit, scale=1.0, goal=""):
    m, t = statistics.median(mine), statistics.median(theirs)
    spread = lambda xs: f"{min(xs) / scale:.2f}–{max(xs) / scale:.2f}"
    return f"| {what} | {m / scale:.2f} ({spread(mine)}) | {t / scale:.2f} ({spread(theirs)}) | {unit} | **{m / t:.3f}** | {goal} |"


def latency(size_bytes, cpu=0):
    def ours():
        doc = ours_json(["mem", "latency", "--sizes", str(size_bytes), "-C", str(cpu), "--samples", "11"])
        return doc["latency_sweep"]["points"][0]["latency_ns"]["median"]

    def peer():
        return float(run([CHASE_PEER, str(size_bytes), str(cpu), "11", "20"]).split()[0])

    return rounds(ours, peer)


LIKWID_KERNEL = {"read": "load_avx", "2:1": "stream_avx", "1:1": "copy_avx", "write": "store_mem_avx"}


def bandwidth(mix, pages="thp", size_bytes=512_000_000, threads=2):
    def ours():
        args = ["mem", "bandwidth", "--mix", mix, "--pages", pages, "--size", str(size_bytes)]
        doc = ours_json([*args, "--threads", str(threads), "--samples", "11"])
        return doc["bandwidth_bytes_per_sec"]["matrix"][0][0]["median"]

    def peer():
        out = run(["likwid-bench", "-t", LIKWID_KERNEL[mix], "-w", f"S0:{size_bytes // 1_000_000}MB:{threads}"])
        return float(re.search(r"MByte/s:\s+([\d.]+)", out).group(1)) * 1e6

    return rounds(ours, peer)


def c2c():
    """Ours as (median, mean) of the same samples: the peer reports a mean."""
    def ours():
        doc = ours_json(["c2c", "--cpus", CPUS, "--samples", "300", "--transfers", "1000", "--raw"])
        return doc["latency_ns"][0][1]["median"], statistics.fmean(doc["raw_latency_ns"][0][1])

    def peer():
        out = run([C2C_PEER, "1000", "300", "--cores", "0,1", "--csv", "-b", "1"])
        cells = [float(v) for line in out.splitlines() for v in line.split(",") if v.strip()]
        return cells[0]

    # vCPUs wander between host cores, so c2c needs more rounds to say anything.
    return rounds(ours, peer, 3 * ROUNDS)


def at_the_working_set():
    """mem's default working set (from the caches), and both peers at it.

    Ours picks its size; the chase reference and likwid-bench load_avx are
    then run at exactly that many bytes, on the same CPU(s), alternating
    round by round.
    """
    first = ours_json(["mem", "latency", "-C", "0", "--samples", "3"])["latency_ns"]
    chase_bytes = first["working_set_bytes"]
    first_bw = ours_json(["mem", "bandwidth", "--threads", "2", "--samples", "3"])["bandwidth_bytes_per_sec"]
    bw_bytes = first_bw["working_set_bytes"]

    def ours_latency():
        doc = ours_json(["mem", "latency", "-C", "0", "--samples", "11"])
        return doc["latency_ns"]["matrix"][0][0]["median"]

    def peer_latency():
        return float(run([CHASE_PEER, str(chase_bytes), "0", "11", "20"]).split()[0])

    def ours_bandwidth():
        doc = ours_json(["mem", "bandwidth", "--threads", "2", "--samples", "11"])
        return doc["bandwidth_bytes_per_sec"]["matrix"][0][0]["median"]

    def peer_bandwidth():
        out = run(["likwid-bench", "-t", "load_avx", "-w", f"S0:{bw_bytes // 1000}kB:2"])
        return float(re.search(r"MByte/s:\s+([\d.]+)", out).group(1)) * 1e6

    def sized(m):
        f = m["sized_from"]
        return f"{m['working_set_bytes'] / 2**20:.0f} MiB, {f['factor']}× the {f['bytes'] / 2**20:.1f} MiB {f['cache']} of CPUs {f['cpus']}" if f else f"{m['working_set_bytes'] / 2**20:.0f} MiB ({m['chosen_by']})"

    rows = [
        row(f"idle latency, CPU 0, mem's own working set ({sized(first)}), vs bench/chase.c at the same bytes",
            *rounds(ours_latency, peer_latency), "ns", goal="0.95–1.05"),
        row(f"read bandwidth, 2 threads, mem's own working set ({sized(first_bw)}), vs likwid-bench load_avx at the same bytes",
            *rounds(ours_bandwidth, peer_bandwidth), "GB/s", 1e9, "0.95–1.05"),
    ]
    return first, first_bw, rows


def whole_matrix_seconds():
    start = time.monotonic()
    run([OURS, "mem", "--json"])
    return time.monotonic() - start


def machine():
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    nodes = run(["sh", "-c", "ls -d /sys/devices/system/node/node* | wc -l"]).strip()
    virt = run(["sh", "-c", "systemd-detect-virt 2>/dev/null || echo unknown"]).strip()
    thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip()
    return f"{model}, {os.cpu_count()} CPUs, {nodes} NUMA node(s), virtualisation: {virt}, kernel {platform.release()}, THP: {thp}"


def main():
    print("# Side-by-side benchmark results\n")
    print(f"Machine: {machine()}.  ")
    print(f"Load average at start: {open('/proc/loadavg').read().split()[0]} (anything above 0 on 2 CPUs competes with the runs).  ")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Rounds per comparison: {ROUNDS}, alternating ours/peer.\n")
    print("Figures are the median of per-round medians; brackets give the range of round medians.\n")
    print("| comparison | numasleuth | peer | unit | ours/peer | goal |")
    print("|---|---|---|---|---|---|")
    if os.environ.get("ONLY_WORKING_SET"):
        for line in at_the_working_set()[2]:
            print(line)
        return
    for line in at_the_working_set()[2]:
        print(line)
    for size, label in [(1 << 20, "1 MiB (L3)"), (16 << 20, "16 MiB (L3)"), (256 << 20, "256 MiB (DRAM)")]:
        mine, theirs = latency(size)
        print(row(f"idle latency, CPU 0, {label}, vs bench/chase.c", mine, theirs, "ns", goal="within ±3%"))
    for mix, pages in [("read", "thp"), ("read", "small"), ("2:1", "thp"), ("1:1", "thp"), ("write", "thp")]:
        mine, theirs = bandwidth(mix, pages)
        what = f"bandwidth {mix}, {pages} pages, 2 threads, 512 MB, vs likwid-bench {LIKWID_KERNEL[mix]}"
        print(row(what, mine, theirs, "GB/s", 1e9, "≥ 0.97"))
    mine, theirs = c2c()
    what = "c2c CPU 0↔1, CAS, 1000 round trips × 300 samples, vs core-to-core-latency -b 1 (mean)"
    print(row(f"{what}: our median", [m for m, _ in mine], theirs, "ns", goal="within ±5%"))
    print(row(f"{what}: our mean", [m for _, m in mine], theirs, "ns", goal="within ±5%"))
    seconds = whole_matrix_seconds()
    print(f"\nLoad average at end: {open('/proc/loadavg').read().split()[0]}.")
    print(f"\nWhole default `numasleuth mem` (latency and bandwidth matrix, this 1-node machine): {seconds:.1f} s (goal for 2 nodes: ≤ 15 s).")


if __name__ == "__main__":
    main()
