//! numasleuth's exporter: `numasleuth serve` serves its metrics on
//! 127.0.0.1:9464 by default (OpenMetrics to a scraper that asks for it,
//! as Prometheus does, the Prometheus text format 0.0.4 otherwise), or
//! writes `--textfile DIR` in the 0.0.4 format, the only one
//! node_exporter's textfile collector reads.
//!
//! - [`http`]: the bounded HTTP server (one I/O thread, one render thread);
//! - [`collect`]: what one scrape reads and what is refreshed every interval;
//! - [`lock_opens`]: who opens the lock-taking kernel files, counted cheaply;
//! - [`run`]: the exporter's loop, until the shared stop is set.
//!
//! The CLI parses the arguments, installs the stop signals and prints; this
//! crate never prints, it hands each line for the person to `tell`.

pub mod collect;
pub mod http;
pub mod lock_opens;

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use numasleuth_kernel::Root;
use numasleuth_model::stop::Stop;
use numasleuth_report::openmetrics::BuildInfo;

pub use collect::{Collector, ProcessReader};

/// Why the exporter could not start or go on. Each message names what
/// failed and ends with the system's reason.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {error}")]
    Listen { addr: SocketAddr, error: std::io::Error },
    #[error("cannot read the bound address: {0}")]
    BoundAddress(std::io::Error),
    #[error("cannot start the HTTP workers: {0}")]
    Workers(std::io::Error),
    #[error("cannot start the refresh thread: {0}")]
    RefreshThread(std::io::Error),
    #[error("cannot use --textfile {dir}: {error}")]
    TextfileUnusable { dir: String, error: std::io::Error },
    #[error("--textfile {0} is not a directory")]
    TextfileNotADirectory(String),
    #[error(
        "--textfile {shown} (mode {mode:o}) can be written by every user, who could replace or forge \
         {TEXTFILE_NAME}; give a directory only the exporter's user can write, e.g. mode 755"
    )]
    TextfileWorldWritable { shown: String, mode: u32 },
    #[error("cannot write {path}: {error}")]
    Write { path: String, error: std::io::Error },
}

/// The file node_exporter's textfile collector picks up.
pub const TEXTFILE_NAME: &str = "numasleuth.prom";

/// What to export and how, as the CLI parsed it.
pub struct Options {
    pub listen: SocketAddr,
    /// Write `DIR/numasleuth.prom` instead of serving HTTP.
    pub textfile: Option<PathBuf>,
    /// With `textfile`: write once and return.
    pub once: bool,
    /// How often the expensive parts are refreshed (and the textfile written).
    pub interval: Duration,
    /// The processes whose memory per node is exported.
    pub pids: Vec<u32>,
    /// The CPUs on which to count opens of lock-taking kernel files, or why
    /// they are unknown; `None` when not counted.
    pub lock_open_cpus: Option<Result<Vec<u32>, lock_opens::CpusUnknown>>,
    pub build: BuildInfo,
}

/// Why [`run`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// `--once`: the file was written.
    Wrote(PathBuf),
    /// The shared stop was set.
    Stopped,
}

/// Exports until `stop` is set (or once); `tell` receives each line for
/// the person. A `--pid` process's memory model is the application
/// layer's (`numasleuth_app::process`), the one `inspect` and `doctor -p`
/// build.
pub fn run(root: &Root, options: &Options, stop: &Stop, tell: &dyn Fn(&str)) -> Result<Ended, ServeError> {
    run_with(root, options, app_process_reader(), stop, tell)
}

/// The application layer's reader of a process's memory model.
fn app_process_reader() -> Arc<ProcessReader> {
    Arc::new(|root: &Root, pid, topology: &_| numasleuth_app::process::model(root, pid, false, topology))
}

