//! The three tests, sized for this machine: which memory regions, how big,
//! where each starts and how often the workers touch it; and the two
//! baselines that bracket each test (everything bound to the fast node,
//! everything bound to the slow one).

use super::kernel::Tiers;
use crate::error::usage;
use crate::memory::admission;
use crate::topology::Topology;
use anyhow::Result;

pub(crate) const MIB: u64 = 1 << 20;

/// The largest default hot set: a few seconds of promotion at the
/// kernel's default scan rate (256 MiB per scan period).
const HOT_MAX: u64 = 1 << 30;

/// One test of the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    /// A hot set and a cold set start on the slow node; the fast node has
    /// room for the hot set.
    Promotion,
    /// A cold set fills the fast node; a hot set starts on the slow node:
    /// promoting it needs the cold set demoted first.
    Demotion,
    /// A hot and a warm set, together larger than the fast node's free
    /// memory, start on the slow node.
    Oversize,
}

impl Test {
    pub const ALL: [Test; 3] = [Test::Promotion, Test::Demotion, Test::Oversize];

    pub fn name(self) -> &'static str {
        match self {
            Test::Promotion => "promotion",
            Test::Demotion => "demotion",
            Test::Oversize => "oversize",
        }
    }

    pub fn from_name(s: &str) -> Option<Test> {
        Test::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// How often the workers touch a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Heat {
    /// Every pass.
    Hot,
    /// Every [`WARM_EVERY`]th pass.
    Warm,
    /// Never after it was written.
    Cold,
}

/// Passes between two touches of a warm region.
pub(crate) const WARM_EVERY: u64 = 4;

impl Heat {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Heat::Hot => "hot",
            Heat::Warm => "warm",
            Heat::Cold => "cold",
        }
    }

    /// Whether pass `p` touches a region of this heat.
    pub(crate) fn touched(self, p: u64) -> bool {
        match self {
            Heat::Hot => true,
            Heat::Warm => p.is_multiple_of(WARM_EVERY),
            Heat::Cold => false,
        }
    }
}

/// A region of memory and where its pages are written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Region {
    pub heat: Heat,
    pub bytes: u64,
    /// The node its pages are written on (bound there while written).
    pub node: usize,
}

/// How a run places its memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bind {
    /// The test: the binding is lifted once the pages are written, so
    /// whatever moves them is the kernel.
    Free,
    /// Baseline: everything bound to the fast node for the whole run.
    Fast,
    /// Baseline: everything bound to the slow node for the whole run.
    Slow,
}

/// What the user asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Asked {
    pub hot_mib: Option<u64>,
    pub warm_mib: Option<u64>,
    pub cold_mib: Option<u64>,
    pub secs: u32,
    pub threads: usize,
}

/// One run, ready.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub test: Test,
    pub bind: Bind,
    pub regions: Vec<Region>,
    pub secs: f64,
    pub threads: usize,
    /// Scaling and settings the reader should know about.
    pub notes: Vec<String>,
}

impl Plan {
    /// The region the 90% mark follows: the hottest.
    pub(crate) fn hottest(&self) -> Option<usize> {
        (0..self.regions.len()).min_by_key(|&i| self.regions[i].heat)
    }
}

fn mib(b: u64) -> String {
    format!("{} MiB", b / MIB)
}

