//! A64 (aarch64) decoding: disarm64 names the instruction and its class,
//! and [`form`] reads the addressing fields of the load/store classes.
//! Pure and built on every target, so its tests run on any host.
//!
//! Instructions are 4 bytes, little-endian, 4-aligned: the one before the
//! IP is simply at `ip - 4`, with no decoding from a function start.
//! Evaluated after it ran ([`previous`]), a write-back form is undone: a
//! pre-indexed access was at the updated base, a post-indexed one at the
//! updated base minus its step.

mod form;

use disarm64::InsnOpcode;

use crate::regs::{arm64, Registers};
use crate::{Decoded, MemoryAccess, Unknown};
use form::{Address, Form};

/// Bytes of one A64 instruction.
pub const INSTRUCTION_BYTES: usize = 4;

/// When the registers were sampled relative to the instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moment {
    /// Before it runs: the instruction at the IP.
    Before,
    /// After it ran: the instruction just before the IP.
    After,
}

/// The instruction at `ip` (the first 4 bytes of `code`).
pub fn decode(ip: u64, code: &[u8], regs: &Registers) -> Decoded {
    evaluate(ip, code, regs, Moment::Before)
}

/// The instruction at `ip - 4`, from the 4 bytes before `code[back]`;
/// `None` when they were not read (`back` < 4).
pub fn previous(ip: u64, code: &[u8], back: usize, regs: &Registers) -> Option<Decoded> {
    let start = back.checked_sub(INSTRUCTION_BYTES)?;
    let word = code.get(start..back)?;
    Some(evaluate(
        ip.checked_sub(INSTRUCTION_BYTES as u64)?,
        word,
        regs,
        Moment::After,
    ))
}

fn evaluate(pc: u64, code: &[u8], regs: &Registers, moment: Moment) -> Decoded {
    let Some(word) = code.get(..INSTRUCTION_BYTES) else {
        return Decoded::Unknown(Unknown::Undecodable);
    };
    if !pc.is_multiple_of(INSTRUCTION_BYTES as u64) {
        return Decoded::Unknown(Unknown::Undecodable);
    }
    let bits = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
    let Some(opcode) = disarm64::decoder::decode(bits) else {
        return Decoded::Unknown(Unknown::Undecodable);
    };
    match form::form(bits, opcode.definition()) {
        Ok(None) => Decoded::NoMemory,
        Ok(Some(form)) => accesses(pc, &form, regs, moment),
        Err(why) => Decoded::Unknown(why),
    }
}

fn accesses(pc: u64, form: &Form, regs: &Registers, moment: Moment) -> Decoded {
    let start = match start(pc, form, regs, moment) {
        Ok(address) => address,
        Err(why) => return Decoded::Unknown(why),
    };
    let accesses = (0..form.count)
        .map(|i| MemoryAccess {
            address: start.wrapping_add(u64::from(i * form.element_bytes)),
            size_bytes: form.element_bytes,
            kind: form.kind,
        })
        .collect();
    Decoded::Accesses(accesses)
}

/// A general-purpose register as an index or offset: 31 is the zero
/// register there.
fn index_value(regs: &Registers, register: u32) -> Result<u64, Unknown> {
    if register == arm64::SP {
        return Ok(0);
    }
    regs.get(register).ok_or(Unknown::MissingRegister)
}

/// The first byte the instruction touches, from the registers as sampled
/// `moment` it.
fn start(pc: u64, form: &Form, regs: &Registers, moment: Moment) -> Result<u64, Unknown> {
    let (base, address) = match form.address {
        Address::Literal { offset } => return Ok(pc.wrapping_add_signed(offset)),
        Address::Base { base, ref address } => (base, address),
    };
    // After it ran, a register it loaded into is no longer its input.
    let used = [Some(base), address.index_register()];
    if moment == Moment::After && used.iter().flatten().any(|r| form.writes(*r)) {
        return Err(Unknown::Clobbered);
    }
    let base_value = regs.get(base).ok_or(Unknown::MissingRegister)?;
    let index = |register| index_value(regs, register);
    Ok(match (address, moment) {
        (form::Offset::Immediate(offset), _) => base_value.wrapping_add_signed(*offset),
        (
            form::Offset::Register {
                index: r,
                extend,
                shift,
            },
            _,
        ) => base_value.wrapping_add(extend.apply(index(*r)?) << shift),
        (form::Offset::PreIndex(offset), Moment::Before) => base_value.wrapping_add_signed(*offset),
        // The base was written back as the address itself.
        (form::Offset::PreIndex(_), Moment::After) => base_value,
        (form::Offset::PostIndex(_) | form::Offset::PostIndexRegister(_), Moment::Before) => base_value,
        (form::Offset::PostIndex(step), Moment::After) => base_value.wrapping_add_signed(step.wrapping_neg()),
        (form::Offset::PostIndexRegister(r), Moment::After) => base_value.wrapping_sub(index(*r)?),
    })
}

#[cfg(test)]
mod tests;
