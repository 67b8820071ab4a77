//! Tests of `analysis::model`.

use super::*;

proptest::proptest! {
    /// Any --theta text is fractions summing to 1 or an error.
    #[test]
    fn any_theta_text_is_fractions_or_an_error(
        text in "\\PC{0,24}|([0-9.e+-]{1,10}%?)(,[0-9.e+-]{1,10}%?){0,5}",
    ) {
        if let Ok(t) = parse_thetas(&text) {
            proptest::prop_assert!(t.iter().all(|v| v.is_finite() && *v >= 0.0));
            let sum: f64 = t.iter().sum();
            proptest::prop_assert!((sum - 1.0).abs() <= THETA_TOLERANCE);
        }
    }
}

/// Four decimals, as the thesis prints them.
fn p4(x: f64) -> String {
    format!("{x:.4}")
}

fn alphas(gb_s: &[f64], peak_mb_s: f64) -> Vec<f64> {
    gb_s.iter().map(|g| alpha(g * 1000.0, peak_mb_s)).collect()
}

/// AMD 2P, Open64 single-threaded STREAM Triad classes (section 4.2,
/// from Table 3.4): 9.3, 5.6 and 3.1 GB/s.
fn amd_memory() -> Vec<f64> {
    alphas(&[9.3, 5.6, 3.1], DDR3_2133_MB_S)
}

#[test]
fn memory_alphas_of_eq_4_9() {
    let a: Vec<String> = amd_memory().into_iter().map(p4).collect();
    assert_eq!(a, ["0.5449", "0.3281", "0.1816"]);
}

#[test]
fn memory_examples_of_eq_4_10_to_4_12() {
    let a = amd_memory();
    let d = performance(&a, &[0.5, 0.5]).unwrap();
    assert_eq!(p4(d), "0.4365");
    assert_eq!(p4(loss(d, a[0])), "-0.1084");
    // Eq. 4.11 prints 0.4000. The exact alphas (and the 4-decimal ones
    // it prints) give 0.39992 and 0.39988; its 0.4000 is what alphas
    // rounded to three decimals (0.545, 0.328, 0.182) give.
    let thetas = [0.5, 0.25, 0.25];
    assert_eq!(p4(performance(&a, &thetas).unwrap()), "0.3999");
    assert_eq!(
        p4(performance(&[0.5449, 0.3281, 0.1816], &thetas).unwrap()),
        "0.3999"
    );
    assert_eq!(
        p4(performance(&[0.545, 0.328, 0.182], &thetas).unwrap()),
        "0.4000"
    );
    // Its percentages are differences of D in points of the peak:
    // "43.65% of theoretical bandwidth", "nearly 11%" lost against
    // alpha_0, and "up to 3% worse" with class 2 (3.66 points).
    assert_eq!(format!("{:.2}", 100.0 * d), "43.65");
    assert_eq!(format!("{:.2}", 100.0 * loss(d, a[0])), "-10.84");
    let d2 = performance(&a, &thetas).unwrap();
    assert_eq!(format!("{:.2}", 100.0 * (d - d2)), "3.66");
}

/// AMD 2P SHOC classes (section 4.3, from Table 3.4): readback 6.6, 5.3
/// and 2.3 GB/s; download 5.8, 5.3 and 2.3 GB/s.
#[test]
fn pcie_alphas_of_eq_4_15_and_4_16() {
    let r: Vec<String> = alphas(&[6.6, 5.3, 2.3], PCIE2_X16_MB_S)
        .into_iter()
        .map(p4)
        .collect();
    assert_eq!(r, ["0.5156", "0.4141", "0.1797"]);
    let w: Vec<String> = alphas(&[5.8, 5.3, 2.3], PCIE2_X16_MB_S)
        .into_iter()
        .map(p4)
        .collect();
    assert_eq!(w, ["0.4531", "0.4141", "0.1797"]);
}