/// [`run`] with another reader of `--pid` processes (tests).
fn run_with(
    root: &Root,
    options: &Options,
    process: Arc<ProcessReader>,
    stop: &Stop,
    tell: &dyn Fn(&str),
) -> Result<Ended, ServeError> {
    let mut collector = Collector::new(root.clone(), options.pids.clone(), options.build.clone(), process);
    if let Some(cpus) = &options.lock_open_cpus {
        collector = collector.with_lock_opens(cpus.clone(), stop);
    }
    let collector = Arc::new(collector);
    if let Some(dir) = &options.textfile {
        return textfile(&collector, dir, options, stop, tell);
    }
    let listener = TcpListener::bind(options.listen).map_err(|error| ServeError::Listen {
        addr: options.listen,
        error,
    })?;
    let bound = listener.local_addr().map_err(ServeError::BoundAddress)?;
    collector.refresh();
    let interval = options.interval;
    // Not joined: a refresh under way (a large --pid's numa_maps walk) must
    // not hold up the exit; the thread ends at its next look at `stop`.
    let _refresher = refresh_every(Arc::clone(&collector), interval, stop.clone())?;
    let handler = Arc::clone(&collector);
    let server =
        http::Server::start(listener, Arc::new(move |format| handler.render(format))).map_err(ServeError::Workers)?;
    tell(&format!(
        "numasleuth: serving http://{bound}/metrics (expensive checks refreshed every {interval:?})"
    ));
    if let Some(line) = collector.lock_opens_line() {
        tell(&format!("numasleuth: {line}"));
    }
    if !bound.ip().is_loopback() {
        tell(&format!(
            "numasleuth: note: {bound} is not a loopback address; anyone who can reach it can read the metrics"
        ));
    }
    while !stop.sleep(Duration::from_secs(3600)) {}
    server.stop();
    Ok(Ended::Stopped)
}

/// Refreshes `collector`'s expensive parts every `interval` on a thread of
/// its own, until `stop` is requested.
fn refresh_every(collector: Arc<Collector>, interval: Duration, stop: Stop) -> Result<JoinHandle<()>, ServeError> {
    std::thread::Builder::new()
        .name("serve-refresh".into())
        .spawn(move || {
            while !stop.sleep(interval) {
                collector.refresh();
            }
        })
        .map_err(ServeError::RefreshThread)
}

fn textfile(
    collector: &Collector,
    dir: &Path,
    options: &Options,
    stop: &Stop,
    tell: &dyn Fn(&str),
) -> Result<Ended, ServeError> {
    let meta = std::fs::metadata(dir).map_err(|error| ServeError::TextfileUnusable {
        dir: dir.display().to_string(),
        error,
    })?;
    if !meta.is_dir() {
        return Err(ServeError::TextfileNotADirectory(dir.display().to_string()));
    }
    if let Some(line) = collector.lock_opens_line() {
        tell(&format!("numasleuth: {line}"));
    }
    if let Some(warning) = textfile_dir_warning(dir, &meta)? {
        tell(&format!("numasleuth: warning: {warning}"));
    }
    let target = dir.join(TEXTFILE_NAME);
    loop {
        collector.refresh();
        // node_exporter must never read half a file: it is replaced whole,
        // and the temporary name does not end in `.prom`, so it is never
        // picked up. It reads the 0.0.4 text only (OpenMetrics' `info` type
        // made it reject the whole file).
        let (text, _) = collector.render(http::Format::PrometheusText);
        numasleuth_kernel::atomic_write::write_atomic(&target, text.as_bytes(), 0o644).map_err(|error| {
            ServeError::Write {
                path: target.display().to_string(),
                error,
            }
        })?;
        if options.once {
            return Ok(Ended::Wrote(target));
        }
        if stop.sleep(options.interval) {
            return Ok(Ended::Stopped);
        }
    }
}

