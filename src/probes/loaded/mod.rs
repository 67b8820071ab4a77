//! Loaded latency, as Intel MLC's `--loaded_latency` and multichase's
//! `multiload` measure it: one pinned thread chases pointers through a
//! buffer on the memory node while injector threads, pinned to the other
//! cores of a CPU node, read (or copy) their own buffers on the same memory
//! node with a spin between chunks. Stepping the spin from long to none
//! gives the curve of latency against the bandwidth the injectors moved,
//! per (CPU node, memory node) pair, and its knee.
//!
//! `mod.rs` plans the pairs and sizes; `run.rs` runs them, one chase
//! buffer per memory node; `inject.rs` runs a pair's threads;
//! `work.rs` is an injector's pass through its buffer; `pick.rs` chooses
//! the injectors' kernel;
//! `curve.rs` is the knee and monotonicity logic; `records.rs` and
//! `view.rs` turn the curves into records and show them.

mod curve;
mod inject;
mod findings;
mod part;
pub(crate) use part::estimate;
mod pick;
pub(crate) mod records;
mod run;
pub(crate) mod view;
mod work;

pub(crate) use curve::KNEE_FACTOR;
pub(crate) use run::run;
pub(crate) use view::LoadedView;

use super::measure::Seen;
use super::seats::node_cpus;
use super::sizing::{cap, chase_bytes, limit_condition, llc_bytes};
use crate::ids::NodeSet;
use crate::kernels::pattern::Pattern;
use crate::kernels::{KernelSpec, Op, Store};
use crate::memory::admission::{Footprint, admit};
use crate::results::Condition;
use crate::topology::Topology;
use anyhow::{Result, bail};

/// MLC's delay steps, read as nanoseconds of spin per 4 KiB chunk
/// of each injector (see [`CHUNK_BYTES`]), from full load to near idle.
pub(crate) const DEFAULT_DELAYS_NS: [u64; 12] = [
    0, 50, 100, 200, 400, 700, 1000, 1700, 2500, 5000, 9000, 20000,
];

/// Bytes of its source an injector works through between two delays.
pub(crate) const CHUNK_BYTES: usize = 4096;

/// The traffic the injectors make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Mix {
    /// Reads only (MLC's default, multiload's `stream-sum`).
    #[default]
    Read,
    /// 1:1 reads and writes with the regular-store copy kernel.
    Copy,
    /// 1:1 reads and non-temporal writes: the copy kernel with streaming
    /// stores, as glibc's memcpy does for large copies (multiload's
    /// `memcpy-libc`).
    CopyNt,
}

impl Mix {
    /// The kernel operation and store kind this mix runs.
    pub(crate) fn kernel_kind(self) -> (Op, Store) {
        match self {
            Mix::Read => (Op::Read, Store::Regular),
            Mix::Copy => (Op::Copy, Store::Regular),
            Mix::CopyNt => (Op::Copy, Store::NonTemporal),
        }
    }

    /// Whether `kernel` makes this mix's traffic: a read kernel of either
    /// load kind for read, a copy with the mix's stores for the copies.
    pub(crate) fn accepts(self, kernel: &KernelSpec) -> bool {
        let (op, store) = self.kernel_kind();
        kernel.op == op && (op == Op::Read || kernel.store == store)
    }

    pub(crate) fn name(self) -> &'static str {
        use crate::results::names::loaded::{COPY, COPY_NT, READ};
        match self {
            Mix::Read => READ,
            Mix::Copy => COPY,
            Mix::CopyNt => COPY_NT,
        }
    }
}

/// Which (CPU node, memory node) pairs get a curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Pairs {
    /// Every CPU node with every memory node.
    #[default]
    All,
    /// The first CPU node with its nearest and its farthest memory node.
    NearFar,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct LoadedConfig {
    /// Spin between chunks per point, ns; measured from the longest down.
    pub delays_ns: Vec<u64>,
    pub mix: Mix,
    /// The injectors' kernel, checked against the mix; `None`: the fastest
    /// of the mix's kernels in a trial on the first injector.
    pub kernel: Option<&'static KernelSpec>,
    /// Chase buffer; `None`: the idle-latency chase's
    /// ([`super::sizing::chase_bytes`]).
    pub chase_bytes: Option<usize>,
    /// The chase's pattern: full-random (the default, the idle-latency
    /// chase) or page-local (no page walks, as multiload's default).
    pub pattern: Pattern,
    /// Each injector's buffer; `None`: the injectors together 4x the L3
    /// they share, each at least 32 MiB.
    pub injector_bytes: Option<usize>,
    /// Injector threads; `None`: every other core of the injector node.
    pub injectors: Option<usize>,
    /// Node whose cores inject; `None`: the chase's own CPU node.
    pub injector_node: Option<usize>,
    pub pairs: Pairs,
    pub cpu_nodes: Option<NodeSet>,
    pub mem_nodes: Option<NodeSet>,
    /// No new pair is started after this long.
    pub time_limit: Option<std::time::Duration>,
}

