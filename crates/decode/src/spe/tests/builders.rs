//! Packet builders: each writes the header and payload of one packet of
//! the Arm ARM's SPE chapter (DDI 0487F.c, D10.2), as its comment says.

/// Padding: header 0b0000_0000, no payload.
pub(super) fn pad() -> Vec<u8> {
    vec![0x00]
}

/// End: header 0b0000_0001, no payload.
pub(super) fn end() -> Vec<u8> {
    vec![0x01]
}

/// Timestamp: header 0b0111_0001, an 8-byte payload.
pub(super) fn timestamp(value: u64) -> Vec<u8> {
    let mut out = vec![0x71];
    out.extend(value.to_le_bytes());
    out
}

/// Address, short header 0b1011_0iii (sz = 0b11: 8 bytes), index < 8.
pub(super) fn address(index: u8, payload: u64) -> Vec<u8> {
    assert!(index < 8);
    let mut out = vec![0xb0 | index];
    out.extend(payload.to_le_bytes());
    out
}

/// Address, extended header: 0b0010_00ii (index bits 4:3), then
/// 0b1011_0iii (index bits 2:0).
pub(super) fn address_extended(index: u8, payload: u64) -> Vec<u8> {
    assert!(index < 32);
    let mut out = vec![0x20 | (index >> 3), 0xb0 | (index & 0x7)];
    out.extend(payload.to_le_bytes());
    out
}

/// Counter, short header 0b1001_1iii (sz = 0b01: 2 bytes).
pub(super) fn counter(index: u8, cycles: u16) -> Vec<u8> {
    assert!(index < 8);
    let mut out = vec![0x98 | index];
    out.extend(cycles.to_le_bytes());
    out
}

/// Counter, extended header: 0b0010_00ii, then 0b1001_1iii.
pub(super) fn counter_extended(index: u8, cycles: u16) -> Vec<u8> {
    let mut out = vec![0x20 | (index >> 3), 0x98 | (index & 0x7)];
    out.extend(cycles.to_le_bytes());
    out
}

/// Context: header 0b0110_01ii (sz = 0b10: 4 bytes).
pub(super) fn context(index: u8, value: u32) -> Vec<u8> {
    let mut out = vec![0x64 | index];
    out.extend(value.to_le_bytes());
    out
}

/// Operation Type: header 0b0100_10cc (sz = 0b00: 1 byte), cc the class.
pub(super) fn operation(class: u8, payload: u8) -> Vec<u8> {
    vec![0x48 | class, payload]
}

/// Events: header 0b01ss_0010, a payload of 1 << ss bytes.
pub(super) fn events(size_code: u8, bits: u64) -> Vec<u8> {
    let mut out = vec![0x42 | (size_code << 4)];
    out.extend(&bits.to_le_bytes()[..1 << size_code]);
    out
}

/// Data Source: header 0b01ss_0011, a payload of 1 << ss bytes.
pub(super) fn data_source(size_code: u8, value: u64) -> Vec<u8> {
    let mut out = vec![0x43 | (size_code << 4)];
    out.extend(&value.to_le_bytes()[..1 << size_code]);
    out
}

pub(super) fn join(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.concat()
}

/// PC payload: bit 63 NS, bits 62:61 the exception level, 55:0 address.
pub(super) fn pc_payload(address: u64, el: u64, non_secure: bool) -> u64 {
    (u64::from(non_secure) << 63) | (el << 61) | (address & ((1 << 56) - 1))
}

pub(super) const USER_PC: u64 = 0x0000_aaaa_0040_1234;
pub(super) const USER_VA: u64 = 0x0000_ffff_8765_4320;

/// A user load as SPE writes it for a load/store-filtered event.
pub(super) fn user_load() -> Vec<u8> {
    join(&[
        operation(1, 0x00),
        address(2, USER_VA),
        counter(2, 7),
        events(0, 0b0000_1110),
        address(0, pc_payload(USER_PC, 0, true)),
        counter(0, 211),
        counter(1, 13),
        data_source(1, 0xe),
        timestamp(0x1234_5678),
    ])
}
