//! perf's `-a` suite: the same test names and options, in the same order,
//! mapped onto this machine.
//!
//! The seed's table was written for a 4-node machine with 8 CPUs per node,
//! numbered contiguously (CPU c on node c / 8). Its CPU and node numbers are
//! read that way and mapped by meaning: seed node k is the k-th node here
//! that has both usable CPUs and memory; a seed CPU is the CPU of the same
//! rank among the CPUs the test uses on its node, taken one per core first.
//! So "-C 0 -M 1" stays "a CPU and memory on another node", "-C 0,8" stays
//! "the first CPU of two different nodes". A test this machine cannot map
//! (too few nodes or CPUs) is skipped with the reason; memory sizes are
//! scaled down, and said so, where free memory is short.

mod table;

use crate::probes::workload::lists::{self, ListKind};
use crate::topology::Topology;
use std::collections::BTreeMap;

pub(crate) use table::{Memory, Test, tests};

/// How the suite is run here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SuiteOptions {
    /// Replaces every test's `-s`.
    pub secs: Option<u32>,
    /// Real reads and writes (-R -W) instead of -Z's memset.
    pub rw: bool,
    /// Share of a node's free memory a test may use, percent.
    pub memory_pct: u32,
}

/// A test made ready for this machine.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Planned {
    /// Name as printed (perf's, with `-rw` before the comma under --rw).
    pub name: String,
    pub short_name: String,
    /// Arguments after `mem`, mapped, timed and scaled.
    pub args: Vec<String>,
    /// What was changed and why.
    pub notes: Vec<String>,
    /// The same facts as data where code acts on them (the process's
    /// memory limit that scaled the test down).
    pub conditions: Vec<crate::results::Condition>,
    /// Why the test cannot run here.
    pub skip: Option<String>,
    /// The test clears memory with memset (-Z) instead of reading and
    /// writing it.
    pub memset: bool,
}

/// Every test of the suite as it would run here: its name, a tab and its
/// arguments after `mem`, or `skipped: WHY`; one line each, for scripts
/// that run the same tests elsewhere (e.g. perf itself, side by side).
pub(crate) fn listing(topo: &Topology, opts: &SuiteOptions) -> String {
    tests()
        .iter()
        .map(|t| {
            let p = plan(t, topo, opts);
            let what = match &p.skip {
                Some(why) => format!("skipped: {why}"),
                None => p.args.join(" "),
            };
            format!("{}\t{what}\n", p.short_name)
        })
        .collect()
}

/// The seed machine's CPUs per node.
const SEED_CPUS_PER_NODE: usize = 8;

/// A test's options as they are being adapted to this machine; its
/// arguments are written from these, in the seed's order.
#[derive(Debug, Clone)]
struct Entry {
    test: Test,
    /// MB as the seed writes them until scaled.
    mb: String,
    cpus: Option<String>,
    memnodes: Option<String>,
    secs: u32,
    rw: bool,
}

impl Entry {
    fn of(test: &Test) -> Self {
        Entry {
            test: test.clone(),
            mb: test.mb.to_string(),
            cpus: test.binding.map(|(c, _)| c.to_string()),
            memnodes: test.binding.map(|(_, m)| m.to_string()),
            secs: test.opts.secs(),
            rw: false,
        }
    }

    fn tasks(&self) -> usize {
        self.test.procs.max(1) * self.test.threads.max(1)
    }

    /// `-c`/`-m`: a convergence test.
    fn convergence(&self) -> bool {
        self.test.opts.flags().contains('m')
    }

    /// `-0`: every area starts on one node.
    fn init_cpu0(&self) -> bool {
        self.test.opts.flags().contains('0')
    }

    /// `-Z`: memset instead of reads and writes.
    fn memset(&self) -> bool {
        !self.rw && self.test.opts.flags().contains('Z')
    }

    fn mb(&self) -> f64 {
        self.mb.trim().parse().unwrap_or(0.0)
    }

    /// MB per process: its process memory, or its threads' memory.
    fn per_process_mb(&self) -> f64 {
        match self.test.memory {
            Memory::Process => self.mb(),
            Memory::Thread => self.mb() * self.test.threads.max(1) as f64,
        }
    }

    /// The arguments after `mem`, in the seed's order.
    fn args(&self) -> Vec<String> {
        let t = &self.test;
        let mut v: Vec<String> = vec![
            "-p".into(),
            t.procs.to_string(),
            "-t".into(),
            t.threads.to_string(),
            t.memory.flag().into(),
            self.mb.clone(),
        ];
        if let (Some(c), Some(m)) = (&self.cpus, &self.memnodes) {
            v.extend(["-C".into(), c.clone(), "-M".into(), m.clone()]);
        }
        let flags = if self.rw {
            t.opts.flags().replace('Z', "")
        } else {
            t.opts.flags().to_string()
        };
        v.extend(["-s".into(), self.secs.to_string(), flags]);
        v.extend(["--thp", " 1"].map(String::from));
        if t.opts.no_rand_walk() {
            v.push("--no-data_rand_walk".into());
        }
        if t.opts.nothp() {
            v.extend(["--thp", "-1"].map(String::from));
        }
        if self.rw {
            v.extend(["-R", "-W"].map(String::from));
        }
        v
    }
}

