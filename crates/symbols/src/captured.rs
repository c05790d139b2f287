//! The mapped objects of a captured process, as `snapshot -p` names them:
//! each file's path and GNU build-id, in `numasleuth/objects/PID`, one
//! `BUILD-ID PATH` line per object; [`NOT_ELF`] in place of the id for a
//! mapped file that is no ELF object (a locale archive), so a replay skips
//! it as the live reading did.
//!
//! A snapshot holds kernel files, not programs. To read a captured
//! process's sections and symbols later (`inspect`, `lines -p`, `doctor
//! -p`), the same binary is looked up at its path on the machine doing the
//! reading, and used only when its build-id is the captured one: a rebuilt
//! or upgraded file at that path is a different program, and is refused
//! with both ids rather than believed. The file is untrusted: line count,
//! id length and path length are capped, and malformed lines are skipped.

use std::collections::HashMap;

use numasleuth_kernel::{ReadError, Root};

/// Objects listed at most (a process maps a few hundred at most).
pub const MAX_OBJECTS: usize = 4096;
/// GNU build-ids are 20 bytes (SHA-1) or 16 (MD5); a generous cap.
const MAX_ID_BYTES: usize = 64;
/// Linux's PATH_MAX.
const MAX_PATH_BYTES: usize = 4096;

/// The id written for a mapped file that is not an ELF object.
pub const NOT_ELF: &str = "-";

/// Where the list for process `pid` is kept.
pub fn path(pid: u32) -> String {
    format!("numasleuth/objects/{pid}")
}

pub fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// One line per object, in the order given.
/// One line per object, in the order given; `None` for a file that is
/// not an ELF object.
pub fn format<'a>(objects: impl IntoIterator<Item = (&'a str, Option<&'a [u8]>)>) -> String {
    objects
        .into_iter()
        .map(|(path, id)| format!("{} {path}\n", id.map_or(NOT_ELF.to_string(), hex)))
        .collect()
}

/// Path to build-id (lower-case hex), from a list's text.
pub fn parse(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|line| {
            let (id, path) = line.split_once(' ')?;
            let valid_id = id == NOT_ELF
                || (!id.is_empty()
                    && id.len() <= 2 * MAX_ID_BYTES
                    && id.len() % 2 == 0
                    && id.bytes().all(|b| b.is_ascii_hexdigit()));
            let valid_path = path.starts_with('/') && path.len() <= MAX_PATH_BYTES;
            (valid_id && valid_path).then(|| (path.to_string(), id.to_ascii_lowercase()))
        })
        .take(MAX_OBJECTS)
        .collect()
}

/// The list a snapshot kept for `pid`; empty when it kept none.
pub fn load(root: &Root, pid: u32) -> Result<HashMap<String, String>, ReadError> {
    Ok(root.read_optional(&path(pid))?.map(|t| parse(&t)).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_round_trips_and_bad_lines_are_skipped() {
        let text = format([
            ("/usr/bin/app", Some(&[0xab, 0x01][..])),
            ("/lib/libc.so.6", Some(&[0xff; 20][..])),
            ("/usr/lib/locale/C.utf8/LC_CTYPE", None),
        ]);
        assert_eq!(text.lines().next(), Some("ab01 /usr/bin/app"));
        let parsed = parse(&text);
        assert_eq!(parsed["/usr/bin/app"], "ab01");
        assert_eq!(parsed["/lib/libc.so.6"], "ff".repeat(20));
        assert_eq!(parsed["/usr/lib/locale/C.utf8/LC_CTYPE"], NOT_ELF);
        let hostile = "zz /bin/x\nabc /bin/odd\nab relative/path\nab\n\nAB /bin/upper\n";
        let parsed = parse(hostile);
        assert_eq!(parsed.len(), 1, "{parsed:?}");
        assert_eq!(parsed["/bin/upper"], "ab");
        let many: String = (0..MAX_OBJECTS + 10).map(|i| format!("ab /o/{i}\n")).collect();
        assert_eq!(parse(&many).len(), MAX_OBJECTS);
    }
}
