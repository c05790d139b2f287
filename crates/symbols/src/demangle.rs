//! Human names for Rust and C++ symbols.
//!
//! `lines` and `watch` show the names people wrote (`app::stats::COUNTER`,
//! `db::Logger::level`), not `_ZN3app5stats7COUNTER17h…E`. Names that are
//! neither mangling scheme (C) pass through unchanged; a name that looks
//! mangled but does not parse also passes through, never an error.

/// Longest name handed to the C++ demangler: its recursion depth grows with
/// the input, and real symbols are far shorter.
const MAX_DEMANGLE_BYTES: usize = 4096;

pub fn demangle(raw: &str) -> String {
    if raw.len() > MAX_DEMANGLE_BYTES {
        return raw.to_string();
    }
    if let Ok(rust) = rustc_demangle::try_demangle(raw) {
        // `{:#}` drops the legacy `::h0123…` hash suffix.
        return format!("{rust:#}");
    }
    if raw.starts_with("_Z") {
        if let Ok(symbol) = cpp_demangle::Symbol::new(raw) {
            if let Ok(text) = symbol.demangle() {
                return text;
            }
        }
    }
    raw.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rust_legacy_and_v0() {
        assert_eq!(
            demangle("_ZN3app5stats7COUNTER17h0123456789abcdefE"),
            "app::stats::COUNTER"
        );
        assert_eq!(demangle("_RNvCs1234_3app7COUNTER"), "app::COUNTER");
    }

    #[test]
    fn cpp() {
        assert_eq!(demangle("_ZN2db6Logger5levelE"), "db::Logger::level");
        assert_eq!(demangle("_ZN2db5apply2opEi"), "db::apply::op(int)");
    }

    #[test]
    fn c_and_garbage_pass_through() {
        assert_eq!(demangle("nil_root"), "nil_root");
        assert_eq!(demangle("_Zgarbage"), "_Zgarbage");
        assert_eq!(demangle(""), "");
    }

    proptest! {
        #[test]
        fn never_panics(raw in "(_Z|_R|_ZN)?\\PC{0,60}") {
            let _ = demangle(&raw);
        }
    }
}
