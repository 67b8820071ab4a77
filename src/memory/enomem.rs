//! What a failed map of a buffer is told: the limit that most likely
//! refused it first.

use crate::placement::MemPolicy;
use crate::placement::sys;
use crate::topology::MemoryLimit;

/// MemFree of a node, in bytes.
fn node_free_bytes(node: usize) -> Option<u64> {
    let text = std::fs::read_to_string(format!("{}/node{node}/meminfo", sys::NODE_SYSFS)).ok()?;
    let line = text.lines().find(|l| l.contains("MemFree:"))?;
    let kb: u64 = line.split_whitespace().rev().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The hint for ENOMEM from mmap of a buffer placed by `policy`.
pub(super) fn hint(policy: Option<&MemPolicy>) -> String {
    let mut facts = Vec::new();
    if let Some(avail) = mem_available() {
        facts.push(format!("MemAvailable is {}", crate::units::bytes(avail)));
    }
    if let Some(nodes) = policy.and_then(MemPolicy::target_nodes) {
        for n in nodes.iter() {
            if let Some(free) = node_free_bytes(n) {
                facts.push(format!("node {n} has {} free", crate::units::bytes(free)));
            }
        }
    }
    let overcommit = std::fs::read_to_string("/proc/sys/vm/overcommit_memory");
    if let Ok(mode) = overcommit.as_deref().map(str::trim) {
        facts.push(format!("vm.overcommit_memory={mode}"));
    }
    text(crate::topology::process_memory_limit().as_ref(), &facts)
}

/// A process limit (`ulimit -v`, a memory cgroup) refuses a map while the
/// machine has plenty free, so it is named first: blaming MemAvailable then
/// sends the user the wrong way.
fn text(limit: Option<&MemoryLimit>, facts: &[String]) -> String {
    match limit {
        Some(l) => format!(
            "not enough memory to map the buffer under the process's memory limit: {} ({})",
            l.describe(),
            facts.join(", ")
        ),
        None => format!("not enough memory to map the buffer ({})", facts.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_limit_is_named_before_the_machine() {
        let facts = ["MemAvailable is 22 GiB".to_string()];
        let l = MemoryLimit {
            headroom_bytes: 10 << 20,
            limit_bytes: 300 << 20,
            source: "RLIMIT_AS (ulimit -v)".into(),
        };
        let t = text(Some(&l), &facts);
        let (limit_at, avail_at) = (
            t.find("RLIMIT_AS").unwrap(),
            t.find("MemAvailable").unwrap(),
        );
        assert!(limit_at < avail_at, "{t}");
        assert!(
            t.contains("10 MiB left under RLIMIT_AS (ulimit -v) of 300 MiB"),
            "{t}"
        );
        assert!(!text(None, &facts).contains("limit"));
    }
}
