//! `numabench latency`: idle latency per (CPU node, memory node) for each
//! access pattern and page kind.

use super::args::{ChaseArgs, LimitArgs, NodeArgs, PagesArgs, SizeArgs, VerboseArgs, check_nodes};
use super::chase;
use super::output::{FormatArgs, SaveArgs, finish_probe};
use crate::error::usage;
use crate::memory::admission::admit_each;
use crate::output::render::Format;
use crate::probes::latency::{self, LatencyConfig, records};
use crate::results::Document;
use crate::results::names::probe;

use anyhow::Result;

/// Measure idle memory latency per node pair, access pattern and page kind.
///
/// Measure idle (unloaded) memory latency from every CPU node to every
/// memory node with a pointer chase, per access pattern and page kind:
/// full-random (one random cycle through the whole buffer, page walks
/// included), page-local (random within a window, each window done before
/// the next, in random order, as multichase's default: memory latency
/// without page walks) and
/// stride (lat_mem_rd style, a stride sweep).
///
/// One thread, pinned and
/// checked; the buffer bound to the memory node, its pages verified.
///
/// The chase buffer (--size, at least 1M) is 1 GiB unless given, or half
/// of what the memory node or the process's memory limit leaves where
/// that is less (said in a note); it is admitted against each memory
/// node's free memory before anything is mapped.
#[derive(clap::Args, Debug)]
#[command(
    mut_arg("pattern", |a| a.default_value("full-random,page-local")),
    mut_arg("pages", |a| a.default_value("base,thp"))
)]
pub struct LatencyArgs {
    #[command(flatten)]
    pub size: SizeArgs,
    #[command(flatten)]
    pub chase: ChaseArgs,
    #[command(flatten)]
    pub pages: PagesArgs,
    #[command(flatten)]
    pub nodes: NodeArgs,
    #[command(flatten)]
    pub limit: LimitArgs,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub save: SaveArgs,
    #[command(flatten)]
    pub verbose: VerboseArgs,
    #[command(flatten)]
    pub planning: super::args::PlanArgs,
    #[command(flatten)]
    pub sampling: super::args::PairSamplingArgs,
}

fn config(args: &LatencyArgs) -> Result<LatencyConfig> {
    let patterns = args.chase.all()?;
    let pages = args.pages.all()?;
    if patterns.is_empty() || pages.is_empty() {
        return Err(usage("--pattern and --pages each need at least one value"));
    }
    let size = chase::buffer_or_default(&args.size.size)?;
    for p in &patterns {
        chase::fits(p, size)?;
    }
    Ok(LatencyConfig {
        selection: args.sampling.selection(),
        size,
        patterns,
        pages,
        cpu_nodes: args.nodes.cpu()?,
        mem_nodes: args.nodes.mem()?,
        time_limit: args.limit.limit(),
    })
}

pub(super) fn run(args: LatencyArgs) -> Result<()> {
    let topo = args.planning.topology()?;
    let mut cfg = config(&args)?;
    check_nodes(&topo, &cfg.cpu_nodes, &cfg.mem_nodes)?;
    let mem_nodes = crate::probes::seats::nodes(topo.usable_memory_nodes(), &cfg.mem_nodes);
    let mut sized = None;
    if args.size.size.is_none() {
        let (size, note) = chase::default_buffer(&topo, &mem_nodes)?;
        cfg.size = size;
        sized = note;
        for p in &cfg.patterns {
            chase::fits(p, cfg.size)?;
        }
    }
    if args.planning.print(
        crate::results::names::probe::LATENCY,
        &topo,
        &latency::estimate(&topo, &cfg),
    ) {
        return Ok(());
    }
    admit_each(
        &topo,
        cfg.size as u64,
        &mem_nodes,
        &chase::size_shown(&args.size.size, cfg.size),
        "give a smaller --size",
    )?;
    args.save.check()?;
    let format = args.format.chosen().unwrap_or(Format::Text);
    let mut doc = Document::new(&topo);
    let measured = {
        let progress = crate::progress::Progress::new(args.verbose.verbose);
        latency::run(&topo, &cfg, &mut |what| progress.step(what))?
    };
    let interrupted = crate::interrupt::requested();
    if measured.cells.is_empty() && interrupted.is_none() {
        return Err(usage(format!(
            "nothing was measured: {}; give a longer --time-limit",
            measured.notes.join("; ")
        )));
    }
    doc.records = records::records(&measured);
    if let (Some((note, limit)), Some(first)) = (sized, doc.records.first_mut()) {
        first.notes.push(note);
        first.conditions.extend(limit);
    }
    finish_probe(
        &mut doc,
        probe::LATENCY,
        format,
        &args.save,
        measured.failed.as_deref(),
        measured.notes.is_empty(),
    )
}
