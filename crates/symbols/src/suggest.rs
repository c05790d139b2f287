//! "Did you mean …?" for a symbol name that matches nothing: the names
//! closest to what was typed, by edit distance, so a typo in `--symbol`
//! points at the right name instead of leaving the user to `nm` the binary.

/// Suggestions offered at most.
pub const MAX_SUGGESTIONS: usize = 3;
/// Names longer than this are not compared (mangled C++ can run to
/// kilobytes; nobody types those).
const MAX_COMPARED_BYTES: usize = 256;

/// The names within a small edit distance of `wanted` (a third of its
/// length, at least 1, at most 4), closest first then by name, at most
/// [`MAX_SUGGESTIONS`], without duplicates.
pub fn closest<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let wanted_len = wanted.chars().count();
    if wanted_len == 0 || wanted.len() > MAX_COMPARED_BYTES {
        return Vec::new();
    }
    let limit = (wanted_len / 3).clamp(1, 4);
    let mut near: Vec<(usize, &str)> = names
        .into_iter()
        .filter(|name| name.len() <= MAX_COMPARED_BYTES && name.chars().count().abs_diff(wanted_len) <= limit)
        .filter_map(|name| {
            let distance = edit_distance(wanted, name, limit)?;
            (distance > 0).then_some((distance, name))
        })
        .collect();
    near.sort_unstable();
    near.dedup_by(|a, b| a.1 == b.1);
    near.into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, name)| name.to_string())
        .collect()
}

/// Levenshtein distance between `a` and `b` when it is at most `limit`
/// (`None` beyond), in characters; one row of the table at a time.
fn edit_distance(a: &str, b: &str, limit: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        // Every later row is at least this row's minimum.
        if current.iter().min().is_some_and(|m| *m > limit) {
            return None;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    Some(previous[b.len()]).filter(|d| *d <= limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_the_name_and_strangers_do_not() {
        let names = ["nil_root", "log_level", "main", "nil_roots", "_end"];
        assert_eq!(closest("nil_rot", names), ["nil_root", "nil_roots"]);
        assert_eq!(closest("log_levle", names), ["log_level"]);
        assert!(closest("completely_else", names).is_empty());
        // An exact match is not a suggestion (it would have been found).
        assert_eq!(closest("main", ["main", "mainx"]), ["mainx"]);
        assert!(closest("", names).is_empty());
    }

    #[test]
    fn distances_are_counted_in_characters_and_bounded() {
        assert_eq!(edit_distance("kitten", "sitting", 3), Some(3));
        assert_eq!(edit_distance("kitten", "sitting", 2), None);
        assert_eq!(edit_distance("żółw", "zółw", 1), Some(1));
        assert_eq!(edit_distance("", "ab", 2), Some(2));
    }

    #[test]
    fn many_names_give_at_most_three_suggestions() {
        let names: Vec<String> = (0..1000).map(|i| format!("counter{i}")).collect();
        let found = closest("counter", names.iter().map(String::as_str));
        assert_eq!(found.len(), MAX_SUGGESTIONS);
        assert!(found.iter().all(|n| n.len() == "counter".len() + 1), "{found:?}");
    }
}
