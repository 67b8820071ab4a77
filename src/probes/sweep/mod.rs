//! The cache-aware sweep: bandwidth of each kernel and pointer-chase latency
//! at per-thread buffer sizes placed around the real cache sizes (the
//! sc-membench method), with every thread's memory on its own node.
//!
//! `run` measures rows, `records` turns them into results records, `view`
//! shows those records in every format.

mod bandwidth;
pub(crate) mod levels;
mod findings;
mod part;
pub(crate) mod records;
pub(crate) mod view;

pub(crate) use view::SweepView;

pub(crate) use bandwidth::HUGE_FROM;
pub(crate) use records::summarize;

use super::measure;
use super::seats;
use super::team::Seat;
use crate::kernels::pattern::Pattern;
use crate::kernels::{KernelSpec, Op};
use crate::results::Condition;
use crate::results::names::sweep::{CHASE, LATENCY};
use crate::topology::Topology;
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What one row measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SweepOp {
    Bandwidth(Op),
    Latency,
}

impl SweepOp {
    pub(crate) fn bandwidth(op: Op) -> Self {
        SweepOp::Bandwidth(op)
    }

    pub(crate) fn op(self) -> Option<Op> {
        match self {
            SweepOp::Bandwidth(op) => Some(op),
            SweepOp::Latency => None,
        }
    }

    pub(crate) fn name(self) -> String {
        self.op()
            .map_or_else(|| LATENCY.to_string(), |o| o.to_string())
    }

    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        if text == LATENCY {
            return Ok(SweepOp::Latency);
        }
        text.parse::<Op>().map(SweepOp::bandwidth).map_err(|_| {
            format!(
                "'{text}' is not an operation (use read, write, copy, scale, add, triad, add3 or latency)"
            )
        })
    }

    /// read, write, copy, triad and latency.
    pub(crate) fn defaults() -> Vec<SweepOp> {
        let mut ops: Vec<SweepOp> = [Op::Read, Op::Write, Op::Copy, Op::Triad]
            .into_iter()
            .map(SweepOp::bandwidth)
            .collect();
        ops.push(SweepOp::Latency);
        ops
    }
}

#[derive(Debug, Clone)]
pub(crate) struct SweepConfig {
    pub ops: Vec<SweepOp>,
    /// Fixed per-thread sizes in bytes (`-s`); `None` for the cache-aware set.
    pub sizes: Option<Vec<usize>>,
    /// Continue past 4x L3 up to the memory limit.
    pub full: bool,
    /// Bandwidth threads (`-p`); `None` for every usable CPU.
    pub threads: Option<usize>,
    /// Try 1, 2, 4, ... threads and keep the best (`-a`).
    pub auto_threads: bool,
    /// Huge pages for buffers of at least 4 MiB (`-H`).
    pub huge: bool,
    /// Stop starting new measurements after this long (`-t`).
    pub time_limit: Option<Duration>,
    /// Timed runs per measurement after the warm-up (`-r`), best kept.
    pub tries: usize,
    /// Kernels forced by name, per op (`--kernel-variant`).
    pub variants: Vec<&'static KernelSpec>,
    /// Shortest timed run; repetitions are scaled to reach it.
    pub min_run: Duration,
    /// Where the bandwidth threads go (`OMP_PROC_BIND`, `OMP_PLACES`).
    pub placing: seats::Placing,
    /// The latency chase's access pattern (`--pattern`).
    pub pattern: Pattern,
}

impl Default for SweepConfig {
    /// The default sweep: every default operation at the cache-aware
    /// sizes, all usable CPUs, base pages, best of 3.
    fn default() -> Self {
        SweepConfig {
            ops: SweepOp::defaults(),
            sizes: None,
            full: false,
            threads: None,
            auto_threads: false,
            huge: false,
            time_limit: None,
            tries: 3,
            variants: Vec::new(),
            min_run: Duration::from_millis(40),
            placing: seats::Placing::Nodes,
            pattern: Pattern::FullRandom,
        }
    }
}

