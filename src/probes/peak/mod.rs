//! Peak injection bandwidth: every core this process may use on a CPU node
//! injects one read/write mix into the memory of one target (the local
//! node, each remote node, memory interleaved over every allowed node), for
//! every mix with every store kind, one thread and all threads; per CPU node,
//! target and thread count the best mix and store kind is named.
//!
//! A mix is one kernel operation ([`Mix`]); with both store kinds measured
//! a figure never hides which store it used, and the best is the best of
//! both. Bytes are counted the STREAM way (read + written, no
//! write-allocate, MB = 10^6). Memory is admitted before it is mapped, bound
//! to the target and verified, threads pinned and checked, as in the matrix:
//! both go through `measure`'s teams. One team measures every kernel of a
//! (CPU node, target, thread count), so the working set is faulted in once.
//!
//! `mod.rs` measures; `records.rs` turns the measurements into records;
//! `view.rs` shows the records in every format.

mod findings;
mod part;
pub(crate) use part::estimate;
mod records;
pub(crate) mod view;

pub(crate) use view::PeakView;

use super::measure::{self, Bandwidth, Timing};
use super::seats::node_cpus;
use super::sizing::{array_bytes, cap, limit_condition, llc_bytes};
use super::team::Seat;
use crate::ids::NodeSet;
use crate::kernels::{self, KernelSpec, Mix, Store};
use crate::memory::PageKind;
use crate::results::Condition;
use crate::topology::Topology;
use anyhow::{Result, bail};
use std::time::{Duration, Instant};

/// Where a team's memory lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// Bound to one node.
    Node(usize),
    /// Interleaved page-chunk by chunk over these nodes (2 MiB chunks,
    /// round robin).
    Interleave(Vec<usize>),
}

impl Target {
    /// The target as records name it: the node number or `interleave`.
    pub(crate) fn name(&self) -> String {
        match self {
            Target::Node(n) => n.to_string(),
            Target::Interleave(_) => crate::results::names::peak::INTERLEAVE.to_string(),
        }
    }

    fn nodes(&self) -> Vec<usize> {
        match self {
            Target::Node(n) => vec![*n],
            Target::Interleave(nodes) => nodes.clone(),
        }
    }
}

/// A thread count to measure on each CPU node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThreadCount {
    /// This many threads, at most the node's cores.
    Some(usize),
    /// Every allowed core of the node.
    All,
}

