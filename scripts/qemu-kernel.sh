#!/usr/bin/env bash
# Prepare everything the QEMU test bed (crates/testbed) needs besides the
# static numasleuth binaries: qemu (x86 and arm) and busybox on the host,
# the arm64 kernels and busybox for the aarch64 guests (see "arm64" below),
# plus two Debian x86 generic kernels unpacked into .qemu-cache/:
#   - 6.1 (bookworm, from the host's own apt lists), the kernel most guests
#     boot;
#   - 6.12 (trixie), for the guests that need DAMON (CONFIG_DAMON_VADDR,
#     _PADDR and _SYSFS are `y` there, absent from 6.1) and for a few
#     guests that run on both kernels, so the migrate and tracepoint
#     layouts are exercised on two kernel versions. The host's apt sources
#     are not touched for it: trixie is looked up in a private apt state
#     directory (.qemu-cache/apt-trixie) with Debian's own mirror and
#     archive key.
#
# Why the *generic* Debian kernel and not -cloud: only the generic flavour
# ships e1000.ko, which the NIC-locality guest needs.
#
# Layout written (NUMASLEUTH_QEMU_KERNEL_DIR points at .qemu-cache/current,
# NUMASLEUTH_QEMU_KERNEL_612_DIR at .qemu-cache/current-6.12):
#   .qemu-cache/<package>/            dpkg -x of the kernel .deb
#   .qemu-cache/current/vmlinuz       the kernel image
#   .qemu-cache/current/vmlinux       the same kernel uncompressed, for
#                                     QEMU's PVH boot (when it has the note)
#   .qemu-cache/current/e1000.ko      uncompressed (busybox insmod may lack xz)
#   .qemu-cache/current/busybox       static busybox for the initramfs
#   .qemu-cache/current/kernel-release   e.g. 6.1.0-56-amd64
#   .qemu-cache/current-6.12/...      the same four files for 6.12, plus
#                                     `config` (the kernel's build config)
#   .qemu-cache/apt-trixie/           the private apt state for trixie
#   .qemu-cache/damo-guest/           python3 and damo for the guest that
#                                     compares hotpages with damo
#   .qemu-cache/current-arm64/        the aarch64 guests' 6.1 (bookworm):
#                                     Image, config, kernel-release and
#                                     busybox (static, arm64); see "arm64"
#                                     below
#   .qemu-cache/current-arm64-6.12/   the same for 6.12 (trixie)
#   .qemu-cache/apt-arm64/            the private apt state for arm64
#   .qemu-cache/env.sh                the `export ...` lines
#
# Idempotent: when both kernel directories are complete it touches neither
# apt nor the network. Set NUMASLEUTH_QEMU_REFRESH=1 to look for newer
# kernels.
# Prints the export lines on stdout (progress goes to stderr), so
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
    # The aarch64 guests (-M virt): qemu-system-aarch64 is in qemu-system-arm.
    command -v qemu-system-aarch64 >/dev/null 2>&1 || missing+=(qemu-system-arm)
    # The Debian busybox-static package installs /bin/busybox statically linked;
    # a dynamic busybox would not run inside the initramfs.
    if ! dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "install ok installed"; then
        missing+=(busybox-static)
    fi
    command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
    # 6.12's image is zstd-compressed (extract_vmlinux).
    command -v zstd >/dev/null 2>&1 || missing+=(zstd)
    # Host tests that never skip: the victim program (gcc, strip) and runs
    # as another user (setpriv).
    command -v gcc >/dev/null 2>&1 || missing+=(gcc)
    command -v strip >/dev/null 2>&1 || missing+=(binutils)
    command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
    # `top` is tested in a real terminal: a detached tmux session.
    command -v tmux >/dev/null 2>&1 || missing+=(tmux)
    # The damo comparison guest runs the host's python3 (see prepare_damo).
    [ -x /usr/bin/python3 ] || missing+=(python3)
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