/// One line of the sweep: sc-membench's columns, then numabench's own.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SweepRow {
    pub size_kb: u64,
    pub operation: String,
    /// sc-membench/lmbench convention: per-thread array size x threads x
    /// repetitions / time (copy counts the buffer once).
    pub bandwidth_mb_s: f64,
    pub latency_ns: f64,
    pub latency_stddev_ns: f64,
    pub latency_samples: usize,
    pub threads: usize,
    pub iterations: u64,
    pub elapsed_s: f64,
    pub variant: String,
    /// Bytes STREAM counts per element (reads + writes).
    pub bytes_per_element: u64,
    /// STREAM convention: every byte read or written / time.
    pub stream_bandwidth_mb_s: f64,
    /// Percent of checked pages on each thread's intended node (the lowest
    /// over threads).
    pub placement_verified_pct: f64,
    /// Percent of memory in huge pages (mean over threads).
    pub huge_pct: f64,
    /// Per timed run: MB/s (bandwidth, sc-membench convention) or ns/load.
    pub samples: Vec<f64>,
    pub cv_pct: f64,
    pub cpus_seen: Vec<usize>,
    pub pages_by_node: BTreeMap<usize, u64>,
    pub page_kind: String,
    /// The chase's access pattern, on a latency row.
    pub pattern: Option<Pattern>,
    /// What the row says beyond its figures (a latency buffer capped).
    pub notes: Vec<String>,
}

/// sc-membench's largest latency buffer: past L3 caches of over 1 GiB, so
/// the chase reaches DRAM on those parts too.
pub(crate) const LATENCY_MAX_BYTES: usize = 2 << 30;

/// The largest latency buffer here: [`LATENCY_MAX_BYTES`] or a quarter of
/// the RAM, whichever is less, as sc-membench caps it (whole pages).
pub(crate) fn latency_cap(topo: &Topology) -> usize {
    latency_cap_for(topo.system_mem_total_bytes.unwrap_or_else(|| {
        topo.nodes
            .iter()
            .fold(0u64, |sum, n| sum.saturating_add(n.mem_total_bytes))
    }))
}

/// [`latency_cap`] for `ram` bytes of RAM.
fn latency_cap_for(ram: u64) -> usize {
    let quarter = usize::try_from(ram / 4).unwrap_or(usize::MAX);
    LATENCY_MAX_BYTES.min(quarter).max(4096) / 4096 * 4096
}

/// The buffer a latency row at `size` chases: `size`, or `cap` above it.
pub(super) fn latency_size(size: usize, cap: usize) -> usize {
    size.min(cap)
}

/// The L1, L2 and L3 data cache sizes of `cpu` in bytes; 32 KiB, 256 KiB
/// and 8 MiB where the topology has none.
pub(crate) fn cache_levels(topo: &Topology, cpu: usize) -> (usize, usize, usize) {
    let size = |level: u32, default: u64| {
        topo.caches_of(cpu)
            .iter()
            .find(|c| c.level == level && c.kind != "Instruction")
            .map_or(default, |c| c.size_bytes) as usize
    };
    (size(1, 32 << 10), size(2, 256 << 10), size(3, 8 << 20))
}

