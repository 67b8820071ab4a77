//! `numabench fleet`: a whole cluster through Slurm (`submit`), the
//! machines unlike the others (`report`), what changed (`compare`).

use super::args::{ProfileArgs, ReportOutputArgs, ResultsDirArgs};
use super::output::FormatArgs;
use crate::analysis::fleet::robust::Cut;
use crate::analysis::fleet::{Rule, report};
use crate::error::{EXIT_FLAGGED, usage};
use crate::jobs::fleet::{Interrupted, SubmitOptions, scan, submit};
use crate::output::render::Format;
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;

/// Characterise a cluster through Slurm and find the odd machines.
///
/// Characterise a cluster: run `numabench run` on every node through Slurm,
/// then find the machines that are not like the others and what changed
/// after maintenance.
///
/// Exit status: 0 success; 3 `fleet report` flagged machines (an outlying
/// figure, a rare machine kind or configuration drift); 2 bad input; 1 a
/// failure (Slurm refused, a node's job ended without results).
#[derive(clap::Args, Debug)]
pub struct FleetArgs {
    #[command(subcommand)]
    pub command: FleetCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum FleetCommand {
    #[command(after_long_help = super::examples::FLEET_SUBMIT)]
    Submit(SubmitArgs),
    #[command(after_long_help = super::examples::FLEET_REPORT)]
    Report(ReportArgs),
    #[command(after_long_help = super::examples::FLEET_COMPARE)]
    Compare(CompareArgs),
}

/// Run `numabench run` on every node of a Slurm partition or node list.
///
/// One exclusive batch job per node (`sbatch --nodelist=NODE --nodes=1
/// --exclusive`; an array cannot pin its tasks to nodes), each writing its
/// results folder under `DIR/<Slurm node name>`. Nodes with a complete
/// results document anywhere under DIR, or a job for DIR pending or running,
/// are not submitted again, so running it twice submits only what is
/// missing. DIR (--dir) must be on a file system every node shares with
/// this one. Exit status: 0 success; 2 bad input; 1 a failure (no usable
/// node, Slurm refused or did not answer, a node ended without results);
/// 130 stopped by Ctrl-C, the jobs submitted going on.
#[derive(clap::Args, Debug)]
#[command(
    mut_arg("dir", |a| a.default_value(None::<&'static str>).required(true)),
    mut_arg("profile", |a| a.default_value("quick"))
)]
pub struct SubmitArgs {
    #[command(flatten)]
    pub dir: ResultsDirArgs,
    /// Every node of this Slurm partition [default: every node sinfo lists].
    #[arg(long, short = 'p', value_name = "NAME")]
    pub partition: Option<String>,
    /// These nodes, in Slurm's syntax, e.g. `n[1-16],gpu3`.
    #[arg(long, short = 'w', value_name = "LIST")]
    pub nodelist: Option<String>,
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// The numabench binary the nodes run [default: this one].
    ///
    /// The numabench binary the nodes run; it must be reachable at this
    /// path on every node [default: this one].
    #[arg(long, value_name = "PATH")]
    pub numabench: Option<PathBuf>,
    /// Slurm time limit of each job (sbatch --time), e.g. 30:00.
    #[arg(long, value_name = "TIME")]
    pub time: Option<String>,
    /// One more sbatch option for every job (repeatable), e.g.
    /// --sbatch-arg=--account=ops.
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub sbatch_args: Vec<String>,
    /// Then follow the jobs until every node is done or failed.
    ///
    /// Then follow the jobs until every node is done or failed, a progress
    /// line (done / running / pending / failed) on stderr at each change;
    /// exit 1 if a node ended without results.
    #[arg(long)]
    pub wait: bool,
    /// Seconds between looks at the queue with --wait (1 to 3600).
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub poll: u64,
    /// Print the sbatch command lines and the job script on stdout; submit
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Seconds one Slurm command may take before the submission fails.
    ///
    /// Seconds one Slurm command (sinfo, squeue, sbatch) may take before
    /// it is stopped and the submission fails.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600), hide = true)]
    pub slurm_timeout: u64,
}

/// Find the machines unlike the others in the results documents under DIR.
///
/// Reads every results document under DIR (from `fleet submit`, ssh or
/// copied by hand; a machine is named by its Slurm node name, else its
/// hostname, and its newest complete document counts) and reports per key
/// figure and machine kind (CPU model + node count + memory size) the
/// median, the spread and every machine outside it; kinds rare for their
/// CPU model; settings that differ within a kind (kernel, THP,
/// numa_balancing, memory per node, CPUs, DIMMs where readable).
///
/// An outlier lies more than --threshold modified z-scores (0.6745 x
/// distance from the median / MAD) AND more than --min-deviation % from
/// its kind's median; kinds of fewer than 3 machines are not judged.
/// Exit status 3 when any machine is flagged, 0 when none is. A report
/// written to a file (--output) is HTML unless a format is given.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The folder holding the results documents (searched recursively).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub output: ReportOutputArgs,
    /// Modified z-score beyond which a figure is an outlier (Iglewicz and
    /// Hoaglin's 3.5; 1 to 100).
    #[arg(long, value_name = "Z", default_value_t = 3.5)]
    pub threshold: f64,
    /// ... and the least distance from the median, % (0 to 100).
    #[arg(long, value_name = "PCT", default_value_t = 5.0)]
    pub min_deviation: f64,
    /// A kind with fewer than PCT % of its CPU model's machines is flagged
    /// as rare (0 to 50).
    #[arg(long, value_name = "PCT", default_value_t = 5.0)]
    pub rare_pct: f64,
    #[command(flatten)]
    pub format: FormatArgs,
}

