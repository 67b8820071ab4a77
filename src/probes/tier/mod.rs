//! `numabench tier`: tiered memory, measured the way the AutoNUMA
//! benchmark measures convergence. A hot set starts on a slow (lower-tier)
//! node; does NUMA balancing in tiering mode (`kernel.numa_balancing=2`)
//! promote it to the fast tier, how fast, and how close does the result
//! come to the best placement? Three tests (promotion; demotion of a cold
//! set that fills the fast node; a hot set larger than the fast node), each
//! bracketed by two baselines with everything bound to the fast node (best)
//! and to the slow node (worst).
//!
//! A command of its own rather than an `autonuma` test: the workload is one
//! process whose regions differ in heat, the looks follow each region (not
//! each process), the nodes are a tier pair (not the CPU nodes), and a
//! machine without a lower tier has nothing to run.

pub(crate) mod kernel;
pub(crate) mod plan;
pub(crate) mod records;
pub(crate) mod run;
pub(crate) mod view;

pub(crate) use view::TierView;

use crate::results::{Document, Record};
use crate::topology::Topology;
use anyhow::{Context, Result};
use kernel::Tiers;
use plan::{Asked, Bind, Plan, Test};
use run::Settings;

/// Every run of a command, planned before the first (so a size that does
/// not fit is refused before any work).
pub(crate) struct Job {
    pub tiers: Tiers,
    /// Per test: its baselines (fast, slow) where asked, then the test.
    pub tests: Vec<Vec<Plan>>,
    pub settings: Settings,
}

impl Job {
    /// Exit 2 (one line) where this machine or kernel cannot tier, or a
    /// test's memory does not fit.
    pub(crate) fn new(
        topo: &Topology,
        tests: &[Test],
        asked: &Asked,
        settings: Settings,
        baselines: bool,
    ) -> Result<Job> {
        let tiers = kernel::find(topo)?;
        let mut out = Vec::new();
        for &t in tests {
            let p = plan::plan(t, &tiers, topo, asked)?;
            let mut runs = if baselines {
                plan::baselines(&p, &tiers, topo)
            } else {
                Vec::new()
            };
            runs.push(p);
            out.push(runs);
        }
        Ok(Job {
            tiers,
            tests: out,
            settings,
        })
    }

    /// Runs every test after its baselines; `progress` hears of each run
    /// as it starts. Returns the document and the signal that stopped it.
    pub(crate) fn run(
        &self,
        topo: &Topology,
        progress: &mut dyn FnMut(&str),
    ) -> Result<(Document, Option<i32>)> {
        let mut doc = Document::new(topo);
        for runs in &self.tests {
            let (mut fast, mut slow) = (None, None);
            for p in runs {
                progress(&format!("tier: {} for {:.0} s\n", records::name(p), p.secs));
                let o = run::run(p, &self.tiers.cpus, &self.settings, &mut |_| {})
                    .with_context(|| records::name(p))?;
                let rate = records::gb_s(&o);
                let pos = match (p.bind, fast, slow) {
                    (Bind::Free, Some(f), Some(s)) if o.interrupted.is_none() => {
                        Some(records::position(rate, f, s))
                    }
                    _ => None,
                };
                let r: Record = records::record(p, &o, &self.tiers, &self.settings, pos.as_ref());
                doc.records.push(r);
                if o.interrupted.is_some() {
                    return Ok((doc, o.interrupted));
                }
                match p.bind {
                    Bind::Fast => fast = Some(rate),
                    Bind::Slow => slow = Some(rate),
                    Bind::Free => {}
                }
            }
        }
        Ok((doc, None))
    }
}
