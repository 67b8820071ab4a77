//! The processes and threads of a run, as perf makes them: the parent maps
//! the global memory, forks one process per `-p` (while it is still
//! single-threaded), each process maps its memory and starts `-t` threads.
//! The parent releases them together, watches them once a second
//! (convergence, progress) and at a caller's own interval (a [`Sampler`]),
//! stops them on convergence (`-m`) or on SIGINT /
//! SIGTERM, reaps every child, and collects what the tasks left in the
//! shared control block.
//!
//! No child outlives the run: each asks the kernel to kill it when the
//! parent dies (PR_SET_PDEATHSIG), ignores the terminal's SIGINT (the
//! parent decides), and the parent kills with SIGKILL whatever has not
//! stopped within a grace period after a stop request or a second signal.
//! All shared memory is anonymous and vanishes with the processes.

use super::child;
use super::convergence::{self, Change, Snapshot, Tracker};
use super::layout::{AllocSpec, AreaId, AreaPlacement, Control, DataArea, Word};
use super::params::Params;
use super::parent::{Abort, Parent};
use super::vmstat;
use crate::ids::CpuSet;
use crate::sys::{self, CpuTimes};
use crate::topology::Topology;
use anyhow::{Context, Result, anyhow};
use std::io::Write;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// How long tasks get to finish their loop after a stop request before
/// they are killed.
pub const GRACE: Duration = Duration::from_secs(5);

/// Longest a held stop (see [`Sampler::hold_stop`]) waits past the
/// convergence, for a run without `-s`.
pub const HOLD_MAX_S: f64 = 30.0;

/// What the parent tells its caller while the run goes on.
#[derive(Debug)]
pub enum Event<'a> {
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
pub struct Tick {
    pub elapsed_s: f64,
    /// (last task's loop + 1) / `-l`, percent (perf's progress figure).
    pub progress_pct: f64,
    /// With `-c` or `-m`: where the tasks are and what changed.
    pub convergence: Option<(Snapshot, Change)>,
}

/// Everything a run measured.
#[derive(Debug, Clone, Default)]
pub struct RunOutput {
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
    pub memory: Option<super::memwatch::MemorySeries>,
    /// `-m`'s stop waited for the sampler's side too (see
    /// [`Sampler::hold_stop`]), so the run's length is not the CPU side's
    /// convergence latency.
    pub stop_held: bool,
}

/// A look at the running children at a fixed interval, for callers that
/// follow what the tasks do not report themselves (where their memory is,
/// where their threads run).
pub struct Sampler<'a> {
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
    fn step(&self) -> Duration {
        self.interval.max(Duration::from_millis(1))
    }
}

/// Whether every task is still in its loop: one that leaves it frees its
/// memory, so a look taken past that point sees less than the test has.
fn all_in_loop(control: &Control) -> bool {
    control.word(Word::Leaving).load(Relaxed) == 0
}

/// A [`Sampler`]'s look: seconds since the release, the children's pids,
/// and whether every task is still in its loop.
pub type LookFn<'a> = dyn FnMut(f64, &[i32], &dyn Fn() -> bool) + 'a;

/// A stateless mix (splitmix64), for per-task starting values.
pub(super) fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// perf's per-task `val`, which is `rand()`: 31 bits.
pub(super) fn task_val(task: usize) -> u64 {
    mix(task as u64 + 1) & 0x7FFF_FFFF
}

/// `-0`'s target: node 0's CPUs and memory when this process may use them,
/// else the first node with usable CPUs and its (nearest) memory node.
pub fn cpu0_target(topo: &Topology) -> Option<(CpuSet, usize)> {
    let nodes = topo.usable_cpu_nodes();
    let node = if nodes.contains(0) { 0 } else { nodes.first()? };
    Some((
        topo.usable_cpus_of(node),
        crate::probes::seats::memory_node_for(topo, node),
    ))
}

pub(super) fn flush() {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
}

/// Runs the workload `p` describes.
pub fn run(p: &Params, topo: &Topology, on_event: &mut dyn FnMut(Event)) -> Result<RunOutput> {
    run_sampled(p, topo, on_event, None)
}

