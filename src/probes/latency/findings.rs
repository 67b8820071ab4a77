//! The latency probe's findings: noisy chases.

use crate::analysis::checks::noise;
use crate::view::Finding;
use crate::results::Record;
use crate::results::names::param;

pub(super) fn findings(records: &[&Record]) -> Vec<Finding> {
    noise("latency by pattern", records, |r| {
        let pair = r.node_pair().map_or(String::new(), |(c, m)| format!(" {c}->{m}"));
        format!("{}{pair}", r.str_param(param::PATTERN).unwrap_or("?"))
    })
    .into_iter()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Better;
    use crate::results::names::{metric, probe};

    fn chase(cv: f64) -> Record {
        Record::new(probe::LATENCY, "chase")
            .param(param::PATTERN, "page-local")
            .param(param::CPU_NODE, 0)
            .param(param::MEM_NODE, 1)
            .metric(metric::LATENCY_NS, 120.0, "ns", Better::Lower)
            .metric(metric::CV_PCT, cv, "%", Better::Lower)
    }

    #[test]
    fn a_noisy_chase_is_flagged_and_a_steady_one_is_not() {
        let f = findings(&[&chase(20.0), &chase(1.0)]);
        assert_eq!(f.len(), 1);
        assert!(f[0].flag);
        assert!(
            f[0].text.starts_with("latency by pattern: CV above 5% on 1 of 2 figure(s), up to 20.0% (page-local 0->1)"),
            "{}",
            f[0].text
        );
        assert!(findings(&[&chase(1.0)]).is_empty());
    }
}
