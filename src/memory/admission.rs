//! Memory admission: every command that maps memory works out its footprint
//! from the options and compares it with the free memory of the nodes it
//! lands on before anything is mapped. On a server someone cares about, a
//! refused run is cheap; the OOM killer choosing a victim is not.

use crate::error::usage;
use crate::topology::Topology;
use crate::units::bytes;
use anyhow::Result;

/// Share of the free memory a run may map. The rest is left for the page
/// cache, the kernel and whatever else runs on the machine.
pub const SHARE_PCT: u64 = 90;

/// What a run wants to map, and where.
pub struct Footprint<'a> {
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

/// Free memory of `nodes` (or of every usable memory node), when the kernel
/// says; a machine without NUMA information falls back to /proc/meminfo.
pub fn free_bytes(topo: &Topology, nodes: Option<&[usize]>) -> Option<u64> {
    let free: u64 = match nodes {
        Some(ids) => ids.iter().map(|&n| topo.node_free_bytes(n)).sum(),
        None => topo
            .usable_memory_nodes()
            .iter()
            .map(|n| topo.node_free_bytes(n))
            .sum(),
    };
    if free > 0 {
        Some(free)
    } else {
        topo.system_mem_free_bytes.filter(|&f| f > 0)
    }
}

/// The most a run may map where `free` bytes are free.
pub fn limit(free: u64) -> u64 {
    (u128::from(free) * u128::from(SHARE_PCT) / 100) as u64
}

/// Refuses (exit 2) a footprint above [`SHARE_PCT`] of the free memory,
/// naming both figures. Admits when the kernel does not say what is free:
/// there is nothing honest to compare with.
pub fn admit(topo: &Topology, f: &Footprint) -> Result<()> {
    let Some(free) = free_bytes(topo, f.nodes) else {
        return Ok(());
    };
    if f.bytes <= limit(free) {
        return Ok(());
    }
    let place = match f.nodes {
        Some([one]) => format!("node {one}"),
        Some(ids) => format!(
            "nodes {}",
            crate::ids::NodeSet::from_ids(ids.iter().copied())
        ),
        None => "this machine".to_string(),
    };
    Err(usage(format!(
        "{}: {} of memory is more than {SHARE_PCT}% of the {} free on {place}; {}",
        f.what,
        bytes(f.bytes),
        bytes(free),
        f.remedy
    )))
}

/// Admits `size` bytes on each of `nodes` in turn (a probe that maps one
/// node's buffer at a time): the node with the least free memory decides.
pub fn admit_each(
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
            node.mem_free_bytes = f;
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
    fn unknown_free_memory_admits() {
        let mut topo = topo_with_free(&[0]);
        topo.system_mem_free_bytes = None;
        assert!(on(&topo, u64::MAX, None).is_ok());
    }

    #[test]
    fn huge_free_figures_do_not_overflow() {
        assert_eq!(limit(u64::MAX), (u128::from(u64::MAX) * 9 / 10) as u64);
    }
}
