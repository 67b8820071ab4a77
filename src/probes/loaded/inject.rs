//! The threads of one pair: a chase thread that measures and steers, and
//! injector threads that move memory with a spin between chunks.
//!
//! Every injector pins itself and maps, fills and verifies its own buffer
//! on the memory node (first touch from the thread that uses it); the chase
//! thread pins itself and verifies the memory node's chase buffer, mapped
//! and linked once for every CPU node's pair (`super::node_chase`); then
//! all meet at a barrier. Unless a kernel was named, the first injector
//! then times the mix's kernels on its buffer (`pick.rs`) while the others
//! wait and the chase waits. The chase thread measures the idle
//! point with the injectors parked (asleep), then sets the spin of each
//! delay and lets them run. Each injector adds the bytes it moved to a counter of its own
//! after every chunk; the chase thread reads the counters' sum and the
//! clock around each of its latency samples, so every latency sample has
//! the bandwidth injected during that very sample, counted by the
//! injectors themselves.

use super::pick::{self, Tried};
use super::work::Work;
use super::{CHUNK_BYTES, Curve, LoadedConfig, Plan, PointRun};
use crate::kernels::{self, KernelSpec, Op};
use crate::memory::{PageKind, Placement};
use crate::probes::measure::Seen;
use crate::probes::node_chase::{Linked, Walk};
use crate::probes::team::{self, Seat, TeamMemory};
use crate::stats;
use crate::sys::threads::{StartGate, spawn_scoped};
use anyhow::{Result, anyhow};
use std::hint::black_box;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

const PARK: u8 = 0;
const RUN: u8 = 1;
const STOP: u8 = 2;

/// Length of one latency sample at idle; loaded samples last longer.
const SAMPLE_NS: f64 = 20e6;
/// Samples per point: at least, at most, and the spread that ends early.
const MIN_SAMPLES: usize = 8;
const MAX_SAMPLES: usize = 20;
const TARGET_CV_PCT: f64 = 5.0;
/// Samples thrown away after the load changes, while queues settle.
const SETTLE_SAMPLES: usize = 2;
/// Seed of the chase's random cycle.
pub(super) const CHASE_SEED: u64 = 0x6c6f_6164;

/// Each injector's byte counter on a line of its own.
#[repr(align(128))]
struct Counter(AtomicU64);

struct Control {
    state: AtomicU8,
    spins: AtomicU64,
    moved: Vec<Counter>,
    ready: Barrier,
    /// Opened once the chase and every injector started: none reaches
    /// `ready` before.
    gate: StartGate,
    /// The injectors' kernel: the one asked for, or the first injector's
    /// pick. Until it is set only that injector's trial runs: no load, and
    /// the chase waits.
    kernel: OnceLock<&'static KernelSpec>,
    /// The trial's rates, fastest first; unset when no trial ran.
    tried: OnceLock<Vec<Tried>>,
}

impl Control {
    fn moved(&self) -> u64 {
        self.moved.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }

    /// The injectors' kernel once it is set; `None` if the run stops first.
    fn wait_for_kernel(&self) -> Option<&'static KernelSpec> {
        loop {
            if let Some(k) = self.kernel.get() {
                return Some(k);
            }
            if self.state.load(Ordering::Acquire) == STOP {
                return None;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// How the injectors' kernel is chosen.
enum Choice {
    Given(&'static KernelSpec),
    /// By a trial of these on the first injector; the widest stands in
    /// when there is no trial to run (that injector failed to set up).
    Trial {
        candidates: Vec<&'static KernelSpec>,
        widest: &'static KernelSpec,
    },
}

impl Choice {
    fn op(&self) -> Op {
        match self {
            Choice::Given(k) | Choice::Trial { widest: k, .. } => k.op,
        }
    }
}

/// Sets the kernel when the picking injector leaves without a pick,
/// however it leaves, so no thread waits for one forever.
struct PickOnDrop<'a>(&'a Control, &'static KernelSpec);

impl Drop for PickOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.0.kernel.set(self.1);
    }
}

/// Stops the injectors when the chase thread leaves, however it leaves.
struct StopOnDrop<'a>(&'a Control);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.state.store(STOP, Ordering::Release);
    }
}

