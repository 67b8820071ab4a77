//! The node-to-node matrix: for every CPU node this process may run on and
//! every memory node it may allocate from (memory-only nodes included),
//! single-thread bandwidth, saturated bandwidth with its thread-scaling
//! curve, and idle latency. `--per-core` measures every core of one node
//! against one memory node, to check that a node's cores are equivalent.

//!
//! `mod.rs` measures; `records.rs` turns the measurements into records;
//! `view.rs` shows the records in every format.

mod column;
mod grids;
mod part;
mod percore;
mod records;
mod scaling;
pub(crate) mod view;

pub(crate) use column::Builds;
pub(crate) use percore::{CoreRuns, EQUIVALENT_PCT, PerCore, per_core};
pub(crate) use records::{add_peak, class_rule_record, give_peak};
pub(crate) use part::estimate;
pub(crate) use view::MatrixView;

use super::measure::{Bandwidth, Latency, Timing};
use super::seats::node_cpus;
use super::sizing::{cap, chase_bytes, limit_condition, llc_bytes};
use super::team::Seat;
use column::{Bench, Column, Ctx, Live, Row};
use crate::ids::NodeSet;
use crate::kernels::pattern::Pattern;
use crate::kernels::{KernelSpec, Mix, Op, Store};
use crate::memory::PageKind;
use crate::results::Condition;
use crate::topology::Topology;
use anyhow::{Result, bail};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub(crate) struct MatrixConfig {
    pub kernel: &'static KernelSpec,
    /// All threads' arrays together, in bytes; `None` derives it from the
    /// caches (4x the L3 the CPU node's threads share, at least 64 MiB).
    pub working_set: Option<usize>,
    /// Pointer-chase buffer; `None` for 16x L3, at least 1 GiB
    /// ([`super::sizing::chase_bytes`]).
    pub latency_bytes: Option<usize>,
    pub timing: Timing,
    pub single: bool,
    pub saturated: bool,
    /// The saturated curve at every thread count (the thesis' figure)
    /// instead of a search on nodes of more than
    /// [`scaling::SEARCH_ABOVE`] cores.
    pub full_scaling: bool,
    /// The saturation scan once per CPU node and distance class; the
    /// class's other cells measured at one thread and at the knee found
    /// (a large machine's plan; `--scaling by-class`).
    pub knee_by_class: bool,
    /// The idle latency of these cells only (a run trimmed to its budget:
    /// the pairs the per-pair probes sample); `None` for every cell.
    pub latency_cells: Option<Vec<(usize, usize)>>,
    pub latency: bool,
    /// Huge pages for bandwidth arrays.
    pub huge: bool,
    /// The latency chase's access pattern.
    pub pattern: Pattern,
    /// The latency chase's pages (default: the best the system has).
    pub latency_pages: PageKind,
    /// Stop starting measurements after this long.
    pub time_limit: Option<Duration>,
    /// Restrict rows / columns.
    pub cpu_nodes: Option<NodeSet>,
    pub mem_nodes: Option<NodeSet>,
    /// The peak cell: these read/write mixes (empty: none) with both store
    /// kinds from all the CPU node's cores, the best kept and named (see
    /// `probes::peak`).
    pub peak: Vec<Mix>,
}

impl MatrixConfig {
    /// The whole matrix with the fastest regular-store triad: one thread,
    /// saturated and latency, working sets from the caches, no limit.
    pub(crate) fn new() -> Result<Self> {
        let kernel = crate::kernels::best(Op::Triad, Store::Regular)
            .ok_or_else(|| anyhow::anyhow!("no triad kernel runs on this CPU"))?;
        Ok(MatrixConfig {
            kernel,
            working_set: None,
            latency_bytes: None,
            timing: Timing::default(),
            single: true,
            saturated: true,
            full_scaling: false,
            knee_by_class: false,
            latency_cells: None,
            latency: true,
            huge: false,
            pattern: Pattern::FullRandom,
            latency_pages: PageKind::Auto,
            time_limit: None,
            cpu_nodes: None,
            mem_nodes: None,
            peak: Vec::new(),
        })
    }

    /// The whole thread-scaling curve, not a search.
    pub(crate) fn full_scaling(mut self, full: bool) -> Self {
        self.full_scaling = full;
        self
    }

    /// Whether the idle latency of the cell `(c, m)` is measured.
    pub(crate) fn wants_latency(&self, c: usize, m: usize) -> bool {
        self.latency && self.latency_cells.as_ref().is_none_or(|l| l.contains(&(c, m)))
    }

    /// The saturation scan once per CPU node and distance class.
    pub(crate) fn knee_by_class(mut self, by_class: bool) -> Self {
        self.knee_by_class = by_class;
        self
    }

