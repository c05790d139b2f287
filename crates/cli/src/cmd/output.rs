//! `-o, --output FILE` and `--format` for every command with a report, and
//! the one path that writes it: the command builds a report
//! (`report::export::Exporter`), this picks the formats, adds provenance
//! and writes stdout and files. The older flags stay as aliases: `--json`
//! is JSON on stdout, `--csv` CSV on stdout, `--html FILE` and `--svg FILE`
//! also write that file.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::{ArgAction, Args, ValueEnum};
use numasleuth_kernel::{output_file, Root};
use numasleuth_model::stop::RunSpan;
use numasleuth_report::export::{self, Exporter, Format};
use numasleuth_report::layout::TextLayout;
use numasleuth_report::provenance::Provenance;

/// More would be a typo or a loop in a script, not a wish.
pub const MAX_OUTPUTS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
    Csv,
    Html,
    Svg,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
            FormatArg::Csv => Format::Csv,
            FormatArg::Html => Format::Html,
            FormatArg::Svg => Format::Svg,
        }
    }
}

#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// Also write the report to FILE, in the format its extension names
    /// (.txt, .json, .csv, .html, .svg; what this command offers). Repeat
    /// for several files, at most 8. Written whole or not at all.
    #[arg(short = 'o', long = "output", value_name = "FILE", action = ArgAction::Append, value_parser = output_path)]
    pub output: Vec<PathBuf>,
    /// Without -o: the format printed on stdout. With -o: the format of
    /// every FILE, whatever its extension (stdout keeps text).
    #[arg(long, value_name = "FORMAT", value_enum)]
    pub format: Option<FormatArg>,
}

fn output_path(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    if text.is_empty() || path.file_name().is_none() || text.ends_with('/') {
        return Err("give a file name, e.g. report.json".into());
    }
    Ok(path)
}

/// The command's own older flags, mapped onto the same path.
#[derive(Debug, Default, Clone, Copy)]
pub struct Aliases<'a> {
    /// `--json`: JSON on stdout.
    pub json: bool,
    /// `--csv`: CSV on stdout.
    pub csv: bool,
    /// `--html FILE`: also write HTML there.
    pub html: Option<&'a Path>,
    /// `--svg FILE`: also write SVG there.
    pub svg: Option<&'a Path>,
}

/// Where each rendering goes, decided (and checked) before the command
/// does its work, so a typo does not cost a long measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub stdout: Format,
    pub files: Vec<(PathBuf, Format)>,
}

impl Plan {
    pub fn json(&self) -> bool {
        self.stdout == Format::Json
    }
}

impl OutputArgs {
    /// The plan for a report of type `E`; every error is one line naming
    /// the formats `E` offers.
    pub fn plan<E: Exporter>(&self, aliases: Aliases) -> anyhow::Result<Plan> {
        self.plan_formats(&export::formats::<E>(), aliases)
    }

    /// The plan for a report with text and JSON only, whose `--json` is
    /// `json`.
    pub fn plan_text_json(&self, json: bool) -> anyhow::Result<Plan> {
        self.plan_formats(
            export::TEXT_JSON,
            Aliases {
                json,
                ..Aliases::default()
            },
        )
    }

    /// The plan for a report offering `offered` (text and JSON first).
    pub fn plan_formats(&self, offered: &[Format], aliases: Aliases) -> anyhow::Result<Plan> {
        let offered = offered.to_vec();
        let check = |format: Format, what: &str| -> anyhow::Result<Format> {
            if offered.contains(&format) {
                return Ok(format);
            }
            bail!(
                "{what}: no {format} output for this command; it writes {}",
                export::list(&offered)
            )
        };
        let forced = self.format.map(Format::from);
        let stdout = match (aliases.json, aliases.csv, forced, self.output.is_empty()) {
            (true, true, ..) => bail!("--json and --csv both name stdout's format; give one"),
            (true, _, Some(f), true) | (_, true, Some(f), true) => {
                bail!("--format {f} and --json/--csv both name stdout's format; give one")
            }
            (true, ..) => Format::Json,
            (_, true, ..) => check(Format::Csv, "--csv")?,
            (_, _, Some(f), true) => check(f, &format!("--format {f}"))?,
            _ => Format::Text,
        };
        let mut files = Vec::new();
        for path in &self.output {
            let format = match forced {
                Some(f) => f,
                None => format_of(path, &offered)?,
            };
            files.push((path.clone(), check(format, &format!("-o {}", path.display()))?));
        }
        if let Some(path) = aliases.html {
            files.push((path.to_path_buf(), check(Format::Html, "--html")?));
        }
        if let Some(path) = aliases.svg {
            files.push((path.to_path_buf(), check(Format::Svg, "--svg")?));
        }
        check_files(&files)?;
        Ok(Plan { stdout, files })
    }
}