impl ThreadCount {
    /// The threads on a node of `cores` allowed cores.
    pub(crate) fn on(self, cores: usize) -> usize {
        match self {
            ThreadCount::Some(n) => n.min(cores),
            ThreadCount::All => cores,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct PeakConfig {
    pub mixes: Vec<Mix>,
    pub stores: Vec<Store>,
    /// Each measured once per CPU node; counts that come to the same
    /// threads there are measured once.
    pub threads: Vec<ThreadCount>,
    /// All threads' arrays together; `None`: 4x the CPU node's L3, at
    /// least 64 MiB, at most half the target's free memory.
    pub working_set: Option<usize>,
    pub timing: Timing,
    pub huge: bool,
    /// Measure memory interleaved over all allowed memory nodes too (only
    /// where there are two or more).
    pub interleave: bool,
    pub time_limit: Option<Duration>,
    pub cpu_nodes: Option<NodeSet>,
    pub mem_nodes: Option<NodeSet>,
    /// Every (CPU node, memory node) target, or by distance class on a
    /// large machine ([`crate::probes::pairs`]); interleaved targets are
    /// always measured.
    pub selection: crate::probes::pairs::Selection,
}

impl Default for PeakConfig {
    fn default() -> Self {
        PeakConfig {
            mixes: Mix::ALL.to_vec(),
            stores: vec![Store::Regular, Store::NonTemporal],
            threads: vec![ThreadCount::Some(1), ThreadCount::All],
            working_set: None,
            timing: Timing::default(),
            huge: false,
            interleave: true,
            time_limit: None,
            cpu_nodes: None,
            mem_nodes: None,
            selection: crate::probes::pairs::Selection::All,
        }
    }
}

/// One mix with one store kind, from one CPU node to one target.
#[derive(Debug, Clone)]
pub(crate) struct MixRun {
    pub cpu_node: usize,
    pub target: Target,
    pub mix: Mix,
    pub bandwidth: Bandwidth,
}

impl MixRun {
    pub(crate) fn mb_s(&self) -> f64 {
        self.bandwidth.stream_mb_s()
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Peak {
    pub runs: Vec<MixRun>,
    pub notes: Vec<String>,
    /// What the notes say of a stop or a scaled buffer, as data.
    pub conditions: Vec<Condition>,
    /// A measurement that failed after others were made, which ended the
    /// run; those before it are kept.
    pub failed: Option<String>,
}

/// The kernel of each (mix, store kind) asked for that this CPU runs, the
/// widest instruction set first; the pairs it cannot run (no streaming
/// loads or stores on portable or NEON) are left out and named in a note.
pub(crate) fn kernels_for(
    mixes: &[Mix],
    stores: &[Store],
) -> (Vec<(Mix, &'static KernelSpec)>, Vec<String>) {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for &mix in mixes {
        for &store in stores {
            match kernels::best(mix.op(), store) {
                Some(k) => out.push((mix, k)),
                None => missing.push(format!("{mix} {store}")),
            }
        }
    }
    let notes = if missing.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "not measured, no kernel on this CPU: {}",
            missing.join(", ")
        )]
    };
    (out, notes)
}

/// [`kernels_for`], and for each read the multi-stream read of the same
/// load kind as a second candidate (and for the 1:1 copy with streaming
/// stores the multi-stream copy): one core moves more from several places
/// at once on many CPUs, and the peak is what a core can move. The faster
/// of the two is kept ([`keep_fastest`]).
pub(crate) fn peak_kernels(
    mixes: &[Mix],
    stores: &[Store],
) -> (Vec<(Mix, &'static KernelSpec)>, Vec<String>) {
    let (mut out, mut notes) = kernels_for(mixes, stores);
    let streams: Vec<(Mix, &'static KernelSpec)> = out
        .iter()
        .filter(|(mix, _)| matches!(mix, Mix::Read | Mix::R1W1))
        .filter_map(|&(mix, k)| kernels::best_streams(k.op, k.store).map(|s| (mix, s)))
        .collect();
    if streams.iter().any(|(m, _)| *m == Mix::Read) {
        notes.push(format!(
            "read: one pass (read_*) and {} streams at once (read_s{}_*) are both measured for each load kind, and the faster is kept; the record names its kernel",
            kernels::STREAMS,
            kernels::STREAMS
        ));
    }
    if streams.iter().any(|(m, _)| *m == Mix::R1W1) {
        notes.push(format!(
            "1:1 with non-temporal stores: one pass (copy_nt_*) and {} streams at once (copy_s{}_nt_*) are both measured, and the faster is kept",
            kernels::COPY_STREAMS,
            kernels::COPY_STREAMS
        ));
    }
    out.extend(streams);
    (out, notes)
}

/// One run per (mix, store kind): where two kernels measured the same pair
/// (a read, or a 1:1 copy with streaming stores, in one pass and in several
/// streams), the faster, in the place of the first.
pub(crate) fn keep_fastest(measured: Vec<(Mix, Bandwidth)>) -> Vec<(Mix, Bandwidth)> {
    let mut out: Vec<(Mix, Bandwidth)> = Vec::with_capacity(measured.len());
    for (mix, b) in measured {
        let same = out
            .iter_mut()
            .find(|(m, o)| *m == mix && o.kernel.store == b.kernel.store);
        match same {
            Some(kept) if b.stream_mb_s() > kept.1.stream_mb_s() => kept.1 = b,
            Some(_) => {}
            None => out.push((mix, b)),
        }
    }
    out
}

/// Measures every (mix, store kind) of `kernels` with `seats` over
/// `working_set` bytes (all arrays and threads together) at `target`;
/// `stop` is asked before each measurement.
pub(crate) fn measure_mixes(
    seats: &[Seat],
    target: &Target,
    working_set: usize,
    kernels: &[(Mix, &'static KernelSpec)],
    (pages, timing): (PageKind, Timing),
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<(Mix, Bandwidth)>> {
    let split: Vec<(usize, u32)> = match target {
        Target::Node(_) => Vec::new(),
        Target::Interleave(nodes) => nodes.iter().map(|&n| (n, 1)).collect(),
    };
    let runs: Vec<(&'static KernelSpec, usize)> = kernels
        .iter()
        .map(|&(_, k)| {
            let bytes = array_bytes(working_set, k.op.arrays(), seats.len()).max(4096);
            (k, bytes)
        })
        .collect();
    if stop() {
        return Ok(Vec::new());
    }
    // One team for every kernel: the working set is mapped and faulted in
    // once, not once per kernel.
    let measured = measure::bandwidths_split(seats, &runs, (pages, timing), &split, &mut |i| {
        if stop() {
            return false;
        }
        let (mix, kernel) = kernels[i];
        progress(&format!(
            "{mix} {} -> {}: {} thread(s)",
            kernel.name,
            target.name(),
            seats.len()
        ));
        true
    })?;
    Ok(kernels.iter().map(|&(mix, _)| mix).zip(measured).collect())
}

/// The targets from CPU node rows: each memory node, then interleaved
/// memory where there are two or more nodes and it is asked for.
/// The thread counts to measure on a CPU node of `cores` allowed cores,
/// ascending, each once.
pub(super) fn counts(cfg: &PeakConfig, cores: usize) -> Vec<usize> {
    let mut out: Vec<usize> = cfg.threads.iter().map(|t| t.on(cores)).collect();
    out.sort_unstable();
    out.dedup();
    out
}

pub(super) fn targets(mem_nodes: &[usize], interleave: bool) -> Vec<Target> {
    let mut out: Vec<Target> = mem_nodes.iter().map(|&m| Target::Node(m)).collect();
    if interleave && mem_nodes.len() > 1 {
        out.push(Target::Interleave(mem_nodes.to_vec()));
    }
    out
}

/// The working set for a CPU node's threads at a target: as given, or 4x
/// the node's L3, at least 64 MiB, at most half the free memory the target
/// offers (over all its nodes when interleaved); with the note of a cut,
/// and its condition where the memory limit made it.
pub(super) fn working_set(
    topo: &Topology,
    cfg: &PeakConfig,
    cpus: &[usize],
    target: &Target,
) -> (usize, Option<String>, Option<Condition>) {
    if let Some(w) = cfg.working_set {
        return (w, None, None);
    }
    let nodes = target.nodes();
    let wanted = (4 * llc_bytes(topo, cpus) as usize).max(64 << 20);
    // Each node of an interleaved target holds its share.
    let share = wanted.div_ceil(nodes.len());
    let mut got = wanted;
    let (mut note, mut condition) = (None, None);
    for &m in &nodes {
        let (w, n) = cap(topo, share, m);
        if w < share {
            got = got.min(w * nodes.len());
            note = n;
            condition = condition.or(limit_condition(topo, m));
        }
    }
    (got, note, condition)
}

/// Measures peak injection bandwidth.
pub(crate) fn run(
    topo: &Topology,
    cfg: &PeakConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Peak> {
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
    if let Some(w) = cfg.working_set {
        crate::memory::admission::admit_each(
            topo,
            w as u64,
            &mem_nodes,
            "--size",
            "give a smaller --size",
        )?;
    }
    let (kernels, mut notes) = peak_kernels(&cfg.mixes, &cfg.stores);
    let mut conditions = Vec::new();
    if kernels.is_empty() {
        bail!("no kernel on this CPU for the mixes and store kinds asked for");
    }
    let started = Instant::now();
    let out_of_time = || cfg.time_limit.is_some_and(|t| started.elapsed() >= t);
    let stop = || crate::interrupt::requested().is_some() || out_of_time();
    let pages = if cfg.huge {
        PageKind::Auto
    } else {
        PageKind::Base
    };
    let pairs = keep_fastest_count(&kernels);
    let wanted = part::wanted_targets(topo, cfg, (&cpu_nodes, &mem_nodes));
    let planned: usize = cpu_nodes
        .iter()
        .map(|&c| counts(cfg, node_cpus(topo, c).len()).len() * wanted(c).len())
        .sum::<usize>()
        * pairs;
    let mut runs = Vec::new();
    let mut failed = None;
    'nodes: for &c in &cpu_nodes {
        let cpus = node_cpus(topo, c);
        let counts = counts(cfg, cpus.len());
        for target in wanted(c) {
            let (ws, note, condition) = working_set(topo, cfg, &cpus, &target);
            notes.extend(note.filter(|n| !notes.contains(n)));
            conditions.extend(condition.filter(|c| !conditions.contains(c)));
            let seat_node = target.nodes()[0];
            for &n in &counts {
                let seats: Vec<Seat> = cpus[..n]
                    .iter()
                    .map(|&cpu| Seat {
                        cpu,
                        node: seat_node,
                    })
                    .collect();
                let measured = match measure_mixes(
                    &seats,
                    &target,
                    ws,
                    &kernels,
                    (pages, cfg.timing),
                    &stop,
                    progress,
                ) {
                    Ok(m) => m,
                    Err(e) if !runs.is_empty() => {
                        failed = Some(format!("{e:#}"));
                        break 'nodes;
                    }
                    Err(e) => return Err(e),
                };
                runs.extend(
                    keep_fastest(measured)
                        .into_iter()
                        .map(|(mix, bandwidth)| MixRun {
                            cpu_node: c,
                            target: target.clone(),
                            mix,
                            bandwidth,
                        }),
                );
            }
        }
    }
    if failed.is_none()
        && let Some((note, condition)) = short_note(runs.len(), planned, cfg.time_limit)
    {
        notes.push(note);
        conditions.push(condition);
    }
    let plan = crate::probes::pairs::plan(topo, &cpu_nodes, &mem_nodes, cfg.selection);
    notes.extend(crate::probes::pairs::note(&plan, plan.measured.len()));
    Ok(Peak {
        runs,
        notes,
        conditions,
        failed,
    })
}


/// Why `made` of `planned` measurements were made, where fewer were: a
/// stop, or the time limit; in words and as data.
fn short_note(made: usize, planned: usize, limit: Option<Duration>) -> Option<(String, Condition)> {
    if let Some(sig) = crate::interrupt::requested() {
        return Some((
            format!(
                "interrupted by {}: {made} of {planned} measurement(s) made",
                crate::interrupt::name(sig)
            ),
            Condition::CutBySignal { signal: sig },
        ));
    }
    let t = limit.filter(|_| made < planned)?;
    Some((
        format!(
            "time limit of {} s reached: {made} of {planned} measurement(s) made",
            t.as_secs_f64()
        ),
        Condition::time_limit(t),
    ))
}

/// The (mix, store kind) pairs among `kernels`: the runs [`keep_fastest`]
/// leaves.
fn keep_fastest_count(kernels: &[(Mix, &'static KernelSpec)]) -> usize {
    let mut seen: Vec<(Mix, Store)> = Vec::new();
    for &(mix, k) in kernels {
        if !seen.contains(&(mix, k.store)) {
            seen.push((mix, k.store));
        }
    }
    seen.len()
}

/// The best of `runs` by STREAM-counted bandwidth.
pub(crate) fn best<T>(runs: &[T], mb_s: impl Fn(&T) -> f64) -> Option<&T> {
    runs.iter()
        .filter(|r| mb_s(r).is_finite())
        .max_by(|a, b| mb_s(a).total_cmp(&mb_s(b)))
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
