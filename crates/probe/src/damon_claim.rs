//! The claim numasleuth leaves while its kdamond exists, so that kdamond is
//! removed even when numasleuth cannot remove it itself.
//!
//! Why a claim: SIGKILL (or a second Ctrl-C, which exits at once, or an
//! abort) gives a process no chance to clean up, and a kdamond is a kernel
//! thread that would go on sampling the target forever. So cleanup after
//! such an end happens from outside, in two places that read this claim:
//! - a reaper process that the CLI starts before the kdamond exists; it
//!   waits for numasleuth's end on a pipe and then reaps (seconds after a
//!   SIGKILL);
//! - every later `hotpages` run reaps before it starts, for when the
//!   reaper was killed too.
//!
//! A claim names the kdamond index, the target pid, the kdamond's thread
//! pid once it runs, and its owner (pid and start time). A kdamond is
//! removed only when its owner is gone and the tree still matches the
//! claim; anything else is left as it is and the stale claim dropped.

use std::fs;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::sysfs::damon::{DamonAdmin, KdamondState, KDAMONDS};
use numasleuth_kernel::{untrusted, Root};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::damon::{self, DamonError};

/// Where claims live on the live system.
pub const DEFAULT_DIR: &str = "/run/numasleuth";
/// The claim's file name inside that directory.
pub const FILE_NAME: &str = "damon-kdamond.json";
const SCHEMA: &str = "numasleuth.damon-claim/1";
/// A claim is a few hundred bytes; anything longer is not one.
const MAX_CLAIM_BYTES: u64 = 4096;

/// Why a claim could not be written, removed or believed. Inner errors are
/// fields, not `#[source]`s: their text is in the message, and `{:#}` would
/// print it twice.
#[derive(Debug, Error)]
pub enum ClaimError {
    #[error("creating {}: {error}", dir.display())]
    CreateDir { dir: PathBuf, error: std::io::Error },
    #[error("{} exists: another numasleuth holds DAMON, or its kdamond could not be removed", path.display())]
    Exists { path: PathBuf },
    #[error("{0}")]
    Encode(serde_json::Error),
    #[error("writing {}: {error}", path.display())]
    Write { path: PathBuf, error: std::io::Error },
    #[error("removing {}: {error}", path.display())]
    Remove { path: PathBuf, error: std::io::Error },
    #[error("{}: {error}", path.display())]
    Read { path: PathBuf, error: std::io::Error },
    #[error("{}: not this user's own file, or writable by others: ignored", path.display())]
    NotOwn { path: PathBuf },
    #[error("{}: longer than {MAX_CLAIM_BYTES} bytes", path.display())]
    TooLong { path: PathBuf },
    #[error("{}: {error}", path.display())]
    Decode { path: PathBuf, error: serde_json::Error },
    #[error("{}: schema {schema:?} is not {SCHEMA}", path.display())]
    Schema { path: PathBuf, schema: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub schema: String,
    pub owner_pid: u32,
    /// The owner's start time (`stat` field 22), so a reused pid is not
    /// taken for the owner.
    pub owner_start_ticks: Option<u64>,
    pub kdamond_index: u64,
    pub target_pid: u32,
    /// The kdamond's kernel thread, once it runs.
    pub kdamond_pid: Option<u32>,
}

impl Claim {
    /// A claim by this process on kdamond `index` for `target_pid`.
    pub fn new(index: u64, target_pid: u32) -> Claim {
        let owner_pid = std::process::id();
        let owner_start_ticks = read_process_stat(&Root::live(), owner_pid)
            .ok()
            .and_then(|s| s.start_time_ticks);
        Claim {
            schema: SCHEMA.into(),
            owner_pid,
            owner_start_ticks,
            kdamond_index: index,
            target_pid,
            kdamond_pid: None,
        }
    }
}

/// A claim written to disk; released (deleted) once the kdamond is gone.
pub struct ClaimFile {
    path: PathBuf,
    claim: Claim,
}

impl ClaimFile {
    /// Writes `claim` into `dir` (made root-only if missing). An existing
    /// claim there is refused: another run holds DAMON, or one was not
    /// reaped.
    pub fn create(dir: PathBuf, claim: Claim) -> Result<ClaimFile, ClaimError> {
        if let Err(error) = fs::create_dir_all(&dir) {
            return Err(ClaimError::CreateDir { dir, error });
        }
        let _ = fs::set_permissions(&dir, fs::Permissions::from_mode(0o700));
        let path = dir.join(FILE_NAME);
        if fs::symlink_metadata(&path).is_ok() {
            return Err(ClaimError::Exists { path });
        }
        let file = ClaimFile { path, claim };
        file.write()?;
        Ok(file)
    }

    fn write(&self) -> Result<(), ClaimError> {
        let text = serde_json::to_string(&self.claim).map_err(ClaimError::Encode)?;
        numasleuth_kernel::atomic_write::write_atomic(&self.path, text.as_bytes(), 0o600).map_err(|error| {
            ClaimError::Write {
                path: self.path.clone(),
                error,
            }
        })
    }

