//! `numasleuth serve`: a Prometheus/OpenMetrics exporter on 127.0.0.1:9464
//! by default, or `--textfile DIR` for node_exporter's textfile collector.
//! SIGTERM and SIGINT stop it cleanly with exit 0.

use std::fs::OpenOptions;
use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use numasleuth_kernel::Root;
use numasleuth_model::stop::Stop;
use numasleuth_report::openmetrics::CONTENT_TYPE;

use super::serve_args::{ServeArgs, PIDS_MAX};
use super::serve_collect::Collector;
use super::serve_http::Server;

/// The file node_exporter's textfile collector picks up.
pub const TEXTFILE_NAME: &str = "numasleuth.prom";

pub fn run(root: &Root, args: &ServeArgs) -> anyhow::Result<ExitCode> {
    if args.pids.len() > PIDS_MAX {
        bail!("{} --pid given; at most {PIDS_MAX}", args.pids.len());
    }
    // The shared stop: SIGINT/SIGTERM are taken by its own thread. They are
    // then blocked here, before the refresh and HTTP threads start, so
    // those threads inherit the mask and are never interrupted mid-call.
    let stop = super::stop_signal::stop_on_signals();
    block_stop_signals()?;
    // A single --once write would show counts of zero: not counted then.
    let count_opens = root.is_live() && !args.no_lock_opens && !args.once;
    let collector = Arc::new(
        Collector::new(
            root.clone(),
            args.pids.iter().map(super::pid_arg::ProcessRef::pid).collect(),
        )
        .with_lock_opens(count_opens),
    );
    if let Some(dir) = &args.textfile {
        return textfile(&collector, dir, args, &stop);
    }
    let default: SocketAddr = ServeArgs::DEFAULT_LISTEN.parse()?;
    let addr = args.listen.unwrap_or(default);
    let listener = TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr}"))?;
    let bound = listener.local_addr().context("cannot read the bound address")?;
    collector.refresh();
    let refresher = Arc::clone(&collector);
    let interval = args.interval;
    std::thread::Builder::new()
        .name("serve-refresh".into())
        .spawn(move || loop {
            std::thread::sleep(interval);
            refresher.refresh();
        })
        .context("cannot start the refresh thread")?;
    let handler = Arc::clone(&collector);
    let server = Server::start(listener, Arc::new(move || (handler.render(), CONTENT_TYPE)))
        .context("cannot start the HTTP workers")?;
    say!("numasleuth: serving http://{bound}/metrics (expensive checks refreshed every {interval:?})");
    if let Some(line) = collector.lock_opens_line() {
        say!("numasleuth: {line}");
    }
    if !bound.ip().is_loopback() {
        say!("numasleuth: note: {bound} is not a loopback address; anyone who can reach it can read the metrics");
    }
    while !stop.sleep(Duration::from_secs(3600)) {}
    server.stop();
    say!("numasleuth: stopped on {}", stopped_by());
    Ok(ExitCode::SUCCESS)
}

fn textfile(collector: &Collector, dir: &Path, args: &ServeArgs, stop: &Stop) -> anyhow::Result<ExitCode> {
    let meta = std::fs::metadata(dir).with_context(|| format!("cannot use --textfile {}", dir.display()))?;
    if !meta.is_dir() {
        bail!("--textfile {} is not a directory", dir.display());
    }
    if let Some(line) = collector.lock_opens_line() {
        say!("numasleuth: {line}");
    }
    if let Some(warning) = textfile_dir_warning(dir, &meta)? {
        say!("numasleuth: warning: {warning}");
    }
    loop {
        collector.refresh();
        write_atomically(dir, &collector.render())?;
        if args.once {
            say!("numasleuth: wrote {}", dir.join(TEXTFILE_NAME).display());
            return Ok(ExitCode::SUCCESS);
        }
        if stop.sleep(args.interval) {
            say!("numasleuth: stopped on {}", stopped_by());
            return Ok(ExitCode::SUCCESS);
        }
    }
}

/// A directory every user may write is refused: anyone could replace
/// `numasleuth.prom` between two writes, or add a `.prom` file of forged
/// metrics beside it (a sticky bit does not stop either: the file can be
/// made first under our name). A group-writable one, or one of another
/// user, is written with a warning: node_exporter setups often share a
/// group, and that group (or owner) can forge what we write.
fn textfile_dir_warning(dir: &Path, meta: &std::fs::Metadata) -> anyhow::Result<Option<String>> {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode() & 0o7777;
    let shown = numasleuth_kernel::error::escape(&dir.display().to_string());
    if mode & 0o002 != 0 {
        bail!(
            "--textfile {shown} (mode {mode:o}) can be written by every user, who could replace or forge \
             {TEXTFILE_NAME}; give a directory only the exporter's user can write, e.g. mode 755"
        );
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    Ok(if mode & 0o020 != 0 {
        Some(format!(
            "--textfile {shown} (mode {mode:o}) can be written by its group, who could replace {TEXTFILE_NAME}"
        ))
    } else if meta.uid() != euid && meta.uid() != 0 {
        Some(format!(
            "--textfile {shown} belongs to uid {}, who could replace {TEXTFILE_NAME}",
            meta.uid()
        ))
    } else {
        None
    })
}

/// Writes a temporary file next to the target and renames it over, so the
/// collector never reads half a file. The temporary name does not end in
/// `.prom`, so node_exporter ignores it; `create_new` (O_EXCL) never
/// follows a planted symlink.
fn write_atomically(dir: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = dir.join(format!(".{TEXTFILE_NAME}.{}.tmp", std::process::id()));
    let target = dir.join(TEXTFILE_NAME);
    let _ = std::fs::remove_file(&tmp);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&tmp)
        .with_context(|| format!("cannot create a file in --textfile {}", dir.display()))?;
    let result = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, &target));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", target.display()));
    }
    Ok(())
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
