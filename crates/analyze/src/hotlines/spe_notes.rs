//! What a reader of an Arm SPE run must know: how many records came, how
//! many were memory accesses the tally could use, and every way records
//! went missing (a full buffer, the copy caps, cut records), from the
//! collector's AUX totals and the decoder's record totals. Pure, so each
//! sentence is tested on made-up totals.

use numasleuth_model::perf::sample::{AuxTotals, SpeRecordTotals};

/// The notes, in the order shown: what came, then what was lost.
pub fn spe_notes(aux: &AuxTotals, records: &SpeRecordTotals) -> Vec<String> {
    let mut notes = vec![summary(aux, records)];
    if aux.truncated_chunks > 0 {
        notes.push(format!(
            "the SPE buffer filled {} time(s) before it was read: the hardware's records were dropped until then",
            aux.truncated_chunks
        ));
    }
    if aux.collision_chunks > 0 {
        notes.push(format!(
            "{} SPE buffer chunk(s) flagged collisions: samples were dropped while the one before was still \
             profiled",
            aux.collision_chunks
        ));
    }
    if aux.over_cap_bytes > 0 {
        notes.push(format!(
            "{} bytes of SPE records past the copy caps (bytes per second, bytes in all) were not decoded",
            aux.over_cap_bytes
        ));
    }
    if aux.missed_bytes > 0 {
        notes.push(format!(
            "{} bytes the kernel announced were no longer in the SPE buffer",
            aux.missed_bytes
        ));
    }
    if aux.lost_ring_records > 0 || aux.unreadable_ring_bytes > 0 {
        notes.push(format!(
            "{} notice(s) of new SPE data were lost from full rings and {} ring bytes were unreadable: their \
             records were not decoded",
            aux.lost_ring_records, aux.unreadable_ring_bytes
        ));
    }
    let cut = records.cut_records.saturating_add(aux.partial_chunks);
    if cut > 0 {
        notes.push(format!("{cut} SPE record(s) were cut short and dropped"));
    }
    if records.unknown_packets > 0 {
        notes.push(format!(
            "{} SPE packet(s) of a kind this decoder does not know were skipped",
            records.unknown_packets
        ));
    }
    if records.other_context_records > 0 {
        notes.push(format!(
            "{} SPE record(s) carried another thread's id in their Context packet than the thread sampled (kept, \
             attributed to the thread sampled)",
            records.other_context_records
        ));
    }
    notes
}

fn summary(aux: &AuxTotals, records: &SpeRecordTotals) -> String {
    if records.records == 0 {
        return format!(
            "no SPE record was decoded ({} bytes in {} AUX chunk(s)): the threads may not have run, or the \
             hardware wrote nothing this decoder reads",
            aux.copied_bytes, aux.chunks
        );
    }
    format!(
        "{} SPE records decoded from {} bytes; {} were loads, stores or atomics with a data address, {} of them \
         remote by the events packet",
        records.records, aux.copied_bytes, records.memory_records, records.remote_records
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_run_says_what_came_and_nothing_else() {
        let aux = AuxTotals {
            chunks: 4,
            copied_bytes: 65_536,
            ..AuxTotals::default()
        };
        let records = SpeRecordTotals {
            records: 1200,
            memory_records: 1100,
            remote_records: 30,
            ..SpeRecordTotals::default()
        };
        assert_eq!(
            spe_notes(&aux, &records),
            [
                "1200 SPE records decoded from 65536 bytes; 1100 were loads, stores or atomics with a data address, \
              30 of them remote by the events packet"
            ]
        );
    }

    #[test]
    fn every_loss_is_said_in_order() {
        let aux = AuxTotals {
            chunks: 9,
            copied_bytes: 100,
            over_cap_bytes: 7,
            missed_bytes: 5,
            truncated_chunks: 2,
            partial_chunks: 1,
            collision_chunks: 3,
            lost_ring_records: 2,
            unreadable_ring_bytes: 0,
        };
        let records = SpeRecordTotals {
            records: 0,
            cut_records: 4,
            unknown_packets: 6,
            other_context_records: 8,
            ..SpeRecordTotals::default()
        };
        let notes = spe_notes(&aux, &records);
        let starts: Vec<&str> = notes.iter().map(|n| n.split(' ').next().unwrap_or("")).collect();
        assert_eq!(starts, ["no", "the", "3", "7", "5", "2", "5", "6", "8"], "{notes:#?}");
        assert!(notes[0].contains("(100 bytes in 9 AUX chunk(s))"), "{}", notes[0]);
        assert!(notes[1].contains("filled 2 time(s)"), "{}", notes[1]);
        assert!(notes[5].contains("and 0 ring bytes were unreadable"), "{}", notes[5]);
        assert!(notes[6].starts_with("5 SPE record(s) were cut short"), "{}", notes[6]);
    }
}
