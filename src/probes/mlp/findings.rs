//! The mlp probe's findings: noisy chase counts.

use crate::analysis::checks::noise;
use crate::view::Finding;
use crate::results::Record;
use crate::results::names::mlp::param;

pub(super) fn findings(records: &[&Record]) -> Vec<Finding> {
    noise("parallel chases (mlp)", records, |r| {
        let pair = r.node_pair().map_or(String::new(), |(c, m)| format!(" {c}->{m}"));
        format!("{} chase(s){pair}", r.u64_param(param::CHASES).unwrap_or(0))
    })
    .into_iter()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Better;
    use crate::results::names::{metric, param as shared, probe};

    fn point(chases: u64, cv: f64) -> Record {
        Record::new(probe::MLP, "mlp")
            .param(param::CHASES, chases)
            .param(shared::CPU_NODE, 0)
            .param(shared::MEM_NODE, 0)
            .metric(metric::CV_PCT, cv, "%", Better::Lower)
    }

    #[test]
    fn a_noisy_chase_count_is_flagged_and_steady_ones_are_not() {
        let f = findings(&[&point(1, 0.5), &point(16, 12.0)]);
        assert_eq!(f.len(), 1);
        assert!(f[0].text.contains("up to 12.0% (16 chase(s) 0->0)"), "{}", f[0].text);
        assert!(findings(&[&point(1, 0.5), &point(16, 4.9)]).is_empty());
    }
}
