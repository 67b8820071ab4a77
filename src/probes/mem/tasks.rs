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

use super::convergence::{self, Change, Snapshot, Tracker};
use super::layout::{AllocSpec, AreaId, AreaPlacement, Control, DataArea, Word};
use super::params::Params;
use super::sys::{self, ChildEnd, CpuTimes};
use super::vmstat;
use super::worker::{self, TaskCtx};
use crate::placement::CpuSet;
use crate::topology::Topology;
use anyhow::{Context, Result, anyhow};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// How long tasks get to finish their loop after a stop request before
/// they are killed.
pub const GRACE: Duration = Duration::from_secs(5);

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
    /// SIGINT or SIGTERM arrived; `count` so far.
    Signal {
        signal: i32,
        count: u32,
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
}

/// A look at the running children at a fixed interval, for callers that
/// follow what the tasks do not report themselves (where their memory is,
/// where their threads run).
pub struct Sampler<'a> {
    /// Time between two looks.
    pub interval: Duration,
    /// Called with the seconds since the tasks were released, the
    /// children's pids and `intact`: first at the release, then every
    /// `interval` while every task is still in its loop. A task that leaves
    /// its loop frees its memory, so a look should ask `intact()` when it is
    /// done and drop what it saw if that is false by then.
    pub look: &'a mut LookFn<'a>,
}

/// A [`Sampler`]'s look: seconds since the release, the children's pids,
/// and whether every task is still in its loop.
pub type LookFn<'a> = dyn FnMut(f64, &[i32], &dyn Fn() -> bool) + 'a;

/// A stateless mix (splitmix64), for per-task starting values.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// perf's per-task `val`, which is `rand()`: 31 bits.
fn task_val(task: usize) -> u64 {
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

/// The forked children.
struct Kids {
    pids: Vec<libc::pid_t>,
    ends: Vec<Option<ChildEnd>>,
}

impl Kids {
    fn add(&mut self, pid: libc::pid_t) {
        self.pids.push(pid);
        self.ends.push(None);
    }

    /// Reaps children that ended; returns the first that ended badly.
    fn poll(&mut self) -> Option<(usize, ChildEnd)> {
        let mut bad = None;
        for (i, pid) in self.pids.iter().enumerate() {
            if self.ends[i].is_some() {
                continue;
            }
            if let Ok(Some(end)) = sys::wait_child(*pid, true) {
                self.ends[i] = Some(end);
                if end != ChildEnd::Exited(0) && bad.is_none() {
                    bad = Some((i, end));
                }
            }
        }
        bad
    }

    fn running(&self) -> bool {
        self.ends.iter().any(Option::is_none)
    }

    fn kill_all(&self) {
        for (pid, end) in self.pids.iter().zip(&self.ends) {
            if end.is_none() {
                let _ = sys::kill(*pid, libc::SIGKILL);
            }
        }
    }

    /// Waits for every child; a second stop signal meanwhile kills them.
    fn reap_all(&mut self) -> bool {
        let mut killed = false;
        for i in 0..self.pids.len() {
            while self.ends[i].is_none() {
                match sys::wait_child(self.pids[i], false) {
                    Ok(Some(end)) => self.ends[i] = Some(end),
                    Ok(None) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                        if sys::stop_signals().1 >= 2 && !killed {
                            self.kill_all();
                            killed = true;
                        }
                    }
                    // ECHILD: nothing left to wait for.
                    Err(_) => self.ends[i] = Some(ChildEnd::Exited(-1)),
                }
            }
        }
        killed
    }
}

/// Why the parent stopped waiting early.
enum Abort {
    Failed(String),
    Signal,
}

/// The parent's view of a run in progress.
struct Parent<'a> {
    control: &'a Control,
    kids: Kids,
    interrupted: Option<i32>,
    failure: Option<String>,
    grace_until: Option<Instant>,
    killed: bool,
}

