//! `top` in a real terminal: tmux runs it in a detached session of a fixed
//! size, the test reads the screen with capture-pane, drives it with
//! send-keys, and reads the exit code from a file the session's shell
//! writes. tmux must be installed (scripts/test-all installs it); without
//! it these tests fail rather than pass unseen.

use crate::common;

use std::path::PathBuf;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use common::{numasleuth, stderr};

/// A private tmux server (its own socket) and a sleeper process, both
/// ended when the test ends, however it ends.
struct Session {
    socket: String,
    dir: tempfile::TempDir,
    sleeper: Child,
}

impl Session {
    fn start(name: &str, size: (u16, u16), env: &[&str], top_args: &str) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let sleeper = Command::new("sleep").arg("600").spawn().unwrap();
        let socket = format!("numasleuth-{name}-{}", std::process::id());
        let session = Session { socket, dir, sleeper };
        let bin = assert_cmd::cargo::cargo_bin("numasleuth");
        let top_args = top_args.replace("SLEEPER", &session.sleeper.id().to_string());
        let command = format!(
            "'{}' top {top_args}; echo $? > '{}'; sleep 600",
            bin.display(),
            session.exit_file().display()
        );
        let mut tmux = session.tmux();
        tmux.args([
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &size.0.to_string(),
            "-y",
            &size.1.to_string(),
        ]);
        for var in env {
            tmux.args(["-e", var]);
        }
        let status = tmux
            .arg(command)
            .env_remove("NO_COLOR")
            .status()
            .expect("tmux must be installed");
        assert!(status.success(), "tmux new-session failed");
        session
    }

    fn tmux(&self) -> Command {
        let mut command = Command::new("tmux");
        command.args(["-L", &self.socket, "-f", "/dev/null"]);
        command
    }

    fn exit_file(&self) -> PathBuf {
        self.dir.path().join("exit")
    }

    fn screen(&self, escapes: bool) -> String {
        let mut command = self.tmux();
        command.args(["capture-pane", "-p", "-t", "t"]);
        if escapes {
            command.arg("-e");
        }
        let output = command.output().unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Polls the screen until every text appears; generous, since the
    /// machine may be busy (this is a wait, not a timing assertion).
    fn wait_for(&self, texts: &[&str]) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen(false);
            if texts.iter().all(|t| screen.contains(t)) {
                return screen;
            }
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "never saw {texts:?}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let status = self.tmux().args(["send-keys", "-t", "t"]).args(keys).status().unwrap();
        assert!(status.success());
    }

    fn exit_code(&self) -> String {
        let started = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(self.exit_file()) {
                if text.ends_with('\n') {
                    return text.trim().to_string();
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "top did not exit; screen:\n{}",
                self.screen(false)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").status();
        let _ = self.sleeper.kill();
        let _ = self.sleeper.wait();
    }
}

#[test]
fn top_shows_nodes_and_a_known_process_inspects_it_and_quits_with_q() {
    let s = Session::start("main", (160, 40), &[], "--pid SLEEPER --pid 1");
    let pid = s.sleeper.id().to_string();
    let screen = s.wait_for(&["node 0", "MIN/LOW/HIGH", "reclaim (machine-wide)", &pid, "sleep"]);
    let row = screen.lines().find(|l| l.starts_with(&pid)).unwrap();
    assert!(row.contains("sleep") && row.contains("N0="), "{row}");
    // Sorting by remote memory by default, or by resident memory while
    // nothing is remote (one node); `s` cycles, a letter picks a key.
    assert!(
        screen.contains("by remote memory") || screen.contains("by resident memory (nothing remote)"),
        "{screen}"
    );
    s.keys(&["s"]);
    s.wait_for(&["by resident memory"]);
    // `u` sorts by CPU%, which the sleeper has from the second refresh on:
    // `-` before, 0.0 after (it sleeps).
    s.keys(&["u"]);
    let started = Instant::now();
    loop {
        let screen = s.wait_for(&["by CPU usage", "r m u n c p s: sort", "CPU%"]);
        let row = screen.lines().find(|l| l.starts_with(&pid)).unwrap().to_string();
        if row.contains(" 0.0 ") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{screen}");
        std::thread::sleep(Duration::from_millis(100));
    }
    s.keys(&["n"]);
    s.wait_for(&["by node moves"]);
    // Sort by PID puts 1 first and the sleeper second: select it, inspect it.
    s.keys(&["s", "s"]);
    s.wait_for(&["by PID"]);
    s.keys(&["Down", "Enter"]);
    s.wait_for(&[
        &format!("inspect {pid}"),
        &format!("process {pid} (sleep)"),
        "resident memory",
    ]);
    s.keys(&["Escape"]);
    s.wait_for(&["MIN/LOW/HIGH"]);
    s.keys(&["q"]);
    assert_eq!(s.exit_code(), "0");
}

/// A colour SGR sequence: 30-37/90-97 foregrounds or 38;… extended ones.
fn has_colour(screen: &str) -> bool {
    sgr_params(screen).iter().any(|params| {
        params
            .split(';')
            .any(|p| matches!(p.parse::<u32>(), Ok(30..=38) | Ok(90..=97)))
    })
}

/// The parameter lists of every `ESC [ … m` in the text.
fn sgr_params(text: &str) -> Vec<String> {
    text.split("\u{1b}[")
        .skip(1)
        .filter_map(|rest| rest.split_once('m').map(|(params, _)| params.to_string()))
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit() || b == b';'))
        .collect()
}