/// What an injector reports after setting up.
struct Ready {
    placement: Placement,
    cpu: usize,
    kind: PageKind,
    fallback: Option<String>,
}

/// What the chase thread brings back.
struct Chased {
    points: Vec<PointRun>,
    placement: Placement,
    cpu: usize,
    kind: PageKind,
    ns_per_spin: f64,
    /// Delays not measured because they came to the spins of a longer
    /// delay that was: (skipped, measured).
    merged: Vec<DelayPair>,
}

/// The injectors' kernel: the one asked for, else a trial among every
/// kernel of the mix this CPU runs (see [`pick`]).
fn choice_for(cfg: &LoadedConfig) -> Result<Choice> {
    if let Some(k) = cfg.kernel {
        return Ok(Choice::Given(k));
    }
    let (op, store) = cfg.mix.kernel_kind();
    let widest = kernels::best(op, store)
        .ok_or_else(|| anyhow!("no {op} kernel with {store} stores runs on this CPU"))?;
    let candidates = pick::candidates(cfg.mix);
    Ok(if candidates.len() > 1 {
        Choice::Trial { candidates, widest }
    } else {
        Choice::Given(widest)
    })
}

/// Measures one pair's curve, chasing `linked` (the memory node's chase
/// buffer, linked in `plan.pattern`).
pub(super) fn measure(plan: &Plan, cfg: &LoadedConfig, linked: &mut Linked<'_>) -> Result<Curve> {
    let choice = choice_for(cfg)?;
    let arrays = choice.op().arrays();
    let array_bytes = (plan.injector_bytes / arrays / CHUNK_BYTES).max(1) * CHUNK_BYTES;
    let memory = TeamMemory {
        array_bytes,
        arrays,
        pages: PageKind::Thp,
        split: Vec::new(),
    };
    let n = plan.injector_cpus.len();
    let control = Control {
        state: AtomicU8::new(PARK),
        spins: AtomicU64::new(0),
        moved: (0..n).map(|_| Counter(AtomicU64::new(0))).collect(),
        ready: Barrier::new(n + 1),
        gate: StartGate::new(),
        kernel: OnceLock::new(),
        tried: OnceLock::new(),
    };
    match &choice {
        Choice::Given(k) => control.kernel.set(k).ok(),
        // With no injector there is no trial: nothing will use the kernel.
        Choice::Trial { widest, .. } if n == 0 => control.kernel.set(widest).ok(),
        Choice::Trial { .. } => None,
    };
    let reports: Mutex<Vec<Result<Ready, String>>> = Mutex::new(Vec::new());
    let mut delays = cfg.delays_ns.clone();
    delays.sort_unstable_by(|a, b| b.cmp(a));
    delays.dedup();
    let chased = std::thread::scope(|scope| {
        for (i, &cpu) in plan.injector_cpus.iter().enumerate() {
            let seat = Seat {
                cpu,
                node: plan.mem_node,
            };
            let (control, reports, memory, choice) = (&control, &reports, &memory, &choice);
            let started = spawn_scoped(scope, (i, n + 1), move || {
                injector(i, seat, memory, choice, control, reports)
            });
            if let Err(e) = started {
                control.gate.open(false);
                return Err(e.into());
            }
        }
        let chased = spawn_scoped(scope, (n, n + 1), || {
            chase(plan, linked, &delays, &control, &reports)
        });
        control.gate.open(chased.is_ok());
        chased?
            .join()
            .map_err(|_| anyhow!("the chase thread panicked"))?
    })?;
    let reports: Vec<Ready> = reports
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .filter_map(Result::ok)
        .collect();
    let kernel = control.kernel.get().copied().unwrap_or(match choice {
        Choice::Given(k) | Choice::Trial { widest: k, .. } => k,
    });
    let mut notes: Vec<String> = plan.note.iter().cloned().collect();
    notes.extend(control.tried.get().and_then(|t| pick::note(t)));
    notes.extend(merged_note(&chased.merged, chased.ns_per_spin));
    for r in &reports {
        if let Some(f) = &r.fallback
            && !notes.contains(f)
        {
            notes.push(f.clone());
        }
    }
    Ok(Curve {
        plan: plan.clone(),
        mix: cfg.mix,
        kernel: kernel.name,
        ns_per_spin: chased.ns_per_spin,
        points: chased.points,
        chase_seen: seen(&[(&chased.placement, chased.cpu)], chased.kind.to_string()),
        injector_seen: seen(
            &reports
                .iter()
                .map(|r| (&r.placement, r.cpu))
                .collect::<Vec<_>>(),
            reports
                .first()
                .map_or("base".into(), |r| r.kind.to_string()),
        ),
        notes,
    })
}

