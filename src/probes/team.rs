//! A team of pinned threads that run bandwidth kernels together.
//!
//! Each thread pins itself, maps its own arrays bound to its own node and
//! writes them (first touch from the thread that will use them), then waits;
//! or, on memory the team was handed ([`with_team_on`]), checks where its
//! block of it lies.
//! For every timed run all threads leave one barrier together; each records
//! its own start and end, and the run lasts from the first start to the last
//! finish, so a straggler is never hidden. Threads stay alive between runs so
//! buffers are allocated once per size, not once per repetition.

mod layout;

use self::layout::fill_doubles;
pub(crate) use self::layout::{NodeArrays, Span, layout_bytes, pinned, stride};
use crate::ids::NodeSet;
use crate::kernels::{KernelArgs, KernelSpec, Op};
use crate::memory::{Buffer, BufferOptions, PageKind, Placement};
use crate::placement::{MemPolicy, pin_and_check};
use crate::sys::threads::{StartGate, spawn_scoped};
use anyhow::{Result, anyhow, bail};
use std::ops::Range;
use std::sync::{Barrier, Mutex};
use std::time::Instant;

/// Where one thread runs and whose memory it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seat {
    pub cpu: usize,
    pub node: usize,
}

/// How a team lays out its memory.
#[derive(Debug, Clone)]
pub(crate) struct TeamMemory {
    /// Bytes per array per thread.
    pub array_bytes: usize,
    /// Arrays per thread (4 covers every kernel).
    pub arrays: usize,
    pub pages: PageKind,
    /// Spread each thread's memory over nodes instead of its seat's node:
    /// (node, weight) pairs, laid out in 2 MiB chunks round robin by
    /// weight. Empty: everything on the seat's node.
    pub split: Vec<(usize, u32)>,
}

impl TeamMemory {
    /// Bytes each thread maps.
    pub(crate) fn thread_bytes(&self) -> usize {
        layout_bytes(self.array_bytes, self.arrays)
    }
}

/// Whether `arrays` arrays of `array_bytes` fit in `thread_bytes` of one
/// thread's memory, laid out as a team thread lays them out.
pub(crate) fn fits(thread_bytes: usize, array_bytes: usize, arrays: usize) -> bool {
    layout_bytes(array_bytes, arrays) <= thread_bytes
}

/// Granule of a split placement: one huge page, so THP still applies.
const SPLIT_CHUNK: usize = 2 << 20;

/// The node of each [`SPLIT_CHUNK`] in turn: weights 3:1 over nodes 0 and 1
/// give 0, 0, 0, 1, 0, 0, 0, 1, ...
pub(crate) fn split_pattern(split: &[(usize, u32)]) -> Vec<usize> {
    split
        .iter()
        .flat_map(|&(node, w)| std::iter::repeat_n(node, w as usize))
        .collect()
}

/// What the team saw while setting up.
#[derive(Debug, Clone)]
pub(crate) struct TeamSetup {
    pub placements: Vec<Placement>,
    /// Where each thread's arrays lie (addresses).
    pub spans: Vec<Range<usize>>,
    pub cpus_seen: Vec<usize>,
    pub page_kinds: Vec<PageKind>,
    pub fallbacks: Vec<String>,
}

/// One timed run: per thread (start, end).
#[derive(Debug, Clone)]
pub(crate) struct RunTimes {
    pub spans: Vec<(Instant, Instant)>,
}

impl RunTimes {
    /// From the first start to the last end, in seconds.
    pub(crate) fn wall_s(&self) -> f64 {
        let start = self.spans.iter().map(|s| s.0).min();
        let end = self.spans.iter().map(|s| s.1).max();
        match (start, end) {
            (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
            _ => 0.0,
        }
    }
}

enum Command {
    Run {
        kernel: &'static KernelSpec,
        array_bytes: usize,
        reps: u64,
        seed: u64,
    },
    Stop,
}

struct Shared {
    start: Barrier,
    done: Barrier,
    command: Mutex<Command>,
    spans: Mutex<Vec<Option<(Instant, Instant)>>>,
    errors: Mutex<Vec<String>>,
    /// Opened once every thread started: none reaches a barrier before.
    gate: StartGate,
}

/// The handle the measuring code drives; valid inside [`with_team`] and
/// [`with_team_on`].
pub(crate) struct Team<'s> {
    shared: &'s Shared,
    /// Bytes of each thread's memory.
    thread_bytes: usize,
}

