//! Core-to-core latency: a cache line handed between two threads pinned to
//! two CPUs, for every pair of the CPUs given (or a sample of them on a
//! machine with many), in up to four ways (see [`pingpong`]). Each pair's
//! threads are pinned and seen on their CPUs before and after the timed
//! loops; a pair whose threads were not is kept with its figures left out
//! and a note.
//!
//! Flow: [`plan::plan`] picks the pairs (with their class and nodes),
//! [`run`] measures each pair in every variant asked for, [`records`]
//! turns the samples into records, [`view`] shows them.

mod findings;
mod part;
pub(crate) use part::estimate;
pub(crate) mod pingpong;
pub(crate) mod plan;
pub(crate) mod records;
pub(crate) mod view;

pub(crate) use view::C2cView;

use crate::placement::affinity;
use crate::results::Condition;
use crate::results::names::c2c::variant;
use crate::sys::threads::{CannotStart, StartGate, spawn_scoped};
use crate::topology::Topology;
use plan::{Pair, Plan};
use std::sync::Barrier;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

pub(crate) const PROBE: &str = crate::results::names::probe::C2C;

/// How the line travels (see [`pingpong`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Variant {
    Cas,
    Store,
    CleanRead,
    ModifiedRead,
}

impl Variant {
    pub(crate) const ALL: [Variant; 4] = [
        Variant::Cas,
        Variant::Store,
        Variant::CleanRead,
        Variant::ModifiedRead,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Variant::Cas => variant::CAS,
            Variant::Store => variant::STORE,
            Variant::CleanRead => variant::CLEAN_READ,
            Variant::ModifiedRead => variant::MODIFIED_READ,
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Variant> {
        Self::ALL.into_iter().find(|v| v.name() == text)
    }

    /// Whether a sample is a chase through [`pingpong::CHASE_LINES`] lines
    /// (else `iterations` round trips): one way, `a` reading from `b`.
    pub(crate) fn is_read(self) -> bool {
        matches!(self, Variant::CleanRead | Variant::ModifiedRead)
    }

    /// Whether this machine can run it (`clean-read` flushes lines).
    pub(crate) fn available(self) -> bool {
        self != Variant::CleanRead || pingpong::CAN_FLUSH
    }
}

/// Which node the lines' memory is bound to, for each pair. Where the
/// line lives can change the figure: a request that misses may be sent to
/// the line's home node first (its memory controller or directory), so
/// two CPUs of one node hand a line homed on another node over more
/// slowly on some machines. Intel's Memory Latency Checker reports its
/// remote figures homed on the writer's and on the reader's socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineHome {
    /// The node of the pair's `cpu`: the timed CPU, the reader in the
    /// read variants.
    Cpu,
    /// The node of the pair's `peer_cpu`: the writer in the read variants.
    Peer,
    /// One node for every pair.
    Node(usize),
}

impl LineHome {
    /// The node a pair's lines go on; `None` where the topology does not
    /// say which node the CPU is on (then they stay where first touched).
    pub(crate) fn node(self, pair: &Pair) -> Option<usize> {
        match self {
            LineHome::Cpu => pair.node_a,
            LineHome::Peer => pair.node_b,
            LineHome::Node(n) => Some(n),
        }
    }

    /// `cpu`, `peer` or `node` (the `line_home` param).
    pub(crate) fn name(self) -> &'static str {
        use crate::results::names::c2c::line_home;
        match self {
            LineHome::Cpu => line_home::CPU,
            LineHome::Peer => line_home::PEER,
            LineHome::Node(_) => line_home::NODE,
        }
    }
}

