//! One run: the regions written where the plan says (bound there), the
//! binding lifted for the test itself, worker threads on the fast node's
//! CPUs touching the hot regions every pass and the warm ones every fourth,
//! and a look at a fixed interval at where each region's pages are, the
//! kernel's promotion and demotion counters and the work done.

use super::kernel::{self, Counters};
use super::plan::{Bind, Heat, Plan};
use crate::ids::CpuSet;
use crate::memory::buffer::{Buffer, BufferOptions};
use crate::memory::page_kind::PageKind;
use crate::placement::pages::page_nodes_sampled;
use crate::placement::{MbindFlags, MemPolicy};
use crate::sys::{CpuTimes, cpu_times_of, process::Whose, thread_cpu_s};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Pages of each region whose node a look queries by default, written as
/// the command line's default.
pub(crate) const DEFAULT_SAMPLE_PAGES: &str = "1024";

/// How a run is watched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Settings {
    pub interval: Duration,
    pub sample_pages: usize,
}

/// What one look saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Look {
    /// Seconds since the workers started.
    pub t: f64,
    /// Per region (plan order), bytes per node.
    pub mem: Vec<BTreeMap<usize, u64>>,
    /// Bytes the workers had touched so far.
    pub bytes_done: u64,
    /// The kernel's counters since the workers started.
    pub counters: Counters,
}

/// A run's result.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outcome {
    pub looks: Vec<Look>,
    pub runtime_s: f64,
    pub bytes_done: u64,
    pub counters: Counters,
    /// Percent of each region's sampled pages on the node it was written on,
    /// right after writing.
    pub written_on_pct: Vec<f64>,
    /// Baselines: percent of the pages on the bound node at the end.
    pub bound_pct: Option<f64>,
    pub cpu: CpuTimes,
    pub sampling_cpu_s: f64,
    pub cpus_seen: Vec<usize>,
    pub settings: BTreeMap<String, String>,
    pub interrupted: Option<i32>,
}

impl Outcome {
    pub(crate) fn sampling_overhead_pct(&self) -> f64 {
        let total = self.cpu.user_s + self.cpu.system_s;
        if total > 0.0 {
            self.sampling_cpu_s / total * 100.0
        } else {
            0.0
        }
    }
}

/// Sampled page statuses of a region and the node each sampled page was
/// last seen on (a page the kernel reports without a node, being migrated
/// or marked for a hinting fault, is still where it was).
struct Watched<'a> {
    buf: &'a Buffer,
    bytes: u64,
    last: Vec<Option<usize>>,
}

impl Watched<'_> {
    fn bytes_per_node(&mut self, max_pages: usize) -> Result<BTreeMap<usize, u64>> {
        let s = page_nodes_sampled(
            self.buf.addr(),
            self.buf.len(),
            self.buf.page_size(),
            max_pages,
        )?;
        self.last.resize(s.status.len(), None);
        let mut count: BTreeMap<usize, u64> = BTreeMap::new();
        for (i, &st) in s.status.iter().enumerate() {
            if let Ok(n) = usize::try_from(st) {
                self.last[i] = Some(n);
            }
            if let Some(n) = self.last[i] {
                *count.entry(n).or_insert(0) += 1;
            }
        }
        let seen: u64 = count.values().sum();
        Ok(count
            .into_iter()
            .map(|(n, c)| {
                (
                    n,
                    (self.bytes as u128 * c as u128 / seen.max(1) as u128) as u64,
                )
            })
            .collect())
    }
}

/// Reads one word per cache line of `words`, adding the bytes covered to
/// `done` as it goes (1 MiB at a time, so a look sees work in progress).
#[inline(never)]
fn touch(words: &[u64], stop: &AtomicBool, done: &AtomicU64) {
    const CHUNK: usize = 1 << 17;
    let mut sum = 0u64;
    for chunk in words.chunks(CHUNK) {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let mut i = 0;
        while i < chunk.len() {
            sum = sum.wrapping_add(chunk[i]);
            i += 8;
        }
        done.fetch_add((chunk.len() * 8) as u64, Ordering::Relaxed);
    }
    std::hint::black_box(sum);
}

/// A worker: pinned to `cpus`, passes over its share (`part` of `parts`)
/// of each region the pass touches until `stop`.
fn worker(
    bufs: &[(&Buffer, Heat)],
    cpus: &CpuSet,
    part: usize,
    parts: usize,
    stop: &AtomicBool,
    done: &AtomicU64,
    cpu_seen: &AtomicU64,
) {
    let _ = crate::placement::affinity::pin_current_thread(cpus);
    cpu_seen.store(
        crate::placement::affinity::current_cpu() as u64,
        Ordering::Relaxed,
    );
    let mut pass = 0u64;
    while !stop.load(Ordering::Relaxed) {
        for (buf, heat) in bufs {
            if !heat.touched(pass) {
                continue;
            }
            let words = buf.as_slice::<u64>();
            let per = words.len().div_ceil(parts);
            let from = (part * per).min(words.len());
            let to = (from + per).min(words.len());
            touch(&words[from..to], stop, done);
        }
        pass += 1;
    }
}

