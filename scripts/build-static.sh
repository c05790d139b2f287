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
#   scripts/build-static.sh [--target x86_64|aarch64] [--profile NAME]
# --profile NAME builds with cargo's profile NAME instead of `release`; CI
# gives its guests `--profile guest` (Cargo.toml: release without ThinLTO, a
# quicker build).
# --target aarch64 cross-builds for 64-bit Arm (the default is x86_64). It
# uses Debian's compiler, not rustup's: bookworm-security's rustc-web (1.96,
# /usr/bin/rustc) has an aarch64 standard library in
# libstd-rust-web-dev:arm64, which rustup's toolchain here lacks; cargo
# stays rustup's (rustup's rustc stays first on PATH, so RUSTC names
# Debian's), and aarch64-linux-gnu-gcc links against libc6-dev-arm64-cross's
# static glibc. scripts/test-all installs all four.
set -euo pipefail

usage="usage: scripts/build-static.sh [--target x86_64|aarch64] [--profile NAME]"
profile=release
arch=x86_64
given=" "
while [ $# -gt 0 ]; do
    option=${1%%=*}
    case "$option" in
    --profile | --target)
        case "$given" in *" $option "*) echo "build-static: $option given twice ($usage)" >&2; exit 2 ;; esac
        given="$given$option "
        if [ "$1" != "$option" ]; then
            value=${1#*=}
            shift
        else
            [ $# -ge 2 ] || { echo "build-static: $option needs a value ($usage)" >&2; exit 2; }
            value=$2
            shift 2
        fi
        if [ "$option" = --profile ]; then profile=$value; else arch=$value; fi
        ;;
    *) echo "build-static: unexpected arguments: $* ($usage)" >&2; exit 2 ;;
    esac
done
[ -n "$profile" ] || { echo "build-static: --profile needs a name ($usage)" >&2; exit 2; }

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

case "$arch" in
x86_64) target=x86_64-unknown-linux-gnu ;;
aarch64)
    target=aarch64-unknown-linux-gnu
    missing=()
    if [ -x /usr/bin/rustc ]; then
        libdir=$(/usr/bin/rustc --print target-libdir --target "$target" 2>/dev/null || true)
        compgen -G "${libdir:-/nonexistent}/libstd-*.rlib" >/dev/null || missing+=("the aarch64 std")
    else
        missing+=(/usr/bin/rustc "the aarch64 std")
    fi
    command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing+=(aarch64-linux-gnu-gcc)
    [ -s /usr/aarch64-linux-gnu/lib/libc.a ] || missing+=(/usr/aarch64-linux-gnu/lib/libc.a)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "build-static: --target aarch64 needs Debian's rustc-web libstd-rust-web-dev:arm64 (bookworm-security)" \
            "gcc-aarch64-linux-gnu libc6-dev-arm64-cross (dpkg --add-architecture arm64; apt-get install them;" \
            "scripts/test-all does): missing $(printf '%s, ' "${missing[@]}" | sed 's/, $//')" >&2
        exit 1
    fi
    export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
    ;;
*) echo "build-static: --target is x86_64 or aarch64, not '$arch' ($usage)" >&2; exit 2 ;;
esac

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
