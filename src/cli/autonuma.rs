//! `numabench autonuma`: the AutoNUMA benchmark's four tests with memory
//! per node over time, all memory starting on one node.

use crate::output::autonuma as out;
use crate::probes::autonuma::bench::{self, Asked, Plan, Test};
use crate::probes::autonuma::watch::{DEFAULT_SAMPLE_PAGES, Method};
use crate::probes::autonuma::{self, Outcome, Settings};
use crate::probes::mem::tasks::cpu0_target;
use crate::results::{Document, write_output};
use crate::topology::{SysfsRoot, read_topology};
use anyhow::{Context, Result, anyhow};
use std::io::{IsTerminal, Write};
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
            format!("'{s}' is not a test (numa01, numa01_THREAD_ALLOC, numa02, numa02_SMT or all)")
        })
}

fn whole(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a whole number from {lo} to {hi}")),
    }
}

fn runs(s: &str) -> Result<usize, String> {
    whole(s, 1, 1000).map(|v| v as usize)
}

fn count32(s: &str) -> Result<u32, String> {
    whole(s, 1, u64::from(u32::MAX)).map(|v| v as u32)
}

fn seconds(s: &str) -> Result<u32, String> {
    whole(s, 1, 7 * 86_400).map(|v| v as u32)
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

fn interval(s: &str) -> Result<f64, String> {
    super::units::time(s, 0.01, 60.0, "seconds")
}

fn tolerance(s: &str) -> Result<f64, String> {
    number(s, 0.0, 100.0, true)
}

fn sample_pages(s: &str) -> Result<usize, String> {
    whole(s, 16, 1 << 24).map(|v| v as usize)
}

/// Run the AutoNUMA benchmark: numa01, numa01_THREAD_ALLOC, numa02 and
/// numa02_SMT, with the memory of the test on each node over time.
///
/// numa01: 2 processes x nr_cpus/2 threads, 3 GiB per process shared by its
/// threads; numa01_THREAD_ALLOC: the same, each thread with its own part;
/// numa02: 1 process x nr_cpus threads, 1 GiB split over them; numa02_SMT:
/// the same with nr_cpus/2 threads (the kernel should then use one
/// hardware thread per core). nr_cpus is the CPUs this process may use.
/// All memory is written first from the CPUs of node 0 (or of the first
/// node this process may use), bound to that node; the binding is then
/// dropped, so only the kernel moves it. Every thread
/// clears its memory with memset, loop after loop; the time to finish is
/// the result (lower is better). At every look the memory per node is
/// estimated from the node of a sample of the test's pages (move_pages on
/// the mappings listed in /proc/PID/maps), or counted from
/// /proc/PID/numa_maps with --exact; where the threads run is read from
/// /proc/PID/task/TID/stat.
#[derive(clap::Args, Debug)]
pub struct AutonumaArgs {
    /// numa01, numa01_THREAD_ALLOC, numa02, numa02_SMT or all.
    #[arg(value_name = "TEST", default_value = "all", value_parser = tests)]
    pub tests: Selection,
    /// Runs of each test; several give the average and stddev of seconds.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = runs)]
    pub runs: usize,
    /// Passes each thread makes over its memory [default: as many as make
    /// each thread clear 64 GiB].
    #[arg(long, value_name = "N", value_parser = count32, conflicts_with = "secs")]
    pub loops: Option<u32>,
    /// Work for SECS seconds instead of a fixed number of passes.
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub secs: Option<u32>,
    /// Memory per process (M) in MiB, instead of the benchmark's 3072 or
    /// 1024 [default: those, scaled down to at most 50% of the start node's
    /// free memory].
    #[arg(long, value_name = "MIB", value_parser = mebibytes)]
    pub mem: Option<u64>,
    /// Seconds between two looks at where the memory and threads are
    /// (0.01 to 60).
    #[arg(long, value_name = "SECS", default_value_t = 0.5, value_parser = interval)]
    pub interval: f64,
    /// Percent of its share a node may be off and still count as converged
    /// (above 0, up to 100).
    #[arg(long, value_name = "PCT", default_value_t = 10.0, value_parser = tolerance)]
    pub tolerance: f64,
    /// Pages whose node a look queries, spread evenly over all the test's
    /// memory, each counting for the pages around it; where the memory holds
    /// no more than 4 times that, every page is counted from numa_maps
    /// instead (16 to 16777216).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SAMPLE_PAGES, value_parser = sample_pages)]
    pub sample_pages: usize,
    /// Count every page from /proc/PID/numa_maps at each look instead of
    /// sampling, and record the memory policies of the test's mappings: a
    /// walk of all the test's page tables per look (some 10 ms per GiB of
    /// 4 KiB pages).
    #[arg(long, conflicts_with = "sample_pages")]
    pub exact: bool,
    /// Write each run's chart (TEST-runN.svg) and series (TEST-runN.csv)
    /// into DIR (created if missing; its parent must exist).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The results document (JSON) on stdout; the text goes to stderr.
    #[arg(long)]
    pub json: bool,
    /// Also write the results document to FILE.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
}

fn check_out_dir(dir: &Path) -> Result<()> {
    crate::results::check_output_dir(dir, "--out")
}

/// Text to stdout, or to stderr when stdout carries the JSON document.
struct Sink {
    to_stderr: bool,
}

impl Sink {
    fn put(&self, text: &str) {
        if self.to_stderr {
            crate::console::err(text);
        } else {
            crate::console::out(text);
        }
    }
}

fn write_files(dir: &Path, plan: &Plan, run: usize, o: &Outcome) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let stem = out::file_stem(plan.test, run);
    write_output(
        &dir.join(format!("{stem}.svg")),
        out::chart(plan, run, o).as_bytes(),
    )?;
    write_output(&dir.join(format!("{stem}.csv")), out::csv(o).as_bytes())?;
    Ok(())
}

