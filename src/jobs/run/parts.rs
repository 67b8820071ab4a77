//! The parts a profile adds to the matrix and the sweep, as tables, and how
//! each runs: as a child numabench printing its results document
//! (`--json`). The workload
//! engines fork, which wants a single-threaded parent, and a child keeps one
//! part's failure from taking the others.

use super::Profile;
use crate::results::names::{probe, run::NOT_COMPLETE};
use crate::results::{Document, Record};
use crate::topology::Topology;

/// One part: the probe its records carry and its command line (the
/// command is named as the probe).
pub struct Part {
    pub probe: &'static str,
    pub args: fn(&Topology) -> Vec<String>,
    /// Maps a chase buffer past the L3, as the matrix's latency cell does.
    pub chases: bool,
}

/// The parts of a profile, in the order they run.
pub fn of(profile: Profile) -> Vec<&'static Part> {
    let mut parts = Vec::new();
    if profile >= Profile::Default {
        parts.extend(PROBES.iter());
    }
    if profile >= Profile::Full {
        parts.extend(WORKLOADS.iter());
    }
    parts
}

/// The short probes of the default profile, each a few seconds on a small
/// machine and growing with its node or CPU count.
pub const PROBES: [Part; 5] = [
    Part {
        probe: probe::LATENCY,
        chases: true,
        // Page-local and full-random on every node pair, THP, past the L3.
        // Page-local first: it is the figure people quote, and the
        // full-random one repeats the matrix's idle-latency cell.
        args: |topo| {
            let bytes = chase_bytes(topo);
            let limit = time_limit(12, chase_cell_secs(3, bytes), 2 * node_pairs(topo));
            words(&[
                probe::LATENCY,
                "-s",
                &mib(bytes),
                "--pages",
                "thp",
                "--pattern",
                "page-local,full-random",
                "-t",
                &limit,
                "--json",
            ])
        },
    },
    Part {
        probe: probe::MLP,
        chases: true,
        args: |topo| {
            let bytes = chase_bytes(topo);
            let limit = time_limit(10, chase_cell_secs(4, bytes), node_pairs(topo));
            words(&[
                probe::MLP,
                "-s",
                &mib(bytes),
                "--pairs",
                "all",
                "-t",
                &limit,
                "--json",
            ])
        },
    },
    Part {
        probe: probe::LOADED,
        chases: true,
        // A short curve: idle, four load levels, the near and the far pair
        // of the first CPU node; the far pair is not begun after 60 s.
        // Page-local: the knee is where latency doubles, and the page walks
        // of a large full-random chase (481 ns idle against 144 ns on a
        // 7.5 GiB buffer) would double the idle figure the load must match.
        args: |_| {
            words(&[
                probe::LOADED,
                "--pattern",
                "page-local",
                "--pairs",
                "near-far",
                "--delays",
                "0,100,400,1500,20000",
                "--time-limit",
                "60",
                "--json",
            ])
        },
    },
    Part {
        probe: probe::C2C,
        chases: false,
        // Fewer samples, and sampled pairs above 16 CPUs, two per
        // (class, node pair): the node summary, not every pair.
        args: |_| {
            words(&[
                probe::C2C,
                "-n",
                "100",
                "--sample-above",
                "16",
                "--per-group",
                "2",
                "--time-limit",
                "10",
                "--json",
            ])
        },
    },
    PEAK,
];

/// Peak injection: all six mixes (the best is not always read, 1:1, triad
/// or write: 2:1 or 3:1 wins on some machines, with either store kind),
/// both store kinds, all cores of each CPU node into every target.
const PEAK: Part = Part {
    probe: probe::PEAK,
    chases: false,
    args: |topo| {
        // Each CPU node into every memory node, and interleaved with two or more.
        let mem = topo.usable_memory_nodes().len();
        let targets = mem + usize::from(mem > 1);
        let limit = time_limit(20, 3, topo.usable_cpu_nodes().len() * targets);
        words(&[
            probe::PEAK,
            "--threads",
            "all",
            "--time-limit",
            &limit,
            "--json",
        ])
    },
};

/// (CPU node, memory node) pairs: what the chase parts measure.
fn node_pairs(topo: &Topology) -> usize {
    topo.usable_cpu_nodes().len() * topo.usable_memory_nodes().len()
}

/// A part's time limit in seconds: `base`, or `per_cell` for each of
/// `cells` where they need more. The limit guards against a part that
/// hangs or crawls; it must not cut a healthy part short, or a machine
/// with many nodes would see its first pairs only.
fn time_limit(base: u64, per_cell: u64, cells: usize) -> String {
    base.max(per_cell * cells as u64).to_string()
}

