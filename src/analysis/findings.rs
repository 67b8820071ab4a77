//! What a results document found, in a few sentences: the figures a reader
//! looks for first (local against worst remote, classes, % of the peak,
//! whether the cores are equivalent) and anything that makes a figure
//! doubtful (unverified placement, noisy latency, firmware that ranks the
//! nodes otherwise, a partial run). The report opens with them.

use super::atlas::{Atlas, Grid};
use super::model::PeakSource;
use super::placement;
use crate::results::names::matrix::{kind, param as mx};
use crate::results::names::probe;
use crate::results::{Document, Record};
use crate::view::Probe;

/// A placement verified below this share of pages is flagged.
const VERIFIED_PCT: f64 = 95.0;
use super::checks::{NOISY_CV_PCT, ratio};
pub(crate) use crate::view::Finding;

/// The findings of `doc`, the plain ones first, then the flags; the probes
/// of `registry` say which of their records are idle chases to compare.
pub(crate) fn findings(doc: &Document, registry: &[&dyn Probe]) -> Vec<Finding> {
    let mut out = Vec::new();
    let atlas = Atlas::from_records(&doc.records);
    if !atlas.is_empty() {
        out.extend(matrix_findings(doc, &atlas));
    }
    out.extend(per_core_finding(&doc.records));
    out.extend(repeat_finding(&doc.records, registry));
    for p in registry {
        let own: Vec<&Record> = doc
            .records
            .iter()
            .filter(|r| r.probe == p.probe())
            .collect();
        if !own.is_empty() {
            out.extend(p.findings(doc, &own));
        }
    }
    out.extend(super::part_findings::part_findings(&doc.records));
    out.extend(host_findings(doc));
    if !doc.complete {
        out.push(Finding::flag(
            "the run did not finish: every figure here is partial".into(),
        ));
    }
    out.sort_by_key(|f| f.flag);
    out
}

/// `(min, max)` of a grid's local (or remote) cells.
fn span(g: &Grid, local: bool) -> Option<(f64, f64)> {
    let v = g
        .values
        .iter()
        .filter(|((c, m), _)| (c == m) == local)
        .map(|(_, v)| *v);
    let lo = v.clone().reduce(f64::min)?;
    Some((lo, v.reduce(f64::max)?))
}

/// `100 x a / b` where finite.
fn pct(a: f64, b: f64) -> Option<f64> {
    ratio(a, b).map(|x| 100.0 * x)
}

fn matrix_findings(doc: &Document, a: &Atlas) -> Vec<Finding> {
    let mut out = Vec::new();
    let one_node = a.cpu_nodes.len() <= 1 && a.mem_nodes.len() <= 1;
    let local_bw = span(&a.single, true);
    let local_lat = span(&a.latency, true);
    if one_node {
        let bw = local_bw.map_or("-".into(), |b| format!("{:.0} MB/s", b.1));
        let lat = local_lat.map_or("-".into(), |l| format!("{:.1} ns", l.0));
        out.push(Finding::info(format!(
            "one NUMA node: local single-thread bandwidth {bw}, idle latency with page walks {lat} ({} chase{}); with no remote memory there is no remote penalty, no second class and no placement to advise on (a machine with two or more nodes, or scripts/numa-vm for behaviour, shows them)",
            a.latency_pattern(),
            a.latency_buffer()
        )));
    } else {
        if let (Some(l), Some(r)) = (local_bw, span(&a.single, false))
            && let Some(x) = ratio(l.1, r.0)
        {
            out.push(Finding::info(format!(
                "single-thread bandwidth: local {:.0} MB/s at best, worst remote {:.0} MB/s: remote memory is up to {x:.2}x slower",
                l.1, r.0
            )));
        }
        if let (Some(l), Some(r)) = (local_lat, span(&a.latency, false))
            && let Some(x) = ratio(r.1, l.0)
        {
            out.push(Finding::info(format!(
                "idle latency with page walks ({} chase{}): local {:.1} ns at best, worst remote {:.1} ns ({x:.2}x)",
                a.latency_pattern(),
                a.latency_buffer(),
                l.0,
                r.1
            )));
        }
        let (_, system) = placement::system_classes(a);
        let rows: Vec<_> = a
            .cpu_nodes
            .iter()
            .map(|&c| placement::row_classes(a, c))
            .collect();
        let per_row = rows
            .iter()
            .map(|rc| rc.classes.classes.len())
            .max()
            .unwrap_or(0);
        out.push(Finding::info(format!(
            "{} bandwidth class(es) system-wide, at most {per_row} seen from one CPU node",
            system.classes.len()
        )));
        let topo = &doc.host.topology;
        let disagreements: Vec<String> = rows
            .iter()
            .flat_map(|rc| {
                placement::slit_disagreements(topo, rc)
                    .into_iter()
                    .chain(placement::hmat_disagreements(topo, rc))
            })
            .collect();
        out.extend(firmware_findings(&disagreements));
    }
    out.extend(peak_finding(a));
    out.extend(doubtful_cells(a));
    out
}

