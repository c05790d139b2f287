#!/usr/bin/env bash
# Prepare everything the QEMU test bed (crates/testbed) needs besides the
# static numasleuth binary: qemu and busybox on the host, plus a Debian
# generic kernel unpacked into .qemu-cache/.
#
# Why the *generic* Debian kernel and not -cloud: only the generic flavour
# ships e1000.ko, which the NIC-locality guest needs.
#
# Layout written (NUMASLEUTH_QEMU_KERNEL_DIR points at .qemu-cache/current):
#   .qemu-cache/<package>/            dpkg -x of the kernel .deb
#   .qemu-cache/current/vmlinuz       the kernel image
#   .qemu-cache/current/e1000.ko      uncompressed (busybox insmod may lack xz)
#   .qemu-cache/current/busybox       static busybox for the initramfs
#   .qemu-cache/current/kernel-release   e.g. 6.1.0-56-amd64
#   .qemu-cache/env.sh                `export NUMASLEUTH_QEMU_KERNEL_DIR=...`
#
# Idempotent: when .qemu-cache/current is complete it touches neither apt nor
# the network. Set NUMASLEUTH_QEMU_REFRESH=1 to look for a newer kernel.
# Prints the export line on stdout (progress goes to stderr), so
#   eval "$(scripts/qemu-kernel.sh)"
# sets up the current shell.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${NUMASLEUTH_QEMU_CACHE:-$repo_root/.qemu-cache}"
current="$cache/current"

log() { echo "qemu-kernel: $*" >&2; }

# apt-get update is slow, so run it at most once and only when a lookup or
# install failed with the lists we have.
apt_updated=0
apt_update_once() {
    if [ "$apt_updated" = 0 ]; then
        log "running apt-get update"
        apt-get update -qq >&2
        apt_updated=1
    fi
}

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

ensure_host_packages() {
    local missing=()
    command -v qemu-system-x86_64 >/dev/null 2>&1 || missing+=(qemu-system-x86)
    # The Debian busybox-static package installs /bin/busybox statically linked;
    # a dynamic busybox would not run inside the initramfs.
    if ! dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "install ok installed"; then
        missing+=(busybox-static)
    fi
    command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
    # Host tests that never skip: the victim program (gcc, strip) and runs
    # as another user (setpriv).
    command -v gcc >/dev/null 2>&1 || missing+=(gcc)
    command -v strip >/dev/null 2>&1 || missing+=(binutils)
    command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
    # `top` is tested in a real terminal: a detached tmux session.
    command -v tmux >/dev/null 2>&1 || missing+=(tmux)
    [ ${#missing[@]} = 0 ] && return 0
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! as_root apt-get install -y -qq "${missing[@]}" >&2; then
        apt_update_once
        as_root apt-get install -y -qq "${missing[@]}" >&2
    fi
}

# Newest linux-image-6.1.0-N-amd64 (generic, signed) known to apt.
newest_kernel_package() {
    apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null |
        awk '{print $1}' | sort -V | tail -n 1
}

cache_complete() {
    [ -s "$current/vmlinuz" ] && [ -s "$current/e1000.ko" ] &&
        [ -x "$current/busybox" ] && [ -s "$current/kernel-release" ]
}

write_env() {
    local line="export NUMASLEUTH_QEMU_KERNEL_DIR=$current"
    echo "$line" >"$cache/env.sh"
    log "kernel:   $current/vmlinuz -> $(readlink -f "$current/vmlinuz")"
    log "e1000.ko: $current/e1000.ko (from $(cat "$current/e1000.source"))"
    log "busybox:  $current/busybox"
    echo "$line"
}

ensure_host_packages

if cache_complete && [ "${NUMASLEUTH_QEMU_REFRESH:-0}" != 1 ]; then
    log "cached ($(cat "$current/kernel-release"))"
    write_env
    exit 0
fi

mkdir -p "$cache"
pkg="$(newest_kernel_package)"
if [ -z "$pkg" ]; then
    apt_update_once
    pkg="$(newest_kernel_package)"
fi
[ -n "$pkg" ] || { log "no linux-image-6.1.0-*-amd64 package known to apt"; exit 1; }
log "kernel package: $pkg"

unpacked="$cache/$pkg"
if [ ! -d "$unpacked/boot" ]; then
    tmp="$(mktemp -d "$cache/download.XXXXXX")"
    # apt-get download writes into the working directory; it runs as the
    # _apt sandbox user when possible, which needs a directory it may write.
    chmod 0777 "$tmp"
    if ! (cd "$tmp" && apt-get download -qq "$pkg" >&2); then
        apt_update_once
        (cd "$tmp" && apt-get download -qq "$pkg" >&2)
    fi
    rm -rf "$unpacked.partial"
    dpkg -x "$tmp"/"$pkg"_*.deb "$unpacked.partial"
    mv "$unpacked.partial" "$unpacked"
    rm -rf "$tmp"
fi

release="${pkg#linux-image-}"
vmlinuz="$unpacked/boot/vmlinuz-$release"
[ -s "$vmlinuz" ] || { log "missing $vmlinuz"; exit 1; }
e1000_src="$(find "$unpacked/lib/modules/$release" -name 'e1000.ko*' -path '*/intel/e1000/*' | head -n 1)"
[ -n "$e1000_src" ] || { log "e1000.ko not found in $pkg"; exit 1; }

rm -rf "$current.partial"
mkdir -p "$current.partial"
# Relative, so the cache survives moving the checkout.
ln -s "../$pkg/boot/vmlinuz-$release" "$current.partial/vmlinuz"
case "$e1000_src" in
*.xz) xz -dc "$e1000_src" >"$current.partial/e1000.ko" ;;
*.zst) zstd -dc "$e1000_src" >"$current.partial/e1000.ko" ;;
*.gz) gzip -dc "$e1000_src" >"$current.partial/e1000.ko" ;;
*) cp "$e1000_src" "$current.partial/e1000.ko" ;;
esac
echo "$e1000_src" >"$current.partial/e1000.source"
cp /bin/busybox "$current.partial/busybox"
echo "$release" >"$current.partial/kernel-release"
rm -rf "$current"
mv "$current.partial" "$current"
write_env