/// The chase buffer of the latency parts: the matrix's idle-latency buffer
/// (16x the L3, at least 1 GiB, at most half a node's free memory), taken
/// at the node with the least room since one size serves every pair. The
/// full-random figure by pattern then repeats the matrix's idle latency at
/// the same size, and page-local differs from it by the pattern alone; with
/// two sizes a reader could not tell the size's share of a difference from
/// the host's drift.
fn chase_bytes(topo: &Topology) -> usize {
    use crate::probes::sizing::cap;
    let cpu = topo.allowed.cpus.iter().next().unwrap_or(0);
    let wanted = crate::probes::sizing::chase_bytes(topo, cpu);
    topo.usable_memory_nodes()
        .iter()
        .map(|m| cap(topo, wanted, m).0)
        .min()
        .unwrap_or(wanted)
}

/// `bytes` as a size argument in whole MiB.
fn mib(bytes: usize) -> String {
    format!("{}M", bytes >> 20)
}

/// Seconds one chase measurement of a part may take on a `bytes` buffer:
/// `base`, and 2 s for each GiB to map, fault in and link. A big L3 makes
/// a big buffer (7.5 GiB beside a 480 MiB L3), and a fresh virtual
/// machine's first touch of it took 14.5 s: a flat limit cut such a part
/// after its first pattern.
fn chase_cell_secs(base: u64, bytes: usize) -> u64 {
    base + 2 * (bytes as u64).div_ceil(1 << 30)
}

/// The workload parts `--profile full` adds.
pub const WORKLOADS: [Part; 3] = [
    Part {
        probe: probe::MEM,
        chases: false,
        args: |_| words(&[probe::MEM, "--all", "--secs", "5", "--json"]),
    },
    Part {
        probe: probe::AUTONUMA,
        chases: false,
        args: |_| words(&[probe::AUTONUMA, "all", "--json"]),
    },
    Part {
        probe: probe::SCHED,
        chases: false,
        // One task per allowed CPU; the default size and passes keep the
        // arrays beyond the cache and the tasks busy past the burst at 3 s.
        args: |topo| {
            let tasks = topo.allowed.cpus.len().max(2).to_string();
            words(&[probe::SCHED, &tasks, "--json"])
        },
    },
];

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// What a part left: its records (with a `NOT_COMPLETE` record when it
/// failed while no stop was asked for) and its log (its stderr, the human
/// output).
pub struct Ran {
    pub records: Vec<Record>,
    pub log: String,
}

/// Runs `part` as a child; `stopped` says whether a stop was asked for,
/// after which a failure is the stop's and its own records say so.
pub fn run_part(part: &Part, topo: &Topology, stopped: impl Fn() -> bool) -> Ran {
    let (mut records, log, failure) = stage(&(part.args)(topo));
    if let Some(why) = failure.filter(|_| !stopped()) {
        let name = part.probe;
        eprintln!("numabench: warning: {name}: {why}; the other parts go on");
        let mut note = Record::new(name, NOT_COMPLETE);
        note.notes.push(format!("{name}: {why} (see {name}.log)"));
        records.insert(0, note);
    }
    Ran { records, log }
}

/// Runs this binary with `args`; returns the records of the results
/// document it printed (those of a failed run too, when it printed one),
/// its stderr (its human output) and why it failed, if it did.
fn stage(args: &[String]) -> (Vec<Record>, String, Option<String>) {
    let out = match std::env::current_exe().and_then(|exe| {
        use std::process::Stdio;
        let mut cmd = std::process::Command::new(exe);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        crate::interrupt::tie_child(&mut cmd);
        wait_passing_stops_on(cmd.spawn()?)
    }) {
        Ok(out) => out,
        Err(e) => {
            return (
                Vec::new(),
                String::new(),
                Some(format!("cannot start: {e}")),
            );
        }
    };
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    let doc = serde_json::from_slice::<Document>(&out.stdout);
    let failure = if !out.status.success() {
        let last = log.lines().rev().find(|l| !l.trim().is_empty());
        Some(match last {
            Some(last) => format!("failed ({}): {last}", out.status),
            None => format!("failed ({}) with nothing on stderr", out.status),
        })
    } else {
        doc.as_ref()
            .err()
            .map(|e| format!("its results do not parse: {e}"))
    };
    (doc.map(|d| d.records).unwrap_or_default(), log, failure)
}

