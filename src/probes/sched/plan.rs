//! What a run does when the command line leaves it open, chosen so that it
//! tests what numa_test tested in 2002: arrays well beyond the cache the
//! task runs under (there 20 MB against a few MB of cache; here 4 x the
//! last-level cache), and tasks still at work when the burst comes (one
//! pass timed here, then as many passes as make the run last about 3 x the
//! burst time).

use super::burst::BurstSpec;
use super::task::Arrays;
use super::{BurstPlan, Chosen, Params};
use crate::error::usage;
use crate::memory::admission;
use crate::topology::Topology;
use anyhow::Result;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The original's elements per array (its PROBLEMSIZE).
pub(crate) const ORIGINAL_SIZE: usize = 1_000_000;

/// The per-task arrays are this many times the last-level cache.
pub(crate) const CACHE_FACTOR: u64 = 4;

/// The run should last this many times the burst time.
pub(crate) const RUN_FACTOR: f64 = 3.0;

/// The seed's series of task counts.
pub(crate) const SERIES: [usize; 5] = [4, 8, 16, 32, 64];

/// A series goes up to this many tasks per usable CPU (the seed: 64 tasks
/// on 16 CPUs).
pub(crate) const SERIES_TASKS_PER_CPU: usize = 4;

/// Bytes one process of a run holds beyond its arrays: page tables, kernel
/// stack and the pages it copies from its parent. A burst process measured
/// about 280 KiB under a memory cgroup; this leaves a margin. A burst of
/// hackbench's 20 groups is 800 processes: about 300 MiB, more than a
/// small cgroup holds, so it counts.
pub(crate) const PROCESS_BYTES: u64 = 384 << 10;

/// Bytes `tasks` tasks with arrays of `elements` map at the peak.
pub(crate) fn tasks_bytes(tasks: usize, elements: usize) -> u64 {
    (tasks as u64).saturating_mul(Arrays::bytes(elements).saturating_add(PROCESS_BYTES))
}

/// Bytes the burst maps at its peak: its processes and their leader.
pub(crate) fn burst_bytes(spec: &BurstSpec) -> u64 {
    (spec.processes() as u64 + 1).saturating_mul(PROCESS_BYTES)
}

/// The largest last-level cache one CPU this process may use sits under,
/// in bytes; `None` when sysfs lists no cache.
pub(crate) fn llc_bytes(topo: &Topology) -> Option<u64> {
    let usable = topo.allowed.cpus.intersection(&topo.cpus_online);
    let level = topo.caches.iter().map(|c| c.level).max()?;
    topo.caches
        .iter()
        .filter(|c| c.level == level && c.kind != "Instruction")
        .filter(|c| c.cpus.iter().any(|cpu| usable.contains(cpu)))
        .map(|c| c.size_bytes)
        .max()
        .filter(|&b| b > 0)
}

/// Elements per array, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeChoice {
    pub elements: usize,
    /// The last-level cache it was scaled from.
    pub llc_bytes: Option<u64>,
    /// How the figure came about, for the output.
    pub basis: String,
}

/// The array size for `tasks` tasks where `limit` bytes may be mapped
/// (and the words for where that figure comes from): 4 x the last-level
/// cache per task, less where the memory cannot hold that for every task;
/// the original's size where no cache is known.
pub(crate) fn choose_size(
    llc: Option<u64>,
    tasks: usize,
    limit: Option<(u64, &str)>,
) -> Result<SizeChoice> {
    let per_element = Arrays::bytes(1);
    let (wanted, mut basis) = match llc {
        Some(l) => (
            (CACHE_FACTOR * l / per_element) as usize,
            format!(
                "{CACHE_FACTOR} x the {} last-level cache per task",
                crate::units::bytes(l)
            ),
        ),
        None => (
            ORIGINAL_SIZE,
            "the original's size: no cache size is listed in sysfs".to_string(),
        ),
    };
    let mut elements = wanted.clamp(1, 1 << 32);
    if let Some((limit, room)) = limit {
        let per_task = limit / tasks.max(1) as u64;
        let fits = (per_task.saturating_sub(PROCESS_BYTES) / per_element) as usize;
        if fits == 0 {
            return Err(usage(format!(
                "{tasks} tasks: not even one element per task fits in the {} they may map ({room}); use fewer tasks or --no-burst",
                crate::units::bytes(limit)
            )));
        }
        if fits < elements {
            elements = fits;
            basis = format!("{basis}, cut to what {tasks} tasks may map ({room})");
            if let Some(l) = llc
                && Arrays::bytes(elements) <= l
            {
                basis.push_str(": NOT larger than the cache any more");
            }
        }
    }
    Ok(SizeChoice {
        elements,
        llc_bytes: llc,
        basis,
    })
}

