//! Memory policies: which nodes a thread's or a range's pages come from.
//!
//! A policy is written as `mode[:nodes]`, the same text on the command line,
//! in results and in messages: `default`, `local`, `preferred:1`,
//! `preferred-many:0-1`, `bind:0-1`, `interleave:0,2`,
//! `weighted-interleave:0-3`.

use super::sys::{self, PlacementError};
use crate::ids::NodeSet;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::io;
use std::path::Path;
use std::str::FromStr;

/// Where new pages are allocated.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum MemPolicy {
    /// Fall back to the thread's policy (for a range) or to local allocation
    /// (for a thread).
    Default,
    /// The node of the CPU that faults the page in.
    Local,
    /// This node first, any other when it is full.
    Preferred(usize),
    /// These nodes first, any other when they are full (Linux 5.15+).
    PreferredMany(NodeSet),
    /// Only these nodes; allocation fails (or reclaims) when they are full.
    Bind(NodeSet),
    /// Round-robin over these nodes, page by page.
    Interleave(NodeSet),
    /// Round-robin weighted by
    /// `/sys/kernel/mm/mempolicy/weighted_interleave/node<N>` (Linux 6.9+).
    WeightedInterleave(NodeSet),
}

/// Why a policy string was rejected; the reason names the rule broken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid memory policy '{input}': {reason}")]
pub(crate) struct PolicyParseError {
    pub input: String,
    pub reason: String,
}

const FORMS: &str = "default, local, preferred:N, preferred-many:LIST, bind:LIST, \
                     interleave:LIST or weighted-interleave:LIST";

impl MemPolicy {
    /// The mode word as written, e.g. `bind`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            MemPolicy::Default => "default",
            MemPolicy::Local => "local",
            MemPolicy::Preferred(_) => "preferred",
            MemPolicy::PreferredMany(_) => "preferred-many",
            MemPolicy::Bind(_) => "bind",
            MemPolicy::Interleave(_) => "interleave",
            MemPolicy::WeightedInterleave(_) => "weighted-interleave",
        }
    }

    /// The kernel's `MPOL_*` mode.
    pub(crate) fn mode(&self) -> i32 {
        match self {
            MemPolicy::Default => sys::MPOL_DEFAULT,
            MemPolicy::Local => sys::MPOL_LOCAL,
            MemPolicy::Preferred(_) => sys::MPOL_PREFERRED,
            MemPolicy::PreferredMany(_) => sys::MPOL_PREFERRED_MANY,
            MemPolicy::Bind(_) => sys::MPOL_BIND,
            MemPolicy::Interleave(_) => sys::MPOL_INTERLEAVE,
            MemPolicy::WeightedInterleave(_) => sys::MPOL_WEIGHTED_INTERLEAVE,
        }
    }

    /// The nodes named by the policy; empty for `default` and `local`.
    pub(crate) fn nodes(&self) -> NodeSet {
        match self {
            MemPolicy::Default | MemPolicy::Local => NodeSet::new(),
            MemPolicy::Preferred(n) => NodeSet::from_ids([*n]),
            MemPolicy::PreferredMany(s)
            | MemPolicy::Bind(s)
            | MemPolicy::Interleave(s)
            | MemPolicy::WeightedInterleave(s) => s.clone(),
        }
    }

    /// The nodes pages should end up on, or `None` when that depends on which
    /// CPU touches them (`default`, `local`).
    pub(crate) fn target_nodes(&self) -> Option<NodeSet> {
        match self {
            MemPolicy::Default | MemPolicy::Local => None,
            other => Some(other.nodes()),
        }
    }

    pub(crate) fn parse(input: &str) -> Result<Self, PolicyParseError> {
        let text = input.trim();
        let fail = |reason: String| PolicyParseError {
            input: text.to_string(),
            reason,
        };
        let (mode, list) = match text.split_once(':') {
            Some((m, l)) => (m.trim(), Some(l.trim())),
            None => (text, None),
        };
        let mode = mode.to_ascii_lowercase();
        let nodes = |name: &str| -> Result<NodeSet, PolicyParseError> {
            let Some(list) = list else {
                return Err(fail(format!(
                    "'{name}' needs a node list, e.g. '{name}:0' or '{name}:0-1'"
                )));
            };
            let set = NodeSet::parse_list(list)
                .map_err(|e| fail(format!("'{name}' takes a node list: {e}")))?;
            if set.is_empty() {
                return Err(fail(format!(
                    "'{name}' needs at least one node, e.g. '{name}:0'"
                )));
            }
            Ok(set)
        };
        match mode.as_str() {
            "default" | "local" => match list {
                None => Ok(if mode == "default" {
                    MemPolicy::Default
                } else {
                    MemPolicy::Local
                }),
                Some(l) => Err(fail(format!(
                    "'{mode}' takes no nodes (got '{l}'); use 'bind:{l}' to keep memory on \
                     those nodes or 'preferred:N' to favour one"
                ))),
            },
            "preferred" => {
                let set = nodes("preferred")?;
                match set.len() {
                    1 => Ok(MemPolicy::Preferred(set.first().unwrap_or(0))),
                    n => {
                        let l = list.unwrap_or_default();
                        Err(fail(format!(
                            "'preferred' takes exactly one node (got {n}); use \
                             'preferred-many:{l}' or 'bind:{l}'"
                        )))
                    }
                }
            }
            "preferred-many" => nodes("preferred-many").map(MemPolicy::PreferredMany),
            "bind" => nodes("bind").map(MemPolicy::Bind),
            "interleave" => nodes("interleave").map(MemPolicy::Interleave),
            "weighted-interleave" => {
                nodes("weighted-interleave").map(MemPolicy::WeightedInterleave)
            }
            "" => Err(fail(format!("the policy is empty; expected {FORMS}"))),
            other => {
                let suggestion = match other {
                    "membind" | "bound" => Some("bind"),
                    "prefer" | "pref" => Some("preferred"),
                    "preferred_many" | "prefer-many" | "prefer_many" => Some("preferred-many"),
                    "interleaved" | "il" => Some("interleave"),
                    "weighted_interleave" | "weighted" | "wil" => Some("weighted-interleave"),
                    "localalloc" | "first-touch" => Some("local"),
                    _ => None,
                };
                let mut reason = format!("unknown mode '{other}'; expected {FORMS}");
                if let Some(s) = suggestion {
                    reason =
                        format!("unknown mode '{other}' (did you mean '{s}'?); expected {FORMS}");
                }
                Err(fail(reason))
            }
        }
    }
}

