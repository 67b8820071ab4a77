//! The block the parent, the tasks and the burst share: what each task
//! reports about itself (the CPU it started on, its CPU time, where its
//! memory is), the handshake that lets a finished task exit only after the
//! parent's last look at it, and the burst's start gate and counters.
//!
//! One anonymous `MAP_SHARED` mapping made before the first fork, so every
//! process of the run sees it and it vanishes with them.

use crate::sys::{self, CpuTimes, Region};
use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// 32-bit words (futex targets) first: the burst's two, then two per task.
const BURST_READY: usize = 0;
const BURST_GO: usize = 1;
const TASK_U32_BASE: usize = 2;

/// The burst's 64-bit words.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Burst {
    /// Nanoseconds from the run's start to the release of the burst.
    GoNs = 0,
    /// Release to the last burst process reaped (H).
    WallNs = 1,
    /// Processes forked.
    Forked = 2,
    /// Processes that ended other than by a clean exit.
    Failed = 3,
    MessagesSent = 4,
    MessagesReceived = 5,
    /// CPU time of the burst's processes, microseconds.
    UserUs = 6,
    SystemUs = 7,
    /// Set when the burst finished (not stopped or failed).
    Complete = 8,
}
const BURST_WORDS: usize = 16;

/// A task's 64-bit words; the page counts per node follow them.
const T_START_CPU: usize = 0;
const T_START_NS: usize = 1;
const T_DONE_NS: usize = 2;
const T_USER_US: usize = 3;
const T_SYSTEM_US: usize = 4;
const T_CHECKSUM: usize = 5;
const T_NOT_PRESENT: usize = 6;
const T_HUGE_BYTES: usize = 7;
const T_BYTES: usize = 8;
const T_PAGES_VALID: usize = 9;
const TASK_FIXED: usize = 10;

/// What a task found about its memory at the end of its work.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct MemoryReport {
    pub pages_by_node: BTreeMap<usize, u64>,
    pub not_present: u64,
    pub huge_bytes: u64,
    pub bytes: u64,
}

/// What a finished task reports.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TaskReport {
    pub done_ns: u64,
    pub cpu: CpuTimes,
    pub checksum: u64,
    pub memory: Option<MemoryReport>,
}

pub(crate) struct Shared {
    region: Region,
    /// The burst leader's failure, for the parent to print.
    note: sys::note::Note,
    tasks: usize,
    node_slots: usize,
    u32_words: usize,
}

impl Shared {
    /// A zeroed block for `tasks` tasks on nodes with ids below `node_slots`.
    pub(crate) fn new(tasks: usize, node_slots: usize) -> io::Result<Shared> {
        let u32_words = (TASK_U32_BASE + 2 * tasks).next_multiple_of(2);
        let u64_words = BURST_WORDS + tasks * (TASK_FIXED + node_slots);
        let region = Region::map(u32_words * 4 + u64_words * 8, true, 0)?;
        Ok(Shared {
            region,
            note: sys::note::Note::new()?,
            tasks,
            node_slots,
            u32_words,
        })
    }

    pub(crate) fn note(&self) -> &sys::note::Note {
        &self.note
    }

    fn u32(&self, i: usize) -> &AtomicU32 {
        &self.region.u32s(self.u32_words)[i]
    }

    fn u64s(&self) -> &[AtomicU64] {
        &self.region.words()[self.u32_words / 2..]
    }

    pub(crate) fn burst(&self, w: Burst) -> &AtomicU64 {
        &self.u64s()[w as usize]
    }

    fn task(&self, t: usize) -> &[AtomicU64] {
        assert!(t < self.tasks, "task {t} beyond the block");
        let w = TASK_FIXED + self.node_slots;
        let start = BURST_WORDS + t * w;
        &self.u64s()[start..start + w]
    }

    fn done_word(&self, t: usize) -> &AtomicU32 {
        assert!(t < self.tasks, "task {t} beyond the block");
        self.u32(TASK_U32_BASE + 2 * t)
    }

    fn release_word(&self, t: usize) -> &AtomicU32 {
        assert!(t < self.tasks, "task {t} beyond the block");
        self.u32(TASK_U32_BASE + 2 * t + 1)
    }

    /// Where and when task `t` started.
    pub(crate) fn set_start(&self, t: usize, cpu: usize, ns: u64) {
        let w = self.task(t);
        w[T_START_NS].store(ns, Relaxed);
        w[T_START_CPU].store(cpu as u64 + 1, Relaxed);
    }

    pub(crate) fn start_cpu(&self, t: usize) -> Option<usize> {
        match self.task(t)[T_START_CPU].load(Relaxed) {
            0 => None,
            v => Some(v as usize - 1),
        }
    }

    pub(crate) fn start_ns(&self, t: usize) -> u64 {
        self.task(t)[T_START_NS].load(Relaxed)
    }

    /// Task `t` finished its work: its figures, then the done flag.
    pub(crate) fn finish(&self, t: usize, r: &TaskReport) {
        let w = self.task(t);
        w[T_DONE_NS].store(r.done_ns, Relaxed);
        w[T_USER_US].store((r.cpu.user_s * 1e6) as u64, Relaxed);
        w[T_SYSTEM_US].store((r.cpu.system_s * 1e6) as u64, Relaxed);
        w[T_CHECKSUM].store(r.checksum, Relaxed);
        if let Some(m) = &r.memory {
            for (&node, &count) in &m.pages_by_node {
                if node < self.node_slots {
                    w[TASK_FIXED + node].store(count, Relaxed);
                }
            }
            w[T_NOT_PRESENT].store(m.not_present, Relaxed);
            w[T_HUGE_BYTES].store(m.huge_bytes, Relaxed);
            w[T_BYTES].store(m.bytes, Relaxed);
            w[T_PAGES_VALID].store(1, Relaxed);
        }
        self.done_word(t)
            .store(1, std::sync::atomic::Ordering::Release);
    }

