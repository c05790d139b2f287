//! Describing a guest machine and running it to power-off under QEMU.
//!
//! Why the memory size is derived, not given: QEMU refuses to start unless
//! the per-node memory backends add up to `-m`, so `-m` is computed from the
//! nodes and the two can never disagree.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::console::{self, Transcript};
use crate::env::{Arch, HostEnv, Kernel};
use crate::initramfs;
use crate::lock::GuestLock;

/// One NUMA node of a guest.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    /// QEMU cpu range such as "0-1"; `None` makes a CPU-less (memory-only) node.
    pub cpus: Option<String>,
    pub mem_mib: u64,
}

/// A guest: machine shape plus what /init does.
#[derive(Debug, Clone)]
pub struct GuestSpec {
    /// Short name, used for the work dir and `tests/fixtures/qemu-<name>`.
    pub name: String,
    /// The instruction set (see [`crate::guests::on_arch`]).
    pub arch: Arch,
    /// The kernel it boots (see [`crate::guests::on_kernel`]).
    pub kernel: Kernel,
    /// Argument of `-smp`, e.g. "4,sockets=2,cores=2".
    pub smp: String,
    /// Argument of `-cpu`: "max", or with properties, e.g.
    /// "max,l3-cache=off"; [`Arch::default_cpu`] unless a guest asks.
    pub cpu: String,
    pub nodes: Vec<NodeSpec>,
    /// `(src, dst, value)` for `-numa dist`. Empty leaves QEMU's default
    /// (no SLIT table; Linux then uses 10 local / 20 remote).
    pub distances: Vec<(u32, u32, u32)>,
    /// Further QEMU arguments, e.g. a PCI expander bridge and a NIC.
    pub extra_qemu: Vec<String>,
    /// Put e1000.ko into the image and insmod it before anything else.
    pub load_e1000: bool,
    /// Files copied into the image: (path inside the guest, without the
    /// leading `/`, and the host file), e.g. a static test program.
    pub extra_files: Vec<(String, PathBuf)>,
    /// Shell lines run (with `set -e`) before the commands.
    pub setup: Vec<String>,
    /// `(section name, shell command)` run in order after setup; each result
    /// is framed on the console under that name.
    pub commands: Vec<(String, String)>,
}

impl GuestSpec {
    pub fn memory_mib(&self) -> u64 {
        self.nodes.iter().map(|n| n.mem_mib).sum()
    }

    /// The full qemu argument list (without the program name).
    pub fn qemu_args(&self, host: &HostEnv, initrd: &Path, console_log: &Path) -> Result<Vec<String>, String> {
        let kernel_image = host.kernel_image(self.arch, self.kernel)?;
        let mut a: Vec<String> = Vec::new();
        let mut push = |items: &[&str]| a.extend(items.iter().map(|s| s.to_string()));
        let machine = match self.arch {
            Arch::X86_64 => "pc",
            // The generic Arm machine: PL011, GICv2, PCIe, PSCI, a DT.
            Arch::Aarch64 => "virt",
        };
        // KVM is not available on our machines; TCG works everywhere.
        push(&["-machine", machine, "-accel", "tcg", "-cpu", &self.cpu]);
        push(&["-smp", &self.smp, "-m", &format!("{}M", self.memory_mib())]);
        // -nodefaults drops the default e1000 on pci.0, which would be a
        // second NIC with no NUMA node in every guest.
        push(&["-nodefaults", "-no-reboot", "-display", "none"]);
        push(&["-serial", &format!("file:{}", console_log.display())]);
        // /init's heartbeat, for the freeze watchdog (`boot`): the PC's
        // second serial port; virt has a single UART, so a PCI one there.
        let heartbeat = heartbeat_log(console_log);
        match self.arch {
            Arch::X86_64 => push(&["-serial", &format!("file:{}", heartbeat.display())]),
            Arch::Aarch64 => push(&[
                "-chardev",
                &format!("file,id=heartbeat,path={}", heartbeat.display()),
                "-device",
                "pci-serial,chardev=heartbeat",
            ]),
        }
        push(&["-kernel", &kernel_image.display().to_string()]);
        push(&["-initrd", &initrd.display().to_string()]);
        // panic=-1 turns a kernel panic (e.g. /init exiting) into an
        // immediate reboot, which -no-reboot turns into qemu exiting.
        push(&["-append", &format!("console={} panic=-1", self.arch.console())]);
        for (i, node) in self.nodes.iter().enumerate() {
            let backend = format!("memory-backend-ram,id=m{i},size={}M", node.mem_mib);
            push(&["-object", &backend]);
            let mut numa = format!("node,nodeid={i}");
            if let Some(cpus) = &node.cpus {
                numa.push_str(&format!(",cpus={cpus}"));
            }
            numa.push_str(&format!(",memdev=m{i}"));
            push(&["-numa", &numa]);
        }
        for (src, dst, val) in &self.distances {
            push(&["-numa", &format!("dist,src={src},dst={dst},val={val}")]);
        }
        a.extend(self.extra_qemu.iter().cloned());
        Ok(a)
    }
}