/// A directory every user may write is refused: anyone could replace
/// `numasleuth.prom` between two writes, or add a `.prom` file of forged
/// metrics beside it (a sticky bit does not stop either: the file can be
/// made first under our name). A group-writable one, or one of another
/// user, is written with a warning: node_exporter setups often share a
/// group, and that group (or owner) can forge what we write.
fn textfile_dir_warning(dir: &Path, meta: &std::fs::Metadata) -> Result<Option<String>, ServeError> {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode() & 0o7777;
    let shown = numasleuth_kernel::error::escape(&dir.display().to_string());
    if mode & 0o002 != 0 {
        return Err(ServeError::TextfileWorldWritable { shown, mode });
    }
    let euid = numasleuth_kernel::identity::euid();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    use numasleuth_kernel::procfs::process::ProcessError;
    use numasleuth_kernel::test_support::fixture;

    fn no_processes() -> Arc<ProcessReader> {
        Arc::new(|_: &Root, pid, _: &_| Err(ProcessError::Exited { pid }))
    }

    #[test]
    fn a_textfile_directory_anyone_may_write_is_refused_and_a_group_one_warned_about() {
        let dir = tempfile::tempdir().unwrap();
        let mode = |bits| {
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(bits)).unwrap();
            textfile_dir_warning(dir.path(), &std::fs::metadata(dir.path()).unwrap())
        };
        assert!(mode(0o777).is_err());
        assert!(mode(0o775).unwrap().unwrap().contains("written by its group"));
        assert_eq!(mode(0o755).unwrap(), None);
    }

    #[test]
    fn once_writes_the_textfile_whole_and_says_where() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let options = Options {
            listen: "127.0.0.1:0".parse().unwrap(),
            textfile: Some(dir.path().to_path_buf()),
            once: true,
            interval: Duration::from_secs(1),
            pids: vec![],
            lock_open_cpus: None,
            build: BuildInfo::default(),
        };
        let ended = run_with(
            &fixture("qemu-two-nodes"),
            &options,
            no_processes(),
            &Stop::new(),
            &|_| {},
        )
        .unwrap();
        let target = dir.path().join(TEXTFILE_NAME);
        assert_eq!(ended, Ended::Wrote(target.clone()));
        let text = std::fs::read_to_string(&target).unwrap();
        // The Prometheus text 0.0.4: no OpenMetrics end marker or types.
        assert!(!text.contains("# EOF") && !text.contains(" info\n"), "{text}");
        assert!(text.contains("# TYPE numasleuth_build_info gauge\n"), "{text}");
        assert!(text.contains("numasleuth_node_numa_hit_total{node=\"1\"}"), "{text}");
        // Nothing but the file is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn the_refresh_thread_refreshes_until_stopped_and_then_ends() {
        let collector = Arc::new(Collector::new(
            fixture("qemu-two-nodes"),
            vec![],
            BuildInfo::default(),
            no_processes(),
        ));
        let stop = Stop::new();
        let thread = refresh_every(Arc::clone(&collector), Duration::from_millis(10), stop.clone()).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while collector.scrape().refresh_age_seconds.is_none() {
            assert!(std::time::Instant::now() < deadline, "never refreshed");
            std::thread::sleep(Duration::from_millis(5));
        }
        stop.request();
        let asked = std::time::Instant::now();
        thread.join().unwrap();
        // Ended by the request, within a look at the token, not left looping.
        assert!(asked.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_scrape_reads_every_node_and_counts_what_it_could_not_read() {
        let collector = Collector::new(fixture("qemu-two-nodes"), vec![], BuildInfo::default(), no_processes());
        let e = collector.scrape();
        assert_eq!(e.nodes.iter().map(|n| n.node).collect::<Vec<_>>(), [0, 1]);
        assert!(e.nodes.iter().all(|n| n.total_bytes.is_some() && n.numa_hit.is_some()));
        assert!(e.reclaim.is_some());
        assert!(e.collect_errors.is_empty(), "{:?}", e.collect_errors);
        // The incident's capture kept no numastat: absent, not an error.
        let e = Collector::new(
            fixture("zone-reclaim-incident"),
            vec![],
            BuildInfo::default(),
            no_processes(),
        )
        .scrape();
        assert!(e.nodes.iter().all(|n| n.numa_hit.is_none() && n.free_bytes.is_some()));
        let empty = tempfile::tempdir().unwrap();
        let e = Collector::new(
            Root::directory(empty.path()).unwrap(),
            vec![],
            BuildInfo::default(),
            no_processes(),
        )
        .scrape();
        let sources: Vec<&str> = e.collect_errors.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(sources, ["zoneinfo", "vmstat"]);
    }
}
