#!/usr/bin/env bash
# Side-by-side benchmarks: numasleuth against peers installed from the
# registries in this same run, on the same CPUs, sizes and page kind.
#
#   bench/run.sh            # full run (~3 minutes on a 2-core VM)
#   ROUNDS=1 bench/run.sh   # quicker, less trustworthy
#
# Peers: core-to-core-latency (crates.io) for c2c, likwid-bench (Debian's
# likwid) for bandwidth, and bench/chase.c, a small independent pointer chase
# built with gcc, as the trusted reference for idle latency.
# Prints a Markdown report on stdout; commit it as bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

PEERS="${PEERS:-$PWD/target/bench-peers}"
mkdir -p "$PEERS"
if ! [ -x "$PEERS/bin/core-to-core-latency" ]; then
    cargo install --quiet core-to-core-latency --root "$PEERS" >&2
fi
if ! command -v likwid-bench >/dev/null; then
    (apt-get update -qq && apt-get install -y -qq likwid) >&2
fi
gcc -O2 -o "$PEERS/chase" bench/chase.c
cargo build --quiet --release -p numasleuth >&2

export NUMASLEUTH="$PWD/target/release/numasleuth"
export C2C_PEER="$PEERS/bin/core-to-core-latency"
export CHASE_PEER="$PEERS/chase"
exec python3 bench/compare.py
