//! `numabench report`: one self-contained HTML file from results files.

use crate::output::html::{Run, report};
use crate::results::{Document, write_output};
use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;

/// Write one self-contained HTML report (inline CSS and SVG charts, no
/// script, no network; opens from disk) from one or more results files:
/// host and topology, matrices as heatmaps with classes, sweep curves,
/// scaling curves, other probes' tables and charts.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Results files (from --save, or results.json of `numabench run`).
    #[arg(value_name = "RESULTS", required = true)]
    pub results: Vec<PathBuf>,
    /// Write the report to FILE [default: standard output].
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: ReportArgs) -> Result<()> {
    if let Some(path) = &args.output {
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
    let html = report(&runs);
    match &args.output {
        Some(path) => write_output(path, html.as_bytes())?,
        None => std::io::stdout().lock().write_all(html.as_bytes())?,
    }
    Ok(())
}
