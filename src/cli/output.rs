//! The output flags every command shares, declared once, and the one path
//! from a finished results document to stdout and `--save`.

use crate::output::render::{Format, render};
use crate::results::Document;
use anyhow::Result;
use std::io::IsTerminal;
use std::path::PathBuf;

/// How the results are printed (one of these at most).
#[derive(clap::Args, Debug, Clone, Default)]
#[group(id = "output_format", multiple = false)]
pub struct FormatArgs {
    /// Print in FORMAT: text, csv, json, markdown, latex or html
    #[arg(long, value_enum, value_name = "FORMAT", help_heading = "Output")]
    pub format: Option<Format>,
    /// The results document (JSON) on stdout (--format json)
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// CSV on stdout (--format csv)
    #[arg(long, help_heading = "Output")]
    pub csv: bool,
    /// Markdown tables on stdout (--format markdown)
    #[arg(long, help_heading = "Output")]
    pub markdown: bool,
    /// A LaTeX document on stdout (--format latex)
    #[arg(long, help_heading = "Output")]
    pub latex: bool,
    /// One self-contained HTML page on stdout (--format html)
    #[arg(long, help_heading = "Output")]
    pub html: bool,
}

impl FormatArgs {
    /// The format asked for, if any.
    pub fn chosen(&self) -> Option<Format> {
        let flags = [
            (self.json, Format::Json),
            (self.csv, Format::Csv),
            (self.markdown, Format::Markdown),
            (self.latex, Format::Latex),
            (self.html, Format::Html),
        ];
        self.format
            .or_else(|| flags.iter().find(|(on, _)| *on).map(|(_, f)| *f))
    }

    /// The format asked for, else text on a terminal and `off_terminal`
    /// where stdout is a file or a pipe.
    pub fn or_default(&self, off_terminal: Format) -> Format {
        self.chosen().unwrap_or(if std::io::stdout().is_terminal() {
            Format::Text
        } else {
            off_terminal
        })
    }
}

/// Where the results document is kept besides stdout.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SaveArgs {
    /// Also write the results document (JSON) to FILE
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub save: Option<PathBuf>,
}

impl SaveArgs {
    /// Checks the path before any work (exit 2 for a path numabench may not
    /// write).
    pub fn check(&self) -> Result<()> {
        match &self.save {
            Some(path) => super::check_output_path(path, "--save"),
            None => Ok(()),
        }
    }

    /// Writes the document where `--save` says, if it says. The path was
    /// checked before the measurement; should the write fail all the same
    /// (the path replaced meanwhile by a link, the disk full), the document
    /// goes to stdout instead, so what was measured is not lost.
    pub fn save(&self, doc: &Document) -> Result<()> {
        let Some(path) = &self.save else {
            return Ok(());
        };
        let Err(e) = doc.save(path) else {
            return Ok(());
        };
        let Ok(json) = doc.to_json() else {
            return Err(e);
        };
        crate::console::out(&String::from_utf8_lossy(&json));
        Err(anyhow::anyhow!(
            "{e:#}; the results document is on standard output instead"
        ))
    }
}

/// `doc` in `format` on stdout, drawn by the probes' views.
pub(crate) fn emit(doc: &Document, format: Format) -> Result<()> {
    crate::console::out(&render(doc, format, crate::probes::REGISTRY)?);
    Ok(())
}

/// [`emit`], or after a stop by the signal in `interrupted`: the document
/// under the INTERRUPTED line naming what was `kept` where a person reads
/// it (text, Markdown), with the line on stderr elsewhere, then the exit a
/// shell expects.
pub(crate) fn emit_or_stop(
    doc: &Document,
    format: Format,
    interrupted: Option<i32>,
    kept: &str,
) -> Result<()> {
    let Some(sig) = interrupted else {
        return emit(doc, format);
    };
    let text = render(doc, format, crate::probes::REGISTRY)?;
    crate::console::out(&super::with_stop_line(
        text,
        sig,
        kept,
        matches!(format, Format::Text | Format::Markdown),
    ));
    super::exit_interrupted(sig)
}

/// [`emit_or_stop`]; then, where a measurement failed partway (`failed`,
/// the document marked by `mark_failed` and saved), that failure (exit 1)
/// saying what was kept.
pub(crate) fn emit_then_fail(
    doc: &Document,
    format: Format,
    interrupted: Option<i32>,
    failed: Option<&str>,
    saved: bool,
) -> Result<()> {
    emit_or_stop(doc, format, interrupted, &records_kept(doc))?;
    match failed {
        None => Ok(()),
        Some(why) => Err(anyhow::anyhow!(
            "{why}; the {} record(s) measured before it are {}, marked incomplete",
            doc.records.len(),
            if saved { "saved" } else { "printed above" }
        )),
    }
}

/// Marks how a probe command's run ended: stopped by the signal in
/// `interrupted`, cut short by a measurement that `failed`, or finished
/// (complete when `complete`).
pub(crate) fn mark_end(
    doc: &mut Document,
    probe: &str,
    interrupted: Option<i32>,
    failed: Option<&str>,
    complete: bool,
) {
    match (interrupted, failed) {
        (Some(sig), _) => super::mark_interrupted(doc, probe, sig),
        (None, Some(why)) => super::mark_failed(doc, probe, why),
        (None, None) => {
            doc.finish();
            doc.complete = complete;
        }
    }
}

/// Ends a probe command: [`mark_end`], saves the document (`--save`),
/// then [`emit_then_fail`].
pub(crate) fn finish_probe(
    doc: &mut Document,
    probe: &str,
    format: Format,
    save: &SaveArgs,
    failed: Option<&str>,
    complete: bool,
) -> Result<()> {
    let interrupted = crate::interrupt::requested();
    mark_end(doc, probe, interrupted, failed, complete);
    save.save(doc)?;
    emit_then_fail(doc, format, interrupted, failed, save.save.is_some())
}

/// What a stopped document kept, counted in records.
pub(crate) fn records_kept(doc: &Document) -> String {
    format!("{} record(s) measured before the stop", doc.records.len())
}
