//! Command-line definitions, one file per command. The `///` comments are the
//! help text.

pub(crate) mod args;
mod autonuma;
mod c2c;
pub(crate) mod chase;
mod classes;
mod compare;
mod examples;
mod fleet;
mod gather;
mod generate;
#[cfg(test)]
mod help_tests;
mod help_text;
mod latency;
mod loaded;
mod man;
mod matrix;
mod mem;
mod mlp;
mod model;
mod omp;
pub(crate) mod output;
mod parse_error;
mod part;
mod pcie;
pub(crate) mod peak;
mod place;
mod report;
mod run;
mod sched;
pub(crate) mod select;
pub(crate) mod sweep;
mod tier;
mod topo;
pub(crate) mod units;

pub use help_text::parse;
pub use parse_error::usage_line;

use crate::topology::{ROOT_ENV, SysfsRoot, Topology, read_topology};
use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Measure NUMA memory systems: topology, placement, bandwidth and latency.
#[derive(Parser, Debug)]
#[command(
    name = "numabench",
    version,
    about,
    long_about = None,
    after_long_help = examples::NUMABENCH
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    #[command(after_long_help = examples::RUN)]
    Run(run::RunArgs),
    #[command(after_long_help = examples::TOPO)]
    Topo(topo::TopoArgs),
    #[command(after_long_help = examples::GATHER)]
    Gather(gather::GatherArgs),
    #[command(after_long_help = examples::PLACE)]
    Place(place::PlaceArgs),
    #[command(after_long_help = examples::SWEEP)]
    Sweep(sweep::SweepArgs),
    #[command(after_long_help = examples::MATRIX)]
    Matrix(matrix::MatrixArgs),
    #[command(after_long_help = examples::MODEL)]
    Model(model::ModelArgs),
    #[command(after_long_help = examples::LATENCY)]
    Latency(latency::LatencyArgs),
    #[command(after_long_help = examples::MLP)]
    Mlp(mlp::MlpArgs),
    #[command(after_long_help = examples::LOADED)]
    Loaded(loaded::LoadedArgs),
    #[command(after_long_help = examples::PEAK)]
    Peak(peak::PeakArgs),
    #[command(after_long_help = examples::C2C)]
    C2c(c2c::C2cArgs),
    #[command(after_long_help = examples::PCIE)]
    Pcie(pcie::PcieArgs),
    #[command(after_long_help = examples::MEM)]
    Mem(mem::MemArgs),
    #[command(after_long_help = examples::AUTONUMA)]
    Autonuma(autonuma::AutonumaArgs),
    #[command(after_long_help = examples::SCHED)]
    Sched(sched::SchedArgs),
    #[command(after_long_help = examples::TIER)]
    Tier(tier::TierArgs),
    #[command(after_long_help = examples::FLEET)]
    Fleet(fleet::FleetArgs),
    #[command(after_long_help = examples::COMPARE)]
    Compare(compare::CompareArgs),
    #[command(after_long_help = examples::REPORT)]
    Report(report::ReportArgs),
    #[command(after_long_help = examples::GENERATE)]
    Generate(generate::GenerateArgs),
    #[command(hide = true)]
    Part(part::PartArgs),
}

impl Cli {
    /// The names of the commands a person runs (not `help`, not hidden).
    pub(crate) fn command_names() -> Vec<String> {
        use clap::CommandFactory;
        Cli::command()
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name().to_string())
            .collect()
    }
}

impl Command {
    /// Whether the command measures: those stop at the next boundary on
    /// SIGINT/SIGTERM and keep what they measured, from their first
    /// instruction on. The others keep the default action.
    pub fn measures(&self) -> bool {
        match self {
            Command::Model(m) => m.validate,
            Command::Run(_)
            | Command::Sweep(_)
            | Command::Matrix(_)
            | Command::Mem(_)
            | Command::Autonuma(_)
            | Command::Sched(_)
            | Command::Pcie(_)
            | Command::C2c(_)
            | Command::Tier(_)
            | Command::Loaded(_)
            | Command::Latency(_)
            | Command::Mlp(_)
            | Command::Peak(_)
            | Command::Part(_) => true,
            _ => false,
        }
    }
}

