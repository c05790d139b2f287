#!/usr/bin/env bash
# Runs the three contention-lab experiments with enough samples to judge
# their spread, and keeps the text and SVG of each under bench/lab/ (add
# --json by hand for the raw samples).
#
# Before each experiment it waits (up to QUIET_WAIT_SECS, default 600) for
# the CPUs to be at least 95% idle over 3 s, and records how idle they were:
# on a shared 2-core VM other work is the largest source of noise. The
# tables' "CPU share" column then shows whether the run kept its CPUs.
#
#   bench/lab-run.sh [extra numasleuth lab options, e.g. --samples 21]
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -p numasleuth >&2
bin=target/release/numasleuth
out=bench/lab
mkdir -p "$out"

# Percent of CPU time idle over the next 3 s, from /proc/stat.
idle_percent() {
    local u n s i w q sq st t1 i1
    read -r _ u n s i w q sq st _ </proc/stat
    t1=$((u + n + s + i + w + q + sq + st)) i1=$((i + w))
    sleep 3
    read -r _ u n s i w q sq st _ </proc/stat
    echo $((100 * (i + w - i1) / (u + n + s + i + w + q + sq + st - t1)))
}

wait_quiet() {
    local deadline=$(($(date +%s) + ${QUIET_WAIT_SECS:-600})) idle
    while :; do
        idle=$(idle_percent)
        if [ "$idle" -ge 95 ] || [ "$(date +%s)" -ge "$deadline" ]; then
            echo "$idle"
            return
        fi
    done
}

samples=(--samples 15 --sample-ms 40)
for experiment in false-sharing locks remote-global; do
    name=${experiment//-/_}
    idle=$(wait_quiet)
    {
        echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r); CPUs ${idle}% idle over the 3 s before"
        echo "\$ numasleuth lab $experiment ${samples[*]} $* --svg $out/$name.svg"
    } >"$out/$name.txt"
    "$bin" lab "$experiment" "${samples[@]}" "$@" --svg "$out/$name.svg" >>"$out/$name.txt"
    echo "$out/$name.txt" >&2
done