# ---- the private apt state for trixie (6.12) ----
# Debian's own mirror and suite, signed by Debian's archive key, with lists,
# cache, status and sources all under .qemu-cache/apt-trixie: the host's
# /etc/apt and /var/lib/apt stay exactly as they were.
apt_dir="$cache/apt-trixie"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# apt_private_opts DIR: the options that keep apt's whole state in DIR.
apt_private_opts() {
    local dir=$1
    printf '%s\n' \
        -o "Dir::State=$dir/state" \
        -o "Dir::State::status=$dir/state/status" \
        -o "Dir::Cache=$dir/cache" \
        -o "Dir::Etc::SourceList=$dir/sources.list" \
        -o "Dir::Etc::SourceParts=$dir/sources.list.d" \
        -o "Dir::Etc::Preferences=$dir/preferences" \
        -o "Dir::Etc::PreferencesParts=$dir/preferences.d"
}
apt_private() {
    local tool=$1 opts
    shift
    mapfile -t opts < <(apt_private_opts "$apt_dir")
    "$tool" "${opts[@]}" "$@"
}
# private_state_init DIR SUITE...: an empty apt state in DIR whose sources
# are Debian's main for each SUITE, signed by Debian's archive key.
private_state_init() {
    local dir=$1 suite
    shift
    [ -s "$keyring" ] || { log "$keyring missing (apt-get install debian-archive-keyring)"; exit 1; }
    mkdir -p "$dir/state/lists/partial" "$dir/cache/archives/partial" \
        "$dir/sources.list.d" "$dir/preferences.d"
    : >"$dir/state/status"
    : >"$dir/sources.list"
    for suite in "$@"; do
        echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite main" >>"$dir/sources.list"
    done
}
private_apt_update() {
    private_state_init "$apt_dir" trixie
    log "apt-get update of trixie in $apt_dir (the host's apt state is not changed)"
    apt_private apt-get update -qq >&2
}
# The kernel trixie's linux-image-amd64 depends on, e.g.
# linux-image-6.12.57+deb13-amd64.
trixie_kernel_package() {
    apt_private apt-cache depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-6\.12\.[^ ]*-amd64\)$/\1/p' | head -n 1
}

# ---- unpacking a kernel package into the cache ----

cache_complete() {
    local dir=$1
    [ -s "$dir/vmlinuz" ] && [ -s "$dir/e1000.ko" ] &&
        [ -x "$dir/busybox" ] && [ -s "$dir/kernel-release" ] && [ -e "$dir/vmlinux.checked" ]
}

# extract_vmlinux IMAGE OUT: the uncompressed ELF kernel inside a bzImage,
# written to OUT when it carries the PVH entry note (Xen's note 18,
# PHYS32_ENTRY), which lets QEMU boot the ELF itself (-kernel vmlinux).
# Under TCG a bzImage spends about half of a two-node guest's 10 s in its
# own real-mode set-up and decompressor (docs/testing.md). Writes nothing
# when it cannot; the guests then boot the bzImage, only slower.
extract_vmlinux() {
    local image=$1 out=$2
    rm -f "$out"
    if python3 - "$image" "$out.tmp" <<'PY'; then
import lzma, struct, subprocess, sys, zlib

data = open(sys.argv[1], "rb").read()

def unxz(b):
    return lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(b)

def unzstd(b):  # zstd says "unsupported format" of the bytes after the frame
    return subprocess.run(["zstd", "-dcq"], input=b, capture_output=True).stdout

def ungzip(b):
    return zlib.decompressobj(31).decompress(b)

def has_pvh_note(elf):
    if elf[:5] != b"\x7fELF\x02":
        return False
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        p_type, = struct.unpack_from("<I", elf, phoff + i * phentsize)
        p_offset, = struct.unpack_from("<Q", elf, phoff + i * phentsize + 8)
        p_filesz, = struct.unpack_from("<Q", elf, phoff + i * phentsize + 32)
        at, end = p_offset, p_offset + p_filesz
        while p_type == 4 and at + 12 <= end:
            namesz, descsz, kind = struct.unpack_from("<III", elf, at)
            name = elf[at + 12:at + 12 + namesz]
            if name == b"Xen\x00" and kind == 18:
                return True
            at += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return False

for magic, inflate in ((b"\xfd7zXZ\x00", unxz), (b"\x28\xb5\x2f\xfd", unzstd), (b"\x1f\x8b\x08", ungzip)):
    at = data.find(magic)
    while at >= 0:
        try:
            elf = inflate(data[at:])
        except Exception:
            elf = b""
        if has_pvh_note(elf):
            open(sys.argv[2], "wb").write(elf)
            sys.exit(0)
        at = data.find(magic, at + 1)
sys.exit(1)
PY
        mv "$out.tmp" "$out"
        log "vmlinux:  unpacked from $image (PVH boot)"
    else
        rm -f "$out.tmp"
        log "no PVH-bootable ELF in $image: the guests boot the bzImage"
    fi
}

