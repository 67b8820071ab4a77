//! What the text and tables of an AutoNUMA run read, taken either from the
//! command's own plan and settings (live, before the first record exists)
//! or from the records of a results document: both give the same facts,
//! so a saved document prints as the command did.

use super::Settings;
use super::bench::{Plan, Test, Work};
use super::bind::Bind;
use super::shape::Shape;
use super::watch::Method;
use crate::results::names::autonuma::{metric as am, param as ap, series as an};
use crate::results::names::{metric, param};
use crate::results::{Condition, Document, Record};
use crate::topology::Topology;

/// The command's opening facts: CPUs, nodes and how runs are watched.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Header {
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
    pub(crate) fn live(topo: &Topology, nr_cpus: usize, start_node: usize, s: &Settings) -> Header {
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
    pub(crate) fn of(doc: &Document, r: &Record) -> Header {
        Header {
            nr_cpus: count(r, ap::NR_CPUS),
            cpu_nodes: r
                .u64s_param(ap::CPU_NODES)
                .map_or(Vec::new(), |a| a.into_iter().map(|n| n as usize).collect()),
            start_node: count(r, ap::START_NODE),
            balancing: doc.host.numa_balancing,
            interval_s: float(r, ap::INTERVAL_S),
            tolerance_pct: float(r, ap::TOLERANCE_PCT),
            sample_pages: r.usize_param(ap::SAMPLE_PAGES),
        }
    }
}

fn uint(r: &Record, key: &str) -> u64 {
    r.u64_param(key).unwrap_or(0)
}

fn count(r: &Record, key: &str) -> usize {
    uint(r, key) as usize
}

fn float(r: &Record, key: &str) -> f64 {
    r.f64_param(key).unwrap_or(0.0)
}

/// Whether `r` is a run's record (not a test's summary).
pub(crate) fn is_run(r: &Record) -> bool {
    r.has_param(ap::RUN)
}

/// The test a record belongs to.
pub(crate) fn test_of(r: &Record) -> Option<&str> {
    r.str_param(param::TEST)
}

/// How a record's run placed threads and memory (the test itself where it
/// does not say).
pub(crate) fn bind_of(r: &Record) -> Bind {
    r.str_param(ap::BIND)
        .and_then(Bind::from_name)
        .unwrap_or(Bind::Free)
}

/// The test's name with its baseline's suffix: what a record's runs are
/// grouped by.
pub(crate) fn label_of(r: &Record) -> String {
    format!("{}{}", test_of(r).unwrap_or("?"), bind_of(r).suffix())
}

/// The plan a run record was made from; `None` for a test this numabench
/// does not know.
pub(crate) fn plan_of(r: &Record) -> Option<Plan> {
    let test = Test::from_name(test_of(r)?)?;
    let work = match (r.has_param(ap::LOOPS), r.has_param(ap::SECS)) {
        (_, true) => Work::Secs(r.u64_param(ap::SECS)? as u32),
        (true, false) => Work::Loops(r.u64_param(ap::LOOPS)? as u32),
        (false, false) => return None,
    };
    let plan_notes = r.usize_param(ap::PLAN_NOTES).unwrap_or_else(|| {
        // Written before the record said: its notes are the plan's, the
        // method note, then the checks.
        r.notes.len().saturating_sub(1 + check_notes(r))
    });
    // The plan's conditions: M scaled under the memory limit, the only
    // kind a plan gives.
    let conditions = r
        .conditions
        .iter()
        .filter(|c| matches!(c, Condition::ScaledByMemoryLimit { .. }))
        .cloned()
        .collect();
    Some(Plan {
        test,
        bind: bind_of(r),
        nr_cpus: count(r, ap::NR_CPUS),
        shape: Shape {
            processes: count(r, param::PROCESSES),
            threads: count(r, param::THREADS).max(1),
            mem_bytes: uint(r, param::SIZE_BYTES),
            per_thread: r.str_param(ap::MEMORY) == Some(ap::MEMORY_THREAD),
        },
        seed_mem_bytes: uint(r, ap::SEED_SIZE_BYTES),
        work,
        start_node: count(r, ap::START_NODE),
        notes: r.notes.iter().take(plan_notes).cloned().collect(),
        conditions,
    })
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    Whole,
    Interrupted,
    Failed,
}

