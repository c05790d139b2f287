#!/usr/bin/env bash
# topo and doctor against lstopo on real machines' captures (issue 22), and
# against the floor of reading the same number of files (issue 35):
#
#   numasleuth --root CAPTURE topo    vs  lstopo-no-graphics --input CAPTURE
#   numasleuth --root CAPTURE doctor  vs  lstopo-no-graphics --input CAPTURE
#   both                              vs  bench/read-floor.c   (goal ≤ 1.5×)
#   both less start-up                vs  bench/read-floor.c
#
# The floor: as many of the capture's files as `topo` opens (counted with
# strace), each opened, read once, closed and fstatat'ed, and nothing else
# (bench/read-floor.c), in CPU time; its figure is the median of its five
# rounds. The floor ratios divide CPU time (perf's task-clock) by the floor,
# or wall time where perf is missing, round by round: CPU time, start-up and
# the floor are measured again in every round, and each ratio is printed as
# the median of the rounds' ratios with their range. The floor runs inside one process, so it
# pays no start-up (exec, dynamic loading, argument parsing); the last two
# ratios take away the CPU time of `numasleuth --version`, measured in the
# same row, as an estimate of that start-up: what is left is the reading,
# modelling and printing the floor is compared with.
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
gcc -O2 bench/read-floor.c -o "$scratch/read-floor"
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
# "median (min–max)" of the rounds' ratios, or "-" without a floor.
spread() {
    if grep -qw -- - <<< "$1"; then echo -; else stats "$1" | awk '{printf "%.2f (%.2f–%.2f)", $1, $2, $3}'; fi
}
# CPU milliseconds per run (task-clock), or "-" without perf.
cpu_ms() {
    command -v perf >/dev/null || { echo -; return; }
    perf stat -x, -r "$BATCH" -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {printf "%.1f", $1}'
}

echo "machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "$ROUNDS rounds of $BATCH runs per command; $("$numasleuth" --version); $(lstopo-no-graphics --version)"
# Regular files `topo` opens in a capture (directories and the loader's own
# opens left out), or nothing without strace.
files_read() {
    command -v strace >/dev/null || return 0
    strace -f -e trace=openat -o "$scratch/strace.log" "$numasleuth" --root "$1" topo >/dev/null 2>&1 || true
    grep -v -e O_DIRECTORY -e AT_FDCWD -e '= -1' "$scratch/strace.log" | grep -c openat
}
# The floor for N files of a capture's sys tree, in ms: the median round's
# open+read+close plus fstatat.
floor_ms() {
    "$scratch/read-floor" "$1/sys" "$2" | sed -E 's/.*\(([0-9.]+) ms\).*\(([0-9.]+) ms\).*/\1 \2/' |
        awk '{print $1 + $2}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

echo
echo "| capture | CPUs | topo ms (range) | doctor ms (range) | lstopo ms (range) | topo/lstopo | doctor/lstopo | CPU ms topo / doctor / lstopo | floor ms (files) | topo/floor | doctor/floor | start-up ms | (topo − start-up)/floor | (doctor − start-up)/floor |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for name in "${captures[@]}"; do
    root="$scratch/$name"
    cpus=$(ls -d "$root"/sys/devices/system/cpu/cpu[0-9]* | wc -l)
    files=$(files_read "$root")
    topo="" doctor="" lstopo="" version="" tcs="" dcs="" lcs="" scs="" floors="" rt="" rd="" lt="" ld=""
    for _ in $(seq "$ROUNDS"); do
        version+=" $(batch_us "$BATCH" "$numasleuth" --version)"
        topo+=" $(batch_us "$BATCH" "$numasleuth" --root "$root" topo)"
        doctor+=" $(batch_us "$BATCH" "$numasleuth" --root "$root" doctor)"
        lstopo+=" $(batch_us "$BATCH" lstopo-no-graphics --input "$root")"
        # CPU time, start-up and the floor in the same round, so each
        # round's ratios compare runs made under the same load.
        sc=$(cpu_ms "$numasleuth" --version)
        tc=$(cpu_ms "$numasleuth" --root "$root" topo)
        dc=$(cpu_ms "$numasleuth" --root "$root" doctor)
        lcs+=" $(cpu_ms lstopo-no-graphics --input "$root")"
        tcs+=" $tc" dcs+=" $dc"
        # Without perf the floor ratios use this round's wall time.
        if [ "$tc" = - ]; then
            read -r sc tc dc < <(awk -v s="${version##* }" -v t="${topo##* }" -v d="${doctor##* }" \
                'BEGIN {print s/1000, t/1000, d/1000}')
        fi
        scs+=" $sc"
        floor=$( [ -n "$files" ] && floor_ms "$root" "$files" || echo 0)
        floors+=" $floor"
        read -r a b c d < <(awk -v t="$tc" -v d="$dc" -v s="$sc" -v f="$floor" 'BEGIN {
            if (f > 0) print t/f, d/f, (t-s)/f, (d-s)/f; else print "- - - -" }')
        rt+=" $a" rd+=" $b" lt+=" $c" ld+=" $d"
    done
    read -r tm tl th <<< "$(stats "$topo")"
    read -r dm dl dh <<< "$(stats "$doctor")"
    read -r lm ll lh <<< "$(stats "$lstopo")"
    cpu="$(stats "$tcs" | cut -d' ' -f1) / $(stats "$dcs" | cut -d' ' -f1) / $(stats "$lcs" | cut -d' ' -f1)"
    awk -v n="$name" -v c="$cpus" -v tm="$tm" -v tl="$tl" -v th="$th" -v dm="$dm" -v dl="$dl" -v dh="$dh" \
        -v lm="$lm" -v ll="$ll" -v lh="$lh" -v cpu="$cpu" -v f="$(stats "$floors" | cut -d' ' -f1)" -v files="${files:--}" \
        -v sc="$(stats "$scs" | cut -d' ' -f1)" -v rt="$(spread "$rt")" -v rd="$(spread "$rd")" \
        -v lt="$(spread "$lt")" -v ld="$(spread "$ld")" 'BEGIN {
        printf "| %s | %d | %.1f (%.1f–%.1f) | %.1f (%.1f–%.1f) | %.1f (%.1f–%.1f) | %.2f | %.2f | %s | %.2f (%s) | %s | %s | %.1f | %s | %s |\n",
            n, c, tm/1000, tl/1000, th/1000, dm/1000, dl/1000, dh/1000, lm/1000, ll/1000, lh/1000, tm/lm, dm/lm, cpu, f, files, rt, rd, sc, lt, ld }'
done
