//! The one way a list of CPU, node or thread ids is written for people.
//!
//! A set (ids in ascending order) is written by [`IdList::to_human`]: runs
//! as `0-15`, and a run of three or more with a constant step above 1 as
//! `0-12:4` (util-linux and taskset's form, which every numasleuth list
//! option takes back). An ordered list whose order means something (the
//! CPUs threads were placed on, first thread first: `0,8,1,9`) keeps its
//! order, and only its ascending runs collapse (`0-3,8-11`).
//!
//! Process ids are not a set of places but names: they are written as they
//! came, with only consecutive runs collapsed ([`consecutive_runs`]), since
//! a step (`26834-26844:5`) reads as a PID and a count.
//!
//! Lists that a program reads are not written here: a command a person is
//! asked to paste (`numactl --physcpubind=…`) or a value written to a kernel
//! file uses the plain form of [`IdList`]'s `Display` (`0-3,8`), because
//! numactl and the kernel refuse steps. `docs/cli.md` states the rule.

use crate::cpulist::IdList;

/// `ids` as a person reads them; see the module documentation.
pub fn human_list(ids: &[u32]) -> String {
    if ids.windows(2).all(|w| w[0] < w[1]) {
        return IdList::new(ids.to_vec()).to_human();
    }
    consecutive_runs(ids)
}

/// `ids` in their order, runs of consecutive ids as `a-b`, never a step:
/// `1000-1003,1010,1012`.
pub fn consecutive_runs(ids: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j].checked_add(1) == Some(ids[j + 1]) {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", ids[i], ids[j])
        } else {
            ids[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_use_runs_and_steps() {
        assert_eq!(human_list(&(0..16).collect::<Vec<_>>()), "0-15");
        assert_eq!(human_list(&[0, 4, 8, 12]), "0-12:4");
        assert_eq!(human_list(&[0, 1, 2, 3, 8]), "0-3,8");
        assert_eq!(human_list(&[0, 1]), "0-1");
        // Issue 36: PIDs 5 apart read as "26834-26844:5" in readers.
        assert_eq!(consecutive_runs(&[26834, 26839, 26844]), "26834,26839,26844");
        assert_eq!(consecutive_runs(&[7, 8, 9, 3]), "7-9,3");
        assert_eq!(human_list(&[5]), "5");
        assert_eq!(human_list(&[]), "");
        assert_eq!(human_list(&[4243, 4244, 4245]), "4243-4245");
    }

    #[test]
    fn ordered_lists_keep_their_order() {
        assert_eq!(human_list(&[0, 8, 1, 9]), "0,8,1,9");
        assert_eq!(human_list(&[0, 1, 2, 3, 8, 9, 10, 11, 4]), "0-3,8-11,4");
        assert_eq!(human_list(&[3, 3, 4]), "3,3-4");
        assert_eq!(human_list(&[u32::MAX, 0, 1]), format!("{},0-1", u32::MAX));
    }

    /// Whatever the input, no three consecutive ids are ever written out.
    #[test]
    fn no_written_out_run_survives() {
        let mut seed = 7u64;
        for _ in 0..2000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = (seed >> 60) as usize;
            let ids: Vec<u32> = (0..len).map(|k| ((seed >> (k * 3 % 50)) & 15) as u32).collect();
            let text = human_list(&ids);
            let numbers: Vec<Option<u32>> = text.split(',').map(|p| p.parse().ok()).collect();
            for w in numbers.windows(3) {
                if let [Some(a), Some(b), Some(c)] = w {
                    assert!(!(a + 1 == *b && b + 1 == *c), "{ids:?} written as {text}");
                }
            }
        }
    }
}