/// Where the firmware's distances rank the nodes otherwise than the
/// measured classes: each on its own line while there are few; past that,
/// one line with the count and the first, since the matrix's classes list
/// every one and a summary of many nodes must stay readable.
fn firmware_findings(disagreements: &[String]) -> Vec<Finding> {
    const LISTED: usize = 2;
    if disagreements.len() <= LISTED {
        return disagreements
            .iter()
            .map(|d| Finding::flag(format!("firmware and measurement disagree: {d}")))
            .collect();
    }
    vec![Finding::flag(format!(
        "firmware and measurement disagree in {} places, e.g. {}; the matrix's bandwidth classes list each",
        disagreements.len(),
        disagreements[0]
    ))]
}

/// The best cells as a share of Gamma, where Gamma is known.
fn peak_finding(a: &Atlas) -> Option<Finding> {
    let peak = a
        .peak
        .as_ref()
        .filter(|p| p.source != PeakSource::MeasuredLocal)?;
    let best = a.single.values.values().copied().reduce(f64::max)?;
    let mut text = format!(
        "best single-thread bandwidth is {:.0}% of Gamma ({:.0} MB/s)",
        pct(best, peak.mb_s)?,
        peak.mb_s
    );
    if let Some(s) = a.saturated.values.values().copied().reduce(f64::max)
        && let Some(p) = pct(s, peak.mb_s)
    {
        text.push_str(&format!(", saturated {p:.0}%"));
    }
    Some(Finding::info(text))
}

fn cells(g: &Grid, pick: impl Fn(f64) -> bool) -> Vec<String> {
    g.values
        .iter()
        .filter(|(_, v)| pick(**v))
        .map(|((c, m), _)| format!("{c}->{m}"))
        .collect()
}

/// Cells whose placement was not verified, or whose latency is noisy.
fn doubtful_cells(a: &Atlas) -> Vec<Finding> {
    let mut out = Vec::new();
    let unverified = cells(&a.verified, |p| p < VERIFIED_PCT);
    if !unverified.is_empty() {
        out.push(Finding::flag(format!(
            "placement below {VERIFIED_PCT:.0}% verified on cell(s) {}: their memory was partly elsewhere",
            unverified.join(", ")
        )));
    }
    let noisy = cells(&a.latency_cv, |cv| cv > NOISY_CV_PCT);
    if !noisy.is_empty() {
        out.push(Finding::flag(format!(
            "latency CV above {NOISY_CV_PCT:.0}% on cell(s) {}: repeat on a quieter machine",
            noisy.join(", ")
        )));
    }
    out
}

/// The widest disagreement between two measurements of one chase: then no
/// single latency of the document stands for the machine.
fn repeat_finding(records: &[Record], registry: &[&dyn Probe]) -> Option<Finding> {
    let all = super::repeats::latency_disagreements(records, registry);
    let d = all.first()?;
    let more = match all.len() - 1 {
        0 => String::new(),
        n => format!(" (and {n} more chase(s) of this run)"),
    };
    Some(Finding::flag(format!(
        "the same {}, read {:.1} ns in {} and {:.1} ns in {}, {:.0}% apart{more}: memory latency on this machine changed between the two measurements (other work loading the memory, on this machine or, under a hypervisor, on its host); no single latency here stands for the machine: repeat the run when it is quiet",
        d.what,
        d.low.1,
        super::repeats::source(&d.low.0, registry),
        d.high.1,
        super::repeats::source(&d.high.0, registry),
        100.0 * (d.ratio() - 1.0)
    )))
}

fn per_core_finding(records: &[Record]) -> Option<Finding> {
    let s = records
        .iter()
        .find(|r| r.probe == probe::MATRIX && r.name.starts_with(kind::PER_CORE_SUMMARY))?;
    let equivalent = s.bool_param(mx::EQUIVALENT)?;
    Some(if equivalent {
        Finding::info(
            "the cores of the node measured are equivalent: one core stands for its node".into(),
        )
    } else {
        Finding::flag("the cores of the node measured are not equivalent: which core runs a task changes its bandwidth".into())
    })
}

