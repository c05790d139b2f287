//! Encodings checked with `objdump -d` (binutils 2.40) on hand-written
//! assembly; each comment is the disassembly.

use proptest::prelude::*;

use super::*;

const IP: u64 = 0x40_1000;

fn regs(pairs: &[(u32, u64)]) -> Registers {
    let mut r = Registers::default();
    for (reg, value) in pairs {
        r.set(*reg, *value);
    }
    r
}

fn one(code: &[u8], r: &Registers) -> MemoryAccess {
    match decode(IP, code, r) {
        Decoded::Accesses(a) if a.len() == 1 => a[0],
        other => panic!("{code:02x?}: {other:?}"),
    }
}

#[test]
fn base_register_store() {
    // 48 89 07   mov %rax,(%rdi)
    let a = one(&[0x48, 0x89, 0x07], &regs(&[(regs::DI, 0x7000), (regs::AX, 1)]));
    assert_eq!(
        a,
        MemoryAccess {
            address: 0x7000,
            size_bytes: 8,
            kind: AccessKind::Write
        }
    );
}

#[test]
fn base_index_scale_displacement_load() {
    // 8b 44 8b 10   mov 0x10(%rbx,%rcx,4),%eax
    let a = one(&[0x8b, 0x44, 0x8b, 0x10], &regs(&[(regs::BX, 0x1000), (regs::CX, 3)]));
    assert_eq!(
        a,
        MemoryAccess {
            address: 0x1000 + 12 + 0x10,
            size_bytes: 4,
            kind: AccessKind::Read
        }
    );
    // 42 8b 84 e7 00 01 00 00   mov 0x100(%rdi,%r12,8),%eax
    let a = one(
        &[0x42, 0x8b, 0x84, 0xe7, 0x00, 0x01, 0x00, 0x00],
        &regs(&[(regs::DI, 0x2000), (regs::R8 + 4, 2)]),
    );
    assert_eq!(a.address, 0x2000 + 16 + 0x100);
}

#[test]
fn rip_relative_is_relative_to_the_next_instruction() {
    // 48 83 05 10 00 00 00 01   addq $0x1,0x10(%rip): 8 bytes long
    let a = one(&[0x48, 0x83, 0x05, 0x10, 0, 0, 0, 0x01], &Registers::default());
    assert_eq!(
        a,
        MemoryAccess {
            address: IP + 8 + 0x10,
            size_bytes: 8,
            kind: AccessKind::ReadModifyWrite
        }
    );
}

#[test]
fn locked_rmw_is_read_modify_write() {
    // f0 48 0f c1 07   lock xadd %rax,(%rdi)
    let a = one(
        &[0xf0, 0x48, 0x0f, 0xc1, 0x07],
        &regs(&[(regs::DI, 0x40), (regs::AX, 1)]),
    );
    assert_eq!(a.kind, AccessKind::ReadModifyWrite);
    assert_eq!(a.address, 0x40);
}

#[test]
fn push_and_pop_touch_the_stack() {
    // 50   push %rax: writes 8 bytes below rsp
    let a = one(&[0x50], &regs(&[(regs::SP, 0x8000), (regs::AX, 0)]));
    assert_eq!(
        a,
        MemoryAccess {
            address: 0x7ff8,
            size_bytes: 8,
            kind: AccessKind::Write
        }
    );
    // 58   pop %rax: reads at rsp
    let a = one(&[0x58], &regs(&[(regs::SP, 0x8000)]));
    assert_eq!(
        a,
        MemoryAccess {
            address: 0x8000,
            size_bytes: 8,
            kind: AccessKind::Read
        }
    );
}

