//! numa_test as a workload part of `run --profile full`.

use super::SchedView;
use crate::probes::part::words;
use crate::results::names::probe;
use crate::view::{Part, Probe, Profile};

/// One task per allowed CPU; the default size and passes keep the arrays
/// beyond the cache and the tasks busy past the burst at 3 s.
const PART: Part = Part {
    profile: Profile::Full,
    order: 2,
    args: |topo, _| {
        let tasks = topo.allowed.cpus.len().max(2).to_string();
        words(&[probe::SCHED, &tasks, "--json"])
    },
    counted_as: Some("numa_test"),
    in_process: None,
    plan: |topo, _| {
        let tasks = topo.allowed.cpus.len().max(2);
        // One run of the default duration: about 30 s of work and start-up.
        crate::probes::part::workload_plan(format!("one run of {tasks} task(s)"), 1, 30.0)
    },
};

impl Probe for SchedView {
    fn part(&self) -> Option<Part> {
        Some(PART)
    }
}
