use std::collections::{BTreeMap, BTreeSet};

use ratatui_core::backend::TestBackend;
use ratatui_core::style::Color;
use ratatui_core::terminal::Terminal;

use super::*;

fn proc_row(pid: u32, remote: Option<u64>, node_moves: u64) -> ProcRow {
    ProcRow {
        pid,
        comm: format!("proc{pid}"),
        threads: 2,
        thread_nodes: BTreeSet::from([0]),
        bytes_by_node: Some(BTreeMap::from([(0, 4096), (1, remote.unwrap_or(0))])),
        remote_bytes: remote,
        cpu_moves: 0,
        node_moves,
        cpu_percent: None,
    }
}

fn frame() -> Frame {
    let node = |node: u32, free: u64| NodeRow {
        node,
        cpus: if node == 0 { "0-1".into() } else { "2-3".into() },
        cpu_util_percent: Some(42.0),
        free_bytes: Some(free),
        min_bytes: Some(1 << 20),
        low_bytes: Some(2 << 20),
        high_bytes: Some(3 << 20),
        numa_miss_per_sec: Some(16.0),
        numa_foreign_per_sec: None,
    };
    Frame {
        nodes: vec![node(0, 8 << 30), node(1, (3 << 20) / 2)],
        kswapd_scan_per_sec: Some(33087.0),
        direct_scan_per_sec: Some(0.0),
        allocstall_per_sec: None,
        procs: vec![
            proc_row(7, Some(1 << 30), 0),
            proc_row(3, None, 5),
            proc_row(9, Some(1 << 20), 1),
        ],
        notes: vec![],
    }
}

fn state(color: bool) -> ViewState {
    ViewState {
        sort: SortKey::Remote,
        selected: 0,
        color,
        inspect: None,
    }
}

fn render(width: u16, height: u16, frame: &Frame, state: &ViewState) -> (String, Vec<Color>) {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| draw(f, frame, state)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    let mut text = String::new();
    for y in 0..height {
        for x in 0..width {
            text.push_str(buffer[(x, y)].symbol());
        }
        text.push('\n');
    }
    let colors = buffer.content.iter().map(|c| c.fg).collect();
    (text, colors)
}

#[test]
fn nodes_reclaim_and_processes_are_shown() {
    let mut f = frame();
    sort(&mut f.procs, SortKey::Remote);
    let (text, _) = render(120, 20, &f, &state(true));
    assert!(text.contains("node 0") && text.contains("node 1"), "{text}");
    assert!(text.contains("42%") && text.contains("8 GiB"), "{text}");
    assert!(text.contains("below low"), "{text}");
    assert!(text.contains("16/s"), "{text}");
    assert!(text.contains("reclaim (machine-wide): kswapd scan 33087/s"), "{text}");
    let order: Vec<usize> = ["proc7", "proc9", "proc3"]
        .iter()
        .map(|p| text.find(p).unwrap())
        .collect();
    assert!(order[0] < order[1] && order[1] < order[2], "{text}");
}

#[test]
fn sort_keys_cycle_and_order() {
    let mut procs = frame().procs;
    sort(&mut procs, SortKey::NodeMoves);
    assert_eq!(procs.iter().map(|p| p.pid).collect::<Vec<_>>(), [3, 9, 7]);
    sort(&mut procs, SortKey::Pid);
    assert_eq!(procs.iter().map(|p| p.pid).collect::<Vec<_>>(), [3, 7, 9]);
    let mut key = SortKey::Remote;
    let mut seen = vec![];
    for _ in 0..6 {
        seen.push(key.label());
        key = key.next();
    }
    assert_eq!(key, SortKey::Remote);
    assert_eq!(
        seen,
        [
            "remote memory",
            "resident memory",
            "CPU usage",
            "node moves",
            "CPU moves",
            "PID"
        ]
    );
}

#[test]
fn cpu_usage_sorts_the_busiest_first_and_the_unknown_last() {
    let mut procs = frame().procs;
    let figures = [(7, None), (3, Some(0.0)), (9, Some(250.0))];
    for (p, (pid, cpu)) in procs.iter_mut().zip(figures) {
        p.pid = pid;
        p.cpu_percent = cpu;
    }
    procs.push(ProcRow {
        cpu_percent: Some(12.5),
        ..proc_row(4, None, 0)
    });
    sort(&mut procs, SortKey::CpuUsage);
    assert_eq!(procs.iter().map(|p| p.pid).collect::<Vec<_>>(), [9, 4, 3, 7]);
    assert_eq!(SortKey::from_key('u'), Some(SortKey::CpuUsage));
    assert_eq!(SortKey::CpuUsage.effective(&procs), SortKey::CpuUsage);
}

