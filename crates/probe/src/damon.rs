//! A kdamond of numasleuth's own, driven through DAMON's sysfs interface:
//! set up to watch one process's virtual address space with a `stat`
//! scheme, asked for its regions, and switched off and removed again.
//!
//! Why only when no other kdamond exists: the kernel has no way to add one
//! kdamond beside another. Writing `kdamonds/nr_kdamonds` removes every
//! kdamond directory and makes fresh empty ones; the kernel refuses it
//! (EBUSY) while any kdamond runs, and when none runs it silently drops
//! their settings. numasleuth never touches a kdamond something else set
//! up, so it grows `nr_kdamonds` only from 0 to 1 and shrinks it back to 0,
//! and otherwise says why it cannot start.
//!
//! Cleanup: [`Session`] switches its kdamond off and removes it on
//! [`Session::stop`] and in `Drop` (an error or a panic unwinding through
//! the caller). Before the first write it leaves a claim (see
//! [`crate::damon_claim`]) that lets a later run, or the reaper process the
//! CLI starts beside it, remove the kdamond after a SIGKILL.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use numasleuth_kernel::sysfs::damon::{
    self, DamonAdmin, DamonAttrs, DamonRegion, KdamondReading, KdamondState, KDAMONDS,
};
use numasleuth_kernel::{ReadError, Root};
use thiserror::Error;

use crate::damon_claim::{Claim, ClaimError, ClaimFile};

/// DAMON's own defaults for a new context (sample 5 ms, aggregate 100 ms,
/// update the target's regions every 60 ms, 10 to 1000 regions).
pub const DEFAULT_ATTRS: DamonAttrs = DamonAttrs {
    sample_us: 5_000,
    aggr_us: 100_000,
    update_us: 60_000,
    min_regions: 10,
    max_regions: 1_000,
};

/// Why DAMON could not watch the process, each in words a person can act
/// on; the first four are the "not available here" answers.
#[derive(Debug, Error)]
pub enum DamonError {
    #[error(
        "DAMON is not available: this kernel has no DAMON sysfs interface ({path} is missing; \
         CONFIG_DAMON_SYSFS is off or DAMON is not built)"
    )]
    NoDamon { path: String },
    #[error("DAMON needs root: {path} is readable and writable by root only")]
    NotRoot { path: String },
    #[error(
        "this kernel's DAMON cannot watch a process: it has no virtual-address operations \
         (avail_operations: {avail}; CONFIG_DAMON_VADDR is off)"
    )]
    NoVaddr { avail: String },
    #[error(
        "cannot get a kdamond of its own: {found}; the kernel adds a kdamond only by rebuilding every \
         kdamond directory, which it refuses while one runs and which would drop their settings, \
         and numasleuth never touches a kdamond it did not set up"
    )]
    Busy { found: String },
    #[error("writing `{value}` to {path}: {message}")]
    Write {
        path: String,
        value: String,
        message: String,
    },
    #[error("process {pid} exited while DAMON watched it")]
    TargetExited { pid: u32 },
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Claim(#[from] ClaimError),
    #[error("DAMON would refuse these regions: {0}")]
    Regions(String),
}

/// How long a DAMON file that answers EBUSY is tried again. Up to 6.13 the
/// kernel takes its DAMON sysfs lock with a trylock in the `state`, `nr_*`
/// and `pid` handlers and answers EBUSY when it fails, and every kdamond
/// takes that lock in its sampling and aggregation callbacks: one try loses
/// now and then, more often on a slow machine (docs/hotpages.md).
const BUSY_RETRY: Duration = Duration::from_secs(3);
/// The pause between tries: two of the kdamond's 5 ms sampling steps.
const BUSY_PAUSE: Duration = Duration::from_millis(10);