/// Per-thread sizes around the caches of `cpu`: L1/2, 2xL1, L2/2, L2, 2xL2,
/// L3/4, L3/2, L3, 2xL3, 4xL3; sorted, without duplicates.
pub(crate) fn cache_sizes(topo: &Topology, cpu: usize) -> Vec<usize> {
    let (l1, l2, l3) = cache_levels(topo, cpu);
    let mut sizes = vec![
        l1 / 2,
        2 * l1,
        l2 / 2,
        l2,
        2 * l2,
        l3 / 4,
        l3 / 2,
        l3,
        2 * l3,
        4 * l3,
    ];
    sizes
        .iter_mut()
        .for_each(|s| *s = (*s).max(4096) / 4096 * 4096);
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// Doubling past the last size while `limit` allows.
pub(crate) fn extend_full(sizes: &mut Vec<usize>, limit: usize) {
    let mut next = sizes.last().copied().unwrap_or(1 << 20) * 2;
    while next <= limit {
        sizes.push(next);
        next *= 2;
    }
}

/// Bytes each thread may use for all its arrays: half of the free memory of
/// the busiest node, shared among the threads on it; and the words for
/// where that comes from: "half of the 62 MiB free on node 0", or of the
/// memory limit where that decides.
pub(crate) fn per_thread_room(topo: &Topology, seats: &[Seat]) -> (usize, String) {
    tightest(topo, seats).map_or((0, "half the free memory".into()), |(limit, node)| {
        let words = crate::memory::admission::room_words(topo, Some(&[node]));
        (limit, format!("half of {words}"))
    })
}

/// The condition to go beside a note that names [`per_thread_room`]'s
/// words: `Some` where those words name the process's memory limit.
pub(crate) fn room_condition(topo: &Topology, seats: &[Seat]) -> Option<Condition> {
    let (_, node) = tightest(topo, seats)?;
    super::sizing::room_condition(topo, Some(&[node]))
}

/// Half the free memory of the busiest node of `seats` per thread on it,
/// and that node, where it is the least of their nodes.
fn tightest(topo: &Topology, seats: &[Seat]) -> Option<(usize, usize)> {
    let mut per_node: BTreeMap<usize, usize> = BTreeMap::new();
    for s in seats {
        *per_node.entry(s.node).or_default() += 1;
    }
    per_node
        .iter()
        .map(|(&node, count)| {
            let free = topo.node_free_bytes(node) as usize;
            (free / 2 / count, node)
        })
        .min()
}

/// Why one thread's `bytes` for `op` cannot be measured: more than half the
/// free memory of its node (`limit` is that share per thread, with its
/// words), or `None` when it fits.
fn does_not_fit(
    bytes: usize,
    op: SweepOp,
    threads: usize,
    (limit, whence): (usize, &str),
) -> Option<String> {
    let (arrays, threads) = match op {
        SweepOp::Latency => (1, 1),
        SweepOp::Bandwidth(op) => (op.arrays(), threads),
    };
    let need = bytes.saturating_mul(arrays);
    (need > limit).then(|| {
        let kib = |b: usize| crate::units::bytes(b as u64);
        format!(
            "{} {} needs {} per thread ({threads} thread{}, {arrays} array{}) but {whence} allows {} per thread",
            kib(bytes),
            op.name(),
            kib(need),
            if threads == 1 { "" } else { "s" },
            if arrays == 1 { "" } else { "s" },
            kib(limit)
        )
    })
}

/// Checks the sizes given with `-s` before anything is measured: each must
/// fit in half the free memory of the threads' nodes, so a size asked for
/// is measured or refused, never silently left out.
pub(crate) fn check_given_sizes(topo: &Topology, cfg: &SweepConfig) -> Result<(), String> {
    let Some(sizes) = &cfg.sizes else {
        return Ok(());
    };
    let max = seats::max_threads(topo);
    if max == 0 {
        return Ok(());
    }
    let threads = cfg.threads.unwrap_or(max).min(max);
    let (limit, whence) = per_thread_room(topo, &seats::place(topo, threads, cfg.placing));
    let (lat_limit, lat_whence) = per_thread_room(topo, &seats::spread(topo, max)[..1]);
    for &size in sizes {
        for &op in &cfg.ops {
            let l = if op == SweepOp::Latency {
                (lat_limit, lat_whence.as_str())
            } else {
                (limit, whence.as_str())
            };
            // A size asked for must fit as asked, even where latency's
            // cap would chase less of it.
            if let Some(why) = does_not_fit(size, op, threads, l) {
                return Err(format!(
                    "-s {}K: {why}; give a smaller size or fewer threads (--threads)",
                    size / 1024
                ));
            }
        }
    }
    Ok(())
}

/// What a sweep measured: rows in size order, notes (skipped sizes, time
/// limit reached), and why it ended early where a measurement failed after
/// others were made (a thread the task limit refused, a buffer the kernel
/// would not map).
pub(crate) struct Swept {
    pub rows: Vec<SweepRow>,
    pub notes: Vec<String>,
    /// What the notes say of a stop or of sizes the memory limit left out,
    /// as data.
    pub conditions: Vec<Condition>,
    pub failed: Option<String>,
}

/// Runs the sweep; a failure before any row is measured is an error.
pub(crate) fn run(
    topo: &Topology,
    cfg: &SweepConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Swept> {
    let mut rows: Vec<SweepRow> = Vec::new();
    let mut notes = (Vec::new(), Vec::new());
    let failed = match measure(topo, cfg, progress, &mut rows, &mut notes) {
        Ok(()) => None,
        Err(e) if rows.is_empty() => return Err(e),
        Err(e) => Some(format!("{e:#}")),
    };
    let (notes, conditions) = notes;
    Ok(Swept {
        rows,
        notes,
        conditions,
        failed,
    })
}

fn measure(
    topo: &Topology,
    cfg: &SweepConfig,
    progress: &mut dyn FnMut(&str),
    rows: &mut Vec<SweepRow>,
    (notes, conditions): &mut (Vec<String>, Vec<Condition>),
) -> Result<()> {
    let max = seats::max_threads(topo);
    if max == 0 {
        bail!("this process may run on no CPU");
    }
    let threads = cfg.threads.unwrap_or(max).min(max);
    let first = seats::spread(topo, max)[0];
    let mut sizes = cfg
        .sizes
        .clone()
        .unwrap_or_else(|| cache_sizes(topo, first.cpu));
    let placed = seats::place(topo, threads, cfg.placing);
    let (limit, whence) = per_thread_room(topo, &placed);
    let (lat_limit, lat_whence) = per_thread_room(topo, &[first]);
    // Sizes left out for want of room are so by the memory limit where its
    // words name it.
    let room_limits = [
        room_condition(topo, &placed),
        room_condition(topo, &[first]),
    ];
    if cfg.full {
        extend_full(&mut sizes, limit / 3);
    }
    let counts = thread_counts(cfg, threads);
    let cap = latency_cap(topo);
    let started = Instant::now();
    'sizes: for &size in &sizes {
        // Which operations this size measures, in the order asked.
        let mut asked: Vec<(SweepOp, usize)> = Vec::new();
        let mut skipped = Vec::new();
        for &op in &cfg.ops {
            let latency = op == SweepOp::Latency;
            let (l, bytes) = if latency {
                ((lat_limit, lat_whence.as_str()), latency_size(size, cap))
            } else {
                ((limit, whence.as_str()), size)
            };
            if let Some(why) = does_not_fit(bytes, op, threads, l) {
                let note = format!("{} KiB {} not measured: {why}", size / 1024, op.name());
                skipped.push((note, room_limits[usize::from(latency)].clone()));
                continue;
            }
            if bytes < size
                && rows
                    .iter()
                    .any(|r| r.operation == LATENCY && r.size_kb == (bytes / 1024) as u64)
            {
                // Measured at the cap already: the same buffer again.
                continue;
            }
            asked.push((op, bytes));
        }
        let mut stop = None;
        let mut go_on = |op: SweepOp, bytes: usize| {
            if stop.is_none() {
                stop = stop_before(cfg, started, size, op);
            }
            if stop.is_none() {
                progress(&format!("{} KiB {}", bytes / 1024, op.name()));
            }
            stop.is_none()
        };
        let ops: Vec<Op> = asked.iter().filter_map(|(op, _)| op.op()).collect();
        let mut made = bandwidth::rows(topo, size, &ops, &counts, cfg, &mut |op| {
            go_on(SweepOp::Bandwidth(op), size)
        })?
        .into_iter();
        let before = rows.len();
        for &(op, bytes) in &asked {
            let row = match op {
                SweepOp::Bandwidth(_) => made.next().flatten(),
                SweepOp::Latency if go_on(op, bytes) => {
                    let mut row = latency_row(first, bytes, cfg)?;
                    if bytes < size {
                        row.notes.push(capped_note(size, bytes));
                    }
                    Some(row)
                }
                SweepOp::Latency => None,
            };
            rows.extend(row);
        }
        // A size the stop came before is not measured at all: no note on
        // what of it would not have fitted.
        if stop.is_none() || rows.len() > before {
            for (note, limit) in skipped {
                notes.push(note);
                conditions.extend(limit.filter(|c| !conditions.contains(c)));
            }
        }
        if let Some((why, condition)) = stop {
            notes.push(why);
            conditions.push(condition);
            break 'sizes;
        }
    }
    Ok(())
}

/// Why a latency row's buffer is smaller than the sweep's size.
fn capped_note(size: usize, cap: usize) -> String {
    let b = |x: usize| crate::units::bytes(x as u64);
    format!(
        "latency at {} and larger measured with a {} buffer: as sc-membench, latency buffers stop at 2 GiB or a quarter of the RAM",
        b(size),
        b(cap)
    )
}

/// The thread counts tried: 1, 2, 4, ... up to `threads` with `-a`, else
/// `threads` alone.
fn thread_counts(cfg: &SweepConfig, threads: usize) -> Vec<usize> {
    if !cfg.auto_threads {
        return vec![threads];
    }
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |n| Some(n * 2))
        .take_while(|n| *n < threads)
        .collect();
    v.push(threads);
    v
}

