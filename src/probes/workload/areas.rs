//! The data areas of a finished run (global, per process, per thread) and
//! where their pages ended up, as the text and the record both name them.

use super::layout::AreaPlacement;
use super::outcome::RunOutput;
use super::params::Params;
use std::collections::BTreeMap;

/// Which area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AreaKey {
    Global,
    Process(usize),
    Thread(usize),
}

/// Every area whose placement was read, global first.
pub(crate) fn areas(out: &RunOutput) -> Vec<(AreaKey, &AreaPlacement)> {
    let mut v = Vec::new();
    if let Some(g) = &out.global_placement {
        v.push((AreaKey::Global, g));
    }
    for (i, a) in out.process_placement.iter().enumerate() {
        if let Some(a) = a {
            v.push((AreaKey::Process(i), a));
        }
    }
    for (t, a) in out.thread_placement.iter().enumerate() {
        if let Some(a) = a {
            v.push((AreaKey::Thread(t), a));
        }
    }
    v
}

/// The node an area was meant for by `-M`: a thread's own node, a
/// process's first thread's node.
pub(crate) fn intended(p: &Params, area: AreaKey) -> Option<usize> {
    match area {
        AreaKey::Global => None,
        AreaKey::Process(i) => p.node_bind.get(i * p.nr_threads).copied().flatten(),
        AreaKey::Thread(t) => p.node_bind.get(t).copied().flatten(),
    }
}

/// `global`, `process 1`, `thread 1/0`.
pub(crate) fn area_name(p: &Params, k: AreaKey) -> String {
    match k {
        AreaKey::Global => "global".into(),
        AreaKey::Process(i) => format!("process {i}"),
        AreaKey::Thread(t) => format!("thread {}/{}", t / p.nr_threads, t % p.nr_threads),
    }
}

/// `node 0 75%, node 1 25%`: shares of the present checked pages.
pub(crate) fn node_shares(pages_by_node: &BTreeMap<usize, u64>) -> String {
    let present: u64 = pages_by_node.values().sum();
    if present == 0 {
        return "no page present".into();
    }
    pages_by_node
        .iter()
        .map(|(n, c)| format!("node {n} {:.0}%", *c as f64 * 100.0 / present as f64))
        .collect::<Vec<_>>()
        .join(", ")
}
