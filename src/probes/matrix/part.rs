//! The matrix in the jobs over several probes: its lines in run's summary
//! (bandwidth and idle latency, local against remote, and the bandwidth
//! classes) and its idle-latency cells in the repeat check. Its part in
//! `run` is run's own first step, in this process.

use super::MatrixView;
use crate::analysis::atlas::{Atlas, Grid};
use crate::results::Record;
use crate::topology::Topology;
use crate::results::names::matrix::{kind, param};
use crate::results::names::metric;
use crate::results::Document;
use crate::view::{FolderFile, InRun, Part, Probe, Profile, Scope, Trim, View};

/// Run's first step, in its own process: every later step's buffers
/// follow the matrix's (the chase parts take its idle-latency buffer).
const PART: Part = Part {
    profile: Profile::Smoke,
    order: 0,
    args: |_, _| Vec::new(),
    counted_as: None,
    in_process: Some(in_run),
    plan: |topo, scope| match config(topo, scope) {
        Ok(cfg) => crate::probes::part::with_chase_cap(topo, estimate(topo, &cfg)),
        Err(e) => crate::view::PartPlan::cannot(&e),
    },
};

/// The matrix run measures: the smoke profile's on small buffers; with
/// fewer repeats where the run is trimmed to its budget.
fn config(topo: &Topology, scope: Scope) -> anyhow::Result<super::MatrixConfig> {
    if scope.profile == Profile::Smoke {
        return smoke_config();
    }
    let mut cfg = super::MatrixConfig::new()?.knee_by_class(scope.trim >= Trim::Scan);
    cfg = cfg.timing(crate::probes::cost::timing(scope.trim));
    if scope.trim >= Trim::Cells {
        let sampled = crate::probes::pairs::plan(
            topo,
            &topo.usable_cpu_nodes().iter().collect::<Vec<_>>(),
            &topo.usable_memory_nodes().iter().collect::<Vec<_>>(),
            crate::probes::part::selection(scope),
        );
        cfg.latency_cells = Some(sampled.measured);
    }
    Ok(cfg)
}

/// What the matrix will measure with `cfg`: per memory node, its buffers
/// built once (the bandwidth arrays, then the chase) for every CPU node's
/// cell; per cell, the thread counts of the saturation scan, the peak
/// cell's candidates and one chase.
pub(crate) fn estimate(topo: &Topology, cfg: &super::MatrixConfig) -> crate::view::PartPlan {
    use crate::probes::cost::{self, Estimate};
    use crate::probes::seats::{node_cpus, nodes};
    use crate::probes::sizing::{cap, chase_bytes, llc_bytes};
    let cpu_nodes = nodes(topo.usable_cpu_nodes(), &cfg.cpu_nodes);
    let mem_nodes = nodes(topo.usable_memory_nodes(), &cfg.mem_nodes);
    let bandwidth = cfg.single || cfg.saturated || !cfg.peak.is_empty();
    let one = cost::bandwidth_s(cfg.timing.tries, cfg.timing.min_run);
    let full_random = cfg.pattern == crate::kernels::pattern::Pattern::FullRandom;
    let mut e = Estimate::default();
    let mut scanned: Vec<(usize, Option<u32>)> = Vec::new();
    // Each row's CPUs and the sizes its caches ask for, before a memory
    // node's room caps them (as `super::working_set` works them out).
    let rows: Vec<(usize, usize, usize, usize)> = cpu_nodes
        .iter()
        .filter_map(|&c| {
            let cpus = node_cpus(topo, c);
            let &first = cpus.first()?;
            let ws = (4 * llc_bytes(topo, &cpus) as usize).max(64 << 20);
            Some((c, cpus.len(), ws, chase_bytes(topo, first)))
        })
        .collect();
    for &m in &mem_nodes {
        let mut sizes: Vec<(usize, usize)> = Vec::new();
        for &(c, cores, ws_wanted, chase_wanted) in &rows {
            let ws = cfg.working_set.unwrap_or_else(|| cap(topo, ws_wanted, m).0);
            let chase = cfg
                .latency_bytes
                .unwrap_or_else(|| cap(topo, chase_wanted, m).0);
            if !sizes.contains(&(ws, chase)) {
                sizes.push((ws, chase));
            }
            let class = (c, topo.distance(c, m));
            let steps = if cfg.saturated && cfg.knee_by_class && scanned.contains(&class) {
                2
            } else if cfg.saturated {
                scanned.push(class);
                scan_steps(cores, cfg.full_scaling)
            } else {
                usize::from(cfg.single)
            };
            e.add(steps as f64 * one);
            e.add((2 * cfg.peak.len()) as f64 * one);
            if cfg.wants_latency(c, m) {
                e.add(cost::CHASE_S);
            }
        }
        for (ws, chase) in sizes {
            if bandwidth {
                e.builds("bandwidth arrays", 1, ws as u64)
                    .mapped(ws as u64)
                    .add(cost::fault_s(ws as u64, 1));
            }
            if cpu_nodes.iter().any(|&c| cfg.wants_latency(c, m)) {
                e.builds("chase", 1, chase as u64)
                    .mapped(chase as u64)
                    .add(cost::chase_build_s(chase as u64, full_random));
            }
        }
    }
    if let Some(t) = cfg.time_limit {
        e.cap(t.as_secs_f64(), cost::CHASE_S + one);
    }
    e.plan(format!(
        "{} cell(s): {} CPU node(s) x {} memory node(s)",
        cpu_nodes.len() * mem_nodes.len(),
        cpu_nodes.len(),
        mem_nodes.len()
    ))
}

