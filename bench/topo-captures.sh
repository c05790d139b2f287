#!/usr/bin/env bash
# topo and doctor against lstopo on real machines' captures (issue 22):
#
#   numasleuth --root CAPTURE topo    vs  lstopo-no-graphics --input CAPTURE   (goal ≤ 0.5×)
#   numasleuth --root CAPTURE doctor  vs  lstopo-no-graphics --input CAPTURE   (goal ≤ 0.5×)
#
# on hwloc's own test captures (../shared/fixtures/hwloc, or HWLOC_CAPTURES),
# from 16 to 256 CPUs, unpacked once into a temporary directory. Each round
# runs every command BATCH times back to back and times the batch, so drift
# on a shared host hits all of them alike; the figure is the median of
# ROUNDS batch means, with the range. CPU time (user + system, from
# `perf stat` when it is installed) is printed beside wall time, since on a
# busy host it moves less. A benchmark, not a test: it never fails on a
# number.
#
#   bench/topo-captures.sh                      # 4 captures, 7 rounds of 20
#   ROUNDS=11 BATCH=40 bench/topo-captures.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS="${ROUNDS:-7}"
BATCH="${BATCH:-20}"
captures_dir="${HWLOC_CAPTURES:-../shared/fixtures/hwloc}"
captures=(16em64t-4s2c2t 20em64t-hybrid-1p6c2t+2ca4co1t 128arm-2pa2n8cluster4co 256ppc-8n8s4t)
[ -d "$captures_dir" ] || { echo "no hwloc captures at $captures_dir (set HWLOC_CAPTURES)" >&2; exit 2; }
command -v lstopo-no-graphics >/dev/null || (apt-get update -qq && apt-get install -y -qq hwloc) >&2
if [ -z "${NUMASLEUTH:-}" ]; then
    cargo build --quiet --release -p numasleuth >&2
fi
numasleuth="${NUMASLEUTH:-$PWD/target/release/numasleuth}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for name in "${captures[@]}"; do
    tar --no-same-owner -C "$scratch" -xjf "$captures_dir/$name.tar.bz2"
done

# Mean wall time of one run over a batch, in microseconds.
batch_us() {
    local n=$1 start end
    shift
    start=${EPOCHREALTIME/./}
    for _ in $(seq "$n"); do "$@" > /dev/null 2>&1 || true; done
    end=${EPOCHREALTIME/./}
    echo $(( (end - start) / n ))
}
# "median min max" of a list of numbers.
stats() {
    tr ' ' '\n' <<< "$1" | grep . | sort -n |
        awk '{a[NR]=$1} END {print a[int((NR+1)/2)], a[1], a[NR]}'
}
# CPU milliseconds per run (task-clock), or "-" without perf.
cpu_ms() {
    command -v perf >/dev/null || { echo -; return; }
    perf stat -x, -r "$BATCH" -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {printf "%.1f", $1}'
}

echo "machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "$ROUNDS rounds of $BATCH runs per command; $("$numasleuth" --version); $(lstopo-no-graphics --version)"
echo
echo "| capture | CPUs | topo ms (range) | doctor ms (range) | lstopo ms (range) | topo/lstopo | doctor/lstopo | CPU ms topo / doctor / lstopo |"
echo "|---|---|---|---|---|---|---|---|"
for name in "${captures[@]}"; do
    root="$scratch/$name"
    cpus=$(ls -d "$root"/sys/devices/system/cpu/cpu[0-9]* | wc -l)
    topo="" doctor="" lstopo=""
    for _ in $(seq "$ROUNDS"); do
        topo+=" $(batch_us "$BATCH" "$numasleuth" --root "$root" topo)"
        doctor+=" $(batch_us "$BATCH" "$numasleuth" --root "$root" doctor)"
        lstopo+=" $(batch_us "$BATCH" lstopo-no-graphics --input "$root")"
    done
    read -r tm tl th <<< "$(stats "$topo")"
    read -r dm dl dh <<< "$(stats "$doctor")"
    read -r lm ll lh <<< "$(stats "$lstopo")"
    cpu="$(cpu_ms "$numasleuth" --root "$root" topo) / $(cpu_ms "$numasleuth" --root "$root" doctor) / $(cpu_ms lstopo-no-graphics --input "$root")"
    awk -v n="$name" -v c="$cpus" -v tm="$tm" -v tl="$tl" -v th="$th" -v dm="$dm" -v dl="$dl" -v dh="$dh" \
        -v lm="$lm" -v ll="$ll" -v lh="$lh" -v cpu="$cpu" 'BEGIN {
        printf "| %s | %d | %.1f (%.1f–%.1f) | %.1f (%.1f–%.1f) | %.1f (%.1f–%.1f) | %.2f | %.2f | %s |\n",
            n, c, tm/1000, tl/1000, th/1000, dm/1000, dl/1000, dh/1000, lm/1000, ll/1000, lh/1000, tm/lm, dm/lm, cpu }'
done
