//! Memory admission: every command that maps memory works out its footprint
//! from the options and compares it with the free memory of the nodes it
//! lands on before anything is mapped. On a server someone cares about, a
//! refused run is cheap; the OOM killer choosing a victim is not.

use crate::error::usage;
use crate::topology::{MemoryLimit, Topology};
use crate::units::bytes;
use anyhow::Result;

/// Share of the free memory a run may map. The rest is left for the page
/// cache, the kernel and whatever else runs on the machine.
pub(crate) const SHARE_PCT: u64 = 90;

/// What a run wants to map, and where.
pub(crate) struct Footprint<'a> {
    /// Bytes mapped at the peak.
    pub bytes: u64,
    /// Nodes the memory lands on; `None`: wherever the kernel puts it (every
    /// node this process may use).
    pub nodes: Option<&'a [usize]>,
    /// The options that come to `bytes`, for the message: "--size 100G".
    pub what: String,
    /// What to change, for the message: "give a smaller --size".
    pub remedy: &'a str,
}

/// What a run may map into, and whether a cgroup or resource limit of the
/// process decided it rather than the nodes' free memory.
pub(crate) struct Room<'a> {
    pub bytes: u64,
    pub limit: Option<&'a MemoryLimit>,
}

/// Free memory of `nodes` (or of every usable memory node), when the kernel
/// says, capped by the process's memory limit; a machine without NUMA
/// information falls back to /proc/meminfo.
pub(crate) fn room<'a>(topo: &'a Topology, nodes: Option<&[usize]>) -> Option<Room<'a>> {
    let ids: Vec<usize> = match nodes {
        Some(ids) => ids.to_vec(),
        None => topo.usable_memory_nodes().iter().collect(),
    };
    let free = ids.iter().fold(0u64, |sum, &n| {
        sum.saturating_add(topo.node_free_unlimited(n))
    });
    let free = if free > 0 {
        Some(free)
    } else {
        topo.system_mem_free_bytes.filter(|&f| f > 0)
    };
    match (free, topo.memory_limit.as_ref()) {
        (Some(f), Some(l)) if l.headroom_bytes < f => Some(Room {
            bytes: l.headroom_bytes,
            limit: Some(l),
        }),
        (None, Some(l)) => Some(Room {
            bytes: l.headroom_bytes,
            limit: Some(l),
        }),
        (Some(f), _) => Some(Room {
            bytes: f,
            limit: None,
        }),
        (None, None) => None,
    }
}

/// The bytes of [`room`].
pub(crate) fn free_bytes(topo: &Topology, nodes: Option<&[usize]>) -> Option<u64> {
    room(topo, nodes).map(|r| r.bytes)
}

/// The most a run may map where `free` bytes are free.
pub(crate) fn limit(free: u64) -> u64 {
    (u128::from(free) * u128::from(SHARE_PCT) / 100) as u64
}

/// Nodes of `nodes` (or of every usable memory node) whose free memory the
/// kernel does not give: their figure in [`free_bytes`] is an upper bound.
pub(crate) fn unknown_free_nodes(topo: &Topology, nodes: Option<&[usize]>) -> Vec<usize> {
    let all: Vec<usize> = match nodes {
        Some(ids) => ids.to_vec(),
        None => topo.usable_memory_nodes().iter().collect(),
    };
    all.into_iter()
        .filter(|&n| topo.node_free_unknown(n))
        .collect()
}

/// Refuses (exit 2) a footprint above [`SHARE_PCT`] of the free memory,
/// naming both figures and, where it decided, the cgroup or resource limit.
/// Admits when the kernel does not say what is free: there is nothing
/// honest to compare with. A node whose meminfo has no `MemFree` counts
/// with its total memory: what cannot fit even there is refused, the rest
/// admitted with a note that the check was only that.
pub(crate) fn admit(topo: &Topology, f: &Footprint) -> Result<()> {
    let Some(room) = room(topo, f.nodes) else {
        return Ok(());
    };
    let unknown = unknown_free_nodes(topo, f.nodes);
    if f.bytes <= limit(room.bytes) {
        note_unknown_free(&unknown);
        return Ok(());
    }
    let free_word = if unknown.is_empty() {
        "free"
    } else {
        "at most free (the kernel gives no MemFree)"
    };
    let what = words(&room, f.nodes, free_word);
    Err(usage(format!(
        "{}: {} of memory is more than {SHARE_PCT}% of {what}; {}",
        f.what,
        bytes(f.bytes),
        f.remedy
    )))
}

