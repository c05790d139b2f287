//! Reading `procfs::interrupts`; its format, types and parser are `numasleuth_parse::procfs::interrupts`.

pub use numasleuth_parse::procfs::interrupts::*;

use crate::error::ReadError;
use crate::read;
use crate::root::Root;
use crate::unread::Gaps;

pub fn read(root: &Root) -> Result<Vec<InterruptLine>, ReadError> {
    let text = root.read(PATH)?;
    parse(&text).map_err(|e| ReadError::malformed(PATH, e.0))
}

/// An error only when the IRQ has no `/proc/irq/N` at all; a file in it
/// that cannot be used is noted in `gaps` and read as unknown, so the
/// others still answer (the effective set alone says where it is served).
pub fn read_affinity(root: &Root, irq: u32, gaps: &mut Gaps) -> Result<IrqAffinity, ReadError> {
    let dir = format!("proc/irq/{irq}");
    if !root.exists(&dir) {
        return Err(ReadError::NotFound {
            path: crate::error::display_path(&dir),
        });
    }
    Ok(IrqAffinity {
        irq,
        affinity: gaps.keep(read::list(root, &format!("{dir}/smp_affinity_list"))),
        effective: gaps.keep(read::list(root, &format!("{dir}/effective_affinity_list"))),
        node: gaps.keep(read::id(root, &format!("{dir}/node"))),
    })
}
