//! Records built byte by byte from the published packet format: each
//! builder (`builders`) names the packet of the Arm ARM's SPE chapter (DDI
//! 0487F.c, D10.2) whose header and payload it writes. One record is the
//! raw dump Linux's perf printed from a real SPE buffer when its decoder
//! was added (commit ffd3d18c20b8, "perf tools: Add ARM Statistical
//! Profiling Extensions (SPE) support"): the only hardware-written bytes
//! here.

use proptest::prelude::*;

use super::packet::{next, Packet, Step, MAX_PACKET_BYTES};
use super::*;
use builders::*;
use numasleuth_model::perf::decoded::AccessKind;

mod builders;
mod fields;

#[test]
fn a_record_with_every_packet_kind() {
    let bytes = join(&[
        pad(),
        context(0, 4242),
        operation(1, 0x06),
        address(2, 0x5a00_7fff_0000_1040),
        address(3, (1 << 63) | 0x0000_0080_1234_5040),
        address(1, pc_payload(0x4000, 0, true)),
        counter(2, 3),
        events(1, (1 << 10) | (1 << 3) | (1 << 1)),
        data_source(1, 0xd),
        address(0, pc_payload(USER_PC, 0, true)),
        counter(0, 1500),
        counter(1, 40),
        pad(),
        pad(),
        timestamp(0xabc_def0),
        // An End after a Timestamp closes nothing (timestamps on: the
        // Timestamp ends the record).
        end(),
    ]);
    let decoded = decode(&bytes, 10);
    assert_eq!(decoded.records.len(), 1);
    let r = &decoded.records[0];
    assert_eq!(
        r.context,
        Some(Context {
            value: 4242,
            register_index: 0
        })
    );
    let op = r.operation.unwrap();
    assert_eq!(op.kind, OperationKind::AtomicOrExclusive { store: false });
    assert_eq!(op.access_kind(), Some(AccessKind::ReadModifyWrite));
    // The tag byte 0x5a is not address bits.
    assert_eq!(r.data_virtual_address, Some(0x0000_7fff_0000_1040));
    assert_eq!(r.data_physical_address, Some(0x0000_0080_1234_5040));
    assert_eq!(r.branch_target.unwrap().address, 0x4000);
    let pc = r.pc.unwrap();
    assert_eq!((pc.address, pc.exception_level, pc.non_secure), (USER_PC, 0, true));
    assert_eq!(
        (
            r.total_latency_cycles,
            r.issue_latency_cycles,
            r.translation_latency_cycles
        ),
        (Some(1500), Some(40), Some(3))
    );
    assert!(r.events.remote_access() && r.events.l1d_miss() && r.events.has(Event::Retired));
    assert!(!r.events.tlb_miss() && !r.events.llc_miss());
    assert_eq!(r.events.payload_bytes, 2);
    assert_eq!(r.data_source.unwrap().neoverse_class(), Some(SourceClass::Remote));
    assert_eq!(r.timestamp, Some(0xabc_def0));
    let c = decoded.counts;
    assert_eq!((c.records, c.packets, c.padding_bytes, c.empty_records), (1, 13, 3, 1));
    assert_eq!(
        (c.unknown_packets, c.truncated_packets, c.unfinished_records),
        (0, 0, 0)
    );
    assert_eq!(c.complete_bytes, bytes.len() as u64);
}

