//! What a run tells its caller while it goes on ([`Event`], [`Tick`]),
//! the caller's own look at the running children ([`Sampler`]) and what
//! the run hands back ([`RunOutput`]), with the memory per node over time
//! the looks saw ([`MemorySeries`]).

use super::convergence::{Change, Snapshot, Tracker};
use super::layout::AreaPlacement;
use super::vmstat;
use super::watch::Look;
use crate::sys::CpuTimes;
use std::time::Duration;

/// How long tasks get to finish their loop after a stop request before
/// they are killed.
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// Longest a held stop (see [`Sampler::hold_stop`]) waits past the
/// convergence, for a run without `-s`.
pub(crate) const HOLD_MAX_S: f64 = 30.0;

/// What the parent tells its caller while the run goes on.
#[derive(Debug)]
pub(crate) enum Event<'a> {
    /// Before forking, when startup is serialised.
    StartupBegin,
    Forked {
        process: usize,
        pid: i32,
    },
    /// Every task passed the startup barrier.
    StartupDone {
        secs: f64,
    },
    /// Once a second after the start.
    Tick(&'a Tick),
    /// SIGINT or SIGTERM arrived.
    Signal {
        signal: i32,
    },
}

/// The once-a-second look at the run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tick {
    pub elapsed_s: f64,
    /// (last task's loop + 1) / `-l`, percent (perf's progress figure).
    pub progress_pct: f64,
    /// With `-c` or `-m`: where the tasks are and what changed.
    pub convergence: Option<(Snapshot, Change)>,
}

/// Everything a run measured.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunOutput {
    /// Fork to the last task through the startup barrier (serialised
    /// startup only).
    pub startup_s: Option<f64>,
    /// Start (all tasks released) to the last child reaped: perf's
    /// runtime-max.
    pub runtime_max_s: f64,
    /// Each task's own runtime; 0 for a task that never finished.
    pub task_runtime_ns: Vec<u64>,
    pub task_bytes: Vec<u64>,
    pub task_loops: Vec<u64>,
    /// The CPU each task last reported.
    pub task_cpus: Vec<Option<usize>>,
    pub tracker: Tracker,
    /// Nodes of the per-second samples and the samples: run time and tasks
    /// per node.
    pub sample_nodes: Vec<usize>,
    pub samples: Vec<(f64, Vec<usize>)>,
    pub global_placement: Option<AreaPlacement>,
    pub process_placement: Vec<Option<AreaPlacement>>,
    pub thread_placement: Vec<Option<AreaPlacement>>,
    /// NUMA-balancing counters' increase during the run.
    pub numa_balancing: vmstat::Counters,
    /// CPU time of the parent and its children during the run.
    pub cpu: CpuTimes,
    /// The stop signal, when the run was interrupted.
    pub interrupted: Option<i32>,
    /// Children had to be killed.
    pub killed: bool,
    /// Why the run ended early when a task died or could not start: the
    /// figures cover what happened before.
    pub failed: Option<String>,
    /// With `--memory-per-node`: where the memory was, once a second.
    pub memory: Option<MemorySeries>,
    /// `-m`'s stop waited for the sampler's side too (see
    /// [`Sampler::hold_stop`]), so the run's length is not the CPU side's
    /// convergence latency.
    pub stop_held: bool,
}

/// A look at the running children at a fixed interval, for callers that
/// follow what the tasks do not report themselves (where their memory is,
/// where their threads run).
pub(crate) struct Sampler<'a> {
    /// Time between two looks.
    pub interval: Duration,
    /// Called with the seconds since the tasks were released, the
    /// children's pids and `intact`: first at the release (just before it,
    /// with a serialised startup), then every
    /// `interval` while every task is still in its loop. A task that leaves
    /// its loop frees its memory, so a look should ask `intact()` when it is
    /// done and drop what it saw if that is false by then.
    pub look: &'a mut LookFn<'a>,
    /// With `-m`: the stop at convergence waits while this is false (the
    /// look sets it), so what the look follows can converge too; at most
    /// [`HOLD_MAX_S`] past the convergence.
    pub hold_stop: Option<&'a std::cell::Cell<bool>>,
}

impl Sampler<'_> {
    /// The interval as a step that always moves on: a zero interval would
    /// never pass `now`.
    pub(super) fn step(&self) -> Duration {
        self.interval.max(Duration::from_millis(1))
    }
}

/// A [`Sampler`]'s look: seconds since the release, the children's pids,
/// and whether every task is still in its loop.
pub(crate) type LookFn<'a> = dyn FnMut(f64, &[i32], &dyn Fn() -> bool) + 'a;

/// The looks of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct MemorySeries {
    /// Nodes the series has a line for: nodes with usable memory and any
    /// other node memory was seen on.
    pub nodes: Vec<usize>,
    pub looks: Vec<Look>,
    /// The first look from which every look had the memory with the tasks.
    pub followed_at_s: Option<f64>,
    /// CPU seconds the looks took.
    pub cpu_s: f64,
    /// `sampled` or `exact`, as the looks were taken at the end.
    pub method: &'static str,
    /// Looks left out because a task began to free its memory meanwhile.
    pub dropped: usize,
    pub unreadable: usize,
    /// Why sampled looks gave way to `numa_maps`.
    pub fallback: Option<String>,
}