# fetch_deb PACKAGE[/SUITE] UNPACKED APT_GET...: downloads the package with
# the given apt-get command and unpacks it (dpkg -x) into UNPACKED, unless
# that directory exists already.
fetch_deb() {
    local pkg=$1 unpacked=$2 tmp
    shift 2
    [ -d "$unpacked" ] && return 0
    tmp="$(mktemp -d "$cache/download.XXXXXX")"
    # apt-get download writes into the working directory; it runs as the
    # _apt sandbox user when possible, which needs a directory it may write.
    chmod 0777 "$tmp"
    (cd "$tmp" && "$@" download -qq "$pkg" >&2) || { rm -rf "$tmp"; return 1; }
    rm -rf "$unpacked.partial"
    dpkg -x "$tmp"/"${pkg%%/*}"_*.deb "$unpacked.partial"
    mv "$unpacked.partial" "$unpacked"
    rm -rf "$tmp"
}

# unpack_kernel PACKAGE DIR APT_GET...: downloads PACKAGE with the given
# apt-get command (unless unpacked already), and fills DIR with vmlinuz,
# e1000.ko, busybox, kernel-release and config.
unpack_kernel() {
    local pkg=$1 dir=$2
    shift 2
    local unpacked="$cache/$pkg"
    [ -d "$unpacked/boot" ] || fetch_deb "$pkg" "$unpacked" "$@" || return 1

    local release="${pkg#linux-image-}"
    local vmlinuz="$unpacked/boot/vmlinuz-$release"
    [ -s "$vmlinuz" ] || { log "missing $vmlinuz"; exit 1; }
    # bookworm's packages keep modules in /lib, trixie's (merged /usr) in /usr/lib.
    local e1000_src
    e1000_src="$(find "$unpacked/lib/modules/$release" "$unpacked/usr/lib/modules/$release" \
        -name 'e1000.ko*' -path '*/intel/e1000/*' 2>/dev/null | head -n 1)"
    [ -n "$e1000_src" ] || { log "e1000.ko not found in $pkg"; exit 1; }

    rm -rf "$dir.partial"
    mkdir -p "$dir.partial"
    # Relative, so the cache survives moving the checkout.
    ln -s "../$pkg/boot/vmlinuz-$release" "$dir.partial/vmlinuz"
    ln -s "../$pkg/boot/config-$release" "$dir.partial/config"
    extract_vmlinux "$vmlinuz" "$dir.partial/vmlinux"
    touch "$dir.partial/vmlinux.checked"
    case "$e1000_src" in
    *.xz) xz -dc "$e1000_src" >"$dir.partial/e1000.ko" ;;
    *.zst) zstd -dc "$e1000_src" >"$dir.partial/e1000.ko" ;;
    *.gz) gzip -dc "$e1000_src" >"$dir.partial/e1000.ko" ;;
    *) cp "$e1000_src" "$dir.partial/e1000.ko" ;;
    esac
    echo "$e1000_src" >"$dir.partial/e1000.source"
    cp /bin/busybox "$dir.partial/busybox"
    echo "$release" >"$dir.partial/kernel-release"
    rm -rf "$dir"
    mv "$dir.partial" "$dir"
}