impl Team<'_> {
    /// Every thread runs `kernel` `reps` times over its own arrays of
    /// `array_bytes`, laid out from the start of its memory as
    /// [`TeamMemory`] lays out its own; they must fit in it
    /// ([`fits`]: [`TeamMemory::thread_bytes`], or the block of
    /// [`with_team_on`]).
    pub(crate) fn run(
        &self,
        kernel: &'static KernelSpec,
        array_bytes: usize,
        reps: u64,
        seed: u64,
    ) -> RunTimes {
        assert!(
            fits(self.thread_bytes, array_bytes, kernel.op.arrays()),
            "{} arrays of {array_bytes} bytes do not fit the team's memory",
            kernel.op.arrays()
        );
        *self
            .shared
            .command
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Command::Run {
            kernel,
            array_bytes,
            reps,
            seed,
        };
        self.shared.start.wait();
        self.shared.done.wait();
        let spans = self.shared.spans.lock().unwrap_or_else(|e| e.into_inner());
        RunTimes {
            spans: spans.iter().flatten().copied().collect(),
        }
    }
}

/// Starts one thread per seat, sets up its memory, calls `body` with the
/// team, then stops and joins every thread (also when `body` fails).
pub(crate) fn with_team<R>(
    seats: &[Seat],
    memory: &TeamMemory,
    body: impl FnOnce(&Team<'_>, &TeamSetup) -> Result<R>,
) -> Result<R> {
    let sources = seats.iter().map(|_| Source::Own(memory)).collect();
    run_team(seats, memory.thread_bytes(), sources, body)
}

/// [`with_team`] over memory mapped and filled before: thread i of the
/// team runs in block i of `arrays` (see [`NodeArrays::blocks`]), pinned to
/// its seat, and checks where that block lies. Every seat's node must be
/// the arrays' node, and the team no larger than they were laid out for.
pub(crate) fn with_team_on<R>(
    seats: &[Seat],
    arrays: &mut NodeArrays,
    body: impl FnOnce(&Team<'_>, &TeamSetup) -> Result<R>,
) -> Result<R> {
    let n = seats.len();
    if let Some(s) = seats.iter().find(|s| s.node != arrays.node()) {
        bail!(
            "CPU {}'s memory is to be on node {}, the arrays are on node {}",
            s.cpu,
            s.node,
            arrays.node()
        );
    }
    if n == 0 || n > arrays.max_threads() {
        bail!(
            "a team of {n} on arrays laid out for 1 to {} thread(s)",
            arrays.max_threads()
        );
    }
    let thread_bytes = layout_bytes(arrays.array_bytes(n), arrays.arrays());
    let kind = arrays.page_kind();
    let fallback = arrays.fallback_reason().map(str::to_string);
    let sources = arrays
        .blocks(n)
        .into_iter()
        .map(|(words, span)| Source::Lent {
            words,
            span,
            kind,
            fallback: fallback.clone(),
        })
        .collect();
    run_team(seats, thread_bytes, sources, body)
}

/// Where one thread's arrays come from.
enum Source<'a> {
    /// The thread maps its own ([`prepare`]).
    Own(&'a TeamMemory),
    /// Its block of memory the team was handed.
    Lent {
        words: &'a mut [u64],
        span: Span,
        kind: PageKind,
        fallback: Option<String>,
    },
}

/// A thread's arrays once set up.
enum Held<'a> {
    Own(Buffer),
    Lent(&'a mut [u64]),
}

impl Held<'_> {
    fn words(&mut self) -> &mut [u64] {
        match self {
            Held::Own(buffer) => buffer.as_mut_slice::<u64>(),
            Held::Lent(words) => words,
        }
    }
}

/// The team of [`with_team`] and [`with_team_on`]: one thread per seat,
/// each with its source of memory.
fn run_team<R>(
    seats: &[Seat],
    thread_bytes: usize,
    sources: Vec<Source<'_>>,
    body: impl FnOnce(&Team<'_>, &TeamSetup) -> Result<R>,
) -> Result<R> {
    let n = seats.len();
    let shared = Shared {
        start: Barrier::new(n + 1),
        done: Barrier::new(n + 1),
        command: Mutex::new(Command::Stop),
        spans: Mutex::new(vec![None; n]),
        errors: Mutex::new(Vec::new()),
        gate: StartGate::new(),
    };
    let setups: Mutex<Vec<SetupSlot>> = Mutex::new(vec![None; n]);
    std::thread::scope(|scope| {
        for ((index, seat), source) in seats.iter().enumerate().zip(sources) {
            let (shared, setups) = (&shared, &setups);
            let started = spawn_scoped(scope, (index, n), move || {
                worker(index, *seat, source, shared, setups)
            });
            if let Err(e) = started {
                shared.gate.open(false);
                return Err(e.into());
            }
        }
        shared.gate.open(true);
        // Setup ends at the first `done` barrier.
        shared.done.wait();
        let errors = shared
            .errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let result = if let Some(first) = errors.first() {
            Err(anyhow!("{first}"))
        } else {
            let mut setup = TeamSetup {
                placements: Vec::new(),
                spans: Vec::new(),
                cpus_seen: Vec::new(),
                page_kinds: Vec::new(),
                fallbacks: Vec::new(),
            };
            for r in setups
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .flatten()
            {
                setup.placements.push(r.placement.clone());
                setup.spans.push(r.span.clone());
                setup.cpus_seen.push(r.cpu);
                setup.page_kinds.push(r.kind);
                setup.fallbacks.extend(r.fallback.clone());
            }
            body(
                &Team {
                    shared: &shared,
                    thread_bytes,
                },
                &setup,
            )
        };
        *shared.command.lock().unwrap_or_else(|e| e.into_inner()) = Command::Stop;
        shared.start.wait();
        result
    })
}

/// What one thread reports after setting up.
#[derive(Clone)]
struct SeatReport {
    placement: Placement,
    span: Range<usize>,
    cpu: usize,
    kind: PageKind,
    fallback: Option<String>,
}

type SetupSlot = Option<SeatReport>;

fn worker(
    index: usize,
    seat: Seat,
    source: Source<'_>,
    shared: &Shared,
    setups: &Mutex<Vec<SetupSlot>>,
) {
    if !shared.gate.wait() {
        return;
    }
    let mut held = match set_up(seat, source) {
        Ok((held, report)) => {
            setups.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(report);
            Some(held)
        }
        Err(e) => {
            shared
                .errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(format!("{e:#}"));
            None
        }
    };
    shared.done.wait();
    loop {
        shared.start.wait();
        let (kernel, array_bytes, reps, seed) =
            match *shared.command.lock().unwrap_or_else(|e| e.into_inner()) {
                Command::Stop => return,
                Command::Run {
                    kernel,
                    array_bytes,
                    reps,
                    seed,
                } => (kernel, array_bytes, reps, seed),
            };
        if let Some(held) = held.as_mut() {
            let span = run_kernel(held.words(), array_bytes, kernel, reps, seed);
            shared.spans.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(span);
        }
        shared.done.wait();
    }
}

/// One thread's arrays from `source`, and what it saw setting them up: its
/// own mapped ([`prepare`]), or its lent block's placement checked from the
/// CPU it was pinned to.
fn set_up(seat: Seat, source: Source<'_>) -> Result<(Held<'_>, SeatReport)> {
    match source {
        Source::Own(memory) => {
            let (buffer, placement, cpu) = prepare(seat, memory)?;
            let report = SeatReport {
                placement,
                span: buffer.addr()..buffer.addr() + buffer.len(),
                cpu,
                kind: buffer.page_kind(),
                fallback: buffer.fallback_reason().map(str::to_string),
            };
            Ok((Held::Own(buffer), report))
        }
        Source::Lent {
            words,
            span,
            kind,
            fallback,
        } => {
            let cpu = pin_and_check(seat.cpu)
                .map_err(|e| anyhow!("cannot pin a thread to CPU {}: {e}", seat.cpu))?;
            let placement = span
                .verify()
                .map_err(|e| anyhow!("CPU {}: {e:#}", seat.cpu))?;
            let report = SeatReport {
                placement,
                span: span.addr..span.addr + span.len,
                cpu,
                kind,
                fallback,
            };
            Ok((Held::Lent(words), report))
        }
    }
}

/// Pins the calling thread to `seat.cpu` and maps, fills and verifies its
/// arrays on `seat.node` (or the split), as every team thread does.
pub(crate) fn prepare(seat: Seat, memory: &TeamMemory) -> Result<(Buffer, Placement, usize)> {
    let cpu = pin_and_check(seat.cpu)
        .map_err(|e| anyhow!("cannot pin a thread to CPU {}: {e}", seat.cpu))?;
    let len = memory.thread_bytes();
    // Not touched on mapping: `fill_doubles` below is the first touch, from
    // this pinned thread, so the arrays are written once, not twice.
    let mut opts = BufferOptions::new(len).pages(memory.pages).touch(false);
    if memory.split.is_empty() {
        opts = opts.policy(MemPolicy::Bind(NodeSet::from_ids([seat.node])));
    }
    let mut buffer = Buffer::new(&opts).map_err(|e| anyhow!("CPU {}: {e}", seat.cpu))?;
    let pattern = split_pattern(&memory.split);
    if !pattern.is_empty() {
        let end = buffer.addr() + buffer.mapped_len();
        for (k, addr) in (buffer.addr()..end).step_by(SPLIT_CHUNK).enumerate() {
            let node = pattern[k % pattern.len()];
            crate::placement::bind_range(
                addr,
                SPLIT_CHUNK.min(end - addr),
                &MemPolicy::Bind(NodeSet::from_ids([node])),
                Default::default(),
            )
            .map_err(|e| anyhow!("CPU {}: {e}", seat.cpu))?;
        }
    }
    fill_doubles(buffer.as_mut_slice::<u64>(), seat.cpu as u64);
    let mut placement = buffer
        .verify()
        .map_err(|e| anyhow!("CPU {}: {e}", seat.cpu))?;
    if !pattern.is_empty() {
        // Verified against the split's nodes; the shares are checked by
        // whoever asked for the split.
        let nodes = NodeSet::from_ids(pattern.iter().copied());
        let total: u64 = placement.pages_by_node.values().sum();
        let on: u64 = placement
            .pages_by_node
            .iter()
            .filter(|(n, _)| nodes.contains(**n))
            .map(|(_, c)| c)
            .sum();
        placement.on_target_pct = (total > 0).then(|| 100.0 * on as f64 / total as f64);
    }
    Ok((buffer, placement, cpu))
}

fn run_kernel(
    all: &mut [u64],
    array_bytes: usize,
    kernel: &KernelSpec,
    reps: u64,
    seed: u64,
) -> (Instant, Instant) {
    let words = array_bytes / 8;
    let stride_words = stride(array_bytes) / 8;
    let (a, rest) = all.split_at_mut(stride_words);
    let (b, rest) = rest.split_at_mut(stride_words.min(rest.len()));
    let (c, d) = rest.split_at_mut(stride_words.min(rest.len()));
    let (a, b, c, d) = (
        &mut a[..words],
        &b[..words.min(b.len())],
        &c[..words.min(c.len())],
        &d[..words.min(d.len())],
    );
    let start = Instant::now();
    for rep in 0..reps {
        // A value that changes every repetition keeps the compiler from
        // proving repeated stores redundant.
        let scalar = 1.0 + ((seed + rep) % 1024) as f64 * 1e-6;
        let mut args = match kernel.op {
            Op::Read => KernelArgs {
                dst: &mut [],
                src1: &*a,
                src2: &[],
                src3: &[],
                scalar,
            },
            Op::Write => KernelArgs {
                dst: &mut *a,
                src1: &[],
                src2: &[],
                src3: &[],
                scalar,
            },
            Op::Copy | Op::Scale => KernelArgs {
                dst: &mut *a,
                src1: b,
                src2: &[],
                src3: &[],
                scalar,
            },
            Op::Add | Op::Triad => KernelArgs {
                dst: &mut *a,
                src1: b,
                src2: c,
                src3: &[],
                scalar,
            },
            Op::Add3 => KernelArgs {
                dst: &mut *a,
                src1: b,
                src2: c,
                src3: d,
                scalar,
            },
        };
        std::hint::black_box(kernel.run(&mut args));
    }
    (start, Instant::now())
}

#[cfg(test)]
mod tests;
