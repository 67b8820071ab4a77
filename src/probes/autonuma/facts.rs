//! What the text and tables of an AutoNUMA run read, taken either from the
//! command's own plan and settings (live, before the first record exists)
//! or from the records of a results document: both give the same facts,
//! so a saved document prints as the command did.

use super::Settings;
use super::bench::{Plan, Test, Work};
use super::bind::Bind;
use super::records::{self, FALLBACK_NOTE_START, METHOD_NOTE_START};
use super::shape::Shape;
use super::watch::Method;
use crate::results::names::autonuma::{metric as am, param as ap, series as an};
use crate::results::names::{metric, param};
use crate::results::{Document, Record};
use crate::topology::Topology;

/// The command's opening facts: CPUs, nodes and how runs are watched.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub nr_cpus: usize,
    pub cpu_nodes: Vec<usize>,
    pub start_node: usize,
    pub balancing: Option<u32>,
    pub interval_s: f64,
    pub tolerance_pct: f64,
    /// `--sample-pages`; `None` with `--exact`.
    pub sample_pages: Option<usize>,
}

impl Header {
    /// Before the first run.
    pub fn live(topo: &Topology, nr_cpus: usize, start_node: usize, s: &Settings) -> Header {
        Header {
            nr_cpus,
            cpu_nodes: topo.usable_cpu_nodes().iter().collect(),
            start_node,
            balancing: topo.numa_balancing,
            interval_s: s.interval.as_secs_f64(),
            tolerance_pct: s.tolerance_pct,
            sample_pages: match s.method {
                Method::Sampled { max_pages } => Some(max_pages),
                Method::Exact => None,
            },
        }
    }

    /// From a run record of `doc`.
    pub fn of(doc: &Document, r: &Record) -> Header {
        Header {
            nr_cpus: uint(r, ap::NR_CPUS) as usize,
            cpu_nodes: r
                .params
                .get(ap::CPU_NODES)
                .and_then(|v| v.as_array())
                .map_or(Vec::new(), |a| {
                    a.iter()
                        .filter_map(|n| n.as_u64().map(|n| n as usize))
                        .collect()
                }),
            start_node: uint(r, ap::START_NODE) as usize,
            balancing: doc.host.numa_balancing,
            interval_s: float(r, ap::INTERVAL_S),
            tolerance_pct: float(r, ap::TOLERANCE_PCT),
            sample_pages: r
                .params
                .get(ap::SAMPLE_PAGES)
                .and_then(|v| v.as_u64())
                .map(|n| n as usize),
        }
    }
}

fn uint(r: &Record, key: &str) -> u64 {
    r.params.get(key).and_then(|v| v.as_u64()).unwrap_or(0)
}

fn float(r: &Record, key: &str) -> f64 {
    r.params.get(key).and_then(|v| v.as_f64()).unwrap_or(0.0)
}

/// A metric of `r`, if it has it.
pub fn value(r: &Record, key: &str) -> Option<f64> {
    r.metrics.get(key).map(|m| m.value)
}

/// Whether `r` is a run's record (not a test's summary).
pub fn is_run(r: &Record) -> bool {
    r.params.contains_key(ap::RUN)
}

/// The test a record belongs to.
pub fn test_of(r: &Record) -> Option<&str> {
    r.params.get(param::TEST).and_then(|v| v.as_str())
}

/// How a record's run placed threads and memory (the test itself where it
/// does not say).
pub fn bind_of(r: &Record) -> Bind {
    r.params
        .get(ap::BIND)
        .and_then(|v| v.as_str())
        .and_then(Bind::from_name)
        .unwrap_or(Bind::Free)
}

/// The test's name with its baseline's suffix: what a record's runs are
/// grouped by.
pub fn label_of(r: &Record) -> String {
    format!("{}{}", test_of(r).unwrap_or("?"), bind_of(r).suffix())
}

/// The plan a run record was made from; `None` for a test this numabench
/// does not know.
pub fn plan_of(r: &Record) -> Option<Plan> {
    let test = Test::from_name(test_of(r)?)?;
    let work = match (r.params.get(ap::LOOPS), r.params.get(ap::SECS)) {
        (_, Some(s)) => Work::Secs(s.as_u64()? as u32),
        (Some(l), None) => Work::Loops(l.as_u64()? as u32),
        (None, None) => return None,
    };
    let notes = r
        .notes
        .iter()
        .take_while(|n| !n.starts_with(METHOD_NOTE_START))
        .cloned()
        .collect();
    Some(Plan {
        test,
        bind: bind_of(r),
        nr_cpus: uint(r, ap::NR_CPUS) as usize,
        shape: Shape {
            processes: uint(r, param::PROCESSES) as usize,
            threads: (uint(r, param::THREADS) as usize).max(1),
            mem_bytes: uint(r, param::SIZE_BYTES),
            per_thread: r.params.get(ap::MEMORY).and_then(|v| v.as_str())
                == Some(ap::MEMORY_THREAD),
        },
        seed_mem_bytes: uint(r, ap::SEED_SIZE_BYTES),
        work,
        start_node: uint(r, ap::START_NODE) as usize,
        notes,
    })
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Whole,
    Interrupted,
    Failed,
}