/// Where `nodes` lie, for a message: "node 0", "nodes 0-1", "this machine".
fn place(nodes: Option<&[usize]>) -> String {
    match nodes {
        Some([one]) => format!("node {one}"),
        Some(ids) => format!(
            "nodes {}",
            crate::ids::NodeSet::from_ids(ids.iter().copied())
        ),
        None => "this machine".to_string(),
    }
}

fn words(room: &Room, nodes: Option<&[usize]>, free_word: &str) -> String {
    let place = place(nodes);
    match room.limit {
        Some(l) => format!("the {} (less than {place} has {free_word})", l.describe()),
        None => format!("the {} {free_word} on {place}", bytes(room.bytes)),
    }
}

/// What `nodes` (or every usable memory node) may map, in words, naming
/// the cgroup or resource limit where that, not the free memory, is what
/// is short: "the 62 MiB free on node 0", "the 62 MiB left under memory
/// cgroup /x (memory.max) of 64 MiB (less than node 0 has free)". A
/// message that scales a size down or refuses one says this, so that the
/// reader looks where the shortage is.
pub(crate) fn room_words(topo: &Topology, nodes: Option<&[usize]>) -> String {
    match room(topo, nodes) {
        Some(r) => words(&r, nodes, "free"),
        None => format!("the free memory of {}", place(nodes)),
    }
}

/// One line per node and process: its free memory was not checked, only
/// its total.
fn note_unknown_free(nodes: &[usize]) {
    static NOTED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
    let mut noted = NOTED.lock().unwrap_or_else(|e| e.into_inner());
    for &n in nodes {
        if !noted.contains(&n) {
            noted.push(n);
            crate::console::err(&format!(
                "numabench: note: node {n}'s meminfo gives no MemFree, so its free memory is unknown; memory admission checked only its total memory\n"
            ));
        }
    }
}

