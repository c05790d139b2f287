//! The typed errors of `move`, `bisect` and `undo` print the lines the
//! untyped errors they replaced printed: cli shows an error with `{:#}`,
//! its text and then each source after ": ", so a cause that was wrapped
//! with a context must be the source, and one passed on with `?` must add
//! no link of its own.

use std::error::Error;

use numasleuth_analyze::page_move::MAX_PAGES;
use numasleuth_app::bisect::BisectStartError;
use numasleuth_app::moves::MoveError;
use numasleuth_app::page_targets::PageSetError;
use numasleuth_app::undo::UndoError;
use numasleuth_change::{ChangeError, KeyError};
use numasleuth_kernel::pages::PagesError;
use numasleuth_kernel::procfs::process::ProcessError;
use numasleuth_kernel::ReadError;
use numasleuth_report::format;

/// What cli's `{:#}` prints for `error`.
fn shown(error: &dyn Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

fn no_home() -> Box<ChangeError> {
    Box::new(ChangeError::Key {
        path: "k".into(),
        why: KeyError::NoHome,
    })
}

const NO_HOME: &str = "journal key k: HOME is not set: nowhere to keep the journal key";

#[test]
fn a_wrapped_cause_follows_its_context() {
    let cases: [(Box<dyn Error>, String); 5] = [
        (
            Box::new(MoveError::NoKey { error: no_home() }),
            format!("cannot seal a journal, so nothing was moved: {NO_HOME}"),
        ),
        (
            Box::new(MoveError::Apply {
                pid: 7,
                error: Box::new(ChangeError::ProcessGone { pid: 7 }),
            }),
            "cannot move the pages of process 7: process 7 has exited: its pages are gone, so there is nothing to \
             move"
                .into(),
        ),
        (
            Box::new(BisectStartError::Begin {
                pid: 7,
                error: no_home(),
            }),
            format!("cannot start moving the pages of process 7: {NO_HOME}"),
        ),
        (
            Box::new(UndoError::Undo {
                journal: "/tmp/j.json".into(),
                error: no_home(),
            }),
            format!("cannot undo /tmp/j.json: {NO_HOME}"),
        ),
        (
            Box::new(MoveError::PageSet(PageSetError::Query {
                error: PagesError::NoSuchProcess { pid: 7 },
            })),
            format!("where the pages are now: {}", PagesError::NoSuchProcess { pid: 7 }),
        ),
    ];
    for (error, line) in cases {
        assert_eq!(shown(error.as_ref()), line);
    }
    let e = UndoError::NoKey { error: no_home() };
    assert_eq!(
        shown(&e),
        format!("cannot check the journal's seal, so nothing was changed: {NO_HOME}")
    );
}

#[test]
fn a_cause_passed_on_adds_no_link() {
    // The change error's own source still follows it, as it did.
    let read = || ReadError::NotFound { path: "k".into() };
    let e = MoveError::NoKey {
        error: Box::new(ChangeError::Read(read())),
    };
    assert_eq!(
        shown(&e),
        "cannot seal a journal, so nothing was moved: k: not found: k: not found"
    );
    let e = MoveError::PageSet(PageSetError::Process(ProcessError::Read(read())));
    assert_eq!(shown(&e), "k: not found");
    let e = BisectStartError::PageSet(PageSetError::NothingMapped { pid: 7 });
    assert_eq!(
        shown(&e),
        "process 7 maps nothing in the pages asked for (see /proc/7/maps)"
    );
}

#[test]
fn a_refused_page_count_reads_as_the_text_it_replaced() {
    let (pid, pages, mapped_bytes, page_bytes) = (7_u32, MAX_PAGES + 1, (MAX_PAGES + 1) * 4096, 4096);
    let old = format!(
        "the pages asked for cover {} page(s) ({}) that process {pid} maps; one move considers at most {} \
         pages ({} of {} pages): narrow --range or move a --section or --symbol",
        pages,
        format::bytes(mapped_bytes),
        MAX_PAGES,
        format::bytes(MAX_PAGES.saturating_mul(page_bytes)),
        format::bytes(page_bytes)
    );
    let e = PageSetError::TooManyPages {
        pid,
        pages,
        mapped_bytes,
        page_bytes,
    };
    assert_eq!(shown(&e), old);
    let e = PageSetError::TooManyMappings { pid, mappings: 70_000 };
    assert_eq!(
        shown(&e),
        "the pages asked for span 70000 mappings of process 7; one move lists at most 65536: narrow --range"
    );
}