fn format_of(path: &Path, offered: &[Format]) -> anyhow::Result<Format> {
    let extension = path.extension().and_then(|e| e.to_str());
    match extension.and_then(Format::from_extension) {
        Some(format) => Ok(format),
        None => bail!(
            "-o {}: cannot tell the format from {}; use one of {} or --format",
            path.display(),
            extension.map_or("a name without an extension".to_string(), |e| format!(
                "the extension .{e}"
            )),
            offered
                .iter()
                .map(|f| format!(".{}", f.extension()))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

fn check_files(files: &[(PathBuf, Format)]) -> anyhow::Result<()> {
    if files.len() > MAX_OUTPUTS {
        bail!("{} output files given; at most {MAX_OUTPUTS}", files.len());
    }
    for (i, (path, _)) in files.iter().enumerate() {
        if files[..i].iter().any(|(p, _)| p == path) {
            bail!("-o {} is given twice", path.display());
        }
        if path.is_dir() {
            bail!("-o {}: is a directory; give a file name", path.display());
        }
        let dir = parent(path);
        if !dir.is_dir() {
            bail!("-o {}: the directory {} does not exist", path.display(), dir.display());
        }
    }
    Ok(())
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes the report as planned: stdout first, then every file (each whole
/// or not at all), so a file that cannot be written (a full or read-only
/// disk) never costs the report on stdout; such a file is kept in the
/// temporary directory instead, named in the error.
pub fn emit<E: Exporter>(root: &Root, plan: &Plan, report: &E) -> anyhow::Result<()> {
    emit_run(root, plan, report, None)
}

/// [`emit`] for a command that ran over time: its provenance says how long
/// it ran and whether it was stopped early.
pub fn emit_run<E: Exporter>(root: &Root, plan: &Plan, report: &E, run: Option<RunSpan>) -> anyhow::Result<()> {
    let mut provenance = super::provenance::read(root);
    provenance.run = run;
    let layout = crate::output::stdout_layout(plan.stdout == Format::Text);
    let rendered = export::render(report, plan.stdout, &provenance, &layout)?;
    let printed = match plan.stdout {
        Format::Json => crate::output::print_json(&rendered),
        _ => crate::output::print(&rendered),
    };
    // A closed stdout (`| head`) does not cancel the files asked for.
    write_files(plan, report, &provenance)?;
    printed
}

/// Only the files of the plan (a stream prints stdout itself). Every file
/// is tried; the first failure is the error, after the rest are written.
pub fn write_files<E: Exporter>(plan: &Plan, report: &E, provenance: &Provenance) -> anyhow::Result<()> {
    let mut first_error = None;
    for (path, format) in &plan.files {
        // A file is read later, on some other screen: the default width.
        let text = export::render(report, *format, provenance, &TextLayout::default())?;
        match output_file::write_output(path, text.as_bytes(), 0o666) {
            Ok(()) => say!("numasleuth: wrote {}", path.display()),
            Err(e) => {
                let error = failed_file(path, &e, text.as_bytes());
                if first_error.is_none() {
                    first_error = Some(error);
                } else {
                    say!("numasleuth: error: {error:#}");
                }
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// The error for a file not written, after keeping its content elsewhere.
fn failed_file(path: &Path, error: &std::io::Error, bytes: &[u8]) -> anyhow::Error {
    let kept = match output_file::save_fallback(path, bytes) {
        Ok(copy) => format!("the report is saved as {} instead", copy.display()),
        Err(e) => format!("nor could a copy be saved in {}: {e}", std::env::temp_dir().display()),
    };
    anyhow::anyhow!("cannot write {}: {error}; {kept}", path.display())
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
