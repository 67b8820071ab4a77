//! Which level of the memory hierarchy a sweep size measures, so that
//! `run`'s summary never passes an L1 figure off as memory bandwidth, and
//! the size past the last-level cache that `run` adds to its sweep so that
//! its memory figures are memory's on machines with large L3s too.

use crate::probes::seats;
use crate::probes::sweep::{self, SweepConfig};
use crate::topology::Topology;
use crate::units::bytes;

use crate::probes::sizing::{MEMORY_FACTOR, MEMORY_FLOOR};
/// Arrays of the widest default kernel (triad), which sets what one
/// thread's size may take.
const MOST_ARRAYS: usize = 3;

/// The data cache sizes of one CPU, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Levels {
    pub l1: usize,
    pub l2: usize,
    pub l3: usize,
}

impl Levels {
    /// The caches of `cpu` (the first CPU this process may use where
    /// `None`); the sweep's defaults where the topology has none.
    pub(crate) fn of(topo: &Topology, cpu: Option<usize>) -> Levels {
        let cpu = cpu.or_else(|| topo.allowed.cpus.iter().next()).unwrap_or(0);
        let (l1, l2, l3) = sweep::cache_levels(topo, cpu);
        Levels { l1, l2, l3 }
    }

    /// The smallest size that counts as memory.
    pub(crate) fn memory_from(&self) -> usize {
        crate::probes::sizing::memory_bytes(self.l3)
    }

    /// The level a per-thread buffer of `size` bytes lives in, in words.
    pub(crate) fn name(&self, size: usize) -> String {
        let times = size as f64 / self.l3.max(1) as f64;
        if size <= self.l1 {
            "L1".into()
        } else if size <= self.l2 {
            "L2".into()
        } else if size <= self.l3 {
            "L3".into()
        } else if size >= self.memory_from() {
            format!("memory, {times:.0}x L3")
        } else {
            format!("L3 and memory, {times:.0}x L3")
        }
    }
}

/// The sweep `run` makes: the cache-aware sizes and one more of at least
/// [`MEMORY_FACTOR`] x L3 or [`MEMORY_FLOOR`], as far as half the free
/// memory allows the widest kernel on every thread; where it allows no size
/// past the cache-aware ones, a note says so.
pub(crate) fn sweep_config(topo: &Topology) -> (SweepConfig, Option<String>) {
    let max = seats::max_threads(topo);
    let all = seats::spread(topo, max);
    let Some(first) = all.first() else {
        return (SweepConfig::default(), None);
    };
    let levels = Levels::of(topo, Some(first.cpu));
    let mut sizes = sweep::cache_sizes(topo, first.cpu);
    let (room, whence) = sweep::per_thread_room(topo, &all);
    let room = room / MOST_ARRAYS / 4096 * 4096;
    let size = levels.memory_from().min(room);
    let last = sizes.last().copied().unwrap_or(0);
    let note = if size > last {
        sizes.push(size);
        (size < levels.memory_from()).then(|| {
            format!(
                "memory figures at {} per thread, below {MEMORY_FACTOR}x L3 or {}: {whence} allows no more",
                bytes(size as u64),
                bytes(MEMORY_FLOOR as u64)
            )
        })
    } else {
        Some(format!(
            "no size past {} per thread: {whence} allows no more, so the last figures are partly cache",
            bytes(last as u64)
        ))
    };
    let cfg = SweepConfig {
        sizes: Some(sizes),
        ..SweepConfig::default()
    };
    (cfg, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_named_by_the_level_they_live_in() {
        let l = Levels {
            l1: 32 << 10,
            l2: 1 << 20,
            l3: 32 << 20,
        };
        assert_eq!(l.name(16 << 10), "L1");
        assert_eq!(l.name(512 << 10), "L2");
        assert_eq!(l.name(32 << 20), "L3");
        // 4x an L3 is still partly cache; 16x, or 1 GiB, is memory.
        assert_eq!(l.name(128 << 20), "L3 and memory, 4x L3");
        assert_eq!(l.memory_from(), 1 << 30);
        assert_eq!(l.name(1 << 30), "memory, 32x L3");
        let big = Levels { l3: 256 << 20, ..l };
        assert_eq!(big.memory_from(), 4 << 30);
        assert_eq!(big.name(1 << 30), "L3 and memory, 4x L3");
    }

    #[test]
    fn run_adds_a_memory_size_within_free_memory() {
        let topo = crate::topology::fixture("two-node");
        let (cfg, note) = sweep_config(&topo);
        let sizes = cfg.sizes.unwrap();
        let levels = Levels::of(&topo, None);
        let last = *sizes.last().unwrap();
        let room = sweep::per_thread_room(&topo, &seats::spread(&topo, seats::max_threads(&topo)))
            .0
            / MOST_ARRAYS;
        assert!(last <= room, "{last} > {room}");
        assert!(last > 4 * levels.l3 || note.is_some(), "{sizes:?} {note:?}");
        if last < levels.memory_from() {
            assert!(note.unwrap().contains("free on node"));
        }
    }
}
