//! The four tests of the AutoNUMA benchmark (P processes x T threads, M
//! bytes of memory per process), sized for this machine, and each mapped
//! onto the mem workload engine's options.
//!
//! numa01 and numa01_THREAD_ALLOC: P = 2, T = nr_cpus / 2, M = 3 GiB, the
//! memory shared by all of a process's threads or split into per-thread
//! parts. numa02 and numa02_SMT: P = 1, T = nr_cpus or nr_cpus / 2, M = 1
//! GiB split into per-thread parts. numa01_PER_NODE, the test the slides
//! planned: P = nr_nodes, T = nr_cpus / nr_nodes, numa01's memory. nr_cpus
//! is the CPUs this process may use, nr_nodes the nodes they are on;
//! `--threads` sets T for every test. Every thread clears its memory with
//! memset (the benchmark's bzero loop) a fixed number of times, or for a
//! fixed time.

use super::bind::Bind;
use super::shape::Shape;
use crate::error::usage;
use crate::probes::workload::params::RawOptions;
use crate::results::Condition;
use crate::topology::Topology;
use anyhow::{Result, anyhow};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Bytes each thread clears in a default run: the loop count is chosen so
/// that every thread of every test writes about this much. On a 2-socket
/// server with all cores busy a thread gets some 2-5 GB/s of memset
/// bandwidth, so a run takes tens of seconds there: long enough for NUMA
/// balancing's scanner (256 MiB per scan period of 1 s and more) to find
/// and move gigabytes.
pub(crate) const DEFAULT_BYTES_PER_THREAD: u64 = 64 * GIB;

/// Share of the start node's free memory a test may use when `--mem` is not
/// given: the rest is left to the kernel and to the migration's copies.
pub(crate) const MEMORY_SHARE_PCT: u64 = 50;

/// One test of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Test {
    Numa01,
    Numa01ThreadAlloc,
    Numa02,
    Numa02Smt,
    Numa01PerNode,
}

impl Test {
    pub const ALL: [Test; 5] = [
        Test::Numa01,
        Test::Numa01ThreadAlloc,
        Test::Numa02,
        Test::Numa02Smt,
        Test::Numa01PerNode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Test::Numa01 => "numa01",
            Test::Numa01ThreadAlloc => "numa01_THREAD_ALLOC",
            Test::Numa02 => "numa02",
            Test::Numa02Smt => "numa02_SMT",
            Test::Numa01PerNode => "numa01_PER_NODE",
        }
    }

    pub fn from_name(name: &str) -> Option<Test> {
        Test::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The seed's shape for `nr_cpus` usable CPUs on `nr_nodes` nodes (at
    /// least one thread and one process).
    pub fn shape(self, nr_cpus: usize, nr_nodes: usize) -> Shape {
        let half = (nr_cpus / 2).max(1);
        let nodes = nr_nodes.max(1);
        let (processes, threads, mem_bytes, per_thread) = match self {
            Test::Numa01 => (2, half, 3 * GIB, false),
            Test::Numa01ThreadAlloc => (2, half, 3 * GIB, true),
            Test::Numa02 => (1, nr_cpus.max(1), GIB, true),
            Test::Numa02Smt => (1, half, GIB, true),
            Test::Numa01PerNode => (nodes, (nr_cpus / nodes).max(1), 3 * GIB, false),
        };
        Shape {
            processes,
            threads,
            mem_bytes,
            per_thread,
        }
    }
}

/// How long each run goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Work {
    /// Every thread makes this many passes over its memory.
    Loops(u32),
    /// Every thread works until the first one passes this many seconds.
    Secs(u32),
}

/// What the user asked for, beyond the test.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Asked {
    /// `--mem`: M in MiB instead of the seed's (scaled) figure.
    pub mem_mib: Option<u64>,
    pub loops: Option<u32>,
    pub secs: Option<u32>,
    /// `--threads`: T for every test instead of the seed's.
    pub threads: Option<usize>,
}