/// The first record of the dump in Linux commit ffd3d18c20b8's message
/// (`perf report --dump-raw-trace` of `dd` under `arm_spe/ts_enable=1,
/// pa_enable=1/`), bytes as printed there; what perf printed beside them
/// is in the comments.
#[test]
fn the_record_linux_perf_dumped_from_hardware() {
    let bytes = [
        0x49, 0x00, // LD
        0xb2, 0xc0, 0x3b, 0x29, 0x0f, 0x00, 0x00, 0xff, 0xff, // VA 0xffff00000f293bc0
        0xb3, 0xc0, 0xeb, 0x24, 0xfb, 0x00, 0x00, 0x00, 0x80, // PA 0xfb24ebc0 ns=1
        0x9a, 0x00, 0x00, // LAT 0 XLAT
        0x42, 0x16, // EV RETIRED L1D-ACCESS TLB-ACCESS
        0xb0, 0x00, 0xc4, 0x15, 0x08, 0x00, 0x00, 0xff, 0xff, // PC 0xff00000815c400 el3 ns=1
        0x98, 0x00, 0x00, // LAT 0 TOT
        0x71, 0x36, 0x6c, 0x21, 0x2c, 0x09, 0x00, 0x00, 0x00, // TS 39395093558
    ];
    let decoded = decode(&bytes, 10);
    assert_eq!(decoded.records.len(), 1, "{:?}", decoded.counts);
    let r = &decoded.records[0];
    assert_eq!(r.operation.unwrap().kind, OperationKind::Load);
    assert_eq!(r.data_virtual_address, Some(0xffff_0000_0f29_3bc0));
    assert_eq!(r.data_physical_address, Some(0xfb24_ebc0));
    assert_eq!(r.translation_latency_cycles, Some(0));
    assert_eq!(r.events.bits, 0x16);
    assert!(r.events.has(Event::L1dAccess) && r.events.has(Event::TlbAccess) && !r.events.l1d_miss());
    // perf printed the PC without its sign extension; bit 55 is set, so
    // this is the kernel-half address 0xffff00000815c400.
    let pc = r.pc.unwrap();
    assert_eq!(
        (pc.address, pc.exception_level, pc.non_secure),
        (0xffff_0000_0815_c400, 3, true)
    );
    assert_eq!(r.total_latency_cycles, Some(0));
    assert_eq!(r.timestamp, Some(39_395_093_558));
}

#[test]
fn end_and_timestamp_each_close_a_record() {
    let bytes = join(&[user_load(), end(), operation(1, 0x01), address(2, 0x1000), end()]);
    let decoded = decode(&bytes, 10);
    assert_eq!(decoded.records.len(), 2);
    assert_eq!(decoded.records[0].timestamp, Some(0x1234_5678));
    assert_eq!(decoded.records[0].total_latency_cycles, Some(211));
    assert_eq!(
        decoded.records[0].data_source.unwrap().neoverse_class(),
        Some(SourceClass::Dram)
    );
    let store = &decoded.records[1];
    assert_eq!(store.operation.unwrap().access_kind(), Some(AccessKind::Write));
    assert_eq!((store.data_virtual_address, store.timestamp), (Some(0x1000), None));
    // The End right after the first record's Timestamp closed nothing.
    assert_eq!(decoded.counts.empty_records, 1);
}

#[test]
fn extended_headers_carry_five_bit_indexes() {
    let bytes = join(&[
        address_extended(2, USER_VA),
        address_extended(9, 0xdead),
        counter_extended(0, 77),
        counter_extended(17, 5),
        address(4, 0xbeef),
        end(),
    ]);
    let decoded = decode(&bytes, 10);
    let r = &decoded.records[0];
    assert_eq!(r.data_virtual_address, Some(USER_VA));
    assert_eq!(r.total_latency_cycles, Some(77));
    // Address 9, counter 17 and the previous branch target (address 4)
    // are read and set aside.
    assert_eq!(decoded.counts.unused_packets, 3);
    assert_eq!(decoded.counts.packets, 6);
    assert_eq!(
        next(&address_extended(9, 1)),
        Step::Packet(Packet::Address { index: 9, payload: 1 }, 10)
    );
}

#[test]
fn unknown_headers_are_skipped_by_their_size_field() {
    // 0x12: sz 0b01, two bytes; 0x7a: sz 0b11, eight bytes; 0x20 0x00:
    // an extended header over no Address or Counter, sz 0b00, one byte.
    // Their payloads are Address-packet lookalikes that must not be read.
    let bytes = join(&[
        vec![0x12, 0xb2, 0xb2],
        vec![0x7a, 0xb2, 0xb2, 0xb2, 0xb2, 0xb2, 0xb2, 0xb2, 0xb2],
        vec![0x20, 0x00, 0xb2],
        address(2, USER_VA),
        end(),
    ]);
    let decoded = decode(&bytes, 10);
    assert_eq!(decoded.counts.unknown_packets, 3);
    assert_eq!(decoded.records.len(), 1);
    assert_eq!(decoded.records[0].data_virtual_address, Some(USER_VA));
}