/// Runs `op` again while it fails with what `is_busy` calls the lock's
/// EBUSY, for at most [`BUSY_RETRY`]; then its last answer stands.
fn retry_busy<T, E>(mut op: impl FnMut() -> Result<T, E>, is_busy: impl Fn(&E) -> bool) -> Result<T, E> {
    let deadline = Instant::now() + BUSY_RETRY;
    loop {
        match op() {
            Err(e) if is_busy(&e) && Instant::now() < deadline => std::thread::sleep(BUSY_PAUSE),
            answer => return answer,
        }
    }
}

fn read_is_busy(e: &ReadError) -> bool {
    matches!(
        e,
        ReadError::Io {
            errno: Some(libc::EBUSY),
            ..
        }
    )
}

/// [`damon::read_kdamond`], tried again while DAMON's lock is busy.
fn read_kdamond(root: &Root, index: u64) -> Result<KdamondReading, ReadError> {
    retry_busy(|| damon::read_kdamond(root, index), read_is_busy)
}

/// Reads the admin tree, with "no DAMON" and "not root" said plainly.
pub fn admin(root: &Root) -> Result<DamonAdmin, DamonError> {
    let path = format!("/{KDAMONDS}/nr_kdamonds");
    match retry_busy(|| damon::read_admin(root), read_is_busy) {
        Ok(Some(admin)) => Ok(admin),
        Ok(None) => Err(DamonError::NoDamon {
            path: format!("/{}", damon::ADMIN),
        }),
        Err(ReadError::PermissionDenied { .. }) => Err(DamonError::NotRoot { path }),
        Err(e) => Err(e.into()),
    }
}

/// One kdamond in words: "kdamond 0 (on, paddr, kernel thread 77)".
pub fn describe(k: &KdamondReading) -> String {
    let state = match &k.state {
        KdamondState::On => "on".to_string(),
        KdamondState::Off => "off".to_string(),
        KdamondState::Other(s) => s.clone(),
    };
    let ops: Vec<&str> = k.contexts.iter().filter_map(|c| c.operations.as_deref()).collect();
    let mut parts = vec![state];
    if !ops.is_empty() {
        parts.push(ops.join("+"));
    }
    if let Some(pid) = k.pid {
        parts.push(format!("kernel thread {pid}"));
    }
    format!("kdamond {} ({})", k.index, parts.join(", "))
}

/// Whether DAMON here can give numasleuth a kdamond of its own for a
/// process, judged from the tree alone (nothing is written): virtual
/// address operations where the kernel lists them, and no kdamond at all.
pub fn check_available(admin: &DamonAdmin) -> Result<(), DamonError> {
    if let Some(avail) = admin.avail_operations() {
        if !avail.iter().any(|o| o == "vaddr") {
            return Err(DamonError::NoVaddr {
                avail: avail.join(", "),
            });
        }
    }
    if admin.nr_kdamonds > 0 {
        let found: Vec<String> = admin.kdamonds.iter().map(describe).collect();
        return Err(DamonError::Busy {
            found: format!(
                "{} set up by something else: {}",
                if admin.nr_kdamonds == 1 {
                    "a kdamond is"
                } else {
                    "kdamonds are"
                },
                found.join("; ")
            ),
        });
    }
    Ok(())
}

/// Writes one value to a file of the tree under `root`, again while
/// DAMON's lock is busy. It goes through [`Root::write`], the one door
/// for every kernel file numasleuth writes (docs/security.md).
pub(crate) fn write(root: &Root, relative: &str, value: &str) -> Result<(), DamonError> {
    let result = retry_busy(|| root.write(relative, value), read_is_busy);
    result.map_err(|e| DamonError::Write {
        path: format!("/{relative}"),
        value: value.to_string(),
        message: write_cause(&e),
    })
}

/// The cause alone, worded as the system's (the message names the path
/// and value already). [`ReadError`] keeps no errno for a missing file or
/// a refusal, so they are worded from the errors open(2) gives for them
/// on sysfs: ENOENT, and EACCES for a file only root may write.
fn write_cause(error: &ReadError) -> String {
    match error {
        ReadError::NotFound { .. } => std::io::Error::from_raw_os_error(libc::ENOENT).to_string(),
        ReadError::PermissionDenied { .. } => std::io::Error::from_raw_os_error(libc::EACCES).to_string(),
        ReadError::Io { message, .. } | ReadError::Malformed { message, .. } => message.clone(),
    }
}

