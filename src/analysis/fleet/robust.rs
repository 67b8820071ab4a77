//! Robust spread and outliers: the median and the median absolute
//! deviation (MAD), which one bad machine in ten cannot move, where a mean
//! and a standard deviation would be dragged towards the bad machines and
//! hide them.
//!
//! The rule: a value is an outlier when its modified z-score
//! `0.6745 (x - median) / MAD` exceeds 3.5 in magnitude (Iglewicz and
//! Hoaglin, "How to Detect and Handle Outliers", 1993: the cut they
//! recommend; for normally distributed values it flags about 1 in 2,000)
//! AND it lies more than a floor away from the median, 5% by default. The
//! floor is there because identical machines measured with the quick
//! profile agree within a few percent: without it, a fleet whose machines
//! agree to 0.2% would flag a machine at 1% as an outlier, which is noise,
//! not a broken machine; and where the MAD is 0 (a count such as nodes or
//! classes, equal on every machine but one) the floor alone decides.

use serde::Serialize;

/// The modified z-score beyond which a value is an outlier.
pub(crate) const Z_CUT: f64 = 3.5;
/// ... and the least distance from the median, in % of it.
pub(crate) const FLOOR_PCT: f64 = 5.0;
/// Fewer values than this are not judged: with two machines, neither is
/// "the odd one".
pub(crate) const MIN_MACHINES: usize = 3;

/// The factor that makes the MAD estimate a standard deviation for normal
/// data (1 / 0.6745).
const MAD_TO_SIGMA: f64 = 1.4826;

/// Median and spread of a set of values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Spread {
    pub n: usize,
    pub median: f64,
    pub mad: f64,
    pub min: f64,
    pub max: f64,
    /// 1.4826 x MAD in % of the median: a robust coefficient of variation.
    pub robust_cv_pct: f64,
}

/// The median of `v`, sorted in place; 0 when empty.
pub(crate) fn median_in_place(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    }
}

pub(crate) fn spread(values: &[f64]) -> Option<Spread> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    let median = median_in_place(&mut v);
    let (min, max) = (v[0], v[v.len() - 1]);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - median).abs()).collect();
    let mad = median_in_place(&mut dev);
    let robust_cv_pct = if median == 0.0 {
        0.0
    } else {
        100.0 * MAD_TO_SIGMA * mad / median.abs()
    };
    Some(Spread {
        n: values.len(),
        median,
        mad,
        min,
        max,
        robust_cv_pct,
    })
}

/// How far outside counts as an outlier.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Cut {
    pub z: f64,
    pub floor_pct: f64,
}

impl Default for Cut {
    fn default() -> Self {
        Cut {
            z: Z_CUT,
            floor_pct: FLOOR_PCT,
        }
    }
}

impl Spread {
    /// The modified z-score of `x`; infinite where the MAD is 0 and `x` is
    /// not the median.
    pub(crate) fn z(&self, x: f64) -> f64 {
        let d = x - self.median;
        if d == 0.0 {
            0.0
        } else if self.mad == 0.0 {
            d.signum() * f64::INFINITY
        } else {
            0.6745 * d / self.mad
        }
    }

    /// `x`'s distance from the median in % of it (signed).
    pub(crate) fn deviation_pct(&self, x: f64) -> f64 {
        if self.median == 0.0 {
            if x == 0.0 { 0.0 } else { 100.0 * x.signum() }
        } else {
            100.0 * (x - self.median) / self.median.abs()
        }
    }

    pub(crate) fn is_outlier(&self, x: f64, cut: &Cut) -> bool {
        self.n >= MIN_MACHINES
            && self.z(x).abs() > cut.z
            && self.deviation_pct(x).abs() > cut.floor_pct
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_mad_of_known_sets() {
        let s = spread(&[1.0, 2.0, 3.0, 4.0, 100.0]).unwrap();
        assert_eq!((s.median, s.mad, s.min, s.max), (3.0, 1.0, 1.0, 100.0));
        let s = spread(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.median, s.mad), (2.5, 1.0));
        assert!(spread(&[]).is_none());
    }

    #[test]
    fn a_halved_machine_is_an_outlier_and_noise_is_not() {
        let mut v: Vec<f64> = (0..50).map(|i| 10_000.0 + (i % 7) as f64 * 10.0).collect();
        v.push(5_000.0);
        let s = spread(&v).unwrap();
        let cut = Cut::default();
        assert!(s.is_outlier(5_000.0, &cut));
        assert!(!s.is_outlier(10_060.0, &cut));
        // 2% off is many MADs away in a tight fleet, but under the floor.
        assert!(s.z(9_800.0).abs() > Z_CUT);
        assert!(!s.is_outlier(9_800.0, &cut));
    }

    #[test]
    fn counts_equal_everywhere_but_one() {
        let mut v = vec![4.0; 20];
        v.push(2.0);
        let s = spread(&v).unwrap();
        assert_eq!(s.mad, 0.0);
        assert!(s.is_outlier(2.0, &Cut::default()));
        assert!(!s.is_outlier(4.0, &Cut::default()));
    }

    #[test]
    fn two_machines_are_not_judged() {
        let s = spread(&[100.0, 50.0]).unwrap();
        assert!(!s.is_outlier(50.0, &Cut::default()));
        let s = spread(&[100.0, 100.0, 50.0]).unwrap();
        assert!(s.is_outlier(50.0, &Cut::default()));
    }
}