#[test]
fn the_cpu_column_and_its_sort_key_show() {
    let mut f = frame();
    f.procs[0].cpu_percent = Some(250.0);
    f.procs[2].cpu_percent = Some(0.5);
    let mut s = state(false);
    s.sort = SortKey::CpuUsage;
    sort(&mut f.procs, s.sort);
    for width in [60, 80, 200] {
        let (text, _) = render(width, 24, &f, &s);
        let lines = trimmed(&text);
        assert!(
            lines[0].contains("by CPU usage  r m u n c p s: sort"),
            "{width}: {text}"
        );
        let header = lines.iter().find(|l| l.starts_with("PID")).unwrap();
        assert!(header.contains("CPU%"), "{width}: {text}");
        // 250% first, 0.5% next, the process not yet measured last.
        let row = |pid: &str| lines.iter().position(|l| l.starts_with(pid)).unwrap();
        assert!(row("7 ") < row("9 ") && row("9 ") < row("3 "), "{width}: {text}");
        assert!(lines[row("7 ")].contains(" 250 "), "{width}: {text}");
        assert!(lines[row("9 ")].contains(" 0.5 "), "{width}: {text}");
        assert!(lines[row("3 ")].contains(" - "), "{width}: {text}");
    }
    // Every key the title names picks a sort, and every sort has a key.
    let keys: Vec<char> = SORT_KEYS
        .split(':')
        .next()
        .unwrap()
        .chars()
        .filter(|c| *c != ' ')
        .collect();
    let picked: Vec<SortKey> = keys.iter().filter_map(|&c| SortKey::from_key(c)).collect();
    assert_eq!(picked.len(), keys.len() - 1, "all but s, which cycles: {keys:?}");
    let mut key = SortKey::Remote;
    for _ in 0..picked.len() {
        assert!(picked.contains(&key), "{key:?} has no key in {SORT_KEYS}");
        key = key.next();
    }
}

#[test]
fn at_80_columns_the_title_keeps_the_keys_when_the_sort_fell_back() {
    let title = heading(SortKey::Resident, SortKey::Remote, 80);
    assert_eq!(
        title,
        "top, by resident memory (nothing remote)  r m u n c p s: sort  q: quit"
    );
    let title = heading(SortKey::Remote, SortKey::Remote, 80);
    assert_eq!(
        title,
        "numasleuth top, by remote memory  r m u n c p s: sort  Enter: inspect  q: quit"
    );
    let title = heading(SortKey::Remote, SortKey::Remote, 60);
    assert_eq!(title, "top, by remote memory  r m u n c p s: sort  q: quit");
    assert_eq!(
        heading(SortKey::Remote, SortKey::Remote, 40),
        "numasleuth top, by remote memory"
    );
}

#[test]
fn no_color_means_no_colour() {
    let (_, colors) = render(120, 20, &frame(), &state(false));
    assert!(colors.iter().all(|c| *c == Color::Reset));
    let (_, colors) = render(120, 20, &frame(), &state(true));
    assert!(colors.iter().any(|c| *c != Color::Reset));
}

#[test]
fn small_terminals_get_a_message_not_a_garbled_table() {
    for (w, h) in [(MIN_WIDTH - 1, 30), (120, 11), (1, 1), (10, 3)] {
        let (text, _) = render(w, h, &frame(), &state(true));
        let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if w >= 20 {
            assert!(flat.contains("terminal too small"), "{w}x{h}: {flat}");
        }
        assert!(!flat.contains("node 0"), "{w}x{h}: {flat}");
    }
    let (text, _) = render(MIN_WIDTH, MIN_HEIGHT, &frame(), &state(true));
    for whole in ["node 0", "1.5 MiB", "below low", "proc9"] {
        assert!(text.contains(whole), "{whole}: {text}");
    }
}

#[test]
fn an_80_by_24_terminal_shows_every_column_whole() {
    let (text, _) = render(80, 24, &frame(), &state(false));
    for whole in [
        "q: quit",
        "stalls -",
        "MIN/LOW/HIGH",
        "1M/2M/3M",
        "FOREIGN",
        "CPU%",
        "MEMORY BY NODE",
        "N0=4 KiB N1=1 GiB",
        "remote = resident memory on nodes none of its threads run on",
    ] {
        assert!(text.contains(whole), "{whole}: {text}");
    }
}

