//! The memory access of one decoded A64 instruction, read from its fields
//! (Arm ARM C4.1.66 onwards, "Loads and Stores"): the base register and
//! offset, the bytes touched and what is done to them, and the
//! general-purpose registers it writes.
//!
//! Exclusives, acquire/release and the LSE atomics all count as
//! read-modify-writes (issue 34): each is one side of an atomic update of
//! the line, which is what makes a line contended.

use disarm64::Insn;
use disarm64_defn::{InsnClass, InsnOperandKind};

use crate::regs::arm64;
use crate::{AccessKind, Unknown};

/// How a register index is widened before it is shifted and added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extend {
    Uxtw,
    /// `lsl` or `uxtx`: the whole register.
    Uxtx,
    Sxtw,
    Sxtx,
}

impl Extend {
    pub fn apply(self, value: u64) -> u64 {
        match self {
            Extend::Uxtw => value & 0xffff_ffff,
            Extend::Uxtx | Extend::Sxtx => value,
            Extend::Sxtw => value as u32 as i32 as i64 as u64,
        }
    }
}

/// What is added to the base register, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offset {
    /// `[xn, #imm]`, `[xn]`.
    Immediate(i64),
    /// `[xn, xm, lsl #s]`, `[xn, wm, sxtw #s]`.
    Register { index: u32, extend: Extend, shift: u32 },
    /// `[xn, #imm]!`: at base + imm, then base = base + imm.
    PreIndex(i64),
    /// `[xn], #imm`: at base, then base = base + imm.
    PostIndex(i64),
    /// `[xn], xm` (SIMD structures): at base, then base = base + xm.
    PostIndexRegister(u32),
}

