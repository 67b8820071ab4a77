//! `numabench report`: one self-contained HTML file from results files.

use crate::output::html::Run;
use crate::output::render::Format;
use crate::results::{Document, write_output};
use anyhow::Result;
use std::path::PathBuf;

/// Write one self-contained HTML report from results files.
///
/// Write one self-contained HTML report (inline CSS and SVG charts, one
/// small script that sorts a table by the column clicked, no network; opens
/// from disk) from one or more results files:
/// host and topology, matrices as heatmaps with classes, sweep curves,
/// scaling curves, other probes' tables and charts.
///
/// With another format,
/// each results file as its command printed it (text, CSV, Markdown,
/// LaTeX) or the documents themselves (JSON).
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Results files (from --save, or results.json of `numabench run`).
    #[arg(value_name = "RESULTS", required = true)]
    pub results: Vec<PathBuf>,
    #[command(flatten)]
    pub output: super::args::ReportOutputArgs,
    #[command(flatten)]
    pub format: super::output::FormatArgs,
}

pub(super) fn run(args: ReportArgs) -> Result<()> {
    if let Some(path) = &args.output.output {
        crate::results::check_not_an_input(path, &args.results, "--output")?;
        super::check_output_path(path, "--output")?;
    }
    let docs: Vec<Document> = args
        .results
        .iter()
        .map(|p| super::model::load(p))
        .collect::<Result<_>>()?;
    let runs: Vec<Run<'_>> = docs
        .iter()
        .zip(&args.results)
        .map(|(doc, p)| Run {
            label: p
                .file_stem()
                .map_or_else(|| p.display().to_string(), |s| s.to_string_lossy().into()),
            doc,
        })
        .collect();
    let text = crate::output::report::runs(
        &runs,
        args.format.chosen().unwrap_or(Format::Html),
        crate::probes::REGISTRY,
    )?;
    match &args.output.output {
        Some(path) => write_output(path, text.as_bytes())?,
        None => crate::console::out(&text),
    }
    Ok(())
}
