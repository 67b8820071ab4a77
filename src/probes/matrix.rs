//! The node-to-node matrix: for every CPU node this process may run on and
//! every memory node it may allocate from (memory-only nodes included),
//! single-thread bandwidth, saturated bandwidth with its thread-scaling
//! curve, and idle latency. `--per-core` measures every core of one node
//! against one memory node, to check that a node's cores are equivalent.

use super::measure::{self, Bandwidth, Latency, Timing};
use super::stats;
use super::team::Seat;
use crate::kernels::KernelSpec;
use crate::memory::PageKind;
use crate::placement::NodeSet;
use crate::results::{Better, Line, Placement, Record, Series};
use crate::topology::Topology;
use anyhow::{Result, bail};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct MatrixConfig {
    pub kernel: &'static KernelSpec,
    /// All threads' arrays together, in bytes; `None` derives it from the
    /// caches (4x the L3 the CPU node's threads share, at least 64 MiB).
    pub working_set: Option<usize>,
    /// Pointer-chase buffer; `None` for 4x L3, at least 256 MiB.
    pub latency_bytes: Option<usize>,
    pub timing: Timing,
    pub single: bool,
    pub saturated: bool,
    pub latency: bool,
    /// Huge pages for bandwidth arrays (latency always asks for them).
    pub huge: bool,
    /// Stop starting measurements after this long.
    pub time_limit: Option<Duration>,
    /// Restrict rows / columns.
    pub cpu_nodes: Option<NodeSet>,
    pub mem_nodes: Option<NodeSet>,
}

/// Bandwidth gain below which a thread-scaling step counts as flat.
pub const FLAT_GAIN: f64 = 0.01;
/// Flat steps in a row that end the scaling.
pub const FLAT_STEPS: usize = 2;

/// Thread-scaling from one CPU node to one memory node.
#[derive(Debug, Clone)]
pub struct Scaling {
    /// One measurement per thread count, 1, 2, 3, ...
    pub steps: Vec<Bandwidth>,
    /// Index into `steps` of the best.
    pub peak: usize,
    /// Why the scaling stopped.
    pub stop: String,
}

impl Scaling {
    pub fn peak_mb_s(&self) -> f64 {
        self.steps[self.peak].stream_mb_s()
    }

    pub fn peak_threads(&self) -> usize {
        self.steps[self.peak].threads
    }

    /// (threads, MB/s) for each step.
    pub fn curve(&self) -> Vec<(usize, f64)> {
        self.steps
            .iter()
            .map(|s| (s.threads, s.stream_mb_s()))
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub cpu_node: usize,
    pub mem_node: usize,
    pub single: Option<Bandwidth>,
    pub saturated: Option<Scaling>,
    pub latency: Option<Latency>,
}

#[derive(Debug, Clone)]
pub struct Matrix {
    pub kernel: &'static KernelSpec,
    pub cpu_nodes: Vec<usize>,
    pub mem_nodes: Vec<usize>,
    /// Row-major: `cells[r * mem_nodes.len() + c]`.
    pub cells: Vec<Cell>,
    pub notes: Vec<String>,
}

impl Matrix {
    pub fn cell(&self, cpu_node: usize, mem_node: usize) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.cpu_node == cpu_node && c.mem_node == mem_node)
    }
}

/// The CPUs of `node` this process may use, one per physical core first.
pub fn node_cpus(topo: &Topology, node: usize) -> Vec<usize> {
    topo.cores_first(&topo.usable_cpus_of(node))
}

/// Bytes of L3 (or the last level there is) that `cpus` share, counting
/// each cache instance once.
pub fn llc_bytes(topo: &Topology, cpus: &[usize]) -> u64 {
    let level = topo.caches.iter().map(|c| c.level).max().unwrap_or(0);
    topo.caches
        .iter()
        .filter(|c| c.level == level && c.kind != "Instruction")
        .filter(|c| cpus.iter().any(|&cpu| c.cpus.contains(cpu)))
        .map(|c| c.size_bytes)
        .sum()
}

/// The working set of a node's threads: 4x the cache they share (STREAM's
/// rule), at least 64 MiB, at most half of the memory node's free memory.
pub fn working_set(topo: &Topology, cpus: &[usize], mem_node: usize) -> (usize, Option<String>) {
    let wanted = (4 * llc_bytes(topo, cpus) as usize).max(64 << 20);
    cap(topo, wanted, mem_node)
}

