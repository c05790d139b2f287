//! Which address a sampled instruction is about to touch.
//!
//! `hotlines` samples threads with a timer (`cpu-clock`) and gets, per
//! sample, the instruction pointer and the user registers. The sampled IP
//! is the *next* instruction to execute and the registers are its inputs,
//! so decoding that instruction and evaluating its memory operand with
//! those registers gives the address it is about to read or write: a
//! time-weighted view of memory accesses that needs no PMU.
//!
//! Pure: bytes and registers in, accesses out. Why a crate of its own: the
//! decoder (iced-x86) is large and x86-64 only, and is kept out of every
//! crate the fuzz harnesses build. On other architectures [`decode`]
//! answers [`Decoded::Unsupported`] and `hotlines` says so.

// A pure crate: no unsafe code, so no memory or system effect hides here.
#![forbid(unsafe_code)]

pub mod regs;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use regs::Registers;

pub use numasleuth_model::perf::decoded::{AccessKind, Attributed, Decoded, MemoryAccess, Unknown};

/// Longest x86 instruction: the bytes to read at the IP.
pub const MAX_INSTRUCTION_BYTES: usize = 15;
/// Memory operands kept per instruction.
pub const MAX_ACCESSES: usize = 4;

/// Whether this build can decode (x86-64 only).
pub const SUPPORTED: bool = cfg!(target_arch = "x86_64");

/// Decodes one sample. `code` starts `back` bytes before `ip` (at the
/// start of the function holding it, or at `ip` when `back` is 0).
///
/// A timer interrupt is taken at an instruction boundary, after the
/// instruction that was stalling completes, so time spent waiting on a
/// slow access mostly lands on the instruction *after* it (measured on
/// this project's VM: 97% of a load→add→store loop's samples land on the
/// `add`). So the instruction just completed is taken when it touched
/// memory and its address can be recomputed from the registers after it
/// ran; otherwise the one at the IP.
pub fn decode_sample(ip: u64, code: &[u8], back: usize, regs: &Registers) -> (Decoded, Attributed) {
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(previous @ Decoded::Accesses(_)) = x86::previous(ip, code, back, regs) {
            return (previous, Attributed::Previous);
        }
        (decode(ip, code.get(back..).unwrap_or(&[]), regs), Attributed::AtIp)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (ip, code, back, regs);
        (Decoded::Unsupported, Attributed::AtIp)
    }
}

/// Decodes the instruction at `ip` from `code` (the bytes at `ip`, at most
/// [`MAX_INSTRUCTION_BYTES`] used) and evaluates its memory operands with
/// `regs`. Never panics, whatever the bytes.
pub fn decode(ip: u64, code: &[u8], regs: &Registers) -> Decoded {
    #[cfg(target_arch = "x86_64")]
    {
        x86::decode(ip, code, regs)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (ip, code, regs);
        Decoded::Unsupported
    }
}
