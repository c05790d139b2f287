//! `irq --json`, schema `numasleuth.irq/1`: analyze's `IrqDocument` (the
//! audit, the plan, and whether it was applied) under its schema. Kept
//! names: `devices`, `irqbalance_pids`, `plan`, `applied`, `journal`.

use numasleuth_analyze::irq::IrqDocument;

use crate::export::{with_provenance, Exporter};
use crate::irq_text;
use crate::layout::TextLayout;
use crate::provenance::Provenance;
use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.irq/1";

/// The audit, and the plan when `--fix` or `--apply` asked for one.
pub struct IrqReport<'a> {
    pub document: &'a IrqDocument,
    pub planned: bool,
}

impl Exporter for IrqReport<'_> {
    fn json(&self, provenance: &Provenance) -> serde_json::Result<String> {
        with_provenance(&Schema::new(SCHEMA, self.document), provenance)
    }

    fn text(&self, layout: &TextLayout) -> String {
        let d = self.document;
        let mut text = irq_text::render(&d.devices, &d.irqbalance_pids, layout);
        if !self.planned {
            return text;
        }
        text.push('\n');
        text.push_str(&irq_text::render_plan(&d.plan, d.journal.is_some()));
        match d.journal.as_ref().map(|path| path.display()) {
            Some(path) => text.push_str(&format!(
                "journal: {path} (reverse with `numasleuth undo {path}`); effective affinity follows at the next \
                 interrupt\n"
            )),
            None if !d.plan.is_empty() => text.push_str("dry run: nothing was changed; add --apply to make it so\n"),
            None => {}
        }
        text
    }
}