/// One pair's plan: who runs where, on how much memory.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub cpu_node: usize,
    pub mem_node: usize,
    pub chase_cpu: usize,
    pub injector_node: usize,
    pub injector_cpus: Vec<usize>,
    pub chase_bytes: usize,
    pub pattern: Pattern,
    pub injector_bytes: usize,
    /// Why the injectors run where they do, when it is not the default.
    pub note: Option<String>,
    /// The condition of a buffer the note says the memory limit cut.
    pub limited: Option<Condition>,
}

/// One point of a curve as measured.
#[derive(Debug, Clone)]
pub(crate) struct PointRun {
    /// `None` for the idle point (injectors parked).
    pub delay_ns: Option<u64>,
    pub spins: u64,
    /// ns per load, one per sample.
    pub latency_ns: Vec<f64>,
    /// MB/s the injectors moved during each latency sample.
    pub bandwidth_mb_s: Vec<f64>,
    /// The injectors' bytes over the whole point / its time, MB/s.
    pub mean_bandwidth_mb_s: f64,
    pub elapsed_s: f64,
}

/// One pair's curve, idle point first, then from the lightest load.
#[derive(Debug, Clone)]
pub(crate) struct Curve {
    pub plan: Plan,
    pub mix: Mix,
    pub kernel: &'static str,
    pub ns_per_spin: f64,
    pub points: Vec<PointRun>,
    pub chase_seen: Seen,
    pub injector_seen: Seen,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Loaded {
    pub curves: Vec<Curve>,
    pub notes: Vec<String>,
    /// What the notes say of a stop, as data.
    pub conditions: Vec<Condition>,
    /// A pair that failed after others were measured, which ended the run;
    /// those before it are kept.
    pub failed: Option<String>,
    /// The time limit ended the run before every pair was measured.
    pub timed_out: bool,
    /// Chase buffers mapped: one per memory node (and chase size).
    pub buffers_built: usize,
}

/// The pairs to measure, in order.
pub(crate) fn pairs(topo: &Topology, cfg: &LoadedConfig) -> Result<Vec<(usize, usize)>> {
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
    Ok(match cfg.pairs {
        Pairs::All => cpu_nodes
            .iter()
            .flat_map(|&c| mem_nodes.iter().map(move |&m| (c, m)))
            .collect(),
        Pairs::NearFar => {
            let c = cpu_nodes[0];
            let by_distance = |m: &&usize| (topo.distance(c, **m).unwrap_or(u32::MAX), **m);
            let near = *mem_nodes.iter().min_by_key(by_distance).unwrap_or(&c);
            let far = *mem_nodes.iter().max_by_key(by_distance).unwrap_or(&c);
            let mut out = vec![(c, near)];
            if far != near {
                out.push((c, far));
            }
            out
        }
    })
}

/// Who runs where for one pair: the chase on the CPU node's first core,
/// the injectors on the injector node's other cores (never the chase's own
/// core or its SMT siblings, which would share its load unit), one per
/// physical core first.
pub(crate) fn plan(topo: &Topology, cfg: &LoadedConfig, (c, m): (usize, usize)) -> Result<Plan> {
    let chase_cpu = *node_cpus(topo, c)
        .first()
        .ok_or_else(|| anyhow::anyhow!("CPU node {c} has no CPU this process may use"))?;
    let siblings = topo.cpu(chase_cpu).map(|x| x.smt_siblings.clone());
    let free_cpus = |node: usize| -> Vec<usize> {
        node_cpus(topo, node)
            .into_iter()
            .filter(|&x| x != chase_cpu && !siblings.as_ref().is_some_and(|s| s.contains(x)))
            .collect()
    };
    let (mut injector_node, mut note) = (cfg.injector_node.unwrap_or(c), None);
    let mut injector_cpus = free_cpus(injector_node);
    if injector_cpus.is_empty()
        && cfg.injector_node.is_none()
        && let Some(other) = nearest_with_cpus(topo, c, &free_cpus)
    {
        note = Some(format!(
            "node {c} has no core besides the chase's: the injectors run on the nearest node with cores, node {other}"
        ));
        injector_node = other;
        injector_cpus = free_cpus(other);
    }
    if let Some(n) = cfg.injectors {
        if n > injector_cpus.len() && !injector_cpus.is_empty() {
            return Err(crate::error::usage(format!(
                "--injectors {n}: node {injector_node} has {} CPU(s) free to inject from (the chase runs on CPU {chase_cpu}); give {} or fewer",
                injector_cpus.len(),
                injector_cpus.len()
            )));
        }
        injector_cpus.truncate(n);
    }
    if injector_cpus.is_empty() {
        return Err(crate::error::usage(format!(
            "no CPU of node {injector_node} is left to inject from: the chase runs on CPU {chase_cpu} (and its SMT siblings stay idle); name another --injector-node"
        )));
    }
    if let ([only], None) = (injector_cpus.as_slice(), cfg.injectors) {
        let one = format!(
            "one injector (CPU {only}), the only CPU left beside the chase's: its load is one core's, which seldom doubles memory latency, so expect no knee, and the full-load figure is one core's bandwidth, not the memory's"
        );
        note = Some(note.map_or(one.clone(), |n| format!("{n}; {one}")));
    }
    let mut limited = None;
    let chase_bytes = match cfg.chase_bytes {
        Some(b) => b,
        None => {
            let (size, cut) = cap(topo, chase_bytes(topo, chase_cpu), m);
            if let Some(cut) = cut {
                let cut = cut.replace("working set", "chase buffer");
                note = Some(note.map_or(cut.clone(), |n| format!("{n}; {cut}")));
                limited = limit_condition(topo, m);
            }
            size
        }
    };
    let (injector_bytes, cut) = match cfg.injector_bytes {
        Some(b) => (b, None),
        None => injector_share(topo, m, &injector_cpus),
    };
    if let Some(cut) = cut {
        note = Some(note.map_or(cut.clone(), |n| format!("{n}; {cut}")));
        limited = limited.or(limit_condition(topo, m));
    }
    let injector_bytes = (injector_bytes / CHUNK_BYTES).max(1) * CHUNK_BYTES;
    let chase_bytes = chase_bytes / CHUNK_BYTES * CHUNK_BYTES;
    let in_cache = [
        fits_in_cache(
            topo,
            &[chase_cpu],
            chase_bytes as u64,
            "the chase's buffer",
            "its latency is partly the cache's; give a larger --size",
        ),
        fits_in_cache(
            topo,
            &injector_cpus,
            (injector_bytes * injector_cpus.len()) as u64,
            "the injectors' buffers",
            "much of their traffic stays in the cache, so the injected bandwidth is not all memory's; give a larger --injector-size",
        ),
    ];
    for fits in in_cache.into_iter().flatten() {
        note = Some(match note {
            Some(n) => format!("{n}; {fits}"),
            None => fits,
        });
    }
    Ok(Plan {
        cpu_node: c,
        mem_node: m,
        chase_cpu,
        injector_node,
        injector_cpus,
        chase_bytes,
        pattern: cfg.pattern,
        injector_bytes,
        note,
        limited,
    })
}

/// Each injector's buffer: 4x the cache the injectors share over their
/// count, at least 32 MiB, all of them together in at most a quarter of
/// memory node `m`'s free memory; with a note where that cut it.
fn injector_share(topo: &Topology, m: usize, cpus: &[usize]) -> (usize, Option<String>) {
    let n = cpus.len();
    let wanted = (4 * llc_bytes(topo, cpus) as usize / n).max(32 << 20);
    let limit = (topo.node_free_bytes(m) / 4) as usize / n;
    if limit == 0 || limit >= wanted {
        return (wanted, None);
    }
    let room = match &topo.memory_limit {
        Some(l) if limit_condition(topo, m).is_some() => l.describe(),
        _ => format!("{} free", crate::units::bytes(topo.node_free_bytes(m))),
    };
    let cut = format!(
        "node {m}: injector buffers scaled down from {} to {} MiB each (a quarter of the {room} the {n} injector(s) may use together)",
        wanted >> 20,
        limit >> 20,
    );
    (limit, Some(cut))
}

/// A warning where `what` (`bytes`; a plural ends in s) is under twice the last-level cache
/// `cpus` share: the curve then measures the cache in part, not memory.
fn fits_in_cache(
    topo: &Topology,
    cpus: &[usize],
    bytes: u64,
    what: &str,
    so: &str,
) -> Option<String> {
    let llc = llc_bytes(topo, cpus);
    let (together, verb) = if what.ends_with('s') {
        (" together", "are")
    } else {
        ("", "is")
    };
    (llc > 0 && bytes < 2 * llc).then(|| {
        format!(
            "{what} ({}{together}) {verb} under twice the {} last-level cache: {so}",
            crate::units::bytes(bytes),
            crate::units::bytes(llc)
        )
    })
}

/// The CPU node nearest `c` (by SLIT distance, then number), other than
/// `c`, with a CPU `free_cpus` leaves for injecting.
fn nearest_with_cpus(
    topo: &Topology,
    c: usize,
    free_cpus: &dyn Fn(usize) -> Vec<usize>,
) -> Option<usize> {
    topo.usable_cpu_nodes()
        .iter()
        .filter(|&n| n != c && !free_cpus(n).is_empty())
        .min_by_key(|&n| (topo.distance(c, n).unwrap_or(u32::MAX), n))
}

/// Each pair's chase and injector buffers, all on its memory node at once,
/// must fit there (exit 2 naming both figures, before anything is mapped).
pub(crate) fn admit_plans(topo: &Topology, plans: &[Plan]) -> Result<()> {
    for p in plans {
        let bytes = p.chase_bytes as u64 + (p.injector_bytes * p.injector_cpus.len()) as u64;
        admit(
            topo,
            &Footprint {
                bytes,
                nodes: Some(&[p.mem_node]),
                what: format!(
                    "--size {} + {} injector(s) x --injector-size {}",
                    crate::units::bytes(p.chase_bytes as u64),
                    p.injector_cpus.len(),
                    crate::units::bytes(p.injector_bytes as u64)
                ),
                remedy: "give a smaller --size, --injector-size or fewer --injectors",
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

    #[test]
    fn each_mix_accepts_only_kernels_that_make_its_traffic() {
        let k = |n: &str| crate::kernels::find(n).unwrap();
        assert!(Mix::Read.accepts(k("read_portable")));
        assert!(!Mix::Read.accepts(k("copy_portable")));
        assert!(Mix::Copy.accepts(k("copy_portable")));
        assert!(!Mix::Copy.accepts(k("write_portable")));
        assert!(!Mix::CopyNt.accepts(k("copy_portable")));
        // Streaming kernels exist per instruction set: whichever this build
        // has (x86-64 has some, the others may have none).
        let nt = |op: Op| {
            crate::kernels::KERNELS
                .iter()
                .find(move |k| k.op == op && k.store == Store::NonTemporal)
        };
        if let Some(read_nt) = nt(Op::Read) {
            assert!(Mix::Read.accepts(read_nt), "streaming loads read too");
        }
        if let Some(copy_nt) = nt(Op::Copy) {
            assert!(Mix::CopyNt.accepts(copy_nt));
            assert!(!Mix::Copy.accepts(copy_nt));
        }
        if let Some(write_nt) = nt(Op::Write) {
            assert!(!Mix::CopyNt.accepts(write_nt));
        }
    }

    #[test]
    fn near_far_takes_the_first_cpu_node_nearest_and_farthest() {
        let t = fixture("amd-4node");
        let cfg = LoadedConfig {
            pairs: Pairs::NearFar,
            ..Default::default()
        };
        let p = pairs(&t, &cfg).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0], (0, 0));
        let far = p[1].1;
        for m in t.usable_memory_nodes().iter() {
            assert!(t.distance(0, m) <= t.distance(0, far));
        }
        let all = pairs(&t, &LoadedConfig::default()).unwrap();
        let n = t.usable_memory_nodes().len();
        assert_eq!(all.len(), t.usable_cpu_nodes().len() * n);
    }

    #[test]
    fn injectors_avoid_the_chase_core_and_its_siblings() {
        let t = fixture("interleaved-smt");
        let cfg = LoadedConfig::default();
        let p = plan(&t, &cfg, (0, 0)).unwrap();
        let sib = t.cpu(p.chase_cpu).unwrap().smt_siblings.clone();
        assert!(!p.injector_cpus.is_empty());
        assert!(p.injector_cpus.iter().all(|c| !sib.contains(*c)));
        assert!(
            p.injector_cpus
                .iter()
                .all(|&c| t.cpu(c).unwrap().node == Some(0))
        );
        let few = plan(
            &t,
            &LoadedConfig {
                injectors: Some(2),
                ..Default::default()
            },
            (0, 0),
        )
        .unwrap();
        assert_eq!(few.injector_cpus, p.injector_cpus[..2]);
        assert_eq!(p.chase_bytes % CHUNK_BYTES, 0);
        assert!(p.injector_bytes >= CHUNK_BYTES);
    }

    #[test]
    fn a_machine_with_one_cpu_to_inject_from_says_what_its_curve_can_show() {
        let mut t = fixture("interleaved-smt");
        let p = plan(&t, &LoadedConfig::default(), (0, 0)).unwrap();
        assert!(p.injector_cpus.len() > 1 && p.note.is_none());
        // Node 0 left with the chase's CPU and one more, not its sibling.
        let keep = [p.chase_cpu, p.injector_cpus[0]];
        for n in &mut t.nodes {
            if n.id == 0 {
                n.cpus = crate::ids::CpuSet::from_ids(keep);
            }
        }
        let p = plan(&t, &LoadedConfig::default(), (0, 0)).unwrap();
        assert_eq!(p.injector_cpus, [keep[1]]);
        let note = p.note.unwrap();
        assert!(
            note.starts_with(&format!("one injector (CPU {})", keep[1])),
            "{note}"
        );
        assert!(note.contains("expect no knee"), "{note}");
        // One injector asked for is no surprise: no note.
        let asked = LoadedConfig {
            injectors: Some(1),
            ..Default::default()
        };
        assert!(plan(&t, &asked, (0, 0)).unwrap().note.is_none());
    }

    #[test]
    fn injector_buffers_the_cache_holds_are_named() {
        let t = fixture("interleaved-smt");
        let p = plan(&t, &LoadedConfig::default(), (0, 0)).unwrap();
        assert!(p.note.is_none(), "{:?}", p.note);
        let small = LoadedConfig {
            injector_bytes: Some(64 << 10),
            ..Default::default()
        };
        let p = plan(&t, &small, (0, 0)).unwrap();
        let note = p.note.unwrap();
        let all = crate::units::bytes((64u64 << 10) * p.injector_cpus.len() as u64);
        assert!(
            note.contains(&format!(
                "the injectors' buffers ({all} together) are under"
            )),
            "{note}"
        );
        assert!(!note.contains("chase"), "{note}");
        let chase = LoadedConfig {
            chase_bytes: Some(1 << 20),
            ..Default::default()
        };
        let note = plan(&t, &chase, (0, 0)).unwrap().note.unwrap();
        assert!(
            note.contains("the chase's buffer (1 MiB) is under"),
            "{note}"
        );
    }

    #[test]
    fn a_memory_limit_that_cuts_the_buffers_is_named_in_words_and_as_data() {
        let mut t = fixture("interleaved-smt");
        assert_eq!(
            plan(&t, &LoadedConfig::default(), (0, 0)).unwrap().limited,
            None
        );
        t.memory_limit = Some(crate::topology::MemoryLimit {
            headroom_bytes: 64 << 20,
            limit_bytes: 80 << 20,
            source: "memory cgroup /x (memory.max)".into(),
        });
        let p = plan(&t, &LoadedConfig::default(), (0, 0)).unwrap();
        let note = p.note.unwrap();
        assert!(note.contains("injector buffers scaled down"), "{note}");
        assert!(note.contains("memory cgroup /x"), "{note}");
        assert_eq!(
            p.limited,
            Some(Condition::ScaledByMemoryLimit {
                source: "memory cgroup /x (memory.max)".into()
            })
        );
    }

    #[test]
    fn a_run_its_time_limit_stopped_says_so_as_data() {
        let cfg = LoadedConfig {
            time_limit: Some(std::time::Duration::ZERO),
            ..Default::default()
        };
        let out = run(&fixture("two-node"), &cfg, &mut |_| {}).unwrap();
        assert!(out.curves.is_empty() && out.timed_out);
        assert_eq!(out.conditions, [Condition::CutByTimeLimit { limit_s: 0.0 }]);
        assert!(out.notes[0].starts_with("time limit reached: 0 of"));
    }

    #[test]
    fn a_node_with_one_core_borrows_the_nearest_nodes_cores() {
        let t = fixture("amd-4node");
        let mut one = t.clone();
        // Leave node 0 a single CPU.
        let keep = node_cpus(&t, 0)[0];
        for n in &mut one.nodes {
            if n.id == 0 {
                n.cpus = crate::ids::CpuSet::from_ids([keep]);
            }
        }
        let p = plan(&one, &LoadedConfig::default(), (0, 0)).unwrap();
        assert_ne!(p.injector_node, 0);
        let nearest = one
            .usable_cpu_nodes()
            .iter()
            .filter(|&n| n != 0)
            .min_by_key(|&n| (one.distance(0, n).unwrap(), n))
            .unwrap();
        assert_eq!(p.injector_node, nearest);
        assert!(p.note.unwrap().contains("nearest"));
        // Named explicitly, the node is kept and the error says why.
        let cfg = LoadedConfig {
            injector_node: Some(0),
            ..Default::default()
        };
        let e = plan(&one, &cfg, (0, 0)).unwrap_err().to_string();
        assert!(e.contains("--injector-node"), "{e}");
    }
}
