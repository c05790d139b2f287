//! `/proc/PID/statm`: a process's size in pages, read once per target so
//! `readers` can say how long a walk of its `smaps` holds its mmap lock
//! (the walk visits every mapped page table).
//!
//! Seven numbers: size resident shared text lib data dt (proc(5)); only
//! the first two are used.

use crate::error::{quote, ParseError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Statm {
    pub size_pages: u64,
    pub resident_pages: u64,
}

pub fn parse(text: &str) -> Result<Statm, ParseError> {
    let mut fields = text.split_whitespace();
    let mut number = |what: &str| -> Result<u64, ParseError> {
        let field = fields
            .next()
            .ok_or_else(|| ParseError::new(format!("statm ends before {what}")))?;
        field
            .parse()
            .map_err(|_| ParseError::new(format!("statm {what} `{}` is not a number", quote(field))))
    };
    Ok(Statm {
        size_pages: number("size")?,
        resident_pages: number("resident")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_statm() {
        // `/proc/self/statm` of `cat` on the development VM (6.18 kernel).
        let statm = parse("2071 482 418 5 0 126 0\n").unwrap();
        assert_eq!((statm.size_pages, statm.resident_pages), (2071, 482));
    }

    #[test]
    fn malformed_statm() {
        for text in ["", "12", "x 1", "1 -2", "1 18446744073709551616"] {
            assert!(parse(text).is_err(), "accepted `{text}`");
        }
    }
}
