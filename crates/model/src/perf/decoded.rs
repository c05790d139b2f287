//! What a decoded `hotlines` sample touches: the decoder's answer as plain
//! data. `decode` produces it (and re-exports these types); `analyze`
//! tallies it without linking the decoder. The one access-kind enum of
//! the project lives here.

use serde::Serialize;

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
    /// An addressing form the decoder does not evaluate (A64: SVE and SME,
    /// memory tags, pointer-authenticated loads, MOPS copies).
    AddressForm,
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
            Unknown::AddressForm => "addressing form not decoded (SVE, SME, tags, pointer authentication)",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Decoded {
    /// The instruction touches no memory (ALU, branch, `lea`).
    NoMemory,
    /// At most `numasleuth_decode::MAX_ACCESSES` operands (string moves
    /// have two).
    Accesses(Vec<MemoryAccess>),
    Unknown(Unknown),
    /// This build cannot decode this architecture's instructions.
    Unsupported,
}

/// Which instruction a sample was attributed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attributed {
    /// The instruction at the IP, about to execute.
    AtIp,
    /// The one just completed (the timer's skid past a slow access).
    Previous,
}
