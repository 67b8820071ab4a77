//! The AutoNUMA benchmarks as a workload part of `run --profile full`.

use super::AutonumaView;
use crate::probes::part::words;
use crate::results::names::probe;
use crate::view::{Part, Probe, Profile};

const PART: Part = Part {
    profile: Profile::Full,
    order: 1,
    chases: false,
    args: |_| words(&[probe::AUTONUMA, "all", "--json"]),
    counted_as: Some("AutoNUMA"),
};

impl Probe for AutonumaView {
    fn part(&self) -> Option<Part> {
        Some(PART)
    }
}
