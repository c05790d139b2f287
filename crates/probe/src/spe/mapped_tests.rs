//! The ring half of [`AuxEvent`] on this machine's kernel: no PMU here has
//! an AUX area, so a software timer event of this thread, mapped the same
//! way without one, fills a one-page ring. Draining it takes the records
//! across the ring's wrap and reads the kernel's `PERF_RECORD_LOST` when
//! it overflowed; the AUX half is the pure arithmetic of `aux_ring`.

use std::time::{Duration, Instant};

use perf_event::events::Software;
use perf_event::{Builder, SampleFlag};

use super::*;

fn spin(duration: Duration) {
    let start = Instant::now();
    let mut x = 0u64;
    while start.elapsed() < duration {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}

#[test]
fn a_hand_mapped_ring_is_drained_to_its_head_across_its_wrap_and_losses() {
    let mut builder = Builder::new(Software::CPU_CLOCK);
    builder
        .any_cpu()
        .sample_period(20_000)
        .sample(SampleFlag::TID | SampleFlag::CPU)
        .sample_id_all(true)
        .enabled(false);
    let counter = builder.build().expect("a cpu-clock event of this thread");
    let mut event = AuxEvent::map(counter, 1, 0).expect("its ring mapped");
    event.counter.enable().unwrap();
    let mut budget = aux_ring::ByteBudget::new(u64::MAX, u64::MAX);
    let (mut taken, mut lost, mut chunks, mut aux_records, mut unreadable) = (0usize, 0u64, 0u64, 0u64, 0u64);
    let data_bytes = event.data_bytes as usize;
    // 60 ms of 20 µs samples of 24 bytes overflow a 4 KiB ring (a 64 KiB
    // one, or a loaded machine, takes a few rounds); 10 s is a hang guard.
    let give_up = Instant::now() + Duration::from_secs(10);
    while (lost == 0 || taken * 24 <= data_bytes) && Instant::now() < give_up {
        spin(Duration::from_millis(60));
        loop {
            let pass = event.drain(&mut budget, 0, &mut |_| chunks += 1);
            taken += pass.ring_records;
            lost += pass.lost_ring_records;
            aux_records += pass.aux_records;
            unreadable += pass.unreadable_ring_bytes;
            if pass.ring_records < MAX_RING_RECORDS_PER_PASS {
                break;
            }
        }
    }
    event.counter.disable().unwrap();
    // More records than one ring holds: the reads wrapped round its end.
    assert!(
        taken * 24 > data_bytes,
        "{taken} records from a ring of {data_bytes} bytes"
    );
    assert!(
        lost > 0,
        "the overflowing ring reported no lost records ({taken} taken)"
    );
    assert_eq!((chunks, aux_records), (0, 0));
    // Every header read across the wrap was a record's.
    assert_eq!(unreadable, 0);
    // What was read is given back: the tail is where the head was.
    event.drain(&mut budget, 0, &mut |_| chunks += 1);
    let head = event.word(Field::DataHead).load(Ordering::Acquire);
    assert_eq!(event.word(Field::DataTail).load(Ordering::Acquire), head);
}

#[test]
fn copies_wrap_round_the_area_end() {
    let area: Vec<u8> = (0u8..16).collect();
    let mut out = vec![0xee; 3];
    AuxEvent::copy_wrapped(area.as_ptr(), 16, 16 * 5 + 12, 7, &mut out);
    assert_eq!(out, [12, 13, 14, 15, 0, 1, 2]);
    AuxEvent::copy_wrapped(area.as_ptr(), 16, 3, 4, &mut out);
    assert_eq!(out, [3, 4, 5, 6]);
    // Longer than the area: one area's worth.
    AuxEvent::copy_wrapped(area.as_ptr(), 16, 8, 40, &mut out);
    assert_eq!(out.len(), 16);
    assert_eq!(out[..9], [8, 9, 10, 11, 12, 13, 14, 15, 0]);
    // No area (a null pointer): nothing read, nothing copied.
    AuxEvent::copy_wrapped(std::ptr::null(), 0, 8, 40, &mut out);
    assert!(out.is_empty());
}