    /// The mixes of the peak cell; none leaves it out.
    pub(crate) fn peak(mut self, peak: Vec<Mix>) -> Self {
        self.peak = peak;
        self
    }

    pub(crate) fn kernel(mut self, kernel: &'static KernelSpec) -> Self {
        self.kernel = kernel;
        self
    }

    pub(crate) fn working_set(mut self, bytes: Option<usize>) -> Self {
        self.working_set = bytes;
        self
    }

    pub(crate) fn latency_bytes(mut self, bytes: Option<usize>) -> Self {
        self.latency_bytes = bytes;
        self
    }

    /// The latency chase's pages.
    pub(crate) fn latency_pages(mut self, pages: PageKind) -> Self {
        self.latency_pages = pages;
        self
    }

    pub(crate) fn timing(mut self, timing: Timing) -> Self {
        self.timing = timing;
        self
    }

    /// Which of the three figures to measure.
    pub(crate) fn measure(mut self, single: bool, saturated: bool, latency: bool) -> Self {
        self.single = single;
        self.saturated = saturated;
        self.latency = latency;
        self
    }

    pub(crate) fn huge(mut self, huge: bool) -> Self {
        self.huge = huge;
        self
    }

    /// The latency chase's access pattern.
    pub(crate) fn pattern(mut self, pattern: Pattern) -> Self {
        self.pattern = pattern;
        self
    }

    pub(crate) fn time_limit(mut self, limit: Option<Duration>) -> Self {
        self.time_limit = limit;
        self
    }

    /// Only these rows (`cpu`) and columns (`mem`); `None` for all.
    pub(crate) fn nodes(mut self, cpu: Option<NodeSet>, mem: Option<NodeSet>) -> Self {
        self.cpu_nodes = cpu;
        self.mem_nodes = mem;
        self
    }
}

/// Thread-scaling from one CPU node to one memory node.
#[derive(Debug, Clone)]
pub(crate) struct Scaling {
    /// One measurement per thread count, 1, 2, 3, ...
    pub steps: Vec<Bandwidth>,
    /// Index into `steps` of the best.
    pub peak: usize,
    /// Why the scaling stopped.
    pub stop: String,
    /// The time limit, where it stopped the scaling before its end.
    pub cut: Option<Condition>,
}