/// [`run`], with `sampler` called from the parent's watch loop.
pub fn run_sampled(
    p: &Params,
    topo: &Topology,
    on_event: &mut dyn FnMut(Event),
    mut sampler: Option<Sampler>,
) -> Result<RunOutput> {
    let control = Control::new(p.nr_tasks, p.nr_proc, node_slots(topo))
        .context("cannot map the shared control block")?;
    if !p.serialize_startup {
        control.word(Word::Go).store(1, Relaxed);
    }
    let alloc = AllocSpec {
        thp: p.thp,
        init_random: p.init_random,
        init_cpu0: if p.init_cpu0 { cpu0_target(topo) } else { None },
    };
    let before = (vmstat::read(), sys::cpu_times());
    let mut refused = None;
    let global = DataArea::alloc(
        p.bytes_global,
        true,
        &alloc,
        mix(u64::MAX) & 0x7FFF_FFFF,
        &mut refused,
    )
    .map_err(|e| anyhow!("global memory (-G): {e}"))?;

    let signals =
        crate::interrupt::catch_stop_signals().context("cannot install SIGINT/SIGTERM handlers")?;
    if p.serialize_startup {
        on_event(Event::StartupBegin);
    }
    flush();
    let t_fork = Instant::now();
    let mut parent = Parent::new(&control);
    let all_cpus = topo.allowed.cpus.intersection(&topo.cpus_online);
    let global_region = global.as_ref().map(DataArea::region);
    fork_processes(p, &mut parent, global_region, &alloc, &all_cpus, on_event)?;
    let (abort, startup_s, looked) = startup(p, &mut parent, t_fork, sampler.as_mut(), on_event);
    let mut watch = Watch::new(topo, Instant::now(), sampler.as_ref().filter(|_| looked));
    match &abort {
        None => watch.run(p, &mut parent, sampler.as_mut(), on_event),
        Some(Abort::Failed(f)) => {
            parent.failure.get_or_insert(f.clone());
        }
        Some(Abort::Signal) => {}
    }
    end_tasks(&mut parent, on_event);
    let runtime_max_s = runtime_max_s(p, &control, watch.start);
    drop(signals);
    let global_placement = global.as_ref().map(DataArea::placement);
    let mut out = collect(p, &control, &parent, before);
    out.stop_held = sampler.as_ref().is_some_and(|s| s.hold_stop.is_some());
    out.startup_s = startup_s;
    out.runtime_max_s = runtime_max_s;
    out.global_placement = global_placement;
    (out.tracker, out.sample_nodes, out.samples) =
        (watch.tracker, watch.sample_nodes, watch.samples);
    Ok(out)
}

/// Slots for every node id this machine may show.
fn node_slots(topo: &Topology) -> usize {
    topo.nodes
        .iter()
        .map(|n| n.id + 1)
        .max()
        .unwrap_or(1)
        .max(crate::placement::possible_nodes().end())
}

/// One process per `-p`, forked while the parent is single-threaded; a
/// failed fork stops and reaps those already started.
fn fork_processes(
    p: &Params,
    parent: &mut Parent,
    global: Option<&sys::Region>,
    alloc: &AllocSpec,
    all_cpus: &CpuSet,
    on_event: &mut dyn FnMut(Event),
) -> Result<()> {
    let me = sys::own_pid();
    for i in 0..p.nr_proc {
        match sys::fork_single_threaded() {
            Ok(None) => child::child_main(i, p, parent.control(), global, alloc, all_cpus, me),
            Ok(Some(pid)) => {
                parent.kids.add(pid);
                on_event(Event::Forked { process: i, pid });
                flush();
            }
            Err(e) => {
                parent.stop_all();
                parent.kids.kill_all();
                parent.kids.reap_all();
                let e = sys::threads::CannotStart::process(i, p.nr_proc, e);
                return Err(anyhow!("{e}"));
            }
        }
    }
    Ok(())
}

