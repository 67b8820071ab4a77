//! How large a probe's buffers are: from the caches the threads share,
//! capped by the memory node's free memory.

use crate::results::Condition;
use crate::topology::{MemoryLimit, Topology};

/// Bytes of L3 (or the last level there is) that `cpus` share, counting
/// each cache instance once.
pub(crate) fn llc_bytes(topo: &Topology, cpus: &[usize]) -> u64 {
    let level = topo.caches.iter().map(|c| c.level).max().unwrap_or(0);
    topo.caches
        .iter()
        .filter(|c| c.level == level && c.kind != "Instruction")
        .filter(|c| cpus.iter().any(|&cpu| c.cpus.contains(cpu)))
        .map(|c| c.size_bytes)
        .sum()
}

/// A buffer counts as memory, not cache, from this many times the L3 on.
/// A random chase through n x L3 can still find about 1/n of its loads in
/// the L3: a quarter at 4x (STREAM's rule, which holds for streams, not for
/// a chase), a sixteenth at 16x.
pub(crate) const MEMORY_FACTOR: usize = 16;
/// ... or from this size on, whichever is larger.
pub(crate) const MEMORY_FLOOR: usize = 1 << 30;

/// The smallest buffer that counts as memory beside `llc` bytes of L3.
pub(crate) fn memory_bytes(llc: usize) -> usize {
    (MEMORY_FACTOR * llc).max(MEMORY_FLOOR)
}

/// A chase buffer of the default size is at most this large, whatever
/// the L3: building one costs a cache miss per line, so 16x a 1 GiB L3
/// (AMD's stacked-cache parts) would be 16 GiB and half a minute or more
/// per build, while 4 GiB beside 1 GiB of L3 still finds about three
/// loads in four past it.
pub(crate) const CHASE_TIME_CAP: usize = 4 << 30;

/// The idle-latency chase buffer of a thread on `cpu`, before any cap of
/// the memory: the smallest that counts as memory beside the L3 it shares
/// ([`memory_bytes`]), at most [`CHASE_TIME_CAP`]; `run`'s latency parts
/// and `loaded` chase the same.
pub(crate) fn chase_bytes(topo: &Topology, cpu: usize) -> usize {
    memory_bytes(llc_bytes(topo, &[cpu]) as usize).min(CHASE_TIME_CAP)
}

/// Where [`CHASE_TIME_CAP`] made `cpu`'s chase smaller than the L3 asks
/// for, the sentence that says so.
pub(crate) fn chase_cap_note(topo: &Topology, cpu: usize) -> Option<String> {
    let llc = llc_bytes(topo, &[cpu]);
    let wanted = memory_bytes(llc as usize);
    (wanted > CHASE_TIME_CAP).then(|| {
        format!(
            "chase buffer capped by time at {} ({MEMORY_FACTOR}x the {} L3 would be {}, each build a cache miss per line)",
            crate::units::bytes(CHASE_TIME_CAP as u64),
            crate::units::bytes(llc),
            crate::units::bytes(wanted as u64)
        )
    })
}

/// `wanted` bytes, or half the free memory of `mem_node` where that is
/// less, with a note saying so (and naming the cgroup or resource limit
/// when that, not the node, is what is short).
pub(crate) fn cap(topo: &Topology, wanted: usize, mem_node: usize) -> (usize, Option<String>) {
    let free = topo.node_free_bytes(mem_node);
    let limit = (free / 2) as usize;
    if wanted <= limit {
        return (wanted, None);
    }
    let why = match limit_of(topo, mem_node) {
        Some(l) => format!("half of the {}", l.describe()),
        None => "half its free memory".to_string(),
    };
    (
        limit,
        Some(format!(
            "node {mem_node}: working set scaled down from {} to {} MiB ({why})",
            wanted >> 20,
            limit >> 20
        )),
    )
}

/// The process's memory limit where it, not `mem_node`'s own free memory,
/// is what [`cap`] halves.
fn limit_of(topo: &Topology, mem_node: usize) -> Option<&MemoryLimit> {
    topo.memory_limit
        .as_ref()
        .filter(|_| topo.node_free_bytes(mem_node) < topo.node_free_unlimited(mem_node))
}

/// The condition to go beside a note of [`cap`] (or of another share of
/// `mem_node`'s free memory) that scaled a buffer down: `Some` where the
/// process's memory limit, not the node, is what was short.
pub(crate) fn limit_condition(topo: &Topology, mem_node: usize) -> Option<Condition> {
    limit_of(topo, mem_node).map(scaled_by)
}

/// The condition to go beside a note that names the room of `nodes` (of
/// every usable memory node for `None`) in the words of
/// [`crate::memory::admission::room_words`]: `Some` where the process's
/// memory limit is what those words name.
pub(crate) fn room_condition(topo: &Topology, nodes: Option<&[usize]>) -> Option<Condition> {
    crate::memory::admission::room(topo, nodes)?
        .limit
        .map(scaled_by)
}

fn scaled_by(l: &MemoryLimit) -> Condition {
    Condition::ScaledByMemoryLimit {
        source: l.source.clone(),
    }
}

/// Per-thread array size for `threads` threads sharing `working_set`.
pub(crate) fn array_bytes(working_set: usize, arrays: usize, threads: usize) -> usize {
    (working_set / (arrays * threads).max(1)) / 4096 * 4096
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chase_beside_a_huge_l3_is_capped_by_time_and_says_so() {
        let mut t = crate::topology::fixture("two-node");
        let cpu = t.allowed.cpus.iter().next().unwrap();
        assert!(chase_cap_note(&t, cpu).is_none());
        assert_eq!(
            chase_bytes(&t, cpu),
            memory_bytes(llc_bytes(&t, &[cpu]) as usize)
        );
        let level = t.caches.iter().map(|c| c.level).max().unwrap();
        for c in t.caches.iter_mut().filter(|c| c.level == level) {
            c.size_bytes = 1 << 30;
        }
        assert_eq!(chase_bytes(&t, cpu), CHASE_TIME_CAP);
        let note = chase_cap_note(&t, cpu).unwrap();
        assert!(note.contains("capped by time at 4 GiB"), "{note}");
        assert!(note.contains("would be 16 GiB"), "{note}");
    }
}
