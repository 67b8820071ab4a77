//! A team of pinned threads that run bandwidth kernels together.
//!
//! Each thread pins itself, maps its own arrays bound to its own node and
//! writes them (first touch from the thread that will use them), then waits.
//! For every timed run all threads leave one barrier together; each records
//! its own start and end, and the run lasts from the first start to the last
//! finish, so a straggler is never hidden. Threads stay alive between runs so
//! buffers are allocated once per size, not once per repetition.

use crate::ids::NodeSet;
use crate::kernels::{KernelArgs, KernelSpec, Op};
use crate::memory::{Buffer, BufferOptions, PageKind, Placement};
use crate::placement::{MemPolicy, pin_and_check};
use crate::sys::threads::{StartGate, spawn_scoped};
use anyhow::{Result, anyhow};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

/// Where one thread runs and whose memory it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seat {
    pub cpu: usize,
    pub node: usize,
}

/// Gap between arrays of one thread: 17 cache lines, so `src[i]` and
/// `dst[i]` never share their low 12 address bits (4 KiB aliasing stalls
/// loads behind unrelated stores) or an L1 set.
const ARRAY_GAP: usize = 17 * 64;

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

    /// Whether `arrays` arrays of `array_bytes` fit in each thread's memory.
    pub(crate) fn fits(&self, array_bytes: usize, arrays: usize) -> bool {
        layout_bytes(array_bytes, arrays) <= self.thread_bytes()
    }
}

/// Bytes `arrays` arrays of `array_bytes` take, laid out as a team thread
/// lays them out.
pub(crate) fn layout_bytes(array_bytes: usize, arrays: usize) -> usize {
    stride(array_bytes) * arrays
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

/// The handle the measuring code drives; valid inside [`with_team`].
pub(crate) struct Team<'s> {
    shared: &'s Shared,
    memory: &'s TeamMemory,
}

impl Team<'_> {
    /// Every thread runs `kernel` `reps` times over its own arrays of
    /// `array_bytes`, laid out from the start of its memory as
    /// [`TeamMemory`] lays out its own; they must fit in it
    /// ([`TeamMemory::fits`]).
    pub(crate) fn run(
        &self,
        kernel: &'static KernelSpec,
        array_bytes: usize,
        reps: u64,
        seed: u64,
    ) -> RunTimes {
        assert!(
            self.memory.fits(array_bytes, kernel.op.arrays()),
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
        for (index, seat) in seats.iter().enumerate() {
            let (shared, setups) = (&shared, &setups);
            let started = spawn_scoped(scope, (index, n), move || {
                worker(index, *seat, memory, shared, setups)
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
                setup.cpus_seen.push(r.cpu);
                setup.page_kinds.push(r.kind);
                setup.fallbacks.extend(r.fallback.clone());
            }
            body(
                &Team {
                    shared: &shared,
                    memory,
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
    cpu: usize,
    kind: PageKind,
    fallback: Option<String>,
}

type SetupSlot = Option<SeatReport>;

fn worker(
    index: usize,
    seat: Seat,
    memory: &TeamMemory,
    shared: &Shared,
    setups: &Mutex<Vec<SetupSlot>>,
) {
    if !shared.gate.wait() {
        return;
    }
    let prepared = prepare(seat, memory);
    let mut buffer = match prepared {
        Ok((buffer, placement, cpu)) => {
            setups.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(SeatReport {
                placement,
                cpu,
                kind: buffer.page_kind(),
                fallback: buffer.fallback_reason().map(str::to_string),
            });
            Some(buffer)
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
        if let Some(buffer) = buffer.as_mut() {
            let span = run_kernel(buffer, array_bytes, kernel, reps, seed);
            shared.spans.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(span);
        }
        shared.done.wait();
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

/// Bytes from one array's start to the next.
pub(crate) fn stride(array_bytes: usize) -> usize {
    array_bytes.div_ceil(4096) * 4096 + ARRAY_GAP
}

/// Ordinary, distinct, non-zero doubles: arithmetic kernels must not meet
/// denormals (microcode assists) or NaNs, and zero pages or identical pages
/// (KSM) must not stand in for real memory.
fn fill_doubles(words: &mut [u64], salt: u64) {
    for (i, w) in words.iter_mut().enumerate() {
        *w = (1.0 + (i as f64 + salt as f64 * 0.5) * 1e-9).to_bits();
    }
    std::hint::black_box(words);
}

fn run_kernel(
    buffer: &mut Buffer,
    array_bytes: usize,
    kernel: &KernelSpec,
    reps: u64,
    seed: u64,
) -> (Instant, Instant) {
    let words = array_bytes / 8;
    let stride_words = stride(array_bytes) / 8;
    let all = buffer.as_mut_slice::<u64>();
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
mod tests {
    use super::*;

    #[test]
    fn split_pattern_repeats_nodes_by_weight() {
        assert_eq!(split_pattern(&[(0, 3), (1, 1)]), [0, 0, 0, 1]);
        assert_eq!(split_pattern(&[(2, 1), (0, 2)]), [2, 0, 0]);
        assert!(split_pattern(&[]).is_empty());
        assert_eq!(split_pattern(&[(1, 0), (3, 1)]), [3]);
    }

    #[test]
    fn arrays_fit_the_memory_laid_out_for_the_largest() {
        let memory = TeamMemory {
            array_bytes: 3 << 20,
            arrays: 1,
            pages: PageKind::Base,
            split: Vec::new(),
        };
        assert_eq!(memory.thread_bytes(), (3 << 20) + ARRAY_GAP);
        assert!(memory.fits(3 << 20, 1));
        assert!(memory.fits(1 << 20, 3) == (3 * stride(1 << 20) <= stride(3 << 20)));
        assert!(!memory.fits(1 << 20, 4));
        assert!(!memory.fits((3 << 20) + 1, 1));
    }
}
