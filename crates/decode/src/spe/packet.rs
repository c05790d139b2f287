//! One SPE packet from the front of a byte slice: its header says what it
//! is and how long it is, and nothing here looks further than that packet.
//!
//! The layout (Arm Architecture Reference Manual, the Statistical
//! Profiling Extension's sample record chapter, D10.2 in DDI 0487F.c;
//! learned from it as Linux's `tools/perf/util/arm-spe-decoder` reads it):
//!
//! - every packet starts with a one-byte header; bits 5:4 of the header
//!   (`sz`) give the payload length, 1 << sz bytes (1, 2, 4 or 8), and the
//!   payload follows little-endian;
//! - `0b0000_0000` is Padding and `0b0000_0001` End, neither with a
//!   payload;
//! - `0b0010_00ii` is an extended header: a second header byte follows and
//!   `ii` are bits 4:3 of that packet's index (Address and Counter packets
//!   only, whose short form has three index bits);
//! - `0b0111_0001` Timestamp, `0b01ss_0010` Events, `0b01ss_0011` Data
//!   Source, `0b0110_01ii` Context, `0b0100_10cc` Operation Type,
//!   `0b1011_0iii` Address and `0b1001_1iii` Counter.
//!
//! A header matching none of these is skipped by its size field, so a
//! packet kind a later architecture version adds costs its bytes and
//! nothing else.

/// Bytes of the longest packet: an extended header and an 8-byte payload.
pub const MAX_PACKET_BYTES: usize = 10;

/// What one packet says, its payload as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packet {
    Padding,
    End,
    Timestamp(u64),
    /// `index`: 0 the PC, 1 a branch target, 2 the data virtual address, 3
    /// the data physical address, 4 the previous branch target.
    Address {
        index: u8,
        payload: u64,
    },
    /// `index`: 0 total latency, 1 issue latency, 2 translation latency.
    Counter {
        index: u8,
        payload: u64,
    },
    /// `index`: 0 CONTEXTIDR_EL1, 1 CONTEXTIDR_EL2.
    Context {
        index: u8,
        payload: u64,
    },
    /// `class`: 0 other, 1 load/store/atomic, 2 branch or exception return.
    OperationType {
        class: u8,
        payload: u64,
    },
    Events {
        payload: u64,
        /// How many bytes the payload had: the events beyond them were not
        /// recorded, so they are unknown rather than absent.
        payload_bytes: u8,
    },
    DataSource {
        payload: u64,
    },
    /// A header this decoder does not know; its bytes were skipped.
    Unknown,
}

/// The packet at the front of a slice, or why there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The packet and how many bytes it took (1 to [`MAX_PACKET_BYTES`]).
    Packet(Packet, usize),
    /// The slice ends inside the packet's header or payload.
    Truncated,
}

const PADDING: u8 = 0x00;
const END: u8 = 0x01;
const TIMESTAMP: u8 = 0x71;
const EXTENDED_MASK: u8 = 0xfc;
const EXTENDED: u8 = 0x20;
/// Events and Data Source: the size bits are free.
const SIZED_MASK: u8 = 0xcf;
const EVENTS: u8 = 0x42;
const DATA_SOURCE: u8 = 0x43;
/// Context and Operation Type: their size is fixed, the low two bits are
/// the index or class.
const INDEXED2_MASK: u8 = 0xfc;
const CONTEXT: u8 = 0x64;
const OPERATION_TYPE: u8 = 0x48;
/// Address and Counter: the low three bits are the index.
const INDEXED3_MASK: u8 = 0xf8;
const ADDRESS: u8 = 0xb0;
const COUNTER: u8 = 0x98;

/// The packet at the start of `bytes`. Never reads past a packet's own
/// bytes and never panics, whatever the bytes.
pub fn next(bytes: &[u8]) -> Step {
    let Some(&first) = bytes.first() else {
        return Step::Truncated;
    };
    match first {
        PADDING => return Step::Packet(Packet::Padding, 1),
        END => return Step::Packet(Packet::End, 1),
        _ => {}
    }
    let extended = first & EXTENDED_MASK == EXTENDED;
    let (header, header_bytes) = if extended {
        match bytes.get(1) {
            Some(&second) => (second, 2),
            None => return Step::Truncated,
        }
    } else {
        (first, 1)
    };
    let payload_bytes = 1usize << ((header >> 4) & 0x3);
    let total = header_bytes + payload_bytes;
    let Some(payload) = bytes.get(header_bytes..total) else {
        return Step::Truncated;
    };
    let payload = little_endian(payload);
    let packet = if extended {
        // Only Address and Counter packets have an extended form; their
        // index gains the two bits of the first byte.
        let index = ((first & 0x3) << 3) | (header & 0x7);
        indexed3(header, index, payload)
    } else {
        short(header, payload, payload_bytes)
    };
    Step::Packet(packet, total)
}

/// A one-byte header's packet.
fn short(header: u8, payload: u64, payload_bytes: usize) -> Packet {
    if header == TIMESTAMP {
        Packet::Timestamp(payload)
    } else if header & SIZED_MASK == EVENTS {
        Packet::Events {
            payload,
            // 1 << sz with sz < 4: at most 8, so the cast is exact.
            payload_bytes: payload_bytes as u8,
        }
    } else if header & SIZED_MASK == DATA_SOURCE {
        Packet::DataSource { payload }
    } else if header & INDEXED2_MASK == CONTEXT {
        Packet::Context {
            index: header & 0x3,
            payload,
        }
    } else if header & INDEXED2_MASK == OPERATION_TYPE {
        Packet::OperationType {
            class: header & 0x3,
            payload,
        }
    } else {
        indexed3(header, header & 0x7, payload)
    }
}

fn indexed3(header: u8, index: u8, payload: u64) -> Packet {
    match header & INDEXED3_MASK {
        ADDRESS => Packet::Address { index, payload },
        COUNTER => Packet::Counter { index, payload },
        _ => Packet::Unknown,
    }
}

/// Up to 8 bytes, least significant first.
fn little_endian(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(8)
        .rev()
        .fold(0u64, |value, &byte| (value << 8) | u64::from(byte))
}