impl fmt::Display for MemPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemPolicy::Default | MemPolicy::Local => f.write_str(self.name()),
            MemPolicy::Preferred(n) => write!(f, "preferred:{n}"),
            other => write!(f, "{}:{}", other.name(), other.nodes()),
        }
    }
}

impl FromStr for MemPolicy {
    type Err = PolicyParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// Serialized as its text form, which is how people write it.
impl Serialize for MemPolicy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MemPolicy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// How `mbind` treats pages already present in the range.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct MbindFlags {
    /// Fail with EIO when present pages do not follow the policy
    /// (`MPOL_MF_STRICT`).
    pub strict: bool,
    /// Migrate present pages to follow the policy (`MPOL_MF_MOVE`).
    pub move_pages: bool,
}

impl MbindFlags {
    fn bits(self) -> u32 {
        let mut bits = 0;
        if self.strict {
            bits |= sys::MPOL_MF_STRICT;
        }
        if self.move_pages {
            bits |= sys::MPOL_MF_MOVE;
        }
        bits
    }

    fn describe(self) -> Option<String> {
        let names: Vec<&str> = [(self.strict, "strict"), (self.move_pages, "move")]
            .into_iter()
            .filter_map(|(on, name)| on.then_some(name))
            .collect();
        (!names.is_empty()).then(|| names.join("|"))
    }
}

/// Whether this kernel has weighted interleave (Linux 6.9+ exposes its
/// weights in sysfs).
pub(crate) fn weighted_interleave_supported() -> bool {
    Path::new("/sys/kernel/mm/mempolicy/weighted_interleave").is_dir()
}

/// `(major, minor)` of the running kernel, if its release string parses.
fn kernel_version() -> Option<(u32, u32)> {
    let release = sys::kernel_release();
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// What a policy call targets: the calling thread or a range of memory.
#[derive(Clone, Copy)]
enum Target {
    Thread,
    Range {
        addr: usize,
        len: usize,
        flags: MbindFlags,
    },
}

impl Target {
    fn call(self) -> &'static str {
        match self {
            Target::Thread => "set_mempolicy",
            Target::Range { .. } => "mbind",
        }
    }

    fn args(self, policy: &MemPolicy) -> String {
        match self {
            Target::Thread => format!("policy={policy}"),
            Target::Range { len, flags, .. } => {
                let mut s = format!("len={}, policy={policy}", crate::units::bytes(len as u64));
                if let Some(f) = flags.describe() {
                    s.push_str(&format!(", flags={f}"));
                }
                s
            }
        }
    }

    fn invoke(self, policy: &MemPolicy) -> io::Result<()> {
        let nodes = policy.nodes();
        // A kernel without NUMA has node 0 alone, which holds every page: a
        // policy of node 0 or of no node is already what happens. Only
        // mbind's own check of the range is left to make.
        if !sys::kernel_has_numa() && nodes.iter().all(|n| n == 0) {
            return match self {
                Target::Range { addr, .. } if addr % crate::sys::mmap::base_page_size() != 0 => {
                    Err(io::Error::from_raw_os_error(libc::EINVAL))
                }
                _ => Ok(()),
            };
        }
        let mask = if nodes.is_empty() {
            Vec::new()
        } else {
            nodes.to_words(sys::nodemask_words())
        };
        match self {
            Target::Thread => sys::set_mempolicy(policy.mode(), &mask),
            Target::Range { addr, len, flags } => {
                sys::mbind(addr, len, policy.mode(), &mask, flags.bits())
            }
        }
    }
}

