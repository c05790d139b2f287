//! The width is an argument, not process state: two threads rendering the
//! same report at different widths at the same time each get their own
//! width's text. With a global width set before rendering, one thread's
//! setting would leak into the other's output.

use std::sync::Barrier;
use std::thread;

use crate::common::{assert_fits, provenance};
use crate::golden_reports::mem_document;
use numasleuth_report::export::{self, Format};
use numasleuth_report::layout::TextLayout;
use numasleuth_report::measure_export::MemReport;

const NARROW_COLUMNS: usize = 60;
const WIDE_COLUMNS: usize = 120;
/// Renders per thread: enough that interleaved renders would overlap.
const RENDERS_PER_THREAD: usize = 200;

fn render_at(report: &MemReport<'_>, columns: usize) -> String {
    let layout = TextLayout::new(columns, false);
    export::render(report, Format::Text, &provenance(), &layout).expect("text renders")
}

#[test]
fn two_widths_rendered_in_parallel_each_keep_their_width() {
    let document = mem_document();
    let report = MemReport(&document);
    let narrow = render_at(&report, NARROW_COLUMNS);
    let wide = render_at(&report, WIDE_COLUMNS);
    // The report must depend on the width, or this test could not fail.
    assert_ne!(narrow, wide, "the mem report reads the same at both widths");
    assert_fits("mem", &narrow, NARROW_COLUMNS);
    assert!(
        wide.lines().any(|line| line.chars().count() > NARROW_COLUMNS),
        "the wide render never uses more than {NARROW_COLUMNS} columns:\n{wide}"
    );

    let start = Barrier::new(2);
    thread::scope(|scope| {
        for (columns, expected) in [(NARROW_COLUMNS, &narrow), (WIDE_COLUMNS, &wide)] {
            let (report, start) = (&report, &start);
            scope.spawn(move || {
                start.wait();
                for render in 0..RENDERS_PER_THREAD {
                    let text = render_at(report, columns);
                    assert_eq!(&text, expected, "render {render} at {columns} columns");
                }
            });
        }
    });
}
