//! Checks every probe's findings share: noise in its repeats, a figure
//! implausibly far above the one it should not pass. Each returns at most
//! one finding for the records it is given, naming the worst figure, so a
//! probe with many noisy points adds one sentence, not one per point.

use crate::results::Record;
use crate::results::names::metric;
use crate::view::Finding;

/// A figure whose CV (over its repeats) is above this is noisy.
pub(crate) const NOISY_CV_PCT: f64 = 5.0;
/// A write or non-temporal figure more than this times its read figure
/// counts bytes the memory did not move, or was measured wrongly.
pub(crate) const IMPLAUSIBLE_RATIO: f64 = 1.5;

/// One flag when some of `records` have a CV above [`NOISY_CV_PCT`]: how
/// many, and the worst named by `label`.
pub(crate) fn noise(
    what: &str,
    records: &[&Record],
    label: impl Fn(&Record) -> String,
) -> Option<Finding> {
    let with_cv: Vec<(&Record, f64)> = records
        .iter()
        .filter_map(|r| Some((*r, r.value(metric::CV_PCT)?)))
        .collect();
    let noisy: Vec<&(&Record, f64)> = with_cv
        .iter()
        .filter(|(_, cv)| *cv > NOISY_CV_PCT)
        .collect();
    let (worst, cv) = noisy.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(Finding::flag(format!(
        "{what}: CV above {NOISY_CV_PCT:.0}% on {} of {} figure(s), up to {cv:.1}% ({}): repeat on a quieter machine before quoting them",
        noisy.len(),
        with_cv.len(),
        label(worst)
    )))
}

/// `a / b` where both are usable figures and the quotient is finite.
pub(crate) fn ratio(a: f64, b: f64) -> Option<f64> {
    let x = a / b;
    (a > 0.0 && b > 0.0 && x.is_finite()).then_some(x)
}

/// `high / low` where it is above [`IMPLAUSIBLE_RATIO`] and both are
/// usable figures.
pub(crate) fn implausible(high: f64, low: f64) -> Option<f64> {
    ratio(high, low).filter(|x| *x > IMPLAUSIBLE_RATIO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Better;

    fn with_cv(name: &str, cv: f64) -> Record {
        Record::new("x", name).metric(metric::CV_PCT, cv, "%", Better::Lower)
    }

    #[test]
    fn noise_names_the_worst_figure_once() {
        let a = with_cv("a", 1.0);
        let b = with_cv("b", 20.0);
        let c = with_cv("c", 7.5);
        let f = noise("the sweep", &[&a, &b, &c], |r| r.name.clone()).unwrap();
        assert!(f.flag);
        assert_eq!(
            f.text,
            "the sweep: CV above 5% on 2 of 3 figure(s), up to 20.0% (b): repeat on a quieter machine before quoting them"
        );
        assert_eq!(noise("the sweep", &[&a], |r| r.name.clone()), None);
        assert_eq!(noise("the sweep", &[], |r| r.name.clone()), None);
    }

    #[test]
    fn a_ratio_is_implausible_only_above_its_bound() {
        assert_eq!(implausible(36.0, 12.0), Some(3.0));
        assert_eq!(implausible(15.0, 10.0), None);
        assert_eq!(implausible(15.0, 0.0), None);
    }
}
