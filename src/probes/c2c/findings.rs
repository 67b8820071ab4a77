//! The core-to-core probe's findings: noisy pairs, and classes whose pairs
//! differ so much that one figure does not stand for the class.

use crate::analysis::checks::{IMPLAUSIBLE_RATIO, noise};
use crate::view::Finding;
use crate::results::Record;
use crate::results::names::c2c::param as c2c;
use crate::results::names::{metric, param};

fn pair(r: &Record) -> String {
    format!(
        "{} {}-{}",
        r.str_param(param::VARIANT).unwrap_or("?"),
        r.u64_param(param::CPU).unwrap_or(0),
        r.u64_param(c2c::PEER_CPU).unwrap_or(0)
    )
}

/// A variant and a class of pairs.
type Class<'a> = (&'a str, &'a str);
/// A pair's record and its latency.
type Pair<'a> = (&'a Record, f64);

pub(super) fn findings(records: &[&Record]) -> Vec<Finding> {
    let mut out: Vec<Finding> = noise("core to core", records, pair).into_iter().collect();
    // (variant, class) -> the fastest and slowest pair, in record order.
    let mut classes: Vec<(Class, Pair, Pair)> = Vec::new();
    for r in records {
        let (Some(v), Some(c), Some(ns)) = (
            r.str_param(param::VARIANT),
            r.str_param(c2c::CLASS),
            r.value(metric::LATENCY_NS),
        ) else {
            continue;
        };
        match classes.iter_mut().find(|(k, _, _)| *k == (v, c)) {
            Some((_, lo, hi)) => {
                if ns < lo.1 {
                    *lo = (r, ns);
                }
                if ns > hi.1 {
                    *hi = (r, ns);
                }
            }
            None => classes.push(((v, c), (r, ns), (r, ns))),
        }
    }
    for ((v, c), lo, hi) in classes {
        if lo.1 > 0.0 && hi.1 / lo.1 > IMPLAUSIBLE_RATIO {
            out.push(Finding::flag(format!(
                "core to core, {v} {c}: pairs of one class range from {:.1} ns ({}) to {:.1} ns ({}), {:.1}x: the class's figure stands for none of them (a busy or moved CPU, or a topology the classes do not see)",
                lo.1,
                pair(lo.0),
                hi.1,
                pair(hi.0),
                hi.1 / lo.1
            )));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Better;
    use crate::results::names::probe;

    fn at(cpu: u64, peer: u64, ns: f64, cv: f64) -> Record {
        Record::new(probe::C2C, "cas")
            .param(param::VARIANT, "cas")
            .param(param::CPU, cpu)
            .param(c2c::PEER_CPU, peer)
            .param(c2c::CLASS, "same-l3")
            .metric(metric::LATENCY_NS, ns, "ns", Better::Lower)
            .metric(metric::CV_PCT, cv, "%", Better::Lower)
    }

    #[test]
    fn a_class_with_far_apart_pairs_is_flagged() {
        let (a, b) = (at(0, 1, 20.0, 1.0), at(0, 2, 50.0, 1.0));
        let f = findings(&[&a, &b]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].text.starts_with("core to core, cas same-l3: pairs of one class range from 20.0 ns (cas 0-1) to 50.0 ns (cas 0-2), 2.5x"),
            "{}",
            f[0].text
        );
        let close = at(0, 2, 25.0, 1.0);
        assert!(findings(&[&a, &close]).is_empty());
    }

    #[test]
    fn a_noisy_pair_is_flagged() {
        let (a, b) = (at(0, 1, 20.0, 10.3), at(0, 2, 21.0, 1.0));
        let f = findings(&[&a, &b]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].text.contains("up to 10.3% (cas 0-1)"), "{}", f[0].text);
    }
}