/// Sizes for `test` on this machine: each region as asked, else from the
/// fast node's free memory (F) and the slow node's (S).
fn regions(test: Test, t: &Tiers, topo: &Topology, a: &Asked) -> Vec<Region> {
    let f = admission::limit(topo.node_free_bytes(t.fast));
    let s = admission::limit(topo.node_free_bytes(t.slow));
    let round = |b: u64| (b / MIB).max(1) * MIB;
    let given = |v: Option<u64>, d: u64| v.map_or(round(d), |m| m * MIB);
    let hot = given(a.hot_mib, (f / 4).min(s / 4).min(HOT_MAX));
    let region = |heat, bytes, node| Region { heat, bytes, node };
    match test {
        Test::Promotion => vec![
            region(Heat::Hot, hot, t.slow),
            region(Heat::Cold, given(a.cold_mib, hot), t.slow),
        ],
        // The cold set leaves the fast node a quarter of the hot set free.
        Test::Demotion => vec![
            region(
                Heat::Cold,
                given(a.cold_mib, f.saturating_sub(hot / 4)),
                t.fast,
            ),
            region(Heat::Hot, hot, t.slow),
        ],
        // Together 1.5 times the fast node's room; the hot part fits.
        Test::Oversize => {
            let total = (f / 2 * 3).min(s);
            vec![
                region(Heat::Hot, given(a.hot_mib, total * 2 / 5), t.slow),
                region(Heat::Warm, given(a.warm_mib, total * 3 / 5), t.slow),
            ]
        }
    }
}

