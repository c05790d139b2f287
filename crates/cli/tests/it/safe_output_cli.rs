//! The binary's sources print only through `output` (`say!`, `print`,
//! `print_json`), which apply `kernel::safe_text`: a new message cannot
//! bypass the sanitiser that `hostile_text_cli.rs` tests end to end.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The binary's sources print only through `output` (`say!`, `print`,
/// `print_json`), which apply the sanitiser: no `println!`, `eprintln!` or
/// direct stdout/stderr handle anywhere else, so a new message cannot
/// bypass it. (The progress bar and `top`'s terminal only ask whether a
/// stream is a terminal here; the bar's text is sanitised where it is set.)
#[test]
fn every_message_goes_through_the_sanitiser() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bypasses = Vec::new();
    for file in &files {
        if file.ends_with("output.rs") && file.parent() == Some(src.as_path()) {
            continue;
        }
        let text = fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            let direct = [
                "println!",
                "eprintln!",
                "print!(",
                "eprint!(",
                "stdout().lock",
                "stderr().lock",
                "io::stdout().write",
                "io::stderr().write",
            ];
            // The progress bar draws to stderr itself; its text is made safe
            // where it is set (`measure_plan::Bar::step`).
            let progress_bar = code.contains("ProgressDrawTarget::stderr()");
            let uses_stream = ["stdout()", "stderr()"].iter().any(|s| code.contains(s))
                && !code.contains("is_terminal")
                && !progress_bar;
            if direct.iter().any(|d| code.contains(d)) || uses_stream {
                bypasses.push(format!("{}:{}: {code}", file.display(), n + 1));
            }
        }
    }
    assert!(
        bypasses.is_empty(),
        "output that bypasses the sanitiser:\n{}",
        bypasses.join("\n")
    );
}
