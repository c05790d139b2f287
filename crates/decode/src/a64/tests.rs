//! Encodings assembled with `aarch64-linux-gnu-as -march=armv8.3-a+lse+sve`
//! (GNU binutils 2.40) and read back with `aarch64-linux-gnu-objdump -d`;
//! each word is written beside its disassembly, so no assembler is needed
//! here. Registers: xN = 0x1000 * (N + 1), sp = 0x10_0000, unless a test
//! says otherwise.

use proptest::prelude::*;

use super::*;
use crate::{AccessKind, Arch, Attributed};

const IP: u64 = 0x40_1000;

fn file() -> Registers {
    let mut r = Registers::default();
    for n in 0..31 {
        r.set(n, 0x1000 * (u64::from(n) + 1));
    }
    r.set(arm64::SP, 0x10_0000);
    r
}

fn x(n: u64) -> u64 {
    0x1000 * (n + 1)
}

fn at_ip(word: u32, regs: &Registers) -> Decoded {
    decode(IP, &word.to_le_bytes(), regs)
}

/// The word as the instruction just completed (at `IP - 4`), followed by
/// a `nop` at the IP.
fn just_ran(word: u32, regs: &Registers) -> (Decoded, Attributed) {
    let mut code = word.to_le_bytes().to_vec();
    code.extend(0xd503_201f_u32.to_le_bytes()); // nop
    Arch::Aarch64.decode_sample(IP, &code, 4, regs)
}

fn accesses(list: &[(u64, u32)], kind: AccessKind) -> Decoded {
    Decoded::Accesses(
        list.iter()
            .map(|&(address, size_bytes)| MemoryAccess {
                address,
                size_bytes,
                kind,
            })
            .collect(),
    )
}

fn read(address: u64, size_bytes: u32) -> Decoded {
    accesses(&[(address, size_bytes)], AccessKind::Read)
}
fn write(address: u64, size_bytes: u32) -> Decoded {
    accesses(&[(address, size_bytes)], AccessKind::Write)
}
fn rmw(address: u64, size_bytes: u32) -> Decoded {
    accesses(&[(address, size_bytes)], AccessKind::ReadModifyWrite)
}

#[test]
fn base_plus_immediate() {
    let r = file();
    // f9400820   ldr x0, [x1, #16]
    assert_eq!(at_ip(0xf940_0820, &r), read(x(1) + 16, 8));
    // b81fc062   stur w2, [x3, #-4]
    assert_eq!(at_ip(0xb81f_c062, &r), write(x(3) - 4, 4));
    // 39400fe0   ldrb w0, [sp, #3]   (base 31 is sp)
    assert_eq!(at_ip(0x3940_0fe0, &r), read(0x10_0003, 1));
    // f8408820   ldtr x0, [x1, #8]
    assert_eq!(at_ip(0xf840_8820, &r), read(x(1) + 8, 8));
    // b9800420   ldrsw x0, [x1, #4]
    assert_eq!(at_ip(0xb980_0420, &r), read(x(1) + 4, 4));
    // 3dc00800   ldr q0, [x0, #32]   (scaled by 16)
    assert_eq!(at_ip(0x3dc0_0800, &r), read(x(0) + 32, 16));
}

#[test]
fn register_offset_with_extend_and_shift() {
    let mut r = file();
    // f8627820   ldr x0, [x1, x2, lsl #3]
    assert_eq!(at_ip(0xf862_7820, &r), read(x(1) + x(2) * 8, 8));
    // fc627821   ldr d1, [x1, x2, lsl #3]
    assert_eq!(at_ip(0xfc62_7821, &r), read(x(1) + x(2) * 8, 8));
    // b862d820   ldr w0, [x1, w2, sxtw #2]   with w2 = -2 (upper half junk)
    r.set(2, 0xdead_beef_ffff_fffe);
    assert_eq!(at_ip(0xb862_d820, &r), read(x(1) - 8, 4));
    // 78624820   ldrh w0, [x1, w2, uxtw]
    assert_eq!(at_ip(0x7862_4820, &r), read(x(1) + 0xffff_fffe, 2));
}

#[test]
fn write_back_is_the_base_before_or_after() {
    let r = file();
    // f8010c20   str x0, [x1, #16]!   at base + 16, which the base becomes
    assert_eq!(at_ip(0xf801_0c20, &r), write(x(1) + 16, 8));
    assert_eq!(just_ran(0xf801_0c20, &r), (write(x(1), 8), Attributed::Previous));
    // f8410420   ldr x0, [x1], #16    at the base, then base + 16
    assert_eq!(at_ip(0xf841_0420, &r), read(x(1), 8));
    assert_eq!(just_ran(0xf841_0420, &r), (read(x(1) - 16, 8), Attributed::Previous));
}

