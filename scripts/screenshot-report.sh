#!/usr/bin/env bash
# Renders `doctor --html` for a fixture (default: the 3-node QEMU guest with
# its NIC IRQ off-node) and screenshots it in headless Chromium, so a person
# can look at the page exactly as a browser draws it.
#   scripts/screenshot-report.sh [FIXTURE_DIR] [OUT.png]
set -euo pipefail
cd "$(dirname "$0")/.."
fixture=${1:-tests/fixtures/qemu-three-nodes-nic}
out=${2:-docs/doctor-report.png}
command -v chromium >/dev/null || apt-get install -y -qq chromium >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=${NUMASLEUTH_BIN:-}
if [ -z "$bin" ]; then cargo build -q -p numasleuth; bin=target/debug/numasleuth; fi
"$bin" --root "$fixture" doctor --html "$work/report.html" >/dev/null
# The flags keep Chromium off the network (this machine has none) and
# away from any profile.
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --hide-scrollbars --window-size=1200,2200 \
    --screenshot="$PWD/$out" "file://$work/report.html" 2>/dev/null
echo "$out"