/// The regions of `plan`, written where it says; the binding lifted for
/// the test itself.
fn write_regions(plan: &Plan) -> Result<Vec<Buffer>> {
    let mut out = Vec::new();
    for r in &plan.regions {
        let opts = BufferOptions::new(r.bytes as usize)
            .pages(PageKind::Base)
            .policy(MemPolicy::Bind(crate::ids::NodeSet::from_ids([r.node])));
        let buf = Buffer::new(&opts)
            .with_context(|| format!("writing the {} region on node {}", r.heat.name(), r.node))?;
        if plan.bind == Bind::Free {
            crate::placement::bind_range(
                buf.addr(),
                buf.mapped_len(),
                &MemPolicy::Default,
                MbindFlags::default(),
            )
            .context("lifting the binding of a region")?;
        }
        out.push(buf);
    }
    Ok(out)
}

fn pct_on(mem: &BTreeMap<usize, u64>, node: usize) -> f64 {
    let total: u64 = mem.values().sum();
    if total == 0 {
        return 0.0;
    }
    mem.get(&node).copied().unwrap_or(0) as f64 * 100.0 / total as f64
}

/// The CPUs the workers ran on, each once; the slot of a worker that
/// never started still holds `u64::MAX`.
fn cpus_seen(seen: &[AtomicU64]) -> Vec<usize> {
    let mut cpus: Vec<usize> = seen
        .iter()
        .map(|a| a.load(Ordering::Relaxed))
        .filter(|&c| c != u64::MAX)
        .map(|c| c as usize)
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// Runs `plan` with its workers on `cpus`; `on_look` sees every look.
pub(crate) fn run(
    plan: &Plan,
    cpus: &CpuSet,
    s: &Settings,
    on_look: &mut dyn FnMut(&Look),
) -> Result<Outcome> {
    let bufs = write_regions(plan)?;
    let mut watched: Vec<Watched> = bufs
        .iter()
        .zip(&plan.regions)
        .map(|(b, r)| Watched {
            buf: b,
            bytes: r.bytes,
            last: Vec::new(),
        })
        .collect();
    let mut out = Outcome {
        settings: kernel::settings(),
        ..Default::default()
    };
    for (w, r) in watched.iter_mut().zip(&plan.regions) {
        out.written_on_pct
            .push(pct_on(&w.bytes_per_node(s.sample_pages)?, r.node));
    }
    let touched: Vec<(&Buffer, Heat)> = bufs
        .iter()
        .zip(&plan.regions)
        .filter(|(_, r)| r.heat != Heat::Cold)
        .map(|(b, r)| (b, r.heat))
        .collect();
    let stop = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let seen: Vec<AtomicU64> = (0..plan.threads)
        .map(|_| AtomicU64::new(u64::MAX))
        .collect();
    let cpu0 = cpu_times_of(Whose::Own);
    let vm0 = kernel::read_vmstat();
    let start = Instant::now();
    std::thread::scope(|scope| -> Result<()> {
        for (i, seen) in seen.iter().enumerate() {
            let (touched, stop, done) = (&touched, &stop, &done);
            let started = crate::sys::threads::spawn_scoped(scope, (i, plan.threads), move || {
                worker(touched, cpus, i, plan.threads, stop, done, seen)
            });
            if let Err(e) = started {
                // The workers started run until told to stop.
                stop.store(true, Ordering::Relaxed);
                return Err(e.into());
            }
        }
        // The first look as the workers start: where everything began.
        let mut next = Duration::ZERO;
        loop {
            let left = plan.secs - start.elapsed().as_secs_f64();
            if let Some(sig) = crate::interrupt::requested() {
                out.interrupted = Some(sig);
                break;
            }
            if left <= 0.0 {
                break;
            }
            let wait = next
                .saturating_sub(start.elapsed())
                .min(Duration::from_millis(100));
            std::thread::sleep(wait);
            if start.elapsed() < next {
                continue;
            }
            next += s.interval;
            let c0 = thread_cpu_s();
            let mut look = Look {
                t: start.elapsed().as_secs_f64(),
                bytes_done: done.load(Ordering::Relaxed),
                counters: kernel::delta(&vm0, &kernel::read_vmstat()),
                ..Default::default()
            };
            for w in &mut watched {
                look.mem
                    .push(w.bytes_per_node(s.sample_pages).unwrap_or_default());
            }
            out.sampling_cpu_s += (thread_cpu_s() - c0).max(0.0);
            on_look(&look);
            out.looks.push(look);
        }
        stop.store(true, Ordering::Relaxed);
        Ok(())
    })?;
    out.runtime_s = start.elapsed().as_secs_f64();
    out.bytes_done = done.load(Ordering::Relaxed);
    out.counters = kernel::delta(&vm0, &kernel::read_vmstat());
    let cpu1 = cpu_times_of(Whose::Own);
    out.cpu = CpuTimes {
        user_s: cpu1.user_s - cpu0.user_s,
        system_s: cpu1.system_s - cpu0.system_s,
    };
    out.cpus_seen = cpus_seen(&seen);
    if plan.bind != Bind::Free {
        let node = plan.regions.first().map_or(0, |r| r.node);
        let mut on = 0.0;
        for w in &mut watched {
            on += pct_on(&w.bytes_per_node(s.sample_pages)?, node);
        }
        out.bound_pct = Some(on / watched.len().max(1) as f64);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touch_covers_every_line_and_stops_when_asked() {
        let words = vec![1u64; 1 << 18];
        let stop = AtomicBool::new(false);
        let done = AtomicU64::new(0);
        touch(&words, &stop, &done);
        assert_eq!(done.load(Ordering::Relaxed), (words.len() * 8) as u64);
        stop.store(true, Ordering::Relaxed);
        touch(&words, &stop, &done);
        assert_eq!(done.load(Ordering::Relaxed), (words.len() * 8) as u64);
    }

    #[test]
    fn a_short_run_on_one_node_looks_and_counts_its_work() {
        let topo = crate::topology::read_topology(&crate::topology::SysfsRoot::live()).unwrap();
        let node = topo.usable_memory_nodes().iter().next().unwrap();
        let cpus = topo.allowed.cpus.clone();
        let plan = Plan {
            test: super::super::plan::Test::Promotion,
            bind: Bind::Fast,
            regions: vec![super::super::plan::Region {
                heat: Heat::Hot,
                bytes: 4 << 20,
                node,
            }],
            secs: 0.5,
            threads: 1,
            notes: Vec::new(),
        };
        let s = Settings {
            interval: Duration::from_millis(100),
            sample_pages: 64,
        };
        let mut n = 0;
        let o = run(&plan, &cpus, &s, &mut |_| n += 1).unwrap();
        assert!(
            o.looks.len() >= 2 && n == o.looks.len(),
            "{}",
            o.looks.len()
        );
        assert!(o.bytes_done >= 4 << 20);
        assert_eq!(o.bound_pct, Some(100.0));
        assert_eq!(o.written_on_pct, vec![100.0]);
        let last = o.looks.last().unwrap();
        assert_eq!(last.mem[0].values().sum::<u64>(), 4 << 20);
        assert!(o.sampling_overhead_pct() < 100.0);
    }

    /// The looks' cost at the defaults (three regions of 256 MiB, 1024
    /// pages each every 0.5 s, one worker) as a share of the run's CPU
    /// time, on the first memory node of this machine: the figure
    /// docs/tier.md quotes. A measurement, so not run by default:
    /// `cargo test --lib tier::run::tests::looks_cost -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn looks_cost_under_one_percent_of_the_run() {
        let topo = crate::topology::read_topology(&crate::topology::SysfsRoot::live()).unwrap();
        let node = topo.usable_memory_nodes().iter().next().unwrap();
        let region = |heat| super::super::plan::Region {
            heat,
            bytes: 256 << 20,
            node,
        };
        let plan = Plan {
            test: super::super::plan::Test::Oversize,
            bind: Bind::Fast,
            regions: vec![region(Heat::Hot), region(Heat::Warm), region(Heat::Cold)],
            secs: 10.0,
            threads: 1,
            notes: Vec::new(),
        };
        let s = Settings {
            interval: Duration::from_millis(500),
            sample_pages: DEFAULT_SAMPLE_PAGES.parse().unwrap(),
        };
        let o = run(&plan, &topo.allowed.cpus, &s, &mut |_| {}).unwrap();
        let per_look_ms = o.sampling_cpu_s * 1e3 / o.looks.len() as f64;
        eprintln!(
            "{} looks, {per_look_ms:.2} ms CPU each, {:.3}% of the run's {:.2} s CPU",
            o.looks.len(),
            o.sampling_overhead_pct(),
            o.cpu.user_s + o.cpu.system_s
        );
        assert!(o.sampling_overhead_pct() < 1.0);
    }
}