/// Section 4.3.1: two GPU host processes, each with half of the
/// readback traffic, for every pair of classes the thesis lists.
#[test]
fn pcie_examples_of_eq_4_17_and_4_18() {
    let r = alphas(&[6.6, 5.3, 2.3], PCIE2_X16_MB_S);
    let d = |i: usize, j: usize| {
        let mut thetas = [0.0; 3];
        thetas[i] += 0.5;
        thetas[j] += 0.5;
        p4(performance(&r, &thetas).unwrap())
    };
    // Both GPUs on one I/O controller (eq. 4.17).
    assert_eq!(d(0, 2), "0.3477");
    assert_eq!(d(1, 2), "0.2969");
    assert_eq!(d(2, 2), "0.1797");
    // Each GPU on its own I/O controller (eq. 4.18).
    assert_eq!(d(0, 0), "0.5156");
    assert_eq!(d(0, 1), "0.4648");
    assert_eq!(d(1, 1), "0.4141");
    // "33% less" (worst current vs best optimal) and "7% less" (best
    // current vs worst optimal), again in points of Phi.
    let (dc_worst, dc_best) = (d(2, 2), d(0, 2));
    let (do_worst, do_best) = (d(1, 1), d(0, 0));
    let points = |a: &str, b: &str| {
        let (a, b): (f64, f64) = (a.parse().unwrap(), b.parse().unwrap());
        format!("{:.2}", 100.0 * (b - a))
    };
    assert_eq!(points(&dc_worst, &do_best), "33.59");
    assert_eq!(points(&dc_best, &do_worst), "6.64");
}

/// Table 4.1 (every alpha, AMD and Intel, all compilers) from the
/// bandwidths of Table 3.4.
#[test]
fn table_4_1() {
    let cases: [(&[f64], f64, &[&str]); 9] = [
        // AMD STREAM: GNU, Intel, Open64.
        (
            &[5.2, 3.3, 2.1],
            DDR3_2133_MB_S,
            &["0.3047", "0.1934", "0.1231"],
        ),
        (
            &[7.8, 5.3, 3.1],
            DDR3_2133_MB_S,
            &["0.4570", "0.3106", "0.1816"],
        ),
        (
            &[9.3, 5.6, 3.1],
            DDR3_2133_MB_S,
            &["0.5449", "0.3281", "0.1816"],
        ),
        // Intel STREAM: GNU, Intel, Open64.
        (&[9.2, 6.5], DDR3_2133_MB_S, &["0.5391", "0.3809"]),
        (&[10.5, 7.1], DDR3_2133_MB_S, &["0.6153", "0.4160"]),
        (&[9.0, 6.1], DDR3_2133_MB_S, &["0.5274", "0.3574"]),
        // SHOC readback and download, AMD then Intel.
        (
            &[6.6, 5.3, 2.3],
            PCIE2_X16_MB_S,
            &["0.5156", "0.4141", "0.1797"],
        ),
        (
            &[5.8, 5.3, 2.3],
            PCIE2_X16_MB_S,
            &["0.4531", "0.4141", "0.1797"],
        ),
        (
            &[6.1, 4.1, 6.1, 4.7],
            PCIE2_X16_MB_S,
            &["0.4766", "0.3203", "0.4766", "0.3672"],
        ),
    ];
    for (gb_s, peak, want) in cases {
        let got: Vec<String> = alphas(gb_s, peak).into_iter().map(p4).collect();
        assert_eq!(got, want, "{gb_s:?}");
    }
}

/// Cbench's class tables (Table 5.2, AMD 2P; Table A.3, AMD 4P), which
/// print the alpha of each class bound with Gamma = 17066 MB/s.
#[test]
fn cbench_memory_class_tables() {
    for (mb_s, want) in [
        (6441.0, "0.3774"),
        (3915.0, "0.2294"),
        (2181.0, "0.1278"),
        (8778.0, "0.5144"),
        (8109.0, "0.4752"),
        (5583.0, "0.3271"),
        (4002.0, "0.2345"),
    ] {
        assert_eq!(p4(alpha(mb_s, DDR3_2133_MB_S)), want, "{mb_s}");
    }
}

