//! Drawing `top`: pure functions from a [`Frame`] and the view state to
//! ratatui widgets, so they are tested on ratatui's in-memory backend.
//! Colour only where NO_COLOR is unset; selection is shown by reversing,
//! which needs no colour. Each table keeps the columns that fit the
//! terminal, most telling first, and a wide one spreads them; a terminal
//! smaller than the narrowest layout gets a one-line message instead of a
//! garbled table.

use crate::format::{bytes, optional_bytes};
use ratatui_core::layout::{Constraint, Flex, Layout, Rect};
use ratatui_core::style::{Color, Modifier, Style};
use ratatui_core::text::Line;
use ratatui_widgets::{
    paragraph::{Paragraph, Wrap},
    table::{Row, Table, TableState},
};

use numasleuth_model::top::{Frame, NodeRow, ProcRow};

use crate::top_columns::{fitting, NODE_COLUMNS, PROC_COLUMNS};

/// Below this, not even a node's CPU and free memory fit; from here on
/// each table keeps the columns that fit, most telling first.
pub const MIN_WIDTH: u16 = 40;
pub const MIN_HEIGHT: u16 = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Remote,
    Resident,
    /// CPU% (`u`, usage: `c` was already CPU moves).
    CpuUsage,
    NodeMoves,
    CpuMoves,
    Pid,
}

impl SortKey {
    pub fn next(self) -> SortKey {
        match self {
            SortKey::Remote => SortKey::Resident,
            SortKey::Resident => SortKey::CpuUsage,
            SortKey::CpuUsage => SortKey::NodeMoves,
            SortKey::NodeMoves => SortKey::CpuMoves,
            SortKey::CpuMoves => SortKey::Pid,
            SortKey::Pid => SortKey::Remote,
        }
    }

    /// The key that picks this sort directly (`s` cycles).
    pub fn from_key(key: char) -> Option<SortKey> {
        match key {
            'r' => Some(SortKey::Remote),
            'm' => Some(SortKey::Resident),
            'u' => Some(SortKey::CpuUsage),
            'n' => Some(SortKey::NodeMoves),
            'c' => Some(SortKey::CpuMoves),
            'p' => Some(SortKey::Pid),
            _ => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SortKey::Remote => "remote memory",
            SortKey::Resident => "resident memory",
            SortKey::CpuUsage => "CPU usage",
            SortKey::NodeMoves => "node moves",
            SortKey::CpuMoves => "CPU moves",
            SortKey::Pid => "PID",
        }
    }

    /// The sort actually used: by remote memory when some process has
    /// any, else (one node, or nothing remote) by resident memory, which
    /// would otherwise be a list of the lowest PIDs, all at 0 B.
    pub fn effective(self, procs: &[ProcRow]) -> SortKey {
        let any_remote = procs.iter().any(|p| p.remote_bytes.is_some_and(|b| b > 0));
        match self {
            SortKey::Remote if !any_remote => SortKey::Resident,
            key => key,
        }
    }
}

/// Largest first; ties (and unknown figures, last) by PID.
pub fn sort(procs: &mut [ProcRow], key: SortKey) {
    let key = key.effective(procs);
    procs.sort_by(|a, b| {
        let order = match key {
            SortKey::Remote => b.remote_bytes.cmp(&a.remote_bytes),
            SortKey::Resident => b.resident_bytes().cmp(&a.resident_bytes()),
            SortKey::CpuUsage => most_cpu_first(a.cpu_percent, b.cpu_percent),
            SortKey::NodeMoves => b.node_moves.cmp(&a.node_moves),
            SortKey::CpuMoves => b.cpu_moves.cmp(&a.cpu_moves),
            SortKey::Pid => std::cmp::Ordering::Equal,
        };
        order.then(a.pid.cmp(&b.pid))
    });
}

/// Highest CPU% first; a process without one yet (its first refresh)
/// after every process that has one, even at 0%.
fn most_cpu_first(a: Option<f64>, b: Option<f64>) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Some(a), Some(b)) => b.total_cmp(&a),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

pub struct Inspect {
    pub pid: u32,
    pub text: String,
    pub scroll: u16,
}

pub struct ViewState {
    pub sort: SortKey,
    pub selected: usize,
    pub color: bool,
    pub inspect: Option<Inspect>,
}

