//! Arm SPE (Statistical Profiling Extension) sample records, decoded from
//! the bytes perf's AUX buffer holds for an `arm_spe` event.
//!
//! SPE picks one operation in every N, follows it through the pipeline and
//! writes a record of what it did: its PC, for a load or store the data
//! address, its latencies in cycles, events (L1D or TLB miss, remote
//! access…) and where the data came from. A record is a run of packets
//! ended by an End packet or, when timestamps are on, by a Timestamp
//! packet ([`packet`] has the byte layout).
//!
//! The input is untrusted (the kernel copies what the hardware wrote, and
//! a ring can be cut anywhere): nothing here panics, nothing allocates in
//! proportion to the input except [`decode`]'s capped list, and a packet
//! cut by the end of the input is counted, not guessed at.
//!
//! Written from the published packet format; no record from real SPE
//! hardware has been through it (docs/hotlines.md).

mod fields;
pub mod packet;

pub use fields::{
    data_physical_address, data_virtual_address, Context, DataSource, Event, Events, InstructionAddress, Operation,
    OperationKind, SourceClass,
};
use packet::{Packet, Step};

/// Records [`decode`] keeps at most, whatever it is asked: a record is
/// about 150 bytes here, so this bounds the list to a few MiB.
pub const MAX_RECORDS: usize = 65_536;

/// One sample record, each field `None` when its packet was absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    pub pc: Option<InstructionAddress>,
    pub branch_target: Option<InstructionAddress>,
    pub data_virtual_address: Option<u64>,
    pub data_physical_address: Option<u64>,
    pub operation: Option<Operation>,
    /// Cycles from dispatch to completion.
    pub total_latency_cycles: Option<u64>,
    /// Cycles from dispatch to issue.
    pub issue_latency_cycles: Option<u64>,
    /// Cycles the address translation took.
    pub translation_latency_cycles: Option<u64>,
    pub events: Events,
    pub data_source: Option<DataSource>,
    pub context: Option<Context>,
    /// The generic timer's count, when the Timestamp packet ended it.
    pub timestamp: Option<u64>,
}

/// What decoding met besides records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Records found, including those past the cap.
    pub records: u64,
    /// Records found past the caller's cap: counted, not kept or handed on.
    pub records_past_cap: u64,
    /// Packets other than padding.
    pub packets: u64,
    pub padding_bytes: u64,
    /// Packets with a header this decoder does not know, skipped by size.
    pub unknown_packets: u64,
    /// Known packets with an index this decoder does not use (a counter
    /// or address index beyond those named), skipped.
    pub unused_packets: u64,
    /// End or Timestamp packets that closed no packet at all.
    pub empty_records: u64,
    /// 1 when the input ended inside a packet, else 0; its bytes are in
    /// `truncated_bytes`.
    pub truncated_packets: u64,
    pub truncated_bytes: u64,
    /// 1 when the input ended after some packets of a record but before
    /// its End or Timestamp: the record is dropped.
    pub unfinished_records: u64,
    /// Bytes up to the end of the last whole record: a caller that gets
    /// the rest later may start again from here.
    pub complete_bytes: u64,
}

/// Records and counts, from [`decode`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decoded {
    pub records: Vec<Record>,
    pub counts: Counts,
}

/// Every record in `bytes`, at most `max_records` of them (and never more
/// than [`MAX_RECORDS`]) kept; the rest counted.
pub fn decode(bytes: &[u8], max_records: usize) -> Decoded {
    let cap = max_records.min(MAX_RECORDS);
    let mut records = Vec::new();
    let counts = for_each_record(bytes, cap, |record| records.push(record.clone()));
    Decoded { records, counts }
}

/// Hands each record in `bytes` to `each`, in order, up to `max_records`;
/// allocates nothing. The counts say what else was met.
pub fn for_each_record(bytes: &[u8], max_records: usize, mut each: impl FnMut(&Record)) -> Counts {
    let mut counts = Counts::default();
    let mut record = Record::default();
    // Whether a packet of the current record has been seen.
    let mut open = false;
    let mut offset = 0usize;
    while let Some(rest) = bytes.get(offset..).filter(|r| !r.is_empty()) {
        let (packet, length) = match packet::next(rest) {
            Step::Packet(packet, length) => (packet, length),
            Step::Truncated => {
                counts.truncated_packets = 1;
                counts.truncated_bytes = rest.len() as u64;
                break;
            }
        };
        offset += length;
        if packet == Packet::Padding {
            counts.padding_bytes += 1;
            continue;
        }
        counts.packets += 1;
        let ends = match packet {
            Packet::End => true,
            Packet::Timestamp(value) => {
                record.timestamp = Some(value);
                true
            }
            other => {
                open |= apply(&mut record, other, &mut counts);
                false
            }
        };
        if ends {
            if open {
                counts.records += 1;
                if counts.records <= max_records as u64 {
                    each(&record);
                } else {
                    counts.records_past_cap += 1;
                }
            } else {
                counts.empty_records += 1;
            }
            record = Record::default();
            open = false;
            counts.complete_bytes = offset as u64;
        }
    }
    if open {
        counts.unfinished_records = 1;
    }
    counts
}

/// Folds one packet into the record; false when it said nothing this
/// decoder keeps (the record stays as it was).
fn apply(record: &mut Record, packet: Packet, counts: &mut Counts) -> bool {
    let used = match packet {
        Packet::Address { index, payload } => apply_address(record, index, payload),
        Packet::Counter { index, payload } => apply_counter(record, index, payload),
        Packet::Context { index, payload } => {
            record.context = Some(Context {
                value: (payload & 0xffff_ffff) as u32,
                register_index: index,
            });
            true
        }
        Packet::OperationType { class, payload } => {
            record.operation = Some(Operation::from_packet(class, payload));
            true
        }
        Packet::Events { payload, payload_bytes } => {
            record.events = Events {
                bits: payload,
                payload_bytes,
            };
            true
        }
        Packet::DataSource { payload } => {
            record.data_source = Some(DataSource { raw: payload });
            true
        }
        Packet::Unknown => {
            counts.unknown_packets += 1;
            return false;
        }
        Packet::Padding | Packet::End | Packet::Timestamp(_) => false,
    };
    if !used {
        counts.unused_packets += 1;
    }
    used
}

fn apply_address(record: &mut Record, index: u8, payload: u64) -> bool {
    match index {
        0 => record.pc = Some(InstructionAddress::from_payload(payload)),
        1 => record.branch_target = Some(InstructionAddress::from_payload(payload)),
        2 => record.data_virtual_address = Some(data_virtual_address(payload)),
        3 => record.data_physical_address = Some(data_physical_address(payload)),
        // 4, the previous branch target, and indexes not named yet.
        _ => return false,
    }
    true
}

fn apply_counter(record: &mut Record, index: u8, payload: u64) -> bool {
    let slot = match index {
        0 => &mut record.total_latency_cycles,
        1 => &mut record.issue_latency_cycles,
        2 => &mut record.translation_latency_cycles,
        _ => return false,
    };
    *slot = Some(payload);
    true
}

#[cfg(test)]
mod tests;
