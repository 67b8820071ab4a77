//! `numabench sched`: Erich Focht's numa_test (2002). N unbound tasks,
//! each a process doing the same fixed amount of random-update work on its
//! own memory, a burst of message-passing processes a few seconds in to
//! shake the scheduler, and per task the share of its CPU time on each
//! node, where it started, where it spent most time and where its memory
//! is.
//!
//! The parent forks the tasks (and, at the burst time, the burst's leader)
//! and looks at every task's `/proc/PID/stat` at a fixed interval; it does
//! no other work meanwhile, and its own CPU time is reported against the
//! run's. No child outlives the run: each dies with its parent
//! (PR_SET_PDEATHSIG), a stop signal kills the tasks and asks the burst's
//! leader to kill and reap its processes, and the parent reaps everything.

pub(crate) mod burst;
pub(crate) mod children;
mod part;
pub(crate) mod plan;
pub(crate) mod records;
pub(crate) mod residency;
pub(crate) mod shared;
pub(crate) mod task;
pub(crate) mod view;

pub(crate) use view::SchedView;

use crate::procfs::stat as procstat;
use crate::sys::threads::CannotStart;
use crate::sys::{self, CpuTimes, Whose};
use crate::topology::Topology;
use anyhow::{Context, Result, anyhow};
use burst::{BurstSpec, LeaderSpec};
use children::Children;
use residency::{Look, Residency};
use shared::{Burst, Shared, TaskReport};
use std::io::Write;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// Tasks whose `stat` file the parent holds open between looks.
const HELD_STAT_FILES: usize = 256;

/// How long the burst's leader gets to kill and reap its processes after
/// a stop request before it is killed itself.
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub tasks: usize,
    /// Elements per array.
    pub size: usize,
    pub passes: u32,
    /// Time between two looks at the tasks.
    pub interval: Duration,
    pub burst: Option<BurstPlan>,
    /// How `size` and `passes` were chosen where the command line left
    /// them open.
    pub chosen: Chosen,
}

/// Why the size and the passes are what they are; `None`: given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chosen {
    pub size: Option<plan::SizeChoice>,
    pub passes: Option<plan::PassesChoice>,
    /// The run time the passes aim at.
    pub target_s: Option<f64>,
    /// Why the burst has fewer groups than hackbench's, where memory cut it.
    pub burst: Option<String>,
    /// The condition of that cut where the process's memory limit made it.
    pub burst_limited: Option<crate::results::Condition>,
}

/// When and how large the burst is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BurstPlan {
    /// After the start of the run.
    pub at: Duration,
    pub spec: BurstSpec,
}

/// One task, as the parent saw it and as it reported itself.
#[derive(Debug, Clone)]
pub(crate) struct TaskOutput {
    pub pid: i32,
    /// The CPU it reported at its start (the original's "initial CPU").
    pub start_cpu: Option<usize>,
    /// The node of `start_cpu` (iSched).
    pub start_node: Option<usize>,
    pub start_s: f64,
    pub residency: Residency,
    /// `None` when it did not finish (the run was stopped).
    pub report: Option<TaskReport>,
}