#[test]
fn string_move_reads_rsi_and_writes_rdi() {
    // f3 a4   rep movsb (%rsi),(%rdi)
    match decode(
        IP,
        &[0xf3, 0xa4],
        &regs(&[(regs::SI, 0x100), (regs::DI, 0x200), (regs::CX, 5)]),
    ) {
        Decoded::Accesses(a) => {
            // A `rep` form's length depends on rcx: its size is left 0.
            let found: Vec<(u64, AccessKind)> = a.iter().map(|m| (m.address, m.kind)).collect();
            assert!(found.contains(&(0x100, AccessKind::Read)), "{a:?}");
            assert!(found.contains(&(0x200, AccessKind::Write)), "{a:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn lea_and_alu_touch_no_memory() {
    // 48 8d 04 07   lea (%rdi,%rax,1),%rax
    assert_eq!(
        decode(IP, &[0x48, 0x8d, 0x04, 0x07], &Registers::default()),
        Decoded::NoMemory
    );
    // 48 01 c3   add %rax,%rbx
    assert_eq!(
        decode(IP, &[0x48, 0x01, 0xc3], &Registers::default()),
        Decoded::NoMemory
    );
}

#[test]
fn thread_local_gather_and_missing_registers_are_unknown() {
    // 64 48 8b 04 25 10 00 00 00   mov %fs:0x10,%rax
    let tls = [0x64, 0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0];
    assert_eq!(
        decode(IP, &tls, &Registers::default()),
        Decoded::Unknown(Unknown::SegmentBase)
    );
    // c4 e2 6d 90 04 88   vpgatherdd %ymm2,(%rax,%ymm1,4),%ymm0
    let gather = [0xc4, 0xe2, 0x6d, 0x90, 0x04, 0x88];
    assert_eq!(
        decode(IP, &gather, &regs(&[(regs::AX, 0)])),
        Decoded::Unknown(Unknown::VectorIndex)
    );
    assert_eq!(
        decode(IP, &[0x48, 0x89, 0x07], &Registers::default()),
        Decoded::Unknown(Unknown::MissingRegister)
    );
}

#[test]
fn address_size_prefix_uses_the_low_half() {
    // 67 8b 07   mov (%edi),%eax
    let a = one(&[0x67, 0x8b, 0x07], &regs(&[(regs::DI, 0xffff_ffff_0000_1234)]));
    assert_eq!(a.address, 0x1234);
}

#[test]
fn garbage_and_truncation_are_undecodable() {
    assert_eq!(
        decode(IP, &[], &Registers::default()),
        Decoded::Unknown(Unknown::Undecodable)
    );
    // the first two bytes of an 8-byte instruction
    assert_eq!(
        decode(IP, &[0x48, 0x83], &Registers::default()),
        Decoded::Unknown(Unknown::Undecodable)
    );
}

#[test]
fn skid_takes_the_load_just_completed() {
    // 48 8b 07   mov (%rdi),%rax      <- just completed
    // 48 83 c0 01 add $0x1,%rax       <- IP
    let code = [0x48, 0x8b, 0x07, 0x48, 0x83, 0xc0, 0x01];
    let r = regs(&[(regs::DI, 0x5000), (regs::AX, 7)]);
    let (d, at) = crate::decode_sample(IP + 3, &code, 3, &r);
    assert_eq!(at, crate::Attributed::Previous);
    assert_eq!(
        d,
        Decoded::Accesses(vec![MemoryAccess {
            address: 0x5000,
            size_bytes: 8,
            kind: AccessKind::Read
        }])
    );
    // Without code before the IP: the add, no memory.
    assert_eq!(
        crate::decode_sample(IP + 3, &code[3..], 0, &r),
        (Decoded::NoMemory, crate::Attributed::AtIp)
    );
}

#[test]
fn skid_never_uses_an_overwritten_address_register() {
    // 48 8b 00   mov (%rax),%rax      <- just completed: rax is now the loaded value
    // 48 89 07   mov %rax,(%rdi)      <- IP
    let code = [0x48, 0x8b, 0x00, 0x48, 0x89, 0x07];
    let r = regs(&[(regs::DI, 0x6000), (regs::AX, 1)]);
    let (d, at) = crate::decode_sample(IP + 3, &code, 3, &r);
    assert_eq!(at, crate::Attributed::AtIp);
    assert_eq!(
        d,
        Decoded::Accesses(vec![MemoryAccess {
            address: 0x6000,
            size_bytes: 8,
            kind: AccessKind::Write
        }])
    );
    // push changes rsp, its own base: not recomputed, the IP's instruction is used.
    let code = [0x50, 0x90];
    assert_eq!(
        crate::decode_sample(IP + 1, &code, 1, &regs(&[(regs::SP, 0x8000)])).1,
        crate::Attributed::AtIp
    );
}

#[test]
fn skid_from_a_misaligned_start_falls_back_to_the_ip() {
    // The 3-byte `mov (%rdi),%rax` with the IP 2 bytes in: no instruction
    // ends at the IP, so the bytes at the IP are decoded as they are.
    let code = [0x48, 0x8b, 0x07, 0x90];
    let (d, at) = crate::decode_sample(IP + 2, &code, 2, &regs(&[(regs::DI, 0x10)]));
    // `07` (pop %es) does not exist in 64-bit mode.
    assert_eq!(
        (d, at),
        (Decoded::Unknown(Unknown::Undecodable), crate::Attributed::AtIp)
    );
}

proptest! {
    #[test]
    fn any_bytes_and_registers_never_panic(
        code in proptest::collection::vec(any::<u8>(), 0..40),
        values in proptest::collection::vec(any::<u64>(), 0..30),
        ip in any::<u64>(),
    ) {
        let regs = Registers::from_perf(regs::X86_64_SAMPLE_MASK, &values);
        let _ = decode(ip, &code, &regs);
        let back = code.len() / 2;
        let _ = crate::decode_sample(ip, &code, back, &regs);
        let _ = crate::decode_sample(ip, &code, code.len() + 5, &regs);
    }
}
