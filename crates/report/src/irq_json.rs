//! `irq --json`, schema `numasleuth.irq/1`: the audit, the plan, and
//! whether it was applied. A typed document instead of an ad-hoc one, so
//! the names below are a contract the compiler keeps.

use numasleuth_analyze::irq::{AffinityChange, DeviceIrqs};
use serde::Serialize;

use crate::export::{with_provenance, Exporter};
use crate::irq_text;
use crate::layout::TextLayout;
use crate::provenance::Provenance;

pub const SCHEMA: &str = "numasleuth.irq/1";

#[derive(Debug, Serialize)]
pub struct IrqJson<'a> {
    pub schema: &'static str,
    pub devices: &'a [DeviceIrqs],
    pub irqbalance_pids: &'a [u32],
    /// Empty without `--fix` or `--apply`.
    pub plan: &'a [AffinityChange],
    pub applied: bool,
    /// The undo journal `--apply` wrote.
    pub journal: Option<String>,
}

/// The audit, and the plan when `--fix` or `--apply` asked for one.
pub struct IrqReport<'a> {
    pub document: IrqJson<'a>,
    pub planned: bool,
}

impl Exporter for IrqReport<'_> {
    fn json(&self, provenance: &Provenance) -> serde_json::Result<String> {
        with_provenance(&self.document, provenance)
    }

    fn text(&self, layout: &TextLayout) -> String {
        let d = &self.document;
        let mut text = irq_text::render(d.devices, d.irqbalance_pids, layout);
        if !self.planned {
            return text;
        }
        text.push('\n');
        text.push_str(&irq_text::render_plan(d.plan, d.applied));
        match &d.journal {
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