#[test]
fn pairs_touch_two_words() {
    let r = file();
    // a9410440   ldp x0, x1, [x2, #16]
    assert_eq!(
        at_ip(0xa941_0440, &r),
        accesses(&[(x(2) + 16, 8), (x(2) + 24, 8)], AccessKind::Read)
    );
    // 29bc07e0   stp w0, w1, [sp, #-32]!
    let pushed = accesses(&[(0x10_0000 - 32, 4), (0x10_0000 - 28, 4)], AccessKind::Write);
    assert_eq!(at_ip(0x29bc_07e0, &r), pushed);
    // After it ran, sp is already 32 lower.
    let mut after = r.clone();
    after.set(arm64::SP, 0x10_0000 - 32);
    assert_eq!(just_ran(0x29bc_07e0, &after), (pushed, Attributed::Previous));
    // ad400400   ldp q0, q1, [x0]
    assert_eq!(
        at_ip(0xad40_0400, &r),
        accesses(&[(x(0), 16), (x(0) + 16, 16)], AccessKind::Read)
    );
    // 697f0440   ldpsw x0, x1, [x2, #-8]
    assert_eq!(
        at_ip(0x697f_0440, &r),
        accesses(&[(x(2) - 8, 4), (x(2) - 4, 4)], AccessKind::Read)
    );
    // a84110a3   ldnp x3, x4, [x5, #16]
    assert_eq!(
        at_ip(0xa841_10a3, &r),
        accesses(&[(x(5) + 16, 8), (x(5) + 24, 8)], AccessKind::Read)
    );
}

#[test]
fn exclusives_acquire_release_and_lse_atomics_are_read_modify_writes() {
    let r = file();
    for (word, address, size_bytes, text) in [
        (0xc8df_fc20, x(1), 8, "ldar x0, [x1]"),
        (0x889f_fc20, x(1), 4, "stlr w0, [x1]"),
        (0xc85f_7c20, x(1), 8, "ldxr x0, [x1]"),
        (0xc802_7c20, x(1), 8, "stxr w2, x0, [x1]"),
        (0xf820_0041, x(2), 8, "ldadd x0, x1, [x2]"),
        (0xb8e0_0041, x(2), 4, "ldaddal w0, w1, [x2]"),
        (0xb820_005f, x(2), 4, "stadd w0, [x2]"),
        (0xc8a0_7c41, x(2), 8, "cas x0, x1, [x2]"),
        (0x88e0_fc41, x(2), 4, "casal w0, w1, [x2]"),
        (0xf820_8041, x(2), 8, "swp x0, x1, [x2]"),
    ] {
        assert_eq!(at_ip(word, &r), rmw(address, size_bytes), "{text}");
    }
    // c87f8440   ldaxp x0, x1, [x2]
    let pair = accesses(&[(x(2), 8), (x(2) + 8, 8)], AccessKind::ReadModifyWrite);
    assert_eq!(at_ip(0xc87f_8440, &r), pair);
    // 48207c82   casp x0, x1, x2, x3, [x4]
    let pair = accesses(&[(x(4), 8), (x(4) + 8, 8)], AccessKind::ReadModifyWrite);
    assert_eq!(at_ip(0x4820_7c82, &r), pair);
}

#[test]
fn simd_structure_loads_and_stores() {
    let r = file();
    // 4c407000   ld1 {v0.16b}, [x0]
    assert_eq!(at_ip(0x4c40_7000, &r), read(x(0), 16));
    // 4c40a820   ld1 {v0.4s, v1.4s}, [x1]
    assert_eq!(at_ip(0x4c40_a820, &r), read(x(1), 32));
    // 4c002c40   st1 {v0.2d-v3.2d}, [x2]
    assert_eq!(at_ip(0x4c00_2c40, &r), write(x(2), 64));
    // 0d409000   ld1 {v0.s}[1], [x0]
    assert_eq!(at_ip(0x0d40_9000, &r), read(x(0), 4));
    // 4d40c800   ld1r {v0.4s}, [x0]
    assert_eq!(at_ip(0x4d40_c800, &r), read(x(0), 4));
    // 4cdf7000   ld1 {v0.16b}, [x0], #16
    assert_eq!(at_ip(0x4cdf_7000, &r), read(x(0), 16));
    assert_eq!(just_ran(0x4cdf_7000, &r), (read(x(0) - 16, 16), Attributed::Previous));
    // 0cc37000   ld1 {v0.8b}, [x0], x3
    assert_eq!(at_ip(0x0cc3_7000, &r), read(x(0), 8));
    let mut after = r.clone();
    after.set(0, x(0) + x(3));
    assert_eq!(just_ran(0x0cc3_7000, &after), (read(x(0), 8), Attributed::Previous));
    // 4d9f8420   st1 {v0.d}[1], [x1], #8
    assert_eq!(just_ran(0x4d9f_8420, &r), (write(x(1) - 8, 8), Attributed::Previous));
}