    /// Task `t`'s report once it has finished.
    pub(crate) fn report(&self, t: usize) -> Option<TaskReport> {
        if self.done_word(t).load(std::sync::atomic::Ordering::Acquire) == 0 {
            return None;
        }
        let w = self.task(t);
        let memory = (w[T_PAGES_VALID].load(Relaxed) != 0).then(|| MemoryReport {
            pages_by_node: (0..self.node_slots)
                .filter_map(|n| {
                    let c = w[TASK_FIXED + n].load(Relaxed);
                    (c > 0).then_some((n, c))
                })
                .collect(),
            not_present: w[T_NOT_PRESENT].load(Relaxed),
            huge_bytes: w[T_HUGE_BYTES].load(Relaxed),
            bytes: w[T_BYTES].load(Relaxed),
        });
        Some(TaskReport {
            done_ns: w[T_DONE_NS].load(Relaxed),
            cpu: CpuTimes {
                user_s: w[T_USER_US].load(Relaxed) as f64 / 1e6,
                system_s: w[T_SYSTEM_US].load(Relaxed) as f64 / 1e6,
            },
            checksum: w[T_CHECKSUM].load(Relaxed),
            memory,
        })
    }

    /// Lets finished task `t` exit.
    pub(crate) fn release(&self, t: usize) {
        self.release_word(t).store(1, Relaxed);
        sys::futex_wake_all(self.release_word(t));
    }

    /// In task `t`: waits until released, at most `timeout` per wait.
    pub(crate) fn wait_release(&self, t: usize, timeout: Duration) -> bool {
        let w = self.release_word(t);
        if w.load(Relaxed) == 0 {
            sys::futex_wait(w, 0, Some(timeout));
        }
        w.load(Relaxed) != 0
    }

    /// A burst process is ready to go.
    pub(crate) fn burst_ready(&self) {
        self.u32(BURST_READY).fetch_add(1, Relaxed);
        sys::futex_wake_all(self.u32(BURST_READY));
    }

    /// Burst processes ready so far; waits up to `timeout` for a change
    /// when fewer than `target`.
    pub(crate) fn burst_ready_count(&self, target: u32, timeout: Duration) -> u32 {
        let w = self.u32(BURST_READY);
        let v = w.load(Relaxed);
        if v < target {
            sys::futex_wait(w, v, Some(timeout));
        }
        w.load(Relaxed)
    }

    /// Releases every burst process at once.
    pub(crate) fn burst_go(&self) {
        self.u32(BURST_GO).store(1, Relaxed);
        sys::futex_wake_all(self.u32(BURST_GO));
    }

    /// In a burst process: waits for the release.
    pub(crate) fn wait_burst_go(&self) {
        let w = self.u32(BURST_GO);
        while w.load(Relaxed) == 0 {
            sys::futex_wait(w, 0, Some(Duration::from_secs(1)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_and_the_burst_have_their_own_words() {
        let s = Shared::new(3, 4).unwrap();
        for t in 0..3 {
            s.set_start(t, 10 + t, 100 * t as u64);
        }
        s.burst(Burst::MessagesReceived).store(77, Relaxed);
        s.finish(
            1,
            &TaskReport {
                done_ns: 5,
                cpu: CpuTimes {
                    user_s: 1.5,
                    system_s: 0.25,
                },
                checksum: 42,
                memory: Some(MemoryReport {
                    pages_by_node: BTreeMap::from([(0, 3), (3, 9)]),
                    not_present: 1,
                    huge_bytes: 0,
                    bytes: 4096 * 13,
                }),
            },
        );
        for t in 0..3 {
            assert_eq!(s.start_cpu(t), Some(10 + t));
            assert_eq!(s.start_ns(t), 100 * t as u64);
        }
        assert!(s.report(0).is_none() && s.report(2).is_none());
        let r = s.report(1).unwrap();
        assert_eq!(r.cpu.user_s, 1.5);
        assert_eq!(r.checksum, 42);
        let m = r.memory.unwrap();
        assert_eq!(m.pages_by_node, BTreeMap::from([(0, 3), (3, 9)]));
        assert_eq!(s.burst(Burst::MessagesReceived).load(Relaxed), 77);
        // The u32 handshake words sit apart from the u64 words.
        assert!(!s.wait_release(1, Duration::from_millis(1)));
        s.release(1);
        assert!(s.wait_release(1, Duration::from_millis(1)));
        assert!(!s.wait_release(0, Duration::from_millis(1)));
        assert_eq!(s.start_cpu(0), Some(10));
    }

    #[test]
    fn burst_gate_counts_and_opens() {
        let s = Shared::new(1, 1).unwrap();
        assert_eq!(s.burst_ready_count(1, Duration::from_millis(1)), 0);
        s.burst_ready();
        s.burst_ready();
        assert_eq!(s.burst_ready_count(2, Duration::from_secs(1)), 2);
        s.burst_go();
        s.wait_burst_go();
    }
}
