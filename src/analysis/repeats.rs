//! The same measurement taken twice in one document, and far apart. A `run`
//! chases the same buffer more than once: the matrix's idle-latency cell,
//! the latency probe's record of the same pattern, pages and size, the
//! loaded-latency curve's idle point, the single chase of the
//! parallel-chases probe. Seconds apart on a quiet machine they agree
//! within a few percent; where they do not, the machine's memory latency
//! moved between them, and no single figure of the run stands for it.
//! Which records are such chases each probe says (`Probe::idle_chase`).

use super::atlas::{buffer_suffix, chase_label};
use crate::results::Record;
use crate::results::names::param;
use crate::view::Probe;

/// Two figures of one chase further apart than this ratio disagree.
const SPREAD: f64 = 1.15;

/// What makes two latency records the same measurement.
const SAME: [&str; 7] = [
    param::CPU_NODE,
    param::MEM_NODE,
    param::PATTERN,
    param::PAGE_SIZE,
    param::SIZE_BYTES,
    param::WINDOW_BYTES,
    param::STRIDE_BYTES,
];

/// One chase measured more than once with figures `SPREAD` or more apart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Disagreement {
    /// "full-random chase on thp pages, 256 MiB, 0->0".
    pub what: String,
    /// (probe, ns), lowest first.
    pub low: (String, f64),
    pub high: (String, f64),
}

impl Disagreement {
    pub(crate) fn ratio(&self) -> f64 {
        self.high.1 / self.low.1
    }
}

/// Idle-latency chases measured more than once in `records` whose figures
/// disagree, the widest apart first; the probes of `registry` say which of
/// their records are idle chases.
pub(crate) fn latency_disagreements(
    records: &[Record],
    registry: &[&dyn Probe],
) -> Vec<Disagreement> {
    // (what makes them the same, the first record, every (probe, ns)).
    type Group<'a> = (String, &'a Record, Vec<(String, f64)>);
    let mut groups: Vec<Group> = Vec::new();
    for r in records {
        let Some(ns) = idle_latency(r, registry) else {
            continue;
        };
        let key = SAME
            .iter()
            .map(|k| r.param_shown(k).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("|");
        match groups.iter_mut().find(|(k, ..)| *k == key) {
            Some((_, _, figures)) => figures.push((r.probe.clone(), ns)),
            None => groups.push((key, r, vec![(r.probe.clone(), ns)])),
        }
    }
    let mut out: Vec<Disagreement> = groups
        .into_iter()
        .filter_map(|(_, first, mut figures)| {
            figures.sort_by(|a, b| a.1.total_cmp(&b.1));
            let (low, high) = (figures.first()?.clone(), figures.last()?.clone());
            (high.1 >= SPREAD * low.1).then(|| Disagreement {
                what: describe(first),
                low,
                high,
            })
        })
        .collect();
    out.sort_by(|a, b| b.ratio().total_cmp(&a.ratio()));
    out
}

/// The ns per load of a record that is one idle pointer chase with a named
/// pattern on one node pair, as its probe tells it (the matrix's latency
/// cell, the latency probe's record, the loaded-latency curve's idle
/// point, the single chase of the parallel-chases probe). None for
/// anything else (loaded points, several chases, sweeps).
fn idle_latency(r: &Record, registry: &[&dyn Probe]) -> Option<f64> {
    let pattern = r.str_param(param::PATTERN)?;
    let probe = registry.iter().find(|p| p.probe() == r.probe)?;
    let ns = probe.idle_chase(r)?;
    (!pattern.is_empty() && r.has_param(param::CPU_NODE) && ns.is_finite() && ns > 0.0)
        .then_some(ns)
}

/// Where a figure of `probe` came from, in words for a sentence.
pub(crate) fn source<'a>(probe: &'a str, registry: &[&dyn Probe]) -> &'a str {
    registry
        .iter()
        .find(|p| p.probe() == probe)
        .map_or(probe, |p| p.idle_chase_source())
}