/// Refuses (exit 2) regions a node cannot hold where they are written.
fn admit(topo: &Topology, test: &str, regions: &[Region], remedy: &str) -> Result<()> {
    let mut nodes: Vec<usize> = regions.iter().map(|r| r.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    for n in nodes {
        let bytes = regions
            .iter()
            .filter(|r| r.node == n)
            .map(|r| r.bytes)
            .sum();
        admission::admit(
            topo,
            &admission::Footprint {
                bytes,
                nodes: Some(&[n]),
                what: format!("tier {test}"),
                remedy,
            },
        )?;
    }
    Ok(())
}

/// The test `test` as it will run here, or exit 2 where its memory does
/// not fit.
pub(crate) fn plan(test: Test, t: &Tiers, topo: &Topology, a: &Asked) -> Result<Plan> {
    let regions = regions(test, t, topo, a);
    if regions.iter().any(|r| r.bytes == 0) {
        return Err(usage(format!(
            "tier {}: node {} or {} has too little free memory for the test",
            test.name(),
            t.fast,
            t.slow
        )));
    }
    admit(
        topo,
        test.name(),
        &regions,
        "give smaller --hot/--warm/--cold",
    )?;
    let mut notes = Vec::new();
    let on_fast = admission::limit(topo.node_free_bytes(t.fast));
    let accessed: u64 = regions
        .iter()
        .filter(|r| r.heat != Heat::Cold)
        .map(|r| r.bytes)
        .sum();
    let cold_fast: u64 = regions
        .iter()
        .filter(|r| r.heat == Heat::Cold && r.node == t.fast)
        .map(|r| r.bytes)
        .sum();
    let room = on_fast.saturating_sub(cold_fast);
    notes.push(format!(
        "the fast node {} has room for {} beside what the test writes there; the touched regions hold {}",
        t.fast,
        mib(room),
        mib(accessed)
    ));
    Ok(Plan {
        test,
        bind: Bind::Free,
        regions,
        secs: f64::from(a.secs),
        threads: a.threads,
        notes,
    })
}

/// Seconds a baseline runs: a third of the test, at least 2 s; it gives a
/// rate, which needs no longer.
pub(crate) fn baseline_secs(secs: f64) -> f64 {
    (secs / 3.0).max(2.0).min(secs)
}

/// The two baselines of `p`: its touched regions bound to the fast node,
/// then to the slow node, scaled down together to what the node can hold.
pub(crate) fn baselines(p: &Plan, t: &Tiers, topo: &Topology) -> Vec<Plan> {
    [(Bind::Fast, t.fast), (Bind::Slow, t.slow)]
        .into_iter()
        .map(|(bind, node)| {
            let mut regions: Vec<Region> = p
                .regions
                .iter()
                .filter(|r| r.heat != Heat::Cold)
                .map(|r| Region { node, ..r.clone() })
                .collect();
            let total: u64 = regions.iter().map(|r| r.bytes).sum();
            let room = admission::limit(topo.node_free_bytes(node));
            let mut notes = Vec::new();
            if total > room && total > 0 {
                for r in &mut regions {
                    r.bytes = ((r.bytes as u128 * room as u128 / total as u128) as u64 / MIB).max(1) * MIB;
                }
                notes.push(format!(
                    "touched regions scaled from {} to {} to fit node {node}: the rate (GB/s) is what is compared",
                    mib(total),
                    mib(regions.iter().map(|r| r.bytes).sum())
                ));
            }
            Plan {
                test: p.test,
                bind,
                regions,
                secs: baseline_secs(p.secs),
                threads: p.threads,
                notes,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiers() -> (Topology, Tiers) {
        let topo = crate::topology::fixture("cxl-memonly");
        let t = super::super::kernel::find(&topo).unwrap();
        (topo, t)
    }

    fn asked() -> Asked {
        Asked {
            secs: 9,
            threads: 1,
            ..Default::default()
        }
    }

    #[test]
    fn promotion_starts_everything_slow_and_fits_the_fast_node() {
        let (topo, t) = tiers();
        let p = plan(Test::Promotion, &t, &topo, &asked()).unwrap();
        assert!(p.regions.iter().all(|r| r.node == t.slow));
        let hot = &p.regions[p.hottest().unwrap()];
        assert_eq!(hot.heat, Heat::Hot);
        assert!(hot.bytes <= admission::limit(topo.node_free_bytes(t.fast)));
        assert!(hot.bytes <= HOT_MAX && hot.bytes.is_multiple_of(MIB));
    }

    #[test]
    fn demotion_fills_the_fast_node_with_cold_memory() {
        let (topo, t) = tiers();
        let p = plan(Test::Demotion, &t, &topo, &asked()).unwrap();
        let cold = p.regions.iter().find(|r| r.heat == Heat::Cold).unwrap();
        let hot = p.regions.iter().find(|r| r.heat == Heat::Hot).unwrap();
        assert_eq!((cold.node, hot.node), (t.fast, t.slow));
        let room = admission::limit(topo.node_free_bytes(t.fast));
        // What the cold set leaves free is less than the hot set.
        assert!(room - cold.bytes < hot.bytes, "{p:?}");
    }

    #[test]
    fn oversize_is_larger_than_the_fast_node() {
        let (topo, t) = tiers();
        let p = plan(Test::Oversize, &t, &topo, &asked()).unwrap();
        let total: u64 = p.regions.iter().map(|r| r.bytes).sum();
        let room = admission::limit(topo.node_free_bytes(t.fast));
        assert!(total > room || total == admission::limit(topo.node_free_bytes(t.slow)));
        assert!(p.regions.iter().any(|r| r.heat == Heat::Warm));
    }

    #[test]
    fn too_much_memory_is_refused_before_anything_is_mapped() {
        let (topo, t) = tiers();
        let a = Asked {
            hot_mib: Some(1 << 30),
            ..asked()
        };
        let e = plan(Test::Promotion, &t, &topo, &a).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
    }

    #[test]
    fn baselines_bind_the_touched_regions_to_one_node() {
        let (topo, t) = tiers();
        let p = plan(Test::Oversize, &t, &topo, &asked()).unwrap();
        let b = baselines(&p, &t, &topo);
        assert_eq!(b.len(), 2);
        assert!(b[0].regions.iter().all(|r| r.node == t.fast));
        assert!(b[1].regions.iter().all(|r| r.node == t.slow));
        let fast: u64 = b[0].regions.iter().map(|r| r.bytes).sum();
        assert!(fast <= admission::limit(topo.node_free_bytes(t.fast)));
        assert_eq!(b[0].secs, 3.0);
        let p = plan(Test::Promotion, &t, &topo, &asked()).unwrap();
        assert!(
            baselines(&p, &t, &topo)[0]
                .regions
                .iter()
                .all(|r| r.heat != Heat::Cold)
        );
    }
}
