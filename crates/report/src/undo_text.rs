//! `undo` for people: each value or page run put back, then, for page
//! moves, how the move back was verified and what was left alone. The cli
//! hands over what `change` did in these plain types, so this crate need
//! not link the one crate that writes to the system.

use numasleuth_parse::pages::Residency;

/// Pages left alone that are listed one by one; the rest are counted.
const LEFT_ALONE_SHOWN: usize = 20;

/// One kernel file value put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRestored {
    /// Relative to `/`, as the journal keeps it.
    pub path: String,
    /// What `--apply` wrote, and the value put back.
    pub applied: String,
    pub restored: String,
    /// The file held the old value already.
    pub already_restored: bool,
}

/// One run of pages sent back: it went from `original_node` to
/// `applied_node` under `--apply`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagesBack {
    pub pid: u32,
    pub pages: u64,
    pub address: u64,
    pub applied_node: u32,
    pub original_node: u32,
}

/// One page and where it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageNow {
    pub address: u64,
    pub residency: Residency,
}

/// What the move back did, counted in pages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PagesUndone {
    pub moves: Vec<PagesBack>,
    pub pages: u64,
    pub attempted: u64,
    pub verified: u64,
    pub revealed: u64,
    pub reveal_failed: Option<String>,
    pub not_moved: Vec<PageNow>,
    pub already_home_pages: u64,
    pub left_alone_pages: u64,
    pub left_alone: Vec<PageNow>,
}

/// The file values put back, last change first as they were undone.
pub fn files_text(restored: &[FileRestored]) -> String {
    let mut text = String::new();
    for change in restored {
        let verb = if change.already_restored {
            "already restored"
        } else {
            "restored"
        };
        text.push_str(&format!(
            "{verb} /{}: {} -> {}\n",
            change.path, change.applied, change.restored
        ));
    }
    text
}

/// The page runs sent back, then how it went.
pub fn pages_text(undone: &PagesUndone) -> String {
    let mut text = String::new();
    for m in &undone.moves {
        text.push_str(&format!(
            "process {}: {} page(s) at {:#x}: node {} -> node {}\n",
            m.pid, m.pages, m.address, m.applied_node, m.original_node
        ));
    }
    text.push_str(&pages_summary(undone));
    text
}

/// What the page is now, in words: read with pagemap, so a page never
/// touched is "not yet touched" and only a hole is "unmapped".
fn status(page: &PageNow) -> String {
    page.residency.describe()
}

fn pages_summary(o: &PagesUndone) -> String {
    let mut text = format!(
        "moved back {} of {} page(s), verified with move_pages: {} where they came from\n",
        o.attempted, o.pages, o.verified
    );
    if o.revealed > 0 {
        text.push_str(&format!(
            "{} page(s) were between NUMA-balancing hinting faults and were read once to end the fault, so they could move\n",
            o.revealed
        ));
    }
    if let Some(why) = &o.reveal_failed {
        text.push_str(&format!("note: {why}\n"));
    }
    for s in &o.not_moved {
        text.push_str(&format!("  {:#x}: did not move back, {}\n", s.address, status(s)));
    }
    if o.already_home_pages > 0 {
        text.push_str(&format!(
            "{} page(s) were already on the node they came from and were left there: the move never reached \
             them (it was killed or failed part way), or they were sent back since\n",
            o.already_home_pages
        ));
    }
    if o.left_alone_pages > 0 {
        text.push_str(&format!(
            "{} page(s) were on neither node of the journal (moved since, e.g. by AutoNUMA, or no longer \
             resident) and were left alone:\n",
            o.left_alone_pages
        ));
        for s in o.left_alone.iter().take(LEFT_ALONE_SHOWN) {
            text.push_str(&format!("  {:#x}: {}\n", s.address, status(s)));
        }
        if o.left_alone_pages > LEFT_ALONE_SHOWN as u64 {
            text.push_str(&format!(
                "  … and {} more\n",
                o.left_alone_pages - LEFT_ALONE_SHOWN as u64
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_say_which_were_already_restored() {
        let restored = [
            FileRestored {
                path: "proc/irq/24/smp_affinity_list".into(),
                applied: "2".into(),
                restored: "0-3".into(),
                already_restored: false,
            },
            FileRestored {
                path: "proc/irq/25/smp_affinity_list".into(),
                applied: "3".into(),
                restored: "0-3".into(),
                already_restored: true,
            },
        ];
        assert_eq!(
            files_text(&restored),
            "restored /proc/irq/24/smp_affinity_list: 2 -> 0-3\n\
             already restored /proc/irq/25/smp_affinity_list: 3 -> 0-3\n"
        );
    }

    #[test]
    fn pages_list_runs_then_what_was_verified_and_left_alone() {
        let page = |address, residency| PageNow { address, residency };
        let undone = PagesUndone {
            moves: vec![PagesBack {
                pid: 42,
                pages: 25,
                address: 0x7f00_0000_0000,
                applied_node: 1,
                original_node: 0,
            }],
            pages: 25,
            attempted: 2,
            verified: 1,
            not_moved: vec![page(0x7f00_0000_1000, Residency::Node(1))],
            already_home_pages: 1,
            left_alone_pages: 22,
            left_alone: (0..22)
                .map(|i| page(0x7f00_0001_0000 + i * 4096, Residency::SwappedOut))
                .collect(),
            ..PagesUndone::default()
        };
        let text = pages_text(&undone);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "process 42: 25 page(s) at 0x7f0000000000: node 1 -> node 0");
        assert_eq!(
            lines[1],
            "moved back 2 of 25 page(s), verified with move_pages: 1 where they came from"
        );
        assert!(
            lines[2].starts_with("  0x7f0000001000: did not move back, "),
            "{}",
            lines[2]
        );
        assert!(
            lines[3].starts_with("1 page(s) were already on the node"),
            "{}",
            lines[3]
        );
        assert!(lines[4].starts_with("22 page(s) were on neither node"), "{}", lines[4]);
        assert_eq!(lines.len(), 5 + LEFT_ALONE_SHOWN + 1, "{text}");
        assert_eq!(*lines.last().unwrap(), "  … and 2 more");
        assert!(!text.contains("hinting faults"), "nothing was revealed");
    }
}