#[test]
fn fewer_thetas_than_classes_leave_the_rest_at_zero() {
    let a = amd_memory();
    assert_eq!(performance(&a, &[1.0]).unwrap(), a[0]);
    assert_eq!(performance(&a, &[0.0, 1.0]).unwrap(), a[1]);
}

#[test]
fn theta_errors_are_one_clear_line() {
    let a = amd_memory();
    let msg = |r: Result<f64, ModelError>| r.unwrap_err().to_string();
    assert_eq!(
        msg(performance(&a, &[0.5, 0.4])),
        "theta values add up to 0.9, not 1"
    );
    assert_eq!(
        msg(performance(&a, &[0.5, 0.25, 0.25, 0.0])),
        "4 theta values but only 3 bandwidth classes"
    );
    assert_eq!(
        msg(performance(&a, &[1.5, -0.5])),
        "theta 2 is -0.5; it must be a finite number >= 0"
    );
    assert_eq!(
        msg(performance(&a, &[f64::NAN, 1.0])),
        "theta 1 is NaN; it must be a finite number >= 0"
    );
    assert_eq!(msg(performance(&a, &[])), "no theta values given");
    assert_eq!(
        msg(performance(&[0.5, f64::INFINITY], &[1.0])),
        "alpha 2 is inf; it must be a finite number >= 0"
    );
    // Within the tolerance.
    assert!(performance(&a, &[0.333, 0.333, 0.333]).is_ok());
    assert!(performance(&a, &[0.5, 0.4995]).is_ok());
    for e in [
        ModelError::ThetaSum { sum: 1.0 / 3.0 },
        ModelError::ZeroBandwidth {
            position: 2,
            theta: 0.25,
        },
    ] {
        assert!(!e.to_string().contains('\n'), "{e}");
    }
    assert_eq!(
        ModelError::ThetaSum { sum: 1.0 / 3.0 }.to_string(),
        "theta values add up to 0.333333, not 1"
    );
}

#[test]
fn parses_fractions_and_percentages() {
    assert_eq!(parse_thetas("0.5,0.25,0.25").unwrap(), [0.5, 0.25, 0.25]);
    assert_eq!(parse_thetas(" 50% , 25 %,25%").unwrap(), [0.5, 0.25, 0.25]);
    assert_eq!(parse_thetas("1").unwrap(), [1.0]);
    assert_eq!(parse_thetas("100%").unwrap(), [1.0]);
    assert_eq!(parse_thetas("0.5,50%").unwrap(), [0.5, 0.5]);
}

#[test]
fn parse_errors_name_the_bad_piece() {
    let err = |t: &str| parse_thetas(t).unwrap_err().to_string();
    assert_eq!(
        err("0.5,abc,0.5"),
        "theta 2 'abc' is not a number (expected e.g. 0.5 or 50%)"
    );
    assert_eq!(
        err("0.5,,0.5"),
        "theta 2 is empty (expected e.g. 0.5,0.25,0.25 or 50%,25%,25%)"
    );
    assert_eq!(
        err("1.5,-0.5"),
        "theta 2 '-0.5' must be a finite number >= 0"
    );
    assert_eq!(err("inf,0"), "theta 1 'inf' must be a finite number >= 0");
    assert_eq!(
        err("50%,%"),
        "theta 2 '%' is not a number (expected e.g. 0.5 or 50%)"
    );
    assert_eq!(err("50%,25%"), "theta values add up to 0.75, not 1");
    assert_eq!(err("  "), "no theta values given");
    assert_eq!(
        err("0.5;0.5"),
        "theta 1 '0.5;0.5' is not a number (expected e.g. 0.5 or 50%)"
    );
}

