//! `numabench matrix`: node x node bandwidth (one thread and saturated) and
//! idle latency, with bandwidth classes and the model's parameters.

use super::args::{
    ChaseArgs, GammaArgs, HugeArgs, LimitArgs, NodeArgs, RunsArgs, SizeArgs, TriesArgs,
    VerboseArgs, check_nodes,
};
use super::output::{emit_then_fail, mark_end};
use super::select;
use super::units::size_at_least;
use crate::error::usage;
use crate::kernels::{self, KernelSpec, Mix, Op, Store};
use crate::output::render::Format;
use crate::probes::matrix::{self, MatrixConfig};
use crate::probes::measure::Timing;
use crate::results::names::probe;
use crate::results::{Condition, Document};

use anyhow::Result;

/// Measure bandwidth and latency from every CPU node to every memory node.
///
/// Measure bandwidth and latency from every CPU node to every memory node:
/// one thread, threads added core by core until bandwidth stops growing,
/// and a pointer chase; memory bound to the target node and verified.
///
/// A cell's working set (--size) is 4x the L3 of the CPU node unless
/// given, at least 64 MiB, at most half the memory node's free memory.
#[derive(clap::Args, Debug)]
pub struct MatrixArgs {
    /// Bandwidth kernel: an operation such as triad, or a variant name.
    ///
    /// Bandwidth kernel: an operation (read, write, copy, scale, add, triad,
    /// add3) or a variant name such as triad_nt_avx512 (see `numabench
    /// sweep --list-kernels`).
    #[arg(short = 'k', long, value_name = "KERNEL", default_value = "triad")]
    pub kernel: String,
    #[command(flatten)]
    pub size: SizeArgs,
    /// Pointer-chase buffer for latency, e.g. 1G.
    ///
    /// Pointer-chase buffer for latency, e.g. 1G [default: 16x the L3 of the
    /// CPU node, at least 1 GiB, at most half the memory node's free memory];
    /// huge pages where the system has them.
    #[arg(long, value_name = "SIZE", value_parser = super::units::size_with_unit)]
    pub latency_size: Option<String>,
    #[command(flatten)]
    pub tries: TriesArgs,
    #[command(flatten)]
    pub limit: LimitArgs,
    /// Skip the saturated (thread-scaling) bandwidth.
    #[arg(long)]
    pub no_saturated: bool,
    /// How the saturated bandwidth is found: search, full or by-class.
    ///
    /// How the saturated bandwidth is found: search (doubling the threads,
    /// then halving the gaps beside the best: about ten measurements on a
    /// node of 64 cores) or full (every thread count from one until two
    /// steps gain under 1%, the thesis' curve) or by-class (the search once
    /// per CPU node and SLIT distance, the class's other cells measured at
    /// one thread and the knee found: a large machine's plan).
    ///
    /// Nodes of 8
    /// cores or fewer are walked in full.
    #[arg(long, value_name = "HOW", default_value = "search", value_parser = ["search", "full", "by-class"])]
    pub scaling: String,
    /// Skip the idle latency.
    #[arg(long)]
    pub no_latency: bool,
    #[command(flatten)]
    pub chase: ChaseArgs,
    /// Pages of the latency chase: auto, base, thp, hugetlb or hugetlb:SIZE.
    ///
    /// Pages of the latency chase: auto (hugetlb, else THP, else base),
    /// base, thp, hugetlb or hugetlb:SIZE (falls back to THP when the pool
    /// is empty; each cell's record says which was used).
    #[arg(long, value_name = "KIND", default_value = "auto")]
    pub latency_pages: String,
    /// Skip the peak cell (every read/write mix from all the node's cores).
    ///
    /// Skip the peak cell (every read/write mix with regular and
    /// non-temporal stores from all the CPU node's cores, the best named).
    #[arg(long)]
    pub no_peak: bool,
    /// Mixes of the peak cell, comma-separated: read, 3:1, 2:1, 1:1,
    /// write, triad [default: all six].
    #[arg(long, value_name = "LIST")]
    pub peak_mix: Option<String>,
    #[command(flatten)]
    pub huge: HugeArgs,
    #[command(flatten)]
    pub nodes: NodeArgs,
    /// Instead of the matrix: single-thread bandwidth of every core of NODE.
    ///
    /// Instead of the matrix: single-thread bandwidth from every core of
    /// CPU node NODE to memory node MEM (default: NODE itself), with mean,
    /// standard deviation, 95% confidence interval and whether the cores
    /// are equivalent.
    ///
    /// With --runs N each core is measured N times (2 or
    /// more), each with fresh arrays, a warm-up and the best of --tries
    /// timed runs: a row per core with the mean, standard deviation, 95%
    /// confidence interval of the mean (Student's t), min and max of its
    /// runs (the thesis' Table 3.2 used 30).
    #[arg(long, value_name = "NODE[:MEM]")]
    pub per_core: Option<String>,
    #[command(flatten)]
    pub runs: RunsArgs,
    #[command(flatten)]
    pub peak: GammaArgs,
    #[command(flatten)]
    pub classes: super::classes::ClassArgs,
    #[command(flatten)]
    pub format: super::output::FormatArgs,
    #[command(flatten)]
    pub save: super::output::SaveArgs,
    #[command(flatten)]
    pub verbose: VerboseArgs,
    #[command(flatten)]
    pub planning: super::args::PlanArgs,
}

