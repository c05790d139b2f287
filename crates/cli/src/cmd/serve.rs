//! `numasleuth serve`: wiring only. The exporter itself (HTTP server,
//! scrape assembly, textfile writer) is the `numasleuth-serve` crate.
//! SIGTERM and SIGINT stop it cleanly with exit 0.

use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::bail;
use numasleuth_kernel::Root;
use numasleuth_report::openmetrics::BuildInfo;
use numasleuth_serve::{Ended, Options};

use super::serve_args::ServeArgs;

pub fn run(root: &Root, args: &ServeArgs) -> anyhow::Result<ExitCode> {
    // The shared stop: SIGINT/SIGTERM are taken by its own thread. They are
    // then blocked here, before the refresh and HTTP threads start, so
    // those threads inherit the mask and are never interrupted mid-call.
    let stop = super::stop_signal::stop_on_signals();
    block_stop_signals()?;
    // A single --once write would show counts of zero: not counted then.
    let count_opens = root.is_live() && !args.no_lock_opens && !args.once;
    let default: SocketAddr = ServeArgs::DEFAULT_LISTEN.parse()?;
    let options = Options {
        listen: args.listen.unwrap_or(default),
        textfile: args.textfile.clone(),
        once: args.once,
        interval: args.interval,
        pids: args.pids.iter().map(super::pid_arg::ProcessRef::pid).collect(),
        lock_open_cpus: count_opens.then(|| {
            super::topology(root)
                .map(|t| t.online_cpus().iter().collect())
                .map_err(|e| numasleuth_serve::lock_opens::CpusUnknown(format!("{e:#}")))
        }),
        build: BuildInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: env!("NUMASLEUTH_GIT_COMMIT").to_string(),
        },
    };
    match numasleuth_serve::run(root, &options, &stop, &|line| say!("{line}"))? {
        Ended::Wrote(path) => say!("numasleuth: wrote {}", path.display()),
        Ended::Stopped => say!("numasleuth: stopped on {}", stopped_by()),
    }
    Ok(ExitCode::SUCCESS)
}

fn stopped_by() -> &'static str {
    match super::stop_signal::last_signal() {
        Some(libc::SIGTERM) => "SIGTERM",
        Some(libc::SIGINT) => "SIGINT",
        _ => "a signal",
    }
}

/// Blocks SIGINT and SIGTERM in this thread and every thread it starts
/// later; the shared stop's signal thread, started before, still takes
/// them.
fn block_stop_signals() -> anyhow::Result<()> {
    // SAFETY: sigset_t is plain data that sigemptyset initialises; the
    // calls only read and write this local set and this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        if rc != 0 {
            bail!("cannot block SIGTERM: {}", std::io::Error::from_raw_os_error(rc));
        }
    }
    Ok(())
}
