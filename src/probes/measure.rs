//! The two measurements every probe builds on: bandwidth of a pinned team
//! over its bound arrays, and pointer-chase latency of one pinned thread.
//! The sweep and the matrix both call these, so a matrix cell and a sweep
//! row at the same size, thread and kernel are the same number.

use super::team::{
    NodeArrays, Seat, Span, Team, TeamMemory, TeamSetup, layout_bytes, pinned, with_team,
    with_team_on,
};
use crate::ids::NodeSet;
use crate::kernels::{self, KernelSpec, chase::Chases, latency::Chain, pattern::Pattern};
use crate::memory::{Buffer, BufferOptions, PageKind};
use crate::placement::MemPolicy;
use crate::stats;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How a bandwidth measurement is timed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// Timed runs after the warm-up; the best is kept.
    pub tries: usize,
    /// Shortest timed run; repetitions are scaled to reach it.
    pub min_run: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            tries: 3,
            min_run: Duration::from_millis(40),
        }
    }
}

/// Where the memory of a team or thread really was.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Seen {
    /// Checked pages per node, all threads together.
    pub pages_by_node: BTreeMap<usize, u64>,
    /// Lowest percentage of checked pages on the intended node over threads.
    pub verified_pct: f64,
    /// Percent of memory in huge pages (mean over threads).
    pub huge_pct: f64,
    pub cpus_seen: Vec<usize>,
    /// Page kind the first thread got.
    pub page_kind: String,
}

impl Seen {
    /// What one chasing thread on `cpu` saw of a buffer of `kind` pages
    /// placed as `placement` says.
    pub(crate) fn of_chase(
        placement: crate::memory::Placement,
        cpu: usize,
        kind: impl std::fmt::Display,
    ) -> Seen {
        Seen {
            pages_by_node: placement.pages_by_node,
            verified_pct: placement.on_target_pct.unwrap_or(0.0),
            huge_pct: placement.huge_pct,
            cpus_seen: vec![cpu],
            page_kind: kind.to_string(),
        }
    }

    /// As the results document holds it.
    pub(crate) fn placement(&self) -> crate::results::Placement {
        crate::results::Placement {
            pages_by_node: self
                .pages_by_node
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            on_target_pct: Some(self.verified_pct),
            huge_pct: self.huge_pct,
            cpus_seen: self.cpus_seen.clone(),
        }
    }
}

/// One bandwidth measurement of a team.
#[derive(Debug, Clone)]
pub(crate) struct Bandwidth {
    pub kernel: &'static KernelSpec,
    pub threads: usize,
    pub array_bytes: usize,
    /// Repetitions per timed run.
    pub reps: u64,
    /// Repetitions run in all, warm-up included.
    pub iterations: u64,
    /// Seconds of each timed run.
    pub times_s: Vec<f64>,
    pub elapsed_s: f64,
    pub seen: Seen,
}

impl Bandwidth {
    fn best_s(&self) -> f64 {
        self.times_s.iter().copied().fold(f64::INFINITY, f64::min)
    }

    fn lm_bytes(&self) -> f64 {
        self.threads as f64 * self.array_bytes as f64 * self.reps as f64
    }

    fn stream_bytes(&self) -> f64 {
        let elements = (self.array_bytes / 8) as f64;
        self.threads as f64
            * elements
            * self.kernel.op.stream_bytes_per_element() as f64
            * self.reps as f64
    }

    /// lmbench/sc-membench convention: array size x threads x repetitions
    /// / best time (a copy counts its buffer once).
    pub(crate) fn lm_mb_s(&self) -> f64 {
        self.lm_bytes() / self.best_s() / 1e6
    }

    /// STREAM convention: every byte read or written / best time.
    pub(crate) fn stream_mb_s(&self) -> f64 {
        self.stream_bytes() / self.best_s() / 1e6
    }

    /// Each timed run in the lmbench convention.
    pub(crate) fn lm_samples(&self) -> Vec<f64> {
        let bytes = self.lm_bytes();
        self.times_s.iter().map(|t| bytes / t / 1e6).collect()
    }

    /// Each timed run in the STREAM convention.
    pub(crate) fn stream_samples(&self) -> Vec<f64> {
        let bytes = self.stream_bytes();
        self.times_s.iter().map(|t| bytes / t / 1e6).collect()
    }
}

/// Every seat runs `kernel` over `array_bytes`-sized arrays bound to the
/// seat's node: one warm-up that grows the repetitions until a run lasts
/// `min_run`, then `tries` timed runs.
pub(crate) fn bandwidth(
    seats: &[Seat],
    array_bytes: usize,
    kernel: &'static KernelSpec,
    pages: PageKind,
    timing: Timing,
) -> Result<Bandwidth> {
    bandwidth_split(seats, array_bytes, kernel, pages, timing, &[])
}

