//! `numabench compare`: results files side by side, per test and metric.

use crate::analysis::compare::{Metrics, compare, holdings, missing_metrics};
use crate::error::usage;
use crate::output::compare as render;
use crate::output::render::Format;
use crate::results::Document;
use anyhow::Result;
use std::path::PathBuf;

/// Compare results files: each metric of BASE against each OTHER run.
///
/// Compare results files (kernel A against kernel B, this server against
/// last year's): for every test and metric of BASE, its value in each
/// OTHER run and the change in %, signed so that + is better; changes
/// within the runs' own noise are marked with ~; "new" where the base was 0
/// (no % exists).
///
/// With --metric, the text is one table per metric as in perf's result
/// mails: one row per test, one column per file; times to converge in
/// seconds and spreads in % without a change column, other figures with
/// their change against BASE.
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
    /// Also compare spread and cost metrics (cv_pct, stddev, runtime).
    ///
    /// Also compare spread and cost metrics (cv_pct, stddev, runtime of
    /// bandwidth and latency measurements).
    #[arg(long, conflicts_with = "metrics")]
    pub all_metrics: bool,
    /// Compare only this metric (repeatable).
    ///
    /// Compare only this metric (repeatable), e.g. convergence_latency_s,
    /// total_speed_gb_s or spread_runtime_pct of `mem` runs.
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
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

pub(super) fn run(args: CompareArgs) -> Result<()> {
    let labels = labels(&args)?;
    let base = super::model::load(&args.base)?;
    let others: Vec<Document> = args
        .others
        .iter()
        .map(|p| super::model::load(p))
        .collect::<Result<_>>()?;
    let refs: Vec<&Document> = others.iter().collect();
    let metrics = if !args.metrics.is_empty() {
        check_metrics(&base, &args)?;
        Metrics::Named(&args.metrics)
    } else if args.all_metrics {
        Metrics::All
    } else {
        Metrics::Main
    };
    let c = compare(&base, &refs, metrics);
    if let Some(i) = (0..refs.len()).find(|&i| !c.shares_with(i)) {
        let name = |p: &std::path::Path| crate::text::escape(&p.display().to_string()).into_owned();
        return Err(usage(format!(
            "{} and {} share no figure to compare: {} holds {}, {} holds {}; compare results of the same command{}",
            name(&args.base),
            name(&args.others[i]),
            name(&args.base),
            crate::text::escape(&holdings(&base)),
            name(&args.others[i]),
            crate::text::escape(&holdings(refs[i])),
            if args.metrics.is_empty() {
                ""
            } else {
                " with the --metric given"
            },
        )));
    }
    let format = args.format.chosen().unwrap_or(Format::Text);
    let out = if format == Format::Text && !args.metrics.is_empty() {
        crate::output::compare_metric::text(&c, &labels, &args.metrics)
    } else {
        render::render(&c, &labels, format)?
    };
    crate::console::out(&out);
    Ok(())
}

/// Every `--metric` is one some record of the base has.
fn check_metrics(base: &Document, args: &CompareArgs) -> Result<()> {
    let Some(first) = missing_metrics(base, &args.metrics).first().copied() else {
        return Ok(());
    };
    let mut known: Vec<&str> = base
        .records
        .iter()
        .flat_map(|r| r.metrics.keys().map(String::as_str))
        .collect();
    known.sort_unstable();
    known.dedup();
    Err(usage(format!(
        "--metric {}: no record of {} has it (its metrics: {})",
        crate::text::escape(first),
        args.base.display(),
        if known.is_empty() {
            "none".to_string()
        } else {
            crate::text::escape(&known.join(", ")).into_owned()
        }
    )))
}
