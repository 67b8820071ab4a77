//! `numabench tier`: promotion and demotion between a fast and a slow
//! memory tier, each test between its all-fast and all-slow baselines.

use super::args::WatchArgs;
use super::output::{FormatArgs, SaveArgs, emit};
use crate::console::Sink;
use crate::output::render::Format;
use crate::probes::tier::Job;
use crate::probes::tier::plan::{Asked, Test};
use crate::probes::tier::run::{DEFAULT_SAMPLE_PAGES, Settings};
use crate::topology::{SysfsRoot, read_topology};
use anyhow::Result;

/// The tests a command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection(pub Vec<Test>);

fn tests(s: &str) -> Result<Selection, String> {
    if s == "all" {
        return Ok(Selection(Test::ALL.to_vec()));
    }
    Test::from_name(s)
        .map(|t| Selection(vec![t]))
        .ok_or_else(|| format!("'{s}' is not a test (promotion, demotion, oversize or all)"))
}

fn whole(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a whole number from {lo} to {hi}")),
    }
}

fn mebibytes(s: &str) -> Result<u64, String> {
    whole(s, 1, 1 << 30)
}

fn threads(s: &str) -> Result<usize, String> {
    whole(s, 1, 4096).map(|v| v as usize)
}

/// Tiered memory: does the kernel promote hot pages and demote cold ones?
///
/// Tiered memory: does the kernel promote hot pages from a slow memory
/// tier (CXL, persistent memory, a CPU-less node HMAT reports slower) to
/// the fast one, and demote cold pages under pressure?
///
/// promotion: a hot region (read every pass by the workers) and a cold
/// one (written once) start on the slow node, the fast node has room;
/// demotion: a cold region fills the fast node and a hot one starts on the
/// slow node, so promoting it needs the cold memory demoted; oversize: a
/// hot and a warm region (read every 4th pass), together 1.5 times the fast
/// node's free memory, start on the slow node: does the kernel keep the
/// hot part fast, and how much does it move back and forth?
///
/// Each region is written with a bind policy to its start node, which is
/// then lifted: only the kernel moves it (kernel.numa_balancing=2 or 3
/// promotes; /sys/kernel/mm/numa/demotion_enabled lets reclaim demote).
/// Worker threads on the CPUs of the fast node (or the nearest node with
/// CPUs) read one word per cache line. At every look the node of
/// --sample-pages pages of each region is asked of the kernel (move_pages) and
/// /proc/vmstat's pgpromote_*/pgdemote_* counters are read. Before each
/// test two baselines run its touched regions bound to the fast node
/// (best) and to the slow node (worst), for a third of --secs; the test's
/// GB/s is then placed between them (0% all-slow, 100% all-fast).
///
/// Exit 2 with one line where this machine or kernel cannot tier (no
/// usable memory in a lower tier), before anything is measured.
#[derive(clap::Args, Debug)]
#[command(
    mut_arg("secs", |a| a.default_value("30")),
    mut_arg("sample_pages", |a| a.default_value(DEFAULT_SAMPLE_PAGES))
)]
pub struct TierArgs {
    /// promotion, demotion, oversize or all.
    #[arg(value_name = "TEST", default_value = "all", value_parser = tests)]
    pub tests: Selection,
    #[command(flatten)]
    pub watch: WatchArgs,
    /// Size of the hot region in MiB.
    ///
    /// Size of the hot region in MiB [default: a quarter of the fast or
    /// slow node's free memory, whichever is less, at most 1024; oversize:
    /// 40% of its total].
    #[arg(long, value_name = "MIB", value_parser = mebibytes)]
    pub hot: Option<u64>,
    /// Size of oversize's warm region in MiB [default: 60% of 1.5 times the
    /// fast node's free memory].
    #[arg(long, value_name = "MIB", value_parser = mebibytes)]
    pub warm: Option<u64>,
    /// Size of the cold region in MiB.
    ///
    /// Size of the cold region in MiB [default: promotion: the hot size;
    /// demotion: what leaves the fast node a quarter of the hot size free].
    #[arg(long, value_name = "MIB", value_parser = mebibytes)]
    pub cold: Option<u64>,
    /// Worker threads, all on the fast node's CPUs (1 to 4096).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = threads)]
    pub threads: usize,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub save: SaveArgs,
}

pub(super) fn run(args: TierArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    args.save.check()?;
    let asked = Asked {
        hot_mib: args.hot,
        warm_mib: args.warm,
        cold_mib: args.cold,
        secs: args.watch.secs.unwrap_or(30),
        threads: args.threads,
    };
    let settings = Settings {
        interval: args.watch.interval(),
        sample_pages: args.watch.sample_pages,
    };
    let job = Job::new(
        &topo,
        &args.tests.0,
        &asked,
        settings,
        !args.watch.no_baselines,
    )?;
    let format = args.format.or_default(Format::Text);
    let (mut doc, interrupted) = job.run(&topo, &mut |line| {
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            Sink { to_stderr: true }.put(line);
        }
    })?;
    if interrupted.is_none() {
        doc.finish();
    }
    args.save.save(&doc)?;
    emit(&doc, format)?;
    if let Some(sig) = interrupted {
        super::exit_interrupted(sig);
    }
    Ok(())
}