/// What changed between two fleets (before and after an update).
///
/// Machines are paired by name: per figure the fleet-wide median change, marked ~ when
/// a sign test cannot tell it from none, and every machine whose change is
/// beyond its own runs' noise (all of them with --csv or --json).
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    #[arg(value_name = "DIR_BEFORE")]
    pub before: PathBuf,
    #[arg(value_name = "DIR_AFTER")]
    pub after: PathBuf,
    #[command(flatten)]
    pub format: FormatArgs,
}

pub(super) fn run(args: FleetArgs) -> Result<()> {
    match args.command {
        FleetCommand::Submit(a) => run_submit(a),
        FleetCommand::Report(a) => run_report(a),
        FleetCommand::Compare(a) => run_compare(a),
    }
}

fn run_submit(a: SubmitArgs) -> Result<()> {
    if a.partition.is_some() && a.nodelist.is_some() {
        return Err(usage("--partition and --nodelist: give one of them"));
    }
    // Before Slurm is asked anything, and with --dry-run too: the folder
    // must be one the jobs can write their results into.
    let dir = a.dir.dir;
    crate::results::check_output_dir(&dir, "--dir")?;
    // The folder reaches sbatch and the job script as text.
    match dir.to_str() {
        None => {
            return Err(usage(format!(
                "--dir {}: not valid UTF-8; Slurm's options and the job script take text",
                dir.display()
            )));
        }
        Some(d) if d.chars().any(char::is_control) => {
            return Err(usage(format!(
                "--dir {}: holds a control character; give a folder without one",
                crate::text::escape(d)
            )));
        }
        Some(_) => {}
    }
    let numabench = match a.numabench {
        Some(p) => p,
        None => std::env::current_exe()?,
    };
    if !numabench.is_file() {
        return Err(usage(format!(
            "--numabench {}: no such file",
            numabench.display()
        )));
    }
    let opts = SubmitOptions {
        dir,
        partition: a.partition,
        nodelist: a.nodelist,
        profile: a.profile.profile,
        numabench,
        time: a.time,
        extra: a.sbatch_args,
        wait: a.wait,
        poll: Duration::from_secs(a.poll),
        dry_run: a.dry_run,
        slurm_limit: Duration::from_secs(a.slurm_timeout),
    };
    // A stop signal is answered at the next boundary, with a line on what
    // was submitted and goes on; a second one ends the process at once.
    let _stops = crate::interrupt::stop_at_boundaries()?;
    let done = submit(
        &opts,
        &mut |line| crate::console::err(&format!("{line}\n")),
        &mut |line| crate::console::out(&format!("{line}\n")),
    );
    if let Err(e) = &done
        && let Some(Interrupted(sig)) = e.downcast_ref::<Interrupted>()
    {
        super::exit_interrupted(*sig);
    }
    done
}

