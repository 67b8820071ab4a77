//! Measurements -> records: one record per CPU pair and variant, its
//! samples kept, the median as `latency_ns`, the spread as the
//! interquartile range and CV, the threads' CPUs as its placement.

use super::{Outcome, PROBE, PairResult};
use crate::results::names::c2c::{metric as cm, param as cp};
use crate::results::names::{metric, param};
use crate::results::{Better, Placement, Record};

/// The records of a run, pairs in CPU order within each variant.
pub(crate) fn records(out: &Outcome) -> Vec<Record> {
    let mut results: Vec<&PairResult> = out.results.iter().collect();
    results.sort_by_key(|r| (r.variant, r.pair.a, r.pair.b));
    let mut recs: Vec<Record> = results.iter().map(|r| record(r, out)).collect();
    if let Some(first) = recs.first_mut() {
        if out.plan.sampled {
            first.notes.push(format!(
                "sampled: {} of {} CPU pairs, up to {} per (class, node pair) group, spread over the group's CPUs; the node and class summaries weight each pair by the pairs of its group",
                out.plan.pairs.len(),
                out.plan.total_pairs,
                out.plan.per_group
            ));
        }
        first.notes.extend(out.notes.iter().cloned());
        first.conditions.extend(out.conditions.iter().cloned());
    } else if !out.notes.is_empty() {
        // Nothing measured (the time limit ended the first pair): the
        // notes still say why.
        let mut r = Record::new(PROBE, crate::results::names::run::NOT_COMPLETE);
        r.notes.extend(out.notes.iter().cloned());
        r.conditions.extend(out.conditions.iter().cloned());
        recs.push(r);
    }
    recs
}

/// The `q` quantile of sorted `xs`, linearly interpolated.
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

fn record(r: &PairResult, out: &Outcome) -> Record {
    let p = &r.pair;
    let mut rec = Record::new(PROBE, &format!("{} {}-{}", r.variant.name(), p.a, p.b))
        .param(param::VARIANT, r.variant.name())
        .param(param::CPU, p.a)
        .param(cp::PEER_CPU, p.b)
        .param(param::CPU_NODE, p.node_a)
        .param(cp::PEER_NODE, p.node_b)
        .param(cp::CLASS, p.class.name())
        .param(cp::LINE_HOME, out.line_home.name())
        .param(param::MEM_NODE, r.line_node)
        .param(cp::ITERATIONS, r.iterations)
        .param(cp::SAMPLES, r.samples.len())
        .param(cp::PINNING_VERIFIED, r.verified());
    if out.plan.sampled {
        rec = rec
            .param(cp::SAMPLED, true)
            .param(cp::GROUP_PAIRS, out.plan.group_pairs_of(p));
    }
    let mut sorted = r.samples.clone();
    sorted.sort_by(f64::total_cmp);
    if !sorted.is_empty() {
        let ns = |rec: Record, key: &str, v: f64| rec.metric(key, v, "ns", Better::Lower);
        rec = ns(rec, metric::LATENCY_NS, quantile(&sorted, 0.5));
        rec = ns(rec, cm::LATENCY_MEAN_NS, crate::stats::mean(&sorted));
        rec = ns(rec, cm::LATENCY_MIN_NS, sorted[0]);
        let iqr = quantile(&sorted, 0.75) - quantile(&sorted, 0.25);
        rec = ns(rec, cm::LATENCY_IQR_NS, iqr);
        rec = rec.metric(
            metric::CV_PCT,
            crate::stats::cv_pct(&sorted),
            "%",
            Better::Lower,
        );
        rec.samples
            .insert(metric::LATENCY_NS.into(), r.samples.clone());
    }
    let mut seen: Vec<usize> = r.seen_a.iter().chain(&r.seen_b).copied().collect();
    seen.sort_unstable();
    seen.dedup();
    let pages = r.line_pages.as_ref();
    rec.placement = Some(Placement {
        cpus_seen: seen,
        pages_by_node: pages
            .map(|p| {
                p.pages_by_node
                    .iter()
                    .map(|(n, k)| (n.to_string(), *k))
                    .collect()
            })
            .unwrap_or_default(),
        on_target_pct: pages.and_then(|p| p.on_target_pct),
        huge_pct: 0.0,
    });
    if let (Some(node), Some(pct)) = (r.line_node, pages.and_then(|p| p.on_target_pct))
        && pct < 100.0
    {
        rec.notes.push(format!(
            "the lines' memory is {pct:.0}% on node {node}, where it was bound"
        ));
    }
    if let Some(why) = &r.line_unchecked {
        rec.notes.push(format!(
            "where the lines' pages are was not looked up: {why}"
        ));
    }
    if let Some(f) = &r.failure {
        rec.notes.push(format!("not measured: {f}"));
    } else if !r.verified() {
        rec.notes.push(format!(
            "pinning not verified: the threads were seen on CPUs {:?} and {:?}, meant for {} and {}",
            r.seen_a, r.seen_b, p.a, p.b
        ));
    }
    rec
}