/// Passes, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct PassesChoice {
    pub passes: u32,
    /// Seconds one pass took alone (calibration).
    pub pass_s: Option<f64>,
    pub basis: String,
}

/// Seconds of one pass over arrays of `elements`: the faster of two passes
/// after the arrays are written, in this process.
pub(crate) fn time_one_pass(elements: usize) -> f64 {
    let mut a = Arrays::init(elements, 1);
    let mut best = f64::INFINITY;
    for _ in 0..2 {
        let t = Instant::now();
        a.run(1);
        best = best.min(t.elapsed().as_secs_f64());
    }
    black_box(a.checksum());
    best
}

/// Passes that keep `tasks` tasks at work for about `target_s` seconds
/// when one pass alone takes `pass_s` and `cpus` CPUs share them.
pub(crate) fn choose_passes(pass_s: f64, tasks: usize, cpus: usize, target_s: f64) -> PassesChoice {
    let share = (tasks as f64 / cpus.max(1) as f64).max(1.0);
    let per_pass = pass_s.max(1e-6) * share;
    let passes = (target_s / per_pass).ceil().clamp(1.0, f64::from(u32::MAX)) as u32;
    let basis = if share > 1.0 {
        format!(
            "one pass took {pass_s:.3} s alone; {tasks} tasks share {cpus} CPU(s), so about {:.0} s of run",
            f64::from(passes) * per_pass
        )
    } else {
        format!(
            "one pass took {pass_s:.3} s; about {:.0} s of run",
            f64::from(passes) * per_pass
        )
    };
    PassesChoice {
        passes,
        pass_s: Some(pass_s),
        basis,
    }
}

/// The run time the passes aim at: [`RUN_FACTOR`] x the burst time (the
/// default burst time without a burst).
pub(crate) fn target_s(burst_at_s: f64) -> f64 {
    RUN_FACTOR * burst_at_s.max(0.1)
}

/// The seed's task counts this machine runs: at most
/// [`SERIES_TASKS_PER_CPU`] per usable CPU (at least the smallest), and
/// as many as `fits` admits; the counts left out, for a note.
pub(crate) fn series(cpus: usize, fits: &dyn Fn(usize) -> bool) -> (Vec<usize>, Vec<usize>) {
    let cap = (SERIES_TASKS_PER_CPU * cpus).max(SERIES[0]);
    SERIES.iter().copied().partition(|&n| n <= cap && fits(n))
}

/// What the command line gives; `None`: chosen here.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    pub size: Option<usize>,
    pub passes: Option<u32>,
    pub interval: Duration,
    pub burst: Option<BurstPlan>,
    /// The burst's groups were given, not hackbench's default: never cut.
    pub burst_groups_given: bool,
    /// The burst time the passes aim from, burst or not.
    pub burst_at: Duration,
}

/// The most bytes a run may map here, when the kernel says what is free.
fn memory_limit(topo: &Topology) -> Option<u64> {
    admission::free_bytes(topo, None).map(admission::limit)
}