/// Numasleuth's kdamond, from set-up to removal.
pub struct Session {
    root: Root,
    pid: u32,
    kdamond_pid: Option<u32>,
    claim: Option<ClaimFile>,
    attrs: DamonAttrs,
    /// Whether `nr_kdamonds` was grown: only then is there anything to
    /// remove.
    created: bool,
    removed: bool,
}

/// Times an empty snapshot is asked again.
const EMPTY_RETRIES: u32 = 2;

/// The only kdamond index numasleuth uses (it starts only from none).
const INDEX: u64 = 0;

fn dir() -> String {
    format!("{KDAMONDS}/{INDEX}")
}

impl Session {
    /// Sets up kdamond 0 to watch `pid` with `attrs` and a `stat` scheme,
    /// and switches it on. `claim_dir` holds the claim a reaper reads.
    /// `regions` are the target's initial regions (see
    /// `analyze::hotpages_regions`), checked before anything is written;
    /// empty leaves DAMON's own three big regions.
    pub fn start(
        root: &Root,
        pid: u32,
        attrs: DamonAttrs,
        regions: &[(u64, u64)],
        claim_dir: PathBuf,
    ) -> Result<Session, DamonError> {
        if let Some(why) = crate::damon_regions::problem(regions, attrs.max_regions) {
            return Err(DamonError::Regions(why));
        }
        let found = admin(root)?;
        check_available(&found)?;
        let claim = ClaimFile::create(claim_dir, Claim::new(INDEX, pid)).map_err(DamonError::Claim)?;
        // From here on, Drop removes whatever was made.
        let mut session = Session {
            root: root.clone(),
            pid,
            kdamond_pid: None,
            claim: Some(claim),
            attrs,
            created: false,
            removed: false,
        };
        write(root, &format!("{KDAMONDS}/nr_kdamonds"), "1")?;
        session.created = true;
        session.configure()?;
        session.set_regions(regions)?;
        // A kernel without the file lists nothing; vaddr is then tried.
        let after = admin(root)?;
        if let Some(avail) = after.avail_operations() {
            if !avail.iter().any(|o| o == "vaddr") {
                return Err(DamonError::NoVaddr {
                    avail: avail.join(", "),
                });
            }
        }
        write(root, &format!("{}/state", dir()), "on")?;
        let kdamond = read_kdamond(root, INDEX)?;
        session.kdamond_pid = kdamond.pid;
        if let Some(claim) = &mut session.claim {
            claim.set_kdamond_pid(kdamond.pid).map_err(DamonError::Claim)?;
        }
        Ok(session)
    }

    fn configure(&self) -> Result<(), DamonError> {
        let ctx = format!("{}/contexts", dir());
        let a = &self.attrs;
        let u64max = u64::MAX.to_string();
        let files: Vec<(String, String)> = vec![
            (format!("{ctx}/nr_contexts"), "1".into()),
            (format!("{ctx}/0/operations"), "vaddr".into()),
            (
                format!("{ctx}/0/monitoring_attrs/intervals/sample_us"),
                a.sample_us.to_string(),
            ),
            (
                format!("{ctx}/0/monitoring_attrs/intervals/aggr_us"),
                a.aggr_us.to_string(),
            ),
            (
                format!("{ctx}/0/monitoring_attrs/intervals/update_us"),
                a.update_us.to_string(),
            ),
            (
                format!("{ctx}/0/monitoring_attrs/nr_regions/max"),
                a.max_regions.to_string(),
            ),
            (
                format!("{ctx}/0/monitoring_attrs/nr_regions/min"),
                a.min_regions.to_string(),
            ),
            (format!("{ctx}/0/targets/nr_targets"), "1".into()),
            (format!("{ctx}/0/targets/0/pid_target"), self.pid.to_string()),
            // One scheme that does nothing but count: every region matches,
            // and its tried regions are DAMON's regions.
            (format!("{ctx}/0/schemes/nr_schemes"), "1".into()),
            (format!("{ctx}/0/schemes/0/action"), "stat".into()),
        ];
        for (path, value) in &files {
            write(&self.root, path, value)?;
        }
        let pattern = format!("{ctx}/0/schemes/0/access_pattern");
        for range in ["sz", "nr_accesses", "age"] {
            write(&self.root, &format!("{pattern}/{range}/max"), &u64max)?;
            write(&self.root, &format!("{pattern}/{range}/min"), "0")?;
        }
        Ok(())
    }

