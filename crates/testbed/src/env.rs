//! Finding what the QEMU guests need on the host, and failing with the
//! instructions when something is missing.
//!
//! Why there is no skip: a test bed that quietly does nothing when its
//! inputs are missing would let CI go green without ever booting a NUMA
//! kernel. To leave the guests out on purpose, filter them by name
//! (`cargo test -- --skip qemu_`): cargo then counts them as filtered out,
//! never as passed.

use std::env;
use std::path::{Path, PathBuf};

pub const ENV_STATIC_BIN: &str = "NUMASLEUTH_STATIC_BIN";
/// The static aarch64 numasleuth the aarch64 guests run (`scripts/test-all`
/// builds it); the host still replays their snapshots with
/// [`ENV_STATIC_BIN`]'s.
pub const ENV_STATIC_BIN_AARCH64: &str = "NUMASLEUTH_STATIC_BIN_AARCH64";
pub const ENV_KERNEL_DIR: &str = "NUMASLEUTH_QEMU_KERNEL_DIR";
pub const ENV_KERNEL_612_DIR: &str = "NUMASLEUTH_QEMU_KERNEL_612_DIR";
/// `.qemu-cache/current-arm64` and `current-arm64-6.12` from
/// scripts/qemu-kernel.sh: `Image`, `busybox`, `config`, `kernel-release`.
pub const ENV_KERNEL_ARM64_DIR: &str = "NUMASLEUTH_QEMU_KERNEL_ARM64_DIR";
pub const ENV_KERNEL_ARM64_612_DIR: &str = "NUMASLEUTH_QEMU_KERNEL_ARM64_612_DIR";
pub const ENV_QEMU: &str = "NUMASLEUTH_QEMU";
pub const ENV_QEMU_AARCH64: &str = "NUMASLEUTH_QEMU_AARCH64";
pub const ENV_TIMEOUT: &str = "NUMASLEUTH_QEMU_TIMEOUT_SECS";
pub const ENV_INIT_TIMEOUT: &str = "NUMASLEUTH_QEMU_INIT_TIMEOUT_SECS";
pub const ENV_FREEZE: &str = "NUMASLEUTH_QEMU_FREEZE_SECS";
pub const ENV_UPDATE_FIXTURES: &str = "NUMASLEUTH_UPDATE_FIXTURES";
/// How many guests may run at once (default 1; see crate::lock).
pub const ENV_GUEST_SLOTS: &str = "NUMASLEUTH_QEMU_GUESTS_AT_ONCE";

/// Default limit for one guest from spawn to power-off. Guests take about
/// 10-20 s under TCG; the margin covers a loaded CI machine.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// Default limit for the kernel to reach /init's first line. A healthy TCG
/// boot takes a few seconds; a guest that hangs before /init prints
/// nothing, and waiting the whole timeout would not change that (guest.rs
/// boots it once more).
pub const DEFAULT_INIT_TIMEOUT_SECS: u64 = 60;

/// Default limit for a silent heartbeat once /init runs. /init writes one a
/// second on the second serial port; a guest whose kernel no longer
/// schedules even that has frozen (guest.rs), which no command can cause by
/// being slow or hung. In a whole test bed run no two beats were more than
/// 1.13 s apart (docs/testing.md); the margin covers a loaded CI machine.
pub const DEFAULT_FREEZE_SECS: u64 = 40;

const HOW_TO: &str = "\
to run the QEMU guests:
    eval \"$(scripts/qemu-kernel.sh)\"          # sets NUMASLEUTH_QEMU_KERNEL_DIR, _612_DIR and the _ARM64_ ones
    export NUMASLEUTH_STATIC_BIN=\"$(scripts/build-static.sh)\"
    export NUMASLEUTH_STATIC_BIN_AARCH64=...   # the aarch64 guests' static build (scripts/test-all makes it)
    cargo test -p numasleuth-testbed
or leave them out by name: cargo test -- --skip qemu_";