/// Admits `size` bytes on each of `nodes` in turn (a probe that maps one
/// node's buffer at a time): the node with the least free memory decides.
pub(crate) fn admit_each(
    topo: &Topology,
    size: u64,
    nodes: &[usize],
    what: &str,
    remedy: &str,
) -> Result<()> {
    for &n in nodes {
        admit(
            topo,
            &Footprint {
                bytes: size,
                nodes: Some(&[n]),
                what: what.to_string(),
                remedy,
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo_with_free(free: &[u64]) -> Topology {
        let mut topo = crate::topology::fixture("two-node");
        topo.nodes.truncate(free.len());
        for (node, &f) in topo.nodes.iter_mut().zip(free) {
            node.mem_free_bytes = Some(f);
            node.has_memory = true;
        }
        topo.allowed.nodes = crate::ids::NodeSet::from_ids(0..free.len());
        topo.system_mem_free_bytes = Some(free.iter().sum());
        topo.system_mem_total_bytes = None;
        topo
    }

    fn on(topo: &Topology, size: u64, nodes: Option<&[usize]>) -> Result<()> {
        admit(
            topo,
            &Footprint {
                bytes: size,
                nodes,
                what: "--size X".into(),
                remedy: "give a smaller --size",
            },
        )
    }

    #[test]
    fn the_largest_size_that_fits_is_admitted_and_one_byte_more_refused() {
        let topo = topo_with_free(&[1000 << 20, 3000 << 20]);
        let top = limit(1000 << 20);
        assert!(on(&topo, top, Some(&[0])).is_ok());
        let e = on(&topo, top + 1, Some(&[0])).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let text = e.to_string();
        assert!(text.contains("1000 MiB free on node 0"), "{text}");
        assert!(text.contains("900 MiB"), "{text}");
        assert!(text.contains("give a smaller --size"), "{text}");
    }

    #[test]
    fn nodes_together_add_their_free_memory() {
        let topo = topo_with_free(&[1000 << 20, 3000 << 20]);
        assert!(on(&topo, limit(4000 << 20), None).is_ok());
        assert!(on(&topo, limit(4000 << 20) + 1, None).is_err());
        assert!(on(&topo, limit(4000 << 20), Some(&[0, 1])).is_ok());
        let e = on(&topo, 1 << 40, Some(&[0, 1])).unwrap_err();
        assert!(e.to_string().contains("free on nodes 0-1"), "{e}");
    }

    #[test]
    fn each_node_must_hold_a_per_node_buffer() {
        let topo = topo_with_free(&[1000 << 20, 3000 << 20]);
        let e = admit_each(&topo, 2000 << 20, &[0, 1], "--size 2G", "fix it").unwrap_err();
        assert!(e.to_string().contains("node 0"), "{e}");
        assert!(admit_each(&topo, 2000 << 20, &[1], "--size 2G", "fix it").is_ok());
    }

    #[test]
    fn a_cgroup_limit_below_the_free_memory_decides_and_is_named() {
        let mut topo = topo_with_free(&[1000 << 20, 3000 << 20]);
        topo.memory_limit = Some(MemoryLimit {
            headroom_bytes: 500 << 20,
            limit_bytes: 512 << 20,
            source: "memory cgroup /job (memory.max)".into(),
        });
        assert!(on(&topo, limit(500 << 20), Some(&[1])).is_ok());
        let e = on(&topo, limit(500 << 20) + 1, None).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let text = e.to_string();
        assert!(
            text.contains("500 MiB left under memory cgroup /job"),
            "{text}"
        );
        assert!(text.contains("of 512 MiB"), "{text}");
        // Sizing sees the same ceiling on every node.
        assert_eq!(topo.node_free_bytes(1), 500 << 20);
        assert_eq!(topo.node_free_unlimited(1), 3000 << 20);
        // A limit above the free memory changes nothing.
        topo.memory_limit.as_mut().unwrap().headroom_bytes = 1 << 40;
        let e = on(&topo, 1 << 39, Some(&[0])).unwrap_err();
        assert!(e.to_string().contains("free on node 0"), "{e}");
    }

    #[test]
    fn room_words_name_the_limit_only_where_it_is_short() {
        let mut topo = topo_with_free(&[1000 << 20, 3000 << 20]);
        assert_eq!(room_words(&topo, Some(&[1])), "the 2.9 GiB free on node 1");
        assert_eq!(room_words(&topo, None), "the 3.9 GiB free on this machine");
        topo.memory_limit = Some(MemoryLimit {
            headroom_bytes: 62 << 20,
            limit_bytes: 64 << 20,
            source: "memory cgroup /x (memory.limit_in_bytes)".into(),
        });
        let w = room_words(&topo, Some(&[0]));
        assert!(
            w.starts_with(
                "the 62 MiB left under memory cgroup /x (memory.limit_in_bytes) of 64 MiB"
            ),
            "{w}"
        );
        assert!(!w.contains("1000 MiB"), "{w}");
    }

    #[test]
    fn unknown_free_memory_admits() {
        let mut topo = topo_with_free(&[0]);
        topo.system_mem_free_bytes = None;
        assert!(on(&topo, u64::MAX, None).is_ok());
    }

    #[test]
    fn a_node_without_memfree_is_bounded_by_its_total_not_taken_as_empty() {
        let mut topo = topo_with_free(&[1000 << 20, 3000 << 20]);
        topo.nodes[0].mem_free_bytes = None;
        topo.nodes[0].mem_total_bytes = 2000 << 20;
        topo.system_mem_free_bytes = None;
        assert_eq!(unknown_free_nodes(&topo, Some(&[0, 1])), [0]);
        assert!(unknown_free_nodes(&topo, Some(&[1])).is_empty());
        // Not refused as though nothing were free...
        assert!(on(&topo, 1500 << 20, Some(&[0])).is_ok());
        // ...nor more than the node holds admitted.
        let e = on(&topo, 1900 << 20, Some(&[0])).unwrap_err();
        assert!(e.to_string().contains("at most free"), "{e}");
        // The system's free memory, where less, is the tighter bound.
        topo.system_mem_free_bytes = Some(1000 << 20);
        assert!(on(&topo, 1000 << 20, Some(&[0])).is_err());
        assert!(on(&topo, limit(1000 << 20), Some(&[0])).is_ok());
    }

    #[test]
    fn huge_free_figures_do_not_overflow() {
        assert_eq!(limit(u64::MAX), (u128::from(u64::MAX) * 9 / 10) as u64);
    }
}
