"""Times two commands side by side, interleaved, and prints ours/peer.

    python3 bench/pair.py --ours 'numasleuth meminfo' --peer 'numastat -m'

Each round runs a batch of OURS, then a batch of PEER (BATCH runs each), so
drift on a shared VM hits both alike. Per run it takes the wall time and
the child's CPU time (user + system, from wait4's rusage). Each figure is
the median over rounds of the per-round median; the spread is the p10-p90
range of the per-round ratios. A benchmark, not a test: it only reports.
"""

import argparse
import os
import shlex
import statistics
import subprocess
import time


def one(argv):
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall_ms = (time.perf_counter() - start) * 1e3
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"pair: {shlex.join(argv)} failed ({status})")
    return wall_ms, (usage.ru_utime + usage.ru_stime) * 1e3


def batch(argv, count):
    runs = [one(argv) for _ in range(count)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ours", required=True)
    parser.add_argument("--peer", required=True)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--batch", type=int, default=20)
    args = parser.parse_args()
    ours, peer = shlex.split(args.ours), shlex.split(args.peer)
    one(ours), one(peer)  # warm the page cache and the dentries
    rounds = [(batch(ours, args.batch), batch(peer, args.batch)) for _ in range(args.rounds)]
    print(f"machine: {os.cpu_count()} CPUs, {os.uname().release}; {args.rounds} rounds of {args.batch} runs each")
    for index, what in ((0, "wall"), (1, "CPU")):
        mine = [r[0][index] for r in rounds]
        theirs = [r[1][index] for r in rounds]
        ratios = [m / t for m, t in zip(mine, theirs) if t > 0]
        print(
            f"{what:>4}: {args.ours}: {statistics.median(mine):.2f} ms, {args.peer}: {statistics.median(theirs):.2f} ms; "
            f"ratio {statistics.median(ratios):.2f} (p10-p90 {pct(ratios, 0.1):.2f}-{pct(ratios, 0.9):.2f})"
        )


if __name__ == "__main__":
    main()
