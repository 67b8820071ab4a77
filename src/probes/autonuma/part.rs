//! The AutoNUMA benchmarks as a workload part of `run --profile full`.

use super::AutonumaView;
use crate::probes::part::words;
use crate::results::names::probe;
use crate::results::{Document, Record};
use crate::view::{FolderFile, Part, Probe, Profile};

const PART: Part = Part {
    profile: Profile::Full,
    order: 1,
    args: |_| words(&[probe::AUTONUMA, "all", "--json"]),
    counted_as: Some("AutoNUMA"),
    in_process: None,
};

impl Probe for AutonumaView {
    fn part(&self) -> Option<Part> {
        Some(PART)
    }

    /// Each run's memory-over-time series as a CSV of its own.
    fn folder_files(&self, _doc: &Document, records: &[&Record]) -> Vec<(String, FolderFile)> {
        records
            .iter()
            .flat_map(|r| {
                r.series.iter().map(|s| {
                    (
                        format!("autonuma-{}-{}.csv", r.name, s.name),
                        FolderFile::Series(s.clone()),
                    )
                })
            })
            .collect()
    }
}