    pub fn set_kdamond_pid(&mut self, pid: Option<u32>) -> Result<(), ClaimError> {
        self.claim.kdamond_pid = pid;
        self.write()
    }

    /// The kdamond is gone: the claim goes too.
    pub fn release(self) -> Result<(), ClaimError> {
        fs::remove_file(&self.path).map_err(|error| ClaimError::Remove { path: self.path, error })
    }
}

/// Reads a claim file: a regular file (no link) of this user, capped.
pub fn read_claim(path: &Path) -> Result<Option<Claim>, ClaimError> {
    let path_buf = || path.to_path_buf();
    let (file, meta) = match untrusted::open_regular(path, false) {
        Ok(opened) => opened,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(ClaimError::Read {
                path: path_buf(),
                error,
            })
        }
    };
    let euid = numasleuth_kernel::identity::euid();
    if meta.uid() != euid || meta.mode() & 0o022 != 0 {
        return Err(ClaimError::NotOwn { path: path_buf() });
    }
    let mut text = String::new();
    file.take(MAX_CLAIM_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|error| ClaimError::Read {
            path: path_buf(),
            error,
        })?;
    if text.len() as u64 > MAX_CLAIM_BYTES {
        return Err(ClaimError::TooLong { path: path_buf() });
    }
    let claim: Claim = serde_json::from_str(&text).map_err(|error| ClaimError::Decode {
        path: path_buf(),
        error,
    })?;
    if claim.schema != SCHEMA {
        return Err(ClaimError::Schema {
            path: path_buf(),
            schema: claim.schema,
        });
    }
    Ok(Some(claim))
}

/// What reaping decided about one claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The owner still runs: its kdamond is its own business.
    OwnerAlive,
    /// The kdamond is the claimed one: switch it off (when on) and remove.
    Remove { switch_off: bool },
    /// The tree no longer matches: touch nothing, drop the stale claim.
    Stale(String),
}

/// Decides from the claim, the tree and whether the owner lives.
pub fn decide(claim: &Claim, admin: &DamonAdmin, owner_alive: bool) -> Decision {
    if owner_alive {
        return Decision::OwnerAlive;
    }
    let index = claim.kdamond_index;
    if admin.nr_kdamonds != index + 1 {
        return Decision::Stale(format!(
            "nr_kdamonds is {}, not {}: the kdamonds changed since",
            admin.nr_kdamonds,
            index + 1
        ));
    }
    let Some(k) = admin.kdamonds.get(index as usize) else {
        return Decision::Stale(format!("kdamond {index} is not listed"));
    };
    let context = k.contexts.first();
    let target = context.and_then(|c| c.target_pids.first().copied().flatten());
    let ops_ok = context.is_none_or(|c| c.operations.as_deref().is_none_or(|o| o == "vaddr"));
    let ours = match k.state {
        KdamondState::On => {
            target == Some(claim.target_pid) && ops_ok && claim.kdamond_pid.is_none_or(|p| k.pid == Some(p))
        }
        // Off (its target exited, or it was never switched on): nothing
        // runs; it is ours if nothing else was configured into it.
        _ => target.is_none_or(|t| t == claim.target_pid) && ops_ok,
    };
    if ours {
        Decision::Remove {
            switch_off: k.state == KdamondState::On,
        }
    } else {
        Decision::Stale(format!(
            "{} no longer matches the claim (target {}, kernel thread {:?})",
            damon::describe(k),
            claim.target_pid,
            claim.kdamond_pid
        ))
    }
}

/// What [`reap`] did, in words for a warning; `None` when there was no
/// claim.
pub fn reap(root: &Root, dir: &Path) -> Result<Option<String>, DamonError> {
    let path = dir.join(FILE_NAME);
    let Some(claim) = read_claim(&path).map_err(DamonError::Claim)? else {
        return Ok(None);
    };
    let alive = read_process_stat(root, claim.owner_pid)
        .is_ok_and(|s| s.start_time_ticks == claim.owner_start_ticks && s.state != 'Z');
    let admin = damon::admin(root)?;
    let said = match decide(&claim, &admin, alive) {
        Decision::OwnerAlive => return Ok(None),
        Decision::Remove { switch_off } => {
            let dir = format!("{KDAMONDS}/{}", claim.kdamond_index);
            if switch_off {
                damon::write(root, &format!("{dir}/state"), "off")?;
            }
            damon::write(
                root,
                &format!("{KDAMONDS}/nr_kdamonds"),
                &claim.kdamond_index.to_string(),
            )?;
            format!(
                "removed kdamond {} left by numasleuth process {} (it watched process {})",
                claim.kdamond_index, claim.owner_pid, claim.target_pid
            )
        }
        Decision::Stale(why) => format!("dropped a stale DAMON claim: {why}"),
    };
    if let Err(error) = fs::remove_file(&path) {
        return Err(ClaimError::Remove { path, error }.into());
    }
    Ok(Some(said))
}