/// One run as its row of the runs table reads it.
#[derive(Debug, Clone)]
pub(crate) struct Run {
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
    pub(crate) fn of(r: &Record) -> Run {
        let value = |key: &str| r.value(key);
        let runtime_s = value(metric::RUNTIME_S).unwrap_or(0.0);
        let data_gb = value(am::DATA_GB).unwrap_or(0.0);
        let share = r.map_param(ap::FINAL_SHARE_PCT);
        let shares = r
            .series
            .iter()
            .find(|s| s.name == an::MEMORY_PER_NODE)
            .map_or(Vec::new(), |s| {
                s.lines
                    .iter()
                    .map(|l| {
                        let n = l.label.strip_prefix("node ").unwrap_or(&l.label);
                        let pct = share.and_then(|m| m.get(n)?.as_f64());
                        (l.label.clone(), pct.unwrap_or(0.0))
                    })
                    .collect()
            });
        Run {
            fixed_time: r.has_param(ap::SECS),
            end: if r.cut_by_signal().is_some() {
                End::Interrupted
            } else if r.part_failed().is_some() {
                End::Failed
            } else {
                End::Whole
            },
            runtime_s,
            gb_s: if runtime_s > 0.0 {
                data_gb / runtime_s
            } else {
                0.0
            },
            convergence_s: value(metric::CONVERGENCE_S),
            shares,
            migrated: value(metric::NUMA_PAGES_MIGRATED),
            hint_faults: value(metric::NUMA_HINT_FAULTS),
            user_s: value(am::USER_S).unwrap_or(0.0),
            system_s: value(am::SYSTEM_S).unwrap_or(0.0),
            overhead_pct: value(am::SAMPLING_OVERHEAD_PCT).unwrap_or(0.0),
            looks: count(r, ap::LOOKS),
            interval_s: float(r, ap::INTERVAL_S),
            exact: r.str_param(ap::LOOK_METHOD) == Some(Method::Exact.name()),
            sampled_looks: uint(r, ap::SAMPLED_LOOKS),
            sampled_pages_max: uint(r, ap::SAMPLED_PAGES_MAX),
            stride_max: uint(r, ap::SAMPLE_STRIDE_MAX),
            fallback: r.fallback_method().map(str::to_string),
            doubled: (
                value(am::CORES_WITH_TWO_THREADS_END).unwrap_or(0.0),
                value(am::CORES_WITH_TWO_THREADS_MAX).unwrap_or(0.0),
            ),
        }
    }

    pub(crate) fn whole(&self) -> bool {
        self.end == End::Whole
    }
}

/// How many notes [`super::records::checks`] gave a run record, counted
/// from the figures the record holds as `checks` decided them: for a record
/// written before it said how many of its notes are the plan's. A stop by a
/// signal or a task that died is not counted: a record from then has no
/// condition that says so.
fn check_notes(r: &Record) -> usize {
    let first_look_off_start = bind_of(r) == Bind::Free && first_look_off(r);
    let foreign_policies = r
        .strs_param(ap::POLICIES_SEEN)
        .is_some_and(|p| p.iter().any(|p| *p != "default"));
    let no_look = r.u64_param(ap::LOOKS) == Some(0);
    let off_bound_node = r
        .placement
        .as_ref()
        .and_then(|p| p.on_target_pct)
        .is_some_and(|p| p < 99.0);
    let off_cpus = r.u64_param(ap::TASKS_OFF_CPUS).is_some_and(|n| n > 0);
    [
        first_look_off_start,
        foreign_policies,
        no_look,
        off_bound_node,
        off_cpus,
    ]
    .into_iter()
    .filter(|&b| b)
    .count()
}

/// Whether less than 99% of the memory at the first look was on the start
/// node, from the memory series.
fn first_look_off(r: &Record) -> bool {
    let Some(s) = r.series.iter().find(|s| s.name == an::MEMORY_PER_NODE) else {
        return false;
    };
    let start = format!("node {}", uint(r, ap::START_NODE));
    let first = |l: &crate::results::Line| l.y.first().copied().unwrap_or(0.0);
    let total: f64 = s.lines.iter().map(first).sum();
    let on_start: f64 = s.lines.iter().filter(|l| l.label == start).map(first).sum();
    total > 0.0 && on_start < 0.99 * total
}

/// The run records of `records` by test (a baseline apart from its test),
/// in the order the tests ran.
pub(crate) fn by_test<'a>(records: &[&'a Record]) -> Vec<(String, Vec<&'a Record>)> {
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