/// Where topology is read from; shared by every command.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RootArgs {
    /// Read sysfs/procfs from DIR instead of the running system.
    ///
    /// Read sysfs/procfs from DIR (holding sys/ and proc/, e.g. an unpacked
    /// `numabench gather` archive) instead of the running system.
    ///
    /// Also set by the environment variable NUMABENCH_SYSFS_ROOT.
    #[arg(long, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,
}

impl RootArgs {
    /// The root to read: the flag, else the environment variable, else `/`.
    pub fn source(&self) -> SysfsRoot {
        let from_env = std::env::var_os(ROOT_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        match self.sysfs_root.clone().or(from_env) {
            Some(dir) => SysfsRoot::new(dir),
            None => SysfsRoot::live(),
        }
    }

    pub fn topology(&self) -> Result<(SysfsRoot, Topology)> {
        let src = self.source();
        let topo = read_topology(&src)?;
        Ok((src, topo))
    }
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Topo(args) => topo::run(args),
        Command::Gather(args) => gather::run(args),
        Command::Place(args) => place::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Matrix(args) => matrix::run(args),
        Command::Model(args) => model::run(args),
        Command::Pcie(args) => pcie::run(args),
        Command::Mem(args) => mem::run(args),
        Command::Autonuma(args) => autonuma::run(args),
        Command::Sched(args) => sched::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Report(args) => report::run(args),
        Command::Run(args) => run::run(args),
        Command::Generate(args) => generate::run(args),
        Command::C2c(args) => c2c::run(args),
        Command::Tier(args) => tier::run(args),
        Command::Fleet(args) => fleet::run(args),
        Command::Loaded(args) => loaded::run(args),
        Command::Latency(args) => latency::run(args),
        Command::Mlp(args) => mlp::run(args),
        Command::Peak(args) => peak::run(args),
        Command::Part(args) => part::run(args),
    }
}

/// Ends a workload command (mem, autonuma, sched): marks the document
/// complete unless a signal stopped the run or a worker died, saves it
/// (`--save`), writes it to stdout (`--json`); after a signal exits with
/// 128 + its number, as a shell expects of a process stopped by one, and
/// after a failure returns it (exit 1) once what was measured is kept.
pub fn finish_document(
    doc: &mut crate::results::Document,
    save: Option<&std::path::Path>,
    json: bool,
    interrupted: Option<i32>,
    failed: Option<String>,
) -> Result<()> {
    use std::io::Write;
    if interrupted.is_none() && failed.is_none() {
        doc.finish();
    }
    if let Some(path) = save {
        doc.save(path)?;
    }
    if json {
        std::io::stdout().lock().write_all(&doc.to_json()?)?;
    }
    if let Some(sig) = interrupted {
        let _ = std::io::stdout().flush();
        std::process::exit(128 + sig);
    }
    match failed {
        Some(why) => Err(anyhow::anyhow!(
            "{why}{}",
            if save.is_some() {
                "; what was measured before is saved, marked incomplete"
            } else {
                ""
            }
        )),
        None => Ok(()),
    }
}

/// The stop helpers every measuring command shares, kept where the
/// commands call them.
pub use crate::jobs::{interrupted_line, mark_failed, mark_interrupted};

/// `text` as shown after a stop by `sig`: opened by the INTERRUPTED line
/// where a person reads it; where a program does (JSON, CSV, LaTeX) the
/// line goes to stderr and `text` stays parseable.
pub fn with_stop_line(text: String, sig: i32, kept: &str, for_people: bool) -> String {
    if for_people {
        format!("{}\n{text}", interrupted_line(sig, kept))
    } else {
        eprintln!("numabench: {}", interrupted_line(sig, kept));
        text
    }
}

/// Ends the process after a stop by `sig`, as a shell expects of a process
/// a signal stopped: exit 128 + its number.
pub fn exit_interrupted(sig: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    std::process::exit(128 + sig)
}

/// Checks an output path before any work: what is there must be a file
/// numabench may replace, or a FIFO or device it writes through (see
/// `results::write`). Bad paths are exit 2, nothing measured.
pub fn check_output_path(path: &std::path::Path, flag: &str) -> Result<()> {
    crate::results::check_output(path, flag).map(drop)
}

/// The command `numabench WORDS...` parses to, for the commands' tests.
#[cfg(test)]
pub(crate) fn parsed_command(words: &[&str]) -> Command {
    use clap::Parser;
    Cli::try_parse_from(std::iter::once("numabench").chain(words.iter().copied()))
        .expect("clap accepts these")
        .command
}