/// What happened to the burst.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum BurstOutcome {
    Disabled,
    /// The run stopped before the burst time.
    NotStarted,
    /// Every task finished before the burst time.
    NotReached,
    Ran(BurstOutput),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BurstOutput {
    pub pid: i32,
    /// Run time when the leader was forked.
    pub forked_at_s: f64,
    /// Run time when its processes were released, if they were.
    pub go_at_s: Option<f64>,
    /// From the release to the last process reaped (H).
    pub wall_s: Option<f64>,
    /// Run time when the parent reaped the leader.
    pub ended_at_s: f64,
    pub processes: u64,
    pub failed: u64,
    pub messages_sent: u64,
    pub messages_received: u64,
    pub cpu: CpuTimes,
    /// Every process ran to its end and the leader was not stopped.
    pub complete: bool,
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub(crate) struct RunOutput {
    pub tasks: Vec<TaskOutput>,
    /// The node columns of `series`: nodes with CPUs this process may use.
    pub nodes: Vec<usize>,
    /// From the first fork until the last task finished its work (E).
    pub elapsed_s: f64,
    pub burst: BurstOutcome,
    /// The parent's CPU time while it watched the tasks: the looks, the
    /// sleeps between them, reaping and forking the burst's leader.
    pub sampler_cpu: CpuTimes,
    /// The parent's CPU time over the whole run, forks of the tasks included.
    pub parent_cpu: CpuTimes,
    /// Rounds of looks at the tasks.
    pub rounds: u64,
    /// Per round: run time and runnable tasks on each of `nodes`.
    pub series: Vec<(f64, Vec<f64>)>,
    pub interrupted: Option<i32>,
    /// A process had to be killed after the grace period.
    pub killed: bool,
    /// Why the run ended early when a task died or could not start: the
    /// figures cover what happened before.
    pub failed: Option<String>,
    /// Clock ticks per second of the `stat` figures.
    pub ticks_per_s: f64,
}

impl TaskOutput {
    /// Its CPU time: its own accounting when it finished, else the figures
    /// of the parent's last look (clock-tick resolution).
    pub(crate) fn cpu(&self, ticks_per_s: f64) -> CpuTimes {
        match &self.report {
            Some(r) => r.cpu,
            None => {
                let (u, s) = self.residency.last_ticks();
                CpuTimes {
                    user_s: u as f64 / ticks_per_s,
                    system_s: s as f64 / ticks_per_s,
                }
            }
        }
    }
}

impl RunOutput {
    /// CPU time of the tasks.
    pub(crate) fn task_cpu(&self) -> CpuTimes {
        let mut c = CpuTimes::default();
        for t in &self.tasks {
            let own = t.cpu(self.ticks_per_s);
            c.user_s += own.user_s;
            c.system_s += own.system_s;
        }
        c
    }

    /// The run's CPU time: tasks, burst and the parent.
    pub(crate) fn run_cpu_s(&self) -> f64 {
        let t = self.task_cpu();
        let b = match &self.burst {
            BurstOutcome::Ran(b) => b.cpu.user_s + b.cpu.system_s,
            _ => 0.0,
        };
        t.user_s + t.system_s + b + self.parent_cpu.user_s + self.parent_cpu.system_s
    }

    /// The sampler's CPU time as a percentage of the run's.
    pub(crate) fn sampler_pct(&self) -> f64 {
        let run = self.run_cpu_s();
        if run > 0.0 {
            (self.sampler_cpu.user_s + self.sampler_cpu.system_s) * 100.0 / run
        } else {
            0.0
        }
    }
}

/// The burst's leader while it runs.
struct Leader {
    kids: Children,
    forked_at_s: f64,
    ended_at_s: Option<f64>,
}

enum BurstState {
    Disabled,
    Pending(BurstPlan),
    NotReached,
    Started(Leader),
}

fn flush() {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
}

/// The parent's view of the run in progress.
struct Watch<'a> {
    p: &'a Params,
    topo: &'a Topology,
    shared: &'a Shared,
    start: Instant,
    me: libc::pid_t,
    tasks: Children,
    residency: Vec<Residency>,
    /// Each task's stat file, held open from its fork.
    stat_files: Vec<Option<procstat::StatFile>>,
    released: Vec<bool>,
    nodes: Vec<usize>,
    burst: BurstState,
    series: Vec<(f64, Vec<f64>)>,
    rounds: u64,
}

