//! What the user may type for `serve`; nothing here touches the network or
//! the system (binding and the textfile directory are checked in
//! `serve.rs`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use numasleuth_app::limits;

/// `IP:PORT` only: no host names, so nothing is resolved and what is bound
/// is exactly what was typed. Port 0 picks a free port (the address bound
/// is printed).
fn listen(text: &str) -> Result<SocketAddr, String> {
    text.trim().parse().map_err(|_| {
        format!("`{text}` is not an IP:PORT address like 127.0.0.1:9464 or [::1]:9464 (host names are not resolved)")
    })
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve /metrics on this address. Default 127.0.0.1:9464 (loopback
    /// only); any other address is exposed to whoever can reach it.
    #[arg(long, value_name = "IP:PORT", value_parser = listen)]
    pub listen: Option<SocketAddr>,
    /// Also export this process's memory per node and remote ratio: a PID
    /// or a process name (repeatable, at most 64).
    #[arg(short = 'p', long = "pid", value_name = "PID", value_parser = super::pid_arg::process)]
    pub pids: Vec<super::pid_arg::ProcessRef>,
    /// How often the expensive parts (doctor checks, IRQs, --pid
    /// numa_maps) are refreshed, and how often --textfile is written:
    /// 100ms to 1h.
    #[arg(long, default_value = "15s", value_name = "INTERVAL", value_parser = limits::text::memwatch_interval)]
    pub interval: Duration,
    /// Write DIR/numasleuth.prom (atomically, in the Prometheus text format
    /// 0.0.4) for node_exporter's textfile collector every --interval
    /// instead of serving HTTP.
    #[arg(long, value_name = "DIR", conflicts_with = "listen")]
    pub textfile: Option<PathBuf>,
    /// With --textfile: write once and exit.
    #[arg(long, requires = "textfile")]
    pub once: bool,
    /// Do not count opens of lock-taking kernel files
    /// (numasleuth_lock_file_opens_total; counted by default where a
    /// kprobe or the filtered open tracepoint can, i.e. as root).
    #[arg(long)]
    pub no_lock_opens: bool,
}

impl ServeArgs {
    pub const DEFAULT_LISTEN: &'static str = "127.0.0.1:9464";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_takes_ip_and_port_only() {
        assert_eq!(listen("127.0.0.1:9464").unwrap().port(), 9464);
        assert!(listen("[::1]:0").is_ok());
        for bad in [
            "",
            "localhost:9464",
            "127.0.0.1",
            "127.0.0.1:65536",
            "1.2.3.4.5:80",
            ":80",
            "[::1",
        ] {
            assert!(listen(bad).is_err(), "{bad}");
        }
    }
}
