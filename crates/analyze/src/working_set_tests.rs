//! The sizing rule on cache layouts written out here; the same rule on
//! hwloc's real-machine captures is `tests/working_set_hwloc.rs`.

use numasleuth_parse::IdList;

use super::*;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn cache(level: u32, kind: &str, size_bytes: u64, cpus: &str) -> CacheDomain {
    CacheDomain {
        level,
        kind: kind.into(),
        size_bytes: Some(size_bytes),
        line_size_bytes: Some(64),
        cpus: IdList::parse(cpus).unwrap(),
    }
}

/// The issue's server: 16 CPUs, private 2 MiB L2s, one 300 MiB L3.
fn server_16() -> Vec<CacheDomain> {
    let mut caches: Vec<CacheDomain> = (0..16)
        .flat_map(|cpu| {
            [
                cache(1, "Data", 48 << 10, &cpu.to_string()),
                cache(1, "Instruction", 32 << 10, &cpu.to_string()),
                cache(2, "Unified", 2 * MIB, &cpu.to_string()),
            ]
        })
        .collect();
    caches.push(cache(3, "Unified", 300 * MIB, "0-15"));
    caches
}

fn room(node: u32, free: u64, high: u64) -> NodeRoom {
    NodeRoom {
        node,
        free_bytes: free,
        high_watermark_bytes: Some(high),
        base_page_bytes: 4096,
    }
}

#[test]
fn the_issue_server_gets_1_2_gib_whatever_the_thread_count() {
    let cpus: Vec<u32> = (0..16).collect();
    let from = largest_cache(&server_16(), &[&cpus]).unwrap();
    assert_eq!(
        from,
        SizedFrom {
            cache: "L3".into(),
            bytes: 300 * MIB,
            cpus: "0-15".into(),
            factor: 4,
            count: 1,
        }
    );
    let plenty = [room(0, 100 * GIB, GIB)];
    let bandwidth = choose(Some(from.clone()), &plenty, 16, None);
    // 1200 MiB over 16 threads is 75 MiB, rounded up to 76 MiB each.
    assert_eq!(bandwidth.per_thread_bytes, 76 * MIB);
    assert_eq!(bandwidth.working_set_bytes, 16 * 76 * MIB);
    assert_eq!((bandwidth.chosen_by, bandwidth.notes.len()), (ChosenBy::Rule, 0));
    // One chasing CPU sees the same L3: the chase is 1200 MiB too.
    let latency = choose(largest_cache(&server_16(), &[&[7]]), &plenty, 1, None);
    assert_eq!(latency.working_set_bytes, 1200 * MIB);
    assert!(latency.working_set_bytes >= 4 * 300 * MIB);
}

#[test]
fn streamed_buffers_take_twice_the_chase_s_multiple() {
    let cpus: Vec<u32> = (0..16).collect();
    let streamed = largest_cache_streamed(&server_16(), &[&cpus]).unwrap();
    assert_eq!((streamed.factor, streamed.bytes), (8, 300 * MIB));
    let plenty = [room(0, 100 * GIB, GIB)];
    let bandwidth = choose(Some(streamed.clone()), &plenty, 16, None);
    // 2400 MiB over 16 threads: 150 MiB each, already whole huge pages.
    assert_eq!(bandwidth.working_set_bytes, 2400 * MIB);
    // An explicit size under the streamed rule is warned about with its 8×.
    let small = choose(Some(streamed), &plenty, 16, Some(2 * GIB));
    assert!(small.notes[0].contains("8× it"), "{:?}", small.notes);
}