/// Thread counts the saturation scan measures on a node of `cores`: every
/// count where it walks them (at most, since two flat steps end a walk
/// early), else the doublings and the refinement beside the best
/// (`scaling::scan`).
pub(crate) fn scan_steps(cores: usize, full: bool) -> usize {
    use super::scaling::{REFINE_STEPS, SEARCH_ABOVE};
    if full || cores <= SEARCH_ABOVE {
        return cores;
    }
    let doublings = usize::BITS - (cores - 1).leading_zeros();
    doublings as usize + 1 + REFINE_STEPS
}

/// The node-to-node matrix (one thread, saturated, latency) with the best
/// triad kernel, the theoretical peak where DMI gives one, and the rule
/// its classes were found by; the cells measured before a failure are
/// kept.
fn in_run(topo: &Topology, scope: Scope, show: &dyn Fn(&str)) -> anyhow::Result<InRun> {
    let cfg = config(topo, scope)?;
    let m = super::run(topo, &cfg, &mut |w| show(w))?;
    let mut records = m.records();
    if let (Some(cells), Some(first)) = (&cfg.latency_cells, records.first_mut()) {
        first.notes.push(format!(
            "idle latency measured on {} cell(s) only, the sampled pairs of each distance class: the run was trimmed to fit its budget",
            cells.len()
        ));
    }
    let cpu = topo.allowed.cpus.iter().next().unwrap_or(0);
    if let (Some(note), Some(first)) = (
        crate::probes::sizing::chase_cap_note(topo, cpu),
        records.first_mut(),
    ) {
        first.notes.push(note);
    }
    super::add_peak(&mut records, topo);
    records.push(super::class_rule_record(
        &crate::analysis::classes::ClassOptions::default(),
    ));
    Ok(InRun {
        records,
        failed: m.failed,
    })
}

/// The smoke profile's matrix: 8 MiB buffers, one timed run of 5 ms.
fn smoke_config() -> anyhow::Result<super::MatrixConfig> {
    let mut cfg = super::MatrixConfig::new()?.working_set(Some(8 << 20));
    cfg.latency_bytes = Some(8 << 20);
    cfg.timing = crate::probes::measure::Timing {
        tries: 1,
        min_run: std::time::Duration::from_millis(5),
    };
    Ok(cfg)
}

impl Probe for MatrixView {
    fn part(&self) -> Option<Part> {
        Some(PART)
    }

    /// matrix.csv: the grids, as `matrix --csv` prints them.
    fn folder_files(&self, doc: &Document, records: &[&Record]) -> Vec<(String, FolderFile)> {
        let table = self.csv(doc, records).unwrap_or_default();
        vec![("matrix.csv".into(), FolderFile::Table(table))]
    }

    /// Printed even without a cell measured: a run always has its matrix,
    /// and dashes say that it measured nothing.
    fn summary_line(&self, _topo: &Topology, records: &[&Record]) -> Option<String> {
        let atlas = Atlas::from_records(records.iter().copied());
        Some(matrix_lines(&atlas))
    }

    fn idle_chase(&self, r: &Record) -> Option<f64> {
        (r.str_param(param::KIND) == Some(kind::LATENCY))
            .then(|| r.value(metric::LATENCY_NS))
            .flatten()
    }

    fn idle_chase_source(&self) -> &'static str {
        "the matrix"
    }
}

/// The lowest and highest value of `g`'s local (or remote) cells.
fn range(g: &Grid, local: bool) -> Option<(f64, f64)> {
    let v: Vec<f64> = g
        .values
        .iter()
        .filter(|((c, m), _)| (c == m) == local)
        .map(|(_, v)| *v)
        .collect();
    let lo = v.iter().copied().reduce(f64::min)?;
    let hi = v.iter().copied().reduce(f64::max)?;
    Some((lo, hi))
}

fn shown(r: Option<(f64, f64)>, unit: &str, d: usize) -> String {
    match r {
        Some((lo, hi)) if (hi - lo).abs() < 0.5 => format!("{lo:.d$} {unit}"),
        Some((lo, hi)) => format!("{lo:.d$}-{hi:.d$} {unit}"),
        None => "-".into(),
    }
}

fn matrix_lines(a: &Atlas) -> String {
    let mut out = String::new();
    let local_remote = |g: &Grid, unit: &str, d: usize| {
        format!(
            "local {}, remote {}",
            shown(range(g, true), unit, d),
            shown(range(g, false), unit, d)
        )
    };
    out.push_str(&format!(
        "  triad, one thread:  {}\n",
        local_remote(&a.single, "MB/s", 0)
    ));
    out.push_str(&format!(
        "  triad, saturated:   {}\n",
        local_remote(&a.saturated, "MB/s", 0)
    ));
    // The idle latency is run's headline, before these lines.
    let (_, classes) = crate::analysis::placement::system_classes(a);
    out.push_str(&format!(
        "  bandwidth classes:  {}\n",
        classes
            .classes
            .iter()
            .map(|c| format!("<= {:.0} MB/s", c.max))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out
}
