//! `numabench run`: the main job (see `jobs::run`).

use anyhow::Result;
use std::path::PathBuf;

/// Characterise this machine: topology, the node-to-node matrix with
/// bandwidth classes and model parameters, a cache-aware sweep of
/// bandwidth and latency; writes results.json, report.html and CSVs into a
/// new folder and prints a summary.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Where results folders go; each run makes a new
    /// `<host>-<date>-<time>` folder there and never overwrites one.
    #[arg(long, value_name = "DIR", default_value = "numabench-results")]
    pub dir: PathBuf,
    /// What to run: `default` (topology, matrix, sweep; about a minute on a
    /// small machine) or `full` (also perf's mem suite at 5 s per test, the
    /// four AutoNUMA tests and numa_test with one task per CPU; minutes).
    #[arg(long, value_name = "NAME", default_value = "default", value_parser = ["default", "full"])]
    pub profile: String,
}

pub fn run(args: RunArgs) -> Result<()> {
    let outcome = crate::jobs::run::run(&crate::jobs::run::Options {
        dir: args.dir,
        full: args.profile == "full",
    })?;
    crate::console::out(&outcome.text);
    if let Some(sig) = outcome.interrupted {
        super::exit_interrupted(sig);
    }
    Ok(())
}