/// Kernel settings that change what the figures mean.
fn host_findings(doc: &Document) -> Vec<Finding> {
    let h = &doc.host;
    let mut out = Vec::new();
    if let Some(thp) = &h.thp.enabled {
        out.push(Finding::info(format!(
            "transparent huge pages: {thp} (a program that does not ask for them gets {} pages)",
            if thp == "always" { "huge" } else { "base" }
        )));
    }
    match h.numa_balancing {
        Some(0) => out.push(Finding::info(
            "NUMA balancing is off: the kernel moves no memory toward the tasks".into(),
        )),
        Some(n) => out.push(Finding::info(format!(
            "NUMA balancing is on (mode {n}): memory may move during long runs"
        ))),
        None => {}
    }
    for d in h.topology.damon.iter().filter(|d| d.on) {
        out.push(if d.moves_memory() {
            Finding::flag(format!(
                "DAMON ({}) is running with {}: it {}, so memory a test leaves idle for a while can leave its node or RAM mid-run; for measurements stop it ({})",
                d.name,
                d.actions.join(", "),
                damon_effect(d),
                d.stop_command()
            ))
        } else {
            Finding::info(format!(
                "DAMON ({}) is watching memory accesses; none of its schemes moves memory",
                d.name
            ))
        });
    }
    if !h.topology.numa_sysfs {
        out.push(Finding::info(
            "this kernel exposes no NUMA information (no /sys/devices/system/node), as one built without NUMA does: all memory is shown as one node, node 0; where the kernel lacks the NUMA calls too, a placement check can only see that pages are resident, which on one node means on node 0".to_string(),
        ));
    }
    if let Some(vm) = &h.topology.virtual_machine {
        out.push(Finding::info(format!(
            "this kernel runs in a virtual machine under {vm}: its CPUs, caches and nodes are what the host declares, and the host decides where the virtual CPUs run (as SMT siblings of one core, on one die or on several) and may move them; multi-thread bandwidth and core-to-core figures follow that placement, so repeat them before comparing runs"
        )));
    }
    out
}

