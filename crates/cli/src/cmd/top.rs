//! `numasleuth top`: a live terminal view, refreshed every second, of each
//! node (CPU utilisation, free memory against the watermarks, NUMA
//! fallback, reclaim) and of the processes with the most remote memory,
//! CPU use or thread moves; Enter shows the selected process's `inspect`.
//!
//! Wiring only: the frames come from `app::top`, the drawing from
//! `report::top_view`; this file holds the terminal loop (keys, and a new
//! frame when one is due).

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Args;
use numasleuth_kernel::Root;
use numasleuth_model::stop::Stop;
use numasleuth_model::Topology;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::DefaultTerminal;

use numasleuth_app::top::{Collector, Frame};
use numasleuth_report::top_view::{draw, sort, Inspect, SortKey, ViewState};

const REFRESH: Duration = Duration::from_secs(1);

#[derive(Debug, Args)]
pub struct TopArgs {
    /// Show only these processes (repeat the flag, at most 64) instead of
    /// every process.
    /// A PID or a process name.
    #[arg(short = 'p', long, value_name = "PID", value_parser = super::pid_arg::process)]
    pub pid: Vec<super::pid_arg::ProcessRef>,
}

pub fn run(root: &Root, args: &TopArgs) -> anyhow::Result<ExitCode> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        bail!(
            "top needs a terminal (stdin and stdout must be a TTY); for scripts use memwatch --json or inspect --json"
        );
    }
    if !root.is_live() {
        bail!("top watches the live system; --root names a snapshot (use doctor, topo or inspect on it)");
    }
    let topology = super::topology(root)?;
    let page_bytes = numasleuth_kernel::pages::page_size_bytes();
    let mut collector = Collector::new(
        root.clone(),
        &topology,
        page_bytes,
        args.pid.iter().map(super::pid_arg::ProcessRef::pid).collect(),
    );
    let mut state = ViewState {
        sort: SortKey::Remote,
        selected: 0,
        color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        inspect: None,
    };
    // SIGTERM (and SIGINT, though raw mode turns ^C into a key) end the
    // loop, so the terminal is restored rather than left in raw mode.
    let stop = super::stop_signal::stop_on_signals();
    let mut terminal = ratatui::try_init().context("cannot set up the terminal")?;
    let result = event_loop(&mut terminal, root, &topology, &mut collector, &mut state, &stop);
    ratatui::restore();
    result.map(|()| ExitCode::SUCCESS)
}

fn event_loop(
    terminal: &mut DefaultTerminal,
    root: &Root,
    topology: &Topology,
    collector: &mut Collector,
    state: &mut ViewState,
    stop: &Stop,
) -> anyhow::Result<()> {
    let mut frame = collector.refresh();
    let mut due = Instant::now() + REFRESH;
    loop {
        sort(&mut frame.procs, state.sort);
        state.selected = state.selected.min(frame.procs.len().saturating_sub(1));
        terminal.draw(|f| draw(f, &frame, state)).context("cannot draw")?;
        if stop.requested() {
            return Ok(());
        }
        // Short polls so a SIGTERM is noticed within a quarter second.
        let wait = due
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(250));
        if event::poll(wait).context("cannot read the terminal")? {
            if let Event::Key(key) = event::read().context("cannot read the terminal")? {
                if key.kind == KeyEventKind::Press && !on_key(key, root, topology, &frame, state) {
                    return Ok(());
                }
            }
        }
        if Instant::now() >= due {
            frame = collector.refresh();
            due = Instant::now() + REFRESH;
        }
    }
}

/// Applies one key; `false` means quit.
fn on_key(key: KeyEvent, root: &Root, topology: &Topology, frame: &Frame, state: &mut ViewState) -> bool {
    let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
    if key.code == KeyCode::Char('q') || ctrl_c {
        return false;
    }
    if let Some(inspect) = &mut state.inspect {
        match key.code {
            KeyCode::Esc | KeyCode::Backspace | KeyCode::Left => state.inspect = None,
            KeyCode::Up | KeyCode::Char('k') => inspect.scroll = inspect.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => inspect.scroll = inspect.scroll.saturating_add(1),
            KeyCode::PageUp => inspect.scroll = inspect.scroll.saturating_sub(20),
            KeyCode::PageDown => inspect.scroll = inspect.scroll.saturating_add(20),
            _ => {}
        }
        return true;
    }
    match key.code {
        KeyCode::Esc => return false,
        KeyCode::Char('s') => state.sort = state.sort.next(),
        KeyCode::Up | KeyCode::Char('k') => state.selected = state.selected.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => state.selected = state.selected.saturating_add(1),
        KeyCode::Enter => {
            if let Some(process) = frame.procs.get(state.selected) {
                state.inspect = Some(Inspect {
                    pid: process.pid,
                    text: inspect_text(root, topology, process.pid),
                    scroll: 0,
                });
            }
        }
        KeyCode::Char(c) => {
            if let Some(key) = SortKey::from_key(c) {
                state.sort = key;
            }
        }
        _ => {}
    }
    true
}

/// The same model and report as `numasleuth inspect PID`.
fn inspect_text(root: &Root, topology: &Topology, pid: u32) -> String {
    match super::inspect::model(root, pid, false, topology) {
        Ok(model) => {
            let findings = numasleuth_analyze::process::findings(&model, topology);
            // The pane's border takes a column on each side.
            let width = crate::output::width(crate::output::Stream::Stdout).saturating_sub(2);
            let layout = numasleuth_report::layout::TextLayout::new(width, false);
            layout.wrap(&numasleuth_report::inspect_text::render(
                &model, &findings, false, &layout,
            ))
        }
        Err(e) => format!("cannot inspect {pid}: {e:#}"),
    }
}