/// Everything on the host that a guest run needs.
#[derive(Debug, Clone)]
pub struct HostEnv {
    /// Statically linked numasleuth: copied into guests and run on the host
    /// to replay snapshots.
    pub static_bin: PathBuf,
    /// `.qemu-cache/current` as written by scripts/qemu-kernel.sh: the 6.1
    /// kernel most guests boot.
    pub kernel_dir: PathBuf,
    /// `.qemu-cache/current-6.12`: the 6.12 kernel (DAMON). `None` when
    /// [`ENV_KERNEL_612_DIR`] is unset; only guests that ask for 6.12 then
    /// fail, saying so.
    pub kernel_612_dir: Option<PathBuf>,
    pub qemu: PathBuf,
    /// What the aarch64 guests need besides the above; each is `None`
    /// when its variable is unset, and only those guests then fail, saying
    /// so.
    pub aarch64: Aarch64Inputs,
    pub timeout_secs: u64,
    /// From spawn to /init's first line; see [`DEFAULT_INIT_TIMEOUT_SECS`].
    pub init_timeout_secs: u64,
    /// Heartbeat silence that counts as frozen; see [`DEFAULT_FREEZE_SECS`].
    pub freeze_secs: u64,
    /// Guests that may run at once, from [`ENV_GUEST_SLOTS`] (default 1).
    pub guest_slots: usize,
    pub update_fixtures: bool,
}

/// What only the aarch64 guests need.
#[derive(Debug, Clone, Default)]
pub struct Aarch64Inputs {
    /// [`ENV_STATIC_BIN_AARCH64`].
    pub static_bin: Option<PathBuf>,
    /// [`ENV_KERNEL_ARM64_DIR`].
    pub kernel_dir: Option<PathBuf>,
    /// [`ENV_KERNEL_ARM64_612_DIR`].
    pub kernel_612_dir: Option<PathBuf>,
    /// [`ENV_QEMU_AARCH64`], else `qemu-system-aarch64` on `PATH`.
    pub qemu: Option<PathBuf>,
}

/// The instruction set of a guest: what QEMU emulates, which numasleuth
/// and busybox go in, and how its test programs are compiled.
///
/// Why aarch64: the incident numasleuth exists for happened on an Arm
/// server (an Ampere Altra), and Arm has its own decoder, register layout
/// and zones (issue 34).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Arch {
    #[default]
    X86_64,
    /// QEMU's `virt` machine with Neoverse N1 cores (the Altra's).
    Aarch64,
}

impl Arch {
    /// "x86_64" or "aarch64", as `uname -m` says it.
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }
    /// Debian's name for it, which the guests' names and the kernel
    /// directories carry: "amd64" or "arm64".
    pub fn debian_name(self) -> &'static str {
        match self {
            Arch::X86_64 => "amd64",
            Arch::Aarch64 => "arm64",
        }
    }
    /// The `-cpu` a guest gets unless it asks for another. For aarch64 the
    /// Altra's core: ARMv8.2 with LSE atomics, a PMU, 6 breakpoint and 4
    /// watchpoint registers, and no pointer authentication, which `max`
    /// has and TCG emulates slowly (QARMA).
    pub fn default_cpu(self) -> &'static str {
        match self {
            Arch::X86_64 => "max",
            Arch::Aarch64 => "neoverse-n1",
        }
    }
    /// The kernel's console: the first 16550 on the PC, the PL011 on virt.
    pub fn console(self) -> &'static str {
        match self {
            Arch::X86_64 => "ttyS0",
            Arch::Aarch64 => "ttyAMA0",
        }
    }
    /// The guest's device for /init's heartbeat: the PC's second serial
    /// port; on virt, which has one UART, a PCI 16550 (`pci-serial`).
    pub fn heartbeat_tty(self) -> &'static str {
        match self {
            Arch::X86_64 => "/dev/ttyS1",
            Arch::Aarch64 => "/dev/ttyS0",
        }
    }
    /// The C compiler that builds the guests' static test programs.
    pub fn c_compiler(self) -> &'static str {
        match self {
            Arch::X86_64 => "gcc",
            Arch::Aarch64 => "aarch64-linux-gnu-gcc",
        }
    }
}

/// Which of the test bed's two Debian kernels a guest boots.
///
/// Why two: DAMON (`hotpages`) exists only in 6.12, and running a few
/// guests on both shows numasleuth reads the migrate and tracepoint
/// layouts of two kernel versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Kernel {
    /// Debian bookworm's 6.1, the default.
    #[default]
    Debian6_1,
    /// Debian trixie's 6.12: DAMON vaddr/paddr/sysfs built in.
    Debian6_12,
}