/// What to measure.
#[derive(Debug, Clone)]
pub(crate) struct C2cConfig {
    pub variants: Vec<Variant>,
    /// The CPUs whose pairs are measured, ascending, at least two.
    pub cpus: Vec<usize>,
    /// Round trips per sample (ping-pong variants).
    pub iterations: u64,
    /// Samples per pair and variant, after one warm-up sample.
    pub samples: usize,
    /// Above this many CPUs, pairs are sampled.
    pub full_up_to: usize,
    /// Pairs per (class, node pair) group when sampled.
    pub per_group: usize,
    /// No new pair is started after this long, and a pair still running
    /// then is stopped and left out.
    pub time_limit: Option<Duration>,
    pub line_home: LineHome,
}

/// One pair in one variant.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PairResult {
    pub pair: Pair,
    pub variant: Variant,
    /// One-way latency per sample, ns; empty where pinning failed.
    pub samples: Vec<f64>,
    /// Hand-offs per sample: round trips, or lines chased.
    pub iterations: u64,
    /// CPUs the two threads were seen on (before, after the loops).
    pub seen_a: Vec<usize>,
    pub seen_b: Vec<usize>,
    /// Why there are no samples, if there are none.
    pub failure: Option<String>,
    /// The node the lines were bound to, and where their pages were found
    /// (or why that could not be looked up).
    pub line_node: Option<usize>,
    pub line_pages: Option<crate::memory::Placement>,
    pub line_unchecked: Option<String>,
}

impl PairResult {
    pub(crate) fn verified(&self) -> bool {
        self.failure.is_none()
            && self.seen_a.iter().all(|&c| c == self.pair.a)
            && self.seen_b.iter().all(|&c| c == self.pair.b)
            && !self.seen_a.is_empty()
            && !self.seen_b.is_empty()
    }
}

/// What a run measured.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub plan: Plan,
    pub results: Vec<PairResult>,
    /// Pairs planned but not measured (time limit, stop), as a note.
    pub notes: Vec<String>,
    /// What the notes say of a stop, as data.
    pub conditions: Vec<Condition>,
    pub line_home: LineHome,
    /// Why the run ended early where a pair's threads could not start;
    /// the pairs before it are kept.
    pub failed: Option<String>,
}

/// The least a round trip of `cas` or `store` takes (two SMT siblings of a
/// fast core hand a line over in about 15 ns each way), and the least a
/// read variant's sample takes per line (the owner relinks and the reader
/// chases each line): floors, so a plan refused on them cannot fit.
const LEAST_ROUND_TRIP_NS: f64 = 20.0;
const LEAST_READ_LINE_NS: f64 = 10.0;

/// The least one pair takes in every variant of `cfg`, warm-up sample
/// included.
pub(crate) fn least_pair_time(cfg: &C2cConfig) -> Duration {
    let samples = (cfg.samples + 1) as f64;
    let ns: f64 = cfg
        .variants
        .iter()
        .map(|v| {
            if v.is_read() {
                // Measured both ways.
                2.0 * samples * pingpong::CHASE_LINES as f64 * LEAST_READ_LINE_NS
            } else {
                samples * cfg.iterations as f64 * LEAST_ROUND_TRIP_NS
            }
        })
        .sum();
    Duration::from_secs_f64(ns / 1e9)
}

