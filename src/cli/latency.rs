//! `numabench latency`: idle latency per (CPU node, memory node) for each
//! access pattern and page kind.

use super::chase;
use super::output::{FormatArgs, SaveArgs, finish_probe};
use crate::error::usage;
use crate::memory::admission::admit_each;
use crate::output::render::Format;
use crate::probes::latency::{self, LatencyConfig, records};
use crate::results::Document;
use crate::results::names::probe;
use crate::topology::{SysfsRoot, read_topology};
use anyhow::Result;

/// Measure idle (unloaded) memory latency from every CPU node to every
/// memory node with a pointer chase, per access pattern and page kind:
/// full-random (one random cycle through the whole buffer, page walks
/// included), page-local (random within a window, each window done before
/// the next, in random order, as multichase's default: memory latency
/// without page walks) and
/// stride (lat_mem_rd style, a stride sweep). One thread, pinned and
/// checked; the buffer bound to the memory node, its pages verified.
#[derive(clap::Args, Debug)]
pub struct LatencyArgs {
    /// Chase buffer, e.g. 1G or 256M (at least 1M); admitted against each
    /// memory node's free memory before anything is mapped.
    /// [default: 1G, or half of what the memory node or the process's
    /// memory limit leaves where that is less, said in a note]
    #[arg(short = 's', long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Access patterns, comma-separated or repeated: full-random,
    /// page-local, stride.
    #[arg(
        long,
        value_name = "PATTERN",
        value_delimiter = ',',
        default_value = "full-random,page-local"
    )]
    pub pattern: Vec<String>,
    /// The page-local window (multichase -T).
    #[arg(long, value_name = "SIZE", default_value = "256K")]
    pub window: String,
    /// Strides for --pattern stride, in bytes, comma-separated [default:
    /// 64,128,256,512,1024,2048,4096].
    #[arg(long, value_name = "BYTES", value_delimiter = ',')]
    pub stride: Vec<String>,
    /// Page kinds, comma-separated: base, thp, auto (hugetlb, else THP,
    /// else base), hugetlb or hugetlb:SIZE (falls back to THP when the
    /// pool is empty; the record says which was used).
    #[arg(
        long,
        value_name = "KIND",
        value_delimiter = ',',
        default_value = "base,thp"
    )]
    pub pages: Vec<String>,
    /// Only these CPU nodes as rows, e.g. 0,2-3.
    #[arg(long, value_name = "NODES")]
    pub cpu_nodes: Option<String>,
    /// Only these memory nodes as columns.
    #[arg(long, value_name = "NODES")]
    pub mem_nodes: Option<String>,
    /// Stop starting new measurements after SECONDS (0 = no limit, at most
    /// 604800, a week).
    #[arg(
        short = 't',
        long = "time-limit",
        value_name = "SECONDS",
        default_value_t = 0.0,
        value_parser = super::units::time_limit,
        allow_negative_numbers = true
    )]
    pub time_limit: f64,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub save: SaveArgs,
    /// Show each measurement on stderr as it starts.
    #[arg(short = 'v', long)]
    pub verbose: bool,
}

fn config(args: &LatencyArgs) -> Result<LatencyConfig> {
    let patterns = chase::patterns(&args.pattern, &args.window, &args.stride)?;
    let pages = chase::pages(&args.pages)?;
    if patterns.is_empty() || pages.is_empty() {
        return Err(usage("--pattern and --pages each need at least one value"));
    }
    let size = chase::buffer_or_default(&args.size)?;
    for p in &patterns {
        chase::fits(p, size)?;
    }
    Ok(LatencyConfig {
        size,
        patterns,
        pages,
        cpu_nodes: super::select::optional_node_list(&args.cpu_nodes, "--cpu-nodes")?,
        mem_nodes: super::select::optional_node_list(&args.mem_nodes, "--mem-nodes")?,
        time_limit: super::units::limit(args.time_limit),
    })
}

pub fn run(args: LatencyArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    let mut cfg = config(&args)?;
    chase::check_nodes(&topo, &cfg.cpu_nodes, &cfg.mem_nodes)?;
    let mem_nodes = crate::probes::seats::nodes(topo.usable_memory_nodes(), &cfg.mem_nodes);
    let mut sized = None;
    if args.size.is_none() {
        let (size, note) = chase::default_buffer(&topo, &mem_nodes)?;
        cfg.size = size;
        sized = note;
        for p in &cfg.patterns {
            chase::fits(p, cfg.size)?;
        }
    }
    admit_each(
        &topo,
        cfg.size as u64,
        &mem_nodes,
        &chase::size_shown(&args.size, cfg.size),
        "give a smaller --size",
    )?;
    args.save.check()?;
    let format = args.format.chosen().unwrap_or(Format::Text);
    let mut doc = Document::new(&topo);
    let measured = {
        let progress = crate::progress::Progress::new(args.verbose);
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
    if let (Some(note), Some(first)) = (sized, doc.records.first_mut()) {
        first.notes.push(note);
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
