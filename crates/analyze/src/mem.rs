//! Whether `mem`'s buffers sat where they were asked to be: one verdict
//! over every placement check, and a note per check that failed.

/// The warning given when not every buffer could be verified on its node.
pub const UNVERIFIED_WARNING: &str =
    "not every buffer was verified to be on the node asked for (see placements); the matrix may mix nodes";

/// Verified only when there was at least one check and every one passed;
/// otherwise the warning to show.
pub fn placement_verdict(checks: impl IntoIterator<Item = bool>) -> (bool, Option<&'static str>) {
    let mut any = false;
    let mut all = true;
    for verified in checks {
        any = true;
        all &= verified;
    }
    let verified = any && all;
    (verified, (!verified).then_some(UNVERIFIED_WARNING))
}

/// Why one buffer's check failed: the kernel's reason when no page could be
/// checked, else where the pages were ("12 on node 1, 3 not present").
/// `elsewhere` is (node, pages).
pub fn placement_note(
    verified: bool,
    unverifiable: Option<&str>,
    elsewhere: &[(u32, usize)],
    pages_unknown: usize,
) -> Option<String> {
    if let Some(reason) = unverifiable {
        return Some(reason.to_string());
    }
    if verified {
        return None;
    }
    let elsewhere: Vec<String> = elsewhere
        .iter()
        .map(|(node, pages)| format!("{pages} on node {node}"))
        .collect();
    Some(format!("{}; {pages_unknown} not present", elsewhere.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_needs_one_check_and_every_check() {
        assert_eq!(placement_verdict([true, true]), (true, None));
        assert_eq!(placement_verdict([true, false]), (false, Some(UNVERIFIED_WARNING)));
        assert_eq!(placement_verdict([]), (false, Some(UNVERIFIED_WARNING)));
    }

    #[test]
    fn the_note_says_where_the_pages_were() {
        assert_eq!(placement_note(true, None, &[], 0), None);
        assert_eq!(
            placement_note(false, None, &[(1, 12), (2, 1)], 3).as_deref(),
            Some("12 on node 1, 1 on node 2; 3 not present")
        );
        assert_eq!(
            placement_note(false, Some("move_pages: ENOSYS"), &[], 0).as_deref(),
            Some("move_pages: ENOSYS")
        );
    }
}