pub fn draw(f: &mut ratatui_core::terminal::Frame, frame: &Frame, state: &ViewState) {
    let area = f.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = format!(
            "terminal too small for top: need {MIN_WIDTH}x{MIN_HEIGHT}, have {}x{} (q quits)",
            area.width, area.height
        );
        f.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
        return;
    }
    if let Some(inspect) = &state.inspect {
        draw_inspect(f, area, inspect);
        return;
    }
    let title_style = if state.color {
        Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
    } else {
        Style::new().add_modifier(Modifier::BOLD)
    };
    let node_height = frame.nodes.len() as u16 + 1;
    let [title, nodes, reclaim, procs, notes] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(node_height.min(area.height / 2)),
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    let heading = heading(state.sort.effective(&frame.procs), state.sort, area.width);
    f.render_widget(Paragraph::new(heading).style(title_style), title);
    f.render_widget(node_table(&frame.nodes, state.color, area.width), nodes);
    let rate = |r: Option<f64>| r.map_or("-".to_string(), |v| format!("{v:.0}/s"));
    let (kswapd, direct, stalls) = (
        rate(frame.kswapd_scan_per_sec),
        rate(frame.direct_scan_per_sec),
        rate(frame.allocstall_per_sec),
    );
    let reclaim_line = if area.width >= 80 {
        format!("reclaim (machine-wide): kswapd scan {kswapd}  direct scan {direct}  stalls {stalls}")
    } else {
        format!("reclaim: kswapd {kswapd}  direct {direct}  stalls {stalls}")
    };
    f.render_widget(Paragraph::new(reclaim_line), reclaim);
    let mut table_state = TableState::default().with_selected(Some(state.selected));
    f.render_stateful_widget(
        proc_table(&frame.procs, title_style, area.width),
        procs,
        &mut table_state,
    );
    let note = frame.notes.first().cloned().unwrap_or_else(|| {
        let meaning = if area.width >= 80 {
            "remote = resident memory on nodes none of its threads run on"
        } else {
            "remote = memory off its threads' nodes"
        };
        format!("{} processes; {meaning}", frame.procs.len())
    });
    // Notes quote kernel errors; ratatui drops controls but not bidi marks.
    f.render_widget(Paragraph::new(numasleuth_parse::error::escape(&note)), notes);
}

/// The sort keys, as the title names them: every one [`SortKey::from_key`]
/// takes, and `s`, which cycles.
const SORT_KEYS: &str = "r m u n c p s: sort";

/// The title line: the sort in use (and why, when it fell back), then the
/// keys that fit, most needed first, in their usual order.
fn heading(by: SortKey, chosen: SortKey, width: u16) -> String {
    let fallback = if by == chosen { "" } else { " (nothing remote)" };
    let title = format!("top, by {}{fallback}", by.label());
    let named = format!("numasleuth {title}");
    let levels: [&[&str]; 3] = [
        &[SORT_KEYS, "↑↓: select", "Enter: inspect", "q: quit"],
        &[SORT_KEYS, "Enter: inspect", "q: quit"],
        &[SORT_KEYS, "q: quit"],
    ];
    let mut lines: Vec<String> = levels
        .iter()
        .map(|keys| format!("{named}  {}", keys.join("  ")))
        .collect();
    // The sort and quit keys matter more than the program's name, which
    // the user typed: at 80 columns "(nothing remote)" leaves no room for
    // both.
    lines.push(format!("{title}  {}", levels[2].join("  ")));
    lines
        .into_iter()
        .find(|line| line.chars().count() <= usize::from(width))
        .unwrap_or(named)
}

/// Where a node's free memory stands against its watermarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeState {
    BelowMin,
    BelowLow,
    BelowHigh,
    Ok,
    /// Free memory not read.
    Unknown,
}

impl NodeState {
    fn of(n: &NodeRow) -> NodeState {
        match (n.free_bytes, n.min_bytes, n.low_bytes, n.high_bytes) {
            (Some(f), Some(min), _, _) if f <= min => NodeState::BelowMin,
            (Some(f), _, Some(low), _) if f <= low => NodeState::BelowLow,
            (Some(f), _, _, Some(high)) if f <= high => NodeState::BelowHigh,
            (Some(_), ..) => NodeState::Ok,
            _ => NodeState::Unknown,
        }
    }

    fn label(self) -> &'static str {
        match self {
            NodeState::BelowMin => "BELOW MIN",
            NodeState::BelowLow => "below low",
            NodeState::BelowHigh => "below high",
            NodeState::Ok => "ok",
            NodeState::Unknown => "?",
        }
    }

    /// Worth red: under a watermark.
    fn alarming(self) -> bool {
        !matches!(self, NodeState::Ok | NodeState::Unknown)
    }
}

