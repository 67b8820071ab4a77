//! Checks of user-chosen CPUs, nodes and policies against the topology, and
//! of kernels against this CPU, so a wrong value is reported as bad input
//! naming what is allowed, before any syscall can fail obscurely.

use crate::error::usage;
use crate::ids::{CpuSet, NodeSet};
use crate::kernels::{self, KernelSpec};
use crate::placement::MemPolicy;
use crate::topology::Topology;
use anyhow::Result;

/// The kernel named `name` for `flag`, if it exists and this CPU runs it;
/// when it does not run here, the error lists the kernels that do and that
/// `instead(asked, other)` offers in its place.
pub(crate) fn kernel(
    name: &str,
    flag: &str,
    instead: impl Fn(&KernelSpec, &KernelSpec) -> bool,
) -> Result<&'static KernelSpec> {
    let k = kernels::find(name).ok_or_else(|| {
        usage(format!(
            "{flag} {name}: no such kernel (run 'numabench sweep --list-kernels')"
        ))
    })?;
    if !k.is_available() {
        return Err(usage(format!(
            "{flag} {name}: this CPU cannot run {} code (available: {})",
            k.isa,
            kernels::available()
                .filter(|a| instead(k, a))
                .map(|a| a.name)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(k)
}

/// A node list as a user typed it for `flag` (e.g. `0,2-3`), not empty:
/// an empty list would leave nothing to measure.
pub(crate) fn node_list(text: &str, flag: &str) -> Result<NodeSet> {
    let set = NodeSet::parse_list(text)
        .map_err(|e| usage(format!("{flag} {text}: {e} (write e.g. 0,2-3)")))?;
    if set.is_empty() {
        return Err(usage(format!(
            "{flag} '{text}': the list is empty; name at least one node (e.g. 0,2-3) or leave {flag} out for all"
        )));
    }
    Ok(set)
}

/// [`node_list`] of an option that may be absent.
pub(crate) fn optional_node_list(text: &Option<String>, flag: &str) -> Result<Option<NodeSet>> {
    text.as_deref().map(|t| node_list(t, flag)).transpose()
}

/// A node that exists and that this process may allocate from.
pub(crate) fn memory_node(topo: &Topology, id: usize, flag: &str) -> Result<()> {
    let Some(node) = topo.node(id) else {
        return Err(usage(format!(
            "{flag} {id}: node {id} does not exist (nodes: {})",
            topo.node_ids()
        )));
    };
    if !node.has_memory {
        return Err(usage(format!(
            "{flag} {id}: node {id} has no memory (nodes with memory: {})",
            topo.usable_memory_nodes()
        )));
    }
    if !topo.allowed.nodes.contains(id) {
        return Err(usage(format!(
            "{flag} {id}: node {id} is outside this process's cpuset (allowed nodes: {})",
            topo.allowed.nodes
        )));
    }
    Ok(())
}

/// A node with at least one CPU this process may run on; returns those CPUs.
pub(crate) fn cpu_node(topo: &Topology, id: usize, flag: &str) -> Result<CpuSet> {
    if topo.node(id).is_none() {
        return Err(usage(format!(
            "{flag} {id}: node {id} does not exist (nodes: {})",
            topo.node_ids()
        )));
    }
    let cpus = topo.usable_cpus_of(id);
    if cpus.is_empty() {
        let why = if topo.node(id).is_some_and(|n| n.cpus.is_empty()) {
            "has no CPUs (memory only)"
        } else {
            "has no CPU this process may use (cpuset)"
        };
        return Err(usage(format!(
            "{flag} {id}: node {id} {why} (nodes with usable CPUs: {})",
            topo.usable_cpu_nodes()
        )));
    }
    Ok(cpus)
}

/// A CPU that is online and in this process's cpuset.
pub(crate) fn cpu(topo: &Topology, id: usize, flag: &str) -> Result<()> {
    if !topo.cpus_online.contains(id) {
        return Err(usage(format!(
            "{flag} {id}: CPU {id} is not online (online CPUs: {})",
            topo.cpus_online
        )));
    }
    if !topo.allowed.cpus.contains(id) {
        return Err(usage(format!(
            "{flag} {id}: CPU {id} is outside this process's cpuset (allowed CPUs: {})",
            topo.allowed.cpus
        )));
    }
    Ok(())
}

/// A memory policy as typed for `flag`, checked against the machine.
/// `MODE:all` is numactl's `--interleave=all`: every node with memory this
/// process may use, so a numactl user's line works unchanged.
pub(crate) fn policy(topo: &Topology, text: &str, flag: &str) -> Result<MemPolicy> {
    let expanded = match text.split_once(':') {
        Some((mode, list)) if list.trim().eq_ignore_ascii_case("all") => {
            format!("{mode}:{}", topo.usable_memory_nodes())
        }
        _ => text.to_string(),
    };
    let policy: MemPolicy = expanded.parse().map_err(|e| usage(format!("{flag} {e}")))?;
    policy_nodes(topo, &policy, flag)?;
    Ok(policy)
}

/// The node pairs `--pairs` selects, one vocabulary for every command
/// that takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PairChoice {
    /// Every CPU node with every memory node.
    All,
    /// A CPU node with its nearest (its own, where it has memory) and its
    /// farthest memory node.
    NearFar,
}

/// `--pairs`: `all` or `near-far`; `local-far`, the name mlp once used,
/// is the same selection.
pub(crate) fn pairs(text: &str) -> Result<PairChoice> {
    match text.trim() {
        "all" => Ok(PairChoice::All),
        "near-far" | "local-far" => Ok(PairChoice::NearFar),
        other => Err(usage(format!(
            "--pairs {other}: use all or near-far (local-far is accepted for near-far)"
        ))),
    }
}

/// Every node a policy names must be a usable memory node.
pub(crate) fn policy_nodes(topo: &Topology, policy: &MemPolicy, flag: &str) -> Result<()> {
    let nodes: NodeSet = policy.nodes();
    for id in nodes.iter() {
        memory_node(topo, id, flag)
            .map_err(|e| usage(format!("{flag} {policy}: {}", strip_flag(&e, flag))))?;
    }
    Ok(())
}

fn strip_flag(err: &anyhow::Error, flag: &str) -> String {
    let text = err.to_string();
    match text.strip_prefix(flag) {
        Some(rest) => rest
            .split_once(": ")
            .map_or(text.clone(), |(_, r)| r.to_string()),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture as topo;

    #[test]
    fn nodes_and_cpus_are_checked_against_the_machine() {
        let t = topo("cxl-memonly");
        assert!(memory_node(&t, 2, "--node").is_ok());
        let e = cpu_node(&t, 2, "--cpu-node").unwrap_err().to_string();
        assert!(e.contains("memory only") && e.contains("0-1"), "{e}");
        let e = memory_node(&t, 7, "--node").unwrap_err().to_string();
        assert_eq!(e, "--node 7: node 7 does not exist (nodes: 0-2)");
        let r = topo("cpuset-restricted");
        let e = memory_node(&r, 0, "--node").unwrap_err().to_string();
        assert!(
            e.contains("outside this process's cpuset (allowed nodes: 1)"),
            "{e}"
        );
        let e = cpu(&r, 0, "--cpu").unwrap_err().to_string();
        assert!(e.contains("allowed CPUs: 2-5,10-11"), "{e}");
        assert_eq!(cpu_node(&r, 0, "--cpu-node").unwrap().to_list(), "2-5");
        let e = cpu(&r, 99, "--cpu").unwrap_err().to_string();
        assert!(e.contains("not online (online CPUs: 0-15)"), "{e}");
    }

    #[test]
    fn policies_name_the_bad_node() {
        let t = topo("two-node");
        let p: MemPolicy = "interleave:0-2".parse().unwrap();
        let e = policy_nodes(&t, &p, "--policy").unwrap_err().to_string();
        assert_eq!(
            e,
            "--policy interleave:0-2: node 2 does not exist (nodes: 0-1)"
        );
        assert!(policy_nodes(&t, &"bind:1".parse().unwrap(), "--policy").is_ok());
    }

    #[test]
    fn all_is_every_memory_node_this_process_may_use_as_numactl_means_it() {
        let t = topo("cxl-memonly");
        let p = policy(&t, "interleave:all", "--policy").unwrap();
        assert_eq!(p, "interleave:0-2".parse().unwrap());
        let p = policy(&t, "bind:ALL", "--policy").unwrap();
        assert_eq!(p, "bind:0-2".parse().unwrap());
        // A cpuset leaves only its own nodes in "all".
        let r = topo("cpuset-restricted");
        let p = policy(&r, "interleave:all", "--policy").unwrap();
        assert_eq!(p, "interleave:1".parse().unwrap());
        let e = policy(&t, "interleave:0-5", "--policy").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
        assert!(e.to_string().contains("node 3 does not exist"), "{e}");
    }

    #[test]
    fn one_pair_vocabulary_with_the_old_name_as_an_alias() {
        assert_eq!(pairs("all").unwrap(), PairChoice::All);
        assert_eq!(pairs("near-far").unwrap(), PairChoice::NearFar);
        assert_eq!(pairs("local-far").unwrap(), PairChoice::NearFar);
        let e = pairs("far").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
        assert_eq!(
            e.to_string(),
            "--pairs far: use all or near-far (local-far is accepted for near-far)"
        );
    }
}
