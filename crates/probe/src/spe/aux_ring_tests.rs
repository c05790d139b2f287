use super::*;

/// A `PERF_RECORD_AUX` as the kernel writes it with `sample_id_all` and
/// `TID | CPU` (include/uapi/linux/perf_event.h): header, aux_offset,
/// aux_size, flags, then pid, tid, cpu, reserved.
fn aux_record_bytes(offset: u64, bytes: u64, flags: u64, tid: u32, cpu: u32) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(11u32.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out.extend(48u16.to_le_bytes());
    for word in [offset, bytes, flags] {
        out.extend(word.to_le_bytes());
    }
    for half in [tid + 1000, tid, cpu, 0] {
        out.extend(half.to_le_bytes());
    }
    out
}

fn record(offset: u64, bytes: u64) -> AuxRecord {
    AuxRecord {
        offset,
        bytes,
        flags: 0,
        tid: None,
        cpu: None,
    }
}

#[test]
fn aux_and_lost_records_are_read_from_their_bytes() {
    let bytes = aux_record_bytes(0x1_0000_0040, 4096, FLAG_TRUNCATED | FLAG_COLLISION, 77, 5);
    let header: [u8; HEADER_BYTES] = bytes[..8].try_into().unwrap();
    assert_eq!(record_size(&header), 48);
    assert_eq!(
        parse_record(&bytes),
        RingRecord::Aux(AuxRecord {
            offset: 0x1_0000_0040,
            bytes: 4096,
            flags: FLAG_TRUNCATED | FLAG_COLLISION,
            tid: Some(77),
            cpu: Some(5),
        })
    );
    // Without its sample_id the thread and CPU are unknown.
    let RingRecord::Aux(short) = parse_record(&bytes[..32]) else {
        panic!("an AUX record of 32 bytes is still one");
    };
    assert_eq!((short.bytes, short.tid, short.cpu), (4096, None, None));
    // Cut inside its three words: not read.
    assert_eq!(parse_record(&bytes[..31]), RingRecord::Other);
    let mut lost = Vec::new();
    lost.extend(2u32.to_le_bytes());
    lost.extend([0, 0, 24, 0]);
    lost.extend(9u64.to_le_bytes());
    lost.extend(123u64.to_le_bytes());
    assert_eq!(parse_record(&lost), RingRecord::Lost { records: 123 });
    assert_eq!(parse_record(&lost[..20]), RingRecord::Other);
    assert_eq!(parse_record(&[12, 0, 0, 0, 0, 0, 8, 0]), RingRecord::Other);
    assert_eq!(parse_record(&[]), RingRecord::Other);
}

#[test]
fn wrapped_ranges_split_at_the_area_end() {
    assert_eq!(wrapped(0, 100, 4096), (0..100, 0..0));
    assert_eq!(wrapped(4096 * 3 + 4000, 200, 4096), (4000..4096, 0..104));
    assert_eq!(wrapped(4096, 4096, 4096), (0..4096, 0..0));
    // Longer than the area: one area's worth, from the start offset.
    assert_eq!(wrapped(10, 5000, 4096), (10..4096, 0..10));
    assert_eq!(wrapped(10, 10, 0), (0..0, 0..0));
}

#[test]
fn a_record_between_tail_and_head_is_copied_whole() {
    let plan = plan_copy(&record(8192, 1000), 8192, 9192, 4096);
    assert_eq!((plan.first.clone(), plan.second.clone()), (0..1000, 0..0));
    assert_eq!((plan.missed_bytes, plan.new_tail, plan.bytes()), (0, 9192, 1000));
    // Across the area's end.
    let plan = plan_copy(&record(4000, 300), 4000, 4300, 4096);
    assert_eq!((plan.first.clone(), plan.second.clone()), (4000..4096, 0..204));
    assert_eq!(plan.new_tail, 4300);
}

#[test]
fn bytes_outside_tail_and_head_are_missed_not_copied() {
    // Half consumed already: only what is past the tail.
    let plan = plan_copy(&record(1000, 1000), 1500, 2000, 4096);
    assert_eq!(
        (plan.first.clone(), plan.missed_bytes, plan.new_tail),
        (1500..2000, 500, 2000)
    );
    // Past the head: up to it, and the tail stops there.
    let plan = plan_copy(&record(1000, 1000), 1000, 1600, 4096);
    assert_eq!(
        (plan.first.clone(), plan.missed_bytes, plan.new_tail),
        (1000..1600, 400, 1600)
    );
    // Older than one area behind the head: overwritten.
    let plan = plan_copy(&record(0, 4096), 0, 6000, 4096);
    assert_eq!((plan.bytes(), plan.missed_bytes), (2192, 1904));
    assert_eq!((plan.first.clone(), plan.second.clone()), (1904..4096, 0..0));
    // Wholly consumed: nothing, and the tail does not go back.
    let plan = plan_copy(&record(0, 100), 500, 900, 4096);
    assert_eq!((plan.bytes(), plan.missed_bytes, plan.new_tail), (0, 100, 500));
    // A record at offsets near u64::MAX does not overflow.
    let plan = plan_copy(&record(u64::MAX - 10, 100), u64::MAX - 10, u64::MAX, 4096);
    assert_eq!((plan.bytes(), plan.new_tail), (10, u64::MAX));
    // No area: nothing to copy.
    assert_eq!(plan_copy(&record(0, 100), 0, 100, 0).bytes(), 0);
}

#[test]
fn the_tail_covers_padding_between_records() {
    // The driver pads to its alignment without a record: the next
    // record's end moves the tail past the padding too.
    let plan = plan_copy(&record(2048, 512), 1000, 4096, 4096);
    assert_eq!((plan.first.clone(), plan.new_tail), (2048..2560, 2560));
}

#[test]
fn the_budget_caps_bytes_per_second_and_in_all() {
    let second = 1_000_000_000;
    let mut budget = ByteBudget::new(1000, 2500);
    assert!(budget.take(0, 600));
    assert!(!budget.take(10, 600), "over the second's 1000");
    assert!(budget.take(20, 400));
    assert!(budget.take(second, 1000), "a new second");
    assert!(!budget.take(2 * second, 600), "over the 2500 in all");
    assert!(budget.take(2 * second, 500));
    assert!(!budget.take(3 * second, 1));
    let mut one = ByteBudget::new(100, u64::MAX);
    assert!(!one.take(0, 101), "a record larger than a second's bytes never fits");
    assert!(one.take(0, 100));
}
