//! Splitting a static mapping into its sections, page by page.
//!
//! Each page goes to every section it holds (listed) and is counted once,
//! under the section covering most of it. Pages the NUMA-balancing
//! scanner has marked PROT_NONE are resident (pagemap says present) yet
//! invisible to move_pages on 6.1-era kernels until the process touches
//! them; numa_maps still counts them. When numa_maps' count left over after
//! the visible pages sits on one node, that node is theirs, exactly; when
//! it does not (several nodes, or the counts moved between the reads), or
//! when pagemap could not tell hidden pages apart and move_pages saw fewer
//! pages than numa_maps counts, the mapping falls back to numa_maps' count
//! for the whole mapping, given to the section covering most of it.

use crate::symbol::SectionSpan;
use numasleuth_parse::pages::Residency;

use super::{ProcessBuilder, StaticVma};
use crate::process::{total, Accuracy, KindGroup, MappingUsage, MemoryKind, NodeCounts};

/// A piece's listed counts, counted counts and pages between hinting faults.
type PieceCounts = (NodeCounts, NodeCounts, u64);

/// The node of the hidden pages, if numa_maps pins it down: what numa_maps
/// counts beyond the visible pages is exactly `hidden` pages on one node.
fn hidden_node(numa_maps: &NodeCounts, visible: &NodeCounts, hidden: u64) -> Option<u32> {
    let mut left = numa_maps.iter().filter_map(|(node, &count)| {
        let extra = count.saturating_sub(visible.get(node).copied().unwrap_or(0));
        (extra > 0).then_some((*node, extra))
    });
    match (left.next(), left.next()) {
        (Some((node, extra)), None) if extra == hidden => Some(node),
        _ => None,
    }
}

impl ProcessBuilder {
    pub(super) fn split(&mut self, s: StaticVma) {
        let mut visible = NodeCounts::new();
        let mut hidden = 0u64;
        for state in s.page_nodes.iter().flatten() {
            match state {
                Residency::Node(n) => *visible.entry(*n).or_default() += 1,
                Residency::HintingFault => hidden += 1,
                _ => {}
            }
        }
        let hidden_to = if hidden > 0 {
            hidden_node(&s.usage.pages_by_node, &visible, hidden)
        } else {
            None
        };
        let trusted = self.per_page_trusted(&s, &visible, hidden, hidden_to);
        let statuses = s.page_nodes.as_deref().filter(|_| trusted);
        let Some(statuses) = statuses else {
            self.split_per_vma |= s.page_nodes.is_some();
            self.split_per_mapping(&s);
            return;
        };
        let (mut listed, rest, rest_hidden) = self.count_per_page(&s, statuses, hidden_to);
        for (i, piece) in s.pieces.iter().enumerate() {
            let counts = std::mem::take(&mut listed[i]);
            self.push_piece(&s.usage, piece, counts, Accuracy::PerPage);
        }
        if total(&rest) > 0 {
            let usage = MappingUsage {
                kind: if s.usage.kind.group() == KindGroup::WritableStatic {
                    MemoryKind::Anon
                } else {
                    s.usage.kind
                },
                section: None,
                counted_pages_by_node: rest.clone(),
                pages_by_node: rest,
                hinting_fault_pages: rest_hidden,
                accuracy: Accuracy::PerPage,
                ..s.usage
            };
            self.fold(&usage, usage.kind, &usage.pages_by_node);
            self.listed.push(usage);
        }
    }

