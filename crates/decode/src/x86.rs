//! x86-64 decoding with iced-x86: the instruction's memory operands
//! (including implicit ones: the stack of `push`/`pop`/`call`, the `rsi`
//! and `rdi` of string instructions) and their effective addresses.

use iced_x86::{Decoder, DecoderOptions, InstructionInfoFactory, OpAccess, Register};

use crate::regs::{self, Registers};
use crate::{AccessKind, Decoded, MemoryAccess, Unknown, MAX_ACCESSES, MAX_INSTRUCTION_BYTES};

fn perf_number(register: Register) -> Option<u32> {
    Some(match register.full_register() {
        Register::RAX => regs::AX,
        Register::RBX => regs::BX,
        Register::RCX => regs::CX,
        Register::RDX => regs::DX,
        Register::RSI => regs::SI,
        Register::RDI => regs::DI,
        Register::RBP => regs::BP,
        Register::RSP => regs::SP,
        Register::RIP => regs::IP,
        Register::R8 => regs::R8,
        Register::R9 => regs::R8 + 1,
        Register::R10 => regs::R8 + 2,
        Register::R11 => regs::R8 + 3,
        Register::R12 => regs::R8 + 4,
        Register::R13 => regs::R8 + 5,
        Register::R14 => regs::R8 + 6,
        Register::R15 => regs::R15,
        _ => return None,
    })
}

/// A register's value as the address computation sees it: a 32-bit
/// register is the low half of its 64-bit one.
fn value(regs: &Registers, register: Register) -> Option<u64> {
    let full = regs.get(perf_number(register)?)?;
    Some(match register.size() {
        8 => full,
        4 => full & 0xffff_ffff,
        2 => full & 0xffff,
        _ => full & 0xff,
    })
}

fn kind(access: OpAccess) -> Option<AccessKind> {
    match access {
        OpAccess::Read | OpAccess::CondRead => Some(AccessKind::Read),
        OpAccess::Write | OpAccess::CondWrite => Some(AccessKind::Write),
        OpAccess::ReadWrite | OpAccess::ReadCondWrite => Some(AccessKind::ReadModifyWrite),
        // `lea`, `nop [m]`, prefetch hints: an address, but no access.
        _ => None,
    }
}

pub fn decode(ip: u64, code: &[u8], regs: &Registers) -> Decoded {
    let code = &code[..code.len().min(MAX_INSTRUCTION_BYTES)];
    let mut decoder = Decoder::with_ip(64, code, ip, DecoderOptions::NONE);
    let instruction = decoder.decode();
    if instruction.is_invalid() {
        return Decoded::Unknown(Unknown::Undecodable);
    }
    accesses(&instruction, regs)
}

/// The instruction ending exactly at `ip`, found by decoding forward from
/// `ip - back` (a function start); `None` when none ends there (the start
/// was not an instruction boundary, or data sits in the code).
pub fn previous(ip: u64, code: &[u8], back: usize, regs: &Registers) -> Option<Decoded> {
    let start = ip.checked_sub(back as u64)?;
    let mut decoder = Decoder::with_ip(64, code.get(..back)?, start, DecoderOptions::NONE);
    let mut last = None;
    while decoder.can_decode() {
        let instruction = decoder.decode();
        if instruction.is_invalid() {
            return None;
        }
        last = Some(instruction);
    }
    let instruction = last.filter(|i| i.next_ip() == ip)?;
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(&instruction);
    let written: Vec<Register> = info
        .used_registers()
        .iter()
        .filter(|r| {
            matches!(
                r.access(),
                OpAccess::Write | OpAccess::CondWrite | OpAccess::ReadWrite | OpAccess::ReadCondWrite
            )
        })
        .map(|r| r.register().full_register())
        .collect();
    let clobbered = info.used_memory().iter().any(|m| {
        [m.base(), m.index()]
            .iter()
            .any(|r| *r != Register::None && written.contains(&r.full_register()))
    });
    if clobbered {
        return Some(Decoded::Unknown(Unknown::Clobbered));
    }
    Some(accesses(&instruction, regs))
}

fn accesses(instruction: &iced_x86::Instruction, regs: &Registers) -> Decoded {
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(instruction);
    let mut accesses = Vec::new();
    for used in info.used_memory().iter().take(MAX_ACCESSES) {
        let Some(kind) = kind(used.access()) else {
            continue;
        };
        if used.index().is_vector_register() {
            return Decoded::Unknown(Unknown::VectorIndex);
        }
        if matches!(used.segment(), Register::FS | Register::GS) {
            return Decoded::Unknown(Unknown::SegmentBase);
        }
        let address = used.try_virtual_address(0, |register, _, _| match register {
            // In 64-bit mode these bases are always 0.
            Register::ES | Register::CS | Register::SS | Register::DS => Some(0),
            other => value(regs, other),
        });
        let Some(address) = address else {
            return Decoded::Unknown(Unknown::MissingRegister);
        };
        accesses.push(MemoryAccess {
            address,
            size_bytes: used.memory_size().size() as u32,
            kind,
        });
    }
    if accesses.is_empty() {
        Decoded::NoMemory
    } else {
        Decoded::Accesses(accesses)
    }
}

#[cfg(test)]
mod tests;