fn cap(topo: &Topology, wanted: usize, mem_node: usize) -> (usize, Option<String>) {
    let limit = (topo.node_free_bytes(mem_node) / 2) as usize;
    if wanted <= limit {
        (wanted, None)
    } else {
        (
            limit,
            Some(format!(
                "node {mem_node}: working set scaled down from {} to {} MiB (half its free memory)",
                wanted >> 20,
                limit >> 20
            )),
        )
    }
}

/// Per-thread array size for `threads` threads sharing `working_set`.
pub fn array_bytes(working_set: usize, arrays: usize, threads: usize) -> usize {
    (working_set / (arrays * threads).max(1)) / 4096 * 4096
}

/// Adds threads one at a time until the gain over the best so far stays
/// under [`FLAT_GAIN`] for [`FLAT_STEPS`] steps in a row, or the CPUs run
/// out. Unlike stopping at the first drop, a single noisy or SMT-limited
/// step does not end the search, and the peak is the best step, not the
/// last. `measure(n)` returns `None` when time ran out.
pub fn saturate<T>(
    max_threads: usize,
    mut measure: impl FnMut(usize) -> Result<Option<(T, f64)>>,
) -> Result<(Vec<T>, usize, String)> {
    let mut steps = Vec::new();
    let mut best = 0.0f64;
    let mut peak = 0;
    let mut flat = 0;
    for n in 1..=max_threads {
        let Some((step, mb_s)) = measure(n)? else {
            return Ok((steps, peak, format!("time limit reached at {n} threads")));
        };
        steps.push(step);
        if mb_s > best * (1.0 + FLAT_GAIN) {
            flat = 0;
        } else {
            flat += 1;
        }
        if mb_s > best {
            best = mb_s;
            peak = steps.len() - 1;
        }
        if flat >= FLAT_STEPS {
            return Ok((
                steps,
                peak,
                format!("gain under 1% for {FLAT_STEPS} steps at {n} threads"),
            ));
        }
    }
    Ok((steps, peak, format!("all {max_threads} cores used")))
}

/// Sizes given by the user are measured as given, so each must fit on every
/// memory node it is placed on (one node's buffer is mapped at a time);
/// sizes worked out here are scaled down to fit instead.
fn admit_sizes(topo: &Topology, cfg: &MatrixConfig, mem_nodes: &[usize]) -> Result<()> {
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
pub fn run(topo: &Topology, cfg: &MatrixConfig, progress: &mut dyn FnMut(&str)) -> Result<Matrix> {
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
    let mut notes = Vec::new();
    let mut cells = Vec::new();
    let mut skipped = 0usize;
    for &c in &cpu_nodes {
        let cpus = node_cpus(topo, c);
        for &m in &mem_nodes {
            let mut cell = Cell {
                cpu_node: c,
                mem_node: m,
                single: None,
                saturated: None,
                latency: None,
            };
            let (ws, note) = match cfg.working_set {
                Some(w) => (w, None),
                None => working_set(topo, &cpus, m),
            };
            notes.extend(note.filter(|n| !notes.contains(n)));
            let pages = if cfg.huge {
                PageKind::Auto
            } else {
                PageKind::Base
            };
            let arrays = cfg.kernel.op.arrays();
            let cut_short = std::cell::Cell::new(false);
            let mut one = |n: usize| -> Result<Option<(Bandwidth, f64)>> {
                if stop() {
                    cut_short.set(crate::interrupt::requested().is_some());
                    return Ok(None);
                }
                progress(&format!("cpu node {c} -> mem node {m}: {n} thread(s)"));
                let seats: Vec<Seat> = cpus[..n].iter().map(|&cpu| Seat { cpu, node: m }).collect();
                let b = measure::bandwidth(
                    &seats,
                    array_bytes(ws, arrays, n),
                    cfg.kernel,
                    pages,
                    cfg.timing,
                )?;
                let v = b.stream_mb_s();
                Ok(Some((b, v)))
            };
            if cfg.saturated {
                let (steps, peak, stop) = saturate(cpus.len(), &mut one)?;
                if cfg.single {
                    cell.single = steps.first().cloned();
                }
                // A curve a signal cut short has no peak to report.
                if !steps.is_empty() && !cut_short.get() {
                    cell.saturated = Some(Scaling { steps, peak, stop });
                }
            } else if cfg.single {
                cell.single = one(1)?.map(|(b, _)| b);
            }
            if cfg.latency && !stop() {
                progress(&format!("cpu node {c} -> mem node {m}: latency"));
                let size = match cfg.latency_bytes {
                    Some(s) => s,
                    None => {
                        let wanted = (4 * llc_bytes(topo, &cpus[..1]) as usize).max(256 << 20);
                        cap(topo, wanted, m).0
                    }
                };
                let seat = Seat {
                    cpu: cpus[0],
                    node: m,
                };
                cell.latency = Some(measure::latency(seat, size, PageKind::Auto)?);
            }
            if (cfg.single && cell.single.is_none()) || (cfg.latency && cell.latency.is_none()) {
                skipped += 1;
            }
            cells.push(cell);
        }
    }
    if let Some(sig) = crate::interrupt::requested() {
        notes.push(format!(
            "interrupted by {}: {skipped} cell(s) not fully measured",
            crate::interrupt::name(sig)
        ));
    } else if skipped > 0
        && let Some(t) = cfg.time_limit
    {
        notes.push(format!(
            "time limit of {} s reached: {skipped} cell(s) not fully measured",
            t.as_secs_f64()
        ));
    }
    Ok(Matrix {
        kernel: cfg.kernel,
        cpu_nodes,
        mem_nodes,
        cells,
        notes,
    })
}

/// Every core of one node against one memory node.
#[derive(Debug, Clone)]
pub struct PerCore {
    pub cpu_node: usize,
    pub mem_node: usize,
    /// (cpu, measurement) per physical core.
    pub cores: Vec<(usize, Bandwidth)>,
    pub summary: CoreSummary,
}

/// Spread of the per-core figures and whether the cores are equivalent.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreSummary {
    pub mean: f64,
    pub stddev: f64,
    /// 95% confidence interval of the mean (Student's t).
    pub ci95: (f64, f64),
    /// Largest distance of a core from the mean, in % of the mean.
    pub max_dev_pct: f64,
    pub equivalent: bool,
}