/// [`bandwidth`] with every thread's memory spread over nodes by weight
/// (see [`TeamMemory::split`]); the seats' own nodes are then ignored.
pub(crate) fn bandwidth_split(
    seats: &[Seat],
    array_bytes: usize,
    kernel: &'static KernelSpec,
    pages: PageKind,
    timing: Timing,
    split: &[(usize, u32)],
) -> Result<Bandwidth> {
    let mut one = bandwidths_split(
        seats,
        &[(kernel, array_bytes)],
        (pages, timing),
        split,
        &mut |_| true,
    )?;
    Ok(one.remove(0))
}

/// [`bandwidth_split`] for each (kernel, array bytes) of `runs` in turn, on
/// one team that maps its memory once, for the run that needs the most:
/// faulting in a working set past the L3 for every kernel cost more than
/// measuring it. `go_on(i)` is asked before run `i`; the runs end at the
/// first `false`.
pub(crate) fn bandwidths_split(
    seats: &[Seat],
    runs: &[(&'static KernelSpec, usize)],
    (pages, timing): (PageKind, Timing),
    split: &[(usize, u32)],
    go_on: &mut dyn FnMut(usize) -> bool,
) -> Result<Vec<Bandwidth>> {
    let Some(&(kernel, array_bytes)) = runs
        .iter()
        .max_by_key(|(k, bytes)| layout_bytes(*bytes, k.op.arrays()))
    else {
        return Ok(Vec::new());
    };
    let memory = TeamMemory {
        array_bytes,
        arrays: kernel.op.arrays(),
        pages,
        split: split.to_vec(),
    };
    let mut begun = Instant::now();
    with_team(seats, &memory, |team, setup| {
        let seen = seen(setup);
        let mut out = Vec::with_capacity(runs.len());
        for (i, &(kernel, array_bytes)) in runs.iter().enumerate() {
            if !go_on(i) {
                break;
            }
            let (reps, iterations, times_s) = time_runs(team, kernel, array_bytes, timing);
            out.push(Bandwidth {
                kernel,
                threads: seats.len(),
                array_bytes,
                reps,
                iterations,
                times_s,
                elapsed_s: begun.elapsed().as_secs_f64(),
                seen: seen.clone(),
            });
            begun = Instant::now();
        }
        Ok(out)
    })
}

/// [`bandwidth`] of a team on memory mapped and filled before (every seat's
/// node being the arrays' node): each thread in its own block of `arrays`,
/// each array as large as a team of this size gets of the working set, the
/// blocks' placement checked by the threads before they run.
pub(crate) fn bandwidth_on(
    seats: &[Seat],
    arrays: &mut NodeArrays,
    kernel: &'static KernelSpec,
    timing: Timing,
) -> Result<Bandwidth> {
    if kernel.op.arrays() > arrays.arrays() {
        anyhow::bail!(
            "{} needs {} arrays, the arrays were laid out for {}",
            kernel.name,
            kernel.op.arrays(),
            arrays.arrays()
        );
    }
    let array_bytes = arrays.array_bytes(seats.len());
    let begun = Instant::now();
    with_team_on(seats, arrays, |team, setup| {
        let (reps, iterations, times_s) = time_runs(team, kernel, array_bytes, timing);
        Ok(Bandwidth {
            kernel,
            threads: seats.len(),
            array_bytes,
            reps,
            iterations,
            times_s,
            elapsed_s: begun.elapsed().as_secs_f64(),
            seen: seen(setup),
        })
    })
}

/// One warm-up that grows the repetitions until a run lasts a quarter of
/// `min_run`, then `tries` timed runs: (repetitions per timed run,
/// repetitions in all, seconds of each timed run).
fn time_runs(
    team: &Team<'_>,
    kernel: &'static KernelSpec,
    array_bytes: usize,
    timing: Timing,
) -> (u64, u64, Vec<f64>) {
    let mut reps = 1u64;
    let mut seed = 0u64;
    let mut iterations = 0;
    let min_run = timing.min_run.as_secs_f64();
    loop {
        let wall = team.run(kernel, array_bytes, reps, seed).wall_s();
        seed += reps;
        iterations += reps;
        if wall >= min_run / 4.0 || reps > 1 << 40 {
            reps = ((reps as f64 * min_run / wall.max(1e-9)).ceil() as u64).max(1);
            break;
        }
        reps *= 4;
    }
    let mut times_s = Vec::with_capacity(timing.tries);
    for _ in 0..timing.tries.max(1) {
        times_s.push(team.run(kernel, array_bytes, reps, seed).wall_s());
        seed += reps;
        iterations += reps;
    }
    (reps, iterations, times_s)
}

/// Where a team's memory was, from what its threads saw setting up.
fn seen(setup: &TeamSetup) -> Seen {
    let mut pages_by_node = BTreeMap::new();
    for p in &setup.placements {
        for (n, c) in &p.pages_by_node {
            *pages_by_node.entry(*n).or_default() += c;
        }
    }
    let threads = setup.placements.len().max(1) as f64;
    Seen {
        pages_by_node,
        verified_pct: setup
            .placements
            .iter()
            .map(|p| p.on_target_pct.unwrap_or(0.0))
            .fold(100.0, f64::min),
        huge_pct: setup.placements.iter().map(|p| p.huge_pct).sum::<f64>() / threads,
        cpus_seen: setup.cpus_seen.clone(),
        page_kind: setup
            .page_kinds
            .first()
            .map_or("base".into(), |k| k.to_string()),
    }
}

/// Latency samples: at least 7, at most 21, until the coefficient of
/// variation drops under 5%.
const MIN_SAMPLES: usize = 7;
const MAX_SAMPLES: usize = 21;
const TARGET_CV_PCT: f64 = 5.0;
/// Warm-up runs at most, before sampling starts.
const WARMUP_MAX: usize = 10;

/// One pointer-chase measurement.
#[derive(Debug, Clone)]
pub(crate) struct Latency {
    pub size_bytes: usize,
    /// The chase's access pattern.
    pub pattern: Pattern,
    /// ns per load of each sample (~10 ms each).
    pub samples: Vec<f64>,
    pub elapsed_s: f64,
    pub seen: Seen,
}

impl Latency {
    pub(crate) fn median_ns(&self) -> f64 {
        stats::median(&self.samples)
    }

    pub(crate) fn stddev_ns(&self) -> f64 {
        stats::stddev(&self.samples)
    }

    pub(crate) fn cv_pct(&self) -> f64 {
        stats::cv_pct(&self.samples)
    }
}

/// A thread pinned to `seat.cpu` chases a `size`-byte buffer bound to
/// `seat.node` in `pattern`: full-random is the in-place Sattolo cycle
/// through every cache line, the others [`Chases`] with one chase.
pub(crate) fn latency(
    seat: Seat,
    size: usize,
    pages: PageKind,
    pattern: &Pattern,
) -> Result<Latency> {
    let begun = Instant::now();
    let (samples, seen) = on_chase_buffer(seat, size, pages, |words| {
        Ok(Links::build(words, pattern, size)?.sample())
    })
    .with_context(|| format!("{pattern} latency at {} KiB", size / 1024))?;
    Ok(Latency {
        size_bytes: size,
        pattern: *pattern,
        samples,
        elapsed_s: begun.elapsed().as_secs_f64(),
        seen,
    })
}

/// Runs `chase` on a thread pinned to `seat.cpu` over the words of a
/// `size`-byte buffer of `pages` bound to `seat.node`, placement verified
/// before `chase` links anything.
pub(crate) fn on_chase_buffer<T: Send>(
    seat: Seat,
    size: usize,
    pages: PageKind,
    chase: impl FnOnce(&mut [u64]) -> Result<T> + Send,
) -> Result<(T, Seen)> {
    let (out, placement, cpu, kind) = std::thread::scope(|scope| {
        crate::sys::threads::spawn_scoped(scope, (0, 1), || -> Result<_> {
            let cpu = crate::placement::pin_and_check(seat.cpu)?;
            let opts = BufferOptions::new(size)
                .pages(pages)
                .policy(MemPolicy::Bind(NodeSet::from_ids([seat.node])));
            let mut buffer = Buffer::new(&opts)?;
            let placement = buffer.verify()?;
            let kind = buffer.page_kind();
            let out = chase(buffer.as_mut_slice::<u64>())?;
            Ok((out, placement, cpu, kind))
        })?
        .join()
        .map_err(|_| anyhow::anyhow!("the latency thread panicked"))?
    })?;
    Ok((out, Seen::of_chase(placement, cpu, kind)))
}

/// One chase linked through a buffer: the Sattolo chain for full-random,
/// else [`Chases`] with one chase.
enum Links<'b> {
    Chain(Chain<'b>),
    Chases(Chases<'b>),
}

impl<'b> Links<'b> {
    fn build(words: &'b mut [u64], pattern: &Pattern, size: usize) -> Result<Links<'b>> {
        Ok(if *pattern == Pattern::FullRandom {
            Links::Chain(Chain::build(
                words,
                kernels::latency::LINE_BYTES,
                size as u64,
            )?)
        } else {
            Links::Chases(Chases::build(
                words,
                pattern,
                pattern.spacing(),
                1,
                size as u64,
            )?)
        })
    }

    /// [`sample_chase`] of this chase, from where it last stopped.
    fn sample(&mut self) -> Vec<f64> {
        match self {
            Links::Chain(chain) => {
                let lap = chain.lines() as u64;
                sample_chase(&mut |loads| chain.chase_ns_per_load(loads), lap)
            }
            Links::Chases(c) => {
                let lap = c.elements() as u64;
                sample_chase(&mut |loads| c.ns_per_access(1, loads), lap)
            }
        }
    }
}

/// A chase linked once through a buffer bound to one node, that threads
/// pinned to any CPU follow in turn ([`NodeChase::latency_from`]): the
/// matrix links one per memory node, not one per node pair.
pub(crate) struct NodeChase<'b> {
    links: Links<'b>,
    span: Span,
    kind: PageKind,
    size: usize,
    pattern: Pattern,
}

/// Maps a `size`-byte buffer of `pages` bound to `seat.node` and links it in
/// `pattern` from a thread pinned to `seat.cpu`, as [`latency`] does, then
/// hands `body` the chase; the buffer is unmapped when `body` returns.
pub(crate) fn with_node_chase<R>(
    seat: Seat,
    size: usize,
    pages: PageKind,
    pattern: &Pattern,
    body: impl FnOnce(&mut NodeChase<'_>) -> Result<R>,
) -> Result<R> {
    let context = || format!("{pattern} latency at {} KiB", size / 1024);
    let opts = BufferOptions::new(size)
        .pages(pages)
        .policy(MemPolicy::Bind(NodeSet::from_ids([seat.node])));
    let mut buffer = pinned(seat.cpu, |_| Ok(Buffer::new(&opts)?)).with_context(context)?;
    let (span, kind) = (Span::of(&buffer, seat.node), buffer.page_kind());
    let words = buffer.as_mut_slice::<u64>();
    let links = pinned(seat.cpu, |_| Links::build(words, pattern, size)).with_context(context)?;
    body(&mut NodeChase {
        links,
        span,
        kind,
        size,
        pattern: *pattern,
    })
}

impl NodeChase<'_> {
    /// The latency from a thread pinned to `cpu`, which first checks again
    /// where the buffer's pages are.
    pub(crate) fn latency_from(&mut self, cpu: usize) -> Result<Latency> {
        let begun = Instant::now();
        let (span, links) = (self.span, &mut self.links);
        let (samples, placement, cpu_seen) = pinned(cpu, |seen| {
            let placement = span.verify()?;
            Ok((links.sample(), placement, seen))
        })
        .with_context(|| format!("{} latency at {} KiB", self.pattern, self.size / 1024))?;
        Ok(Latency {
            size_bytes: self.size,
            pattern: self.pattern,
            samples,
            elapsed_s: begun.elapsed().as_secs_f64(),
            seen: Seen::of_chase(placement, cpu_seen, self.kind),
        })
    }
}

/// Samples of `chase(loads)` (ns per load): calibrated to ~10 ms each,
/// after a warm-up until two consecutive runs agree (the first passes over
/// a cold buffer pay for TLB and cache fills, and in a VM the host's own
/// faults, that are not memory latency); at least [`MIN_SAMPLES`], until
/// the CV drops under [`TARGET_CV_PCT`] or [`MAX_SAMPLES`] are taken. `lap`
/// is the loads of one pass over the buffer.
pub(crate) fn sample_chase(chase: &mut dyn FnMut(u64) -> f64, lap: u64) -> Vec<f64> {
    let first = chase(lap.min(100_000));
    let loads = ((10e6 / first.max(0.1)) as u64).clamp(lap.min(100_000), 50_000_000);
    let mut prev = chase(loads);
    for _ in 0..WARMUP_MAX {
        let next = chase(loads);
        let settled = (next - prev).abs() <= 0.03 * prev;
        prev = next;
        if settled {
            break;
        }
    }
    let mut samples = Vec::new();
    while samples.len() < MAX_SAMPLES {
        samples.push(chase(loads));
        if samples.len() >= MIN_SAMPLES && stats::cv_pct(&samples) < TARGET_CV_PCT {
            break;
        }
    }
    samples
}

/// `rec` with the params that name a chase's `pattern`: its kind, its
/// window or stride, and its element spacing.
pub(crate) fn with_pattern(
    rec: crate::results::Record,
    pattern: &Pattern,
    spacing: usize,
) -> crate::results::Record {
    use crate::results::names::param;
    let mut rec = rec
        .param(param::PATTERN, pattern.kind())
        .param(param::SPACING_BYTES, spacing);
    if let Some(w) = pattern.window() {
        rec = rec.param(param::WINDOW_BYTES, w);
    }
    if let Some(s) = pattern.stride() {
        rec = rec.param(param::STRIDE_BYTES, s);
    }
    rec
}

#[cfg(test)]
#[path = "measure_tests.rs"]
mod tests;