impl Kernel {
    /// "6.1" or "6.12": the prefix of the guest's `uname -r`.
    pub fn version(self) -> &'static str {
        match self {
            Kernel::Debian6_1 => "6.1",
            Kernel::Debian6_12 => "6.12",
        }
    }
}

/// The error for an aarch64 input whose variable is unset.
fn unset(what: &str, var: &str) -> String {
    format!("QEMU test bed cannot run {what}: {var} is not set\n{HOW_TO}")
}

impl HostEnv {
    /// The directory scripts/qemu-kernel.sh filled for `kernel` on `arch`.
    pub fn kernel_dir_for(&self, arch: Arch, kernel: Kernel) -> Result<&Path, String> {
        let a = &self.aarch64;
        match (arch, kernel) {
            (Arch::X86_64, Kernel::Debian6_1) => Ok(&self.kernel_dir),
            (Arch::X86_64, Kernel::Debian6_12) => self
                .kernel_612_dir
                .as_deref()
                .ok_or_else(|| format!("QEMU test bed cannot boot 6.12: {ENV_KERNEL_612_DIR} is not set\n{HOW_TO}")),
            (Arch::Aarch64, Kernel::Debian6_1) => a
                .kernel_dir
                .as_deref()
                .ok_or_else(|| unset("an aarch64 guest", ENV_KERNEL_ARM64_DIR)),
            (Arch::Aarch64, Kernel::Debian6_12) => a
                .kernel_612_dir
                .as_deref()
                .ok_or_else(|| unset("an aarch64 guest on 6.12", ENV_KERNEL_ARM64_612_DIR)),
        }
    }
    /// The image QEMU boots. On x86 the uncompressed `vmlinux` that
    /// scripts/qemu-kernel.sh extracts when the kernel has the PVH entry
    /// note (about 5 s less a guest under TCG: no real-mode set-up, no
    /// decompressor), else the bzImage; on aarch64 Debian's `Image`, which
    /// is not compressed.
    pub fn kernel_image(&self, arch: Arch, kernel: Kernel) -> Result<PathBuf, String> {
        let dir = self.kernel_dir_for(arch, kernel)?;
        let vmlinux = dir.join("vmlinux");
        Ok(match arch {
            Arch::Aarch64 => dir.join("Image"),
            Arch::X86_64 if vmlinux.is_file() => vmlinux,
            Arch::X86_64 => dir.join("vmlinuz"),
        })
    }
    pub fn e1000_ko(&self, kernel: Kernel) -> Result<PathBuf, String> {
        Ok(self.kernel_dir_for(Arch::X86_64, kernel)?.join("e1000.ko"))
    }
    /// Static busybox does not depend on the kernel; the 6.1 directory's
    /// of `arch`.
    pub fn busybox(&self, arch: Arch) -> Result<PathBuf, String> {
        Ok(self.kernel_dir_for(arch, Kernel::Debian6_1)?.join("busybox"))
    }
    /// The static numasleuth that goes into a guest of `arch`.
    pub fn guest_bin(&self, arch: Arch) -> Result<&Path, String> {
        match arch {
            Arch::X86_64 => Ok(&self.static_bin),
            Arch::Aarch64 => self
                .aarch64
                .static_bin
                .as_deref()
                .ok_or_else(|| unset("an aarch64 guest", ENV_STATIC_BIN_AARCH64)),
        }
    }
    /// The QEMU that emulates `arch`.
    pub fn qemu_for(&self, arch: Arch) -> Result<&Path, String> {
        match arch {
            Arch::X86_64 => Ok(&self.qemu),
            Arch::Aarch64 => self.aarch64.qemu.as_deref().ok_or_else(|| {
                format!("QEMU test bed cannot run an aarch64 guest: qemu-system-aarch64 not found (apt-get install qemu-system-arm, or set {ENV_QEMU_AARCH64})\n{HOW_TO}")
            }),
        }
    }
}

/// Reads the environment. Missing inputs give `Err` with instructions.
pub fn detect() -> Result<HostEnv, String> {
    find_inputs().map_err(|problems| format!("QEMU test bed cannot run:\n  - {}\n{HOW_TO}", problems.join("\n  - ")))
}

/// Like [`detect`], but panics with the instructions when something is
/// missing: a guest test that cannot run fails, never passes unrun.
pub fn require(test_name: &str) -> HostEnv {
    match detect() {
        Ok(host) => host,
        Err(msg) => panic!("{test_name}: {msg}"),
    }
}

