//! Golden test of `lines --symbol`: one hand-built line of a process, text
//! at each width and JSON, with an alias and a thread-local neighbour so
//! the fields the document leaves out when empty show when they are not.
//! `INSTA_UPDATE=always cargo test -p numasleuth-report --test it
//! golden_lines` rewrites it after a deliberate change.

use crate::common;

use common::golden_all;
use numasleuth_analyze::lines::{Line, LineSymbol, LinesDocument, SECTIONS};
use numasleuth_report::export::TextJson;
use numasleuth_report::{lines_json, lines_text};

fn symbol(name: &str, address: u64, size: u64, section: &str) -> LineSymbol {
    LineSymbol {
        name: name.into(),
        address,
        size,
        section: section.into(),
        aliases: vec![],
        tls: false,
    }
}

#[test]
fn lines_of_a_process() {
    let mut level = symbol("log_level", 0x55d4_c5e0_1040, 4, ".data");
    level.aliases = vec!["default_level".into()];
    let root = symbol("nil_root", 0x55d4_c5e0_1048, 8, ".bss");
    let mut errno = symbol("tls_errno", 0x55d4_c5e0_1060, 4, ".tbss");
    errno.tls = true;
    let lines = vec![Line {
        address: 0x55d4_c5e0_1040,
        symbols: vec![level.clone(), root, errno],
    }];
    let doc = LinesDocument {
        line_size: 64,
        object: "/usr/bin/app".into(),
        pid: Some(4242),
        load_bias: 0x55d4_c5e0_0000,
        sections: &SECTIONS,
        symbol_source: "symtab",
        data_symbols: 212,
        symbol: Some(level.clone()),
        lines: lines.clone(),
    };
    let heading = "/usr/bin/app: the 64-byte line holding log_level and its neighbours";
    golden_all(
        "lines_of_a_process",
        &TextJson::new(lines_json::document(&doc), |layout| {
            lines_text::render(heading, &lines, Some(&level), layout)
        }),
    );
}