refresh() { [ "${NUMASLEUTH_QEMU_REFRESH:-0}" = 1 ]; }

# 6.1 from the host's apt lists (bookworm).
prepare_6_1() {
    local dir=$1 pkg
    if cache_complete "$dir" && ! refresh; then
        log "cached ($(cat "$dir/kernel-release"))"
        return 0
    fi
    pkg="$(newest_kernel_package)"
    if [ -z "$pkg" ]; then
        apt_update_once
        pkg="$(newest_kernel_package)"
    fi
    [ -n "$pkg" ] || { log "no linux-image-6.1.0-*-amd64 package known to apt"; exit 1; }
    log "kernel package: $pkg"
    if ! unpack_kernel "$pkg" "$dir" apt-get; then
        apt_update_once
        unpack_kernel "$pkg" "$dir" apt-get
    fi
}

# 6.12 from trixie, through the private apt state.
prepare_6_12() {
    local dir=$1 pkg=""
    if cache_complete "$dir" && ! refresh; then
        log "cached ($(cat "$dir/kernel-release"))"
        return 0
    fi
    if [ -s "$apt_dir/sources.list" ] && ! refresh; then
        pkg="$(trixie_kernel_package)"
    fi
    if [ -z "$pkg" ]; then
        private_apt_update
        pkg="$(trixie_kernel_package)"
    fi
    [ -n "$pkg" ] || { log "trixie's linux-image-amd64 names no linux-image-6.12.*-amd64"; exit 1; }
    log "kernel package: $pkg"
    if ! unpack_kernel "$pkg" "$dir" apt_private apt-get; then
        private_apt_update
        unpack_kernel "$pkg" "$dir" apt_private apt-get
    fi
    # The DAMON guest needs these; a kernel without them would fail later
    # and less clearly.
    local option
    for option in CONFIG_DAMON_VADDR CONFIG_DAMON_PADDR CONFIG_DAMON_SYSFS; do
        grep -qx "$option=y" "$dir/config" || { log "$pkg lacks $option=y"; exit 1; }
    done
}

# ---- arm64: the kernels and busybox of the aarch64 guests ----
# Debian's *cloud* arm64 flavour, not the generic one: the guests need no
# module (there is no e1000 on QEMU's virt machine), and everything they do
# need is built in there: NUMA, the PL011 console, the 8250 PCI UART that
# carries the heartbeat, perf with hardware breakpoints, kprobes, and on
# 6.12 DAMON. Its packages are 21 MB (6.1) and 28 MB (6.12) against 60 and
# 93 MB for generic. Both kernels are plain arm64 `Image`s QEMU boots as
# they are. They and busybox-static:arm64 are looked up in a private apt
# state (.qemu-cache/apt-arm64, bookworm and trixie main, arm64 Packages
# lists only), so the host needs no `dpkg --add-architecture arm64` and its
# own apt state is not touched.
# What it costs once, measured on this project's machine: the two Packages
# lists 18.6 MB, the three packages 50 MB: 22 to 30 s in two runs, in the
# background beside the builds (scripts/test-all). Nothing once cached.
apt_arm64_dir="$cache/apt-arm64"
apt_arm64() {
    local tool=$1 opts target
    shift
    mapfile -t opts < <(apt_private_opts "$apt_arm64_dir")
    opts+=(-o APT::Architecture=arm64 -o APT::Architectures=arm64)
    # The host's apt.conf.d may ask for AppStream (DEP-11) metadata too,
    # another 11 MB that nothing here reads.
    for target in DEP-11 DEP-11-icons-small DEP-11-icons DEP-11-icons-hidpi \
        DEP-11-icons-large DEP-11-icons-large-hidpi; do
        opts+=(-o "Acquire::IndexTargets::deb::$target::DefaultEnabled=false")
    done
    "$tool" "${opts[@]}" "$@"
}
arm64_apt_updated=0
arm64_apt_update() {
    [ "$arm64_apt_updated" = 0 ] || return 0
    private_state_init "$apt_arm64_dir" bookworm trixie
    log "apt-get update of bookworm and trixie for arm64 in $apt_arm64_dir (the host's apt state is not changed)"
    apt_arm64 apt-get update -qq >&2
    arm64_apt_updated=1
}
# The newest cloud arm64 kernel whose version starts with $1 ("6.1.0" or
# "6.12.").
arm64_kernel_package() {
    apt_arm64 apt-cache search --names-only "^linux-image-${1//./\\.}[^ ]*-cloud-arm64\$" 2>/dev/null |
        awk '{print $1}' | sort -V | tail -n 1
}
arm64_complete() {
    local dir=$1
    [ -s "$dir/Image" ] && [ -x "$dir/busybox" ] && [ -s "$dir/kernel-release" ] && [ -s "$dir/config" ]
}

