//! clap's own errors in numasleuth's voice.
//!
//! Every error the binary prints starts `numasleuth: error:` so scripts and
//! people can grep for one prefix; clap's rendering starts `error:` and may
//! spread one message over several lines. Here the message becomes one line
//! and clap's usage and tips follow only where they help (a mistyped flag or
//! a missing argument), not after a bad value, whose message already says
//! what is allowed.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use numasleuth_kernel::error::quote;

/// What to print and the exit code, for a clap parse failure that is not a
/// request for help or the version.
pub fn render(error: &clap::Error) -> String {
    let text = error.render().to_string();
    if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // `numasleuth` or `numasleuth lab` alone: clap's text is the help.
        return format!("numasleuth: error: a command is required\n\n{}\n", text.trim_end());
    }
    let mut paragraphs = text.split("\n\n").filter(|p| !p.trim().is_empty());
    let first = paragraphs.next().unwrap_or("invalid arguments");
    let message = first
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let message = message.strip_prefix("error:").map_or(message.as_str(), str::trim);
    let message = quote_typed_value(error, message);
    let mut out = format!("numasleuth: error: {message}\n");
    if !is_value_error(error.kind()) {
        for paragraph in paragraphs {
            out.push_str(paragraph.trim_end());
            out.push('\n');
        }
    }
    out
}

/// clap echoes a bad value whole: a 4 KB `--cpus` list would be one
/// 4 KB line. The value is cut to the rule every quoted input follows
/// (`kernel::error::quote`: at most 200 characters, controls escaped).
fn quote_typed_value(error: &clap::Error, message: &str) -> String {
    match error.get(ContextKind::InvalidValue) {
        Some(ContextValue::String(value)) if !value.is_empty() => {
            message.replacen(&format!("'{value}'"), &format!("'{}'", quote(value)), 1)
        }
        _ => message.to_string(),
    }
}

/// A bad value for a known flag: the message names the flag and the
/// allowed range, so one line says it all.
fn is_value_error(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::InvalidValue | ErrorKind::ValueValidation | ErrorKind::InvalidUtf8 | ErrorKind::NoEquals
    )
}

/// Help and version are answers, not errors: stdout, exit 0.
pub fn is_answer(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    fn rendered(args: &[&str]) -> String {
        let error = Cli::try_parse_from(std::iter::once("numasleuth").chain(args.iter().copied())).unwrap_err();
        render(&error)
    }

    #[test]
    fn a_bad_value_is_one_line() {
        let text = rendered(&["c2c", "--samples", "0"]);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.starts_with("numasleuth: error: invalid value '0' for '--samples <N>'"),
            "{text}"
        );
    }

    #[test]
    fn a_long_bad_value_is_quoted_short() {
        let long = format!("0,1,{}", "x".repeat(4096));
        let text = rendered(&["c2c", "--cpus", &long]);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("invalid value '0,1,xxx"), "{text}");
        assert!(!text.contains(&"x".repeat(300)), "{text}");
        assert!(text.len() < 600, "{} bytes: {text}", text.len());
    }

    #[test]
    fn a_missing_argument_is_one_line_then_usage() {
        let text = rendered(&["move", "1", "--range", "1000-2000"]);
        let first = text.lines().next().unwrap();
        assert_eq!(
            first,
            "numasleuth: error: the following required arguments were not provided: --to-node <N>"
        );
        assert!(text.contains("\nUsage: numasleuth move"), "{text}");
    }

    #[test]
    fn no_command_is_an_error_with_the_help() {
        let text = rendered(&["lab"]);
        assert!(text.starts_with("numasleuth: error: a command is required\n"), "{text}");
        assert!(text.contains("false-sharing"), "{text}");
    }

    #[test]
    fn an_unknown_flag_keeps_the_tip() {
        let text = rendered(&["topo", "--bogus"]);
        assert!(
            text.starts_with("numasleuth: error: unexpected argument '--bogus' found\n"),
            "{text}"
        );
        assert!(text.contains("For more information, try '--help'."), "{text}");
    }
}
