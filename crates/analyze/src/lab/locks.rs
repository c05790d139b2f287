//! Lock scaling: lock/unlock pairs per second for each lock, load and
//! thread count, and what the gaps between them say.

use numasleuth_model::lab::{Load, LockKind, Placement};
use serde::Serialize;

use super::{rate, slowdown, throughput, Ratio, Raw};
use crate::stats::Summary;

#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub lock: LockKind,
    pub load: Load,
    pub placement: Placement,
    pub threads: usize,
    pub cpus: Vec<u32>,
    /// `Some(true)` when a counter kept inside the critical section
    /// matched the pairs done; `None` when the section keeps none.
    pub count_verified: Option<bool>,
    pub raw: Vec<Raw>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub lock: LockKind,
    pub load: Load,
    pub placement: Placement,
    pub threads: usize,
    pub cpus: Vec<u32>,
    /// Lock/unlock pairs per second, all threads together.
    pub ops_per_sec: Summary,
    pub ops_per_sec_per_thread: Summary,
    /// Pair rate against the same lock and load with one thread.
    pub slowdown_vs_1_thread: Option<Ratio>,
    pub count_verified: Option<bool>,
    /// Least share of its CPU a thread had (see `Raw::cpu_share`).
    pub cpu_share: Option<Summary>,
    pub raw: Vec<Raw>,
}

pub fn rows(measured: Vec<Measured>) -> Vec<Row> {
    let mut rows: Vec<Row> = measured
        .into_iter()
        .filter_map(|m| {
            let t = throughput(&m.raw)?;
            Some(Row {
                lock: m.lock,
                load: m.load,
                placement: m.placement,
                threads: m.threads,
                cpus: m.cpus,
                ops_per_sec: t.ops_per_sec,
                ops_per_sec_per_thread: t.ops_per_sec_per_thread,
                slowdown_vs_1_thread: None,
                count_verified: m.count_verified,
                cpu_share: t.cpu_share,
                raw: m.raw,
            })
        })
        .collect();
    // One thread's rate per lock, load and placement.
    let singles: Vec<((LockKind, Load, Placement), Summary)> = rows
        .iter()
        .filter(|r| r.threads == 1)
        .map(|r| ((r.lock, r.load, r.placement), r.ops_per_sec))
        .collect();
    for row in rows.iter_mut().filter(|r| r.threads > 1) {
        let one = singles.iter().find(|(k, _)| *k == (row.lock, row.load, row.placement));
        row.slowdown_vs_1_thread = one.and_then(|(_, one)| slowdown(&row.ops_per_sec, one));
    }
    rows
}

/// The "what this means" lines: per load, at the most threads measured.
pub fn meaning(rows: &[Row]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut loads: Vec<(Load, Placement)> = Vec::new();
    for row in rows {
        if !loads.contains(&(row.load, row.placement)) {
            loads.push((row.load, row.placement));
        }
    }
    let several_placements = loads.iter().any(|l| l.1 != loads[0].1);
    for (load, placement) in &loads {
        let at = |lock: LockKind, threads: usize| {
            rows.iter()
                .find(|r| r.lock == lock && r.load == *load && r.placement == *placement && r.threads == threads)
        };
        let Some(threads) = rows
            .iter()
            .filter(|r| r.load == *load && r.placement == *placement)
            .map(|r| r.threads)
            .max()
        else {
            continue;
        };
        let section = match *load {
            Load::Empty => "an empty critical section",
            Load::OneLoad => "one atomic add on the lock's line in the critical section",
        };
        let where_ = if several_placements {
            format!(", {placement} placement")
        } else {
            String::new()
        };
        let mut ranked: Vec<&Row> = LockKind::ALL.iter().filter_map(|lock| at(*lock, threads)).collect();
        ranked.sort_by(|a, b| b.ops_per_sec.median.total_cmp(&a.ops_per_sec.median));
        let listing: Vec<String> = ranked
            .iter()
            .map(|r| format!("{} {}", r.lock, rate(r.ops_per_sec.median)))
            .collect();
        lines.push(format!(
            "{threads} thread{} with {section}{where_}: {}.",
            if threads == 1 { "" } else { "s" },
            listing.join(", ")
        ));
        if threads < 2 {
            lines.push("with one thread no lock is contended; run --thread-sweep 1,2 or more to see them part".into());
            continue;
        }
        if let (Some(ticket), Some(mcs)) = (at(LockKind::Ticket, threads), at(LockKind::Mcs, threads)) {
            lines.push(ticket_vs_mcs(ticket, mcs, threads));
        }
        if let Some(line) = unfair_mutex(&ranked) {
            lines.push(line);
        }
        let best_lock = ranked.iter().find(|r| r.lock != LockKind::Atomic);
        if let (Some(best), Some(floor)) = (best_lock, at(LockKind::Atomic, threads)) {
            if floor.ops_per_sec.median > 0.0 {
                let percent = 100.0 * best.ops_per_sec.median / floor.ops_per_sec.median;
                lines.push(if percent < 100.0 {
                    format!(
                        "The fastest lock ({}) reached {percent:.0}% of the bare atomic's rate: a lock moves at \
                         least one cache line per hand-off, and the atomic shows what one line's move costs here.",
                        best.lock
                    )
                } else {
                    format!(
                        "The {} lock outran even the bare atomic ({percent:.0}% of its rate): it let one thread keep \
                         the line for several operations in a row, which the atomic, shared on every operation, \
                         cannot.",
                        best.lock
                    )
                });
            }
        }
    }
    lines
}

