//! The parallel-chases probe in the jobs over several probes: its part in
//! `run`, its summary line and its single chase for the repeat check.

use super::MlpView;
use crate::topology::Topology;
use crate::probes::part::{
    chase_bytes, chase_cell_secs, local_remote, mib, node_pairs, time_limit, words,
};
use crate::results::Record;
use crate::results::names::{mlp, probe};
use crate::view::{Part, Probe, Profile};

const PART: Part = Part {
    profile: Profile::Default,
    order: 1,
    args: |topo| {
        let bytes = chase_bytes(topo);
        let limit = time_limit(10, chase_cell_secs(4, bytes), node_pairs(topo));
        words(&[
            probe::MLP,
            "-s",
            &mib(bytes),
            "--pairs",
            "all",
            "-t",
            &limit,
            "--json",
        ])
    },
    counted_as: None,
    in_process: None,
};

impl Probe for MlpView {
    fn part(&self) -> Option<Part> {
        Some(PART)
    }

    /// Misses in flight at the most chases measured, local and remote.
    fn summary_line(&self, _topo: &Topology, recs: &[&Record]) -> Option<String> {
        let most = recs
            .iter()
            .filter_map(|r| r.u64_param(mlp::param::CHASES))
            .max()?;
        let top: Vec<&Record> = recs
            .iter()
            .copied()
            .filter(|r| r.u64_param(mlp::param::CHASES) == Some(most))
            .collect();
        Some(format!(
            "  parallel chases:    {most} in one thread: {} per access; in flight {}\n",
            local_remote(&top, mlp::metric::NS_PER_ACCESS, "ns", 1),
            local_remote(&top, mlp::metric::CONCURRENCY, "", 1)
        ))
    }

    /// One chase alone is an idle chase; several at once are not.
    fn idle_chase(&self, r: &Record) -> Option<f64> {
        (r.u64_param(mlp::param::CHASES) == Some(1))
            .then(|| r.value(mlp::metric::NS_PER_ACCESS))
            .flatten()
    }

    fn idle_chase_source(&self) -> &'static str {
        "the single parallel chase"
    }
}