impl Watch<'_> {
    fn node_of(&self, cpu: usize) -> Option<usize> {
        self.topo.cpu(cpu).and_then(|c| c.node)
    }

    /// One look at every task still working. A task's done flag is read
    /// before its `stat`, so the look after the flag holds its final CPU
    /// time; only then may it exit.
    fn look(&mut self) {
        self.rounds += 1;
        let mut runnable = vec![0.0; self.nodes.len()];
        for i in 0..self.p.tasks {
            if self.released[i] || self.tasks.end(i).is_some() {
                continue;
            }
            let done = self.shared.report(i).is_some();
            let stat = match &mut self.stat_files[i] {
                Some(f) => f.read(),
                None => procstat::process_stat(self.tasks.pid(i)),
            };
            if let Ok(st) = stat {
                let node = self.node_of(st.cpu);
                self.residency[i].add(
                    Look {
                        cpu: st.cpu,
                        user_ticks: st.utime_ticks,
                        system_ticks: st.stime_ticks,
                        runnable: st.state == 'R',
                    },
                    node,
                );
                if st.state == 'R'
                    && let Some(col) = node.and_then(|n| self.nodes.iter().position(|&x| x == n))
                {
                    runnable[col] += 1.0;
                }
            }
            if done {
                self.shared.release(i);
                self.released[i] = true;
                self.stat_files[i] = None;
            }
        }
        self.series
            .push((self.start.elapsed().as_secs_f64(), runnable));
    }

    fn all_done(&self) -> bool {
        (0..self.p.tasks).all(|i| self.shared.report(i).is_some())
    }

    /// Forks the burst's leader when its time has come, or gives the burst
    /// up when every task finished first.
    fn burst_due(&mut self) -> Result<()> {
        let BurstState::Pending(plan) = self.burst else {
            return Ok(());
        };
        if self.all_done() {
            self.burst = BurstState::NotReached;
            return Ok(());
        }
        if self.start.elapsed() < plan.at {
            return Ok(());
        }
        flush();
        let forked_at_s = self.start.elapsed().as_secs_f64();
        match sys::fork_single_threaded() {
            Ok(None) => {
                // Not this process's files to hold: it needs descriptors for
                // the burst's sockets.
                self.stat_files.clear();
                burst::leader_main(&LeaderSpec {
                    burst: plan.spec,
                    shared: self.shared,
                    start: self.start,
                    parent: self.me,
                })
            }
            Ok(Some(pid)) => {
                let mut kids = Children::default();
                kids.add(pid);
                self.burst = BurstState::Started(Leader {
                    kids,
                    forked_at_s,
                    ended_at_s: None,
                });
                Ok(())
            }
            Err(e) => Err(anyhow!("burst leader: {}", CannotStart::process(0, 1, e))),
        }
    }

    fn leader(&mut self) -> Option<&mut Leader> {
        match &mut self.burst {
            BurstState::Started(l) => Some(l),
            _ => None,
        }
    }

    fn leader_running(&self) -> bool {
        matches!(&self.burst, BurstState::Started(l) if l.kids.running() > 0)
    }

    /// Reaps what ended; a task that ended before reporting its work, or
    /// the leader failing, is a failure.
    fn reap(&mut self) -> Option<String> {
        let mut failure = None;
        if let Some((i, end)) = self.tasks.poll_all() {
            failure = Some(format!(
                "task {} (pid {}) ended before finishing its work: {end}",
                i + 1,
                self.tasks.pid(i)
            ));
        }
        for i in 0..self.p.tasks {
            if self.tasks.end(i).is_some() && self.shared.report(i).is_none() && failure.is_none() {
                failure = Some(format!(
                    "task {} (pid {}) ended before finishing its work",
                    i + 1,
                    self.tasks.pid(i)
                ));
            }
        }
        let now = self.start.elapsed().as_secs_f64();
        if let Some(l) = self.leader()
            && l.ended_at_s.is_none()
            && let Some(end) = l.kids.poll(0)
        {
            l.ended_at_s = Some(now);
            if end != sys::ChildEnd::Exited(0) && failure.is_none() {
                failure = Some(match self.shared.note().get() {
                    Some(why) => why,
                    None => format!("the burst failed (its leader ended with {end})"),
                });
            }
        }
        failure
    }

    /// Stops everything: tasks killed at once (they hold nothing to clean
    /// up), the leader asked to kill and reap its processes; after the
    /// grace period or a further stop signal it is killed too. Returns
    /// whether anything had to be killed that way.
    fn stop_all(&mut self, signals_seen: u32) -> bool {
        self.tasks.signal(libc::SIGKILL);
        if let Some(l) = self.leader() {
            l.kids.signal(libc::SIGTERM);
        }
        let until = Instant::now() + GRACE;
        let mut killed = false;
        loop {
            self.tasks.poll_all();
            let now = self.start.elapsed().as_secs_f64();
            if let Some(l) = self.leader()
                && l.ended_at_s.is_none()
                && l.kids.poll(0).is_some()
            {
                l.ended_at_s = Some(now);
            }
            if self.tasks.running() == 0 && !self.leader_running() {
                return killed;
            }
            let more = crate::interrupt::stop_signals().1 > signals_seen;
            if !killed && (more || Instant::now() >= until) {
                if let Some(l) = self.leader() {
                    l.kids.signal(libc::SIGKILL);
                }
                killed = true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn burst_outcome(&self) -> BurstOutcome {
        let s = self.shared;
        let w = |b: Burst| s.burst(b).load(Relaxed);
        match &self.burst {
            BurstState::Disabled => BurstOutcome::Disabled,
            BurstState::Pending(_) => BurstOutcome::NotStarted,
            BurstState::NotReached => BurstOutcome::NotReached,
            BurstState::Started(l) => {
                let go = w(Burst::GoNs);
                let wall = w(Burst::WallNs);
                BurstOutcome::Ran(BurstOutput {
                    pid: l.kids.pid(0),
                    forked_at_s: l.forked_at_s,
                    go_at_s: (go > 0).then(|| go as f64 / 1e9),
                    wall_s: (wall > 0).then(|| wall as f64 / 1e9),
                    ended_at_s: l.ended_at_s.unwrap_or(l.forked_at_s),
                    processes: w(Burst::Forked),
                    failed: w(Burst::Failed),
                    messages_sent: w(Burst::MessagesSent),
                    messages_received: w(Burst::MessagesReceived),
                    cpu: CpuTimes {
                        user_s: w(Burst::UserUs) as f64 / 1e6,
                        system_s: w(Burst::SystemUs) as f64 / 1e6,
                    },
                    complete: w(Burst::Complete) != 0,
                })
            }
        }
    }
}

fn cpu_between(a: CpuTimes, b: CpuTimes) -> CpuTimes {
    CpuTimes {
        user_s: (b.user_s - a.user_s).max(0.0),
        system_s: (b.system_s - a.system_s).max(0.0),
    }
}

/// Node ids of `topo` end below this: one page counter per id.
fn node_slots(topo: &Topology) -> usize {
    topo.nodes
        .iter()
        .map(|n| n.id + 1)
        .max()
        .unwrap_or(1)
        .max(crate::placement::possible_nodes().end())
}

impl Watch<'_> {
    /// Forks the tasks; a failed fork ends the list there.
    fn fork_tasks(&mut self) -> Option<String> {
        for i in 0..self.p.tasks {
            match sys::fork_single_threaded() {
                Ok(None) => {
                    self.stat_files.clear();
                    task::main(&task::TaskSpec {
                        index: i,
                        size: self.p.size,
                        passes: self.p.passes,
                        shared: self.shared,
                        start: self.start,
                        parent: self.me,
                    })
                }
                Ok(Some(pid)) => {
                    self.tasks.add(pid);
                    // Beyond a few hundred tasks each look opens the file
                    // anew, so that descriptors never run out.
                    let held = (i < HELD_STAT_FILES)
                        .then(|| procstat::StatFile::open(pid).ok())
                        .flatten();
                    self.stat_files.push(held);
                }
                Err(e) => return Some(CannotStart::process(i, self.p.tasks, e).to_string()),
            }
        }
        None
    }

    /// Looks at the tasks every interval until every process ended, a stop
    /// signal came (its number) or something failed (why).
    fn watch(&mut self) -> (Option<i32>, Option<String>) {
        let mut next = Instant::now();
        loop {
            let (sig, count) = crate::interrupt::stop_signals();
            if count > 0 {
                return (Some(sig), None);
            }
            self.look();
            if let Err(e) = self.burst_due() {
                return (None, Some(format!("{e:#}")));
            }
            if let Some(f) = self.reap() {
                return (None, Some(f));
            }
            if self.tasks.running() == 0 && !self.leader_running() {
                return (None, None);
            }
            next += self.p.interval;
            let now = Instant::now();
            if next <= now {
                // Behind (a slow round or a stopped process): keep the pace
                // from now rather than catching up with a burst of looks.
                next = now + self.p.interval;
            }
            std::thread::sleep(next - now);
        }
    }

    /// Each task forked, as seen and as it reported itself.
    fn task_outputs(&self) -> Vec<TaskOutput> {
        // Only the tasks forked: a failed fork ends the list early.
        (0..self.p.tasks.min(self.tasks.len()))
            .map(|i| TaskOutput {
                pid: self.tasks.pid(i),
                start_cpu: self.shared.start_cpu(i),
                start_node: self.shared.start_cpu(i).and_then(|c| self.node_of(c)),
                start_s: self.shared.start_ns(i) as f64 / 1e9,
                residency: self.residency[i].clone(),
                report: self.shared.report(i),
            })
            .collect()
    }
}

/// E: until the last task finished its work, or until now after a stop.
fn elapsed_s(tasks: &[TaskOutput], interrupted: bool, start: Instant) -> f64 {
    tasks
        .iter()
        .filter_map(|t| t.report.as_ref().map(|r| r.done_ns as f64 / 1e9))
        .fold(0.0, f64::max)
        .max(if interrupted {
            start.elapsed().as_secs_f64()
        } else {
            0.0
        })
}

/// Runs the benchmark `p` describes.
pub(crate) fn run(p: &Params, topo: &Topology) -> Result<RunOutput> {
    let shared =
        Shared::new(p.tasks, node_slots(topo)).context("cannot map the shared control block")?;
    let signals =
        crate::interrupt::catch_stop_signals().context("cannot install SIGINT/SIGTERM handlers")?;
    flush();
    let own_before = sys::cpu_times_of(Whose::Own);
    let start = Instant::now();
    let mut w = Watch {
        p,
        topo,
        shared: &shared,
        start,
        me: sys::own_pid(),
        tasks: Children::default(),
        residency: vec![Residency::default(); p.tasks],
        stat_files: Vec::with_capacity(p.tasks),
        released: vec![false; p.tasks],
        nodes: topo.usable_cpu_nodes().iter().collect(),
        burst: p.burst.map_or(BurstState::Disabled, BurstState::Pending),
        series: Vec::new(),
        rounds: 0,
    };
    let forked = w.fork_tasks();
    let watch_before = sys::cpu_times_of(Whose::Own);
    let (interrupted, failure) = match forked {
        Some(why) => (None, Some(why)),
        None => w.watch(),
    };
    let watch_after = sys::cpu_times_of(Whose::Own);
    let mut killed = false;
    if failure.is_some() || interrupted.is_some() {
        killed = w.stop_all(crate::interrupt::stop_signals().1);
    }
    drop(signals);
    let own_after = sys::cpu_times_of(Whose::Own);
    let tasks = w.task_outputs();
    Ok(RunOutput {
        burst: w.burst_outcome(),
        nodes: w.nodes.clone(),
        elapsed_s: elapsed_s(&tasks, interrupted.is_some(), start),
        tasks,
        sampler_cpu: cpu_between(watch_before, watch_after),
        parent_cpu: cpu_between(own_before, own_after),
        rounds: w.rounds,
        series: std::mem::take(&mut w.series),
        interrupted,
        killed,
        failed: failure,
        ticks_per_s: procstat::ticks_per_second(),
    })
}