/// A progress line on a terminal's stderr: where the memory is now.
fn progress(test: Test, run: usize, runs: usize, look: &autonuma::watch::Look) {
    let mem: Vec<String> = look
        .mem
        .iter()
        .map(|(n, b)| format!("node {n} {} MiB", b >> 20))
        .collect();
    let mut e = std::io::stderr().lock();
    let _ = write!(
        e,
        "\r\x1b[K{} run {run}/{runs}: {:.1} s, {}",
        test.name(),
        look.t,
        mem.join(", ")
    );
    let _ = e.flush();
}

pub fn run(args: AutonumaArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    if let Some(path) = &args.save {
        super::check_output_path(path, "--save")?;
    }
    if let Some(dir) = &args.out {
        check_out_dir(dir)?;
    }
    let nr_cpus = topo.allowed.cpus.intersection(&topo.cpus_online).len();
    let (_, start_node) =
        cpu0_target(&topo).ok_or_else(|| anyhow!("this process may use no CPU of any node"))?;
    let asked = Asked {
        mem_mib: args.mem,
        loops: args.loops,
        secs: args.secs,
    };
    let free = topo.node_free_bytes(start_node);
    // Every plan first, so bad sizes are refused before any work.
    let plans: Vec<Plan> = args
        .tests
        .0
        .iter()
        .map(|&t| bench::plan(t, nr_cpus, start_node, free, &asked))
        .collect::<Result<_>>()?;
    let settings = Settings {
        interval: super::units::duration(args.interval),
        tolerance_pct: args.tolerance,
        method: if args.exact {
            Method::Exact
        } else {
            Method::Sampled {
                max_pages: args.sample_pages,
            }
        },
    };
    let sink = Sink {
        to_stderr: args.json,
    };
    let cpu_nodes: Vec<usize> = topo.usable_cpu_nodes().iter().collect();
    sink.put(&out::header(
        nr_cpus,
        &cpu_nodes,
        start_node,
        topo.numa_balancing,
        &settings,
    ));
    let tty = std::io::stderr().is_terminal();
    let mut doc = Document::new(&topo);
    let mut results: Vec<(Plan, Vec<Outcome>)> = Vec::new();
    let mut interrupted = None;
    let mut failed = None;
    'tests: for plan in plans {
        sink.put(&out::intro(&plan));
        let mut outcomes = Vec::new();
        for run in 1..=args.runs {
            let mut on_look = |l: &autonuma::watch::Look| {
                if tty {
                    progress(plan.test, run, args.runs, l);
                }
            };
            let o = autonuma::run(&plan, &topo, &settings, &mut on_look);
            if tty {
                eprint!("\r\x1b[K");
            }
            let o = o.with_context(|| format!("{} run {run}", plan.test.name()))?;
            doc.records.push(out::record(&plan, run, &o, &settings));
            if let Some(dir) = &args.out {
                write_files(dir, &plan, run, &o)?;
            }
            let sig = o.interrupted;
            let died = o.failed.clone();
            outcomes.push(o);
            if sig.is_some() || died.is_some() {
                interrupted = sig;
                failed = died;
                sink.put(&out::runs_table(&plan, &outcomes, &settings));
                results.push((plan, outcomes));
                break 'tests;
            }
        }
        sink.put(&out::runs_table(&plan, &outcomes, &settings));
        doc.records.push(out::summary_record(&plan, &outcomes));
        results.push((plan, outcomes));
    }
    if results.len() > 1 || interrupted.is_some() || failed.is_some() {
        sink.put(&out::summary(&results));
    }
    if let Some(dir) = &args.out {
        sink.put(&format!(
            "charts (SVG) and series (CSV) of each run in {}\n",
            dir.display()
        ));
    }
    super::finish_document(
        &mut doc,
        args.save.as_deref(),
        args.json,
        interrupted,
        failed,
    )
}