/// The outcome of one boot.
#[derive(Debug)]
pub struct GuestRun {
    pub transcript: Transcript,
    /// The whole serial console, CRLF as received.
    pub console: String,
    /// From spawning qemu to qemu exiting after `poweroff -f`.
    pub boot_to_poweroff: Duration,
    /// When qemu was spawned, so callers can add their own checking time.
    pub started: Instant,
    /// Where the image, console log and command line were kept.
    pub workdir: PathBuf,
}

/// Builds the image, boots the guest and waits for power-off. `workdir` is
/// emptied first and keeps every artefact afterwards, for post-mortems.
pub fn run(host: &HostEnv, spec: &GuestSpec, workdir: &Path) -> Result<GuestRun, String> {
    if workdir.exists() {
        fs::remove_dir_all(workdir).map_err(|e| format!("clearing {}: {e}", workdir.display()))?;
    }
    fs::create_dir_all(workdir).map_err(|e| format!("creating {}: {e}", workdir.display()))?;
    let initrd = workdir.join("initramfs.cpio");
    let console_log = workdir.join("console.log");
    initramfs::build(host, spec, &initrd)?;
    fs::write(workdir.join("init"), initramfs::init_script(spec)).map_err(|e| e.to_string())?;

    let args = spec.qemu_args(host, &initrd, &console_log)?;
    let qemu = host.qemu_for(spec.arch)?;
    let cmdline = std::iter::once(qemu.display().to_string())
        .chain(args.iter().map(|a| shell_quote(a)))
        .collect::<Vec<_>>()
        .join(" ");
    fs::write(workdir.join("qemu-cmdline.sh"), format!("{cmdline}\n")).map_err(|e| e.to_string())?;

    let _lock = GuestLock::acquire(host.guest_slots)?;
    let limit = Duration::from_secs(host.timeout_secs);
    let boot = boot_with_one_retry(host, spec, (qemu, &args), workdir, &console_log)?;
    let (started, status) = match boot {
        Boot::Finished(started, status) => (started, status),
        // Nothing to report from but the consoles.
        Boot::Hung | Boot::Frozen => (Instant::now(), None),
    };
    let boot_to_poweroff = started.elapsed();

    let console = fs::read(&console_log)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let qemu_out = fs::read_to_string(workdir.join("qemu.out")).unwrap_or_default();
    let transcript = console::parse(&console);
    let context = || {
        format!(
            "guest {}: qemu output:\n{}\nlast console lines:\n{}\n(artefacts in {})",
            spec.name,
            qemu_out.trim_end(),
            console::tail(&console, 40),
            workdir.display()
        )
    };
    match status {
        None if matches!(boot, Boot::Hung) => {
            let secs = host.init_timeout_secs;
            return Err(format!(
                "the kernel did not start /init within {secs} s, twice; {}",
                context()
            ));
        }
        None if matches!(boot, Boot::Frozen) => {
            let secs = host.freeze_secs;
            return Err(format!(
                "the guest froze (no heartbeat for {secs} s), twice; {}",
                context()
            ));
        }
        None => return Err(format!("timed out after {limit:?}; {}", context())),
        Some(s) if !s.success() => return Err(format!("qemu failed ({s}); {}", context())),
        Some(_) if !transcript.done => return Err(format!("/init did not reach its end; {}", context())),
        Some(_) => {}
    }
    Ok(GuestRun {
        transcript,
        console,
        boot_to_poweroff,
        started,
        workdir: workdir.to_path_buf(),
    })
}

/// Boots, and boots once more when the kernel never reached /init, died
/// before /init ended, or froze; a second boot's result is final. Each is
/// TCG's problem, not the test's, each has been seen in CI, and each retry
/// is said on the test's output with the first console kept beside the
/// retry's:
/// - no /init in 120 s while the guests before and after booted in 20 s;
/// - "Oops: int3" in `__schedule` (in the kdamond): a half-patched jump
///   label in an emulated CPU;
/// - a whole guest frozen when a perf event flipped a static key: one vCPU
///   kept running its stale translation of the patched text's int3, and
///   the kernel's int3 handler, which found the byte already gone, sent it
///   back to retry forever (docs/testing.md has the trace).
fn boot_with_one_retry(
    host: &HostEnv,
    spec: &GuestSpec,
    (qemu, args): (&Path, &[String]),
    workdir: &Path,
    console_log: &Path,
) -> Result<Boot, String> {
    let limits = Limits {
        init: Duration::from_secs(host.init_timeout_secs),
        freeze: Duration::from_secs(host.freeze_secs),
        all: Duration::from_secs(host.timeout_secs),
    };
    let first = boot(qemu, args, workdir, console_log, &limits)?;
    let (kept, why) = match first {
        Boot::Finished(..) if !kernel_died(console_log) => return Ok(first),
        Boot::Finished(..) => (
            "console-kernel-died.log",
            "the guest kernel died before /init ended (Oops or panic)".to_string(),
        ),
        Boot::Hung => (
            "console-hung-boot.log",
            format!("the kernel did not start /init within {} s", host.init_timeout_secs),
        ),
        Boot::Frozen => (
            "console-frozen.log",
            format!("the guest froze: no heartbeat for {} s", host.freeze_secs),
        ),
    };
    let kept = workdir.join(kept);
    fs::rename(console_log, &kept).map_err(|e| format!("keeping {}: {e}", kept.display()))?;
    crate::env::report(&format!(
        "[testbed] {}: {why}; booting once more (first console in {})",
        spec.name,
        kept.display()
    ));
    boot(qemu, args, workdir, console_log, &limits)
}