/// One test, ready to run here.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub test: Test,
    /// The test itself, or one of its baselines.
    pub bind: Bind,
    pub nr_cpus: usize,
    /// The shape with M as it will run (scaled or given).
    pub shape: Shape,
    /// M as the seed has it.
    pub seed_mem_bytes: u64,
    pub work: Work,
    /// The node every page starts on.
    pub start_node: usize,
    /// Scaling and defaults the reader should know about.
    pub notes: Vec<String>,
    /// What the notes say as data: M scaled down under the process's
    /// memory limit.
    pub conditions: Vec<Condition>,
}

impl Plan {
    /// The test's name, with its baseline's suffix: `numa01_HARD_BIND`.
    pub(crate) fn label(&self) -> String {
        format!("{}{}", self.test.name(), self.bind.suffix())
    }

    /// The same test with `bind`'s placement; its note says which.
    pub(crate) fn baseline(&self, bind: Bind, note: String) -> Plan {
        let mut p = self.clone();
        p.bind = bind;
        p.notes.push(note);
        p
    }
}

/// The node where all of a test's memory starts, and what it may map
/// there.
pub(crate) struct Start {
    pub node: usize,
    pub free: u64,
    /// `free` in words, naming the memory limit where that decided it.
    pub words: String,
    /// The memory limit's condition where `words` name it.
    pub limited: Option<Condition>,
}

impl Start {
    pub(crate) fn of(topo: &Topology, node: usize) -> Start {
        Start {
            node,
            free: topo.node_free_bytes(node),
            words: crate::memory::admission::room_words(topo, Some(&[node])),
            limited: crate::probes::sizing::room_condition(topo, Some(&[node])),
        }
    }
}

/// Sizes `test` for `nr_cpus` CPUs on `nr_nodes` nodes and the memory of
/// its start node. Without `--mem` the test uses at most
/// [`MEMORY_SHARE_PCT`] of that free memory, M scaled down to whole MiB
/// where needed; with `--mem` it must fit in the free memory.
pub(crate) fn plan(
    test: Test,
    nr_cpus: usize,
    nr_nodes: usize,
    start: &Start,
    asked: &Asked,
) -> Result<Plan> {
    let (start_node, start_free) = (start.node, start.free);
    let mut shape = test.shape(nr_cpus, nr_nodes);
    let seed_mem_bytes = shape.mem_bytes;
    let mut notes = Vec::new();
    let mut conditions = Vec::new();
    let procs = shape.processes as u64;
    match asked.threads {
        Some(t) if t != shape.threads => {
            notes.push(format!(
                "T = {t} thread(s) per process as given by --threads (the benchmark's: {})",
                shape.threads
            ));
            shape.threads = t;
        }
        Some(_) => {}
        None if nr_cpus < 2
            && matches!(
                test,
                Test::Numa01 | Test::Numa01ThreadAlloc | Test::Numa02Smt
            ) =>
        {
            notes.push(format!(
                "T = nr_cpus/2 is 0 with {nr_cpus} CPU: 1 thread per process instead"
            ));
        }
        None => {}
    }
    match asked.mem_mib {
        Some(mib) => {
            let want = mib.saturating_mul(MIB).saturating_mul(procs);
            // The shared admission rule, on the node where it all starts.
            if want > crate::memory::admission::limit(start_free) {
                return Err(usage(format!(
                    "--mem {mib}: {procs} x {mib} MiB for {} is more than {}% of {}, where all of it starts; give a smaller --mem",
                    test.name(),
                    crate::memory::admission::SHARE_PCT,
                    start.words
                )));
            }
            shape.mem_bytes = mib * MIB;
            if shape.mem_bytes != seed_mem_bytes {
                notes.push(format!(
                    "M = {mib} MiB per process as given by --mem (the benchmark's: {} MiB)",
                    seed_mem_bytes / MIB
                ));
            }
        }
        None => {
            let budget = (u128::from(start_free) * u128::from(MEMORY_SHARE_PCT) / 100) as u64;
            if shape.total_bytes() > budget {
                let mib = budget / procs / MIB;
                if mib < shape.threads as u64 {
                    return Err(anyhow!(
                        "{}: {MEMORY_SHARE_PCT}% of {} cannot give {} thread(s) 1 MiB each",
                        test.name(),
                        start.words,
                        shape.threads as u64 * procs
                    ));
                }
                shape.mem_bytes = mib * MIB;
                notes.push(format!(
                    "M scaled from {} to {mib} MiB per process: all memory starts on node {start_node}, and a test uses at most {MEMORY_SHARE_PCT}% of {} (--mem overrides)",
                    seed_mem_bytes / MIB,
                    start.words
                ));
                conditions.extend(start.limited.clone());
            }
        }
    }
    if shape.bytes_per_thread_pass() < 8 {
        return Err(usage(format!(
            "--mem {}: {} threads per process leave each thread less than 8 bytes",
            shape.mem_bytes / MIB,
            shape.threads
        )));
    }
    let work = match (asked.loops, asked.secs) {
        (_, Some(s)) => Work::Secs(s),
        (Some(l), None) => Work::Loops(l),
        (None, None) => {
            let l = default_loops(&shape);
            notes.push(format!(
                "{l} loops: enough for each thread to clear {} GiB (--loops or --secs override)",
                DEFAULT_BYTES_PER_THREAD / GIB
            ));
            Work::Loops(l)
        }
    };
    Ok(Plan {
        test,
        bind: Bind::Free,
        nr_cpus,
        shape,
        seed_mem_bytes,
        work,
        start_node,
        notes,
        conditions,
    })
}

