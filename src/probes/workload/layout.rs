//! The memory of a run: the shared control block every task and the parent
//! see (startup counters, stop flag, each task's CPU and progress, where
//! each area's pages ended up), and the data areas the tasks work on.
//!
//! As in perf: global memory is `MAP_SHARED` and mapped by the parent before
//! forking, so every process sees it; process memory is `MAP_PRIVATE`,
//! mapped by each process and seen by its threads; thread memory is mapped
//! by each thread. Process-locked memory is the first `-L` MB of the process
//! memory. Every data area is mapped 2 MiB larger than asked and starts at
//! the next 2 MiB boundary.

use crate::ids::CpuSet;
use crate::placement::MemPolicy;
use crate::placement::pages::{self, PageHistogram};
use crate::sys::Region;
use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// perf's `HPSIZE`: slack and alignment of every data area.
pub(crate) const HPSIZE: usize = 2 << 20;

/// The most pages asked of `move_pages` per area; larger areas are sampled.
pub(crate) const PLACEMENT_SAMPLE_PAGES: usize = 16 * 1024;

/// 32-bit control words (futex targets and flags) at the start of the block.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Word {
    /// Tasks that reached the startup barrier.
    Started = 0,
    /// Tasks that passed it.
    Working = 1,
    /// Set by the parent to release the tasks.
    Go = 2,
    /// Set to stop every task at its next loop.
    Stop = 3,
    /// Tasks that finished.
    Done = 4,
    /// Tasks that failed (the first one's error is in the control's note).
    Failed = 5,
    /// Whether the THP warning was printed (once per run, as perf).
    ThpWarned = 6,
    /// Tasks that left their loop: from then on a task frees its memory.
    Leaving = 7,
}

const HEADER_U32: usize = 16;
/// u64 words per task: one cache line.
const TASK_WORDS: usize = 8;
const T_CPU: usize = 0;
const T_LOOP: usize = 1;
const T_LOOPS_COMPLETED: usize = 2;
const T_BYTES: usize = 3;
const T_RUNTIME_NS: usize = 4;
const T_VAL: usize = 5;

/// Placement record words after the per-node counts.
const P_NOT_PRESENT: usize = 0;
const P_ERRORS: usize = 1;
const P_CHECKED: usize = 2;
const P_TOTAL: usize = 3;
const P_HUGE_BYTES: usize = 4;
const P_BYTES: usize = 5;
const P_VALID: usize = 6;
const P_EXTRA: usize = 7;

/// The block shared by the parent and every task.
pub(crate) struct Control {
    region: Region,
    /// The first failure, for the parent to print.
    note: crate::sys::note::Note,
    tasks: usize,
    #[cfg(test)]
    processes: usize,
    node_slots: usize,
}

/// Where one data area's pages were at the end of the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct AreaPlacement {
    /// Pages per node among those checked.
    pub pages_by_node: BTreeMap<usize, u64>,
    pub not_present: u64,
    pub errors: u64,
    pub pages_checked: u64,
    pub pages_total: u64,
    /// Bytes of the area backed by transparent huge pages (smaps).
    pub huge_bytes: u64,
    pub bytes: u64,
}

impl AreaPlacement {
    /// Percent of present checked pages on `node`.
    pub(crate) fn pct_on(&self, node: usize) -> Option<f64> {
        let present: u64 = self.pages_by_node.values().sum();
        (present > 0).then(|| {
            self.pages_by_node.get(&node).copied().unwrap_or(0) as f64 * 100.0 / present as f64
        })
    }
}

impl Control {
    /// A zeroed block for `tasks` tasks in `processes` processes on a
    /// machine whose node ids are below `node_slots`.
    pub(crate) fn new(tasks: usize, processes: usize, node_slots: usize) -> io::Result<Control> {
        let place_words = node_slots + P_EXTRA;
        let words = HEADER_U32 / 2 + tasks * TASK_WORDS + (tasks + processes + 1) * place_words;
        let region = Region::map(words * 8, true, 0)?;
        let c = Control {
            region,
            note: crate::sys::note::Note::new()?,
            tasks,
            #[cfg(test)]
            processes,
            node_slots,
        };
        for t in 0..tasks {
            c.task_word(t, T_CPU).store(0, Ordering::Relaxed);
        }
        Ok(c)
    }

    pub(crate) fn word(&self, w: Word) -> &AtomicU32 {
        &self.region.u32s(HEADER_U32)[w as usize]
    }

    fn u64s(&self) -> &[AtomicU64] {
        &self.region.words()[HEADER_U32 / 2..]
    }

