//! The latency-bandwidth curve as pure functions: its knee and its
//! monotonicity, over points in the order of the load offered (idle first,
//! then delays from the longest to none). No hardware here, so the logic is
//! tested on synthetic curves.
//!
//! Why the points are ordered by offered load and not by bandwidth: past
//! saturation the memory system delivers *less* bandwidth at *more*
//! latency (queues fill, row-buffer conflicts grow), so an MLC curve bends
//! back on itself. Latency is what physics makes monotone in the load
//! offered; bandwidth is not.

/// One point of a curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Point {
    /// Injected bandwidth, MB/s (0 for the idle point).
    pub bandwidth_mb_s: f64,
    /// The chase's median latency, ns.
    pub latency_ns: f64,
    /// Standard deviation of the latency samples, ns.
    pub stddev_ns: f64,
}

/// The knee: where the latency first reaches this many times the idle
/// latency. A doubled latency is where a load-to-use wait costs as much
/// again as the memory itself; in a single-server queue it is 50%
/// utilisation, past which latency climbs steeply. A fixed factor is
/// reproducible from run to run, where a maximum of curvature on a handful
/// of noisy points moves with the noise.
pub(crate) const KNEE_FACTOR: f64 = 2.0;

/// Relative noise a loaded point may fall below a lighter-loaded one by
/// before the curve counts as not monotone (besides twice the combined
/// standard deviation).
pub(super) const NOISE_PCT: f64 = 5.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Knee {
    /// Injected bandwidth at the knee, interpolated linearly between the
    /// last point under and the first at or over the knee latency.
    pub bandwidth_mb_s: f64,
    /// `KNEE_FACTOR` x the idle latency.
    pub latency_ns: f64,
    /// Index (in `loaded`) of the first point at or over it.
    pub index: usize,
}

/// The knee of a curve: `idle` is the idle latency, `loaded` the loaded
/// points from the lightest load to the heaviest. `None` when no point
/// with a load ([`injected`]) reaches [`KNEE_FACTOR`] x idle (the
/// injectors did not saturate memory), or the idle latency is not a
/// positive number.
pub(super) fn knee(idle: &Point, loaded: &[Point]) -> Option<Knee> {
    if !(idle.latency_ns.is_finite() && idle.latency_ns > 0.0) {
        return None;
    }
    let target = KNEE_FACTOR * idle.latency_ns;
    let index = loaded
        .iter()
        .position(|p| injected(p) && p.latency_ns >= target)?;
    let before = loaded[..index]
        .iter()
        .rev()
        .find(|p| injected(p))
        .unwrap_or(idle);
    let at = &loaded[index];
    let rise = at.latency_ns - before.latency_ns;
    let share = if rise > 0.0 {
        ((target - before.latency_ns) / rise).clamp(0.0, 1.0)
    } else {
        1.0
    };
    Some(Knee {
        bandwidth_mb_s: before.bandwidth_mb_s + share * (at.bandwidth_mb_s - before.bandwidth_mb_s),
        latency_ns: target,
        index,
    })
}

/// How far below `higher` (a lighter-loaded point's latency) a point may
/// read and still be the same within noise.
pub(super) fn tolerance_ns(lighter: &Point, heavier: &Point) -> f64 {
    let pct = NOISE_PCT / 100.0 * lighter.latency_ns;
    let sd = 2.0 * (lighter.stddev_ns.powi(2) + heavier.stddev_ns.powi(2)).sqrt();
    pct.max(sd)
}

/// Points (indices into `curve`, lightest load first, idle included) whose
/// latency is below some lighter-loaded point's by more than the noise
/// allows, each with the index of that lighter point. Empty for a curve
/// that physics would draw.
pub(super) fn not_monotone(curve: &[Point]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, p) in curve.iter().enumerate() {
        let worst = curve[..i]
            .iter()
            .enumerate()
            .filter(|(_, q)| p.latency_ns < q.latency_ns - tolerance_ns(q, p))
            .max_by(|a, b| a.1.latency_ns.total_cmp(&b.1.latency_ns));
        if let Some((j, _)) = worst {
            out.push((i, j));
        }
    }
    out
}

/// Whether the injectors were seen moving memory during a loaded point.
/// Where their samples counted no bytes the injectors did not run (their
/// CPU went to another task, their pages were being brought back from
/// swap): the point's latency is under no load of theirs, so it is neither
/// a knee nor the full load, and a chart would draw it back at zero.
pub(super) fn injected(p: &Point) -> bool {
    p.bandwidth_mb_s.is_finite() && p.bandwidth_mb_s > 0.0
}