impl Scaling {
    /// (threads, MB/s) for each step.
    pub(crate) fn curve(&self) -> Vec<(usize, f64)> {
        self.steps
            .iter()
            .map(|s| (s.threads, s.stream_mb_s()))
            .collect()
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Cell {
    pub cpu_node: usize,
    pub mem_node: usize,
    pub single: Option<Bandwidth>,
    pub saturated: Option<Scaling>,
    pub latency: Option<Latency>,
    pub peak: Option<PeakCell>,
}

impl Cell {
    /// Nothing measured yet.
    fn empty(cpu_node: usize, mem_node: usize) -> Cell {
        Cell {
            cpu_node,
            mem_node,
            single: None,
            saturated: None,
            latency: None,
            peak: None,
        }
    }

    /// Whether any figure of the cell was measured.
    fn measured(&self) -> bool {
        self.single.is_some()
            || self.saturated.is_some()
            || self.latency.is_some()
            || self.peak.is_some()
    }
}

/// The best read/write mix and store kind of a node pair with all the CPU
/// node's cores, and every candidate's figure.
#[derive(Debug, Clone)]
pub(crate) struct PeakCell {
    pub mix: Mix,
    pub best: Bandwidth,
    /// (mix, kernel name, MB/s) of every candidate measured.
    pub candidates: Vec<(Mix, &'static str, f64)>,
}

#[derive(Debug, Clone)]
pub(crate) struct Matrix {
    /// Row-major: one row per CPU node, one cell per memory node in it.
    pub cells: Vec<Cell>,
    /// The buffers each memory node's column built, by memory node.
    pub builds: Vec<(usize, Builds)>,
    pub notes: Vec<String>,
    /// What the notes say of a stop or a scaled buffer, as data.
    pub conditions: Vec<Condition>,
    /// A cell that failed after others were measured, which ended the run;
    /// those before it are kept.
    pub failed: Option<String>,
}

/// The working set of a node's threads: 4x the cache they share (STREAM's
/// rule), at least 64 MiB, at most half of the memory node's free memory.
pub(crate) fn working_set(
    topo: &Topology,
    cpus: &[usize],
    mem_node: usize,
) -> (usize, Option<String>) {
    let wanted = (4 * llc_bytes(topo, cpus) as usize).max(64 << 20);
    cap(topo, wanted, mem_node)
}

/// Sizes given by the user are measured as given, so each must fit on every
/// memory node it is placed on (one node's buffer is mapped at a time);
/// sizes worked out here are scaled down to fit instead.
pub(crate) fn admit_sizes(topo: &Topology, cfg: &MatrixConfig, mem_nodes: &[usize]) -> Result<()> {
    use crate::memory::admission::admit_each;
    if let Some(w) = cfg.working_set
        && (cfg.single || cfg.saturated)
    {
        admit_each(topo, w as u64, mem_nodes, "--size", "give a smaller --size")?;
    }
    if let Some(l) = cfg.latency_bytes
        && cfg.latency
    {
        admit_each(
            topo,
            l as u64,
            mem_nodes,
            "--latency-size",
            "give a smaller --latency-size",
        )?;
    }
    Ok(())
}

/// Measures the matrix.
pub(crate) fn run(
    topo: &Topology,
    cfg: &MatrixConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Matrix> {
    run_with(topo, cfg, &Live(cfg), progress)
}

/// [`run`] with `bench`'s buffers and measurements: column by column, each
/// memory node's buffers built once for every CPU node, the cells then put
/// back in row-major order.
fn run_with(
    topo: &Topology,
    cfg: &MatrixConfig,
    bench: &dyn Bench,
    progress: &mut dyn FnMut(&str),
) -> Result<Matrix> {
    let pick = |all: NodeSet, only: &Option<NodeSet>| -> Vec<usize> {
        all.iter()
            .filter(|n| only.as_ref().is_none_or(|o| o.contains(*n)))
            .collect()
    };
    let cpu_nodes = pick(topo.usable_cpu_nodes(), &cfg.cpu_nodes);
    let mem_nodes = pick(topo.usable_memory_nodes(), &cfg.mem_nodes);
    if cpu_nodes.is_empty() || mem_nodes.is_empty() {
        bail!(
            "no CPU node or no memory node left to measure (check --cpu-nodes, --mem-nodes and the cpuset)"
        );
    }
    admit_sizes(topo, cfg, &mem_nodes)?;
    let started = Instant::now();
    let out_of_time = || cfg.time_limit.is_some_and(|t| started.elapsed() >= t);
    let stop = || crate::interrupt::requested().is_some() || out_of_time();
    let (rows, mut notes, mut conditions) = plan(topo, cfg, &cpu_nodes, &mem_nodes);
    let distance = |c: usize, m: usize| topo.distance(c, m);
    let ctx = Ctx {
        cfg,
        bench,
        stop: &stop,
        distance: &distance,
        knees: Default::default(),
    };
    let mut cells = Vec::new();
    let mut builds = Vec::new();
    let mut skipped = 0usize;
    let mut failed = None;
    for (&m, rows) in mem_nodes.iter().zip(&rows) {
        let Column {
            cells: column,
            builds: built,
            failure,
        } = column::measure_column(&ctx, m, rows, progress);
        builds.push((m, built));
        if let Some(e) = failure {
            cells.extend(column.into_iter().filter(Cell::measured));
            if cells.is_empty() {
                return Err(e);
            }
            failed = Some(format!("{e:#}"));
            break;
        }
        let unmeasured = |cell: &&Cell| {
            (cfg.single && cell.single.is_none())
                || (cfg.wants_latency(cell.cpu_node, cell.mem_node) && cell.latency.is_none())
        };
        skipped += column.iter().filter(unmeasured).count();
        cells.extend(column);
    }
    // Row-major, as the rows and columns were listed.
    let at = |list: &[usize], n: usize| list.iter().position(|&x| x == n);
    cells.sort_by_key(|c| (at(&cpu_nodes, c.cpu_node), at(&mem_nodes, c.mem_node)));
    notes.extend(builds_note(&builds));
    if let Some((note, condition)) = stop_note(cfg, skipped) {
        notes.push(note);
        conditions.push(condition);
    }
    Ok(Matrix {
        cells,
        builds,
        notes,
        conditions,
        failed,
    })
}

/// Each column's rows with the sizes their cells want, one list per memory
/// node of `mem_nodes`, and the notes and conditions of sizes scaled to
/// fit, in the order a row-major walk meets them.
fn plan(
    topo: &Topology,
    cfg: &MatrixConfig,
    cpu_nodes: &[usize],
    mem_nodes: &[usize],
) -> (Vec<Vec<Row>>, Vec<String>, Vec<Condition>) {
    let mut notes = Vec::new();
    let mut conditions = Vec::new();
    let mut columns: Vec<Vec<Row>> = vec![Vec::new(); mem_nodes.len()];
    for &c in cpu_nodes {
        let cpus = node_cpus(topo, c);
        for (&m, column) in mem_nodes.iter().zip(&mut columns) {
            let (ws, note) = match cfg.working_set {
                Some(w) => (w, None),
                None => working_set(topo, &cpus, m),
            };
            let mut scaled = note.is_some();
            notes.extend(note.filter(|n| !notes.contains(n)));
            let chase = match cfg.latency_bytes {
                Some(s) => s,
                None => {
                    let (size, note) = cap(topo, chase_bytes(topo, cpus[0]), m);
                    scaled |= note.is_some();
                    let note = note.map(|n| n.replace("working set", "latency chase"));
                    notes.extend(note.filter(|n| !notes.contains(n)));
                    size
                }
            };
            let limit = limit_condition(topo, m).filter(|_| scaled);
            conditions.extend(limit.filter(|c| !conditions.contains(c)));
            column.push(Row {
                cpu_node: c,
                cpus: cpus.clone(),
                ws,
                chase,
            });
        }
    }
    (columns, notes, conditions)
}

/// How many buffers the columns built, in words; `None` when none was.
fn builds_note(builds: &[(usize, Builds)]) -> Option<String> {
    let total: usize = builds.iter().map(|(_, b)| b.total()).sum();
    if total == 0 {
        return None;
    }
    let columns = builds.len();
    let kind = |name: &str, n: usize| {
        if n.is_multiple_of(columns) {
            format!("{name} {} per memory node", n / columns)
        } else {
            format!("{name} {n} for {columns} memory nodes")
        }
    };
    let bandwidth: usize = builds.iter().map(|(_, b)| b.bandwidth).sum();
    let chase: usize = builds.iter().map(|(_, b)| b.chase).sum();
    Some(format!(
        "buffers built: {total} ({}, {})",
        kind("bandwidth", bandwidth),
        kind("chase", chase)
    ))
}

/// Pages for the bandwidth arrays: huge where asked, else base pages.
pub(crate) fn bandwidth_pages(cfg: &MatrixConfig) -> PageKind {
    if cfg.huge {
        PageKind::Auto
    } else {
        PageKind::Base
    }
}

/// Every mix with every store kind from all of `cpus` to memory node `m`;
/// the best kept. `None` when stopped before all were measured: a best of
/// some candidates would name a winner that is not one.
fn peak_cell(
    mixes: &[Mix],
    (cpus, m): (&[usize], usize),
    ws: usize,
    (pages, timing): (PageKind, Timing),
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<PeakCell>> {
    use super::peak;
    let (kernels, _) = peak::kernels_for(mixes, &[Store::Regular, Store::NonTemporal]);
    let seats: Vec<Seat> = cpus.iter().map(|&cpu| Seat { cpu, node: m }).collect();
    let runs = peak::measure_mixes(
        &seats,
        &peak::Target::Node(m),
        ws,
        &kernels,
        (pages, timing),
        stop,
        progress,
    )?;
    if runs.len() < kernels.len() {
        return Ok(None);
    }
    let candidates = runs
        .iter()
        .map(|(mix, b)| (*mix, b.kernel.name, b.stream_mb_s()))
        .collect();
    Ok(
        peak::best(&runs, |r| r.1.stream_mb_s()).map(|(mix, best)| PeakCell {
            mix: *mix,
            best: best.clone(),
            candidates,
        }),
    )
}

/// Why cells were left unmeasured, if any were: in words and as data.
fn stop_note(cfg: &MatrixConfig, skipped: usize) -> Option<(String, Condition)> {
    if let Some(sig) = crate::interrupt::requested() {
        Some((
            format!(
                "interrupted by {}: {skipped} cell(s) not fully measured",
                crate::interrupt::name(sig)
            ),
            Condition::CutBySignal { signal: sig },
        ))
    } else if skipped > 0
        && let Some(t) = cfg.time_limit
    {
        Some((
            format!(
                "time limit of {} s reached: {skipped} cell(s) not fully measured",
                t.as_secs_f64()
            ),
            Condition::time_limit(t),
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::sizing::array_bytes;
    use crate::topology::fixture;






    #[test]
    fn working_set_follows_the_shared_cache_and_free_memory() {
        let t = fixture("two-node");
        let cpus = node_cpus(&t, 0);
        let llc = llc_bytes(&t, &cpus);
        assert!(llc > 0);
        // One core sees the same shared L3 as the whole node.
        assert_eq!(llc_bytes(&t, &cpus[..1]), llc);
        let (ws, note) = working_set(&t, &cpus, 0);
        assert_eq!(ws, (4 * llc as usize).max(64 << 20));
        assert!(note.is_none());
        let mut small = t.clone();
        small.nodes[0].mem_free_bytes = Some(64 << 20);
        let (ws, note) = working_set(&small, &cpus, 0);
        assert_eq!(ws, 32 << 20);
        assert!(note.unwrap().contains("scaled down"));
    }

    #[test]
    fn arrays_share_the_working_set() {
        assert_eq!(array_bytes(96 << 20, 3, 1), 32 << 20);
        assert_eq!(array_bytes(96 << 20, 3, 2), 16 << 20);
        assert_eq!(array_bytes(100_000, 3, 7) % 4096, 0);
    }
}