impl Parent<'_> {
    /// Stops every task: the stop flag, and the start gate opened so that
    /// tasks still waiting at it see the flag.
    fn stop_all(&mut self) {
        self.control.request_stop();
        self.control.word(Word::Go).store(1, Relaxed);
        sys::futex_wake_all(self.control.word(Word::Go));
        if self.grace_until.is_none() {
            self.grace_until = Some(Instant::now() + GRACE);
        }
    }

    /// Looks for failed tasks, dead children and stop signals.
    fn check(&mut self, on_event: &mut dyn FnMut(Event)) -> Option<Abort> {
        let (sig, count) = sys::stop_signals();
        if count > 0 && self.interrupted.is_none() {
            self.interrupted = Some(sig);
            on_event(Event::Signal { signal: sig, count });
            self.stop_all();
        }
        if count >= 2 && !self.killed {
            self.kids.kill_all();
            self.killed = true;
        }
        if self.failure.is_none() && self.control.word(Word::Failed).load(Relaxed) > 0 {
            self.failure = Some("a task failed (see the message above)".into());
            self.stop_all();
        }
        if let Some((i, end)) = self.kids.poll()
            && self.failure.is_none()
            && self.interrupted.is_none()
        {
            self.failure = Some(format!(
                "process {i} (pid {}) ended before its tasks finished: {end}",
                self.kids.pids[i]
            ));
            self.stop_all();
        }
        if self.grace_until.is_some_and(|g| Instant::now() >= g) && !self.killed {
            self.kids.kill_all();
            self.killed = true;
        }
        if let Some(f) = &self.failure {
            return Some(Abort::Failed(f.clone()));
        }
        self.interrupted.map(|_| Abort::Signal)
    }

    /// Waits until control word `w` reaches `target`.
    fn wait_for(
        &mut self,
        w: Word,
        target: usize,
        on_event: &mut dyn FnMut(Event),
    ) -> Option<Abort> {
        loop {
            let v = self.control.word(w).load(Relaxed);
            if v as usize >= target {
                return None;
            }
            if let Some(a) = self.check(on_event) {
                return Some(a);
            }
            if !self.kids.running() {
                return Some(Abort::Failed(
                    "every process ended before the tasks started".into(),
                ));
            }
            sys::futex_wait(self.control.word(w), v, Some(Duration::from_millis(50)));
        }
    }
}