/// The point of most injected bandwidth, if any load was measured.
pub(super) fn most_bandwidth(loaded: &[Point]) -> Option<&Point> {
    loaded
        .iter()
        .filter(|p| injected(p))
        .max_by(|a, b| a.bandwidth_mb_s.total_cmp(&b.bandwidth_mb_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(bw: f64, lat: f64) -> Point {
        Point {
            bandwidth_mb_s: bw,
            latency_ns: lat,
            stddev_ns: 0.0,
        }
    }

    /// A single-server queue: latency = idle / (1 - utilisation), at
    /// utilisations `u` of a `peak` bandwidth.
    fn queue(idle: f64, peak: f64, u: &[f64]) -> Vec<Point> {
        u.iter().map(|&u| pt(u * peak, idle / (1.0 - u))).collect()
    }

    #[test]
    fn the_knee_of_a_queue_is_at_half_its_peak() {
        let idle = pt(0.0, 100.0);
        // 2x idle at exactly u = 0.5; points straddle it at 0.4 and 0.6.
        let curve = queue(100.0, 20_000.0, &[0.1, 0.2, 0.4, 0.6, 0.8]);
        let k = knee(&idle, &curve).unwrap();
        assert_eq!(k.index, 3);
        assert_eq!(k.latency_ns, 200.0);
        // Linear between (8000, 166.7) and (12000, 250): 200 at 9600.
        assert!((k.bandwidth_mb_s - 9600.0).abs() < 1.0, "{k:?}");
        // With a point on it, no interpolation error.
        let exact = queue(100.0, 20_000.0, &[0.25, 0.5, 0.75]);
        let k = knee(&idle, &exact).unwrap();
        assert!((k.bandwidth_mb_s - 10_000.0).abs() < 1e-6, "{k:?}");
    }

    #[test]
    fn no_knee_where_latency_never_doubles() {
        let idle = pt(0.0, 100.0);
        let curve = queue(100.0, 20_000.0, &[0.1, 0.3, 0.45]);
        assert_eq!(knee(&idle, &curve), None);
        assert_eq!(knee(&idle, &[]), None);
        assert_eq!(knee(&pt(0.0, 0.0), &curve), None);
        assert_eq!(knee(&pt(0.0, f64::NAN), &curve), None);
    }

    #[test]
    fn a_first_point_over_the_knee_interpolates_from_idle() {
        let idle = pt(0.0, 100.0);
        let k = knee(&idle, &[pt(10_000.0, 300.0)]).unwrap();
        assert_eq!(k.index, 0);
        assert!((k.bandwidth_mb_s - 5_000.0).abs() < 1e-9);
    }

    #[test]
    fn a_curve_bending_back_past_saturation_keeps_its_first_knee() {
        let idle = pt(0.0, 100.0);
        // Bandwidth falls at the heaviest load while latency still rises.
        let curve = [
            pt(5_000.0, 110.0),
            pt(15_000.0, 180.0),
            pt(18_000.0, 260.0),
            pt(16_000.0, 400.0),
        ];
        let k = knee(&idle, &curve).unwrap();
        assert_eq!(k.index, 2);
        assert!(k.bandwidth_mb_s > 15_000.0 && k.bandwidth_mb_s < 18_000.0);
        let mut all = vec![idle];
        all.extend(curve);
        assert!(not_monotone(&all).is_empty());
        assert_eq!(most_bandwidth(&curve).unwrap().bandwidth_mb_s, 18_000.0);
    }

    #[test]
    fn a_point_without_injected_bandwidth_is_no_knee_and_no_full_load() {
        let idle = pt(0.0, 100.0);
        // The full-load point counted no bytes: its doubled latency was not
        // the injectors' doing.
        let curve = [pt(2_000.0, 120.0), pt(9_000.0, 150.0), pt(0.0, 250.0)];
        assert_eq!(knee(&idle, &curve), None);
        assert_eq!(most_bandwidth(&curve).unwrap().bandwidth_mb_s, 9_000.0);
        // A lost point between two loaded ones is skipped: the knee is
        // interpolated between the loads on either side of it.
        let curve = [pt(2_000.0, 120.0), pt(0.0, 400.0), pt(10_000.0, 280.0)];
        let k = knee(&idle, &curve).unwrap();
        assert_eq!(k.index, 2);
        assert!((k.bandwidth_mb_s - 2_000.0 - 8_000.0 * 80.0 / 160.0).abs() < 1e-6);
        // No point with a load: no knee, no full load.
        let lost = [pt(0.0, 300.0), pt(f64::NAN, 300.0)];
        assert_eq!(knee(&idle, &lost), None);
        assert_eq!(most_bandwidth(&lost), None);
    }

    #[test]
    fn noise_within_the_tolerance_is_monotone_a_real_dip_is_not() {
        let mut curve = vec![pt(0.0, 100.0)];
        curve.extend(queue(100.0, 20_000.0, &[0.1, 0.3, 0.5, 0.7]));
        assert!(not_monotone(&curve).is_empty());
        // 3% under the lighter point: noise.
        let mut noisy = curve.clone();
        noisy[2].latency_ns = noisy[1].latency_ns * 0.97;
        assert!(not_monotone(&noisy).is_empty());
        // 20% under it: flagged against the highest lighter point.
        let mut dip = curve.clone();
        dip[3].latency_ns = 0.8 * dip[2].latency_ns;
        assert_eq!(not_monotone(&dip), [(3, 2)]);
        // A wide spread makes the same dip noise.
        for p in &mut dip {
            p.stddev_ns = 20.0;
        }
        assert!(not_monotone(&dip).is_empty());
    }
}
