#!/usr/bin/env bash
# Build a statically linked numasleuth for the QEMU test bed.
#
# Why static: the guests boot a bare busybox initramfs without a libc, and the
# musl target is not installable here, so glibc's crt-static is the way.
# The same binary also runs on the host, where the tests use it to replay
# each guest's snapshot with --root.
#
# Prints the binary's absolute path on stdout, so
#   export NUMASLEUTH_STATIC_BIN="$(scripts/build-static.sh)"
# works. Cargo's progress goes to stderr.
#
#   scripts/build-static.sh [--profile NAME]
# builds with cargo's profile NAME instead of `release`; CI gives its guests
# `--profile guest` (Cargo.toml: release without ThinLTO, a quicker build).
set -euo pipefail

usage="usage: scripts/build-static.sh [--profile NAME]"
profile=release
case "$#:${1:-}" in
    0:) ;;
    2:--profile) profile=$2 ;;
    1:--profile=*) profile=${1#*=} ;;
    *) echo "build-static: unexpected arguments: $* ($usage)" >&2; exit 2 ;;
esac
[ -n "$profile" ] || { echo "build-static: --profile needs a name ($usage)" >&2; exit 2; }

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

target=x86_64-unknown-linux-gnu
# An explicit --target keeps these RUSTFLAGS away from build scripts and proc
# macros, which cannot be linked statically, and gives the static build its
# own directory so it does not invalidate the normal debug build.
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
    cargo build --profile "$profile" --target "$target" -p numasleuth >&2

target_dir="${CARGO_TARGET_DIR:-$repo_root/target}"
case "$target_dir" in /*) ;; *) target_dir="$repo_root/$target_dir" ;; esac
out_dir=$profile
[ "$profile" != dev ] || out_dir=debug # cargo's one exception
bin="$target_dir/$target/$out_dir/numasleuth"
[ -x "$bin" ] || { echo "build-static: $bin was not built" >&2; exit 1; }
echo "$bin"