/// Entries of a seed list (one per task, up to `tasks`).
fn seed_entries(text: &str, kind: ListKind, tasks: usize) -> Vec<usize> {
    lists::parse(text, kind)
        .map(|t| {
            lists::expand(&t, tasks)
                .entries
                .iter()
                .map(|e| e.first)
                .collect()
        })
        .unwrap_or_default()
}

/// Maps one test onto `topo`.
pub(crate) fn plan(test: &Test, topo: &Topology, opts: &SuiteOptions) -> Planned {
    let mut e = Entry::of(test);
    let mut notes: Vec<String> = name_mismatch(test).into_iter().collect();
    let full_nodes = full_nodes(topo);
    let mut skip = convergence_skip(&e, topo);
    if skip.is_none() {
        skip = map_cpus(&mut e, topo, &full_nodes, &mut notes).err();
    }
    if skip.is_none() {
        skip = map_memnodes(&mut e, &full_nodes, &mut notes).err();
    }
    // A skipped test's node list is the seed machine's, not this one's:
    // there is nothing of it to scale.
    let mut conditions = Vec::new();
    if skip.is_none() {
        conditions.extend(scale_memory(&mut e, topo, opts.memory_pct, &mut notes));
    }
    if let Some(s) = opts.secs {
        if e.secs != s {
            notes.push(format!(
                "run time {s} s instead of the seed's {} s (--secs)",
                e.secs
            ));
        }
        e.secs = s;
    }
    let memset = !opts.rw && e.memset();
    let mut name = test.name.to_string();
    let mut short = test.short_name().to_string();
    if opts.rw {
        e.rw = true;
        name = format!("{}-rw,", name.trim_end_matches(','));
        short.push_str("-rw");
        notes.push("--rw: real reads and writes (-R -W) instead of the seed's -Z memset".into());
    } else if memset {
        notes.push(
            "-Z: as in the seed, the data is cleared with glibc memset (bzero), not read and written; --all --rw measures reads and writes"
                .into(),
        );
    }
    let cpus = crate::probes::seats::max_threads(topo);
    if skip.is_none() && e.tasks() > cpus {
        notes.push(format!(
            "{} tasks on {cpus} CPUs: oversubscribed",
            e.tasks()
        ));
    }
    Planned {
        name,
        short_name: short,
        args: e.args(),
        notes,
        conditions,
        skip,
        memset,
    }
}

/// A test whose "PxT" name says another number of tasks than perf's table
/// runs (its 2x3-convergence runs -p 3 -t 3; "4x1-bw-thread" is 4 tasks as
/// threads, -p 1 -t 4, which agrees): run as perf runs it, and said so.
fn name_mismatch(test: &Test) -> Option<String> {
    let name = test.short_name();
    let (p, rest) = name.split_once('x')?;
    let t: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let (p, t): (usize, usize) = (p.parse().ok()?, t.parse().ok()?);
    (p * t != test.procs * test.threads).then(|| {
        format!(
            "{name} runs -p {} -t {} as in perf's table ({} processes of {} threads), not the {p}x{t} its name says",
            test.procs, test.threads, test.procs, test.threads
        )
    })
}

/// Nodes that can hold a task and its memory.
fn full_nodes(topo: &Topology) -> Vec<usize> {
    topo.usable_cpu_nodes()
        .iter()
        .filter(|&n| topo.usable_memory_nodes().contains(n))
        .collect()
}

/// A convergence test needs tasks on two nodes.
fn convergence_skip(e: &Entry, topo: &Topology) -> Option<String> {
    let nodes = topo.usable_cpu_nodes().len();
    (e.convergence() && nodes < 2)
        .then(|| format!("convergence needs at least 2 nodes with CPUs; this machine has {nodes}"))
}

/// Seed node `k` is the k-th node here with CPUs and memory.
fn map_node(full_nodes: &[usize], k: usize) -> Result<usize, String> {
    full_nodes.get(k).copied().ok_or_else(|| {
        format!(
            "needs {} nodes with CPUs and memory; this machine has {}",
            k + 1,
            full_nodes.len()
        )
    })
}