/// What a DAMON worker's memory-moving actions do, in words.
fn damon_effect(d: &crate::topology::Damon) -> String {
    let has = |a: &str| d.actions.iter().any(|x| x == a);
    let mut effects = Vec::new();
    if has("pageout") {
        effects.push("pages out memory it finds idle");
    }
    if has("migrate_hot") || has("migrate_cold") {
        effects.push("moves pages it finds hot or cold to another node");
    }
    effects.join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::REGISTRY;
    use crate::results::{Better, Placement};
    use crate::topology::fixture;

    fn cell(kind: &str, c: usize, m: usize, metric: &str, v: f64) -> Record {
        Record::new("matrix", &format!("{kind} {c}->{m}"))
            .param("kind", kind)
            .param("cpu_node", c)
            .param("mem_node", m)
            .metric(metric, v, "x", Better::Higher)
    }

    fn two_nodes() -> Document {
        let mut d = Document::new(&fixture("two-node"));
        for (c, m, bw, lat) in [
            (0, 0, 10_000.0, 100.0),
            (0, 1, 5_000.0, 180.0),
            (1, 0, 4_000.0, 200.0),
            (1, 1, 9_000.0, 110.0),
        ] {
            d.records
                .push(cell("bandwidth_1t", c, m, "bandwidth_mb_s", bw));
            d.records.push(cell("latency", c, m, "latency_ns", lat));
        }
        d.complete = true;
        d
    }

    fn texts(f: &[Finding]) -> Vec<&str> {
        f.iter().map(|f| f.text.as_str()).collect()
    }

    #[test]
    fn local_against_worst_remote() {
        let f = findings(&two_nodes(), REGISTRY);
        let t = texts(&f);
        assert!(
            t.iter().any(|t| {
                t.contains(
            "local 10000 MB/s at best, worst remote 4000 MB/s: remote memory is up to 2.50x slower"
        )
            }),
            "{t:?}"
        );
        assert!(
            t.iter()
                .any(|t| t.contains("local 100.0 ns at best, worst remote 200.0 ns (2.00x)")),
            "{t:?}"
        );
        // 10000 and 9000 are 10% apart: two local classes system-wide.
        assert!(
            t.iter().any(
                |t| t == &"4 bandwidth class(es) system-wide, at most 2 seen from one CPU node"
            ),
            "{t:?}"
        );
        assert!(!t.iter().any(|t| t.contains("did not finish")), "{t:?}");
        // No Gamma known: no % of peak.
        assert!(!t.iter().any(|t| t.contains("of Gamma")), "{t:?}");
    }

    #[test]
    fn doubtful_figures_are_flagged_after_the_plain_ones() {
        let mut d = two_nodes();
        d.records[2].placement = Some(Placement {
            on_target_pct: Some(80.0),
            ..Default::default()
        });
        d.records.push(cell("latency", 1, 0, "cv_pct", 0.0).metric(
            "cv_pct",
            9.0,
            "%",
            Better::Lower,
        ));
        d.complete = false;
        let f = findings(&d, REGISTRY);
        let flags: Vec<&str> = f
            .iter()
            .filter(|f| f.flag)
            .map(|f| f.text.as_str())
            .collect();
        assert!(
            flags
                .iter()
                .any(|t| t.contains("95% verified on cell(s) 0->1")),
            "{flags:?}"
        );
        assert!(
            flags
                .iter()
                .any(|t| t.contains("CV above 5% on cell(s) 1->0")),
            "{flags:?}"
        );
        assert!(
            flags.iter().any(|t| t.contains("did not finish")),
            "{flags:?}"
        );
        let first_flag = f.iter().position(|f| f.flag).unwrap();
        assert!(f[..first_flag].iter().all(|f| !f.flag));
        assert!(f[first_flag..].iter().all(|f| f.flag));
    }

    #[test]
    fn firmware_that_ranks_nodes_otherwise_is_flagged() {
        // From node 0 the remote node measures twice the local one, where the
        // SLIT calls the local node nearer.
        let mut d = two_nodes();
        d.records[0]
            .metrics
            .get_mut("bandwidth_mb_s")
            .unwrap()
            .value = 2_500.0;
        let f = findings(&d, REGISTRY);
        assert!(
            f.iter()
                .any(|f| f.flag && f.text.starts_with("firmware and measurement disagree: ")),
            "{f:?}"
        );
        assert!(
            !findings(&two_nodes(), REGISTRY)
                .iter()
                .any(|f| f.text.contains("disagree"))
        );
    }

    #[test]
    fn many_firmware_disagreements_are_one_finding_with_their_count() {
        let few: Vec<String> = vec!["from node 0: a".into(), "from node 1: b".into()];
        let f = firmware_findings(&few);
        assert_eq!(f.len(), 2);
        assert!(f.iter().all(|f| f.flag));
        assert_eq!(
            f[1].text,
            "firmware and measurement disagree: from node 1: b"
        );
        let many: Vec<String> = (0..13).map(|i| format!("from node {i}: x")).collect();
        let f = firmware_findings(&many);
        assert_eq!(f.len(), 1);
        assert!(f[0].flag);
        assert!(
            f[0].text.starts_with(
                "firmware and measurement disagree in 13 places, e.g. from node 0: x;"
            ),
            "{}",
            f[0].text
        );
        assert!(firmware_findings(&[]).is_empty());
    }

    #[test]
    fn one_node_says_what_cannot_be_measured() {
        let mut d = Document::new(&fixture("two-node"));
        d.records
            .push(cell("bandwidth_1t", 0, 0, "bandwidth_mb_s", 18_000.0));
        let t: Vec<String> = findings(&d, REGISTRY).into_iter().map(|f| f.text).collect();
        assert!(
            t[0].starts_with("one NUMA node: local single-thread bandwidth 18000 MB/s"),
            "{t:?}"
        );
        assert!(t[0].contains("no remote penalty"), "{t:?}");
    }

    #[test]
    fn gamma_known_gives_the_share_of_the_peak() {
        let mut d = two_nodes();
        d.records
            .push(Record::new("matrix", "peak").param("kind", "peak").param(
                "peak",
                serde_json::to_value(crate::analysis::model::Peak::given(20_000.0)).unwrap(),
            ));
        let t: Vec<String> = findings(&d, REGISTRY).into_iter().map(|f| f.text).collect();
        assert!(
            t.iter()
                .any(|t| t == "best single-thread bandwidth is 50% of Gamma (20000 MB/s)"),
            "{t:?}"
        );
    }

    #[test]
    fn damon_moving_memory_is_flagged_with_how_to_stop_it() {
        use crate::topology::Damon;
        let damon = |name: &str, on: bool, actions: &[&str]| Damon {
            name: name.into(),
            on,
            operations: vec!["paddr".into()],
            actions: actions.iter().map(|a| a.to_string()).collect(),
        };
        let mut d = two_nodes();
        d.host.topology.damon = vec![
            damon("kdamond 0", true, &["pageout"]),
            damon("kdamond 1", false, &["migrate_cold"]),
            damon("damon_lru_sort", true, &["lru_prio", "lru_deprio"]),
            damon("damon_reclaim", true, &["pageout"]),
        ];
        let f = findings(&d, REGISTRY);
        let of = |name: &str| {
            f.iter()
                .filter(|f| f.text.contains(&format!("DAMON ({name})")))
                .collect::<Vec<_>>()
        };
        let k0 = of("kdamond 0");
        assert!(k0.len() == 1 && k0[0].flag, "{f:?}");
        assert!(k0[0].text.contains("pages out memory it finds idle"));
        assert!(
            k0[0]
                .text
                .contains("echo off > /sys/kernel/mm/damon/admin/kdamonds/0/state")
        );
        assert!(of("kdamond 1").is_empty(), "a stopped worker says nothing");
        let lru = of("damon_lru_sort");
        assert!(lru.len() == 1 && !lru[0].flag, "{f:?}");
        let reclaim = of("damon_reclaim");
        assert!(reclaim[0].flag);
        assert!(
            reclaim[0]
                .text
                .contains("echo N > /sys/module/damon_reclaim/parameters/enabled")
        );
        d.host.topology.damon.clear();
        assert!(
            findings(&d, REGISTRY)
                .iter()
                .all(|f| !f.text.contains("DAMON"))
        );
    }

    #[test]
    fn one_chase_measured_twice_far_apart_is_flagged() {
        let mut d = two_nodes();
        let mut again = cell("latency", 0, 0, "latency_ns", 100.0);
        again.probe = "latency".into();
        let agree = |d: &Document| {
            !findings(d, REGISTRY)
                .iter()
                .any(|f| f.flag && f.text.contains("changed between"))
        };
        d.records
            .push(again.clone().param("pattern", "full-random"));
        // The matrix cell has no pattern: not known to be the same chase.
        assert!(agree(&d));
        for r in d.records.iter_mut().filter(|r| r.name == "latency 0->0") {
            r.params.insert("pattern".into(), "full-random".into());
        }
        assert!(agree(&d), "100 ns twice agrees");
        d.records
            .last_mut()
            .unwrap()
            .metrics
            .get_mut("latency_ns")
            .unwrap()
            .value = 140.0;
        let f = findings(&d, REGISTRY);
        let hit = f
            .iter()
            .find(|f| f.text.contains("changed between"))
            .unwrap();
        assert!(hit.flag);
        assert!(
            hit.text.starts_with("the same full-random chase, 0->0, read 100.0 ns in the matrix and 140.0 ns in the latency probe, 40% apart"),
            "{}",
            hit.text
        );
    }

    #[test]
    fn a_kernel_without_numa_is_said_once() {
        let mut d = two_nodes();
        assert!(
            findings(&d, REGISTRY)
                .iter()
                .all(|f| !f.text.contains("no NUMA"))
        );
        d.host.topology.numa_sysfs = false;
        let f = findings(&d, REGISTRY);
        let said: Vec<_> = f
            .iter()
            .filter(|f| f.text.contains("exposes no NUMA information"))
            .collect();
        assert_eq!(said.len(), 1, "{f:?}");
        assert!(said[0].text.contains("resident"));
    }

    #[test]
    fn a_virtual_machine_is_named_with_what_its_host_decides() {
        let mut d = two_nodes();
        d.host.topology.virtual_machine = None;
        assert!(
            findings(&d, REGISTRY)
                .iter()
                .all(|f| !f.text.contains("virtual machine"))
        );
        d.host.topology.virtual_machine = Some("KVM (DMI product_name)".into());
        let f = findings(&d, REGISTRY);
        let vm: Vec<_> = f
            .iter()
            .filter(|f| {
                f.text.starts_with(
                    "this kernel runs in a virtual machine under KVM (DMI product_name):",
                )
            })
            .collect();
        assert_eq!(vm.len(), 1, "{f:?}");
        assert!(!vm[0].flag);
        assert!(vm[0].text.contains("where the virtual CPUs run"));
    }
}
