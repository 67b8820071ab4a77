//! The parallel-chases probe in the jobs over several probes: its part in
//! `run`, its summary line and its single chase for the repeat check.

use super::MlpView;
use crate::topology::Topology;
use crate::probes::part::{
    with_chase_cap,
    chase_bytes, chase_cell_secs, chase_plan, local_remote, mib, node_pairs, selection,
    selection_args, time_limit, words,
};
use crate::results::Record;
use crate::results::names::{mlp, probe};
use crate::view::{Part, Probe, Profile, Scope, Trim};

/// The part's config on `topo`, as its command line gives it.
fn config(topo: &Topology, scope: Scope) -> super::MlpConfig {
    let bytes = chase_bytes(topo);
    super::MlpConfig {
        size: bytes,
        pattern: crate::kernels::pattern::Pattern::PageLocal { window: 256 << 10 },
        pages: crate::memory::PageKind::Base,
        counts: counts(scope),
        selection: selection(scope),
        only: None,
        pairs: super::Pairs::All,
        cpu_nodes: None,
        mem_nodes: None,
        time_limit: Some(std::time::Duration::from_secs(limit_s(topo, bytes))),
    }
}

const PART: Part = Part {
    profile: Profile::Default,
    order: 1,
    args: |topo, scope| {
        let bytes = chase_bytes(topo);
        let mut args = words(&[
            probe::MLP,
            "-n",
            &counts(scope)
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(","),
            "-s",
            &mib(bytes),
            "--pairs",
            "all",
            "-t",
            &limit_s(topo, bytes).to_string(),
            "--json",
        ]);
        args.extend(selection_args(selection(scope)));
        args
    },
    counted_as: None,
    in_process: None,
    plan: |topo, scope| with_chase_cap(topo, estimate(topo, &config(topo, scope))),
};

/// The chase counts: 1 to 16 by doublings, or three of them in a run
/// trimmed to its budget.
fn counts(scope: Scope) -> Vec<usize> {
    if scope.trim >= Trim::Brief {
        vec![1, 16]
    } else if scope.trim >= Trim::Repeats {
        vec![1, 4, 16]
    } else {
        vec![1, 2, 4, 8, 16]
    }
}

/// The part's time limit: a guard well past its estimate.
fn limit_s(topo: &Topology, bytes: usize) -> u64 {
    time_limit(10, chase_cell_secs(4, bytes), node_pairs(topo))
        .parse()
        .unwrap_or(10)
}

/// What `mlp` will measure with `cfg`: a buffer per memory node linked
/// once for the most chases, each count sampled from every CPU node.
pub(crate) fn estimate(topo: &Topology, cfg: &super::MlpConfig) -> crate::view::PartPlan {
    let full = cfg.pattern == crate::kernels::pattern::Pattern::FullRandom;
    chase_plan(
        &super::pairs(topo, cfg),
        cfg.size,
        1,
        &[full],
        cfg.counts.len(),
        cfg.time_limit.map(|t| t.as_secs_f64()),
    )
}

impl Probe for MlpView {
    fn findings(
        &self,
        _doc: &crate::results::Document,
        records: &[&Record],
    ) -> Vec<crate::view::Finding> {
        super::findings::findings(records)
    }

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
            "  parallel chases:    overlapped misses, not one load's latency: {most} in one thread: {} per access; in flight {}\n",
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