/// "full-random chase on thp pages, 256 MiB, 0->0": the chase as the
/// matrix's latency grid names it, then the node pair.
fn describe(r: &Record) -> String {
    let node = |k| r.param_shown(k).unwrap_or_else(|| "?".into());
    let size = r.u64_param(param::SIZE_BYTES);
    format!(
        "{}{}, {}->{}",
        chase_label(r),
        buffer_suffix(size),
        node(param::CPU_NODE),
        node(param::MEM_NODE)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::REGISTRY;
    use crate::results::Better;
    use crate::results::names::matrix::{kind, param as mx};
    use crate::results::names::{loaded, metric, mlp};

    fn chase(probe: &str, c: u32, m: u32, pattern: &str, ns: f64) -> Record {
        let mut r = Record::new(probe, &format!("chase {c}->{m}"))
            .param(param::CPU_NODE, c)
            .param(param::MEM_NODE, m)
            .param(param::PATTERN, pattern)
            .param(param::PAGE_SIZE, "thp")
            .param(param::SIZE_BYTES, 256u64 << 20)
            .metric(metric::LATENCY_NS, ns, "ns", Better::Lower);
        if probe == "matrix" {
            r = r.param(mx::KIND, kind::LATENCY);
        }
        r
    }

    #[test]
    fn the_same_chase_far_apart_is_found_and_described() {
        let records = [
            chase("matrix", 0, 0, "full-random", 139.1),
            chase("latency", 0, 0, "full-random", 193.2),
            chase("latency", 0, 0, "page-local", 147.4),
        ];
        let d = latency_disagreements(&records, REGISTRY);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].what, "full-random chase on thp pages, 256 MiB, 0->0");
        assert_eq!(d[0].low, ("matrix".into(), 139.1));
        assert_eq!(d[0].high, ("latency".into(), 193.2));
        assert!((d[0].ratio() - 193.2 / 139.1).abs() < 1e-9);
    }

    #[test]
    fn figures_that_agree_or_differ_in_what_was_measured_are_not_compared() {
        let mut other_size = chase("latency", 0, 0, "full-random", 300.0);
        other_size
            .params
            .insert(param::SIZE_BYTES.into(), (1u64 << 30).into());
        let records = [
            chase("matrix", 0, 0, "full-random", 150.0),
            chase("latency", 0, 0, "full-random", 160.0),
            // Another pair, another pattern, another size: not the same chase.
            chase("latency", 0, 1, "full-random", 260.0),
            chase("latency", 0, 0, "page-local", 100.0),
            other_size,
            // Not idle chases: a matrix bandwidth cell and a loaded record.
            Record::new("matrix", "triad 0->0")
                .param("kind", "bandwidth_1t")
                .param(param::CPU_NODE, 0)
                .param(param::PATTERN, "full-random")
                .metric(metric::LATENCY_NS, 900.0, "ns", Better::Lower),
            Record::new("loaded", "x")
                .param(param::CPU_NODE, 0)
                .param(param::PATTERN, "full-random")
                .metric(metric::LATENCY_NS, 900.0, "ns", Better::Lower),
        ];
        assert!(latency_disagreements(&records, REGISTRY).is_empty());
    }

    #[test]
    fn the_idle_point_of_a_loaded_curve_and_a_single_parallel_chase_count() {
        let idle = |injectors: u32| {
            chase("loaded", 0, 0, "full-random", 210.7)
                .param(loaded::param::KIND, loaded::kind::POINT)
                .param(loaded::param::INJECTORS, injectors)
        };
        let parallel = |chases: u32, ns: f64| {
            let mut r = chase("mlp", 0, 0, "page-local", 0.0).param(mlp::param::CHASES, chases);
            r.metrics.clear();
            r.metric(mlp::metric::NS_PER_ACCESS, ns, "ns", Better::Lower)
        };
        let records = [
            chase("matrix", 0, 0, "full-random", 139.1),
            idle(0),
            // Loaded points with injectors running are not idle.
            idle(1).metric(metric::LATENCY_NS, 900.0, "ns", Better::Lower),
            chase("latency", 0, 0, "page-local", 147.4),
            parallel(1, 144.0),
            // Eight chases at once are not one idle chase.
            parallel(8, 23.0),
        ];
        let d = latency_disagreements(&records, REGISTRY);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].low, ("matrix".into(), 139.1));
        assert_eq!(d[0].high, ("loaded".into(), 210.7));
    }

    #[test]
    fn each_source_is_named_in_words() {
        assert_eq!(source("matrix", REGISTRY), "the matrix");
        assert_eq!(source("loaded", REGISTRY), "the loaded curve's idle point");
        assert_eq!(source("mlp", REGISTRY), "the single parallel chase");
        assert_eq!(source("other", REGISTRY), "other");
    }

    #[test]
    fn the_widest_disagreement_comes_first() {
        let records = [
            chase("matrix", 0, 0, "full-random", 100.0),
            chase("latency", 0, 0, "full-random", 120.0),
            chase("matrix", 1, 1, "full-random", 100.0),
            chase("latency", 1, 1, "full-random", 200.0),
        ];
        let d = latency_disagreements(&records, REGISTRY);
        assert_eq!(d.len(), 2);
        assert!(d[0].what.ends_with("1->1"), "{d:?}");
        assert!(d[1].what.ends_with("0->0"), "{d:?}");
    }
}
