//! Golden test of `hotpages`: one hand-built run on two nodes, text at each
//! width and JSON. Its regions carry means, shares and scores that the
//! document rounds, a region with no placement and one no mapping covers,
//! so a change in any number's format shows. `INSTA_UPDATE=always cargo
//! test -p numasleuth-report --test it golden_hotpages` rewrites it after
//! a deliberate change.

use crate::common;

use std::collections::BTreeMap;

use common::golden_all;
use numasleuth_model::hotpages::{DamonSnapshot, HotRegion, HotpagesRaw, PagePlacement, RegionName};
use numasleuth_model::process::MemoryKind;
use numasleuth_model::stop::RunSpan;
use numasleuth_parse::sysfs::damon::DamonAttrs;
use numasleuth_report::export::TextJson;
use numasleuth_report::hotpages_json::{self, Parts};
use numasleuth_report::hotpages_text;

fn raw() -> HotpagesRaw {
    let snapshot = |at_ms| DamonSnapshot { at_ms, regions: vec![] };
    HotpagesRaw {
        pid: 4242,
        attrs: DamonAttrs {
            sample_us: 5_000,
            aggr_us: 100_000,
            update_us: 1_000_000,
            min_regions: 10,
            max_regions: 1_000,
        },
        snapshots: vec![snapshot(100), snapshot(200), snapshot(300)],
        span: RunSpan {
            ran_s: 3.0,
            planned_s: Some(3.0),
            stopped_early: false,
            steps: None,
        },
        kdamond_pid: Some(77),
        kdamond_cpu_ticks: Some((100, 106)),
        ticks_per_sec: 100,
        ended_early: None,
    }
}

/// A hot `.bss` region whose pages are all on node 1, away from the threads.
fn remote_bss() -> HotRegion {
    HotRegion {
        start: 0x55d4_c5e0_0000,
        end: 0x55d4_c5e4_0000,
        nr_accesses: 17,
        age: 12,
        nr_accesses_mean: 16.666_666,
        access_percent: 83.333_333,
        placement: Some(PagePlacement {
            sampled_pages: 64,
            pages_by_node: BTreeMap::from([(1, 60)]),
            hinting_fault_pages: 3,
            other_pages: 1,
        }),
        bytes_by_node: BTreeMap::from([(1, 245_760)]),
        remote_bytes: Some(245_760),
        score: 0.833_333_3,
        name: Some(RegionName {
            kind: Some(MemoryKind::Bss),
            object: Some("/usr/bin/app".into()),
            section: Some(".bss".into()),
            symbols: vec!["counters".into(), "totals".into()],
            symbols_not_shown: 4,
            stack_of_tid: None,
        }),
    }
}

/// A warm region no mapping covers any more, its placement unknown.
fn unmapped() -> HotRegion {
    HotRegion {
        start: 0x7f00_0000_0000,
        end: 0x7f00_0020_0000,
        nr_accesses: 4,
        age: 3,
        nr_accesses_mean: 3.125,
        access_percent: 15.625,
        placement: None,
        bytes_by_node: BTreeMap::new(),
        remote_bytes: None,
        score: 0.0,
        name: None,
    }
}

#[test]
fn hotpages() {
    let raw = raw();
    let ranked = [remote_bss(), unmapped()];
    let doc = hotpages_json::build(Parts {
        raw: &raw,
        comm: Some("app".into()),
        thread_nodes: vec![0],
        ranked: &ranked,
        regions_total: 9,
        regions_hot: 2,
        findings: vec![],
        notes: vec!["DAMON's regions are estimates: pages are sampled, not all read".into()],
    });
    golden_all(
        "hotpages",
        &TextJson::new(&doc, |layout| hotpages_text::render(&doc, layout)),
    );
}
