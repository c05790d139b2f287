use super::*;

fn nodes() -> BTreeMap<u32, u32> {
    [(0, 0), (1, 0), (2, 1), (3, 1)].into_iter().collect()
}

fn path(tid: u32, moves: &[(u32, u32)]) -> ThreadPath {
    ThreadPath {
        tid,
        comm: format!("t{tid}"),
        moves: moves.len() as u64,
        path: moves.to_vec(),
    }
}

#[test]
fn counts_node_changes_only_across_nodes() {
    let flips: Vec<(u32, u32)> = (0..20).map(|i| if i % 2 == 0 { (0, 2) } else { (2, 0) }).collect();
    let within = [(0, 1), (1, 0)];
    let s = summarize(&[path(7, &within), path(8, &flips), path(9, &[])], &nodes(), 2.0);
    assert_eq!(s[0].tid, 8, "hopping thread first");
    assert_eq!((s[0].cpu_migrations, s[0].node_migrations), (20, 20));
    assert_eq!(s[0].nodes_visited, vec![0, 1]);
    assert_eq!(s[0].node_migrations_per_s, 10.0);
    assert_eq!((s[1].tid, s[1].cpu_migrations, s[1].node_migrations), (7, 2, 0));
    assert_eq!(s[1].nodes_visited, vec![0]);
    assert_eq!((s[2].cpu_migrations, s[2].node_migrations), (0, 0));
}

#[test]
fn unknown_cpus_and_truncated_paths() {
    let mut p = path(1, &[(0, 99)]);
    p.moves = 5;
    let s = summarize(&[p], &nodes(), 1.0);
    assert_eq!((s[0].cpu_migrations, s[0].node_migrations), (5, 0));
    assert!(s[0].path_truncated);
    assert_eq!(s[0].cpus_visited, vec![0, 99]);
}

#[test]
fn hopping_finding_needs_rate_and_count() {
    let flips: Vec<(u32, u32)> = (0..4).map(|i| if i % 2 == 0 { (0, 2) } else { (2, 0) }).collect();
    let numa = NumaBalancing::default();
    let fast = summarize(&[path(8, &flips)], &nodes(), 2.0);
    let f = findings(5, &fast, &numa, &Method::Tracepoint, 2.0);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].id, "thread-hopping-nodes");
    assert!(
        f[0].evidence[0].text.contains("changed node 4 times"),
        "{:?}",
        f[0].evidence
    );
    let hop = &f[0].evidence[0];
    assert_eq!(hop.source, "tracepoint:sched:sched_migrate_task");
    assert_eq!(
        (hop.values.int("tid"), hop.values.int("node_migrations")),
        (Some(8), Some(4))
    );
    assert_eq!(hop.values.float("node_migrations_per_s"), Some(2.0));
    assert_eq!(
        hop.values.get("nodes_visited"),
        Some(&crate::evidence::Value::List(
            fast[0].nodes_visited.iter().map(|n| i64::from(*n)).collect()
        ))
    );
    assert!(!hop.text.contains('['), "no Rust list in {}", hop.text);
    let slow = summarize(&[path(8, &flips)], &nodes(), 10.0);
    assert!(findings(5, &slow, &numa, &Method::Tracepoint, 10.0).is_empty());
    let two = summarize(&[path(8, &flips[..2])], &nodes(), 0.1);
    assert!(
        findings(5, &two, &numa, &Method::Tracepoint, 0.1).is_empty(),
        "2 moves are no rate"
    );
}

#[test]
fn balancing_finding_on_a_rise_only() {
    let mut numa = NumaBalancing {
        mode: Some(1),
        pages_migrated_before: Some(10),
        pages_migrated_after: Some(10),
        ..Default::default()
    };
    assert!(findings(5, &[], &numa, &Method::Tracepoint, 1.0).is_empty());
    numa.pages_migrated_after = Some(42);
    let f = findings(5, &[], &numa, &Method::Tracepoint, 1.0);
    assert_eq!(f[0].id, "numa-balancing-migrating");
    assert!(f[0].title.contains("32 pages"), "{}", f[0].title);
    numa.pages_migrated_before = None;
    assert!(findings(5, &[], &numa, &Method::Tracepoint, 1.0).is_empty());
}

#[test]
fn move_counter_counts_changes_between_readings() {
    let mut counter = MoveCounter::new(2, 1);
    for cpu in [0, 0, 2, 2, 0] {
        counter.observe(5, "w", Some(cpu));
    }
    counter.observe(5, "w", None);
    counter.observe(6, "x", Some(1));
    counter.observe(7, "over the cap", Some(1));
    let paths = counter.paths();
    assert_eq!(paths.len(), 2);
    assert_eq!((paths[0].tid, paths[0].moves), (5, 2));
    assert_eq!(paths[0].path, vec![(0, 2)], "kept moves capped at 1");
    assert_eq!((paths[1].tid, paths[1].moves), (6, 0));
    let s = summarize(&paths, &nodes(), 1.0);
    assert_eq!(s[0].node_migrations, 1, "only the kept move is placed");
}