# prepare_arm64 DIR VERSION: DIR gets Image, config, kernel-release and
# busybox (bookworm's busybox-static:arm64, the x86 guests' version).
prepare_arm64() {
    local dir=$1 version=$2 pkg="" bb="$cache/busybox-static-arm64"
    if arm64_complete "$dir" && ! refresh; then
        log "cached ($(cat "$dir/kernel-release"))"
        return 0
    fi
    if [ -s "$apt_arm64_dir/sources.list" ] && ! refresh; then
        pkg="$(arm64_kernel_package "$version")"
    fi
    if [ -z "$pkg" ]; then
        arm64_apt_update
        pkg="$(arm64_kernel_package "$version")"
    fi
    [ -n "$pkg" ] || { log "no linux-image-$version*-cloud-arm64 package in $apt_arm64_dir"; exit 1; }
    log "kernel package: $pkg"
    if ! fetch_deb "$pkg" "$cache/$pkg" apt_arm64 apt-get; then
        arm64_apt_update
        fetch_deb "$pkg" "$cache/$pkg" apt_arm64 apt-get
    fi
    if ! fetch_deb busybox-static/bookworm "$bb" apt_arm64 apt-get; then
        arm64_apt_update
        fetch_deb busybox-static/bookworm "$bb" apt_arm64 apt-get
    fi
    local release="${pkg#linux-image-}" busybox
    [ -s "$cache/$pkg/boot/vmlinuz-$release" ] || { log "missing vmlinuz-$release in $pkg"; exit 1; }
    # bookworm's package has it in /bin, trixie's (merged /usr) in /usr/bin.
    for busybox in "$bb/bin/busybox" "$bb/usr/bin/busybox" ""; do
        [ -x "$busybox" ] && break
    done
    [ -n "$busybox" ] || { log "no bin/busybox in busybox-static:arm64"; exit 1; }
    rm -rf "$dir.partial"
    mkdir -p "$dir.partial"
    ln -s "../$pkg/boot/vmlinuz-$release" "$dir.partial/Image"
    ln -s "../$pkg/boot/config-$release" "$dir.partial/config"
    cp "$busybox" "$dir.partial/busybox"
    echo "$release" >"$dir.partial/kernel-release"
    rm -rf "$dir"
    mv "$dir.partial" "$dir"
}

# ---- damo (DAMON's user-space tool) for the guest that compares with it ----
# The guests have no Python, so the host's own /usr/bin/python3 goes in with
# the shared libraries it links and its standard library, compiled to
# sourceless .pyc (no compiling at import time under TCG, no mtime checks),
# next to damo from PyPI (pinned; pure Python).
damo_version=3.4.3
damo_complete() { [ -x "$1/usr/bin/python3" ] && [ -s "$1/damo/damo/damo.pyc" ] && [ -s "$1/damo-version" ]; }

