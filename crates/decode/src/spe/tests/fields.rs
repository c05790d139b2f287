//! What the payloads mean: addresses with their top byte, operation
//! types, events of each size and Neoverse's data sources.

use super::builders::*;
use super::*;

#[test]
fn addresses_drop_their_top_byte() {
    let va = |payload| {
        let bytes = join(&[address(2, payload), end()]);
        decode(&bytes, 1).records[0].data_virtual_address.unwrap()
    };
    // A tag (top-byte-ignore or memory tagging) on a user address.
    assert_eq!(va(0xf300_7fff_dead_beef), 0x0000_7fff_dead_beef);
    // Bit 55 set: the upper half, whatever the tag.
    assert_eq!(va(0x2a80_0000_0000_1000), 0xff80_0000_0000_1000);
    let pc = |payload| {
        let bytes = join(&[address(0, payload), end()]);
        decode(&bytes, 1).records[0].pc.unwrap()
    };
    let user = pc(pc_payload(USER_PC, 0, true));
    assert_eq!(
        (user.address, user.exception_level, user.non_secure),
        (USER_PC, 0, true)
    );
    let kernel = pc(pc_payload(0xffff_8000_1000_2000, 1, false));
    assert_eq!(
        (kernel.address, kernel.exception_level, kernel.non_secure),
        (0xffff_8000_1000_2000, 1, false)
    );
}

#[test]
fn operation_types_name_loads_stores_atomics_and_vectors() {
    let op = |class, payload| Operation::from_packet(class, payload);
    let kinds = [
        (1, 0x00, OperationKind::Load, false),
        (1, 0x01, OperationKind::Store, false),
        (1, 0x04, OperationKind::Load, true),  // SIMD&FP load
        (1, 0x05, OperationKind::Store, true), // SIMD&FP store
        (1, 0x08, OperationKind::Load, true),  // SVE load
        (1, 0x06, OperationKind::AtomicOrExclusive { store: false }, false), // atomic
        (1, 0x0b, OperationKind::AtomicOrExclusive { store: true }, false), // store-exclusive
        (1, 0x12, OperationKind::Load, false), // load-acquire only
        (1, 0x13, OperationKind::Store, false), // store-release only
        (1, 0x25, OperationKind::Store, false), // a memset
        (
            2,
            0x01,
            OperationKind::Branch {
                conditional: true,
                indirect: false,
            },
            false,
        ),
        (
            2,
            0x02,
            OperationKind::Branch {
                conditional: false,
                indirect: true,
            },
            false,
        ),
        (0, 0x00, OperationKind::Other, false),
        (0, 0x02, OperationKind::Other, true),  // floating point
        (0, 0x08, OperationKind::Other, true),  // SVE
        (3, 0x02, OperationKind::Other, false), // a reserved class
    ];
    for (class, payload, kind, simd_fp) in kinds {
        let got = op(class, u64::from(payload));
        assert_eq!(
            (got.kind, got.simd_fp),
            (kind, simd_fp),
            "class {class} payload {payload:#x}"
        );
        assert_eq!((got.class, got.payload), (class, payload));
    }
    assert_eq!(op(2, 0).access_kind(), None);
    assert_eq!(op(0, 0).access_kind(), None);
    assert_eq!(op(1, 0).access_kind(), Some(AccessKind::Read));
}

#[test]
fn events_keep_their_size_and_data_sources_their_raw_value() {
    let bytes = join(&[
        events(0, 0xff),
        end(),
        events(2, 1 << 20),
        end(),
        events(3, 1 << 40),
        end(),
    ]);
    let records = decode(&bytes, 10).records;
    assert_eq!(
        records.iter().map(|r| r.events.payload_bytes).collect::<Vec<_>>(),
        [1, 4, 8]
    );
    assert!(records[0].events.l1d_miss() && records[0].events.tlb_miss());
    assert!(records[1].events.has(Event::L2dRefill));
    assert_eq!(records[2].events.bits, 1 << 40);
    let class = |raw| DataSource { raw }.neoverse_class();
    assert_eq!(
        [0x0, 0x8, 0x9, 0xa, 0xb, 0xc, 0xd, 0xe, 0x1, 0xf, 0x100].map(class),
        [
            Some(SourceClass::L1),
            Some(SourceClass::L2),
            Some(SourceClass::PeerOrLlc),
            Some(SourceClass::PeerOrLlc),
            Some(SourceClass::PeerOrLlc),
            Some(SourceClass::PeerOrLlc),
            Some(SourceClass::Remote),
            Some(SourceClass::Dram),
            None,
            None,
            None,
        ]
    );
    let wide = join(&[data_source(3, 0x1_0000_000e), end()]);
    assert_eq!(
        decode(&wide, 1).records[0].data_source,
        Some(DataSource { raw: 0x1_0000_000e })
    );
}