/// When the std Mutex clearly beats both FIFO spinlocks, say why: it lets
/// the releasing thread re-take the lock, so the line often stays put.
fn unfair_mutex(ranked: &[&Row]) -> Option<String> {
    let mutex = ranked.iter().find(|r| r.lock == LockKind::Mutex)?;
    let best_spin = ranked.iter().find(|r| r.lock.spins())?;
    let ratio = slowdown(&best_spin.ops_per_sec, &mutex.ops_per_sec)?;
    ratio.clearly_slower().then(|| {
        format!(
            "std's Mutex did {} the rate of the faster spinlock ({}): it is not fair, so the thread that just \
             unlocked often takes it again before a sleeping waiter wakes, and the line stays in one cache; the \
             FIFO spinlocks hand over on every release and move the line each time. Its rate is bought with \
             waiters that wait longer.",
            ratio.describe(),
            best_spin.lock
        )
    })
}

fn ticket_vs_mcs(ticket: &Row, mcs: &Row, threads: usize) -> String {
    let Some(ratio) = slowdown(&ticket.ops_per_sec, &mcs.ops_per_sec) else {
        return "the ticket lock completed no pairs, so it cannot be compared".into();
    };
    let waiters = threads - 1;
    if ratio.clearly_slower() {
        format!(
            "The queued (MCS) lock did {} the ticket lock's rate: every ticket waiter spins reading the lock's \
             line, so each hand-off invalidates it in {}, while MCS waiters spin on their own lines.",
            ratio.describe(),
            if waiters == 1 {
                "the waiting core".to_string()
            } else {
                format!("all {waiters} waiting cores")
            }
        )
    } else if ratio.clearly_faster() {
        format!(
            "The ticket lock beat the queued (MCS) lock, which ran at {} of its rate: with {waiters} waiter{} \
             the ticket lock's shared spinning costs little, while MCS pays for its queue on every hand-off. A \
             ticket lock collapses only with many waiters, and more so across sockets.",
            ratio.describe(),
            if waiters == 1 { "" } else { "s" },
        )
    } else {
        format!(
            "Ticket and queued (MCS) locks were within noise of each other at {threads} threads (MCS/ticket {}); \
             on large servers the gap between them opens with tens of waiters.",
            ratio.describe(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(lock: LockKind, threads: usize, ops_per_ms: &[u64]) -> Measured {
        Measured {
            lock,
            load: Load::Empty,
            placement: Placement::Compact,
            threads,
            cpus: (0..threads as u32).collect(),
            count_verified: None,
            raw: ops_per_ms
                .iter()
                .map(|ops| Raw {
                    span_ns: 1_000_000,
                    ops_per_thread: vec![*ops / threads as u64; threads],
                    cpu_ns_per_thread: vec![1_000_000; threads],
                })
                .collect(),
        }
    }

    #[test]
    fn ranks_locks_and_explains_the_ticket_gap() {
        let rows = rows(vec![
            measured(LockKind::Ticket, 1, &[50_000, 50_000, 50_000]),
            measured(LockKind::Ticket, 4, &[10_000, 11_000, 12_000]),
            measured(LockKind::Mcs, 4, &[30_000, 31_000, 32_000]),
            measured(LockKind::Mutex, 4, &[20_000, 20_000, 20_000]),
            measured(LockKind::Atomic, 4, &[60_000, 60_000, 60_000]),
        ]);
        let vs_one = rows[1].slowdown_vs_1_thread.unwrap();
        assert!((vs_one.median - 50.0 / 11.0).abs() < 1e-9);
        let lines = meaning(&rows);
        assert_eq!(
            lines[0],
            "4 threads with an empty critical section: atomic 60.0 M ops/s, mcs 31.0 M ops/s, mutex 20.0 M ops/s, \
             ticket 11.0 M ops/s."
        );
        assert!(lines[1].starts_with("The queued (MCS) lock did 2.82×"), "{}", lines[1]);
        assert!(lines[1].contains("all 3 waiting cores"));
        assert!(
            lines[2].starts_with("The fastest lock (mcs) reached 52%"),
            "{}",
            lines[2]
        );
    }

    #[test]
    fn a_mutex_beating_the_spinlocks_is_explained() {
        let rows = rows(vec![
            measured(LockKind::Ticket, 2, &[10_000, 10_000, 10_000]),
            measured(LockKind::Mcs, 2, &[5_000, 5_000, 5_000]),
            measured(LockKind::Mutex, 2, &[40_000, 40_000, 40_000]),
        ]);
        let lines = meaning(&rows);
        assert!(lines[2].starts_with("std's Mutex did 4.00×"), "{lines:?}");
        assert!(lines[2].contains("faster spinlock (ticket)"), "{lines:?}");
    }

    #[test]
    fn a_lock_faster_than_the_atomic_is_explained() {
        let rows = rows(vec![
            measured(LockKind::Mutex, 2, &[40_000, 40_000, 40_000]),
            measured(LockKind::Atomic, 2, &[30_000, 30_000, 30_000]),
        ]);
        let lines = meaning(&rows);
        assert!(
            lines[1].starts_with("The mutex lock outran even the bare atomic (133%"),
            "{lines:?}"
        );
    }

    #[test]
    fn close_locks_are_called_close() {
        let rows = rows(vec![
            measured(LockKind::Ticket, 2, &[30_000, 31_000, 32_000]),
            measured(LockKind::Mcs, 2, &[30_500, 31_000, 31_500]),
        ]);
        assert!(meaning(&rows)[1].starts_with("Ticket and queued (MCS) locks were within noise"));
    }
}
