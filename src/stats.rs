//! Small statistics over repeated samples: shared by probes, analysis and
//! output, so kept below all of them.

pub(crate) fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// Sample standard deviation (n - 1); 0 for fewer than two samples.
pub(crate) fn stddev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

/// Coefficient of variation in percent.
pub(crate) fn cv_pct(xs: &[f64]) -> f64 {
    let m = mean(xs);
    if m == 0.0 {
        0.0
    } else {
        100.0 * stddev(xs) / m
    }
}

pub(crate) fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    }
}

/// The 97.5% quantile of Student's t for `df` degrees of freedom (the
/// factor of a two-sided 95% interval): the printed table to 30, above it
/// the Cornish-Fisher expansion around the normal quantile, within 1e-4
/// of the exact figure there; infinite for 0.
pub(crate) fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => {
            let z: f64 = 1.959_963_985;
            let n = df as f64;
            let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
            z + (z3 + z) / (4.0 * n)
                + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
                + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * n * n * n)
        }
    }
}

/// The 95% confidence interval of the mean of `xs` (Student's t): mean
/// -/+ t975(n - 1) x stddev / sqrt(n); `None` for fewer than two values.
pub(crate) fn ci95(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs);
    let half = t975(xs.len() - 1) * stddev(xs) / (xs.len() as f64).sqrt();
    Some((m - half, m + half))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), 5.0);
        assert!((stddev(&xs) - 2.138_089_935).abs() < 1e-9);
        assert_eq!(median(&xs), 4.5);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert!((cv_pct(&xs) - 42.761_798_7).abs() < 1e-6);
        assert_eq!(cv_pct(&[]), 0.0);
        assert_eq!(stddev(&[1.0]), 0.0);
    }

    #[test]
    fn student_t_and_the_confidence_interval_of_a_mean() {
        assert_eq!(t975(0), f64::INFINITY);
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(9), 2.262);
        assert_eq!(t975(29), 2.045);
        // Above the table: the exact quantiles to 4 decimals.
        for (df, t) in [
            (31, 2.0395),
            (40, 2.0211),
            (60, 2.0003),
            (120, 1.9799),
            (1000, 1.9623),
        ] {
            assert!((t975(df) - t).abs() < 1e-4, "df {df}: {}", t975(df));
        }
        let (lo, hi) = ci95(&[100.0, 102.0, 98.0, 100.0]).unwrap();
        let half = 3.182 * stddev(&[100.0, 102.0, 98.0, 100.0]) / 2.0;
        assert!((hi - 100.0 - half).abs() < 1e-9 && (100.0 - lo - half).abs() < 1e-9);
        assert_eq!(ci95(&[5.0]), None);
        assert_eq!(ci95(&[]), None);
    }
}