/// Several threads' placements as one: pages summed, the worst thread's
/// share on target, the mean huge share.
fn seen(placements: &[(&Placement, usize)], page_kind: String) -> Seen {
    let mut out = Seen {
        verified_pct: 100.0,
        page_kind,
        ..Default::default()
    };
    for (p, cpu) in placements {
        for (node, count) in &p.pages_by_node {
            *out.pages_by_node.entry(*node).or_default() += count;
        }
        out.verified_pct = out.verified_pct.min(p.on_target_pct.unwrap_or(0.0));
        out.huge_pct += p.huge_pct / placements.len() as f64;
        out.cpus_seen.push(*cpu);
    }
    out
}

fn injector(
    index: usize,
    seat: Seat,
    memory: &TeamMemory,
    choice: &Choice,
    control: &Control,
    reports: &Mutex<Vec<Result<Ready, String>>>,
) {
    if !control.gate.wait() {
        return;
    }
    let mut buffer = match team::prepare(seat, memory) {
        Ok((buffer, placement, cpu)) => {
            let ready = Ready {
                placement,
                cpu,
                kind: buffer.page_kind(),
                fallback: buffer.fallback_reason().map(str::to_string),
            };
            reports
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Ok(ready));
            Some(buffer)
        }
        Err(e) => {
            reports
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Err(format!("injector on CPU {}: {e:#}", seat.cpu)));
            None
        }
    };
    control.ready.wait();
    let mut work = buffer.as_mut().map(|b| Work::new(b, memory, choice.op()));
    if let (0, Choice::Trial { candidates, widest }) = (index, choice) {
        let _unblock = PickOnDrop(control, widest);
        if let Some(work) = work.as_mut() {
            let tried = pick::trial(work, candidates);
            let _ = control.kernel.set(tried[0].0);
            let _ = control.tried.set(
                tried
                    .iter()
                    .map(|&(k, mb_s)| Tried {
                        kernel: k.name,
                        mb_s,
                    })
                    .collect(),
            );
        }
    }
    if let (Some(kernel), Some(work)) = (control.wait_for_kernel(), work.as_mut()) {
        inject(work, kernel, &control.moved[index].0, control);
    }
}

/// Works through the buffer while the state says run, spinning between
/// chunks; sleeps while parked.
fn inject(work: &mut Work, kernel: &KernelSpec, counter: &AtomicU64, control: &Control) {
    let mut moved = 0u64;
    loop {
        match control.state.load(Ordering::Acquire) {
            STOP => break,
            PARK => {
                std::thread::sleep(Duration::from_micros(200));
                continue;
            }
            _ => {}
        }
        let spins = control.spins.load(Ordering::Relaxed);
        // One kernel call spans a batch of chunks and the batch's spins are
        // paid after it: a call's fixed cost (the fence after non-temporal
        // stores waits for them to reach memory, the checksum's reads) paid
        // every 4 KiB would cap the load at every delay but 0, and the curve
        // would jump between its last two points.
        let (bytes, chunks) = work.batch(kernel);
        moved += bytes;
        counter.store(moved, Ordering::Relaxed);
        spin(spins * chunks);
    }
}

/// `n` iterations of the CPU's spin-wait hint (`pause` on x86, `isb` or
/// `yield` on Arm): the delay between chunks.
#[inline(never)]
fn spin(n: u64) {
    for i in 0..n {
        std::hint::spin_loop();
        black_box(i);
    }
}

/// Nanoseconds per [`spin`] iteration on this CPU: the best of five runs.
fn ns_per_spin() -> f64 {
    const N: u64 = 20_000;
    (0..5)
        .map(|_| {
            let t = Instant::now();
            spin(black_box(N));
            t.elapsed().as_secs_f64() * 1e9 / N as f64
        })
        .fold(f64::INFINITY, f64::min)
        .max(1e-3)
}