/// `-C`: a seed CPU becomes the CPU of the same rank among the CPUs used
/// on its node here, one per core first; the reason to skip otherwise.
fn map_cpus(
    e: &mut Entry,
    topo: &Topology,
    full_nodes: &[usize],
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let Some(c) = e.cpus.clone() else {
        return Ok(());
    };
    let seed = seed_entries(&c, ListKind::Cpus, e.tasks());
    // Ranks of the seed CPUs used on each seed node.
    let mut per_node: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &cpu in &seed {
        let v = per_node.entry(cpu / SEED_CPUS_PER_NODE).or_default();
        if !v.contains(&cpu) {
            v.push(cpu);
        }
    }
    let mut mapped = Vec::new();
    for &cpu in &seed {
        let k = cpu / SEED_CPUS_PER_NODE;
        let rank = per_node[&k].iter().filter(|&&c| c < cpu).count();
        let node = map_node(full_nodes, k)?;
        let cpus = topo.cores_first(&topo.usable_cpus_of(node));
        let here = cpus.get(rank).ok_or_else(|| {
            format!(
                "needs {} CPUs on node {node}; it has {}",
                rank + 1,
                cpus.len()
            )
        })?;
        mapped.push(*here);
    }
    let text = join(&mapped);
    if text != c {
        notes.push(format!(
            "-C {c} (seed machine: 8 CPUs per node) mapped to -C {text}"
        ));
    }
    e.cpus = Some(text);
    Ok(())
}

/// `-M`: seed node k becomes the k-th node here with CPUs and memory.
fn map_memnodes(
    e: &mut Entry,
    full_nodes: &[usize],
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let Some(m) = e.memnodes.clone() else {
        return Ok(());
    };
    let seed = seed_entries(&m, ListKind::Nodes, e.tasks());
    let nodes = seed
        .iter()
        .map(|&k| map_node(full_nodes, k))
        .collect::<Result<Vec<usize>, String>>()?;
    let text = join(&nodes);
    if text != m {
        notes.push(format!("-M {m} mapped to -M {text}"));
    }
    e.memnodes = Some(text);
    Ok(())
}

/// Memory: at most `memory_pct` of the free memory where it will live,
/// scaled down (and said so) where the test asks for more; the condition
/// where the process's memory limit is what was short.
fn scale_memory(
    e: &mut Entry,
    topo: &Topology,
    memory_pct: u32,
    notes: &mut Vec<String>,
) -> Option<crate::results::Condition> {
    let pct = f64::from(memory_pct.clamp(1, 100)) / 100.0;
    let need_total = e.per_process_mb() * e.test.procs.max(1) as f64;
    let (factor, tightest, nodes) = memory_factor(e, topo, pct, need_total)?;
    if let Ok(v) = e.mb.trim().parse::<f64>() {
        let scaled = ((v * factor * 1000.0).floor() / 1000.0).max(0.001);
        e.mb = format!("{scaled}");
    }
    notes.push(format!(
        "memory scaled down to {:.1}% ({need_total:.0} MB asked): {tightest}, and a test may use {memory_pct}% of it",
        factor * 100.0
    ));
    crate::probes::sizing::room_condition(topo, nodes.as_deref())
}

/// The factor the test's memory must shrink by, below 1, and what limits
/// it: each bound node's free memory, the one node `-0` starts on, or
/// the usable nodes' free memory together (the nodes `None`).
fn memory_factor(
    e: &Entry,
    topo: &Topology,
    pct: f64,
    need_total: f64,
) -> Option<(f64, String, Option<Vec<usize>>)> {
    let mut factor: f64 = 1.0;
    let mut tightest = String::new();
    let mut nodes = None;
    if let Some(m) = &e.memnodes {
        let threads = e.test.threads.max(1);
        let mut need: BTreeMap<usize, f64> = BTreeMap::new();
        for (t, n) in seed_entries(m, ListKind::Nodes, e.tasks())
            .iter()
            .enumerate()
        {
            if t % threads == 0 {
                *need.entry(*n).or_default() += e.per_process_mb();
            }
        }
        for (n, want) in need {
            let budget = topo.node_free_bytes(n) as f64 * pct / 1048576.0;
            if want > 0.0 && budget / want < factor {
                factor = budget / want;
                tightest = room_words(topo, Some(&[n]));
                nodes = Some(vec![n]);
            }
        }
    } else if let Some(n) = e
        .init_cpu0()
        .then(|| crate::probes::workload::tasks::cpu0_target(topo))
        .flatten()
        .map(|(_, node)| node)
    {
        // -0 first places every area on one node; only later may the
        // kernel spread it, so that node alone must hold the test.
        let budget = topo.node_free_bytes(n) as f64 * pct / 1048576.0;
        if need_total > 0.0 && budget / need_total < factor {
            factor = budget / need_total;
            tightest = format!(
                "-0 places it all on node {n}: {}",
                room_words(topo, Some(&[n]))
            );
            nodes = Some(vec![n]);
        }
    } else {
        // Together, not node by node: a memory limit holds them all once.
        let free = crate::memory::admission::free_bytes(topo, None).unwrap_or(0) as f64 / 1048576.0;
        if need_total > 0.0 && free * pct / need_total < factor {
            factor = free * pct / need_total;
            tightest = room_words(topo, None);
        }
    }
    (factor < 1.0).then_some((factor, tightest, nodes))
}

use crate::memory::admission::room_words;

fn join(ids: &[usize]) -> String {
    ids.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests;