/// Startup: every task checked in, then (serialised) released together;
/// the time from the fork to the release, and whether `sampler` took its
/// first look. Serialised, that look comes before the release: the memory
/// is where the tasks' set-up put it and nothing runs yet that could move
/// it, so the series starts from the placement the test asked for, however
/// fast the kernel moves pages once the tasks work. The look's own time is
/// not counted as startup.
fn startup(
    p: &Params,
    parent: &mut Parent,
    t_fork: Instant,
    sampler: Option<&mut Sampler>,
    on_event: &mut dyn FnMut(Event),
) -> (Option<Abort>, Option<f64>, bool) {
    let mut abort = parent.wait_for(Word::Started, p.nr_tasks, on_event);
    let mut startup_s = None;
    let mut looked = false;
    let mut look_time = Duration::ZERO;
    if abort.is_none() && p.serialize_startup {
        let control = parent.control();
        if let Some(s) = sampler {
            let intact = || all_in_loop(control);
            let begun = Instant::now();
            (s.look)(0.0, &parent.kids.pids, &intact);
            look_time = begun.elapsed();
            looked = true;
        }
        control.word(Word::Go).store(1, Relaxed);
        sys::futex_wake_all(control.word(Word::Go));
        abort = parent.wait_for(Word::Working, p.nr_tasks, on_event);
        if abort.is_none() {
            let secs = (t_fork.elapsed() - look_time).as_secs_f64();
            startup_s = Some(secs);
            on_event(Event::StartupDone { secs });
        }
    }
    (abort, startup_s, looked)
}

/// The parent's watch while the tasks work: once a second where they are
/// (convergence, progress), at the sampler's interval its look.
struct Watch<'t> {
    topo: &'t Topology,
    start: Instant,
    sample_nodes: Vec<usize>,
    tracker: Tracker,
    samples: Vec<(f64, Vec<usize>)>,
    next_tick: Instant,
    next_look: Instant,
}

impl<'t> Watch<'t> {
    /// `looked`: the sampler whose first look startup already took, so the
    /// next is one interval on.
    fn new(topo: &'t Topology, start: Instant, looked: Option<&Sampler>) -> Self {
        Watch {
            topo,
            start,
            sample_nodes: topo.usable_cpu_nodes().iter().collect(),
            tracker: Tracker::default(),
            samples: Vec::new(),
            next_tick: start + Duration::from_secs(1),
            next_look: looked.map_or(start, |s| start + s.step()),
        }
    }

    /// Until every task is done, one fails, every process ended or a stop
    /// signal's grace period is over.
    fn run(
        &mut self,
        p: &Params,
        parent: &mut Parent,
        mut sampler: Option<&mut Sampler>,
        on_event: &mut dyn FnMut(Event),
    ) {
        let control = parent.control();
        loop {
            let done = control.word(Word::Done).load(Relaxed);
            if done as usize >= p.nr_tasks {
                break;
            }
            if let Some(Abort::Failed(_)) = parent.check(on_event) {
                break;
            }
            if !parent.kids.running() {
                if parent.interrupted.is_none() && parent.failure.is_none() {
                    parent.failure = Some("every process ended before its tasks finished".into());
                }
                break;
            }
            let mut now = Instant::now();
            let intact = || all_in_loop(control);
            if let Some(s) = sampler.as_deref_mut()
                && now >= self.next_look
                && intact()
            {
                let step = s.step();
                while self.next_look <= now {
                    self.next_look += step;
                }
                (s.look)((now - self.start).as_secs_f64(), &parent.kids.pids, &intact);
                now = Instant::now();
            }
            if now >= self.next_tick {
                while self.next_tick <= now {
                    self.next_tick += Duration::from_secs(1);
                }
                let held = sampler
                    .as_deref()
                    .and_then(|s| s.hold_stop)
                    .is_some_and(|h| !h.get());
                self.tick(p, parent, now, held, on_event);
            }
            let next = match &sampler {
                Some(_) if intact() => self.next_tick.min(self.next_look),
                _ => self.next_tick,
            };
            let wait = next
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(100));
            sys::futex_wait(control.word(Word::Done), done, Some(wait));
        }
    }

    /// The once-a-second look: tasks per node, convergence (and the stop
    /// it asks for with `-m`, unless `held`), perf's progress line.
    fn tick(
        &mut self,
        p: &Params,
        parent: &mut Parent,
        now: Instant,
        held: bool,
        on_event: &mut dyn FnMut(Event),
    ) {
        let control = parent.control();
        let t = (now - self.start).as_secs_f64();
        let cpus: Vec<Option<usize>> = (0..p.nr_tasks).map(|t| control.cpu(t)).collect();
        let loops: Vec<u32> = (0..p.nr_tasks).map(|t| control.loop_index(t)).collect();
        let topo = self.topo;
        let node_of = |cpu: usize| topo.cpu(cpu).and_then(|c| c.node);
        let snap = convergence::snapshot(
            &cpus,
            &loops,
            p.nr_proc,
            p.nr_threads,
            &self.sample_nodes,
            &node_of,
        );
        self.samples
            .push((t, snap.nodes.iter().map(|n| n.tasks).collect()));
        let conv = if p.show_convergence || p.measure_convergence {
            let change = self.tracker.update(snap.converged, t);
            let waited = self.tracker.since_s.map_or(0.0, |since| t - since);
            if snap.converged
                && p.measure_convergence
                && (!held || waited >= HOLD_MAX_S)
                && parent.interrupted.is_none()
            {
                control.request_stop();
            }
            Some((snap, change))
        } else {
            None
        };
        if p.show_details >= 0 {
            let last = loops.last().copied().unwrap_or(0);
            let tick = Tick {
                elapsed_s: t,
                progress_pct: (f64::from(last) + 1.0) / f64::from(p.nr_loops.max(1)) * 100.0,
                convergence: conv,
            };
            on_event(Event::Tick(&tick));
            flush();
        }
    }
}