/// Whether the console shows the guest kernel oopsing or panicking before
/// /init printed its last line.
fn kernel_died(console_log: &Path) -> bool {
    let console = fs::read(console_log)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let died = console.contains("Oops: ") || console.contains("Kernel panic - not syncing");
    died && !console.contains(crate::console::MARK_DONE)
}

enum Boot {
    /// qemu exited with this status, or `None` when it was killed at the
    /// limit after /init had started; with the time qemu was spawned.
    Finished(Instant, Option<ExitStatus>),
    /// Killed because /init printed nothing within the init limit.
    Hung,
    /// Killed because /init's heartbeat stopped for the freeze limit.
    Frozen,
}

/// How long a boot may take: to /init's first line, between two
/// heartbeats once /init runs, and in all.
struct Limits {
    init: Duration,
    freeze: Duration,
    all: Duration,
}

/// Where /init's heartbeat (ttyS1) is written, beside the console.
fn heartbeat_log(console_log: &Path) -> PathBuf {
    console_log.with_file_name("heartbeat.log")
}

/// Runs qemu once, to power-off, to the init limit without /init's first
/// line, to the freeze limit without a new heartbeat once /init runs, or to
/// the whole limit.
fn boot(qemu: &Path, args: &[String], workdir: &Path, console_log: &Path, limits: &Limits) -> Result<Boot, String> {
    let out = File::create(workdir.join("qemu.out")).map_err(|e| e.to_string())?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let heartbeat = heartbeat_log(console_log);
    let started = Instant::now();
    let mut child = Command::new(qemu)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("starting {}: {e}", qemu.display()))?;
    // Since /init started: the heartbeat's length and when it last grew.
    let mut beat: Option<(u64, Instant)> = None;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(Boot::Finished(started, Some(status)));
        }
        let length = || fs::metadata(&heartbeat).map_or(0, |m| m.len());
        beat = match beat {
            None => fs::read(console_log)
                .is_ok_and(|b| String::from_utf8_lossy(&b).contains(console::MARK_INIT))
                .then(|| (length(), Instant::now())),
            Some((seen, at)) => Some(match length() {
                now if now != seen => (now, Instant::now()),
                _ => (seen, at),
            }),
        };
        let outcome = match beat {
            None if started.elapsed() > limits.init.min(limits.all) => Some(Boot::Hung),
            Some((_, at)) if at.elapsed() > limits.freeze => Some(Boot::Frozen),
            _ if started.elapsed() > limits.all => Some(Boot::Finished(started, None)),
            _ => None,
        };
        if let Some(outcome) = outcome {
            // Only the qemu we spawned is killed.
            let _ = child.kill();
            let _ = child.wait();
            return Ok(outcome);
        }
        sleep(Duration::from_millis(100));
    }
}

fn shell_quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "-_=,./:".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_that_died_before_init_ended_is_told_from_one_that_did_not() {
        let dir = std::env::temp_dir().join(format!("numasleuth-kernel-died-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let log = dir.join("console.log");
        let oops = "[   40.5] Oops: int3: 0000 [#2] PREEMPT SMP NOPTI\r\n[   40.5] RIP: 0010:__schedule+0x411\r\n";
        fs::write(&log, format!("@@NSTB:INIT@@\r\n{oops}")).unwrap();
        assert!(kernel_died(&log));
        fs::write(
            &log,
            "@@NSTB:INIT@@\r\n[ 9.1] Kernel panic - not syncing: Fatal exception\r\n",
        )
        .unwrap();
        assert!(kernel_died(&log));
        // An oops that /init outlived is the test's to judge.
        fs::write(&log, format!("{oops}@@NSTB:DONE@@\r\n")).unwrap();
        assert!(!kernel_died(&log));
        fs::write(&log, "@@NSTB:INIT@@\r\n@@NSTB:DONE@@\r\n").unwrap();
        assert!(!kernel_died(&log));
        assert!(!kernel_died(&dir.join("absent.log")));
        fs::remove_dir_all(&dir).unwrap();
    }
}