fn flush() {
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
    let node_slots = topo
        .nodes
        .iter()
        .map(|n| n.id + 1)
        .max()
        .unwrap_or(1)
        .max(crate::placement::possible_nodes().end());
    let control = Control::new(p.nr_tasks, p.nr_proc, node_slots)
        .context("cannot map the shared control block")?;
    if !p.serialize_startup {
        control.word(Word::Go).store(1, Relaxed);
    }
    let all_cpus = topo.allowed.cpus.intersection(&topo.cpus_online);
    let alloc = AllocSpec {
        thp: p.thp,
        init_random: p.init_random,
        init_cpu0: if p.init_cpu0 { cpu0_target(topo) } else { None },
    };
    let vm_before = vmstat::read();
    let cpu_before = sys::cpu_times();
    let mut refused = None;
    let global = DataArea::alloc(
        p.bytes_global,
        true,
        &alloc,
        mix(u64::MAX) & 0x7FFF_FFFF,
        &mut refused,
    )
    .map_err(|e| anyhow!("global memory (-G): {e}"))?;
    let global_region = global.as_ref().map(DataArea::region);

    let signals = sys::catch_stop_signals().context("cannot install SIGINT/SIGTERM handlers")?;
    if p.serialize_startup {
        on_event(Event::StartupBegin);
    }
    flush();
    let t_fork = Instant::now();
    let me = sys::own_pid();
    let mut parent = Parent {
        control: &control,
        kids: Kids {
            pids: Vec::new(),
            ends: Vec::new(),
        },
        interrupted: None,
        failure: None,
        grace_until: None,
        killed: false,
    };
    for i in 0..p.nr_proc {
        match sys::fork_single_threaded() {
            Ok(None) => child_main(i, p, &control, global_region, &alloc, &all_cpus, me),
            Ok(Some(pid)) => {
                parent.kids.add(pid);
                on_event(Event::Forked { process: i, pid });
                flush();
            }
            Err(e) => {
                parent.stop_all();
                parent.kids.kill_all();
                parent.kids.reap_all();
                return Err(anyhow!("cannot fork process {i}: {e}"));
            }
        }
    }

    // Startup: every task checked in, then (serialised) released together.
    let mut abort = parent.wait_for(Word::Started, p.nr_tasks, on_event);
    let mut startup_s = None;
    if abort.is_none() && p.serialize_startup {
        control.word(Word::Go).store(1, Relaxed);
        sys::futex_wake_all(control.word(Word::Go));
        abort = parent.wait_for(Word::Working, p.nr_tasks, on_event);
        if abort.is_none() {
            let secs = t_fork.elapsed().as_secs_f64();
            startup_s = Some(secs);
            on_event(Event::StartupDone { secs });
        }
    }
    let start = Instant::now();
    let sample_nodes: Vec<usize> = topo.usable_cpu_nodes().iter().collect();
    let node_of = |cpu: usize| topo.cpu(cpu).and_then(|c| c.node);
    let mut tracker = Tracker::default();
    let mut samples = Vec::new();
    let mut next_tick = start + Duration::from_secs(1);
    let mut next_look = start;
    if abort.is_none() {
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
            let intact = || control.word(Word::Leaving).load(Relaxed) == 0;
            if let Some(s) = sampler.as_mut()
                && now >= next_look
                && intact()
            {
                // A zero interval would never move past `now`.
                let step = s.interval.max(Duration::from_millis(1));
                while next_look <= now {
                    next_look += step;
                }
                (s.look)((now - start).as_secs_f64(), &parent.kids.pids, &intact);
                now = Instant::now();
            }
            if now >= next_tick {
                while next_tick <= now {
                    next_tick += Duration::from_secs(1);
                }
                let t = (now - start).as_secs_f64();
                let cpus: Vec<Option<usize>> = (0..p.nr_tasks).map(|t| control.cpu(t)).collect();
                let loops: Vec<u32> = (0..p.nr_tasks).map(|t| control.loop_index(t)).collect();
                let snap = convergence::snapshot(
                    &cpus,
                    &loops,
                    p.nr_proc,
                    p.nr_threads,
                    &sample_nodes,
                    &node_of,
                );
                samples.push((t, snap.nodes.iter().map(|n| n.tasks).collect()));
                let conv = if p.show_convergence || p.measure_convergence {
                    let change = tracker.update(snap.converged, t);
                    if snap.converged && p.measure_convergence && parent.interrupted.is_none() {
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
                        progress_pct: (f64::from(last) + 1.0) / f64::from(p.nr_loops.max(1))
                            * 100.0,
                        convergence: conv,
                    };
                    on_event(Event::Tick(&tick));
                    flush();
                }
            }
            let next = match &sampler {
                Some(_) if intact() => next_tick.min(next_look),
                _ => next_tick,
            };
            let wait = next
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(100));
            sys::futex_wait(control.word(Word::Done), done, Some(wait));
        }
    } else if let Some(Abort::Failed(f)) = &abort {
        parent.failure.get_or_insert(f.clone());
    }
    if parent.failure.is_some() || parent.interrupted.is_some() {
        parent.stop_all();
        // Give the tasks the rest of the grace period to finish their loop.
        while parent.kids.running() && !parent.killed {
            parent.check(on_event);
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    if parent.kids.reap_all() {
        parent.killed = true;
    }
    // As in perf, the run is timed from the moment the parent sees every
    // task at work. With more tasks than CPUs the parent may only see that
    // some ms after the tasks began, so in a short run a task could report
    // a longer runtime than the whole run: the slowest task's own time is
    // the floor.
    let slowest_task_s = (0..p.nr_tasks)
        .map(|t| control.runtime_ns(t))
        .max()
        .unwrap_or(0) as f64
        / 1e9;
    let runtime_max_s = start.elapsed().as_secs_f64().max(slowest_task_s);
    drop(signals);

    let out = RunOutput {
        startup_s,
        runtime_max_s,
        task_runtime_ns: (0..p.nr_tasks).map(|t| control.runtime_ns(t)).collect(),
        task_bytes: (0..p.nr_tasks).map(|t| control.bytes_done(t)).collect(),
        task_loops: (0..p.nr_tasks)
            .map(|t| control.loops_completed(t))
            .collect(),
        task_cpus: (0..p.nr_tasks).map(|t| control.cpu(t)).collect(),
        tracker,
        sample_nodes,
        samples,
        global_placement: global.as_ref().map(DataArea::placement),
        process_placement: (0..p.nr_proc)
            .map(|i| control.placement(AreaId::Process(i)))
            .collect(),
        thread_placement: (0..p.nr_tasks)
            .map(|t| control.placement(AreaId::Thread(t)))
            .collect(),
        numa_balancing: vmstat::delta(&vm_before, &vmstat::read()),
        cpu: {
            let after = sys::cpu_times();
            CpuTimes {
                user_s: (after.user_s - cpu_before.user_s).max(0.0),
                system_s: (after.system_s - cpu_before.system_s).max(0.0),
            }
        },
        interrupted: parent.interrupted,
        killed: parent.killed,
        failed: parent.failure,
    };
    Ok(out)
}

/// Tells the parent that this process's task `what` failed and why.
fn report(control: &Control, what: &str) {
    eprintln!("numabench: error: {what}");
    control.word(Word::Failed).fetch_add(1, Relaxed);
    control.request_stop();
    for w in [Word::Started, Word::Working, Word::Done] {
        sys::futex_wake_all(control.word(w));
    }
}

/// The body of forked process `i`; never returns.
fn child_main(
    i: usize,
    p: &Params,
    control: &Control,
    global: Option<&sys::Region>,
    alloc: &AllocSpec,
    all_cpus: &CpuSet,
    parent: libc::pid_t,
) -> ! {
    let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        process_body(i, p, control, global, alloc, all_cpus, parent)
    }))
    .unwrap_or_else(|_| {
        report(control, &format!("process {i}: panicked"));
        101
    });
    flush();
    sys::exit_now(code)
}