#[test]
fn a_cut_last_packet_is_counted_and_the_whole_records_kept() {
    let first = join(&[user_load()]);
    let packets = [operation(1, 0x01), address(2, 0x2000), counter(0, 9), end()];
    // Where the second record's packets start, counted from its start.
    let starts: Vec<usize> = packets
        .iter()
        .scan(0, |at, p| Some(std::mem::replace(at, *at + p.len())))
        .collect();
    let bytes = join(&[first.clone(), join(&packets)]);
    for cut in first.len()..bytes.len() {
        let decoded = decode(&bytes[..cut], 10);
        assert_eq!(decoded.records.len(), 1, "cut at {cut}");
        assert_eq!(decoded.records[0].data_virtual_address, Some(USER_VA));
        let c = decoded.counts;
        assert_eq!(c.complete_bytes, first.len() as u64, "cut at {cut}");
        assert!(c.truncated_bytes < MAX_PACKET_BYTES as u64);
        // Cut inside a packet: it is counted; cut between packets of the
        // second record: that record is unfinished (once one of its
        // packets is whole); cut before it: neither.
        let into_second = cut - first.len();
        let between = starts.contains(&into_second);
        assert_eq!(c.truncated_packets, u64::from(!between), "cut at {cut}");
        assert_eq!(
            c.unfinished_records,
            u64::from(into_second >= starts[1]),
            "cut at {cut}"
        );
    }
    // A cut in the extended header's first byte.
    let decoded = decode(&[0x20], 1);
    assert_eq!(
        (decoded.counts.truncated_packets, decoded.counts.truncated_bytes),
        (1, 1)
    );
}

#[test]
fn records_past_the_cap_are_counted_not_kept() {
    let one = join(&[address(2, 0x40), end()]);
    let bytes = one.repeat(5);
    let decoded = decode(&bytes, 2);
    assert_eq!(decoded.records.len(), 2);
    assert_eq!((decoded.counts.records, decoded.counts.records_past_cap), (5, 3));
    let mut seen = 0;
    let counts = for_each_record(&bytes, 4, |_| seen += 1);
    assert_eq!((seen, counts.records_past_cap), (4, 1));
    assert_eq!(decode(&bytes, usize::MAX).records.len(), 5);
}

#[test]
fn padding_alone_is_no_record() {
    let decoded = decode(&[0u8; 64], 10);
    assert!(decoded.records.is_empty());
    assert_eq!((decoded.counts.padding_bytes, decoded.counts.packets), (64, 0));
    assert_eq!(decoded.counts.unfinished_records, 0);
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_and_give_bounded_output(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048),
        cap in 0usize..64,
    ) {
        let decoded = decode(&bytes, cap);
        let c = decoded.counts;
        prop_assert!(decoded.records.len() <= cap);
        // A record needs a packet of two bytes or more and an End.
        prop_assert!(c.records <= bytes.len() as u64 / 3);
        prop_assert_eq!(c.records, decoded.records.len() as u64 + c.records_past_cap);
        prop_assert!(c.truncated_bytes < MAX_PACKET_BYTES as u64);
        prop_assert!(c.complete_bytes <= bytes.len() as u64);
        prop_assert!(c.packets + c.padding_bytes <= bytes.len() as u64);
        for step in 0..bytes.len().min(16) {
            if let Step::Packet(_, length) = next(&bytes[step..]) {
                prop_assert!((1..=MAX_PACKET_BYTES).contains(&length));
                prop_assert!(length <= bytes.len() - step);
            }
        }
    }
}

/// Records of random loads and stores, written with the builders
/// and padded at random, come back field for field.
fn random_record() -> impl Strategy<Value = (u64, u64, bool, u16, u8)> {
    (0u64..(1 << 48), 0u64..(1 << 48), any::<bool>(), any::<u16>(), 0u8..4)
}

proptest! {
    #[test]
    fn built_records_round_trip(records in proptest::collection::vec(random_record(), 0..40)) {
        let mut bytes = Vec::new();
        for (pc, va, store, cycles, padding) in &records {
            bytes.extend(vec![0u8; usize::from(*padding)]);
            bytes.extend(join(&[
                operation(1, u8::from(*store)),
                address(0, pc_payload(*pc, 0, true)),
                address(2, *va),
                counter(0, *cycles),
                end(),
            ]));
        }
        let decoded = decode(&bytes, MAX_RECORDS);
        prop_assert_eq!(decoded.records.len(), records.len());
        for (got, (pc, va, store, cycles, _)) in decoded.records.iter().zip(&records) {
            prop_assert_eq!(got.pc.map(|p| p.address), Some(*pc));
            prop_assert_eq!(got.data_virtual_address, Some(*va));
            let kind = if *store { AccessKind::Write } else { AccessKind::Read };
            prop_assert_eq!(got.operation.and_then(|o| o.access_kind()), Some(kind));
            prop_assert_eq!(got.total_latency_cycles, Some(u64::from(*cycles)));
        }
        prop_assert_eq!(decoded.counts.complete_bytes, bytes.len() as u64);
    }
}
