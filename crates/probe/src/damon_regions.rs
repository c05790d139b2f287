//! A target's initial regions, checked before anything is written: DAMON's
//! sysfs takes them only in address order and without overlap (it answers
//! EINVAL when the kdamond is switched on, after every other file is
//! written), and past `max_nr_regions` it would never split a region.

/// Why `regions` cannot be DAMON's initial regions, or `None`: each is
/// non-empty, they are sorted and disjoint, and there are at most `max`.
pub fn problem(regions: &[(u64, u64)], max: u64) -> Option<String> {
    if regions.len() as u64 > max {
        return Some(format!(
            "{} initial regions, more than max_nr_regions ({max})",
            regions.len()
        ));
    }
    if let Some((s, e)) = regions.iter().find(|(s, e)| s >= e) {
        return Some(format!("the initial region {s:#x}-{e:#x} is empty"));
    }
    regions.windows(2).find(|w| w[0].1 > w[1].0).map(|w| {
        format!(
            "the initial regions {:#x}-{:#x} and {:#x}-{:#x} are out of order or overlap",
            w[0].0, w[0].1, w[1].0, w[1].1
        )
    })
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn only_sorted_disjoint_non_empty_regions_within_the_maximum_pass() {
        assert_eq!(problem(&[], 10), None);
        assert_eq!(problem(&[(0x1000, 0x2000), (0x2000, 0x3000)], 2), None);
        let too_many = problem(&[(0x1000, 0x2000), (0x2000, 0x3000)], 1).unwrap();
        assert!(too_many.contains("more than max_nr_regions (1)"), "{too_many}");
        let empty = problem(&[(0x2000, 0x2000)], 10).unwrap();
        assert!(empty.contains("0x2000-0x2000 is empty"), "{empty}");
        let overlap = problem(&[(0x1000, 0x3000), (0x2000, 0x4000)], 10).unwrap();
        assert!(overlap.contains("overlap"), "{overlap}");
        assert!(problem(&[(0x3000, 0x4000), (0x1000, 0x2000)], 10).is_some());
    }
}