    /// Whether `s`'s per-page answers can be counted per page: not when
    /// pages hidden between hinting faults cannot be given a node, nor when
    /// move_pages saw fewer pages than numa_maps counts. Each "no" leaves a
    /// note saying why the mapping is counted per mapping.
    fn per_page_trusted(&mut self, s: &StaticVma, visible: &NodeCounts, hidden: u64, hidden_to: Option<u32>) -> bool {
        let range = format!("{:#x}-{:#x}", s.usage.start, s.usage.end);
        let resident = s.usage.resident_pages();
        let seen = total(visible);
        match &s.page_nodes {
            None => false,
            Some(_) if hidden > 0 => match hidden_to {
                Some(node) => {
                    self.hidden_pages_note.push(format!(
                        "{hidden} resident page(s) in {range} are between NUMA-balancing hinting faults: move_pages \
                         cannot see or move them until the process touches them again (pagemap: present; numa_maps \
                         puts them on node {node}); `numasleuth move --apply` reads each once to end the fault, \
                         then moves it"
                    ));
                    true
                }
                None => {
                    self.hidden_pages_note.push(format!(
                        "{hidden} resident page(s) in {range} are between NUMA-balancing hinting faults and numa_maps \
                         does not say which node each is on: that mapping is counted per mapping"
                    ));
                    false
                }
            },
            // Without pagemap a hidden page looks untouched: a shortfall
            // against numa_maps is the only sign.
            Some(_) if seen < resident => {
                self.hidden_pages_note.push(format!(
                    "move_pages saw {seen} of the {resident} resident pages numa_maps counts in {range} (pages \
                     between NUMA-balancing hinting faults are invisible to it on some kernels): that mapping is \
                     counted per mapping"
                ));
                false
            }
            Some(_) => true,
        }
    }
    /// Each page to every piece it overlaps (`.0`, as listed) and to the
    /// one it overlaps most (`.1`, counted once, `.2` hidden); pages in no
    /// piece are the rest, with how many of them are hidden.
    fn count_per_page(
        &self,
        s: &StaticVma,
        statuses: &[Residency],
        hidden_to: Option<u32>,
    ) -> (Vec<PieceCounts>, NodeCounts, u64) {
        let page = self.base_page_bytes;
        let mut listed: Vec<PieceCounts> = vec![Default::default(); s.pieces.len()];
        let mut rest = NodeCounts::new();
        let mut rest_hidden = 0;
        for (index, state) in statuses.iter().enumerate() {
            let (node, is_hidden) = match (*state, hidden_to) {
                (Residency::Node(node), _) => (node, false),
                (Residency::HintingFault, Some(node)) => (node, true),
                _ => continue,
            };
            let start = s.query.start + index as u64 * page;
            let overlap = |p: &SectionSpan| p.end.min(start + page).saturating_sub(p.start.max(start));
            let owner = (0..s.pieces.len()).max_by_key(|&i| overlap(&s.pieces[i]));
            if owner.is_none_or(|i| overlap(&s.pieces[i]) == 0) {
                *rest.entry(node).or_default() += 1;
                rest_hidden += u64::from(is_hidden);
                continue;
            }
            for (i, piece) in s.pieces.iter().enumerate() {
                if overlap(piece) > 0 {
                    *listed[i].0.entry(node).or_default() += 1;
                    if Some(i) == owner {
                        *listed[i].1.entry(node).or_default() += 1;
                        listed[i].2 += u64::from(is_hidden);
                    }
                }
            }
        }
        (listed, rest, rest_hidden)
    }

    /// Per-VMA: numa_maps' whole count to the section covering most of it.
    fn split_per_mapping(&mut self, s: &StaticVma) {
        let owner = (0..s.pieces.len())
            .max_by_key(|&i| s.pieces[i].end - s.pieces[i].start)
            .unwrap_or(0);
        for (i, piece) in s.pieces.iter().enumerate() {
            let pages = if i == owner {
                s.usage.pages_by_node.clone()
            } else {
                NodeCounts::new()
            };
            self.push_piece(&s.usage, piece, (pages.clone(), pages, 0), Accuracy::PerVma);
        }
    }

    fn push_piece(&mut self, vma: &MappingUsage, piece: &SectionSpan, counts: PieceCounts, accuracy: Accuracy) {
        let (shown, owned, hinting_fault_pages) = counts;
        let usage = MappingUsage {
            start: piece.start,
            end: piece.end,
            kind: MemoryKind::from_class(piece.class),
            object: Some(piece.object.clone()),
            section: Some(piece.section.clone()),
            perms: vma.perms,
            policy: vma.policy.clone(),
            pages_by_node: shown,
            counted_pages_by_node: owned,
            hinting_fault_pages,
            // Per-page counts come from move_pages, in base pages; a
            // per-mapping split keeps numa_maps' count, in the mapping's.
            page_size_bytes: match accuracy {
                Accuracy::PerVma => vma.page_size_bytes,
                _ => self.base_page_bytes,
            },
            accuracy,
        };
        self.fold(&usage, usage.kind, &usage.counted_pages_by_node);
        self.listed.push(usage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hidden_node_is_what_numa_maps_counts_beyond_the_visible() {
        let counts = |pairs: &[(u32, u64)]| pairs.iter().copied().collect::<NodeCounts>();
        // 6 on node 1 per numa_maps, 2 seen there: the 4 hidden are on 1.
        assert_eq!(hidden_node(&counts(&[(1, 6)]), &counts(&[(1, 2)]), 4), Some(1));
        assert_eq!(hidden_node(&counts(&[(0, 1), (1, 4)]), &counts(&[(0, 1)]), 4), Some(1));
        // Left over on two nodes: no single answer.
        assert_eq!(hidden_node(&counts(&[(0, 2), (1, 2)]), &NodeCounts::new(), 4), None);
        // The counts do not add up (the process changed between reads).
        assert_eq!(hidden_node(&counts(&[(1, 3)]), &NodeCounts::new(), 4), None);
    }
}