/// Half the memory at 10 000 MB/s, half at 5 000 MB/s. Linear: 7 500.
/// Time-weighted: a byte takes 0.5/10000 + 0.5/5000 = 1.5e-4 us on
/// average, so 1 / 1.5e-4 = 6 666.67 MB/s.
#[test]
fn harmonic_and_linear_predictions() {
    let b = [10_000.0, 5_000.0];
    let theta = [0.5, 0.5];
    assert_eq!(predict_linear(&b, &theta).unwrap(), 7_500.0);
    let h = predict_harmonic(&b, &theta).unwrap();
    assert_eq!(format!("{h:.2}"), "6666.67");
    // Measured 6 700: the linear model is 11.9% high, the harmonic 0.5% low.
    assert_eq!(
        format!("{:.1}", error_pct(7_500.0, 6_700.0).unwrap()),
        "11.9"
    );
    assert_eq!(format!("{:.1}", error_pct(h, 6_700.0).unwrap()), "-0.5");
    assert_eq!(error_pct(1.0, 0.0), None);
    assert_eq!(error_pct(f64::NAN, 1.0), None);
    // Three nodes, one unused: 0.75 at 8 000, 0.25 at 2 000.
    let b3 = [8_000.0, 4_000.0, 2_000.0];
    let t3 = [0.75, 0.0, 0.25];
    assert_eq!(predict_linear(&b3, &t3).unwrap(), 6_500.0);
    // 0.75/8000 + 0.25/2000 = 2.1875e-4 -> 4 571.43.
    assert_eq!(
        format!("{:.2}", predict_harmonic(&b3, &t3).unwrap()),
        "4571.43"
    );
    // All on one node: both give that node's bandwidth.
    assert_eq!(predict_harmonic(&b3, &[0.0, 1.0]).unwrap(), 4_000.0);
    assert_eq!(predict_linear(&b3, &[0.0, 1.0]).unwrap(), 4_000.0);
    // A node without bandwidth holds a share: no finite time.
    assert_eq!(
        predict_harmonic(&[8_000.0, 0.0], &[0.5, 0.5])
            .unwrap_err()
            .to_string(),
        "memory node 2 has bandwidth 0 but theta 0.5: no time-weighted prediction is possible"
    );
    // ... but an unused node without bandwidth is fine.
    assert_eq!(
        predict_harmonic(&[8_000.0, 0.0], &[1.0, 0.0]).unwrap(),
        8_000.0
    );
    assert_eq!(
        predict_linear(&b, &[0.5, 0.25, 0.25])
            .unwrap_err()
            .to_string(),
        "3 theta values but only 2 bandwidth classes"
    );
    assert_eq!(
        predict_linear(&[-1.0, 2.0], &theta)
            .unwrap_err()
            .to_string(),
        "bandwidth 1 is -1; it must be a finite number >= 0"
    );
}

#[test]
fn linear_prediction_is_d_times_the_peak() {
    let b = [9_300.0, 5_600.0, 3_100.0];
    let theta = [0.5, 0.25, 0.25];
    let a = alphas(&[9.3, 5.6, 3.1], DDR3_2133_MB_S);
    let d = performance(&a, &theta).unwrap();
    let lin = predict_linear(&b, &theta).unwrap();
    assert!((lin - d * DDR3_2133_MB_S).abs() < 1e-9);
    assert!(predict_harmonic(&b, &theta).unwrap() < lin);
}

#[test]
fn peak_descriptions() {
    assert_eq!(
        Peak::dmi(2400, 8, 2).describe(),
        "Gamma = 38400 MB/s from DMI: 2 channels x 2400 MT/s x 8 B (one module per channel assumed)"
    );
    assert_eq!(
        Peak::dmi(2133, 8, 1).describe(),
        "Gamma = 17064 MB/s from DMI: 1 channel x 2133 MT/s x 8 B (one module per channel assumed)"
    );
    assert_eq!(
        Peak {
            mb_s: 9_300.0,
            source: PeakSource::MeasuredLocal
        }
        .describe(),
        "Gamma = 9300 MB/s: not known (no --peak given, no DMI memory speed readable), so the best measured cell stands in: alphas are relative to it (alpha_0 = 1) and not comparable across machines; give the memory's peak with --peak"
    );
    assert_eq!(
        Peak::given(DDR3_2133_MB_S).describe(),
        "Gamma = 17066 MB/s, as given with --peak"
    );
    let json = serde_json::to_string(&Peak::dmi(2400, 8, 2)).unwrap();
    let back: Peak = serde_json::from_str(&json).unwrap();
    assert_eq!(back, Peak::dmi(2400, 8, 2));
}
