//! `/proc/PID/cmdline`: the arguments a process was started with, NUL
//! separated, so `readers` can say `ss -s` rather than just `ss`.
//!
//! A process may rewrite its own argument area (nginx and postgres do), so
//! the text is untrusted: it is shown escaped by the report layer and cut
//! at [`MAX_CMDLINE_CHARS`]. A kernel thread and a zombie have none.

/// Characters kept; the rest is replaced by `…`.
pub const MAX_CMDLINE_CHARS: usize = 512;

/// The arguments joined by spaces, or `None` when there are none (a
/// kernel thread, a zombie, an empty argument area).
pub fn parse(text: &str) -> Option<String> {
    let joined = text.split('\0').filter(|a| !a.is_empty()).collect::<Vec<_>>().join(" ");
    if joined.is_empty() {
        return None;
    }
    if joined.chars().count() <= MAX_CMDLINE_CHARS {
        return Some(joined);
    }
    let mut cut: String = joined.chars().take(MAX_CMDLINE_CHARS).collect();
    cut.push('…');
    Some(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_joined() {
        // `/proc/PID/cmdline` of `sh -c while :; do …` on the development VM.
        assert_eq!(
            parse("sh\0-c\0while :; do cat /proc/slabinfo; done\0").as_deref(),
            Some("sh -c while :; do cat /proc/slabinfo; done")
        );
        assert_eq!(parse("ss\0-s\0").as_deref(), Some("ss -s"));
        // A process that rewrote its argument area without NULs.
        assert_eq!(parse("nginx: worker process").as_deref(), Some("nginx: worker process"));
    }

    #[test]
    fn empty_and_huge_ones() {
        assert_eq!(parse(""), None);
        assert_eq!(parse("\0\0\0"), None);
        let huge = "x".repeat(100_000);
        let cut = parse(&huge).unwrap();
        assert_eq!(cut.chars().count(), MAX_CMDLINE_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