fn plural(set: &NodeSet) -> String {
    if set.len() == 1 {
        format!("node {set} is")
    } else {
        format!("nodes {set} are")
    }
}

/// A hint for a failed policy call, read from the machine.
fn hint_for(target: Target, policy: &MemPolicy, err: &io::Error) -> Option<String> {
    let nodes = policy.nodes();
    match err.raw_os_error()? {
        libc::EINVAL => {
            if let Target::Range { addr, .. } = target
                && addr % crate::sys::mmap::base_page_size() != 0
            {
                return Some(format!(
                    "address {addr:#x} is not aligned to the {} page size",
                    crate::units::bytes(crate::sys::mmap::base_page_size() as u64)
                ));
            }
            if matches!(policy, MemPolicy::WeightedInterleave(_))
                && !weighted_interleave_supported()
            {
                return Some(format!(
                    "weighted interleave is not supported by this kernel ({}; Linux 6.9 or \
                     later is needed); use 'interleave:{nodes}'",
                    sys::kernel_release()
                ));
            }
            if matches!(policy, MemPolicy::PreferredMany(_))
                && kernel_version().is_some_and(|v| v < (5, 15))
            {
                return Some(format!(
                    "preferred-many is not supported by this kernel ({}; Linux 5.15 or \
                     later is needed)",
                    sys::kernel_release()
                ));
            }
            let online = sys::online_nodes();
            let offline = nodes.difference(&online);
            if !offline.is_empty() {
                return Some(format!(
                    "{} not online (online nodes: {online})",
                    plural(&offline)
                ));
            }
            let with_memory = sys::nodes_with_memory();
            let memoryless = nodes.difference(&with_memory);
            if !memoryless.is_empty() && nodes.is_subset(&memoryless) {
                return Some(format!(
                    "{} online but without memory (nodes with memory: {with_memory})",
                    plural(&memoryless)
                ));
            }
            if let Some(allowed) = sys::mems_allowed() {
                let outside = nodes.difference(&allowed);
                if !outside.is_empty() && nodes.is_subset(&outside) {
                    return Some(format!(
                        "{} outside this process's cpuset (Mems_allowed_list: {allowed})",
                        plural(&outside)
                    ));
                }
            }
            None
        }
        libc::EPERM => Some(
            "NUMA policy calls are refused; container seccomp profiles allow them only \
             with CAP_SYS_NICE (e.g. docker run --cap-add SYS_NICE)"
                .into(),
        ),
        libc::ENOSYS => Some("this kernel was built without NUMA support".into()),
        libc::ENOMEM => Some(match target {
            Target::Thread => "the kernel could not allocate the policy".into(),
            Target::Range { .. } => {
                "the kernel ran out of memory splitting the mapping, or the process \
                 reached vm.max_map_count mappings"
                    .into()
            }
        }),
        libc::EFAULT => Some("part of the range is not mapped".into()),
        libc::EIO => Some(
            if let Target::Range { flags, .. } = target
                && flags.move_pages
            {
                "some present pages could not be moved (pinned, shared with another \
             process, or the target nodes are full)"
                    .into()
            } else {
                "strict: pages already present are on other nodes; apply the policy before \
             the first touch, or allow moving them"
                    .into()
            },
        ),
        _ => None,
    }
}

/// Checks the policy's nodes before the call: the kernel silently drops
/// offline nodes from a mask that also names an online one, so `bind:0-1`
/// with node 1 offline would quietly mean `bind:0`.
fn check_nodes(target: Target, policy: &MemPolicy) -> Result<(), PlacementError> {
    let online = sys::online_nodes();
    let offline = policy.nodes().difference(&online);
    if offline.is_empty() {
        return Ok(());
    }
    Err(PlacementError::new(
        target.call(),
        target.args(policy),
        io::Error::from_raw_os_error(libc::EINVAL),
    )
    .with_hint(format!(
        "{} not online (online nodes: {online})",
        plural(&offline)
    )))
}

