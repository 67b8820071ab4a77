//! What a run does when the command line leaves it open, chosen so that it
//! tests what numa_test tested in 2002: arrays well beyond the cache the
//! task runs under (there 20 MB against a few MB of cache; here 4 x the
//! last-level cache), and tasks still at work when the burst comes (one
//! pass timed here, then as many passes as make the run last about 3 x the
//! burst time).

use super::task::Arrays;
use super::{BurstPlan, Chosen, Params};
use crate::error::usage;
use crate::memory::admission;
use crate::topology::Topology;
use anyhow::Result;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The original's elements per array (its PROBLEMSIZE).
pub const ORIGINAL_SIZE: usize = 1_000_000;

/// The per-task arrays are this many times the last-level cache.
pub const CACHE_FACTOR: u64 = 4;

/// The run should last this many times the burst time.
pub const RUN_FACTOR: f64 = 3.0;

/// The seed's series of task counts.
pub const SERIES: [usize; 5] = [4, 8, 16, 32, 64];

/// A series goes up to this many tasks per usable CPU (the seed: 64 tasks
/// on 16 CPUs).
pub const SERIES_TASKS_PER_CPU: usize = 4;

/// The largest last-level cache one CPU this process may use sits under,
/// in bytes; `None` when sysfs lists no cache.
pub fn llc_bytes(topo: &Topology) -> Option<u64> {
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

/// The array size for `tasks` tasks where `limit` bytes may be mapped:
/// 4 x the last-level cache per task, less where the memory cannot hold
/// that for every task; the original's size where no cache is known.
pub fn choose_size(llc: Option<u64>, tasks: usize, limit: Option<u64>) -> Result<SizeChoice> {
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
    if let Some(limit) = limit {
        let fits = (limit / tasks.max(1) as u64 / per_element) as usize;
        if fits == 0 {
            return Err(usage(format!(
                "{tasks} tasks: not even one element per task fits in the free memory ({}); use fewer tasks",
                crate::units::bytes(limit)
            )));
        }
        if fits < elements {
            elements = fits;
            basis = format!("{basis}, cut to what {tasks} tasks may map");
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
pub fn time_one_pass(elements: usize) -> f64 {
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
pub fn choose_passes(pass_s: f64, tasks: usize, cpus: usize, target_s: f64) -> PassesChoice {
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
pub fn target_s(burst_at_s: f64) -> f64 {
    RUN_FACTOR * burst_at_s.max(0.1)
}

/// The seed's task counts this machine runs: at most
/// [`SERIES_TASKS_PER_CPU`] per usable CPU (at least the smallest), and
/// as many as `fits` admits; the counts left out, for a note.
pub fn series(cpus: usize, fits: &dyn Fn(usize) -> bool) -> (Vec<usize>, Vec<usize>) {
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
    /// The burst time the passes aim from, burst or not.
    pub burst_at: Duration,
}

/// The most bytes a run may map here, when the kernel says what is free.
fn memory_limit(topo: &Topology) -> Option<u64> {
    admission::free_bytes(topo, None).map(admission::limit)
}

/// Whether `tasks` tasks fit in the free memory with arrays of `size`
/// elements, or with the full 4 x cache arrays where `size` is open.
pub fn fits(topo: &Topology, size: Option<usize>, tasks: usize) -> bool {
    let elements = size.unwrap_or_else(|| {
        choose_size(llc_bytes(topo), tasks, None).map_or(ORIGINAL_SIZE, |c| c.elements)
    });
    memory_limit(topo)
        .is_none_or(|limit| (tasks as u64).saturating_mul(Arrays::bytes(elements)) <= limit)
}

/// The runs for each of `counts` tasks: the same array size for all (set,
/// or chosen for the largest count), passes set or chosen per count from
/// one timed pass. A size given is admitted for the largest count.
pub fn params(topo: &Topology, asked: &Asked, counts: &[usize]) -> Result<Vec<Params>> {
    let most = counts.iter().copied().max().unwrap_or(1);
    let size = match asked.size {
        Some(n) => {
            admission::admit(
                topo,
                &admission::Footprint {
                    bytes: (most as u64).saturating_mul(Arrays::bytes(n)),
                    nodes: None,
                    what: format!("{most} tasks x --size {n}"),
                    remedy: "use fewer tasks or a smaller --size",
                },
            )?;
            None
        }
        None => Some(choose_size(llc_bytes(topo), most, memory_limit(topo))?),
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
                burst: asked.burst,
                chosen: Chosen {
                    size: size.clone(),
                    target_s: passes.is_some().then_some(target),
                    passes,
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
        // 8 tasks in 512 MiB: 64 MiB each, still beyond the cache.
        let c = choose_size(Some(32 * MIB), 8, Some(512 * MIB)).unwrap();
        assert_eq!(c.elements, (64 * MIB / 20) as usize);
        assert!(c.basis.contains("cut to"), "{}", c.basis);
        assert!(!c.basis.contains("NOT"), "{}", c.basis);
        // 64 tasks in 512 MiB: 8 MiB each, below the cache, and said so.
        let c = choose_size(Some(32 * MIB), 64, Some(512 * MIB)).unwrap();
        assert!(c.basis.contains("NOT larger"), "{}", c.basis);
        // No cache known: the original's 1,000,000.
        let c = choose_size(None, 2, Some(1 << 40)).unwrap();
        assert_eq!(c.elements, ORIGINAL_SIZE);
        assert!(c.basis.contains("original"), "{}", c.basis);
        let e = choose_size(Some(MIB), 100, Some(1000)).unwrap_err();
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
    fn one_pass_is_timed() {
        let s = time_one_pass(10_000);
        assert!(s > 0.0 && s < 1.0, "{s}");
    }
}