#[test]
fn a_smaller_explicit_size_is_honoured_with_a_warning_naming_the_cache() {
    let from = largest_cache(&server_16(), &[&[0]]);
    let set = choose(from, &[room(0, 100 * GIB, GIB)], 1, Some(GIB));
    assert_eq!((set.working_set_bytes, set.chosen_by), (GIB, ChosenBy::Size));
    assert_eq!(
        set.notes,
        ["1 GiB is 3.4× the 300 MiB L3 shared by CPUs 0-15: the figure may include cache hits (the rule asks 4× it, \
          1.2 GiB)"]
    );
    // At or above the rule, nothing to say.
    let big = choose(largest_cache(&server_16(), &[&[0]]), &[], 1, Some(2 * GIB));
    assert!(big.notes.is_empty(), "{:?}", big.notes);
}

#[test]
fn free_memory_above_the_high_watermark_bounds_it_and_says_so() {
    let from = largest_cache(&server_16(), &[&[0]]);
    // 900 MiB free, 100 MiB high watermark: 90% of 800 MiB = 720 MiB.
    let set = choose(from, &[room(0, 900 * MIB, 100 * MIB)], 1, None);
    assert_eq!(
        (set.working_set_bytes, set.chosen_by),
        (720 * MIB, ChosenBy::FreeMemory)
    );
    assert_eq!(set.rule_bytes, 1200 * MIB);
    let note = &set.notes[0];
    assert!(note.starts_with("node 0 has 900 MiB free, 800 MiB of it above its high watermark: the working set is 720 MiB, 2.4× the 300 MiB L3 shared by CPUs 0-15, where the rule asks 4× (1.2 GiB)"), "{note}");
    // The tightest of several nodes decides, and is the one named.
    let two = choose(
        largest_cache(&server_16(), &[&[0]]),
        &[room(0, 100 * GIB, GIB), room(1, 2 * GIB, 1948 * MIB)],
        4,
        None,
    );
    assert_eq!(
        two.per_thread_bytes,
        22 * MIB,
        "90% of 100 MiB over 4 threads, whole huge pages"
    );
    assert!(two.notes[0].starts_with("node 1 has 2 GiB free"), "{:?}", two.notes);
    // A node with nothing above its watermark still gets a page a thread.
    let none = choose(largest_cache(&server_16(), &[&[0]]), &[room(0, MIB, 2 * MIB)], 2, None);
    assert_eq!(none.per_thread_bytes, 4096);
}

#[test]
fn below_a_huge_page_a_thread_gets_whole_pages_of_the_system_s_size() {
    let from = || largest_cache(&server_16(), &[&[0]]);
    // 90% of 1 MiB above the watermark, over 1 thread: 921.6 KiB.
    let mut arm = room(0, 3 * MIB, 2 * MIB);
    arm.base_page_bytes = 64 << 10;
    let set = choose(from(), &[arm], 1, None);
    assert_eq!(set.per_thread_bytes, 14 * (64 << 10), "whole 64 KiB pages");
    let set = choose(from(), &[room(0, 3 * MIB, 2 * MIB)], 1, None);
    assert_eq!(set.per_thread_bytes, 230 * 4096, "whole 4 KiB pages");
    // Nothing above the watermark: still one (64 KiB) page.
    arm.free_bytes = MIB;
    assert_eq!(choose(from(), &[arm], 2, None).per_thread_bytes, 64 << 10);
}

#[test]
fn quick_is_not_a_parameter_so_it_cannot_shrink_the_set() {
    // The rule takes the caches, the rooms, the threads and --size only;
    // the same inputs give the same set.
    let a = choose(largest_cache(&server_16(), &[&[0]]), &[], 2, None);
    let b = choose(largest_cache(&server_16(), &[&[0]]), &[], 2, None);
    assert_eq!(a, b);
}

