//! `numabench autonuma`: the AutoNUMA benchmark's four tests with memory
//! per node over time, all memory starting on one node.

use super::args::{RunsArgs, WatchArgs};
use super::output::{FormatArgs, SaveArgs, emit};
use crate::console::Sink;
use crate::output::render::Format;
use crate::probes::autonuma::Settings;
use crate::probes::autonuma::bench::{Asked, Test};
use crate::probes::autonuma::session::{Ended, Job, RunFiles};
use crate::probes::workload::watch::Method;
use crate::results::write_output;
use crate::topology::{SysfsRoot, read_topology};
use anyhow::{Context, Result, anyhow};
use std::path::{Path, PathBuf};

/// The tests a command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection(pub Vec<Test>);

fn tests(s: &str) -> Result<Selection, String> {
    if s == "all" {
        return Ok(Selection(Test::ALL.to_vec()));
    }
    Test::from_name(s)
        .map(|t| Selection(vec![t]))
        .ok_or_else(|| {
            format!(
                "'{s}' is not a test (numa01, numa01_THREAD_ALLOC, numa02, numa02_SMT, numa01_PER_NODE or all)"
            )
        })
}

fn whole(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a whole number from {lo} to {hi}")),
    }
}

fn count32(s: &str) -> Result<u32, String> {
    whole(s, 1, u64::from(u32::MAX)).map(|v| v as u32)
}

fn threads(s: &str) -> Result<usize, String> {
    whole(s, 1, 4096).map(|v| v as usize)
}

fn mebibytes(s: &str) -> Result<u64, String> {
    whole(s, 1, 1 << 30)
}

fn number(s: &str, lo: f64, hi: f64, open_lo: bool) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v <= hi && (v > lo || (!open_lo && v == lo)) => Ok(v),
        _ if open_lo => Err(format!("'{s}' is not a number above {lo} and up to {hi}")),
        _ => Err(format!("'{s}' is not a number from {lo} to {hi}")),
    }
}

fn tolerance(s: &str) -> Result<f64, String> {
    number(s, 0.0, 100.0, true)
}

/// Run the AutoNUMA benchmark (numa01, numa02 and their variants).
///
/// Run the AutoNUMA benchmark: numa01, numa01_THREAD_ALLOC, numa02,
/// numa02_SMT and numa01_PER_NODE, with the memory of the test on each node
/// over time, each between its best and worst placement.
///
/// numa01: 2 processes x nr_cpus/2 threads, 3 GiB per process shared by its
/// threads; numa01_THREAD_ALLOC: the same, each thread with its own part;
/// numa02: 1 process x nr_cpus threads, 1 GiB split over them; numa02_SMT:
/// the same with nr_cpus/2 threads (the kernel should then use one
/// hardware thread per core); numa01_PER_NODE: nr_nodes processes x
/// nr_cpus/nr_nodes threads, as numa01 otherwise. nr_cpus is the CPUs this
/// process may use, nr_nodes the nodes they are on.
///
/// Before each test, on a machine with two nodes with memory or more, the
/// benchmark's baselines run the same work bound: HARD_BIND (threads and
/// memory on the same node) and INVERSE_BIND (memory on the node farthest
/// from the threads); the test's result is then given as a position from
/// inverse (0%) to hard bind (100%).
/// All memory is written first from the CPUs of node 0 (or of the first
/// node this process may use), bound to that node; the binding is then
/// dropped, so only the kernel moves it. Every thread
/// clears its memory with memset, loop after loop; the time to finish is
/// the result (lower is better). At every look the memory per node is
/// estimated from the node of a sample of the test's pages (move_pages on
/// the mappings listed in /proc/PID/maps), or counted from
/// /proc/PID/numa_maps with --exact (and where the memory holds no more
/// than 4 times --sample-pages); where the threads run is read from
/// /proc/PID/task/TID/stat. --secs makes each test work for that long
/// instead of a fixed number of passes (--loops).
///
/// The text comes as each test ends; with another format (--json, --csv,
/// ...) it goes to stderr and stdout gets the results in that format.
#[derive(clap::Args, Debug)]
pub struct AutonumaArgs {
    /// numa01, numa01_THREAD_ALLOC, numa02, numa02_SMT, numa01_PER_NODE or
    /// all.
    #[arg(value_name = "TEST", default_value = "all", value_parser = tests)]
    pub tests: Selection,
    /// Threads per process (T) for every test (1 to 4096).
    ///
    /// Threads per process (T) for every test instead of the benchmark's
    /// (1 to 4096); the slides suggest nr_cpus/4 and fewer.
    #[arg(long, value_name = "T", value_parser = threads)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub runs: RunsArgs,
    /// Passes each thread makes over its memory [default: as many as make
    /// each thread clear 64 GiB].
    #[arg(long, value_name = "N", value_parser = count32, conflicts_with = "secs")]
    pub loops: Option<u32>,
    #[command(flatten)]
    pub watch: WatchArgs,
    /// Memory per process (M) in MiB.
    ///
    /// Memory per process (M) in MiB, instead of the benchmark's 3072 or
    /// 1024 [default: those, scaled down to at most 50% of the start node's
    /// free memory].
    #[arg(long, value_name = "MIB", value_parser = mebibytes)]
    pub mem: Option<u64>,
    /// Convergence threshold: a node within PCT percent of its share.
    ///
    /// A node holding its share of the test's memory (the total over the
    /// nodes the test may use) within PCT percent of that share counts as
    /// converged (above 0, up to 100).
    #[arg(long, value_name = "PCT", default_value_t = 10.0, value_parser = tolerance)]
    pub converged_within: f64,
    /// Count every page at each look instead of sampling.
    ///
    /// Count every page from /proc/PID/numa_maps at each look instead of
    /// sampling, and record the memory policies of the test's mappings: a
    /// walk of all the test's page tables per look (some 10 ms per GiB of
    /// 4 KiB pages).
    #[arg(long, conflicts_with = "sample_pages")]
    pub exact: bool,
    /// Write each run's chart and series into DIR.
    ///
    /// Write each run's chart (TEST-runN.svg) and series (TEST-runN.csv)
    /// into DIR (created if missing; its parent must exist).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub save: SaveArgs,
}