impl Offset {
    pub fn index_register(&self) -> Option<u32> {
        match self {
            Offset::Register { index, .. } | Offset::PostIndexRegister(index) => Some(*index),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// Base register (31 is sp) and offset.
    Base { base: u32, address: Offset },
    /// PC-relative (`ldr x0, label`).
    Literal { offset: i64 },
}

/// One instruction's memory access: `count` consecutive elements of
/// `element_bytes` (two for a pair: a pair may straddle two lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub address: Address,
    pub kind: AccessKind,
    pub element_bytes: u32,
    pub count: u32,
    /// General-purpose registers it writes besides a written-back base (31,
    /// the zero register in these fields, never counts).
    written: [u32; 3],
}

impl Form {
    pub fn writes(&self, register: u32) -> bool {
        register != arm64::SP && self.written.contains(&register)
    }
}

fn field(bits: u32, lsb: u32, width: u32) -> u32 {
    (bits >> lsb) & ((1 << width) - 1)
}

fn signed_field(bits: u32, lsb: u32, width: u32) -> i64 {
    let value = i64::from(field(bits, lsb, width));
    (value << (64 - width)) >> (64 - width)
}

fn bit(bits: u32, at: u32) -> bool {
    field(bits, at, 1) == 1
}

/// log2 of a single-register access's bytes: `size`, with opc<1> on top for
/// SIMD&FP registers (the 16-byte q form).
fn scale(bits: u32) -> u32 {
    let size = field(bits, 30, 2);
    if bit(bits, 26) {
        (field(bits, 23, 1) << 2) | size
    } else {
        size
    }
}

/// Rt, Rt2 and Rs: the data and status registers of a load/store.
fn rt(bits: u32) -> u32 {
    field(bits, 0, 5)
}
fn rt2(bits: u32) -> u32 {
    field(bits, 10, 5)
}
fn rs(bits: u32) -> u32 {
    field(bits, 16, 5)
}
fn rn(bits: u32) -> u32 {
    field(bits, 5, 5)
}
/// Rm, the index register: the same bits as Rs.
fn rm(bits: u32) -> u32 {
    field(bits, 16, 5)
}

/// Refuses a class's rarer members whose address this module does not read
/// (tags, pointer authentication): their address operand is another kind.
fn expect(insn: &Insn, kinds: &[InsnOperandKind]) -> Result<(), Unknown> {
    if insn.operands.iter().any(|o| kinds.contains(&o.kind)) {
        Ok(())
    } else {
        Err(Unknown::AddressForm)
    }
}

/// The access, `None` for an instruction that touches no memory (or only
/// hints at it: `prfm`), or why its address cannot be computed here.
pub fn form(bits: u32, insn: &Insn) -> Result<Option<Form>, Unknown> {
    use InsnClass as C;
    let mnemonic = insn.mnemonic.to_ascii_lowercase();
    if mnemonic.starts_with("prf") {
        return Ok(None);
    }
    Ok(Some(match insn.class {
        C::LOADLIT => literal(bits),
        C::LDST_POS | C::LDST_UNSCALED | C::LDST_UNPRIV | C::LDST_IMM9 | C::LDST_REGOFF => {
            use InsnOperandKind as K;
            expect(insn, &[K::ADDR_UIMM12, K::ADDR_SIMM9, K::ADDR_OFFSET, K::ADDR_REGOFF])?;
            single(bits, insn.class, &mnemonic)?
        }
        C::LDSTPAIR_OFF | C::LDSTNAPAIR_OFFS | C::LDSTPAIR_INDEXED => {
            // STGP (tags) shares the classes, with a tag-granule offset.
            expect(insn, &[InsnOperandKind::ADDR_SIMM7])?;
            pair(bits, insn.class, &mnemonic)
        }
        C::LDSTEXCL | C::LSE_ATOMIC | C::LSE128_ATOMIC => atomic(bits, insn.class, &mnemonic),
        C::ASISDLSE | C::ASISDLSEP | C::ASISDLSO | C::ASISDLSOP => structure(bits, insn.class),
        _ if insn.operands.iter().any(|o| is_address(o.kind)) => return Err(Unknown::AddressForm),
        _ => return Ok(None),
    }))
}

/// An operand naming memory (not a branch target or `adr`'s value).
fn is_address(kind: InsnOperandKind) -> bool {
    use InsnOperandKind as K;
    let name: &'static str = kind.into();
    name.contains("ADDR")
        && !matches!(
            kind,
            K::ADDR_ADRP | K::ADDR_PCREL14 | K::ADDR_PCREL19 | K::ADDR_PCREL21 | K::ADDR_PCREL26
        )
}

fn load_or_store(mnemonic: &str) -> AccessKind {
    if mnemonic.starts_with("st") {
        AccessKind::Write
    } else {
        AccessKind::Read
    }
}

/// `ldr x0, label`: opc selects w, x, ldrsw's word, or (SIMD&FP) s, d, q.
fn literal(bits: u32) -> Form {
    let opc = field(bits, 30, 2);
    let element_bytes = match (bit(bits, 26), opc) {
        (_, 1) => 8,
        (true, 2) => 16,
        _ => 4,
    };
    Form {
        address: Address::Literal {
            offset: signed_field(bits, 5, 19) << 2,
        },
        kind: AccessKind::Read,
        element_bytes,
        count: 1,
        written: [rt_if_gp_load(bits, AccessKind::Read), arm64::SP, arm64::SP],
    }
}

/// The data register a load writes, when it is a general-purpose one.
fn rt_if_gp_load(bits: u32, kind: AccessKind) -> u32 {
    if kind == AccessKind::Read && !bit(bits, 26) {
        rt(bits)
    } else {
        arm64::SP
    }
}

/// One register loaded or stored: unsigned scaled, unscaled, unprivileged,
/// pre/post-indexed, or register offset.
fn single(bits: u32, class: InsnClass, mnemonic: &str) -> Result<Form, Unknown> {
    let scale = scale(bits);
    let address = match class {
        InsnClass::LDST_POS => Offset::Immediate(i64::from(field(bits, 10, 12)) << scale),
        InsnClass::LDST_IMM9 if bit(bits, 11) => Offset::PreIndex(signed_field(bits, 12, 9)),
        InsnClass::LDST_IMM9 => Offset::PostIndex(signed_field(bits, 12, 9)),
        InsnClass::LDST_REGOFF => {
            let extend = match field(bits, 13, 3) {
                0b010 => Extend::Uxtw,
                0b011 => Extend::Uxtx,
                0b110 => Extend::Sxtw,
                0b111 => Extend::Sxtx,
                _ => return Err(Unknown::Undecodable),
            };
            let shift = if bit(bits, 12) { scale } else { 0 };
            Offset::Register {
                index: rm(bits),
                extend,
                shift,
            }
        }
        // Unscaled and unprivileged: a signed 9-bit byte offset.
        _ => Offset::Immediate(signed_field(bits, 12, 9)),
    };
    let kind = load_or_store(mnemonic);
    Ok(Form {
        address: Address::Base {
            base: rn(bits),
            address,
        },
        kind,
        element_bytes: 1 << scale,
        count: 1,
        written: [rt_if_gp_load(bits, kind), arm64::SP, arm64::SP],
    })
}

/// LDP/STP (and LDNP, LDPSW): two registers at consecutive addresses.
fn pair(bits: u32, class: InsnClass, mnemonic: &str) -> Form {
    let opc = field(bits, 30, 2);
    let scale = if bit(bits, 26) { 2 + opc } else { 2 + (opc >> 1) };
    let offset = signed_field(bits, 15, 7) << scale;
    let address = match (class, bit(bits, 24)) {
        (InsnClass::LDSTPAIR_INDEXED, true) => Offset::PreIndex(offset),
        (InsnClass::LDSTPAIR_INDEXED, false) => Offset::PostIndex(offset),
        _ => Offset::Immediate(offset),
    };
    let kind = load_or_store(mnemonic);
    let second = if kind == AccessKind::Read && !bit(bits, 26) {
        rt2(bits)
    } else {
        arm64::SP
    };
    Form {
        address: Address::Base {
            base: rn(bits),
            address,
        },
        kind,
        element_bytes: 1 << scale,
        count: 2,
        written: [rt_if_gp_load(bits, kind), second, arm64::SP],
    }
}

/// Exclusives, acquire/release, CAS and the LSE atomics: `[xn]` only.
fn atomic(bits: u32, class: InsnClass, mnemonic: &str) -> Form {
    let is_cas = mnemonic.starts_with("cas");
    let paired = mnemonic.starts_with("casp") || mnemonic.ends_with("xp") || class == InsnClass::LSE128_ATOMIC;
    let (element_bytes, count) = match (paired, class) {
        (true, InsnClass::LSE128_ATOMIC) => (8, 2),
        // ldxp/stxp, casp: sz (bit 30) picks w or x registers.
        (true, _) => (4 << field(bits, 30, 1), 2),
        (false, _) => (1 << field(bits, 30, 2), 1),
    };
    let pair_next = |r: u32| if paired && r != arm64::SP { r + 1 } else { arm64::SP };
    let written = if is_cas {
        // CAS returns the old value in Rs (Rs, Rs+1 for CASP).
        [rs(bits), pair_next(rs(bits)), arm64::SP]
    } else if class == InsnClass::LDSTEXCL && mnemonic.starts_with("st") {
        // Exclusive stores write their status to Rs; stlr has Rs = 31.
        [rs(bits), arm64::SP, arm64::SP]
    } else if class == InsnClass::LSE128_ATOMIC {
        // ldsetp/ldclrp/swpp: Rt and Rt2 (in the Rs field) both return data.
        [rt(bits), rs(bits), arm64::SP]
    } else if class == InsnClass::LDSTEXCL {
        [rt(bits), rt2(bits), arm64::SP]
    } else {
        // ldadd and the like, swp: the old value in Rt (31 for the st* forms).
        [rt(bits), arm64::SP, arm64::SP]
    };
    Form {
        address: Address::Base {
            base: rn(bits),
            address: Offset::Immediate(0),
        },
        kind: AccessKind::ReadModifyWrite,
        element_bytes,
        count,
        written,
    }
}

/// SIMD LD1–LD4/ST1–ST4: multiple structures fill whole registers (8 or 16
/// bytes each); single structures (and LD1R–LD4R) one element per register.
/// Counted as one access of all the bytes.
fn structure(bits: u32, class: InsnClass) -> Form {
    let opcode = field(bits, 12, 4);
    let bytes = if matches!(class, InsnClass::ASISDLSE | InsnClass::ASISDLSEP) {
        let registers = match opcode {
            0b0000 | 0b0010 => 4,
            0b0100 | 0b0110 => 3,
            0b1000 | 0b1010 => 2,
            _ => 1,
        };
        registers * (8 << field(bits, 30, 1))
    } else {
        let registers = ((field(bits, 13, 1) << 1) | field(bits, 21, 1)) + 1;
        let size = field(bits, 10, 2);
        let element = match field(bits, 14, 2) {
            0b00 => 1,
            0b01 => 2,
            0b10 if size & 1 == 1 => 8,
            0b10 => 4,
            // LD1R–LD4R: replicate one element of `size`.
            _ => 1 << size,
        };
        registers * element
    };
    let address = match (class, rm(bits)) {
        (InsnClass::ASISDLSE | InsnClass::ASISDLSO, _) => Offset::Immediate(0),
        // Rm = 31: the immediate step, which is the bytes transferred.
        (_, 31) => Offset::PostIndex(i64::from(bytes)),
        (_, index) => Offset::PostIndexRegister(index),
    };
    Form {
        address: Address::Base {
            base: rn(bits),
            address,
        },
        kind: if bit(bits, 22) {
            AccessKind::Read
        } else {
            AccessKind::Write
        },
        element_bytes: bytes,
        count: 1,
        written: [arm64::SP; 3],
    }
}
