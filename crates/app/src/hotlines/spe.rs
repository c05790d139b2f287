//! Arm SPE's path through `hotlines`: the AUX chunks `probe::spe` drains
//! are decoded (`decode::spe`), and each record of a load, store or atomic
//! with a data address becomes the same precise sample a PEBS or IBS
//! sample does, tallied per line with the thread its event was on and the
//! CPU the chunk was written on.

use numasleuth_analyze::hotlines::sampled::{Sample, SampleTally, Seen};
use numasleuth_decode::spe::{for_each_record, OperationKind, Record};
use numasleuth_model::perf::sample::{SampleRaw, SpeRecordTotals};
use numasleuth_model::stop::Stop;
use numasleuth_probe::spe::{sample, AuxChunk, SpeSpec};
use numasleuth_probe::ProbeError;

/// Records taken from one chunk at most; a chunk is at most one AUX area
/// (128 KiB on 4 KiB pages), so this is never reached by real data.
const MAX_RECORDS_PER_CHUNK: usize = 1 << 16;

/// What one record says for the tally.
pub fn seen(record: &Record) -> Seen {
    match record.operation.map(|op| op.kind) {
        Some(OperationKind::Branch { .. } | OperationKind::Other) => Seen::PreciseNoMemory,
        // A load, store or atomic; or a record whose Operation Type packet
        // was missing, kept when it has a data address (taken as a read).
        kind => match (record.data_virtual_address, kind) {
            (None, None) => Seen::PreciseNoMemory,
            (address, _) => Seen::Precise {
                address: address.unwrap_or(0),
                access: record.operation.and_then(|op| op.access_kind()),
            },
        },
    }
}

/// Decodes one chunk into `tally`, counting into `totals`.
pub fn add_chunk(chunk: &AuxChunk<'_>, tally: &mut SampleTally, totals: &mut SpeRecordTotals) {
    let mut each = |record: &Record| {
        let seen = seen(record);
        if matches!(seen, Seen::Precise { address, .. } if address != 0) {
            totals.memory_records += 1;
            totals.remote_records += u64::from(record.events.remote_access());
        }
        // The Context packet is the thread's id only where the kernel puts
        // it there (CONFIG_PID_IN_CONTEXTIDR); the event's thread decides.
        if record.context.is_some_and(|c| c.value != chunk.tid) {
            totals.other_context_records += 1;
        }
        tally.add(&Sample {
            tid: chunk.tid,
            cpu: chunk.cpu,
            stack_pointer: None,
            seen,
        });
    };
    let counts = for_each_record(chunk.bytes, MAX_RECORDS_PER_CHUNK, &mut each);
    totals.records = totals.records.saturating_add(counts.records);
    totals.unknown_packets = totals.unknown_packets.saturating_add(counts.unknown_packets);
    let cut = counts.truncated_packets.max(counts.unfinished_records);
    totals.cut_records = totals.cut_records.saturating_add(cut);
}

/// Samples through `arm_spe`, tallying into `tally` as chunks arrive.
pub fn sample_spe(
    spec: &SpeSpec,
    tally: &mut SampleTally,
    stop: &Stop,
) -> Result<(SampleRaw, SpeRecordTotals), ProbeError> {
    let mut totals = SpeRecordTotals::default();
    let raw = sample(spec, &mut |chunk| add_chunk(chunk, tally, &mut totals), stop)?;
    Ok((raw, totals))
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_model::perf::decoded::AccessKind;

    /// Three records in SPE's packet format (Arm ARM DDI 0487F.c, D10.2),
    /// timestamps off (each ends with End, 0x01): a store, an atomic with a
    /// remote-access event and a Context packet naming thread 99, and a
    /// branch; then a load cut inside its address packet.
    fn chunk_bytes() -> Vec<u8> {
        let address = |index: u8, va: u64| {
            let mut p = vec![0xb0 | index];
            p.extend(va.to_le_bytes());
            p
        };
        let mut bytes = Vec::new();
        // Operation Type 0b0100_1001 (load/store class), payload 0x01: a
        // store of general-purpose registers; data VA; End.
        bytes.extend([0x49, 0x01]);
        bytes.extend(address(2, 0x7f00_0000_1040));
        bytes.push(0x01);
        // Context 0b0110_0100 (CONTEXTIDR_EL1), 4 bytes: 99. Operation
        // Type payload 0x06: an atomic load. Events 0b0101_0010, 2 bytes:
        // bit 10 (remote access). Data VA on the same line. End.
        bytes.extend([0x64, 99, 0, 0, 0, 0x49, 0x06, 0x52, 0x00, 0x04]);
        bytes.extend(address(2, 0x7f00_0000_1048));
        bytes.push(0x01);
        // Operation Type 0b0100_1010 (branch class), payload 0x01: a
        // conditional branch; its PC; End.
        bytes.extend([0x4a, 0x01]);
        bytes.extend(address(0, 0x40_1000));
        bytes.push(0x01);
        // A load whose address packet is cut after 3 of its 8 bytes.
        bytes.extend([0x49, 0x00, 0xb2, 0x00, 0x20, 0x00]);
        bytes
    }

    #[test]
    fn a_chunk_of_records_becomes_precise_samples_on_its_threads_line() {
        let mut tally = SampleTally::new([(3, 1)].into_iter().collect());
        let mut totals = SpeRecordTotals::default();
        let bytes = chunk_bytes();
        let chunk = AuxChunk {
            tid: 42,
            cpu: Some(3),
            bytes: &bytes,
        };
        add_chunk(&chunk, &mut tally, &mut totals);
        assert_eq!(
            totals,
            SpeRecordTotals {
                records: 3,
                memory_records: 2,
                remote_records: 1,
                unknown_packets: 0,
                cut_records: 1,
                other_context_records: 1,
            }
        );
        assert_eq!(
            (tally.tally.samples, tally.tally.no_memory, tally.precise_samples),
            (3, 1, 3)
        );
        let line = &tally.tally.lines[&0x7f00_0000_1040];
        assert_eq!((line.samples, line.writes, line.rmw), (2, 2, 1));
        assert_eq!(line.threads.keys().copied().collect::<Vec<_>>(), [42]);
        assert_eq!(line.nodes.iter().copied().collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn records_without_an_operation_or_address_are_told_apart() {
        let load_without_address = numasleuth_decode::spe::decode(&[0x49, 0x00, 0x01], 1).records;
        assert_eq!(
            seen(&load_without_address[0]),
            Seen::Precise {
                address: 0,
                access: Some(AccessKind::Read)
            }
        );
        let address_only = numasleuth_decode::spe::decode(&[0xb2, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x01], 1).records;
        assert_eq!(
            seen(&address_only[0]),
            Seen::Precise {
                address: 0x40,
                access: None
            }
        );
        let counter_only = numasleuth_decode::spe::decode(&[0x98, 0x10, 0x00, 0x01], 1).records;
        assert_eq!(seen(&counter_only[0]), Seen::PreciseNoMemory);
    }
}
