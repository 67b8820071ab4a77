//! perf's suite as a workload part of `run --profile full`.

use super::MemView;
use crate::probes::part::words;
use crate::results::names::probe;
use crate::view::{Part, Probe, Profile};

const PART: Part = Part {
    profile: Profile::Full,
    order: 0,
    args: |_, _| words(&[probe::MEM, "--all", "--secs", "5", "--json"]),
    counted_as: Some("perf's suite"),
    in_process: None,
    plan: |_, _| {
        let tests = super::suite::tests().len();
        // Each test works 5 s; its processes' start and memory set-up add
        // about one more.
        crate::probes::part::workload_plan(format!("{tests} test(s) of 5 s"), tests, 6.0)
    },
};

impl Probe for MemView {
    fn part(&self) -> Option<Part> {
        Some(PART)
    }
}
