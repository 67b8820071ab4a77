//! How many threads saturate a node pair: the thesis' curve adds them one
//! at a time; on a node of dozens of cores a search finds the same peak in
//! a handful of measurements.

use anyhow::Result;

/// Bandwidth gain below which a thread-scaling step counts as flat.
pub(crate) const FLAT_GAIN: f64 = 0.01;
/// Flat steps in a row that end the scaling.
pub(crate) const FLAT_STEPS: usize = 2;
/// Above this many cores a node is searched, not walked, unless the whole
/// curve is asked for (`--scaling full`).
pub(crate) const SEARCH_ABOVE: usize = 8;
/// Measurements the search adds around its best doubling.
pub(crate) const REFINE_STEPS: usize = 4;

/// The measurements of a scaling in thread order, the index of the best,
/// and why it stopped.
type Scanned<T> = (Vec<T>, usize, String);

/// The saturated bandwidth of up to `max_threads` threads: the whole curve
/// ([`saturate`]) where `full` or the node is small, else [`search`].
pub(crate) fn scan<T>(
    max_threads: usize,
    full: bool,
    measure: impl FnMut(usize) -> Result<Option<(T, f64)>>,
) -> Result<Scanned<T>> {
    if full || max_threads <= SEARCH_ABOVE {
        saturate(max_threads, measure)
    } else {
        search(max_threads, measure)
    }
}

/// Adds threads one at a time until the gain over the best so far stays
/// under [`FLAT_GAIN`] for [`FLAT_STEPS`] steps in a row, or the CPUs run
/// out. Unlike stopping at the first drop, a single noisy or SMT-limited
/// step does not end the search, and the peak is the best step, not the
/// last. `measure(n)` returns `None` when time ran out.
pub(crate) fn saturate<T>(
    max_threads: usize,
    mut measure: impl FnMut(usize) -> Result<Option<(T, f64)>>,
) -> Result<Scanned<T>> {
    let mut steps = Vec::new();
    let mut best = 0.0f64;
    let mut peak = 0;
    let mut flat = 0;
    for n in 1..=max_threads {
        let Some((step, mb_s)) = measure(n)? else {
            return Ok((steps, peak, format!("time limit reached at {n} threads")));
        };
        steps.push(step);
        if mb_s > best * (1.0 + FLAT_GAIN) {
            flat = 0;
        } else {
            flat += 1;
        }
        if mb_s > best {
            best = mb_s;
            peak = steps.len() - 1;
        }
        if flat >= FLAT_STEPS {
            return Ok((
                steps,
                peak,
                format!("gain under 1% for {FLAT_STEPS} steps at {n} threads"),
            ));
        }
    }
    Ok((steps, peak, format!("all {max_threads} cores used")))
}

/// Doubles the threads (1, 2, 4, ... and all) until a doubling gains under
/// [`FLAT_GAIN`] twice in a row, then halves the gaps beside the best
/// count up to [`REFINE_STEPS`] times: the peak of a 64-core node in about
/// ten measurements instead of up to 64. Bandwidth rises with threads to a
/// knee and then stays flat or falls a little, so the best lies beside
/// the best doubling.
pub(crate) fn search<T>(
    max_threads: usize,
    mut measure: impl FnMut(usize) -> Result<Option<(T, f64)>>,
) -> Result<Scanned<T>> {
    let mut seen: Vec<(usize, T, f64)> = Vec::new();
    let mut stop = None;
    let mut flat = 0;
    let mut n = 1;
    loop {
        let Some((step, mb_s)) = measure(n)? else {
            stop = Some(format!("time limit reached at {n} threads"));
            break;
        };
        let best = seen.iter().map(|s| s.2).fold(0.0, f64::max);
        flat = if mb_s > best * (1.0 + FLAT_GAIN) { 0 } else { flat + 1 };
        seen.push((n, step, mb_s));
        if flat >= FLAT_STEPS || n == max_threads {
            break;
        }
        n = (n * 2).min(max_threads);
    }
    if stop.is_none() {
        for _ in 0..REFINE_STEPS {
            let Some(mid) = next_count(&seen, max_threads) else {
                break;
            };
            let Some((step, mb_s)) = measure(mid)? else {
                stop = Some(format!("time limit reached at {mid} threads"));
                break;
            };
            seen.push((mid, step, mb_s));
        }
    }
    seen.sort_by_key(|s| s.0);
    let peak = (0..seen.len())
        .max_by(|&a, &b| seen[a].2.total_cmp(&seen[b].2))
        .unwrap_or(0);
    let counts: Vec<String> = seen.iter().map(|s| s.0.to_string()).collect();
    let why = stop.unwrap_or_else(|| {
        format!(
            "searched {} of {max_threads} thread counts ({}): best at {}",
            seen.len(),
            counts.join(", "),
            seen.get(peak).map_or(0, |s| s.0)
        )
    });
    Ok((seen.into_iter().map(|s| s.1).collect(), peak, why))
}

