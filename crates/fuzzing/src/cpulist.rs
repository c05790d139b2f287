//! `0-3,8,10-11` lists and `0000000f,00000000` masks: never a panic, and
//! what parses prints back to the same set.

use numasleuth_kernel::cpulist::{IdList, MAX_ID};

use crate::text;

pub fn run(data: &[u8]) {
    let text = text(data);
    let list = IdList::parse(&text).ok();
    if let Some(list) = &list {
        check_set(list);
        round_trips(list);
    }
    // What a person types: the same sets, plus `a-b:step`; what
    // `to_human` prints for any set parses back to it.
    if let Ok(typed) = IdList::parse_input(&text) {
        check_set(&typed);
        round_trips(&typed);
        let human = typed.to_human();
        let again = IdList::parse_input(&human).unwrap_or_else(|e| panic!("`{human}` does not parse back: {}", e.0));
        assert_eq!(again, typed, "`{human}` parses to a different set");
    }
    if let Some(list) = &list {
        assert_eq!(
            IdList::parse_input(&text).as_ref(),
            Ok(list),
            "typed and kernel lists differ"
        );
    }
    if let Ok(mask) = IdList::parse_mask(&text) {
        check_set(&mask);
        round_trips(&mask);
        let words = text.trim().split(',').count();
        assert!(
            mask.iter().all(|id| (id as usize) < words * 32),
            "mask of {words} words names a CPU beyond them: {mask}"
        );
    }
    // Two lists on either side of a `|`: the set operations agree.
    if let Some((left, right)) = text.split_once('|') {
        if let (Ok(a), Ok(b)) = (IdList::parse(left), IdList::parse(right)) {
            check_algebra(&a, &b);
        }
    }
}

/// Sorted, unique, within [`MAX_ID`], and `contains` finds each id.
fn check_set(list: &IdList) {
    let ids = list.ids();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "ids not sorted and unique: {ids:?}"
    );
    assert!(ids.iter().all(|&id| id <= MAX_ID), "id above MAX_ID in {list}");
    assert_eq!(list.len(), ids.len());
    assert_eq!(list.is_empty(), ids.is_empty());
    assert!(ids.iter().all(|&id| list.contains(id)));
}

/// Display gives numactl syntax that parses back to the same set.
fn round_trips(list: &IdList) {
    let shown = list.to_string();
    let again = IdList::parse(&shown).unwrap_or_else(|e| panic!("`{shown}` does not parse back: {}", e.0));
    assert_eq!(&again, list, "`{shown}` parses to a different set");
}

fn check_algebra(a: &IdList, b: &IdList) {
    let both = a.intersection(b);
    let only_a = a.difference(b);
    check_set(&both);
    check_set(&only_a);
    assert!(
        both.is_subset(a) && both.is_subset(b),
        "{a} ∩ {b} = {both} is not in both"
    );
    assert!(
        only_a.iter().all(|id| !b.contains(id)),
        "{a} − {b} = {only_a} meets {b}"
    );
    assert_eq!(
        both.len() + only_a.len(),
        a.len(),
        "{a} ∩ {b} and {a} − {b} do not add up to {a}"
    );
    assert_eq!(a.is_subset(b), only_a.is_empty());
}