/// A kernel by operation (the fastest regular-store variant) or by name.
pub(super) fn pick_kernel(name: &str) -> Result<&'static KernelSpec> {
    if let Ok(op) = name.parse::<Op>() {
        return kernels::best(op, Store::Regular)
            .ok_or_else(|| anyhow::anyhow!("no {op} kernel runs on this CPU"));
    }
    match kernels::find(name) {
        Some(k) if k.is_available() => Ok(k),
        Some(k) => Err(usage(format!(
            "--kernel {name}: this CPU lacks {} (see 'numabench sweep --list-kernels')",
            k.isa
        ))),
        None => Err(usage(format!(
            "--kernel {name}: not an operation (read, write, copy, scale, add, triad, add3) or a kernel name (see 'numabench sweep --list-kernels')"
        ))),
    }
}

fn latency_size(text: &Option<String>, flag: &str) -> Result<Option<usize>> {
    text.as_deref()
        .map(|t| size_at_least(t, 1 << 20).map_err(|e| usage(format!("{flag} {t}: {e}"))))
        .transpose()
}

/// Options that would be silently ignored in the combination given.
fn check_combination(args: &MatrixArgs) -> Result<()> {
    if args.per_core.is_some() {
        for (given, flag) in [
            (args.nodes.cpu_nodes.is_some(), "--cpu-nodes"),
            (args.nodes.mem.mem_nodes.is_some(), "--mem-nodes"),
            (args.latency_size.is_some(), "--latency-size"),
            (args.no_saturated, "--no-saturated"),
            (args.no_latency, "--no-latency"),
            (args.no_peak, "--no-peak"),
            (args.peak_mix.is_some(), "--peak-mix"),
            (args.classes.tolerance.is_some(), "--tolerance"),
            (args.classes.merge_close_classes, "--merge-close-classes"),
        ] {
            if given {
                return Err(usage(format!(
                    "{flag} applies to the matrix; --per-core measures one thread from each core of NODE to MEM only: leave {flag} out (name the nodes as --per-core NODE:MEM)"
                )));
            }
        }
    }
    if let Some(n) = args.runs.runs {
        if args.per_core.is_none() {
            return Err(usage(format!(
                "--runs {n} repeats each core's measurement of --per-core; the matrix takes the best of --tries: add --per-core NODE[:MEM] or leave --runs out"
            )));
        }
        if n < 2 {
            return Err(usage(format!(
                "--runs {n}: give 2 to {} runs per core (a standard deviation needs two)",
                crate::units::MAX_TRIES
            )));
        }
    }
    if args.no_peak && args.peak_mix.is_some() {
        return Err(usage(
            "--peak-mix with --no-peak: no peak cell is measured; leave one of them out",
        ));
    }
    if args.no_latency && args.latency_size.is_some() {
        return Err(usage(
            "--latency-size with --no-latency: no latency is measured; leave one of them out",
        ));
    }
    if args.format.chosen() == Some(Format::Json) && args.peak.peak.is_some() {
        return Err(usage(
            "--peak sets Gamma for the tables, and --json writes the measurements only: leave --peak out, or give it to 'numabench model FILE --peak' on the saved file",
        ));
    }
    Ok(())
}

/// The peak cell's mixes: none with --no-peak, else those of --peak-mix
/// or all.
fn peak_mixes(args: &MatrixArgs) -> Result<Vec<Mix>> {
    if args.no_peak {
        return Ok(Vec::new());
    }
    match &args.peak_mix {
        None => Ok(Mix::ALL.to_vec()),
        Some(text) => super::peak::mixes(text, "--peak-mix"),
    }
}

