//! perf's suite as a workload part of `run --profile full`.

use super::MemView;
use crate::probes::part::words;
use crate::results::names::probe;
use crate::view::{Part, Probe, Profile};

const PART: Part = Part {
    profile: Profile::Full,
    order: 0,
    args: |_| words(&[probe::MEM, "--all", "--secs", "5", "--json"]),
    counted_as: Some("perf's suite"),
    in_process: None,
};

impl Probe for MemView {
    fn part(&self) -> Option<Part> {
        Some(PART)
    }
}
