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

use serde::Serialize;

pub mod regs;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use regs::Registers;

/// What the instruction does to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessKind {
    Read,
    Write,
    /// Reads then writes the same bytes (`add [m], r`, `lock xadd`, `inc`).
    ReadModifyWrite,
}

impl AccessKind {
    pub fn writes(self) -> bool {
        matches!(self, AccessKind::Write | AccessKind::ReadModifyWrite)
    }
    pub fn reads(self) -> bool {
        matches!(self, AccessKind::Read | AccessKind::ReadModifyWrite)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MemoryAccess {
    pub address: u64,
    pub size_bytes: u32,
    pub kind: AccessKind,
}

/// Why an instruction's address could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unknown {
    /// The code bytes could not be read (the process exited, unmapped).
    CodeUnreadable,
    /// Not a valid instruction (the IP is not at an instruction boundary,
    /// or code changed since).
    Undecodable,
    /// FS/GS-relative (thread-local storage): perf does not sample the
    /// segment bases.
    SegmentBase,
    /// A gather/scatter (vector index register): perf samples no vector
    /// registers.
    VectorIndex,
    /// A register perf did not deliver.
    MissingRegister,
    /// The instruction just completed overwrote a register of its own
    /// address (`mov (%rax),%rax`), so the sampled value is not its input.
    Clobbered,
}

impl Unknown {
    pub fn describe(self) -> &'static str {
        match self {
            Unknown::CodeUnreadable => "code bytes unreadable",
            Unknown::Undecodable => "not a decodable instruction",
            Unknown::SegmentBase => "FS/GS-relative (thread-local) address",
            Unknown::VectorIndex => "gather/scatter (vector index)",
            Unknown::MissingRegister => "register not sampled",
            Unknown::Clobbered => "address register overwritten by the instruction",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Decoded {
    /// The instruction touches no memory (ALU, branch, `lea`).
    NoMemory,
    /// At most [`MAX_ACCESSES`] operands (string moves have two).
    Accesses(Vec<MemoryAccess>),
    Unknown(Unknown),
    /// This build cannot decode this architecture's instructions.
    Unsupported,
}

/// Longest x86 instruction: the bytes to read at the IP.
pub const MAX_INSTRUCTION_BYTES: usize = 15;
/// Memory operands kept per instruction.
pub const MAX_ACCESSES: usize = 4;

/// Whether this build can decode (x86-64 only).
pub const SUPPORTED: bool = cfg!(target_arch = "x86_64");

/// Which instruction a sample was attributed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attributed {
    /// The instruction at the IP, about to execute.
    AtIp,
    /// The one just completed (the timer's skid past a slow access).
    Previous,
}

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