/// Why no more is measured from `size` (`op`) on: the time limit or a
/// stop signal, in words and as data; `None` to go on.
fn stop_before(
    cfg: &SweepConfig,
    started: Instant,
    size: usize,
    op: SweepOp,
) -> Option<(String, Condition)> {
    if let Some(limit_t) = cfg.time_limit
        && started.elapsed() >= limit_t
    {
        let note = format!(
            "time limit of {} s reached: sizes from {} KiB on were not measured",
            limit_t.as_secs_f64(),
            size / 1024
        );
        return Some((note, Condition::time_limit(limit_t)));
    }
    crate::interrupt::requested().map(|sig| {
        let note = format!(
            "interrupted by {}: sizes from {} KiB ({}) on were not measured",
            crate::interrupt::name(sig),
            size / 1024,
            op.name()
        );
        (note, Condition::CutBySignal { signal: sig })
    })
}

fn latency_row(seat: Seat, size: usize, cfg: &SweepConfig) -> Result<SweepRow> {
    let m = measure::latency(seat, size, bandwidth::pages_for(cfg, size), &cfg.pattern)?;
    Ok(SweepRow {
        size_kb: (size / 1024) as u64,
        operation: LATENCY.into(),
        bandwidth_mb_s: 0.0,
        latency_ns: m.median_ns(),
        latency_stddev_ns: m.stddev_ns(),
        latency_samples: m.samples.len(),
        threads: 1,
        iterations: m.samples.len() as u64,
        elapsed_s: m.elapsed_s,
        variant: CHASE.into(),
        bytes_per_element: 0,
        stream_bandwidth_mb_s: 0.0,
        placement_verified_pct: m.seen.verified_pct,
        huge_pct: m.seen.huge_pct,
        cv_pct: m.cv_pct(),
        samples: m.samples,
        cpus_seen: m.seen.cpus_seen,
        pages_by_node: m.seen.pages_by_node,
        page_kind: m.seen.page_kind,
        pattern: Some(m.pattern),
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_buffers_stop_at_2_gib_or_a_quarter_of_the_ram() {
        assert_eq!(latency_cap_for(64 << 30), 2 << 30);
        assert_eq!(latency_cap_for(8 << 30), 2 << 30);
        assert_eq!(latency_cap_for(4 << 30), 1 << 30);
        // Whole pages, and never below one.
        assert_eq!(latency_cap_for((6 << 30) + 100), 1536 << 20);
        assert_eq!(latency_cap_for(0), 4096);
        // A 1.1 GiB L3 (4 x L3 = 4.4 GiB): the chase stops at 2 GiB.
        assert_eq!(latency_size(4_724_464_025, 2 << 30), 2 << 30);
        assert_eq!(latency_size(64 << 20, 2 << 30), 64 << 20);
        let note = capped_note(4 << 30, 2 << 30);
        assert!(
            note.starts_with("latency at 4 GiB and larger measured with a 2 GiB buffer"),
            "{note}"
        );
    }

    #[test]
    fn a_size_refused_under_a_memory_limit_names_the_limit() {
        let mut topo = crate::topology::fixture("two-node");
        let cfg = SweepConfig {
            sizes: Some(vec![200 << 20]),
            threads: Some(1),
            ..SweepConfig::default()
        };
        assert!(check_given_sizes(&topo, &cfg).is_ok());
        topo.memory_limit = Some(crate::topology::MemoryLimit {
            headroom_bytes: 126 << 20,
            limit_bytes: 128 << 20,
            source: "memory cgroup /x (memory.limit_in_bytes)".into(),
        });
        let e = check_given_sizes(&topo, &cfg).unwrap_err();
        assert!(
            e.contains("half of the 126 MiB left under memory cgroup /x"),
            "{e}"
        );
        assert!(!e.contains("half the free memory"), "{e}");
        let one = seats::spread(&topo, 1);
        let (limit, words) = per_thread_room(&topo, &one);
        assert_eq!(limit, 63 << 20);
        assert!(words.contains("memory cgroup /x"), "{words}");
        assert_eq!(
            room_condition(&topo, &one),
            Some(Condition::ScaledByMemoryLimit {
                source: "memory cgroup /x (memory.limit_in_bytes)".into()
            })
        );
        topo.memory_limit = None;
        assert_eq!(room_condition(&topo, &one), None);
    }

    #[test]
    fn a_stop_by_the_time_limit_says_so_in_words_and_as_data() {
        let cfg = SweepConfig {
            time_limit: Some(Duration::from_millis(50)),
            ..SweepConfig::default()
        };
        let long_ago = Instant::now() - Duration::from_secs(1);
        let (note, condition) = stop_before(&cfg, long_ago, 1 << 20, SweepOp::Latency).unwrap();
        assert_eq!(
            note,
            "time limit of 0.05 s reached: sizes from 1024 KiB on were not measured"
        );
        assert_eq!(condition, Condition::CutByTimeLimit { limit_s: 0.05 });
        assert!(stop_before(&cfg, Instant::now(), 1 << 20, SweepOp::Latency).is_none());
    }
}
