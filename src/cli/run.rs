//! `numabench run`: the main job (see `jobs::run`).

use super::args::{ProfileArgs, ResultsDirArgs};
use super::output::{FormatArgs, emit};
use crate::console::Sink;
use crate::jobs::run::{Budget, Unwritten};
use crate::output::render::Format;
use anyhow::Result;

/// Characterise this machine: topology, matrix, sweep, latency and more.
///
/// Characterise this machine: topology, the node-to-node matrix with
/// bandwidth classes and model parameters, a cache-aware sweep of
/// bandwidth and latency, then latency by pattern, parallel chases, loaded
/// latency, peak injection and core to core; writes results.json,
/// report.html and CSVs into a new folder and prints a summary.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub dir: ResultsDirArgs,
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// With a format, the results document goes to stdout in it and the
    /// summary to stderr.
    #[command(flatten)]
    pub format: FormatArgs,
    /// With --plan: the steps the run would take, with their estimates.
    ///
    /// With --plan: the steps the run would take, in order, each with the
    /// command line it would be given, what it measures and its estimate.
    #[command(flatten)]
    pub planning: super::args::PlanArgs,
    /// Fit the run in this long, e.g. 10m (none for no budget) [default: 15m].
    ///
    /// Fit the run in this long (e.g. 10m, 600s, 1h; none for no budget):
    /// the parts are trimmed (pairs by distance class, the matrix's scan by
    /// class, fewer repeats, fewer sweep sizes, the matrix's latency on
    /// sampled pairs, brief figures) until the plan's estimate fits, and the run says what
    /// it dropped; refused before measuring where it cannot fit
    /// [default: 15m, where the most trimmed run goes ahead with a warning]
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// Measure every node pair, however many nodes.
    ///
    /// Measure every node pair in latency, mlp and peak, however many nodes (by
    /// default, above 8 memory nodes, local pairs and a spread sample of
    /// each distance class)
    #[arg(long)]
    pub all_pairs: bool,
}

/// `--budget`'s seconds: a number with s, m or h (seconds without).
fn budget(text: &str) -> Result<f64> {
    let t = text.trim();
    let (num, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => t.split_at(i),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => f64::NAN,
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() && scale.is_finite() => Ok(v * scale),
        _ => Err(crate::error::usage(format!(
            "--budget '{}': give a duration such as 90s, 10m or 1h",
            crate::text::escape(text)
        ))),
    }
}

pub(super) fn run(args: RunArgs) -> Result<()> {
    let profile = crate::jobs::run::Profile::from_name(&args.profile.profile)
        .expect("clap admits only the profiles' names");
    let topo = args.planning.topology()?;
    let opts = crate::jobs::run::Options {
        dir: args.dir.dir.clone(),
        profile,
        budget: match args.budget.as_deref() {
            None => Budget::Default,
            Some("none") => Budget::None,
            Some(text) => Budget::Given(budget(text)?),
        },
        all_pairs: args.all_pairs,
    };
    if args.planning.plan {
        let scope = crate::jobs::run::fitted(&topo, &opts)?;
        let steps = crate::jobs::run::plan::steps(&topo, scope, crate::probes::REGISTRY);
        crate::console::out(&crate::jobs::run::plan::text(&topo, scope, &steps));
        return Ok(());
    }
    let dir = args.dir.dir.clone();
    let outcome = crate::jobs::run::run(&opts)?;
    let document_unwritten = matches!(outcome.unwritten, Some(Unwritten::Document(_)));
    match args.format.chosen() {
        // Without a folder, standard output carries the document and the
        // summary moves to stderr.
        None | Some(Format::Text) if !document_unwritten => crate::console::out(&outcome.text),
        chosen => {
            Sink { to_stderr: true }.put(&outcome.text);
            let format = if document_unwritten {
                Format::Json
            } else {
                chosen.unwrap_or(Format::Json)
            };
            emit(&outcome.doc, format)?;
        }
    }
    match &outcome.unwritten {
        Some(Unwritten::Document(e)) => anyhow::bail!(
            "{e:#}; the results document is on standard output instead (nothing was left in {})",
            crate::text::escape(&dir.display().to_string())
        ),
        Some(Unwritten::Others { folder, errors }) => anyhow::bail!(
            "{} holds results.json, but {} could not be written: {}",
            crate::text::escape(&folder.display().to_string()),
            if errors.len() == 1 {
                "one file"
            } else {
                "some files"
            },
            crate::text::escape(&errors.join("; "))
        ),
        None => {}
    }
    if let Some(sig) = outcome.interrupted {
        super::exit_interrupted(sig);
    }
    if !outcome.failed.is_empty() {
        let logs: Vec<String> = outcome.failed.iter().map(|p| format!("{p}.log")).collect();
        anyhow::bail!(
            "part(s) {} did not complete (see {}); the folder holds every other part, marked incomplete",
            outcome.failed.join(", "),
            logs.join(", ")
        );
    }
    Ok(())
}