    /// The target's initial regions, `targets/0/regions/N/{start,end}`.
    fn set_regions(&self, regions: &[(u64, u64)]) -> Result<(), DamonError> {
        if regions.is_empty() {
            return Ok(());
        }
        let dir = format!("{}/contexts/0/targets/0/regions", dir());
        write(&self.root, &format!("{dir}/nr_regions"), &regions.len().to_string())?;
        for (i, (start, end)) in regions.iter().enumerate() {
            write(&self.root, &format!("{dir}/{i}/start"), &start.to_string())?;
            write(&self.root, &format!("{dir}/{i}/end"), &end.to_string())?;
        }
        Ok(())
    }

    /// The process watched.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The kdamond's kernel thread, for its CPU time.
    pub fn kdamond_pid(&self) -> Option<u32> {
        self.kdamond_pid
    }

    pub fn attrs(&self) -> DamonAttrs {
        self.attrs
    }

    /// DAMON's regions now: asks the kdamond to fill its scheme's tried
    /// regions (it answers within about one aggregation interval) and
    /// reads them.
    pub fn snapshot(&mut self) -> Result<Vec<DamonRegion>, DamonError> {
        // A live target always has regions; an empty answer was seen once
        // in the 6.12 guest (the kernel's update raced something), and is
        // asked again.
        for _ in 0..EMPTY_RETRIES {
            let regions = self.snapshot_once()?;
            if !regions.is_empty() {
                return Ok(regions);
            }
        }
        self.snapshot_once()
    }

    fn snapshot_once(&mut self) -> Result<Vec<DamonRegion>, DamonError> {
        let state = format!("{}/state", dir());
        if let Err(e) = write(&self.root, &state, "update_schemes_tried_regions") {
            // vaddr's kdamond ends by itself when its target exits.
            let now = read_kdamond(&self.root, INDEX)?;
            if now.state != KdamondState::On {
                return Err(DamonError::TargetExited { pid: self.pid });
            }
            return Err(e);
        }
        Ok(damon::read_tried_regions(&self.root, INDEX, 0, 0)?)
    }

    /// Switches the kdamond off and removes it; errors are returned (and
    /// the claim kept, so a later run can finish the job).
    pub fn stop(mut self) -> Result<(), DamonError> {
        self.remove()
    }

    fn remove(&mut self) -> Result<(), DamonError> {
        if self.removed {
            return Ok(());
        }
        if !self.created {
            self.removed = true;
            return self
                .claim
                .take()
                .map_or(Ok(()), |c| c.release().map_err(DamonError::Claim));
        }
        let now = read_kdamond(&self.root, INDEX)?;
        if now.state == KdamondState::On {
            write(&self.root, &format!("{}/state", dir()), "off")?;
        }
        write(&self.root, &format!("{KDAMONDS}/nr_kdamonds"), "0")?;
        self.removed = true;
        if let Some(claim) = self.claim.take() {
            claim.release().map_err(DamonError::Claim)?;
        }
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // An error path or a panic: best effort, and the claim stays for
        // the reaper or the next run when this fails.
        let _ = self.remove();
    }
}

#[cfg(test)]
#[path = "damon_tests.rs"]
mod tests;
