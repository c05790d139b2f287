#!/usr/bin/env python3
"""Writes tests/fixtures/zone-reclaim-incident: the machine of the zone-reclaim
write-up (../shared/seeds/003_*.txt), rebuilt as a kernel-file tree.

From the write-up: 2 nodes, 32 CPUs (even on node 0, odd on node 1), SLIT
10/20, node sizes 65490/65536 MB with 1009/678 MB free, and node 1's Normal
zone at pages free 174188, min 131132, low 163915, high 196698, spanned
16777216, present 16547840. Everything else (node 0's zones, the sysctls) is
reconstructed to be consistent with those numbers and is marked as such in
the fixture's README. Run from the repository root; it replaces the tree.
"""
import os
import shutil

OUT = "tests/fixtures/zone-reclaim-incident"
shutil.rmtree(OUT, ignore_errors=True)


def put(path, text):
    full = os.path.join(OUT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


node_cpus = {0: list(range(0, 32, 2)), 1: list(range(1, 32, 2))}
node_mb = {0: (65490, 1009), 1: (65536, 678)}
base = "sys/devices/system/node"
for state in ["online", "possible", "has_cpu", "has_memory", "has_normal_memory"]:
    put(f"{base}/{state}", "0-1\n")
for node, cpus in node_cpus.items():
    put(f"{base}/node{node}/cpulist", ",".join(map(str, cpus)) + "\n")
    total_mb, free_mb = node_mb[node]
    put(f"{base}/node{node}/meminfo",
        f"Node {node} MemTotal: {total_mb * 1024} kB\nNode {node} MemFree: {free_mb * 1024} kB\n")
    put(f"{base}/node{node}/distance", "10 20\n" if node == 0 else "20 10\n")
cpu = "sys/devices/system/cpu"
for state in ["online", "present", "possible"]:
    put(f"{cpu}/{state}", "0-31\n")
for c in range(32):
    put(f"{cpu}/cpu{c}/topology/physical_package_id", f"{c % 2}\n")
    put(f"{cpu}/cpu{c}/topology/core_id", f"{c // 2}\n")
    put(f"{cpu}/cpu{c}/topology/thread_siblings_list", f"{c}\n")


def zone(node, name, free, low_min_high, spanned, present, managed):
    lo_min, lo_low, lo_high = low_min_high
    return (f"Node {node}, zone {name:>8}\n  pages free     {free}\n        min      {lo_min}\n"
            f"        low      {lo_low}\n        high     {lo_high}\n        spanned  {spanned}\n"
            f"        present  {present}\n        managed  {managed}\n        protection: (0, 0, 0, 0)\n")


put("proc/zoneinfo",
    zone(0, "DMA", 3977, (2, 2, 3), 4095, 3998, 3977)
    + zone(0, "DMA32", 8000, (496, 620, 744), 1044480, 491380, 491380)
    + zone(0, "Normal", 250000, (130000, 162500, 195000), 16252928, 16252928, 16000000)  # reconstructed
    + zone(1, "Normal", 174188, (131132, 163915, 196698), 16777216, 16547840, 16547840))  # from the write-up
put("proc/meminfo", f"MemTotal: {(65490 + 65536) * 1024} kB\nMemFree: {(1009 + 678) * 1024} kB\n")
put("proc/sys/vm/min_free_kbytes", "1048576\n")
put("proc/sys/vm/zone_reclaim_mode", "0\n")
put("proc/sys/vm/watermark_scale_factor", "10\n")
put("proc/sys/kernel/numa_balancing", "0\n")
put("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n")
put("sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never\n")
put("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n")
put("proc/cmdline", "ro quiet\n")
put("proc/vmstat", "numa_hit 1000000\nnuma_miss 52000\nnuma_foreign 52000\nallocstall_normal 310\n")
put("proc/interrupts", "  " + " ".join(f"CPU{c}" for c in range(32)) + "\n")
put("proc/self/status", "Cpus_allowed_list:\t0-31\nMems_allowed_list:\t0-1\n")
put("README.md", __doc__)