/// Whether `tasks` tasks fit in the free memory with arrays of `size`
/// elements, or with the full 4 x cache arrays where `size` is open.
pub(crate) fn fits(topo: &Topology, size: Option<usize>, tasks: usize) -> bool {
    let elements = size.unwrap_or_else(|| {
        choose_size(llc_bytes(topo), tasks, None).map_or(ORIGINAL_SIZE, |c| c.elements)
    });
    memory_limit(topo).is_none_or(|limit| tasks_bytes(tasks, elements) <= limit)
}

/// The burst asked for, with its groups cut where they were left open and
/// do not fit in what `limit` leaves it (half, or what `most` tasks of a
/// given size leave), and why. Hackbench's 20 groups are 800 processes;
/// a memory cgroup of a few hundred MiB cannot hold them beside the tasks.
fn fit_burst(
    asked: &Asked,
    most: usize,
    limit: Option<u64>,
    room: &str,
) -> (Option<BurstPlan>, Option<String>) {
    let (Some(mut plan), Some(limit)) = (asked.burst, limit) else {
        return (asked.burst, None);
    };
    let left = match asked.size {
        Some(n) => limit.saturating_sub(tasks_bytes(most, n)),
        None => limit / 2,
    };
    if asked.burst_groups_given || burst_bytes(&plan.spec) <= left {
        return (Some(plan), None);
    }
    let per_group = burst_bytes(&BurstSpec {
        groups: 1,
        ..plan.spec
    }) - PROCESS_BYTES;
    let groups = (left.saturating_sub(PROCESS_BYTES) / per_group).max(1) as usize;
    let why = format!(
        "burst cut from {} to {groups} group(s): {} processes of about {} each do not fit beside the tasks in {room} (--burst-groups overrides)",
        plan.spec.groups,
        plan.spec.processes(),
        crate::units::bytes(PROCESS_BYTES)
    );
    plan.spec.groups = groups;
    (Some(plan), Some(why))
}