/// One run as its row of the runs table reads it.
#[derive(Debug, Clone)]
pub struct Run {
    pub end: End,
    /// The work was a fixed time (`--secs`): GB/s is the result.
    pub fixed_time: bool,
    pub runtime_s: f64,
    /// Bytes all threads cleared per second, in 10^9.
    pub gb_s: f64,
    pub convergence_s: Option<f64>,
    /// Per node of the memory series ("node N"), its share at the end.
    pub shares: Vec<(String, f64)>,
    pub migrated: Option<f64>,
    pub hint_faults: Option<f64>,
    pub user_s: f64,
    pub system_s: f64,
    pub overhead_pct: f64,
    pub looks: usize,
    pub interval_s: f64,
    pub exact: bool,
    pub sampled_looks: u64,
    pub sampled_pages_max: u64,
    pub stride_max: u64,
    /// Why sampled looks gave way to numa_maps.
    pub fallback: Option<String>,
    /// Cores carrying two threads: at the last look, at most.
    pub doubled: (f64, f64),
}

impl Run {
    pub fn of(r: &Record) -> Run {
        let (interrupted, failed) = records::partial_notes(r);
        let runtime_s = value(r, metric::RUNTIME_S).unwrap_or(0.0);
        let data_gb = value(r, am::DATA_GB).unwrap_or(0.0);
        let share = r.params.get(ap::FINAL_SHARE_PCT);
        let shares = r
            .series
            .iter()
            .find(|s| s.name == an::MEMORY_PER_NODE)
            .map_or(Vec::new(), |s| {
                s.lines
                    .iter()
                    .map(|l| {
                        let n = l.label.strip_prefix("node ").unwrap_or(&l.label);
                        let pct = share.and_then(|m| m.get(n)).and_then(|v| v.as_f64());
                        (l.label.clone(), pct.unwrap_or(0.0))
                    })
                    .collect()
            });
        Run {
            fixed_time: r.params.contains_key(ap::SECS),
            end: match (interrupted, failed) {
                (true, _) => End::Interrupted,
                (false, true) => End::Failed,
                _ => End::Whole,
            },
            runtime_s,
            gb_s: if runtime_s > 0.0 {
                data_gb / runtime_s
            } else {
                0.0
            },
            convergence_s: value(r, metric::CONVERGENCE_S),
            shares,
            migrated: value(r, metric::NUMA_PAGES_MIGRATED),
            hint_faults: value(r, metric::NUMA_HINT_FAULTS),
            user_s: value(r, am::USER_S).unwrap_or(0.0),
            system_s: value(r, am::SYSTEM_S).unwrap_or(0.0),
            overhead_pct: value(r, am::SAMPLING_OVERHEAD_PCT).unwrap_or(0.0),
            looks: uint(r, ap::LOOKS) as usize,
            interval_s: float(r, ap::INTERVAL_S),
            exact: r.params.get(ap::LOOK_METHOD).and_then(|v| v.as_str())
                == Some(Method::Exact.name()),
            sampled_looks: uint(r, ap::SAMPLED_LOOKS),
            sampled_pages_max: uint(r, ap::SAMPLED_PAGES_MAX),
            stride_max: uint(r, ap::SAMPLE_STRIDE_MAX),
            fallback: fallback_of(r),
            doubled: (
                value(r, am::CORES_WITH_TWO_THREADS_END).unwrap_or(0.0),
                value(r, am::CORES_WITH_TWO_THREADS_MAX).unwrap_or(0.0),
            ),
        }
    }

    pub fn whole(&self) -> bool {
        self.end == End::Whole
    }
}

/// The method note's reason, without the hidden-pages clause that may
/// follow it.
fn fallback_of(r: &Record) -> Option<String> {
    let note = r
        .notes
        .iter()
        .find_map(|n| n.strip_prefix(FALLBACK_NOTE_START))?;
    let why = match note.rfind(records::CARRIED_NOTE_START) {
        Some(i) if note[i..].contains(records::CARRIED_NOTE_MARK) => &note[..i],
        _ => note,
    };
    Some(why.to_string())
}

/// The run records of `records` by test (a baseline apart from its test),
/// in the order the tests ran.
pub fn by_test<'a>(records: &[&'a Record]) -> Vec<(String, Vec<&'a Record>)> {
    let mut out: Vec<(String, Vec<&'a Record>)> = Vec::new();
    for r in records.iter().copied().filter(|r| is_run(r)) {
        let test = label_of(r);
        match out.iter_mut().find(|(t, _)| *t == test) {
            Some((_, runs)) => runs.push(r),
            None => out.push((test, vec![r])),
        }
    }
    out
}