#[test]
fn no_color_is_honoured_and_colour_is_used_without_it() {
    let coloured = Session::start("colour", (120, 30), &[], "--pid SLEEPER");
    coloured.wait_for(&["node 0"]);
    assert!(has_colour(&coloured.screen(true)), "{:?}", coloured.screen(true));
    coloured.keys(&["q"]);
    assert_eq!(coloured.exit_code(), "0");
    let plain = Session::start("plain", (120, 30), &["NO_COLOR=1"], "--pid SLEEPER");
    plain.wait_for(&["node 0"]);
    assert!(!has_colour(&plain.screen(true)), "{:?}", plain.screen(true));
    plain.keys(&["q"]);
    assert_eq!(plain.exit_code(), "0");
}

#[test]
fn a_small_terminal_gets_a_message_and_still_quits() {
    let s = Session::start("small", (50, 10), &[], "");
    s.wait_for(&["terminal too small for top"]);
    s.keys(&["q"]);
    assert_eq!(s.exit_code(), "0");
}

#[test]
fn without_a_terminal_top_says_it_needs_one() {
    let output: Output = numasleuth().arg("top").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.starts_with("numasleuth: error: top needs a terminal"), "{err}");
    assert_eq!(err.lines().count(), 1);
    assert!(output.stdout.is_empty());
    let many: Vec<String> = (1..=65).flat_map(|p| ["--pid".to_string(), p.to_string()]).collect();
    let output = numasleuth().arg("top").args(&many).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("65 --pid given; at most 64"),
        "{}",
        stderr(&output)
    );
}

/// The numasleuth process whose parent is `parent` (the pane's shell).
fn child_numasleuth(parent: u32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (comm, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
        let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
        (comm == "numasleuth" && ppid == parent).then_some(pid)
    })
}

#[test]
fn sigterm_ends_top_and_gives_the_terminal_back() {
    let s = Session::start("term", (120, 30), &[], "--pid SLEEPER");
    s.wait_for(&["node 0"]);
    let pane = s
        .tmux()
        .args(["list-panes", "-t", "t", "-F", "#{pane_pid}"])
        .output()
        .unwrap();
    let shell: u32 = String::from_utf8_lossy(&pane.stdout).trim().parse().unwrap();
    let top = child_numasleuth(shell).expect("top's process");
    // SAFETY: a signal to a process this test started (through tmux).
    assert_eq!(unsafe { libc::kill(top as i32, libc::SIGTERM) }, 0);
    assert_eq!(s.exit_code(), "0");
    // The alternate screen is gone: the pane shows the shell's screen again.
    assert!(!s.screen(false).contains("node 0"), "{}", s.screen(false));
}