#[test]
fn watermarks_are_short() {
    assert_eq!(short_bytes(Some(1536 << 10)), "1.5M");
    assert_eq!(short_bytes(Some(8 << 30)), "8G");
    assert_eq!(short_bytes(Some(1000)), "1000");
    assert_eq!(short_bytes(Some(200 << 20)), "200M");
    assert_eq!(short_bytes(None), "?");
}

#[test]
fn the_inspect_view_replaces_the_list() {
    let mut s = state(false);
    s.inspect = Some(Inspect {
        pid: 7,
        text: "line one\nline two\nline three\n".into(),
        scroll: 1,
    });
    let (text, _) = render(100, 12, &frame(), &s);
    assert!(text.contains("inspect 7") && text.contains("line two"), "{text}");
    assert!(!text.contains("line one") && !text.contains("node 0"), "{text}");
}

/// Lines of `text` (a rendered screen) with trailing blanks removed.
fn trimmed(text: &str) -> Vec<&str> {
    text.lines().map(str::trim_end).collect()
}

/// Issue 36: at 60 columns top only said it needed 80.
#[test]
fn sixty_columns_keep_the_telling_columns() {
    let mut f = frame();
    sort(&mut f.procs, SortKey::Remote);
    let (text, _) = render(60, 24, &f, &state(false));
    assert!(!text.contains("too small"), "{text}");
    for whole in [
        "node 1",
        "1.5 MiB",
        "below low",
        "PID",
        "COMM",
        "CPU%",
        "RESIDENT",
        "REMOTE",
        "proc7",
        "1 GiB",
    ] {
        assert!(text.contains(whole), "{whole}: {text}");
    }
    assert!(trimmed(&text).iter().all(|l| l.chars().count() <= 60), "{text}");
}

/// Issue 36: at 200 columns the space right of column 80 stayed blank.
/// A process on eight nodes shows every node's share, and the node table
/// spreads over the width.
#[test]
fn two_hundred_columns_use_the_width() {
    let mut f = frame();
    let eight: BTreeMap<u32, u64> = (0..8).map(|n| (n, (u64::from(n) + 1) << 30)).collect();
    f.procs[0].bytes_by_node = Some(eight);
    sort(&mut f.procs, SortKey::Remote);
    let whole = "N0=1 GiB N1=2 GiB N2=3 GiB N3=4 GiB N4=5 GiB N5=6 GiB N6=7 GiB N7=8 GiB";
    let (narrow, _) = render(80, 24, &f, &state(false));
    assert!(!narrow.contains(whole), "{narrow}");
    let (wide, _) = render(200, 50, &f, &state(false));
    assert!(wide.contains(whole), "{wide}");
    let procs_header = trimmed(&wide).into_iter().find(|l| l.starts_with("PID")).unwrap();
    for column in ["THR", "CPU%", "NODE MV", "CPU MV"] {
        assert!(procs_header.contains(column), "{column}: {wide}");
    }
    let header = trimmed(&wide)
        .into_iter()
        .find(|l| l.starts_with("NODE"))
        .unwrap()
        .to_string();
    assert!(header.chars().count() > 150, "{header}");
}

/// Issue 36: on one node nothing is remote, and the default sort showed
/// the lowest PIDs; it falls back to resident memory and says so.
#[test]
fn with_nothing_remote_the_default_sort_is_resident_memory() {
    let mut f = frame();
    for (p, resident) in f.procs.iter_mut().zip([4096u64, 1 << 30, 1 << 20]) {
        p.remote_bytes = Some(0);
        p.bytes_by_node = Some(BTreeMap::from([(0, resident)]));
    }
    sort(&mut f.procs, SortKey::Remote);
    assert_eq!(f.procs.iter().map(|p| p.pid).collect::<Vec<_>>(), [3, 9, 7]);
    let (text, _) = render(100, 24, &f, &state(false));
    assert!(text.contains("by resident memory (nothing remote)"), "{text}");
    assert_eq!(SortKey::from_key('m'), Some(SortKey::Resident));
    assert_eq!(SortKey::from_key('c'), Some(SortKey::CpuMoves));
    let (text, _) = render(80, 24, &f, &state(false));
    assert!(
        text.contains("by resident memory (nothing remote)  r m u n c p s: sort  q: quit"),
        "{text}"
    );
}
