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
//! decoders (iced-x86, disarm64) are large, and are kept out of every crate
//! the fuzz harnesses build. The x86-64 decoder is built on x86-64 only.
//! The A64 one is plain Rust and builds anywhere, behind the `a64` feature:
//! on by default, so this crate's tests run it on any host (x86-64 CI
//! included), and turned on by app and cli for Arm targets only. An x86-64
//! numasleuth leaves it out because `hotlines` samples the machine it runs
//! on, so an x86-64 binary never meets an A64 instruction, and the decoder's
//! tables (380 KB of pointers) cost every start of a position-independent
//! binary about 100 page faults to relocate (bench/RESULTS.md).
//! Which decoder a sample meets is the sampled machine's [`Arch`]:
//! [`Arch::HOST`].
//!
//! [`spe`] decodes the other input `hotlines` can get on Arm: the sample
//! records of the Statistical Profiling Extension, which carry the data
//! address themselves, so no instruction needs decoding.

// A pure crate: no unsafe code, so no memory or system effect hides here.
#![forbid(unsafe_code)]

#[cfg(feature = "a64")]
mod a64;
pub mod regs;
pub mod spe;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use regs::Registers;

pub use numasleuth_model::perf::decoded::{AccessKind, Attributed, Decoded, MemoryAccess, Unknown};

/// Longest x86 instruction: the bytes to read at the IP (an A64 one is 4).
pub const MAX_INSTRUCTION_BYTES: usize = 15;
/// Memory operands kept per instruction.
pub const MAX_ACCESSES: usize = 4;

/// Whether this build can decode its own machine's instructions.
pub const SUPPORTED: bool = Arch::HOST.is_some();

/// An instruction set whose samples can be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    /// A64, the 64-bit Arm instruction set.
    Aarch64,
}

impl Arch {
    /// The machine this build runs on and samples; `None` where no decoder
    /// is built for it.
    pub const HOST: Option<Arch> = if cfg!(target_arch = "x86_64") {
        Some(Arch::X86_64)
    } else if cfg!(all(target_arch = "aarch64", feature = "a64")) {
        Some(Arch::Aarch64)
    } else {
        None
    };

    /// The user registers to ask perf for (`sample_regs_user`).
    pub fn sample_mask(self) -> u64 {
        match self {
            Arch::X86_64 => regs::X86_64_SAMPLE_MASK,
            Arch::Aarch64 => regs::arm64::SAMPLE_MASK,
        }
    }

    /// perf's number for the stack pointer.
    pub fn stack_pointer(self) -> u32 {
        match self {
            Arch::X86_64 => regs::SP,
            Arch::Aarch64 => regs::arm64::SP,
        }
    }

    /// [`decode_sample`] for this instruction set. On A64 the instruction
    /// just completed is the 4 bytes before the IP, so `back` need only be
    /// 4 (a function start, when known, keeps the previous instruction
    /// from being one of another function that branched here).
    pub fn decode_sample(self, ip: u64, code: &[u8], back: usize, regs: &Registers) -> (Decoded, Attributed) {
        let Some(decoder) = self.decoder() else {
            return (Decoded::Unsupported, Attributed::AtIp);
        };
        if let Some(previous @ Decoded::Accesses(_)) = (decoder.previous)(ip, code, back, regs) {
            return (previous, Attributed::Previous);
        }
        (
            (decoder.at)(ip, code.get(back..).unwrap_or(&[]), regs),
            Attributed::AtIp,
        )
    }

    /// [`decode`] for this instruction set.
    pub fn decode(self, ip: u64, code: &[u8], regs: &Registers) -> Decoded {
        self.decoder()
            .map_or(Decoded::Unsupported, |decoder| (decoder.at)(ip, code, regs))
    }

    /// The decoder this build has for the instruction set, if any.
    fn decoder(self) -> Option<Decoder> {
        match self {
            Arch::X86_64 => X86,
            Arch::Aarch64 => A64,
        }
    }
}

/// Decodes one sample of this machine ([`Arch::HOST`]); see
/// [`Arch::decode_sample`]. `code` starts `back` bytes before `ip` (at the
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
    match Arch::HOST {
        Some(arch) => arch.decode_sample(ip, code, back, regs),
        None => (Decoded::Unsupported, Attributed::AtIp),
    }
}

/// Decodes the instruction at `ip` from `code` (the bytes at `ip`, at most
/// [`MAX_INSTRUCTION_BYTES`] used) and evaluates its memory operands with
/// `regs`, for this machine ([`Arch::HOST`]). Never panics, whatever the
/// bytes.
pub fn decode(ip: u64, code: &[u8], regs: &Registers) -> Decoded {
    match Arch::HOST {
        Some(arch) => arch.decode(ip, code, regs),
        None => Decoded::Unsupported,
    }
}

/// One instruction set's decoder: the instruction at the IP, and the one
/// just completed before it (which the sample's registers are the outputs of).
struct Decoder {
    at: fn(u64, &[u8], &Registers) -> Decoded,
    previous: fn(u64, &[u8], usize, &Registers) -> Option<Decoded>,
}

/// iced-x86 is built for x86-64 hosts only.
#[cfg(target_arch = "x86_64")]
const X86: Option<Decoder> = Some(Decoder {
    at: x86::decode,
    previous: x86::previous,
});
#[cfg(not(target_arch = "x86_64"))]
const X86: Option<Decoder> = None;

/// Without the `a64` feature (an x86-64 numasleuth) no A64 decoder is built.
#[cfg(feature = "a64")]
const A64: Option<Decoder> = Some(Decoder {
    at: a64::decode,
    previous: a64::previous,
});
#[cfg(not(feature = "a64"))]
const A64: Option<Decoder> = None;
