//! `/proc/PID/task/TID/syscall`: where a blocked thread's stack pointer is,
//! so a memory region can be named as that thread's stack.
//!
//! The file holds the system call number, its six arguments, the stack
//! pointer and the program counter; `-1 SP PC` for a thread blocked
//! outside a system call, and `running` for one on a CPU (no stack pointer
//! then). Reading it needs ptrace rights over the process (root, or the
//! same user with `kernel.yama.ptrace_scope` 0).

use crate::error::{quote, ParseError};

/// The stack pointer in a `syscall` file, or `None` for a running thread.
pub fn parse_stack_pointer(text: &str) -> Result<Option<u64>, ParseError> {
    let text = text.trim();
    if text == "running" {
        return Ok(None);
    }
    let fields: Vec<&str> = text.split_whitespace().collect();
    // `NR a1..a6 SP PC` (9 fields) or `-1 SP PC` (3).
    if fields.len() != 9 && fields.len() != 3 {
        return Err(ParseError::new(format!(
            "`{}` has {} fields, not 3 or 9",
            quote(text),
            fields.len()
        )));
    }
    let sp = fields[fields.len() - 2];
    let digits = sp.strip_prefix("0x").unwrap_or(sp);
    u64::from_str_radix(digits, 16)
        .map(Some)
        .map_err(|_| ParseError::new(format!("stack pointer `{}` is not hex", quote(sp))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn real_captures() {
        // A `sleep 5` (clock_nanosleep, NR 230) and `cat` reading its own
        // file (`running`) on the 6.18 development VM.
        let sleeping = "230 0x0 0x0 0x7ffd673067b0 0x7ffd673067f0 0x0 0x0 0x7ffd67306798 0x7f405ab4b503\n";
        assert_eq!(parse_stack_pointer(sleeping).unwrap(), Some(0x7ffd67306798));
        assert_eq!(
            parse_stack_pointer("-1 0x7ffd00001000 0x401000\n").unwrap(),
            Some(0x7ffd00001000)
        );
        assert_eq!(parse_stack_pointer("running\n").unwrap(), None);
        assert!(parse_stack_pointer("0 0x1").is_err());
        assert!(parse_stack_pointer("-1 zz 0x1").is_err());
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,80}") {
            let _ = parse_stack_pointer(&text);
        }
    }
}
