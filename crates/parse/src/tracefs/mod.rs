//! tracefs `events/GROUP/NAME/format` files, and the raw records of the
//! tracepoints numasleuth samples: where each field sits, and what one
//! record says. Finding and opening a tracepoint is `probe`'s; reading
//! what its records hold is here, beside the other kernel files' parsers,
//! so the fuzz harness and every caller share one decoder.

use std::collections::HashMap;

use thiserror::Error;

pub mod migrate;
pub mod open;

/// Offsets past this are not a record layout but a hostile `format`.
pub const MAX_FIELD_OFFSET: usize = 4096;

/// One field of a tracepoint record, from tracefs' `format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
    /// `__data_loc`: the field holds a u32 whose low 16 bits are the
    /// string's offset in the record and high 16 bits its length.
    pub data_loc: bool,
}

/// Why a tracepoint's `format` cannot be decoded: the facts, so a caller
/// can tell a missing field from a wrong-sized one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FormatError {
    #[error("{event} format has no usable `{field}` field")]
    MissingField { event: String, field: String },
    #[error("sys_enter_open* `filename` is {size} bytes, not a 64-bit pointer")]
    FilenameNotPointer { size: usize },
}

/// The fields of a record by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Format {
    fields: HashMap<String, Field>,
}

impl Format {
    /// Parses tracefs' `events/GROUP/NAME/format`. Lines that are not
    /// fields, or fields with an unreadable offset, are skipped; a field
    /// past [`MAX_FIELD_OFFSET`] is dropped.
    pub fn parse(text: &str) -> Format {
        let mut fields = HashMap::new();
        for line in text.lines().map(str::trim).filter(|l| l.starts_with("field:")) {
            let (mut name, mut offset, mut size) = (None, None, None);
            for part in line.split(';').map(str::trim) {
                if let Some(d) = part.strip_prefix("field:") {
                    name = d.split_whitespace().last();
                } else if let Some(o) = part.strip_prefix("offset:") {
                    offset = o.trim().parse::<usize>().ok();
                } else if let Some(s) = part.strip_prefix("size:") {
                    size = s.trim().parse::<usize>().ok();
                }
            }
            let (Some(name), Some(offset)) = (name, offset) else {
                continue;
            };
            if offset >= MAX_FIELD_OFFSET {
                continue;
            }
            let name = name.split('[').next().unwrap_or(name);
            let field = Field {
                offset,
                size: size.unwrap_or(0).min(MAX_FIELD_OFFSET),
                data_loc: line.contains("__data_loc"),
            };
            fields.insert(name.to_string(), field);
        }
        Format { fields }
    }

    pub fn field(&self, name: &str) -> Option<Field> {
        self.fields.get(name).copied()
    }

    /// The field, or an error naming the event it is missing from.
    pub fn require(&self, event: &str, name: &str) -> Result<Field, FormatError> {
        self.field(name).ok_or_else(|| FormatError::MissingField {
            event: event.to_string(),
            field: name.to_string(),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// tracefs `events/syscalls/sys_enter_openat/format` on this project's
    /// VM (6.18.44 kernel), captured 2026-11-24.
    pub const OPENAT_6_18: &str = "name: sys_enter_openat
ID: 782
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;
\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;
\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;
\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;
\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;

print fmt: \"dfd: 0x%08lx, filename: 0x%08lx, flags: 0x%08lx, mode: 0x%08lx\", ((unsigned long)(REC->dfd)), ((unsigned long)(REC->filename)), ((unsigned long)(REC->flags)), ((unsigned long)(REC->mode))
";

    #[test]
    fn fields_of_the_openat_format() {
        let format = Format::parse(OPENAT_6_18);
        let filename = format.field("filename").unwrap();
        assert_eq!((filename.offset, filename.size, filename.data_loc), (24, 8, false));
        assert_eq!(format.field("dfd").map(|f| f.offset), Some(16));
        assert_eq!(format.field("common_pid").map(|f| (f.offset, f.size)), Some((4, 4)));
        assert_eq!(
            format.require("sys_enter_openat", "nope").unwrap_err().to_string(),
            "sys_enter_openat format has no usable `nope` field"
        );
    }

    #[test]
    fn hostile_formats_give_no_field_past_the_cap() {
        let text = "\tfield:char x[9999999];\toffset:99999999;\tsize:8;\n\tfield:int y;\toffset:4095;\tsize:999999;\n\
                    field:int z;\toffset:-1;\tsize:4;\nfield:;;;\n";
        let format = Format::parse(text);
        assert_eq!(format.field("x"), None);
        assert_eq!(format.field("z"), None);
        assert_eq!(
            format.field("y").map(|f| (f.offset, f.size)),
            Some((4095, MAX_FIELD_OFFSET))
        );
        assert_eq!(Format::parse(""), Format::default());
    }
}