/// Passes over its memory that make each thread clear
/// [`DEFAULT_BYTES_PER_THREAD`].
pub(crate) fn default_loops(shape: &Shape) -> u32 {
    let pass = shape.bytes_per_thread_pass().max(1);
    u32::try_from(DEFAULT_BYTES_PER_THREAD.div_ceil(pass)).unwrap_or(u32::MAX)
}

/// MiB as the engine reads its size options (a decimal number of 2^20
/// bytes); the shortest form that reads back as the same number.
fn mb(bytes: u64) -> String {
    format!("{}", bytes as f64 / MIB as f64)
}

/// The engine's options for `plan`: memset passes over process (-P) or
/// thread (-T) memory, written once at allocation from the start node's
/// CPUs under a bind policy that is dropped again before the work starts
/// (-0 -I), tasks released together.
pub(crate) fn engine_options(plan: &Plan) -> RawOptions {
    let s = &plan.shape;
    let (mb_proc, mb_thread) = if s.per_thread {
        (None, Some(mb(s.mem_bytes / s.threads as u64)))
    } else {
        (Some(mb(s.mem_bytes)), None)
    };
    let (nr_loops, nr_secs) = match plan.work {
        Work::Loops(l) => (Some(l), 0),
        Work::Secs(secs) => (None, secs),
    };
    RawOptions {
        nr_proc: Some(s.processes as i64),
        nr_threads: Some(s.threads as i64),
        mb_proc,
        mb_thread,
        nr_loops,
        nr_secs,
        data_zero_memset: true,
        data_rand_walk: false,
        data_backwards: false,
        init_random: true,
        init_cpu0: true,
        quiet: true,
        serialize_startup: true,
        ..RawOptions::seed_defaults()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FREE: u64 = 64 * GIB;

    fn planned(test: Test, cpus: usize, free: u64, asked: Asked) -> Plan {
        plan(test, cpus, 2, &on0(free), &asked).unwrap()
    }

    fn on0(free: u64) -> Start {
        Start {
            node: 0,
            free,
            words: format!("the {} free on node 0", crate::units::bytes(free)),
            limited: None,
        }
    }

    #[test]
    fn shapes_follow_the_slides() {
        let s = |t: Test| {
            let s = t.shape(48, 2);
            (s.processes, s.threads, s.mem_bytes / MIB, s.per_thread)
        };
        assert_eq!(s(Test::Numa01), (2, 24, 3072, false));
        assert_eq!(s(Test::Numa01ThreadAlloc), (2, 24, 3072, true));
        assert_eq!(s(Test::Numa02), (1, 48, 1024, true));
        assert_eq!(s(Test::Numa02Smt), (1, 24, 1024, true));
        // Odd counts round down; one CPU still gets one thread.
        assert_eq!(Test::Numa01.shape(5, 2).threads, 2);
        assert_eq!(Test::Numa02Smt.shape(1, 1).threads, 1);
        assert_eq!(Test::Numa02.shape(1, 1).threads, 1);
        assert_eq!(Test::Numa01.shape(48, 2).total_bytes(), 6 * GIB);
        // PER_NODE: a process per node, the node's share of the CPUs each.
        assert_eq!(s(Test::Numa01PerNode), (2, 24, 3072, false));
        let p = Test::Numa01PerNode.shape(64, 8);
        assert_eq!((p.processes, p.threads), (8, 8));
        assert_eq!(Test::Numa01PerNode.shape(1, 1).processes, 1);
    }

    #[test]
    fn names_round_trip() {
        for t in Test::ALL {
            assert_eq!(Test::from_name(t.name()), Some(t));
        }
        assert_eq!(Test::from_name("numa03"), None);
    }

    #[test]
    fn passes_are_whole_memory_or_the_threads_part() {
        let s = Test::Numa01.shape(8, 2);
        assert_eq!(s.bytes_per_thread_pass(), 3 * GIB);
        let s = Test::Numa02.shape(8, 2);
        assert_eq!(s.bytes_per_thread_pass(), GIB / 8);
        // Default loops: 64 GiB per thread.
        assert_eq!(default_loops(&Test::Numa01.shape(8, 2)), 22);
        assert_eq!(default_loops(&Test::Numa02.shape(8, 2)), 512);
        assert_eq!(default_loops(&Test::Numa01ThreadAlloc.shape(8, 2)), 86);
    }

    #[test]
    fn memory_is_scaled_to_half_the_start_nodes_free_memory() {
        // Plenty free: the seed's figures, no note about memory.
        let p = planned(Test::Numa01, 4, FREE, Asked::default());
        assert_eq!(p.shape.mem_bytes, 3 * GIB);
        assert!(
            !p.notes.iter().any(|n| n.contains("scaled")),
            "{:?}",
            p.notes
        );
        // 4 GiB free: 2 GiB for 2 processes, 1024 MiB each.
        let p = planned(Test::Numa01, 4, 4 * GIB, Asked::default());
        assert_eq!(p.shape.mem_bytes, GIB);
        assert_eq!(p.seed_mem_bytes, 3 * GIB);
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("scaled from 3072 to 1024 MiB")),
            "{:?}",
            p.notes
        );
        assert!(p.shape.total_bytes() <= 4 * GIB / 2);
        // Uneven budgets round down to whole MiB.
        let p = planned(Test::Numa02, 2, 1000 * MIB + 5, Asked::default());
        assert_eq!(p.shape.mem_bytes, 500 * MIB);
        // Too little for one MiB per thread: a runtime failure, not bad input.
        let e = plan(Test::Numa02, 64, 2, &on0(100 * MIB), &Asked::default()).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 1, "{e}");
    }

    #[test]
    fn mem_overrides_scaling_but_must_fit() {
        let asked = Asked {
            mem_mib: Some(64),
            ..Default::default()
        };
        let p = planned(Test::Numa01ThreadAlloc, 4, 4 * GIB, asked);
        assert_eq!(p.shape.mem_bytes, 64 * MIB);
        assert!(p.notes.iter().any(|n| n.contains("--mem")), "{:?}", p.notes);
        let asked = Asked {
            mem_mib: Some(3000),
            ..Default::default()
        };
        // 2 x 3000 MiB does not fit in 4 GiB.
        let e = plan(Test::Numa01, 4, 2, &on0(4 * GIB), &asked).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("4 GiB free on node 0"), "{e}");
    }

    #[test]
    fn a_memory_limit_that_decides_is_named_not_the_node() {
        let mut topo = crate::topology::fixture("two-node");
        topo.memory_limit = Some(crate::topology::MemoryLimit {
            headroom_bytes: 126 * MIB,
            limit_bytes: 128 * MIB,
            source: "memory cgroup /x (memory.limit_in_bytes)".into(),
        });
        let start = Start::of(&topo, 0);
        let p = plan(Test::Numa02, 4, 2, &start, &Asked::default()).unwrap();
        let note = p.notes.iter().find(|n| n.contains("M scaled")).unwrap();
        assert!(
            note.contains("126 MiB left under memory cgroup /x"),
            "{note}"
        );
        let asked = Asked {
            mem_mib: Some(200),
            ..Default::default()
        };
        let e = plan(Test::Numa02, 4, 2, &start, &asked).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("memory cgroup /x"), "{e}");
    }

    #[test]
    fn threads_are_set_for_every_test_and_said() {
        let asked = Asked {
            threads: Some(3),
            ..Default::default()
        };
        for t in Test::ALL {
            let p = planned(t, 48, FREE, asked);
            assert_eq!(p.shape.threads, 3, "{t:?}");
            assert!(p.notes.iter().any(|n| n.contains("--threads")), "{t:?}");
        }
        // Threads of their own split M: 3 x 1 GiB / 3 for numa02.
        let p = planned(Test::Numa02, 48, FREE, asked);
        assert_eq!(p.shape.bytes_per_thread_pass(), GIB / 3);
        // The seed's own T needs no note.
        let p = planned(Test::Numa02, 3, FREE, asked);
        assert!(
            !p.notes.iter().any(|n| n.contains("--threads")),
            "{:?}",
            p.notes
        );
        assert_eq!(p.label(), "numa02");
        let b = p.baseline(Bind::Hard, "x".into());
        assert_eq!(
            (b.label().as_str(), b.notes.last().unwrap().as_str()),
            ("numa02_HARD_BIND", "x")
        );
    }

    #[test]
    fn work_is_loops_secs_or_the_default_volume() {
        let p = planned(
            Test::Numa02,
            2,
            FREE,
            Asked {
                loops: Some(3),
                ..Default::default()
            },
        );
        assert_eq!(p.work, Work::Loops(3));
        let p = planned(
            Test::Numa02,
            2,
            FREE,
            Asked {
                secs: Some(5),
                ..Default::default()
            },
        );
        assert_eq!(p.work, Work::Secs(5));
        let p = planned(Test::Numa02, 2, FREE, Asked::default());
        assert_eq!(p.work, Work::Loops(128));
    }

    #[test]
    fn engine_options_map_each_test() {
        let topo = crate::topology::fixture("two-node");
        let p = planned(Test::Numa01, 4, FREE, Asked::default());
        let e = crate::probes::workload::params::resolve(&engine_options(&p), &topo).unwrap();
        assert_eq!((e.nr_proc, e.nr_threads), (2, 2));
        assert_eq!((e.bytes_process, e.bytes_thread), (3 * GIB, 0));
        assert!(e.data_zero_memset && !e.data_rand_walk);
        assert!(e.init_cpu0 && e.init_random && e.serialize_startup);
        assert_eq!(e.nr_loops, 22);
        let p = planned(
            Test::Numa02,
            3,
            FREE,
            Asked {
                secs: Some(7),
                ..Default::default()
            },
        );
        let e = crate::probes::workload::params::resolve(&engine_options(&p), &topo).unwrap();
        assert_eq!((e.nr_proc, e.nr_threads), (1, 3));
        assert_eq!(e.bytes_process, 0);
        // 1 GiB / 3 threads, truncated to bytes as the engine reads MB.
        assert_eq!(e.bytes_thread, GIB / 3);
        assert_eq!((e.nr_secs, e.nr_loops), (7, u32::MAX));
    }
}