/// Cores count as equivalent when every one is within this % of the mean.
pub const EQUIVALENT_PCT: f64 = 5.0;

/// Two-sided 97.5% quantile of Student's t for `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

pub fn summarise_cores(values: &[f64]) -> CoreSummary {
    let mean = stats::mean(values);
    let sd = stats::stddev(values);
    let half = if values.len() < 2 {
        0.0
    } else {
        t975(values.len() - 1) * sd / (values.len() as f64).sqrt()
    };
    let max_dev_pct = if mean > 0.0 {
        values
            .iter()
            .map(|v| (v - mean).abs() / mean * 100.0)
            .fold(0.0, f64::max)
    } else {
        0.0
    };
    CoreSummary {
        mean,
        stddev: sd,
        ci95: (mean - half, mean + half),
        max_dev_pct,
        equivalent: max_dev_pct <= EQUIVALENT_PCT,
    }
}

/// Single-thread bandwidth from every core of `cpu_node` to `mem_node`.
pub fn per_core(
    topo: &Topology,
    cfg: &MatrixConfig,
    cpu_node: usize,
    mem_node: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<PerCore> {
    // One CPU per physical core: `node_cpus` lists those first.
    let all = node_cpus(topo, cpu_node);
    let mut cores: Vec<String> = all
        .iter()
        .filter_map(|&c| topo.cpu(c).map(|cpu| cpu.smt_siblings.to_list()))
        .collect();
    cores.sort();
    cores.dedup();
    let cpus: Vec<usize> = all.into_iter().take(cores.len().max(1)).collect();
    if cpus.is_empty() {
        bail!("node {cpu_node} has no CPU this process may use");
    }
    admit_sizes(topo, cfg, &[mem_node])?;
    let ws = match cfg.working_set {
        Some(w) => w,
        None => working_set(topo, &cpus[..1], mem_node).0,
    };
    let pages = if cfg.huge {
        PageKind::Auto
    } else {
        PageKind::Base
    };
    let started = Instant::now();
    let mut out = Vec::new();
    for &cpu in &cpus {
        if cfg.time_limit.is_some_and(|t| started.elapsed() >= t)
            || crate::interrupt::requested().is_some()
        {
            break;
        }
        progress(&format!("cpu {cpu} -> mem node {mem_node}"));
        let seat = Seat {
            cpu,
            node: mem_node,
        };
        let b = measure::bandwidth(
            &[seat],
            array_bytes(ws, cfg.kernel.op.arrays(), 1),
            cfg.kernel,
            pages,
            cfg.timing,
        )?;
        out.push((cpu, b));
    }
    let values: Vec<f64> = out.iter().map(|(_, b)| b.stream_mb_s()).collect();
    Ok(PerCore {
        cpu_node,
        mem_node,
        cores: out,
        summary: summarise_cores(&values),
    })
}

/// Record names; the analysis reads the matrix back by these.
pub const SINGLE: &str = "bandwidth_1t";
pub const SATURATED: &str = "bandwidth_saturated";
pub const LATENCY: &str = "latency";
pub const PER_CORE: &str = "bandwidth_per_core";
pub const PEAK: &str = "peak";

fn placement(seen: &measure::Seen) -> Placement {
    Placement {
        pages_by_node: seen
            .pages_by_node
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        on_target_pct: Some(seen.verified_pct),
        huge_pct: seen.huge_pct,
        cpus_seen: seen.cpus_seen.clone(),
    }
}

/// A bandwidth measurement as a record (STREAM-counted MB/s, every timed
/// run kept).
fn bandwidth_record(name: &str, c: usize, m: usize, b: &Bandwidth) -> Record {
    let mut rec = Record::new("matrix", &format!("{name} {c}->{m}"))
        .param("kind", name)
        .param("cpu_node", c)
        .param("mem_node", m)
        .param("threads", b.threads)
        .param("kernel", b.kernel.op.to_string())
        .param("variant", b.kernel.name)
        .param("size_bytes", b.array_bytes)
        .param("page_size", b.seen.page_kind.clone())
        .metric("bandwidth_mb_s", b.stream_mb_s(), "MB/s", Better::Higher)
        .metric(
            "cv_pct",
            stats::cv_pct(&b.stream_samples()),
            "%",
            Better::Lower,
        )
        .metric("runtime_s", b.elapsed_s, "s", Better::Lower);
    rec.samples
        .insert("bandwidth_mb_s".into(), b.stream_samples());
    rec.placement = Some(placement(&b.seen));
    rec
}

/// Gamma from the DMI memory speed of this machine, kept with the matrix
/// so a results file carries its own peak. `Err` says why there is none.
pub fn peak_record(topo: &Topology) -> Result<Record, String> {
    let devices = crate::topology::dmi::read_memory_devices(std::path::Path::new("/"))
        .map_err(|e| e.to_string())?;
    let nodes = topo.nodes.iter().filter(|n| n.has_memory).count().max(1);
    let p = crate::topology::dmi::peak(&devices, nodes)
        .ok_or_else(|| "no DMI memory device with a known speed".to_string())?;
    let peak =
        crate::analysis::model::Peak::dmi(p.speed_mt_s, p.bytes_per_transfer, p.channels_per_node);
    let mut rec = Record::new("matrix", PEAK).param("kind", PEAK).metric(
        "peak_mb_s",
        peak.mb_s,
        "MB/s",
        Better::Higher,
    );
    rec.params.insert(
        "peak".into(),
        serde_json::to_value(&peak).map_err(|e| e.to_string())?,
    );
    Ok(rec)
}

impl Matrix {
    /// Every measured figure as results-document records.
    pub fn records(&self) -> Vec<Record> {
        let mut out = Vec::new();
        for cell in &self.cells {
            let (c, m) = (cell.cpu_node, cell.mem_node);
            if let Some(b) = &cell.single {
                out.push(bandwidth_record(SINGLE, c, m, b));
            }
            if let Some(s) = &cell.saturated {
                let peak = &s.steps[s.peak];
                let mut rec = bandwidth_record(SATURATED, c, m, peak);
                rec.notes.push(format!("scaling stopped: {}", s.stop));
                let curve = s.curve();
                rec.series.push(Series {
                    name: "scaling".into(),
                    x_label: "threads".into(),
                    x_unit: "".into(),
                    y_label: "bandwidth".into(),
                    y_unit: "MB/s".into(),
                    x: curve.iter().map(|p| p.0 as f64).collect(),
                    lines: vec![Line {
                        label: format!("{c}->{m}"),
                        y: curve.iter().map(|p| p.1).collect(),
                    }],
                });
                out.push(rec);
            }
            if let Some(l) = &cell.latency {
                let mut rec = Record::new("matrix", &format!("{LATENCY} {c}->{m}"))
                    .param("kind", LATENCY)
                    .param("cpu_node", c)
                    .param("mem_node", m)
                    .param("threads", 1)
                    .param("kernel", "chase")
                    .param("size_bytes", l.size_bytes)
                    .param("page_size", l.seen.page_kind.clone())
                    .metric("latency_ns", l.median_ns(), "ns", Better::Lower)
                    .metric("latency_stddev_ns", l.stddev_ns(), "ns", Better::Lower)
                    .metric("cv_pct", l.cv_pct(), "%", Better::Lower)
                    .metric("runtime_s", l.elapsed_s, "s", Better::Lower);
                rec.samples.insert("latency_ns".into(), l.samples.clone());
                rec.placement = Some(placement(&l.seen));
                out.push(rec);
            }
        }
        if let Some(first) = out.first_mut() {
            first.notes.extend(self.notes.iter().cloned());
        }
        out
    }
}

impl PerCore {
    pub fn records(&self) -> Vec<Record> {
        let s = &self.summary;
        self.cores
            .iter()
            .map(|(cpu, b)| {
                let mut rec = bandwidth_record(PER_CORE, self.cpu_node, self.mem_node, b);
                rec.name = format!("{PER_CORE} cpu{cpu}->{}", self.mem_node);
                rec.params.insert("cpu".into(), (*cpu).into());
                rec
            })
            .chain(std::iter::once(
                Record::new(
                    "matrix",
                    &format!("{PER_CORE} node{}->{}", self.cpu_node, self.mem_node),
                )
                .param("kind", "per_core_summary")
                .param("cpu_node", self.cpu_node)
                .param("mem_node", self.mem_node)
                .param("cores", self.cores.len())
                .param("equivalent", s.equivalent)
                .metric("bandwidth_mb_s", s.mean, "MB/s", Better::Higher)
                .metric("stddev_mb_s", s.stddev, "MB/s", Better::Lower)
                .metric("ci95_low_mb_s", s.ci95.0, "MB/s", Better::Higher)
                .metric("ci95_high_mb_s", s.ci95.1, "MB/s", Better::Higher)
                .metric("max_deviation_pct", s.max_dev_pct, "%", Better::Lower),
            ))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

    fn scale(curve: &[f64]) -> (Vec<f64>, usize, String) {
        saturate(curve.len(), |n| Ok(Some((curve[n - 1], curve[n - 1])))).unwrap()
    }

    #[test]
    fn scaling_stops_after_two_flat_steps_and_keeps_the_best() {
        let (steps, peak, stop) = scale(&[10.0, 19.0, 25.0, 25.1, 24.0, 30.0]);
        assert_eq!(steps.len(), 5, "stops after 25.1 and 24.0");
        assert_eq!(peak, 3, "25.1 is the best seen");
        assert!(stop.contains("5 threads"), "{stop}");
    }

    #[test]
    fn one_dip_does_not_end_the_scaling() {
        let (steps, peak, _) = scale(&[10.0, 9.0, 20.0, 30.0]);
        assert_eq!(steps.len(), 4);
        assert_eq!(peak, 3);
    }

    #[test]
    fn scaling_uses_every_core_while_it_gains() {
        let (steps, peak, stop) = scale(&[1.0, 2.0, 3.0]);
        assert_eq!((steps.len(), peak), (3, 2));
        assert!(stop.contains("all 3"), "{stop}");
    }

    #[test]
    fn scaling_reports_the_time_limit() {
        let (steps, _, stop) = saturate(8, |n| {
            Ok(if n < 3 {
                Some((n as f64, n as f64))
            } else {
                None
            })
        })
        .unwrap();
        assert_eq!(steps.len(), 2);
        assert!(stop.contains("time limit"), "{stop}");
    }

    #[test]
    fn student_t_and_confidence_interval() {
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(9), 2.262);
        assert_eq!(t975(1000), 1.960);
        let s = summarise_cores(&[100.0, 102.0, 98.0, 100.0]);
        assert_eq!(s.mean, 100.0);
        let half = 3.182 * s.stddev / 2.0;
        assert!((s.ci95.1 - 100.0 - half).abs() < 1e-9);
        assert!(s.equivalent);
        let uneven = summarise_cores(&[100.0, 100.0, 100.0, 80.0]);
        assert!(!uneven.equivalent, "{uneven:?}");
        assert!((uneven.max_dev_pct - 15.789_473_7).abs() < 1e-6);
    }

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
        small.nodes[0].mem_free_bytes = 64 << 20;
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
