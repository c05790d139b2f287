#!/usr/bin/env bash
# The two cost goals of issue 11, side by side in one run on one machine:
#
#   inspect -p PID --json  vs  cat /proc/PID/maps /proc/PID/numa_maps  (≤ 1.1×)
#   inspect -p PID --json  vs  numastat -p PID                         (≤ 1.0×)
#   topo                   vs  numactl -H                              (≤ 2×)
#
# on a synthetic process with MAPPINGS mappings (bench/many-maps.c). Each
# round runs every command BATCH times back to back and times the batch, so
# drift on a shared host hits all of them alike; the figure per command is
# the median of ROUNDS batch means, with the range of the rounds. A
# benchmark, not a test: it prints numbers and ratios, it never fails on one.
#
#   bench/inspect-topo.sh                        # 50,000 mappings, 9 rounds
#   MAPPINGS=200000 ROUNDS=5 bench/inspect-topo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

MAPPINGS="${MAPPINGS:-50000}"
ROUNDS="${ROUNDS:-9}"
BATCH_INSPECT="${BATCH_INSPECT:-5}"
BATCH_TOPO="${BATCH_TOPO:-50}"
if ! command -v numastat >/dev/null || ! command -v numactl >/dev/null; then
    (apt-get update -qq && apt-get install -y -qq numactl) >&2
fi
out="$PWD/target/bench-peers"
mkdir -p "$out"
gcc -O2 -o "$out/many-maps" bench/many-maps.c
if [ -z "${NUMASLEUTH:-}" ]; then
    cargo build --quiet --release -p numasleuth >&2
fi
numasleuth="${NUMASLEUTH:-$PWD/target/release/numasleuth}"

"$out/many-maps" "$MAPPINGS" > "$out/many-maps.pid" &
maps_pid=$!
trap 'kill "$maps_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$out/many-maps.pid" ] && break; sleep 0.1; done
pid=$(cat "$out/many-maps.pid")
count=$(wc -l < "/proc/$pid/maps")

# Mean wall time of one run of a command over a batch, in microseconds.
batch_us() {
    local n=$1 start end
    shift
    start=${EPOCHREALTIME/./}
    for _ in $(seq "$n"); do "$@" > /dev/null; done
    end=${EPOCHREALTIME/./}
    echo $(( (end - start) / n ))
}

declare -A samples
names=(inspect cat numastat topo numactl)
for _ in $(seq "$ROUNDS"); do
    samples[inspect]+=" $(batch_us "$BATCH_INSPECT" "$numasleuth" inspect -p "$pid" --json)"
    samples[cat]+=" $(batch_us "$BATCH_INSPECT" cat "/proc/$pid/maps" "/proc/$pid/numa_maps")"
    samples[numastat]+=" $(batch_us "$BATCH_INSPECT" numastat -p "$pid")"
    samples[topo]+=" $(batch_us "$BATCH_TOPO" "$numasleuth" topo)"
    samples[numactl]+=" $(batch_us "$BATCH_TOPO" numactl -H)"
done

# "median min max" of a list of numbers.
stats() {
    tr ' ' '\n' <<< "$1" | grep . | sort -n |
        awk '{a[NR]=$1} END {print a[int((NR+1)/2)], a[1], a[NR]}'
}
declare -A median
echo "machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "process: $count mappings (pid $pid); $ROUNDS rounds of $BATCH_INSPECT (inspect, cat, numastat) and $BATCH_TOPO (topo, numactl) runs"
echo
echo "| command | median ms | range ms |"
echo "|---|---|---|"
declare -A labels=([inspect]="numasleuth inspect -p PID --json" [cat]="cat maps numa_maps" [numastat]="numastat -p PID"
    [topo]="numasleuth topo" [numactl]="numactl -H")
for name in "${names[@]}"; do
    read -r med lo hi <<< "$(stats "${samples[$name]}")"
    median[$name]=$med
    awk -v l="${labels[$name]}" -v m="$med" -v a="$lo" -v b="$hi" \
        'BEGIN { printf "| %s | %.2f | %.2f–%.2f |\n", l, m/1000, a/1000, b/1000 }'
done
echo
ratio() { awk -v a="${median[$1]}" -v b="${median[$2]}" -v g="$3" -v l="$4" \
    'BEGIN { printf "| %s | %.2f | %s |\n", l, a / b, g }'; }
echo "| ratio of medians | value | goal |"
echo "|---|---|---|"
ratio inspect cat "≤ 1.10" "inspect --json / cat maps numa_maps"
ratio inspect numastat "≤ 1.00" "inspect --json / numastat -p"
ratio topo numactl "≤ 2.00" "topo / numactl -H"