#[test]
fn several_caches_of_one_level_add_up_and_the_biggest_level_wins() {
    // Four 32 MiB L3s of four CPUs each (CCX-like), 1 MiB L2 per CPU.
    let mut caches: Vec<CacheDomain> = (0..16).map(|c| cache(2, "Unified", MIB, &c.to_string())).collect();
    for ccx in 0..4 {
        caches.push(cache(3, "Unified", 32 * MIB, &format!("{}-{}", ccx * 4, ccx * 4 + 3)));
    }
    let node: Vec<u32> = (0..8).collect();
    let from = largest_cache(&caches, &[&node]).unwrap();
    assert_eq!(
        (from.cache.as_str(), from.bytes, from.cpus.as_str()),
        ("L3", 64 * MIB, "0-7")
    );
    // One CPU reaches one L3.
    assert_eq!(largest_cache(&caches, &[&[5]]).unwrap().bytes, 32 * MIB);
    // Of several groups (rows of a matrix) the largest decides.
    assert_eq!(largest_cache(&caches, &[&[5], &node]).unwrap().bytes, 64 * MIB);
    // Big private L2s can outweigh a small shared L3 across many threads.
    let mut l2_heavy: Vec<CacheDomain> = (0..8).map(|c| cache(2, "Unified", 2 * MIB, &c.to_string())).collect();
    l2_heavy.push(cache(3, "Unified", 6 * MIB, "0-7"));
    let all = largest_cache(&l2_heavy, &[&node]).unwrap();
    assert_eq!((all.cache.as_str(), all.bytes, all.count), ("L2", 16 * MIB, 8));
    assert_eq!(all.describe(), "the 16 MiB of 8 L2 caches serving CPUs 0-7");
    assert_eq!(largest_cache(&l2_heavy, &[&[0]]).unwrap().cache, "L3");
}

#[test]
fn without_cache_sizes_the_fallback_is_used_and_said() {
    let unsized_caches = vec![CacheDomain {
        size_bytes: None,
        ..cache(3, "Unified", 0, "0-3")
    }];
    assert_eq!(largest_cache(&unsized_caches, &[&[0]]), None);
    assert_eq!(largest_cache(&[], &[&[0]]), None);
    let set = choose(None, &[], 1, None);
    assert_eq!(
        (set.working_set_bytes, set.chosen_by),
        (FALLBACK_BYTES, ChosenBy::Fallback)
    );
    assert!(set.notes[0].starts_with("no cache sizes in sysfs"), "{:?}", set.notes);
    // Instruction caches never count, and CPUs outside the group neither.
    let l1i = vec![
        cache(1, "Instruction", 64 << 10, "0"),
        cache(3, "Unified", 8 * MIB, "4-7"),
    ];
    assert_eq!(largest_cache(&l1i, &[&[0]]), None);
}

#[test]
fn hostile_sizes_saturate_instead_of_overflowing() {
    let huge = vec![
        cache(3, "Unified", u64::MAX / 2, "0"),
        cache(3, "Unified", u64::MAX / 2, "1"),
    ];
    let from = largest_cache(&huge, &[&[0, 1]]).unwrap();
    let set = choose(Some(from), &[room(0, u64::MAX, 0)], 4096, None);
    assert!(set.working_set_bytes > 0);
    let explicit = choose(None, &[], 0, Some(0));
    assert_eq!((explicit.threads, explicit.per_thread_bytes), (1, 1));
}

/// Issue 36: `mem --size` printed the cache warning once per matrix.
#[test]
fn the_two_matrices_warn_about_a_small_size_once() {
    let from = largest_cache(&server_16(), &[&[0]]);
    let chase = choose(from.clone(), &[room(0, 100 * GIB, GIB)], 1, Some(GIB));
    let streamed = largest_cache_streamed(&server_16(), &[&[0]]);
    let stream = choose(streamed, &[room(0, 100 * GIB, GIB)], 1, Some(GIB));
    let mut warnings = vec![
        chase.notes[0].clone(),
        "other".to_string(),
        stream.notes[0].clone(),
        "other".into(),
    ];
    merge_warnings(&mut warnings);
    assert_eq!(
        warnings,
        [
            "1 GiB is 3.4× the 300 MiB L3 shared by CPUs 0-15: the figures may include cache hits (the rule asks 4× \
             it, 1.2 GiB, for latency and 8× it, 2.3 GiB, for bandwidth)",
            "other"
        ]
    );
}