/// Waits for a stage, passing a stop signal this process receives on to it
/// once (it is in a process group of its own); a second signal kills it
/// with this process (see `interrupt`).
fn wait_passing_stops_on(child: std::process::Child) -> std::io::Result<std::process::Output> {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    let pid = child.id() as i32;
    crate::interrupt::set_child(pid);
    let (tx, rx) = channel();
    let (give, take) = channel::<std::process::Child>();
    let waiter = crate::sys::threads::spawn((0, 1), move || {
        if let Ok(child) = take.recv() {
            let _ = tx.send(child.wait_with_output());
        }
    });
    if waiter.is_err() {
        // No thread to wait with (a task limit): wait here. A first stop
        // is then not passed on; a second still ends the stage with this
        // process.
        let out = child.wait_with_output();
        crate::interrupt::set_child(0);
        return out;
    }
    let _ = give.send(child);
    let mut passed_on = false;
    let out = loop {
        match rx.recv_timeout(std::time::Duration::from_millis(50)) {
            Ok(out) => break out,
            Err(RecvTimeoutError::Timeout) => {
                if let Some(sig) = crate::interrupt::requested()
                    && !passed_on
                {
                    crate::interrupt::pass_on(pid, sig);
                    passed_on = true;
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                break Err(std::io::Error::other("lost track of the stage"));
            }
        }
    };
    crate::interrupt::set_child(0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size_arg(part: &Part, topo: &Topology) -> String {
        let args = (part.args)(topo);
        let at = args.iter().position(|a| a == "-s").expect("a -s argument");
        args[at + 1].clone()
    }

    fn limit_arg(part: &Part, topo: &Topology) -> u64 {
        let args = (part.args)(topo);
        let at = args
            .iter()
            .position(|a| a == "-t" || a == "--time-limit")
            .expect("a time limit");
        args[at + 1].parse().unwrap()
    }

    #[test]
    fn time_limits_grow_with_the_pairs_to_measure() {
        let part = |name: &str| PROBES.iter().find(|p| p.probe == name).unwrap();
        let one = crate::topology::fixture("two-node");
        let four = crate::topology::fixture("amd-4node");
        let pairs = |t: &Topology| t.usable_cpu_nodes().len() * t.usable_memory_nodes().len();
        assert!(pairs(&four) >= 16, "{}", pairs(&four));
        for name in [probe::LATENCY, probe::MLP, probe::PEAK] {
            let (small, big) = (limit_arg(part(name), &one), limit_arg(part(name), &four));
            assert!(
                big > small,
                "{name}: {big} s for four nodes, {small} s for two"
            );
            assert!(big >= 2 * pairs(&four) as u64, "{name}: {big} s");
        }
    }

    #[test]
    fn chase_limits_grow_with_the_buffer_and_page_local_comes_first() {
        let part = |name: &str| PROBES.iter().find(|p| p.probe == name).unwrap();
        let mut topo = crate::topology::fixture("two-node");
        let small: Vec<u64> = [probe::LATENCY, probe::MLP]
            .iter()
            .map(|n| limit_arg(part(n), &topo))
            .collect();
        let last = topo.caches.iter().map(|c| c.level).max().unwrap();
        for c in topo.caches.iter_mut().filter(|c| c.level == last) {
            c.size_bytes = 480 << 20;
        }
        for node in topo.nodes.iter_mut() {
            node.mem_free_bytes = Some(64 << 30);
        }
        assert_eq!(size_arg(part(probe::LATENCY), &topo), "7680M");
        for (name, before) in [probe::LATENCY, probe::MLP].iter().zip(small) {
            let after = limit_arg(part(name), &topo);
            assert!(
                after > before,
                "{name}: {after} s at 7.5 GiB, {before} s at 1 GiB"
            );
        }
        // Two patterns on each of the fixture's pairs, each allowed the
        // 14.5 s a first touch of 7.5 GiB took.
        let pairs = topo.usable_cpu_nodes().len() * topo.usable_memory_nodes().len();
        assert!(limit_arg(part(probe::LATENCY), &topo) as f64 >= 2.0 * pairs as f64 * 14.5);
        let args = (part(probe::LATENCY).args)(&topo);
        let at = args.iter().position(|a| a == "--pattern").unwrap();
        assert_eq!(args[at + 1], "page-local,full-random");
        let args = (part(probe::LOADED).args)(&topo);
        let at = args.iter().position(|a| a == "--pattern").unwrap();
        assert_eq!(args[at + 1], "page-local");
    }

    #[test]
    fn the_chase_parts_use_the_matrix_idle_latency_buffer() {
        let mut topo = crate::topology::fixture("two-node");
        let last = topo.caches.iter().map(|c| c.level).max().unwrap();
        for c in topo.caches.iter_mut().filter(|c| c.level == last) {
            c.size_bytes = 100 << 20;
        }
        let cpu = topo.allowed.cpus.iter().next().unwrap();
        assert_eq!(crate::probes::sizing::chase_bytes(&topo, cpu), 1600 << 20);
        for part in PROBES
            .iter()
            .filter(|p| [probe::LATENCY, probe::MLP].contains(&p.probe))
        {
            assert_eq!(size_arg(part, &topo), "1600M", "{}", part.probe);
        }
        // Small caches: the 1 GiB floor.
        let small = crate::topology::fixture("two-node");
        assert_eq!(size_arg(&PROBES[0], &small), "1024M");
        // Little free memory on one node: the matrix's cap, half of it.
        let tight = topo.nodes.iter().find(|n| n.has_memory).unwrap().id;
        topo.nodes
            .iter_mut()
            .find(|n| n.id == tight)
            .unwrap()
            .mem_free_bytes = Some(1 << 30);
        assert_eq!(topo.node_free_bytes(tight), 1 << 30);
        for part in PROBES
            .iter()
            .filter(|p| [probe::LATENCY, probe::MLP].contains(&p.probe))
        {
            assert_eq!(size_arg(part, &topo), "512M", "{}", part.probe);
        }
    }
}