fn check_out_dir(dir: &Path) -> Result<()> {
    crate::results::check_output_dir(dir, "--out")
}

/// A run's chart (SVG) and looks (CSV) in `dir`.
fn write_files(dir: &Path, files: &RunFiles) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    if let Some(chart) = &files.chart {
        let svg = crate::output::svg::render(chart);
        write_output(&dir.join(format!("{}.svg", files.stem)), svg.as_bytes())?;
    }
    write_output(
        &dir.join(format!("{}.csv", files.stem)),
        files.csv.as_bytes(),
    )?;
    Ok(())
}

fn settings(args: &AutonumaArgs) -> Settings {
    Settings {
        interval: args.watch.interval(),
        tolerance_pct: args.converged_within,
        method: if args.exact {
            Method::Exact
        } else {
            Method::Sampled {
                max_pages: args.watch.sample_pages,
            }
        },
    }
}

pub(super) fn run(args: AutonumaArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    args.save.check()?;
    if let Some(dir) = &args.out {
        check_out_dir(dir)?;
    }
    let asked = Asked {
        mem_mib: args.mem,
        loops: args.loops,
        secs: args.watch.secs,
        threads: args.threads,
    };
    let job = Job::new(
        &topo,
        &args.tests.0,
        &asked,
        args.runs.runs.unwrap_or(1),
        settings(&args),
        !args.watch.no_baselines,
    )?;
    // The text comes as the runs end; another format is the document's.
    let format = args.format.or_default(Format::Text);
    let sink = Sink {
        to_stderr: format != Format::Text,
    };
    let ended = job.run(&topo, &mut |t| sink.put(t), &mut |files| match &args.out {
        Some(dir) => write_files(dir, files),
        None => Ok(()),
    })?;
    if let Some(dir) = &args.out {
        sink.put(&format!(
            "charts (SVG) and series (CSV) of each run in {}\n",
            dir.display()
        ));
    }
    finish(ended, &args.save, format)
}

/// Saves and prints the document; a cut run's document is kept incomplete
/// and ends the command as the signal or the failure would.
fn finish(mut ended: Ended, save: &SaveArgs, format: Format) -> Result<()> {
    if ended.interrupted.is_none() && ended.failed.is_none() {
        ended.doc.finish();
    }
    save.save(&ended.doc)?;
    if format != Format::Text {
        emit(&ended.doc, format)?;
    }
    if let Some(sig) = ended.interrupted {
        super::exit_interrupted(sig);
    }
    match ended.failed {
        Some(why) => Err(anyhow!(
            "{why}{}",
            if save.save.is_some() {
                "; what was measured before is saved, marked incomplete"
            } else {
                ""
            }
        )),
        None => Ok(()),
    }
}