/// Spin iterations for a delay: none for 0, else at least one.
pub(super) fn spins_for(delay_ns: u64, ns_per_spin: f64) -> u64 {
    if delay_ns == 0 {
        0
    } else {
        ((delay_ns as f64 / ns_per_spin).round() as u64).max(1)
    }
}

/// Two figures of a delay: (delay, spins) or (skipped, measured).
type DelayPair = (u64, u64);

/// The delays (longest first) as (delay, spins) steps, each offering a
/// load of its own: a delay that comes to the same spins as the one
/// before it would measure the same load again under another name (a slow
/// spin, as under emulation, rounds short delays alike), so it is left
/// out and returned as (skipped, measured).
fn distinct_loads(delays: &[u64], ns_per_spin: f64) -> (Vec<DelayPair>, Vec<DelayPair>) {
    let (mut steps, mut merged) = (Vec::<DelayPair>::new(), Vec::new());
    for &d in delays {
        let spins = spins_for(d, ns_per_spin);
        match steps.last() {
            Some(&(kept, s)) if s == spins => merged.push((d, kept)),
            _ => steps.push((d, spins)),
        }
    }
    (steps, merged)
}

/// One note per measured delay that others were merged into.
fn merged_note(merged: &[DelayPair], ns_per_spin: f64) -> Vec<String> {
    let mut kept: Vec<u64> = merged.iter().map(|&(_, k)| k).collect();
    kept.dedup();
    kept.iter()
        .map(|&k| {
            let skipped: Vec<String> = merged
                .iter()
                .filter(|&&(_, m)| m == k)
                .map(|(d, _)| d.to_string())
                .collect();
            let spins = spins_for(k, ns_per_spin);
            format!(
                "{} {} ns {} to {spins} spin{}, as {k} ns does, on this CPU (one spin takes {ns_per_spin:.1} ns): that load was measured once, as {k} ns",
                if skipped.len() == 1 { "delay" } else { "delays" },
                skipped.join(", "),
                if skipped.len() == 1 { "comes" } else { "come" },
                if spins == 1 { "" } else { "s" },
            )
        })
        .collect()
}

/// The chase thread: pins itself to the plan's CPU, verifies where the
/// chase buffer is, meets the injectors, then measures the idle point and
/// each delay's.
fn chase(
    plan: &Plan,
    linked: &mut Linked<'_>,
    delays: &[u64],
    control: &Control,
    reports: &Mutex<Vec<Result<Ready, String>>>,
) -> Result<Chased> {
    let _stop = StopOnDrop(control);
    let setup = (|| -> Result<_> {
        let cpu = crate::placement::pin_and_check(plan.chase_cpu)
            .map_err(|e| anyhow!("cannot pin the chase to CPU {}: {e}", plan.chase_cpu))?;
        let placement = linked.placement()?;
        Ok((placement, cpu))
    })();
    control.ready.wait();
    let (placement, cpu) = setup?;
    if let Some(Err(e)) = reports
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|r| r.is_err())
    {
        return Err(anyhow!("{e}"));
    }
    // The kernel trial runs on a quiet machine, before any load.
    // The first injector sets the kernel however it ends and only this
    // thread stops the run, so the wait ends; the branch is defensive.
    if control.wait_for_kernel().is_none() {
        return Err(anyhow!("the injectors stopped before the curve began"));
    }
    let kind = linked.page_kind();
    let chain = linked.walk();
    let ns_per_spin = ns_per_spin();
    let loads = settle(chain);
    let mut points = vec![point(chain, control, None, 0, loads)];
    let (steps, mut merged) = distinct_loads(delays, ns_per_spin);
    for (d, spins) in steps {
        if crate::interrupt::requested().is_some() {
            break;
        }
        control.spins.store(spins, Ordering::Relaxed);
        control.state.store(RUN, Ordering::Release);
        points.push(point(chain, control, Some(d), spins, loads));
    }
    control.state.store(PARK, Ordering::Release);
    // A stop before a delay leaves nothing measured for what merged into it.
    merged.retain(|&(_, kept)| points.iter().any(|p| p.delay_ns == Some(kept)));
    Ok(Chased {
        points,
        placement,
        cpu,
        kind,
        ns_per_spin,
        merged,
    })
}