/// The count halfway across the wider gap beside the best count measured
/// so far (towards `max_threads` on the right where nothing beyond it was
/// measured); `None` once both gaps are closed.
fn next_count<T>(seen: &[(usize, T, f64)], max_threads: usize) -> Option<usize> {
    let best = seen.iter().max_by(|a, b| a.2.total_cmp(&b.2))?.0;
    let below = seen.iter().map(|s| s.0).filter(|&c| c < best).max().unwrap_or(0);
    let above = seen
        .iter()
        .map(|s| s.0)
        .filter(|&c| c > best)
        .min()
        .unwrap_or(max_threads + 1);
    let (left, right) = (best - below, above - best);
    if left.max(right) <= 1 {
        return None;
    }
    Some(if right >= left {
        best + right / 2
    } else {
        best - left / 2
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scale(curve: &[f64]) -> (Vec<f64>, usize, String) {
        saturate(curve.len(), |n| Ok(Some((curve[n - 1], curve[n - 1])))).unwrap()
    }


    #[test]
    fn scaling_stops_after_two_flat_steps_and_keeps_the_best() {
        let (steps, peak, stop) = scale(&[10.0, 19.0, 25.0, 25.1, 24.0, 30.0]);
        assert_eq!(steps.len(), 5, "stops after 25.1 and 24.0");
        assert_eq!(peak, 3, "25.1 is the best seen");
        assert!(stop.contains("5 threads"), "{stop}");
    }


    #[test]
    fn one_dip_does_not_end_the_scaling() {
        let (steps, peak, _) = scale(&[10.0, 9.0, 20.0, 30.0]);
        assert_eq!(steps.len(), 4);
        assert_eq!(peak, 3);
    }


    #[test]
    fn scaling_uses_every_core_while_it_gains() {
        let (steps, peak, stop) = scale(&[1.0, 2.0, 3.0]);
        assert_eq!((steps.len(), peak), (3, 2));
        assert!(stop.contains("all 3"), "{stop}");
    }


    #[test]
    fn scaling_reports_the_time_limit() {
        let (steps, _, stop) = saturate(8, |n| {
            Ok(if n < 3 {
                Some((n as f64, n as f64))
            } else {
                None
            })
        })
        .unwrap();
        assert_eq!(steps.len(), 2);
        assert!(stop.contains("time limit"), "{stop}");
    }

    /// A node whose bandwidth rises to `knee` threads and then falls a
    /// little per thread past it.
    fn knee_curve(cores: usize, knee: usize) -> Vec<f64> {
        (1..=cores)
            .map(|n| {
                if n <= knee {
                    n as f64 * 1000.0
                } else {
                    knee as f64 * 1000.0 - (n - knee) as f64 * 5.0
                }
            })
            .collect()
    }

    #[test]
    fn the_search_finds_the_knee_of_a_big_node_in_a_handful_of_measurements() {
        for (cores, knee) in [(64, 24), (64, 9), (48, 40), (128, 64), (16, 16)] {
            let curve = knee_curve(cores, knee);
            let mut measured = Vec::new();
            let (steps, peak, why) = scan(cores, false, |n| {
                measured.push(n);
                Ok(Some((curve[n - 1], curve[n - 1])))
            })
            .unwrap();
            assert!(measured.len() <= 13, "{cores} cores: {measured:?}");
            // Within 10% of the true peak, and the steps in thread order.
            assert!(steps[peak] >= 0.9 * curve[knee - 1], "{cores}/{knee}: {measured:?}");
            let mut sorted = measured.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), measured.len(), "no count twice: {measured:?}");
            assert!(why.contains(&format!("{} of {cores}", measured.len())), "{why}");
        }
    }

    #[test]
    fn small_nodes_and_full_scaling_walk_every_count() {
        let curve = knee_curve(64, 24);
        let mut measured = Vec::new();
        let (steps, _, _) = scan(64, true, |n| {
            measured.push(n);
            Ok(Some((curve[n - 1], curve[n - 1])))
        })
        .unwrap();
        assert_eq!(measured, (1..=26).collect::<Vec<_>>(), "to two flat steps");
        assert_eq!(steps.len(), 26);
        let mut small = Vec::new();
        scan(SEARCH_ABOVE, false, |n| {
            small.push(n);
            Ok(Some((n as f64, n as f64)))
        })
        .unwrap();
        assert_eq!(small, (1..=SEARCH_ABOVE).collect::<Vec<_>>());
    }

    #[test]
    fn the_search_stops_at_the_time_limit_with_what_it_has() {
        let (steps, _, why) = scan(64, false, |n| {
            Ok((n < 8).then_some((n as f64, n as f64)))
        })
        .unwrap();
        assert_eq!(steps, [1.0, 2.0, 4.0]);
        assert!(why.contains("time limit reached at 8 threads"), "{why}");
    }
}
