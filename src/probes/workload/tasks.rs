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

use super::child::{self, flush};
use super::convergence::{self, Tracker};
use super::layout::{AllocSpec, AreaId, Control, DataArea, Word};
use super::lfsr::mix;
use super::outcome::{Event, HOLD_MAX_S, RunOutput, Sampler, Tick};
use super::params::Params;
use super::parent::{Abort, Parent};
use super::vmstat;
use crate::ids::CpuSet;
use crate::sys::{self, CpuTimes};
use crate::topology::Topology;
use anyhow::{Context, Result, anyhow};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// Whether every task is still in its loop: one that leaves it frees its
/// memory, so a look taken past that point sees less than the test has.
fn all_in_loop(control: &Control) -> bool {
    control.word(Word::Leaving).load(Relaxed) == 0
}

/// `-0`'s target: node 0's CPUs and memory when this process may use them,
/// else the first node with usable CPUs and its (nearest) memory node.
pub(crate) fn cpu0_target(topo: &Topology) -> Option<(CpuSet, usize)> {
    let nodes = topo.usable_cpu_nodes();
    let node = if nodes.contains(0) { 0 } else { nodes.first()? };
    Some((
        topo.usable_cpus_of(node),
        crate::probes::seats::memory_node_for(topo, node),
    ))
}

/// Runs the workload `p` describes.
pub(crate) fn run(
    p: &Params,
    topo: &Topology,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunOutput> {
    run_sampled(p, topo, on_event, None)
}

/// [`run`], with `sampler` called from the parent's watch loop.
pub(crate) fn run_sampled(
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
    fn cpu0_target_prefers_node_0() {
        let topo = crate::topology::fixture("two-node");
        let (cpus, node) = cpu0_target(&topo).unwrap();
        assert_eq!(node, 0);
        assert_eq!(cpus, topo.usable_cpus_of(0));
    }
}