fn process_body(
    i: usize,
    p: &Params,
    control: &Control,
    global: Option<&sys::Region>,
    alloc: &AllocSpec,
    all_cpus: &CpuSet,
    parent: libc::pid_t,
) -> i32 {
    sys::child_signal_setup();
    if sys::die_with_parent().is_err() || sys::parent_pid() != parent {
        // The parent is already gone: nobody would reap or stop us.
        return 1;
    }
    sys::set_task_name(&format!("process {i}"));
    // Memory and CPUs as the process's first thread will have them, so the
    // process memory is initialised there (perf does the same).
    let first = i * p.nr_threads;
    if let Err(e) = worker::bind_task(p, first, all_cpus) {
        report(control, &format!("process {i}: {e}"));
        return 1;
    }
    let mut refused = None;
    let area = match DataArea::alloc(
        p.bytes_process,
        false,
        alloc,
        mix(1 << 32 | i as u64) & 0x7FFF_FFFF,
        &mut refused,
    ) {
        Ok(a) => a,
        Err(e) => {
            report(control, &format!("process {i}: process memory (-P): {e}"));
            return 1;
        }
    };
    worker::warn_thp(control, refused);
    let process = area.as_ref().map(DataArea::region);
    if p.show_details >= 3 {
        crate::console::out(&format!(
            " # process {i:2} global mem: {:#x}, process mem: {:#x}\n",
            global.map_or(0, sys::Region::addr),
            process.map_or(0, sys::Region::addr)
        ));
    }
    let lock = Mutex::new(());
    let mut failed = false;
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for t in 0..p.nr_threads {
            let task_nr = first + t;
            let ctx = TaskCtx {
                params: p,
                control,
                global,
                process,
                process_lock: &lock,
                process_nr: i,
                thread_nr: t,
                task_nr,
                alloc,
                all_cpus,
                val0: task_val(task_nr),
            };
            match std::thread::Builder::new().spawn_scoped(s, move || worker::run_task(&ctx)) {
                Ok(h) => handles.push((t, h)),
                Err(e) => {
                    report(
                        control,
                        &format!("task {i}/{t}: cannot start a thread: {e}"),
                    );
                    failed = true;
                    break;
                }
            }
        }
        for (t, h) in handles {
            match h.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    report(control, &format!("task {i}/{t}: {e}"));
                    failed = true;
                }
                Err(_) => {
                    report(control, &format!("task {i}/{t}: panicked"));
                    failed = true;
                }
            }
        }
    });
    if let Some(a) = &area {
        control.store_placement(AreaId::Process(i), &a.placement());
    }
    i32::from(failed)
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
