#!/usr/bin/env bash
# The commands issue 23 asks to see on a real server, timed, with every
# document kept: topo, mem --quick, mem --quick at a 2 GiB working set (the
# figure --quick must come within 10% of), mem latency --sizes 16M..2G,
# c2c --quick, doctor --measure, and bench/chase.c at mem's own working
# set when a built chase is given.
#
#   bench/server-check.sh [NUMASLEUTH] [OUTDIR] [CHASE]
#
# Needs nothing but bash, coreutils and the numasleuth binary (a static one
# from scripts/build-static.sh copies anywhere). Each step is cut at
# STEP_TIMEOUT seconds (default 240); `times.tsv` holds name, exit status
# and wall milliseconds. Not a test: it only records.
set -uo pipefail

bin=${1:-numasleuth}
out=${2:-server-check}
chase=${3:-}
mkdir -p "$out"
: > "$out/times.tsv"

step() {
    local name=$1
    shift
    local start end rc
    start=$(date +%s%N)
    timeout "${STEP_TIMEOUT:-240}" "$@" > "$out/$name.out" 2> "$out/$name.err"
    rc=$?
    end=$(date +%s%N)
    printf '%s\t%s\t%s\n' "$name" "$rc" "$(((end - start) / 1000000))" | tee -a "$out/times.tsv"
}

{
    uname -a
    nproc
    grep -m1 'model name' /proc/cpuinfo
    grep . /sys/devices/system/cpu/cpu0/cache/index*/size /sys/devices/system/cpu/cpu0/cache/index*/shared_cpu_list 2>/dev/null
    cat /proc/loadavg
} > "$out/machine.txt"

# Most wanted first: a lent server may be taken back part-way.
step version "$bin" --version
step topo "$bin" topo --json
step doctor "$bin" doctor --json
step mem-quick "$bin" mem --quick --json
step mem-quick-2g "$bin" mem --quick --size 2G --json
step c2c-quick "$bin" c2c --quick --json
step doctor-measure "$bin" doctor --measure --json
step sweep "$bin" mem latency --sizes 16M..2G --quick --json
step mem "$bin" mem --json
if [ -n "$chase" ]; then
    # The chase reference at the working set mem chose for its latency.
    # The chase reference at the working set mem chose for its latency
    # matrix, on the first CPU this process may use, and ours beside it.
    ws=$(tr -d ' \n' < "$out/mem-quick.out" | grep -o '"working_set_bytes":[0-9]*' | head -1 | grep -o '[0-9]*$')
    cpu=$(grep Cpus_allowed_list /proc/self/status | grep -o '[0-9]*' | head -1)
    if [ -n "$ws" ]; then
        for round in 1 2 3; do
            step "chase-$round" "$chase" "$ws" "$cpu" 11 20
            step "ours-at-chase-$round" "$bin" mem latency --sizes "$ws" -C "$cpu" --samples 11 --json
        done
    fi
fi
cat /proc/loadavg >> "$out/machine.txt"