/// Measures every planned pair in every variant; stops starting pairs at
/// a stop signal or the time limit, keeping what was measured.
pub(crate) fn run(topo: &Topology, cfg: &C2cConfig, progress: &mut dyn FnMut(&str)) -> Outcome {
    let plan = plan::plan(topo, &cfg.cpus, cfg.full_up_to, cfg.per_group);
    let deadline = cfg.time_limit.map(|l| Instant::now() + l);
    let usable = topo.usable_memory_nodes();
    let mut results = Vec::new();
    let mut notes = Vec::new();
    let mut conditions = Vec::new();
    let mut failed = None;
    let out_of_time = || deadline.is_some_and(|d| Instant::now() >= d);
    'pairs: for (done, pair) in plan.pairs.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        if out_of_time() {
            notes.push(format!(
                "time limit reached: {done} of {} planned pairs measured",
                plan.pairs.len()
            ));
            conditions.extend(cfg.time_limit.map(Condition::time_limit));
            break;
        }
        progress(&format!(
            "pair {}/{}: CPU {} and CPU {}",
            done + 1,
            plan.pairs.len(),
            pair.a,
            pair.b
        ));
        for &v in &cfg.variants {
            // A ping-pong sends the line both ways in every round trip; a
            // read variant times one way, so it is measured both ways.
            let ways = if v.is_read() {
                vec![*pair, pair.reversed()]
            } else {
                vec![*pair]
            };
            for p in ways {
                // A node without memory (CPU-only nodes), or whose memory
                // the cpuset keeps from this process, cannot hold the
                // lines: they stay where first written.
                let home = cfg.line_home.node(&p).filter(|&n| usable.contains(n));
                match measure_pair(p, v, cfg, home, deadline) {
                    Ok(Some(r)) => results.push(r),
                    Ok(None) if crate::interrupt::requested().is_some() => break 'pairs,
                    Ok(None) => {
                        notes.push(format!(
                            "time limit reached during pair {}: {done} of {} planned pairs \
                             measured, the {} samples of that pair left out",
                            done + 1,
                            plan.pairs.len(),
                            v.name()
                        ));
                        conditions.extend(cfg.time_limit.map(Condition::time_limit));
                        break 'pairs;
                    }
                    Err(e) => {
                        failed = Some(e.to_string());
                        break 'pairs;
                    }
                }
            }
        }
    }
    Outcome {
        plan,
        results,
        notes,
        conditions,
        line_home: cfg.line_home,
        failed,
    }
}

/// What one side's thread saw and measured.
struct Side {
    seen: Vec<usize>,
    samples: Option<Vec<f64>>,
    failure: Option<String>,
}

impl Side {
    fn empty() -> Side {
        Side {
            seen: Vec::new(),
            samples: None,
            failure: None,
        }
    }
}

/// What the two threads of one pair share while they hand the lines over.
struct Exchange<'a> {
    shared: &'a pingpong::Shared,
    barrier: &'a Barrier,
    gate: &'a StartGate,
    v: Variant,
    iters: u64,
    /// Samples to take, the warm-up one included.
    samples: usize,
}

impl Exchange<'_> {
    /// One side's thread: once the gate opens, pins itself to `cpu` and
    /// checks it, then times the hand-offs (`timed`) or answers them, and
    /// looks again where it ran.
    fn side(&self, cpu: usize, timed: bool) -> Side {
        let (shared, v, iters, samples) = (self.shared, self.v, self.iters, self.samples);
        let total = iters * samples as u64;
        let mut out = Side::empty();
        if !self.gate.wait() {
            return out;
        }
        match affinity::pin_and_check(cpu) {
            Ok(c) => out.seen.push(c),
            Err(e) => {
                out.failure = Some(format!("CPU {cpu}: {e}"));
                shared.raise_stop();
            }
        }
        self.barrier.wait();
        if shared.stop_raised() {
            return out;
        }
        out.samples = match (v, timed) {
            (Variant::Cas, true) => shared.cas_a(iters, samples),
            (Variant::Store, true) => shared.store_a(iters, samples),
            (_, true) => shared.read_a(samples),
            (Variant::Cas, false) => shared.cas_b(total).then(Vec::new),
            (Variant::Store, false) => shared.store_b(total).then(Vec::new),
            (r, false) => shared
                .read_b(samples, r == Variant::CleanRead)
                .then(Vec::new),
        };
        out.seen.push(affinity::current_cpu());
        out
    }

    /// Runs `b`'s side and `a`'s (timed) side on threads of their own;
    /// at the `deadline` both are told to stop. Their sides, `a`'s first;
    /// an error where the threads could not both start.
    fn run(&self, pair: Pair, deadline: Option<Instant>) -> Result<(Side, Side), CannotStart> {
        let (done_tx, done_rx) = mpsc::channel::<()>();
        std::thread::scope(|s| {
            let side = |cpu: usize, timed: bool| {
                // Dropped when the side returns: the watch below sees both end.
                let done = done_tx.clone();
                move || {
                    let _done = done;
                    self.side(cpu, timed)
                }
            };
            let started = spawn_scoped(s, (0, 2), side(pair.b, false))
                .and_then(|hb| Ok((hb, spawn_scoped(s, (1, 2), side(pair.a, true))?)));
            drop(done_tx);
            let (hb, ha) = match started {
                Ok(hs) => hs,
                Err(e) => {
                    self.gate.open(false);
                    return Err(e);
                }
            };
            self.gate.open(true);
            if let Some(d) = deadline {
                let left = d.saturating_duration_since(Instant::now());
                if let Err(RecvTimeoutError::Timeout) = done_rx.recv_timeout(left) {
                    self.shared.raise_stop();
                }
            }
            let join = |h: std::thread::ScopedJoinHandle<'_, Side>| {
                h.join().unwrap_or_else(|_| Side {
                    failure: Some("a measuring thread panicked".into()),
                    ..Side::empty()
                })
            };
            Ok((join(ha), join(hb)))
        })
    }
}