/// `1.5M`, `8G`: the watermarks, three to a cell, in binary units.
fn short_bytes(value: Option<u64>) -> String {
    let Some(value) = value else {
        return "?".into();
    };
    let mut scaled = value as f64;
    let mut unit = "";
    for next in ["K", "M", "G", "T", "P"] {
        if scaled < 1024.0 {
            break;
        }
        scaled /= 1024.0;
        unit = next;
    }
    if scaled < 10.0 && scaled.fract() >= 0.05 {
        format!("{scaled:.1}{unit}")
    } else {
        format!("{scaled:.0}{unit}")
    }
}

fn node_table(nodes: &[NodeRow], color: bool, width: u16) -> Table<'static> {
    let kept = fitting(&NODE_COLUMNS, width);
    let rate = |r: Option<f64>| r.map_or("-".to_string(), |v| format!("{v:.0}/s"));
    let rows = nodes.iter().map(|n| {
        let state = NodeState::of(n);
        let style = if color && state.alarming() {
            Style::new().fg(Color::Red)
        } else {
            Style::new()
        };
        let watermarks = format!(
            "{}/{}/{}",
            short_bytes(n.min_bytes),
            short_bytes(n.low_bytes),
            short_bytes(n.high_bytes)
        );
        let cells = [
            format!("node {}", n.node),
            n.cpus.clone(),
            n.cpu_util_percent.map_or("-".into(), |u| format!("{u:.0}%")),
            optional_bytes(n.free_bytes),
            watermarks,
            state.label().to_string(),
            rate(n.numa_miss_per_sec),
            rate(n.numa_foreign_per_sec),
        ];
        Row::new(kept.iter().map(|&c| cells[c].clone()).collect::<Vec<_>>()).style(style)
    });
    let header =
        Row::new(kept.iter().map(|&c| NODE_COLUMNS[c].header)).style(Style::new().add_modifier(Modifier::BOLD));
    // Wider than its columns, the table spreads them over the width.
    let widths = kept.iter().map(|&c| Constraint::Length(NODE_COLUMNS[c].width));
    Table::new(rows, widths).header(header).flex(Flex::SpaceBetween)
}

fn proc_table(procs: &[ProcRow], header_style: Style, width: u16) -> Table<'_> {
    let kept = fitting(&PROC_COLUMNS, width);
    let rows = procs.iter().map(|p| {
        let nodes = numasleuth_parse::human_list(&p.thread_nodes.iter().copied().collect::<Vec<_>>());
        let on_nodes = p.bytes_by_node.as_ref().map_or("?".to_string(), |b| {
            b.iter()
                .map(|(node, size)| format!("N{node}={}", bytes(*size)))
                .collect::<Vec<_>>()
                .join(" ")
        });
        let cells = [
            p.pid.to_string(),
            numasleuth_parse::error::quote(&p.comm),
            p.threads.to_string(),
            cpu_percent(p.cpu_percent),
            nodes,
            optional_bytes(p.resident_bytes()),
            optional_bytes(p.remote_bytes),
            p.node_moves.to_string(),
            p.cpu_moves.to_string(),
            on_nodes,
        ];
        Row::new(kept.iter().map(|&c| cells[c].clone()).collect::<Vec<_>>())
    });
    let header = Row::new(kept.iter().map(|&c| PROC_COLUMNS[c].header)).style(header_style);
    let last = PROC_COLUMNS.len() - 1;
    let widths = kept.iter().map(|&c| match c {
        c if c == last => Constraint::Min(PROC_COLUMNS[c].width),
        c => Constraint::Length(PROC_COLUMNS[c].width),
    });
    Table::new(rows, widths)
        .header(header)
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
}

/// As top's %CPU: `0.5`, `99.5`, then whole numbers (`1600` for sixteen
/// busy CPUs) so five columns hold any machine up to 999 CPUs; `-` before
/// a process's second refresh.
fn cpu_percent(value: Option<f64>) -> String {
    match value {
        Some(v) if v < 99.95 => format!("{v:.1}"),
        Some(v) => format!("{v:.0}"),
        None => "-".into(),
    }
}

fn draw_inspect(f: &mut ratatui_core::terminal::Frame, area: Rect, inspect: &Inspect) {
    let [title, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let heading = format!("inspect {} — ↑↓ PgUp PgDn: scroll  Esc: back  q: quit", inspect.pid);
    f.render_widget(
        Paragraph::new(Line::from(heading)).style(Style::new().add_modifier(Modifier::BOLD)),
        title,
    );
    f.render_widget(Paragraph::new(inspect.text.as_str()).scroll((inspect.scroll, 0)), body);
}

#[cfg(test)]
#[path = "top_view_tests.rs"]
mod tests;