    fn task_word(&self, task: usize, field: usize) -> &AtomicU64 {
        &self.u64s()[task * TASK_WORDS + field]
    }

    pub(crate) fn note(&self) -> &crate::sys::note::Note {
        &self.note
    }

    pub(crate) fn stopping(&self) -> bool {
        self.word(Word::Stop).load(Ordering::Relaxed) != 0
    }

    pub(crate) fn request_stop(&self) {
        self.word(Word::Stop).store(1, Ordering::Relaxed);
    }

    /// Records the CPU a task runs on (perf's `update_curr_cpu`).
    pub(crate) fn set_cpu(&self, task: usize, cpu: usize) {
        self.task_word(task, T_CPU)
            .store(cpu as u64 + 1, Ordering::Relaxed);
    }

    /// The CPU a task last reported; `None` before its first loop.
    pub(crate) fn cpu(&self, task: usize) -> Option<usize> {
        match self.task_word(task, T_CPU).load(Ordering::Relaxed) {
            0 => None,
            v => Some(v as usize - 1),
        }
    }

    /// perf's `loops_done`: the index of the task's last loop.
    pub(crate) fn set_loop(&self, task: usize, l: u32, completed: u64, bytes: u64) {
        self.task_word(task, T_LOOP)
            .store(u64::from(l), Ordering::Relaxed);
        self.task_word(task, T_LOOPS_COMPLETED)
            .store(completed, Ordering::Relaxed);
        self.task_word(task, T_BYTES)
            .store(bytes, Ordering::Relaxed);
    }

    pub(crate) fn loop_index(&self, task: usize) -> u32 {
        self.task_word(task, T_LOOP).load(Ordering::Relaxed) as u32
    }

    pub(crate) fn loops_completed(&self, task: usize) -> u64 {
        self.task_word(task, T_LOOPS_COMPLETED)
            .load(Ordering::Relaxed)
    }

    pub(crate) fn bytes_done(&self, task: usize) -> u64 {
        self.task_word(task, T_BYTES).load(Ordering::Relaxed)
    }

    pub(crate) fn finish_task(&self, task: usize, runtime_ns: u64, val: u64) {
        self.task_word(task, T_RUNTIME_NS)
            .store(runtime_ns, Ordering::Relaxed);
        self.task_word(task, T_VAL).store(val, Ordering::Relaxed);
    }

    /// The task's own runtime; 0 when it did not finish.
    pub(crate) fn runtime_ns(&self, task: usize) -> u64 {
        self.task_word(task, T_RUNTIME_NS).load(Ordering::Relaxed)
    }

    fn place_words(&self, slot: usize) -> &[AtomicU64] {
        let w = self.node_slots + P_EXTRA;
        let start = self.tasks * TASK_WORDS + slot * w;
        &self.u64s()[start..start + w]
    }

    fn place_slot(&self, area: AreaId) -> usize {
        match area {
            AreaId::Thread(t) => t,
            AreaId::Process(p) => self.tasks + p,
            #[cfg(test)]
            AreaId::Global => self.tasks + self.processes,
        }
    }

    /// Stores where an area's pages are.
    pub(crate) fn store_placement(&self, area: AreaId, p: &AreaPlacement) {
        let w = self.place_words(self.place_slot(area));
        let n = self.node_slots;
        for (node, count) in &p.pages_by_node {
            if *node < n {
                w[*node].store(*count, Ordering::Relaxed);
            } else {
                w[n + P_ERRORS].fetch_add(*count, Ordering::Relaxed);
            }
        }
        w[n + P_NOT_PRESENT].store(p.not_present, Ordering::Relaxed);
        w[n + P_ERRORS].fetch_add(p.errors, Ordering::Relaxed);
        w[n + P_CHECKED].store(p.pages_checked, Ordering::Relaxed);
        w[n + P_TOTAL].store(p.pages_total, Ordering::Relaxed);
        w[n + P_HUGE_BYTES].store(p.huge_bytes, Ordering::Relaxed);
        w[n + P_BYTES].store(p.bytes, Ordering::Relaxed);
        w[n + P_VALID].store(1, Ordering::Release);
    }

    /// Where an area's pages are, if its owner reported it.
    pub(crate) fn placement(&self, area: AreaId) -> Option<AreaPlacement> {
        let w = self.place_words(self.place_slot(area));
        let n = self.node_slots;
        if w[n + P_VALID].load(Ordering::Acquire) == 0 {
            return None;
        }
        let pages_by_node = (0..n)
            .filter_map(|node| {
                let c = w[node].load(Ordering::Relaxed);
                (c > 0).then_some((node, c))
            })
            .collect();
        Some(AreaPlacement {
            pages_by_node,
            not_present: w[n + P_NOT_PRESENT].load(Ordering::Relaxed),
            errors: w[n + P_ERRORS].load(Ordering::Relaxed),
            pages_checked: w[n + P_CHECKED].load(Ordering::Relaxed),
            pages_total: w[n + P_TOTAL].load(Ordering::Relaxed),
            huge_bytes: w[n + P_HUGE_BYTES].load(Ordering::Relaxed),
            bytes: w[n + P_BYTES].load(Ordering::Relaxed),
        })
    }
}