prepare_damo() {
    local dir=$1 tmp python stdlib pip
    if damo_complete "$dir" && [ "$(cat "$dir/damo-version")" = "$damo_version" ] && ! refresh; then
        log "cached (damo $damo_version)"
        return 0
    fi
    python=$(readlink -f /usr/bin/python3)
    stdlib=/usr/lib/$(basename "$python")
    [ -d "$stdlib" ] || { log "$stdlib missing (apt-get install python3)"; exit 1; }
    pip=$(command -v pip3 || command -v pip || true)
    [ -n "$pip" ] || { as_root apt-get install -y -qq python3-pip >&2; pip=$(command -v pip3); }
    tmp="$(mktemp -d "$cache/damo.XXXXXX")"
    "$pip" download -q --no-deps --only-binary=:all: -d "$tmp/wheel" "damo==$damo_version" >&2
    mkdir -p "$tmp/root/usr/bin" "$tmp/root/damo" "$tmp/root/usr/lib"
    cp "$python" "$tmp/root/usr/bin/python3"
    # The dynamic loader and every library python links, at their paths.
    ldd "$python" | grep -o '/[^ ]*' | while read -r lib; do
        mkdir -p "$tmp/root$(dirname "$lib")"
        cp -L "$lib" "$tmp/root$lib"
    done
    (cd "$(dirname "$stdlib")" && tar cf - --exclude=test --exclude=tests --exclude=idlelib \
        --exclude=tkinter --exclude=turtledemo --exclude=lib2to3 --exclude=ensurepip --exclude=pydoc_data \
        --exclude='config-*' --exclude=site-packages --exclude=dist-packages --exclude=__pycache__ \
        --exclude=unittest --exclude=distutils --exclude=venv --exclude='_test*' --exclude='_ctypes_test*' \
        "$(basename "$stdlib")") | (cd "$tmp/root/usr/lib" && tar xf -)
    "$python" -m zipfile -e "$tmp/wheel"/damo-*.whl "$tmp/root/damo"
    "$python" -m compileall -b -q "$tmp/root/usr/lib" "$tmp/root/damo" >/dev/null
    find "$tmp/root" -name '*.py' -delete
    rm -rf "$tmp/root/damo"/*.dist-info
    echo "$damo_version" >"$tmp/root/damo-version"
    rm -rf "$dir"
    mv "$tmp/root" "$dir"
    rm -rf "$tmp"
}

describe() {
    local dir=$1
    log "kernel:   $dir/vmlinuz -> $(readlink -f "$dir/vmlinuz")"
    log "e1000.ko: $dir/e1000.ko (from $(cat "$dir/e1000.source"))"
    log "busybox:  $dir/busybox"
}

ensure_host_packages
mkdir -p "$cache"
current_612="$cache/current-6.12"
prepare_6_1 "$current"
prepare_6_12 "$current_612"
prepare_damo "$cache/damo-guest"
prepare_arm64 "$cache/current-arm64" 6.1.0
prepare_arm64 "$cache/current-arm64-6.12" 6.12.
describe "$current"
describe "$current_612"
log "arm64:    $cache/current-arm64/Image -> $(readlink -f "$cache/current-arm64/Image")"
log "arm64:    $cache/current-arm64-6.12/Image -> $(readlink -f "$cache/current-arm64-6.12/Image")"
lines="export NUMASLEUTH_QEMU_KERNEL_DIR=$current
export NUMASLEUTH_QEMU_KERNEL_612_DIR=$current_612
export NUMASLEUTH_DAMO_GUEST_DIR=$cache/damo-guest
export NUMASLEUTH_QEMU_KERNEL_ARM64_DIR=$cache/current-arm64
export NUMASLEUTH_QEMU_KERNEL_ARM64_612_DIR=$cache/current-arm64-6.12"
echo "$lines" >"$cache/env.sh"
echo "$lines"