/// One pair in one variant: two threads, `a` timed, `b` answering, each
/// pinned and checked on its CPU, the lines on `line_node` where given;
/// `None` where a stop or the `deadline` cut it short; an error where
/// its threads could not both start.
fn measure_pair(
    pair: Pair,
    v: Variant,
    cfg: &C2cConfig,
    line_node: Option<usize>,
    deadline: Option<Instant>,
) -> Result<Option<PairResult>, CannotStart> {
    let mut result = PairResult {
        pair,
        variant: v,
        samples: Vec::new(),
        iterations: 0,
        seen_a: Vec::new(),
        seen_b: Vec::new(),
        failure: None,
        line_node,
        line_pages: None,
        line_unchecked: None,
    };
    let shared = match pingpong::Shared::new(line_node) {
        Ok(s) => s,
        Err(e) => {
            result.failure = Some(format!("the lines' memory: {e}"));
            return Ok(Some(result));
        }
    };
    match shared.placement() {
        Ok(p) => result.line_pages = Some(p),
        Err(e) => result.line_unchecked = Some(e.to_string()),
    }
    let exchange = Exchange {
        shared: &shared,
        barrier: &Barrier::new(2),
        gate: &StartGate::new(),
        v,
        iters: cfg.iterations,
        // One warm-up sample first, dropped, as core-to-core-latency does.
        samples: cfg.samples + 1,
    };
    let (sa, sb) = exchange.run(pair, deadline)?;
    let failure = sa.failure.clone().or(sb.failure.clone());
    result.samples = match (&sa.samples, &sb.samples) {
        (Some(s), Some(_)) => s.get(1..).unwrap_or_default().to_vec(),
        _ if failure.is_none() => return Ok(None),
        _ => Vec::new(),
    };
    result.iterations = if v.is_read() {
        pingpong::CHASE_LINES as u64
    } else {
        cfg.iterations
    };
    result.seen_a = sa.seen;
    result.seen_b = sb.seen;
    result.failure = failure;
    Ok(Some(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(v: Variant) -> C2cConfig {
        C2cConfig {
            variants: vec![v],
            cpus: Vec::new(),
            iterations: 50,
            samples: 5,
            full_up_to: 64,
            per_group: 4,
            time_limit: None,
            line_home: LineHome::Cpu,
        }
    }

    fn any_pair() -> Option<Pair> {
        let cpus: Vec<usize> = affinity::current_affinity().ok()?.iter().collect();
        (cpus.len() >= 2).then(|| Pair {
            a: cpus[0],
            b: cpus[1],
            node_a: None,
            node_b: None,
            class: plan::PairClass::SameNode,
        })
    }

    #[test]
    fn every_variant_measures_a_verified_pair() {
        let Some(pair) = any_pair() else {
            eprintln!("skipped: fewer than two CPUs allowed");
            return;
        };
        let node = crate::placement::sys::online_nodes().first();
        for v in Variant::ALL.into_iter().filter(|v| v.available()) {
            let r = measure_pair(pair, v, &cfg(v), node, None).unwrap().unwrap();
            assert!(r.verified(), "{v:?}: {r:?}");
            assert_eq!(r.line_node, node);
            assert_eq!(r.line_pages.as_ref().unwrap().on_target_pct, Some(100.0));
            assert_eq!(r.samples.len(), 5, "{v:?}");
            assert!(r.samples.iter().all(|s| *s > 0.0 && s.is_finite()));
            assert_eq!(r.seen_a, [pair.a, pair.a]);
        }
    }

    #[test]
    fn a_cpu_that_cannot_be_pinned_fails_the_pair_without_hanging() {
        let Some(mut pair) = any_pair() else {
            return;
        };
        pair.b = 1 << 20;
        let r = measure_pair(pair, Variant::Cas, &cfg(Variant::Cas), None, None)
            .unwrap()
            .unwrap();
        assert!(!r.verified() && r.samples.is_empty());
        assert!(r.failure.unwrap().contains("CPU 1048576"));
    }

    #[test]
    fn lines_that_cannot_be_bound_fail_the_pair() {
        let Some(pair) = any_pair() else {
            return;
        };
        let missing = crate::placement::sys::online_nodes().end();
        let r = measure_pair(pair, Variant::Cas, &cfg(Variant::Cas), Some(missing), None)
            .unwrap()
            .unwrap();
        assert!(!r.verified() && r.samples.is_empty());
        let f = r.failure.unwrap();
        assert!(f.starts_with("the lines' memory: mbind("), "{f}");
    }

    #[test]
    fn the_time_limit_stops_a_pair_that_is_running() {
        let Some(pair) = any_pair() else {
            return;
        };
        // Days of round trips: only the deadline can end it.
        let mut long = cfg(Variant::Cas);
        long.iterations = 10_000_000;
        long.samples = 100_000;
        let begun = Instant::now();
        let deadline = begun + Duration::from_millis(300);
        let r = measure_pair(pair, Variant::Cas, &long, None, Some(deadline)).unwrap();
        assert!(r.is_none(), "{r:?}");
        assert!(
            begun.elapsed() < Duration::from_secs(10),
            "{:?}",
            begun.elapsed()
        );
    }

    #[test]
    fn the_least_pair_time_counts_every_variant_and_sample() {
        let mut c = cfg(Variant::Cas);
        c.iterations = 10_000_000;
        c.samples = 100_000;
        // 100,001 samples x 1e7 round trips x 20 ns: 20,000 s at least.
        let least = least_pair_time(&c).as_secs_f64();
        assert!((least - 20_000.2).abs() < 1.0, "{least}");
        c.variants = vec![Variant::Cas, Variant::CleanRead];
        assert!(least_pair_time(&c).as_secs_f64() > least);
        // The default plan: well under a second.
        assert!(least_pair_time(&cfg(Variant::Cas)) < Duration::from_millis(1));
    }

    #[test]
    fn the_home_follows_the_pair_or_stays_put() {
        let pair = Pair {
            a: 0,
            b: 4,
            node_a: Some(0),
            node_b: Some(1),
            class: plan::PairClass::Remote,
        };
        assert_eq!(LineHome::Cpu.node(&pair), Some(0));
        assert_eq!(LineHome::Peer.node(&pair), Some(1));
        assert_eq!(LineHome::Peer.node(&pair.reversed()), Some(0));
        assert_eq!(LineHome::Node(3).node(&pair), Some(3));
    }

    #[test]
    fn variant_names_round_trip() {
        for v in Variant::ALL {
            assert_eq!(Variant::parse(v.name()), Some(v));
        }
        assert_eq!(Variant::parse("nope"), None);
    }
}