/// The runs for each of `counts` tasks: the same array size for all (set,
/// or chosen for the largest count), passes set or chosen per count from
/// one timed pass. The burst and the tasks' own processes count with the
/// arrays; a size given is admitted for the largest count.
pub(crate) fn params(topo: &Topology, asked: &Asked, counts: &[usize]) -> Result<Vec<Params>> {
    let most = counts.iter().copied().max().unwrap_or(1);
    let limit = memory_limit(topo);
    let room = admission::room_words(topo, None);
    let (burst, burst_cut) = fit_burst(asked, most, limit, &room);
    let burst_limited = burst_cut
        .as_ref()
        .and(crate::probes::sizing::room_condition(topo, None));
    let burst_mem = burst.map_or(0, |b| burst_bytes(&b.spec));
    let size = match asked.size {
        Some(n) => {
            admission::admit(
                topo,
                &admission::Footprint {
                    bytes: tasks_bytes(most, n).saturating_add(burst_mem),
                    nodes: None,
                    what: match burst {
                        Some(b) => format!(
                            "{most} tasks x --elements {n} and a burst of {} processes",
                            b.spec.processes()
                        ),
                        None => format!("{most} tasks x --elements {n}"),
                    },
                    remedy: "use fewer tasks, fewer --elements or fewer --burst-groups",
                },
            )?;
            None
        }
        None => {
            let arrays = limit.map(|l| (l.saturating_sub(burst_mem), room.as_str()));
            Some(choose_size(llc_bytes(topo), most, arrays)?)
        }
    };
    let elements = size
        .as_ref()
        .map_or(asked.size.unwrap_or(1), |c| c.elements);
    let target = target_s(asked.burst_at.as_secs_f64());
    let pass_s = asked.passes.is_none().then(|| time_one_pass(elements));
    let cpus = topo.allowed.cpus.intersection(&topo.cpus_online).len();
    Ok(counts
        .iter()
        .map(|&tasks| {
            let passes = pass_s.map(|s| choose_passes(s, tasks, cpus, target));
            Params {
                tasks,
                size: elements,
                passes: asked
                    .passes
                    .or(passes.as_ref().map(|c| c.passes))
                    .unwrap_or(1),
                interval: asked.interval,
                burst,
                chosen: Chosen {
                    size: size.clone(),
                    target_s: passes.is_some().then_some(target),
                    passes,
                    burst: burst_cut.clone(),
                    burst_limited: burst_limited.clone(),
                },
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn the_size_is_four_times_the_cache_unless_memory_says_less() {
        let c = choose_size(Some(32 * MIB), 4, None).unwrap();
        assert_eq!(c.elements, (128 * MIB / 20) as usize);
        assert!(Arrays::bytes(c.elements) > 32 * MIB);
        assert!(c.basis.contains("4 x the 32 MiB"), "{}", c.basis);
        // 8 tasks in 512 MiB: 64 MiB each less the process, still beyond
        // the cache.
        let c = choose_size(Some(32 * MIB), 8, Some((512 * MIB, "room"))).unwrap();
        assert_eq!(c.elements, ((64 * MIB - PROCESS_BYTES) / 20) as usize);
        assert!(c.basis.contains("cut to"), "{}", c.basis);
        assert!(!c.basis.contains("NOT"), "{}", c.basis);
        // 64 tasks in 512 MiB: 8 MiB each, below the cache, and said so.
        let c = choose_size(Some(32 * MIB), 64, Some((512 * MIB, "room"))).unwrap();
        assert!(c.basis.contains("NOT larger"), "{}", c.basis);
        // No cache known: the original's 1,000,000.
        let c = choose_size(None, 2, Some((1 << 40, "room"))).unwrap();
        assert_eq!(c.elements, ORIGINAL_SIZE);
        assert!(c.basis.contains("original"), "{}", c.basis);
        let e = choose_size(Some(MIB), 100, Some((1000, "room"))).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
    }

    #[test]
    fn passes_make_the_run_last_the_target_with_the_cpus_shared() {
        // 0.1 s a pass, 2 tasks on 4 CPUs: 90 passes for 9 s.
        assert_eq!(choose_passes(0.1, 2, 4, 9.0).passes, 90);
        // 8 tasks on 2 CPUs: each gets a quarter, 23 passes.
        let c = choose_passes(0.1, 8, 2, 9.0);
        assert_eq!(c.passes, 23);
        assert!(c.basis.contains("share 2 CPU"), "{}", c.basis);
        // A pass longer than the target: still one.
        assert_eq!(choose_passes(20.0, 1, 1, 9.0).passes, 1);
        // A pass too fast to time: bounded, not infinite.
        assert!(choose_passes(0.0, 1, 1, 9.0).passes <= 9_000_000);
        assert_eq!(target_s(3.0), 9.0);
    }

    #[test]
    fn the_series_is_capped_by_cpus_and_memory() {
        assert_eq!(series(2, &|_| true), (vec![4, 8], vec![16, 32, 64]));
        assert_eq!(series(16, &|_| true).0, SERIES.to_vec());
        assert_eq!(series(1, &|_| true).0, vec![4]);
        assert_eq!(series(64, &|n| n <= 16), (vec![4, 8, 16], vec![32, 64]));
    }

    #[test]
    fn the_cache_is_the_largest_last_level_instance_of_a_usable_cpu() {
        let topo = crate::topology::fixture("two-node");
        let l = llc_bytes(&topo);
        let level = topo.caches.iter().map(|c| c.level).max();
        match level {
            Some(_) => assert!(l.is_some_and(|b| b > 0)),
            None => assert_eq!(l, None),
        }
        let mut none = topo.clone();
        none.caches.clear();
        assert_eq!(llc_bytes(&none), None);
    }

    fn asked(size: Option<usize>, passes: Option<u32>) -> Asked {
        Asked {
            size,
            passes,
            interval: Duration::from_millis(10),
            burst: None,
            burst_groups_given: false,
            burst_at: Duration::from_secs(3),
        }
    }

    #[test]
    fn given_values_win_and_open_ones_are_chosen_and_said() {
        let topo = crate::topology::fixture("two-node");
        let p = params(&topo, &asked(Some(1000), Some(7)), &[2, 4]).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!((p[1].tasks, p[1].size, p[1].passes), (4, 1000, 7));
        assert_eq!(p[0].chosen, Chosen::default());
        // Open: 4 x the fixture's cache, passes from a timed pass.
        let mut small = topo.clone();
        for c in &mut small.caches {
            c.size_bytes = 64 << 10;
        }
        let p = params(&small, &asked(None, None), &[1, 8]).unwrap();
        let size = p[0].chosen.size.as_ref().unwrap();
        assert_eq!(p[0].size, (4 * (64 << 10) / 20) as usize);
        assert_eq!(size.llc_bytes, Some(64 << 10));
        assert_eq!(p[0].size, p[1].size);
        assert_eq!(p[0].chosen.target_s, Some(9.0));
        let c = p[0].chosen.passes.as_ref().unwrap();
        assert!(c.pass_s.is_some_and(|s| s > 0.0));
        assert_eq!(p[0].passes, c.passes);
        // More tasks than CPUs share them: fewer passes each, never more.
        assert!(p[1].passes <= p[0].passes, "{p:?}");
        // A size too large for the free memory is bad input.
        let e = params(&topo, &asked(Some(1 << 32), None), &[4096]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(!fits(&topo, Some(1 << 32), 4096));
        assert!(fits(&topo, Some(1000), 4));
    }

    #[test]
    fn the_burst_and_the_processes_count_under_a_memory_limit() {
        let mut topo = crate::topology::fixture("two-node");
        topo.memory_limit = Some(crate::topology::MemoryLimit {
            headroom_bytes: 62 * MIB,
            limit_bytes: 64 * MIB,
            source: "memory cgroup /x (memory.limit_in_bytes)".into(),
        });
        let mut a = asked(None, Some(1));
        a.burst = Some(BurstPlan {
            at: Duration::from_secs(3),
            spec: BurstSpec::hackbench(20),
        });
        let p = &params(&topo, &a, &[2]).unwrap()[0];
        let b = p.burst.unwrap();
        assert!((1..20).contains(&b.spec.groups), "{b:?}");
        let note = p.chosen.burst.as_deref().unwrap();
        assert!(note.contains("from 20 to"), "{note}");
        assert!(note.contains("memory cgroup /x"), "{note}");
        assert_eq!(
            p.chosen.burst_limited,
            Some(crate::results::Condition::ScaledByMemoryLimit {
                source: "memory cgroup /x (memory.limit_in_bytes)".into()
            })
        );
        let basis = &p.chosen.size.as_ref().unwrap().basis;
        assert!(basis.contains("memory cgroup /x"), "{basis}");
        let total = tasks_bytes(2, p.size) + burst_bytes(&b.spec);
        assert!(total <= admission::limit(62 * MIB), "{total}");
        // Groups given are not cut: refused, naming the limit.
        a.burst_groups_given = true;
        let e = params(&topo, &a, &[2]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("memory cgroup /x"), "{e}");
        a.size = Some(1000);
        let e = params(&topo, &a, &[2]).unwrap_err();
        assert!(e.to_string().contains("burst of 800 processes"), "{e}");
        assert!(e.to_string().contains("memory cgroup /x"), "{e}");
        // Too many tasks for even one element each: refused, naming it.
        a.burst_groups_given = false;
        a.size = None;
        let e = params(&topo, &a, &[512]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("memory cgroup /x"), "{e}");
        // Without a burst the tasks get it all.
        let p = &params(&topo, &asked(None, Some(1)), &[2]).unwrap()[0];
        assert!(p.chosen.burst.is_none());
        assert!(tasks_bytes(2, p.size) <= admission::limit(62 * MIB));
    }

    #[test]
    fn one_pass_is_timed() {
        let s = time_one_pass(10_000);
        assert!(s > 0.0 && s < 1.0, "{s}");
    }
}