/// After a failure or a stop signal, the tasks get the rest of the grace
/// period to finish their loop; then every child is reaped.
fn end_tasks(parent: &mut Parent, on_event: &mut dyn FnMut(Event)) {
    if parent.failure.is_some() || parent.interrupted.is_some() {
        parent.stop_all();
        while parent.kids.running() && !parent.killed {
            parent.check(on_event);
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    if parent.kids.reap_all() {
        parent.killed = true;
    }
}

/// As in perf, the run is timed from the moment the parent sees every
/// task at work. With more tasks than CPUs the parent may only see that
/// some ms after the tasks began, so in a short run a task could report a
/// longer runtime than the whole run: the slowest task's own time is the
/// floor.
fn runtime_max_s(p: &Params, control: &Control, start: Instant) -> f64 {
    let slowest_task_s = (0..p.nr_tasks)
        .map(|t| control.runtime_ns(t))
        .max()
        .unwrap_or(0) as f64
        / 1e9;
    start.elapsed().as_secs_f64().max(slowest_task_s)
}

/// What the tasks left in the control block, the counters' increase and
/// how the run ended.
fn collect(
    p: &Params,
    control: &Control,
    parent: &Parent,
    (vm_before, cpu_before): (vmstat::Counters, CpuTimes),
) -> RunOutput {
    let process_placement = (0..p.nr_proc)
        .map(|i| control.placement(AreaId::Process(i)))
        .collect();
    let thread_placement = (0..p.nr_tasks)
        .map(|t| control.placement(AreaId::Thread(t)))
        .collect();
    // The counters last, so they cover the placement checks too.
    let numa_balancing = vmstat::delta(&vm_before, &vmstat::read());
    let after = sys::cpu_times();
    RunOutput {
        task_runtime_ns: (0..p.nr_tasks).map(|t| control.runtime_ns(t)).collect(),
        task_bytes: (0..p.nr_tasks).map(|t| control.bytes_done(t)).collect(),
        task_loops: (0..p.nr_tasks)
            .map(|t| control.loops_completed(t))
            .collect(),
        task_cpus: (0..p.nr_tasks).map(|t| control.cpu(t)).collect(),
        process_placement,
        thread_placement,
        numa_balancing,
        cpu: CpuTimes {
            user_s: (after.user_s - cpu_before.user_s).max(0.0),
            system_s: (after.system_s - cpu_before.system_s).max(0.0),
        },
        interrupted: parent.interrupted,
        killed: parent.killed,
        failed: parent.failure.clone(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_values_are_31_bit_and_distinct() {
        let v: Vec<u64> = (0..64).map(task_val).collect();
        assert!(v.iter().all(|&x| x < 1 << 31));
        let mut d = v.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), v.len());
    }

    #[test]
    fn cpu0_target_prefers_node_0() {
        let topo = crate::topology::fixture("two-node");
        let (cpus, node) = cpu0_target(&topo).unwrap();
        assert_eq!(node, 0);
        assert_eq!(cpus, topo.usable_cpus_of(0));
    }
}