fn config(args: &MatrixArgs) -> Result<MatrixConfig> {
    check_combination(args)?;
    super::units::tries(args.tries.tries, "--tries", "timed run")?;
    if let Some(p) = args.peak.peak {
        super::units::peak(p, "--peak")?;
    }
    Ok(MatrixConfig::new()?
        .kernel(pick_kernel(&args.kernel)?)
        .working_set(args.size.at_least(1 << 20)?)
        .latency_bytes(latency_size(&args.latency_size, "--latency-size")?)
        .timing(Timing {
            tries: args.tries.tries,
            ..Timing::default()
        })
        .measure(true, !args.no_saturated, !args.no_latency)
        .full_scaling(args.scaling == "full")
        .knee_by_class(args.scaling == "by-class")
        .huge(args.huge.huge)
        .latency_pages(super::chase::page_kind(
            &args.latency_pages,
            "--latency-pages",
        )?)
        .pattern(args.chase.one(64)?)
        .peak(peak_mixes(args)?)
        .time_limit(args.limit.limit())
        .nodes(args.nodes.cpu()?, args.nodes.mem()?))
}

fn parse_per_core(text: &str, topo: &crate::topology::Topology) -> Result<(usize, usize)> {
    let bad = || {
        usage(format!(
            "--per-core {text}: write NODE or NODE:MEM, e.g. 0 or 0:1"
        ))
    };
    let (c, m) = match text.split_once(':') {
        Some((c, m)) => (c, Some(m)),
        None => (text, None),
    };
    let c: usize = c.trim().parse().map_err(|_| bad())?;
    let m: usize = match m {
        Some(m) => m.trim().parse().map_err(|_| bad())?,
        None => crate::probes::seats::memory_node_for(topo, c),
    };
    // Name what the user wrote, not the number parsed out of it.
    let reword = |e: anyhow::Error| {
        let msg = e.to_string();
        let why = msg
            .split_once(": ")
            .map_or(msg.as_str(), |x| x.1)
            .to_string();
        usage(format!("--per-core {text}: {why}"))
    };
    select::cpu_node(topo, c, "--per-core").map_err(reword)?;
    select::memory_node(topo, m, "--per-core").map_err(reword)?;
    Ok((c, m))
}

pub(super) fn run(args: MatrixArgs) -> Result<()> {
    let topo = args.planning.topology()?;
    let cfg = config(&args)?;
    let classes = args.classes.options()?;
    check_nodes(&topo, &cfg.cpu_nodes, &cfg.mem_nodes)?;
    if args.planning.print(
        crate::results::names::probe::MATRIX,
        &topo,
        &matrix::estimate(&topo, &cfg),
    ) {
        return Ok(());
    }
    let per_core = args
        .per_core
        .as_deref()
        .map(|t| parse_per_core(t, &topo))
        .transpose()?;
    args.save.check()?;
    let format = args.format.chosen().unwrap_or(Format::Text);
    let mut doc = Document::new(&topo);
    let progress = crate::progress::Progress::new(args.verbose.verbose);
    let mut step = |what: &str| progress.step(what);
    let result = match per_core {
        Some((c, m)) => matrix::per_core(&topo, &cfg, c, m, args.runs.runs, &mut step)
            .map(|p| (p.records(), Vec::new(), Vec::new(), None)),
        None => matrix::run(&topo, &cfg, &mut step)
            .map(|m| (m.records(), m.notes, m.conditions, m.failed)),
    };
    drop(progress);
    let (records, notes, conditions, failed) = result?;
    let interrupted = crate::interrupt::requested();
    if records.is_empty() && interrupted.is_none() {
        // As sweep: a run that measured nothing (a time limit shorter than
        // one measurement) is not a result.
        let why = if notes.is_empty() {
            "no cell was measured".to_string()
        } else {
            notes.join("; ")
        };
        return Err(usage(format!(
            "nothing was measured: {why}; give a longer --time-limit"
        )));
    }
    doc.records = records;
    if per_core.is_none() {
        matrix::add_peak(&mut doc.records, &topo);
        doc.records.push(matrix::class_rule_record(&classes));
    }
    // A cell the time limit cut short leaves the matrix incomplete.
    let complete = !conditions.iter().any(Condition::is_time_limit);
    mark_end(
        &mut doc,
        probe::MATRIX,
        interrupted,
        failed.as_deref(),
        complete,
    );
    args.save.save(&doc)?;
    let shown = shown(&doc, args.peak.peak);
    emit_then_fail(
        &shown,
        format,
        interrupted,
        failed.as_deref(),
        args.save.save.is_some(),
    )
}

/// The document as shown: with `--peak`, Gamma as given replaces the
/// recorded one (the saved document keeps what was measured).
fn shown(doc: &Document, peak: Option<f64>) -> Document {
    let mut out = doc.clone();
    if let Some(mb_s) = peak {
        matrix::give_peak(&mut out.records, mb_s);
    }
    out
}