fn find_inputs() -> Result<HostEnv, Vec<String>> {
    let mut problems = Vec::new();

    let static_bin = match env::var_os(ENV_STATIC_BIN) {
        Some(p) if Path::new(&p).is_file() => Some(PathBuf::from(p)),
        Some(p) => {
            problems.push(format!("{ENV_STATIC_BIN}={} is not a file", Path::new(&p).display()));
            None
        }
        None => {
            problems.push(format!("{ENV_STATIC_BIN} is not set"));
            None
        }
    };

    let kernel_dir = match env::var_os(ENV_KERNEL_DIR) {
        Some(p) => {
            let dir = PathBuf::from(p);
            for f in ["vmlinuz", "e1000.ko", "busybox"] {
                if !dir.join(f).is_file() {
                    problems.push(format!("{} is missing", dir.join(f).display()));
                }
            }
            Some(dir)
        }
        None => {
            problems.push(format!("{ENV_KERNEL_DIR} is not set"));
            None
        }
    };

    let kernel_612_dir = env::var_os(ENV_KERNEL_612_DIR).map(PathBuf::from);
    if let Some(dir) = &kernel_612_dir {
        for f in ["vmlinuz", "e1000.ko"] {
            if !dir.join(f).is_file() {
                problems.push(format!("{} is missing", dir.join(f).display()));
            }
        }
    }

    let aarch64 = aarch64_inputs(&mut problems);

    let qemu = match env::var_os(ENV_QEMU) {
        Some(p) => Some(PathBuf::from(p)),
        None => which("qemu-system-x86_64"),
    };
    if !qemu.as_deref().is_some_and(Path::is_file) {
        problems.push("qemu-system-x86_64 not found (apt-get install qemu-system-x86)".into());
    }

    let seconds = |name: &str, default: u64| env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let timeout_secs = seconds(ENV_TIMEOUT, DEFAULT_TIMEOUT_SECS);
    let init_timeout_secs = seconds(ENV_INIT_TIMEOUT, DEFAULT_INIT_TIMEOUT_SECS);
    let freeze_secs = seconds(ENV_FREEZE, DEFAULT_FREEZE_SECS);
    let guest_slots = seconds(ENV_GUEST_SLOTS, 1).max(1) as usize;
    let update_fixtures = env::var(ENV_UPDATE_FIXTURES).is_ok_and(|v| v == "1");

    match (static_bin, kernel_dir, qemu) {
        (Some(static_bin), Some(kernel_dir), Some(qemu)) if problems.is_empty() => Ok(HostEnv {
            static_bin,
            kernel_dir,
            kernel_612_dir,
            qemu,
            aarch64,
            timeout_secs,
            init_timeout_secs,
            freeze_secs,
            guest_slots,
            update_fixtures,
        }),
        _ => Err(problems),
    }
}

/// The aarch64 guests' inputs: each unset one is `None` (only those
/// guests fail, saying so), each set to something missing a problem.
fn aarch64_inputs(problems: &mut Vec<String>) -> Aarch64Inputs {
    let static_bin = env::var_os(ENV_STATIC_BIN_AARCH64).map(PathBuf::from);
    if let Some(p) = static_bin.as_deref().filter(|p| !p.is_file()) {
        problems.push(format!("{ENV_STATIC_BIN_AARCH64}={} is not a file", p.display()));
    }
    let dirs = [ENV_KERNEL_ARM64_DIR, ENV_KERNEL_ARM64_612_DIR].map(|var| {
        let dir = env::var_os(var).map(PathBuf::from);
        for f in ["Image", "busybox"] {
            if let Some(missing) = dir.as_ref().map(|d| d.join(f)).filter(|p| !p.is_file()) {
                problems.push(format!("{} is missing", missing.display()));
            }
        }
        dir
    });
    let [kernel_dir, kernel_612_dir] = dirs;
    let qemu = match env::var_os(ENV_QEMU_AARCH64) {
        Some(p) => Some(PathBuf::from(p)),
        None => which("qemu-system-aarch64"),
    };
    Aarch64Inputs {
        static_bin,
        kernel_dir,
        kernel_612_dir,
        qemu,
    }
}

fn which(name: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Writes a line straight to the process's stderr. The test harness
/// captures `eprintln!` of passing tests; skips and timings must be seen.
pub fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
