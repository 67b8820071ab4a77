//! `numabench run`: the main job (see `jobs::run`).

use super::output::{FormatArgs, emit};
use crate::console::Sink;
use crate::output::render::Format;
use anyhow::Result;
use std::path::PathBuf;

/// Characterise this machine: topology, the node-to-node matrix with
/// bandwidth classes and model parameters, a cache-aware sweep of
/// bandwidth and latency, then latency by pattern, parallel chases, loaded
/// latency, peak injection and core to core; writes results.json,
/// report.html and CSVs into a new folder and prints a summary.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Where results folders go; each run makes a new
    /// `<host>-<date>-<time>` folder there and never overwrites one.
    #[arg(long, value_name = "DIR", default_value = "numabench-results")]
    pub dir: PathBuf,
    /// What to run: `default` (topology, matrix, sweep, then latency by
    /// pattern, parallel chases, loaded latency, peak injection and core to
    /// core; one to two minutes on a 2-CPU machine), `quick` (topology and
    /// matrix, no sweep: what `fleet report` compares) or `full` (also perf's
    /// mem suite at 5 s per test, the four AutoNUMA tests and numa_test with
    /// one task per CPU; minutes).
    #[arg(long, value_name = "NAME", default_value = "default", value_parser = clap::builder::PossibleValuesParser::new(
        [clap::builder::PossibleValue::new("default"), clap::builder::PossibleValue::new("quick"), clap::builder::PossibleValue::new("full"), clap::builder::PossibleValue::new("smoke").hide(true)]))]
    pub profile: String,
    /// With a format, the results document goes to stdout in it and the
    /// summary to stderr.
    #[command(flatten)]
    pub format: FormatArgs,
}

pub fn run(args: RunArgs) -> Result<()> {
    let outcome = crate::jobs::run::run(&crate::jobs::run::Options {
        dir: args.dir,
        profile: crate::jobs::run::Profile::from_name(&args.profile)
            .expect("clap admits only the profiles' names"),
    })?;
    match args.format.chosen() {
        None | Some(Format::Text) => crate::console::out(&outcome.text),
        Some(format) => {
            Sink { to_stderr: true }.put(&outcome.text);
            emit(&outcome.doc, format)?;
        }
    }
    if let Some(sig) = outcome.interrupted {
        super::exit_interrupted(sig);
    }
    if let Some(why) = &outcome.cut {
        anyhow::bail!("{why}; the folder holds what was measured before it, marked incomplete");
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
