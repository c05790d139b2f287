//! Pulling command results out of a guest's serial console.
//!
//! Why markers: the console carries everything the guest prints, boot noise
//! included, and the tty turns every "\n" into "\r\n". The guest's /init
//! frames each result between a BEGIN and an END line (see initramfs.rs);
//! here we cut those frames out and undo the CRLF.

use std::collections::BTreeMap;

pub const MARK_BEGIN: &str = "@@NSTB:BEGIN:";
pub const MARK_END: &str = "@@NSTB:END:";
/// Printed by /init after the last section, just before `poweroff -f`.
pub const MARK_DONE: &str = "@@NSTB:DONE@@";
/// Printed by /init as its first act: the kernel booted and handed over.
pub const MARK_INIT: &str = "@@NSTB:INIT@@";

/// One framed result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The command's output, byte-exact except that CRLF became LF.
    pub text: String,
    /// The command's exit status, as /init saw it.
    pub rc: i32,
}

/// All sections found, by name, and whether /init reached its end.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    pub sections: BTreeMap<String, Section>,
    pub done: bool,
}

/// Parses the console log. Sections without an END line (guest died
/// mid-way) are dropped, so a missing section always means "no result".
pub fn parse(console: &str) -> Transcript {
    let mut out = Transcript::default();
    let mut open: Option<(String, Vec<&str>)> = None;
    for raw in console.split('\n') {
        // Only the tty's "\r" before "\n" is stripped; the guest never
        // prints a bare carriage return of its own in a section.
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some((name, lines)) = open.as_mut() {
            let rc = line.strip_prefix(MARK_END).and_then(|r| parse_end(r, name));
            match rc {
                Some(rc) => {
                    let text = lines.join("\n");
                    out.sections.insert(name.clone(), Section { text, rc });
                    open = None;
                }
                None => lines.push(line),
            }
        } else if let Some(rest) = line.strip_prefix(MARK_BEGIN) {
            if let Some(name) = rest.strip_suffix("@@") {
                open = Some((name.to_string(), Vec::new()));
            }
        } else if line.trim_end() == MARK_DONE {
            out.done = true;
        }
    }
    out
}

/// Parses "NAME:rc=N@@" for the section currently open.
fn parse_end(rest: &str, name: &str) -> Option<i32> {
    let rest = rest.strip_prefix(name)?.strip_prefix(":rc=")?;
    rest.strip_suffix("@@")?.parse().ok()
}

/// The last `n` lines of the console, for error messages.
pub fn tail(console: &str, n: usize) -> String {
    let lines: Vec<&str> = console.lines().map(|l| l.trim_end_matches('\r')).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_cut_and_crlf_undone() {
        // The guest prints one extra "\n" after the output (see initramfs.rs),
        // so output without a final newline survives exactly.
        let log = "boot noise\r\n@@NSTB:BEGIN:topo@@\r\n{\"a\":1}\r\n\r\n\
                   @@NSTB:END:topo:rc=0@@\r\n@@NSTB:BEGIN:x@@\r\nno-newline\r\n\
                   @@NSTB:END:x:rc=3@@\r\n@@NSTB:DONE@@\r\n";
        let t = parse(log);
        assert!(t.done);
        assert_eq!(t.sections["topo"].text, "{\"a\":1}\n");
        assert_eq!(t.sections["topo"].rc, 0);
        assert_eq!(t.sections["x"].text, "no-newline");
        assert_eq!(t.sections["x"].rc, 3);
    }

    #[test]
    fn empty_and_unterminated_sections() {
        let log = "@@NSTB:BEGIN:e@@\r\n\r\n@@NSTB:END:e:rc=0@@\r\n@@NSTB:BEGIN:cut@@\r\npartial";
        let t = parse(log);
        assert_eq!(t.sections["e"].text, "");
        assert!(!t.sections.contains_key("cut"));
        assert!(!t.done);
    }

    #[test]
    fn end_marker_of_another_name_is_content() {
        let log = "@@NSTB:BEGIN:a@@\n@@NSTB:END:b:rc=0@@\n\n@@NSTB:END:a:rc=0@@\n";
        assert_eq!(parse(log).sections["a"].text, "@@NSTB:END:b:rc=0@@\n");
    }
}
