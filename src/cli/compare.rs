//! `numabench compare`: results files side by side, per test and metric.

use crate::analysis::compare::compare;
use crate::error::usage;
use crate::output::compare as render;
use crate::output::render::Format;
use crate::results::Document;
use anyhow::Result;
use std::path::PathBuf;

/// Compare results files (kernel A against kernel B, this server against
/// last year's): for every test and metric of BASE, its value in each
/// OTHER run and the change in %, signed so that + is better; changes
/// within the runs' own noise are marked with ~.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The base results file.
    #[arg(value_name = "BASE")]
    pub base: PathBuf,
    /// Results files to compare with the base.
    #[arg(value_name = "OTHER", required = true)]
    pub others: Vec<PathBuf>,
    /// Column names, comma separated, base first [default: file names].
    #[arg(long, value_name = "A,B,...")]
    pub labels: Option<String>,
    /// Also compare spread and cost metrics (cv_pct, stddev, runtime of
    /// bandwidth and latency measurements).
    #[arg(long)]
    pub all_metrics: bool,
    #[command(flatten)]
    pub format: super::output::FormatArgs,
}

fn labels(args: &CompareArgs) -> Result<Vec<String>> {
    let n = 1 + args.others.len();
    match &args.labels {
        Some(text) => {
            let l: Vec<String> = text.split(',').map(|s| s.trim().to_string()).collect();
            if l.len() != n || l.iter().any(String::is_empty) {
                return Err(usage(format!(
                    "--labels {text}: give {n} non-empty names, base first"
                )));
            }
            Ok(l)
        }
        None => Ok(std::iter::once(&args.base)
            .chain(&args.others)
            .map(|p| {
                p.file_stem()
                    .map_or_else(|| p.display().to_string(), |s| s.to_string_lossy().into())
            })
            .collect()),
    }
}

pub fn run(args: CompareArgs) -> Result<()> {
    let labels = labels(&args)?;
    let base = super::model::load(&args.base)?;
    let others: Vec<Document> = args
        .others
        .iter()
        .map(|p| super::model::load(p))
        .collect::<Result<_>>()?;
    let refs: Vec<&Document> = others.iter().collect();
    let c = compare(&base, &refs, args.all_metrics);
    let format = args.format.chosen().unwrap_or(Format::Text);
    crate::console::out(&render::render(&c, &labels, format)?);
    Ok(())
}
