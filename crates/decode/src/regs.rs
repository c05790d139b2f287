//! The user registers of one perf sample, by perf's register numbers: x86's
//! (arch/x86/include/uapi/asm/perf_regs.h) at the top level, arm64's in
//! [`arm64`]. A [`Registers`] holds either; which one is the sampled
//! machine's (`crate::Arch`).

/// perf's x86-64 register numbers, in the order the kernel writes them.
pub const AX: u32 = 0;
pub const BX: u32 = 1;
pub const CX: u32 = 2;
pub const DX: u32 = 3;
pub const SI: u32 = 4;
pub const DI: u32 = 5;
pub const BP: u32 = 6;
pub const SP: u32 = 7;
pub const IP: u32 = 8;
pub const R8: u32 = 16;
pub const R15: u32 = 23;

/// The general-purpose registers and the IP; the segment registers are not
/// requested (x86-64 perf refuses DS/ES/FS/GS, and their bases are not
/// sampled anyway).
pub const X86_64_SAMPLE_MASK: u64 = 0x1ff | (0xff << 16);

/// perf's arm64 register numbers (arch/arm64/include/uapi/asm/perf_regs.h):
/// x0–x30 are 0–30, then sp and pc.
pub mod arm64 {
    pub const X0: u32 = 0;
    /// The frame pointer, x29.
    pub const X29: u32 = 29;
    /// The link register, x30.
    pub const LR: u32 = 30;
    /// Also what a base register field of 31 names (an index or data field
    /// of 31 is the zero register instead).
    pub const SP: u32 = 31;
    pub const PC: u32 = 32;
    /// PERF_REG_ARM64_MAX: the registers perf can sample.
    pub const MAX: u32 = 33;
    /// Every general-purpose register, sp and pc.
    pub const SAMPLE_MASK: u64 = (1 << MAX) - 1;
}

/// The most registers either layout numbers (arm64's 33; x86's 24).
const SLOTS: usize = arm64::MAX as usize;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registers {
    values: [Option<u64>; SLOTS],
}

// By hand: arrays past 32 elements derive neither Default nor Serialize
// (and nothing serializes registers).
impl Default for Registers {
    fn default() -> Self {
        Registers { values: [None; SLOTS] }
    }
}

impl Registers {
    /// From a sample's `regs_user`: `values` come in the order of the set
    /// bits of `mask`, lowest first. Extra values are ignored, missing ones
    /// stay unknown; bits past the slots we name are skipped.
    pub fn from_perf(mask: u64, values: &[u64]) -> Self {
        let mut regs = Registers::default();
        let mut next = values.iter();
        for bit in 0..64u32 {
            if mask & (1 << bit) == 0 {
                continue;
            }
            let Some(value) = next.next() else { break };
            if let Some(slot) = regs.values.get_mut(bit as usize) {
                *slot = Some(*value);
            }
        }
        regs
    }

    pub fn set(&mut self, perf_reg: u32, value: u64) {
        if let Some(slot) = self.values.get_mut(perf_reg as usize) {
            *slot = Some(value);
        }
    }

    pub fn get(&self, perf_reg: u32) -> Option<u64> {
        self.values.get(perf_reg as usize).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_the_mask_bits() {
        let regs = Registers::from_perf(X86_64_SAMPLE_MASK, &(0..17).collect::<Vec<u64>>());
        assert_eq!(regs.get(AX), Some(0));
        assert_eq!(regs.get(IP), Some(8));
        assert_eq!(regs.get(9), None, "FLAGS not requested");
        assert_eq!(regs.get(R8), Some(9));
        assert_eq!(regs.get(R15), Some(16));
    }

    #[test]
    fn arm64_values_follow_the_mask_bits() {
        let regs = Registers::from_perf(arm64::SAMPLE_MASK, &(100..133).collect::<Vec<u64>>());
        assert_eq!(regs.get(arm64::X0), Some(100));
        assert_eq!(regs.get(arm64::LR), Some(130));
        assert_eq!(regs.get(arm64::SP), Some(131));
        assert_eq!(regs.get(arm64::PC), Some(132));
        assert_eq!(regs.get(arm64::MAX), None);
    }

    #[test]
    fn short_or_odd_input_never_panics() {
        let regs = Registers::from_perf(u64::MAX, &[1, 2]);
        assert_eq!(regs.get(0), Some(1));
        assert_eq!(regs.get(2), None);
        let regs = Registers::from_perf(1 << 63, &[5]);
        assert_eq!(regs, Registers::default());
    }
}