fn apply(target: Target, policy: &MemPolicy) -> Result<MemPolicy, PlacementError> {
    check_nodes(target, policy)?;
    let err = match target.invoke(policy) {
        Ok(()) => return Ok(policy.clone()),
        Err(e) => e,
    };
    // Kernels before 5.15 lack preferred-many; its first node is the closest
    // policy they have, and the caller records what was applied.
    if let MemPolicy::PreferredMany(nodes) = policy
        && err.raw_os_error() == Some(libc::EINVAL)
        && kernel_version().is_none_or(|v| v < (5, 15))
        && let Some(first) = nodes.first()
    {
        let fallback = MemPolicy::Preferred(first);
        if target.invoke(&fallback).is_ok() {
            return Ok(fallback);
        }
    }
    let hint = hint_for(target, policy, &err);
    let e = PlacementError::new(target.call(), target.args(policy), err);
    Err(match hint {
        Some(h) => e.with_hint(h),
        None => e,
    })
}

/// Sets the calling thread's policy (`set_mempolicy`) and returns the policy
/// applied: `preferred-many` becomes `preferred:<first node>` on kernels
/// before 5.15.
pub(crate) fn set_thread_policy(policy: &MemPolicy) -> Result<MemPolicy, PlacementError> {
    apply(Target::Thread, policy)
}

/// Sets the policy of `addr..addr+len` (`mbind`) and returns the policy
/// applied, as [`set_thread_policy`] does. `addr` must be page aligned.
/// Pages not yet touched follow the policy when first faulted in; present
/// pages move only with `flags.move_pages`.
pub(crate) fn bind_range(
    addr: usize,
    len: usize,
    policy: &MemPolicy,
    flags: MbindFlags,
) -> Result<MemPolicy, PlacementError> {
    apply(Target::Range { addr, len, flags }, policy)
}

/// Reads a policy back, growing the mask if the kernel has more nodes than
/// the possible-node file said.
fn query_policy(addr: usize, flags: u32, what: &str) -> Result<MemPolicy, PlacementError> {
    if !sys::kernel_has_numa() {
        return Ok(MemPolicy::Default);
    }
    let mut words = sys::nodemask_words();
    loop {
        let mut mask = vec![0u64; words];
        match sys::get_mempolicy(&mut mask, addr, flags) {
            Ok(mode) => return decode(mode & !sys::MPOL_MODE_FLAGS, &mask, what),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && words < 1024 => words *= 2,
            Err(e) => return Err(PlacementError::new("get_mempolicy", what.to_string(), e)),
        }
    }
}

fn decode(mode: i32, mask: &[u64], what: &str) -> Result<MemPolicy, PlacementError> {
    let nodes = NodeSet::from_words(mask);
    Ok(match mode {
        sys::MPOL_DEFAULT => MemPolicy::Default,
        sys::MPOL_LOCAL => MemPolicy::Local,
        // A preferred policy without nodes is how older kernels report local.
        sys::MPOL_PREFERRED => match nodes.first() {
            Some(n) => MemPolicy::Preferred(n),
            None => MemPolicy::Local,
        },
        sys::MPOL_PREFERRED_MANY => MemPolicy::PreferredMany(nodes),
        sys::MPOL_BIND => MemPolicy::Bind(nodes),
        sys::MPOL_INTERLEAVE => MemPolicy::Interleave(nodes),
        sys::MPOL_WEIGHTED_INTERLEAVE => MemPolicy::WeightedInterleave(nodes),
        other => {
            return Err(PlacementError::new(
                "get_mempolicy",
                what.to_string(),
                io::Error::other(format!("the kernel reported unknown mode {other}")),
            ));
        }
    })
}

/// The calling thread's policy.
pub(crate) fn get_thread_policy() -> Result<MemPolicy, PlacementError> {
    query_policy(0, 0, "thread")
}

/// The policy that governs the page at `addr`: the range's own policy, or
/// `default` when it has none.
#[cfg(test)]
pub(crate) fn range_policy(addr: usize) -> Result<MemPolicy, PlacementError> {
    query_policy(addr, sys::MPOL_F_ADDR, &format!("addr={addr:#x}"))
}

#[cfg(test)]
#[path = "mempolicy_tests.rs"]
mod tests;
