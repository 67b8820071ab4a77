//! The loaded-latency probe's findings: noisy points, and a curve that
//! never loaded (its full-load point injected nothing, or less than its
//! lightest load), whose knee and latency under load then mean nothing.

use crate::analysis::checks::noise;
use crate::view::Finding;
use crate::results::Record;
use crate::results::names::loaded::{kind, param as ld};
use crate::results::names::metric;

fn pair(r: &Record) -> String {
    r.node_pair()
        .map_or("?".into(), |(c, m)| format!("{c}->{m}"))
}

pub(super) fn findings(records: &[&Record]) -> Vec<Finding> {
    let points: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.str_param(ld::KIND) == Some(kind::POINT))
        .collect();
    // A point's name says its pair and its load ("point 0->0 idle").
    let mut out: Vec<Finding> = noise("loaded latency", &points, |r| r.name.clone())
        .into_iter()
        .collect();
    let mut pairs: Vec<String> = Vec::new();
    for r in &points {
        if !pairs.contains(&pair(r)) {
            pairs.push(pair(r));
        }
    }
    for p in pairs {
        let loaded: Vec<f64> = points
            .iter()
            .filter(|r| pair(r) == p && r.u64_param(ld::INJECTORS).is_some_and(|n| n > 0))
            .filter_map(|r| r.value(metric::BANDWIDTH_MB_S))
            .collect();
        let (Some(&first), Some(&full)) = (loaded.first(), loaded.last()) else {
            continue;
        };
        if full <= 0.0 || (loaded.len() > 1 && full < first) {
            out.push(Finding::flag(format!(
                "loaded latency {p}: the full-load point injected {:.1} GB/s, {} the lightest load's {:.1} GB/s: the curve never loaded the memory (too few CPUs for the injectors, or the injectors were starved), so its knee and latency under load mean nothing",
                full / 1000.0,
                if full <= 0.0 && first <= 0.0 { "as did" } else { "below" },
                first / 1000.0
            )));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Better;
    use crate::results::names::{param, probe};

    fn point(name: &str, injectors: u64, mb_s: f64) -> Record {
        Record::new(probe::LOADED, name)
            .param(ld::KIND, kind::POINT)
            .param(ld::INJECTORS, injectors)
            .param(param::CPU_NODE, 0)
            .param(param::MEM_NODE, 0)
            .metric(metric::BANDWIDTH_MB_S, mb_s, "MB/s", Better::Higher)
            .metric(metric::CV_PCT, 1.0, "%", Better::Lower)
    }

    #[test]
    fn a_curve_whose_full_load_injected_nothing_is_flagged() {
        let idle = point("point 0->0 idle", 0, 0.0);
        let light = point("20000ns", 1, 200.0);
        let full = point("0ns", 1, 0.0);
        let f = findings(&[&idle, &light, &full]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].flag);
        assert!(
            f[0].text.starts_with("loaded latency 0->0: the full-load point injected 0.0 GB/s, below the lightest load's 0.2 GB/s: the curve never loaded"),
            "{}",
            f[0].text
        );
        let good = point("0ns", 1, 31_000.0);
        assert!(findings(&[&idle, &light, &good]).is_empty());
    }

    #[test]
    fn a_noisy_point_is_flagged() {
        let idle = point("point 0->0 idle", 0, 0.0)
            .metric(metric::CV_PCT, 225.0, "%", Better::Lower);
        let full = point("0ns", 1, 31_000.0);
        let f = findings(&[&idle, &full]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].text.contains("up to 225.0% (point 0->0 idle)"),
            "{}",
            f[0].text
        );
    }
}