fn bounded(v: f64, lo: f64, hi: f64, flag: &str) -> Result<f64> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(usage(format!(
            "{flag} {v}: give a number from {lo} to {hi}"
        )))
    }
}

fn notes(s: &scan::Scan) -> Vec<String> {
    let mut out = Vec::new();
    for (path, why) in s.skipped.iter().take(20) {
        out.push(format!("skipped {path}: {why}"));
    }
    if s.skipped.len() > 20 {
        out.push(format!("skipped {} more files", s.skipped.len() - 20));
    }
    if !s.superseded.is_empty() {
        out.push(format!(
            "{} older document(s) of machines with a newer one left out",
            s.superseded.len()
        ));
    }
    let partial: Vec<&str> = s
        .machines
        .iter()
        .filter(|m| !m.complete)
        .map(|m| m.name.as_str())
        .collect();
    if !partial.is_empty() {
        out.push(format!(
            "partial runs (stopped early; their figures may be missing): {}",
            partial.join(", ")
        ));
    }
    out
}

fn run_report(a: ReportArgs) -> Result<()> {
    let rule = Rule {
        cut: Cut {
            z: bounded(a.threshold, 1.0, 100.0, "--threshold")?,
            floor_pct: bounded(a.min_deviation, 0.0, 100.0, "--min-deviation")?,
        },
        rare_pct: bounded(a.rare_pct, 0.0, 50.0, "--rare-pct")?,
        ..Rule::default()
    };
    let inputs = scan::inputs(&a.dir)?;
    if let Some(path) = &a.output.output {
        super::check_output_path(path, "--output")?;
        crate::results::check_not_an_input(path, &inputs, "--output")?;
    }
    let s = scan::read(&inputs);
    if s.machines.is_empty() {
        let first = s
            .skipped
            .first()
            .map(|(file, why)| format!(": {file}: {why}"))
            .unwrap_or_default();
        return Err(usage(format!(
            "{}: no results document found ({} JSON file(s) skipped{first})",
            crate::text::escape(&a.dir.display().to_string()),
            s.skipped.len()
        )));
    }
    let notes = notes(&s);
    let r = report(s.machines, rule, s.specs);
    let default = if a.output.output.is_some() {
        Format::Html
    } else {
        Format::Text
    };
    let text = crate::output::fleet::report(&r, &notes, a.format.chosen().unwrap_or(default))?;
    match &a.output.output {
        Some(path) => crate::results::write_output(path, text.as_bytes())?,
        None => crate::console::out(&text),
    }
    if !r.flagged().is_empty() {
        // Output that did not arrive is a failure (1), or nothing (a closed
        // pipe, 0), as for any command; otherwise 3.
        if let Some(e) = crate::console::stdout_failure() {
            return Err(e.into());
        }
        std::process::exit(EXIT_FLAGGED);
    }
    Ok(())
}

fn run_compare(a: CompareArgs) -> Result<()> {
    let before = scan::scan(&a.before)?;
    let after = scan::scan(&a.after)?;
    for (s, d) in [(&before, &a.before), (&after, &a.after)] {
        if s.machines.is_empty() {
            return Err(usage(format!("{}: no results document found", d.display())));
        }
    }
    let c =
        crate::analysis::fleet::compare::compare(&before.machines, &after.machines, &before.specs);
    let text =
        crate::output::fleet::compare::render(&c, a.format.chosen().unwrap_or(Format::Text))?;
    crate::console::out(&text);
    Ok(())
}