/// Loads per sample (about [`SAMPLE_NS`] at idle), after warming the
/// chase until two runs agree, as the idle latency measurement does.
fn settle(chain: &mut Walk<'_>) -> u64 {
    let lines = chain.lap();
    let first = chain.ns_per_load(lines.min(100_000));
    let loads = ((SAMPLE_NS / first.max(0.1)) as u64).clamp(lines.min(100_000), 50_000_000);
    let mut prev = chain.ns_per_load(loads);
    for _ in 0..10 {
        let next = chain.ns_per_load(loads);
        let settled = (next - prev).abs() <= 0.03 * prev;
        prev = next;
        if settled {
            break;
        }
    }
    loads
}

/// One point: a few samples to let the queues settle, then latency
/// samples until their spread is small, each with the bandwidth the
/// injectors moved meanwhile.
fn point(
    chain: &mut Walk<'_>,
    control: &Control,
    delay_ns: Option<u64>,
    spins: u64,
    loads: u64,
) -> PointRun {
    let begun = Instant::now();
    for _ in 0..SETTLE_SAMPLES {
        chain.ns_per_load(loads);
    }
    let (mut latency_ns, mut bandwidth_mb_s) = (Vec::new(), Vec::new());
    let (bytes0, t0) = (control.moved(), Instant::now());
    let (mut bytes, mut t) = (bytes0, t0);
    while latency_ns.len() < MAX_SAMPLES {
        latency_ns.push(chain.ns_per_load(loads));
        let (b, now) = (control.moved(), Instant::now());
        bandwidth_mb_s.push(rate(b - bytes, now - t));
        (bytes, t) = (b, now);
        if latency_ns.len() >= MIN_SAMPLES && stats::cv_pct(&latency_ns) < TARGET_CV_PCT {
            break;
        }
    }
    PointRun {
        delay_ns,
        spins,
        latency_ns,
        bandwidth_mb_s,
        mean_bandwidth_mb_s: rate(bytes - bytes0, t - t0),
        elapsed_s: begun.elapsed().as_secs_f64(),
    }
}

fn rate(bytes: u64, d: Duration) -> f64 {
    let s = d.as_secs_f64();
    if s > 0.0 { bytes as f64 / s / 1e6 } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_become_spins_by_the_calibration() {
        assert_eq!(spins_for(0, 5.0), 0);
        assert_eq!(spins_for(1, 5.0), 1, "a delay never rounds to none");
        assert_eq!(spins_for(1000, 5.0), 200);
        assert_eq!(spins_for(1000, 20.0), 50);
    }

    #[test]
    fn delays_that_come_to_the_same_spins_are_measured_once() {
        // A slow spin (300 ns) rounds 400, 200, 100 and 50 ns alike.
        let (steps, merged) = distinct_loads(&[20000, 1000, 400, 200, 100, 50, 0], 300.0);
        assert_eq!(steps, vec![(20000, 67), (1000, 3), (400, 1), (0, 0)]);
        assert_eq!(merged, vec![(200, 400), (100, 400), (50, 400)]);
        let notes = merged_note(&merged, 300.0);
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].starts_with("delays 200, 100, 50 ns come to 1 spin,"),
            "{}",
            notes[0]
        );
        assert!(notes[0].contains("as 400 ns"), "{}", notes[0]);
        // A fast spin keeps every delay.
        let (steps, merged) = distinct_loads(&[400, 200, 100, 50, 0], 5.0);
        assert_eq!(steps.len(), 5);
        assert!(merged.is_empty() && merged_note(&merged, 5.0).is_empty());
    }

    #[test]
    fn spinning_takes_time_in_proportion() {
        let per = ns_per_spin();
        assert!(per > 0.0 && per < 10_000.0, "{per} ns per spin");
        let t = |n| {
            (0..3)
                .map(|_| {
                    let s = Instant::now();
                    spin(n);
                    s.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min)
        };
        // Ten times the spins take clearly longer (generous: shared CPUs).
        assert!(t(200_000) > 3.0 * t(20_000));
    }
}