/// Which data area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AreaId {
    #[cfg(test)]
    Global,
    Process(usize),
    Thread(usize),
}

/// How data areas are created (perf's `alloc_data` arguments).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AllocSpec {
    /// `-H`: > 0 MADV_HUGEPAGE, < 0 MADV_NOHUGEPAGE (private areas only).
    pub thp: i32,
    /// `-I`: write a counting sequence over the area, which also places
    /// every page (first touch) from the allocating task.
    pub init_random: bool,
    /// `-0`: allocate and initialise from these CPUs, memory bound to this
    /// node, then restore affinity and policy.
    pub init_cpu0: Option<(CpuSet, usize)>,
}

/// One data area.
pub(crate) struct DataArea {
    region: Region,
    /// Whether transparent huge pages can back it (see [`thp_possible`]).
    thp_possible: bool,
}

/// What went wrong with madvise, for perf's one-time warning.
pub(crate) enum ThpRefused {
    Enable,
    Disable,
}

impl DataArea {
    /// Maps `bytes` (none for 0) the way perf's `alloc_data` does. `seed`
    /// offsets the initial counting sequence so areas differ.
    pub(crate) fn alloc(
        bytes: u64,
        shared: bool,
        spec: &AllocSpec,
        seed: u64,
        thp_refused: &mut Option<ThpRefused>,
    ) -> Result<Option<DataArea>, String> {
        if bytes == 0 {
            return Ok(None);
        }
        let bytes = usize::try_from(bytes).map_err(|_| "size does not fit".to_string())?;
        let restore = match &spec.init_cpu0 {
            Some((cpus, node)) => {
                let prev_policy = crate::placement::get_thread_policy().ok();
                let guard =
                    crate::placement::affinity::pin_scoped(cpus).map_err(|e| format!("-0: {e}"))?;
                crate::placement::set_thread_policy(&MemPolicy::Bind(
                    crate::ids::NodeSet::from_ids([*node]),
                ))
                .map_err(|e| format!("-0: {e}"))?;
                Some((guard, prev_policy))
            }
            None => None,
        };
        let result = Self::map_and_init(bytes, shared, spec, seed, thp_refused);
        if let Some((guard, prev)) = restore {
            let _ = crate::placement::set_thread_policy(&prev.unwrap_or(MemPolicy::Default));
            drop(guard);
        }
        result.map(Some)
    }

    fn map_and_init(
        bytes: usize,
        shared: bool,
        spec: &AllocSpec,
        seed: u64,
        thp_refused: &mut Option<ThpRefused>,
    ) -> Result<DataArea, String> {
        let mut region = Region::map(bytes, shared, HPSIZE).map_err(|e| {
            format!(
                "mmap of {} ({}) failed: {e}",
                crate::units::bytes(bytes as u64),
                if shared { "shared" } else { "private" }
            )
        })?;
        if !shared && spec.thp != 0 {
            let (addr, len) = region.mapping();
            let advice = if spec.thp > 0 {
                crate::sys::mmap::Advice::HugePage
            } else {
                crate::sys::mmap::Advice::NoHugePage
            };
            if crate::sys::mmap::madvise(addr, len, advice).is_err() {
                *thp_refused = Some(if spec.thp > 0 {
                    ThpRefused::Enable
                } else {
                    ThpRefused::Disable
                });
            }
        }
        if spec.init_random {
            region.fill_counting(seed);
        }
        Ok(DataArea {
            region,
            thp_possible: if shared {
                // Shared memory follows shmem's own THP setting.
                !matches!(thp_mode("shmem_enabled").as_deref(), Some("never" | "deny"))
            } else {
                thp_possible(spec.thp, thp_mode("enabled").as_deref())
            },
        })
    }

    pub(crate) fn region(&self) -> &Region {
        &self.region
    }

