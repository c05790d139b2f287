//! The per-page answers a snapshot keeps for a captured process.
//!
//! `inspect` splits a mapping that holds several writable static sections
//! (`.data`, `.got`, `.bss`) page by page, asking move_pages and pagemap
//! where each page is. Those are system calls, not files, so a snapshot
//! could not replay them; `snapshot -p` therefore writes the answers it got
//! as a file of its own, `numasleuth/pages/PID/START` (one token per page),
//! and reading a snapshot takes them from there. The file is untrusted like
//! every other: its count must match the range asked for, and every token
//! must be one of the few this module writes.

use thiserror::Error;

use crate::error::quote;
use crate::pages::Residency;

/// Where the answers for the range starting at `start` are kept.
pub fn path(pid: u32, start: u64) -> String {
    format!("numasleuth/pages/{pid}/{start:x}")
}

fn token(state: Residency) -> String {
    match state {
        Residency::Node(n) => format!("N{n}"),
        Residency::HintingFault => "hint".into(),
        Residency::NotYetTouched => "untouched".into(),
        Residency::SwappedOut => "swapped".into(),
        Residency::ZeroPage => "zero".into(),
        Residency::Unmapped => "unmapped".into(),
        Residency::Unknown(errno) => format!("E{errno}"),
    }
}

/// One line: a token per page, in address order.
pub fn format(states: &[Residency]) -> String {
    let mut line = states.iter().map(|s| token(*s)).collect::<Vec<_>>().join(" ");
    line.push('\n');
    line
}

/// Why a pages file is not the answers for its range; shown after the
/// file's path as a `ReadError::Malformed`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PagesError {
    #[error("more than the {pages} page(s) of its range")]
    TooMany { pages: usize },
    /// `word` is already passed through [`quote`].
    #[error("`{word}` is not a page's place")]
    NotAPlace { word: String },
    #[error("{found} answer(s) for a range of {pages} page(s)")]
    Count { found: usize, pages: usize },
}

/// The answers for a range of `pages` pages, or why the text is not them.
pub fn parse(text: &str, pages: usize) -> Result<Vec<Residency>, PagesError> {
    let mut states = Vec::with_capacity(pages.min(1 << 16));
    for word in text.split_ascii_whitespace() {
        if states.len() == pages {
            return Err(PagesError::TooMany { pages });
        }
        let number = |digits: &str| digits.parse::<u32>().ok();
        let state = match word {
            "hint" => Residency::HintingFault,
            "untouched" => Residency::NotYetTouched,
            "swapped" => Residency::SwappedOut,
            "zero" => Residency::ZeroPage,
            "unmapped" => Residency::Unmapped,
            _ => match (word.strip_prefix('N'), word.strip_prefix('E')) {
                (Some(node), _) if number(node).is_some_and(|n| n < 1 << 16) => {
                    Residency::Node(number(node).unwrap_or(0))
                }
                (_, Some(errno)) if number(errno).is_some_and(|e| e < 4096) => {
                    Residency::Unknown(number(errno).unwrap_or(0) as i32)
                }
                _ => return Err(PagesError::NotAPlace { word: quote(word) }),
            },
        };
        states.push(state);
    }
    if states.len() != pages {
        return Err(PagesError::Count {
            found: states.len(),
            pages,
        });
    }
    Ok(states)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_round_trip_token_by_token() {
        let states = [
            Residency::Node(0),
            Residency::Node(3),
            Residency::HintingFault,
            Residency::NotYetTouched,
            Residency::SwappedOut,
            Residency::ZeroPage,
            Residency::Unmapped,
            Residency::Unknown(14),
        ];
        let text = format(&states);
        assert_eq!(text, "N0 N3 hint untouched swapped zero unmapped E14\n");
        assert_eq!(parse(&text, states.len()).unwrap(), states);
    }

    #[test]
    fn a_hostile_file_is_refused_not_believed() {
        assert_eq!(parse("N0 N1", 1), Err(PagesError::TooMany { pages: 1 }));
        assert_eq!(
            parse("N0 N1", 1).unwrap_err().to_string(),
            "more than the 1 page(s) of its range"
        );
        assert_eq!(
            parse("N0", 2).unwrap_err().to_string(),
            "1 answer(s) for a range of 2 page(s)"
        );
        for bad in ["N", "N-1", "N99999999999", "E", "E99999", "n0", "N0\u{1b}[2J", "bogus"] {
            assert!(parse(bad, 1).is_err(), "{bad}");
        }
        // A huge claimed range costs nothing up front.
        assert!(parse("N0", usize::MAX).is_err());
    }
}