#[test]
fn literal_is_relative_to_its_own_address() {
    // 58000200   ldr x0, .+64
    assert_eq!(at_ip(0x5800_0200, &Registers::default()), read(IP + 64, 8));
    let (d, at) = just_ran(0x5800_0200, &Registers::default());
    assert_eq!((d, at), (read(IP - 4 + 64, 8), Attributed::Previous));
}

#[test]
fn no_memory_and_forms_not_decoded() {
    let r = file();
    // 8b020020   add x0, x1, x2
    assert_eq!(at_ip(0x8b02_0020, &r), Decoded::NoMemory);
    // 14000002   b .+8
    assert_eq!(at_ip(0x1400_0002, &r), Decoded::NoMemory);
    // f9800000   prfm pldl1keep, [x0]   (a hint, not an access)
    assert_eq!(at_ip(0xf980_0000, &r), Decoded::NoMemory);
    // a5e1a000   ld1d {z0.d}, p0/z, [x0, #1, mul vl]   (SVE: vector length unknown)
    assert_eq!(at_ip(0xa5e1_a000, &r), Decoded::Unknown(Unknown::AddressForm));
    // f8200420   ldraa x0, [x1]   (pointer authentication)
    assert_eq!(at_ip(0xf820_0420, &r), Decoded::Unknown(Unknown::AddressForm));
    assert_eq!(at_ip(0xffff_ffff, &r), Decoded::Unknown(Unknown::Undecodable));
    assert_eq!(decode(IP, &[0x20, 0x08], &r), Decoded::Unknown(Unknown::Undecodable));
    // Not 4-aligned: not an A64 instruction address.
    assert_eq!(
        decode(IP + 2, &0xf940_0820_u32.to_le_bytes(), &r),
        Decoded::Unknown(Unknown::Undecodable)
    );
    assert_eq!(
        at_ip(0xf940_0820, &Registers::default()),
        Decoded::Unknown(Unknown::MissingRegister)
    );
}

#[test]
fn a_loaded_address_register_is_not_the_input_after() {
    let r = file();
    for (word, text) in [
        (0xf940_0000, "ldr x0, [x0]"),
        (0xf820_0021, "ldadd x0, x1, [x1]"),
        (0xa940_0400, "ldp x0, x1, [x0]"),
        (0xf861_6801, "ldr x1, [x0, x1]"),
    ] {
        assert!(matches!(at_ip(word, &r), Decoded::Accesses(_)), "{text}");
        // Not taken as the previous instruction: the one at the IP is.
        assert_eq!(just_ran(word, &r), (Decoded::NoMemory, Attributed::AtIp), "{text}");
        let code = word.to_le_bytes();
        assert_eq!(
            previous(IP, &code, 4, &r),
            Some(Decoded::Unknown(Unknown::Clobbered)),
            "{text}"
        );
    }
    // A store's data register is not written: str x0, [x0, #16] stays.
    // f9000800   str x0, [x0, #16]
    assert_eq!(just_ran(0xf900_0800, &r), (write(x(0) + 16, 8), Attributed::Previous));
}

#[test]
fn the_previous_instruction_needs_its_bytes() {
    let r = file();
    let code = 0xf940_0820_u32.to_le_bytes();
    // No bytes before the IP: the instruction at the IP.
    assert_eq!(
        Arch::Aarch64.decode_sample(IP, &code, 0, &r),
        (read(x(1) + 16, 8), Attributed::AtIp)
    );
    assert_eq!(previous(IP, &code, 3, &r), None);
}

proptest! {
    #[test]
    fn never_panics(word in any::<u32>(), ip in any::<u64>(), back in 0usize..12, values in proptest::collection::vec(any::<u64>(), 0..34)) {
        let regs = Registers::from_perf(arm64::SAMPLE_MASK, &values);
        let mut code = word.to_le_bytes().to_vec();
        code.extend(word.rotate_left(7).to_le_bytes());
        let _ = Arch::Aarch64.decode_sample(ip, &code, back, &regs);
        let _ = decode(ip, &code[..(back % 5)], &regs);
    }
}