    /// Where the area's pages are now (sampled past
    /// [`PLACEMENT_SAMPLE_PAGES`]) and how much THP backs it; call from the
    /// process that mapped it.
    pub(crate) fn placement(&self) -> AreaPlacement {
        let (addr, len) = (self.region.addr(), self.region.len());
        let mut out = AreaPlacement {
            bytes: len as u64,
            ..Default::default()
        };
        match pages::page_nodes_sampled(
            addr,
            len,
            crate::sys::mmap::base_page_size(),
            PLACEMENT_SAMPLE_PAGES,
        ) {
            Ok(sample) => {
                let h: PageHistogram = sample.histogram();
                out.pages_by_node = h.by_node;
                out.not_present = h.not_present;
                out.errors = h.errors;
                out.pages_checked = sample.status.len() as u64;
                out.pages_total = sample.pages_total;
            }
            Err(_) => {
                out.pages_total = len.div_ceil(crate::sys::mmap::base_page_size()) as u64;
            }
        }
        // smaps walks the page tables of every mapping of the process: on
        // 4 KiB pages, once per task after its loop, that cost a 32-task
        // run over 1 GiB 0.3 s of system time and a quarter of its
        // total-speed beside perf. Where THP cannot be there, 0 is known.
        if self.thp_possible {
            out.huge_bytes =
                crate::procfs::smaps::self_huge_bytes(addr as u64, (addr + len) as u64);
        }
        out
    }
}

/// The system's THP mode in `file` (`enabled`: always, madvise, never;
/// `shmem_enabled`: also within_size, advise, deny, force), if it has THP.
fn thp_mode(file: &str) -> Option<String> {
    let text =
        std::fs::read_to_string(format!("/sys/kernel/mm/transparent_hugepage/{file}")).ok()?;
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}

/// Whether THP may back a private anonymous area given its `--thp` (1:
/// MADV_HUGEPAGE, -1: MADV_NOHUGEPAGE, 0: neither) and the system's mode;
/// an unknown mode counts as possible, so the figure is then read.
fn thp_possible(thp: i32, mode: Option<&str>) -> bool {
    match (thp, mode) {
        (t, _) if t < 0 => false,
        (_, Some("never")) => false,
        (0, Some("madvise")) => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thp_is_possible_only_where_the_mode_and_the_advice_allow_it() {
        assert!(thp_possible(1, Some("madvise")));
        assert!(thp_possible(1, Some("always")));
        assert!(thp_possible(0, Some("always")));
        assert!(!thp_possible(0, Some("madvise")));
        assert!(!thp_possible(1, Some("never")));
        assert!(!thp_possible(-1, Some("always")));
        assert!(thp_possible(0, None));
    }

    #[test]
    fn control_fields_round_trip() {
        let c = Control::new(3, 2, 4).unwrap();
        assert_eq!(c.cpu(1), None);
        c.set_cpu(1, 0);
        assert_eq!(c.cpu(1), Some(0));
        c.set_loop(2, 7, 8, 1 << 30);
        assert_eq!(
            (c.loop_index(2), c.loops_completed(2), c.bytes_done(2)),
            (7, 8, 1 << 30)
        );
        c.finish_task(0, 123, 9);
        assert_eq!(c.runtime_ns(0), 123);
        assert!(!c.stopping());
        c.request_stop();
        assert!(c.stopping());
        assert!(c.placement(AreaId::Process(1)).is_none());
        let p = AreaPlacement {
            pages_by_node: [(0, 10), (3, 30)].into(),
            not_present: 1,
            errors: 0,
            pages_checked: 41,
            pages_total: 41,
            huge_bytes: 0,
            bytes: 41 * 4096,
        };
        c.store_placement(AreaId::Process(1), &p);
        assert_eq!(c.placement(AreaId::Process(1)), Some(p.clone()));
        assert_eq!(p.pct_on(3), Some(75.0));
        assert!(c.placement(AreaId::Global).is_none());
        assert!(c.placement(AreaId::Thread(2)).is_none());
    }

    #[test]
    fn areas_are_aligned_filled_and_report_their_pages() {
        let spec = AllocSpec {
            thp: 0,
            init_random: true,
            init_cpu0: None,
        };
        let mut refused = None;
        let a = DataArea::alloc(1 << 20, false, &spec, 5, &mut refused)
            .unwrap()
            .unwrap();
        assert_eq!(a.region().addr() % HPSIZE, 0);
        let w = a.region().words();
        assert_eq!(w[0].load(Ordering::Relaxed), 5);
        assert_eq!(w[10].load(Ordering::Relaxed), 15);
        let p = a.placement();
        assert_eq!(p.bytes, 1 << 20);
        assert_eq!(
            p.pages_total,
            (1u64 << 20) / crate::sys::mmap::base_page_size() as u64
        );
        assert!(
            DataArea::alloc(0, true, &spec, 0, &mut refused)
                .unwrap()
                .is_none()
        );
    }
}
