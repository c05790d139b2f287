#!/usr/bin/env bash
# `numasleuth inspect PID --json` against `numastat -p PID` (Debian's
# numactl) on one synthetic process with 50,000 mappings, in one run on one
# machine. A benchmark, not a test: it prints times and their ratio.
#
#   bench/inspect-50k.sh            # 50,000 mappings, 7 rounds each
#   MAPPINGS=200000 ROUNDS=3 bench/inspect-50k.sh
set -euo pipefail
cd "$(dirname "$0")/.."

MAPPINGS="${MAPPINGS:-50000}"
ROUNDS="${ROUNDS:-7}"
if ! command -v numastat >/dev/null; then
    (apt-get update -qq && apt-get install -y -qq numactl) >&2
fi
out="$PWD/target/bench-peers"
mkdir -p "$out"
gcc -O2 -o "$out/many-maps" bench/many-maps.c
cargo build --quiet --release -p numasleuth >&2
numasleuth="$PWD/target/release/numasleuth"

"$out/many-maps" "$MAPPINGS" > "$out/many-maps.pid" &
maps_pid=$!
trap 'kill "$maps_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$out/many-maps.pid" ] && break; sleep 0.1; done
pid=$(cat "$out/many-maps.pid")
count=$(wc -l < "/proc/$pid/maps")

# Median wall time of ROUNDS runs of a command, in milliseconds.
median_ms() {
    local times=()
    for _ in $(seq "$ROUNDS"); do
        local start end
        start=$(date +%s%N)
        "$@" > /dev/null
        end=$(date +%s%N)
        times+=($(( (end - start) / 1000000 )))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

ours=$(median_ms "$numasleuth" inspect "$pid" --json)
peer=$(median_ms numastat -p "$pid")
rss_kb=$( { /usr/bin/time -f '%M' "$numasleuth" inspect "$pid" --json > /dev/null; } 2>&1 | tail -1 || echo '?')
echo "machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "process: $count mappings (pid $pid), $ROUNDS rounds, median wall time"
echo "numasleuth inspect --json: ${ours} ms (max RSS ${rss_kb} KiB)"
echo "numastat -p:               ${peer} ms"
awk -v a="$ours" -v b="$peer" 'BEGIN { if (b > 0) printf "ratio numasleuth/numastat: %.2f\n", a / b }'