#[cfg(test)]
mod tests {
    use super::super::plan::{Pair, PairClass, Plan};
    use super::super::{Outcome, PairResult, Variant};
    use super::*;

    pub(super) fn outcome(sampled: bool) -> Outcome {
        let pair = |a, b, na, nb, class| Pair {
            a,
            b,
            node_a: Some(na),
            node_b: Some(nb),
            class,
        };
        let pairs = vec![
            pair(0, 1, 0, 0, PairClass::SameL3),
            pair(0, 2, 0, 1, PairClass::Remote),
        ];
        let result = |p: Pair, base: f64| PairResult {
            pair: p,
            variant: Variant::Cas,
            samples: vec![base + 2.0, base, base + 1.0, base + 40.0],
            iterations: 1000,
            seen_a: vec![p.a, p.a],
            seen_b: vec![p.b, p.b],
            failure: None,
            line_node: p.node_a,
            line_pages: None,
            line_unchecked: None,
        };
        Outcome {
            results: vec![result(pairs[1], 100.0), result(pairs[0], 30.0)],
            plan: Plan {
                pairs,
                total_pairs: if sampled { 10 } else { 2 },
                sampled,
                per_group: 4,
                group_pairs: Default::default(),
            },
            notes: Vec::new(),
            conditions: Vec::new(),
            failed: None,
            line_home: super::super::LineHome::Cpu,
        }
    }

    #[test]
    fn a_record_holds_median_spread_and_pinning() {
        let recs = records(&outcome(false));
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].name, "cas 0-1", "sorted by pair");
        let m = |k: &str| recs[0].metrics[k].value;
        assert_eq!(m(metric::LATENCY_NS), 31.5);
        assert_eq!(m(cm::LATENCY_MIN_NS), 30.0);
        assert_eq!(m(cm::LATENCY_MEAN_NS), 40.75);
        // Quartiles 30.75 and 41.5.
        assert_eq!(m(cm::LATENCY_IQR_NS), 10.75);
        assert_eq!(recs[0].params[cp::PINNING_VERIFIED], true);
        assert_eq!(recs[0].placement.as_ref().unwrap().cpus_seen, [0, 1]);
        assert_eq!(recs[0].samples[metric::LATENCY_NS].len(), 4);
        assert!(recs[0].notes.is_empty() && !recs[0].has_param(cp::SAMPLED));
    }

    #[test]
    fn a_run_its_time_limit_cut_carries_the_limit_on_a_record() {
        let topo = crate::topology::fixture("two-node");
        let cfg = crate::probes::c2c::C2cConfig {
            variants: vec![Variant::Cas],
            cpus: topo.allowed.cpus.iter().collect(),
            iterations: 50,
            samples: 5,
            full_up_to: 64,
            per_group: 4,
            time_limit: Some(std::time::Duration::ZERO),
            line_home: super::super::LineHome::Cpu,
        };
        let out = crate::probes::c2c::run(&topo, &cfg, &mut |_| {});
        assert!(out.results.is_empty());
        let limit = crate::results::Condition::CutByTimeLimit { limit_s: 0.0 };
        assert_eq!(out.conditions, std::slice::from_ref(&limit));
        // Nothing measured: the record that says why carries it.
        let recs = records(&out);
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].conditions, std::slice::from_ref(&limit));
        assert!(recs[0].notes[0].starts_with("time limit reached: 0 of"));
        // Pairs measured: the first of them carries it.
        let mut o = outcome(false);
        o.notes = out.notes;
        o.conditions = out.conditions;
        assert_eq!(records(&o)[0].conditions, [limit]);
    }

    #[test]
    fn sampling_and_failures_are_said() {
        let mut o = outcome(true);
        o.results[0].samples.clear();
        o.results[0].failure = Some("CPU 2: refused".into());
        let recs = records(&o);
        assert!(recs[0].notes[0].starts_with("sampled: 2 of 10 CPU pairs"));
        assert_eq!(recs[1].params[cp::SAMPLED], true);
        assert_eq!(recs[1].params[cp::PINNING_VERIFIED], false);
        assert!(recs[1].metrics.is_empty());
        assert_eq!(recs[1].notes, ["not measured: CPU 2: refused"]);
        // Pages that could not be looked up are said.
        let mut o = outcome(false);
        o.results[1].line_unchecked = Some("move_pages: refused".into());
        let recs = records(&o);
        assert_eq!(
            recs[0].notes,
            ["where the lines' pages are was not looked up: move_pages: refused"]
        );
    }

    #[test]
    fn quantiles_interpolate() {
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
        assert_eq!(quantile(&[5.0], 0.25), 5.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}
