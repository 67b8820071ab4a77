//! Run-to-run comparison: every metric of a base results document set
//! beside the same record's metric in other documents, with the change
//! signed so that + is always better, and changes that the runs' own
//! repetitions cannot tell from noise marked as such.

use std::collections::HashMap;

use crate::results::names;
use crate::results::{Better, Document, Record};
use crate::stats;

/// One compared figure of another run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cell {
    pub value: f64,
    /// Change against the base in %, + = better (direction from the record);
    /// `None` where the base is 0 and this value is not: no percentage
    /// exists (0 -> 32,787 migrated pages is not "+0.0%").
    pub change_pct: Option<f64>,
    /// `Some(true)` when the change is within the runs' noise; `None` when
    /// neither side kept samples to judge by.
    pub within_noise: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub probe: String,
    pub test: String,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    pub base: f64,
    /// One per other run; `None` where that run lacks the record or metric.
    pub others: Vec<Option<Cell>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Comparison {
    pub rows: Vec<Row>,
    /// Records of other runs the base does not have, per other run.
    pub unmatched: Vec<usize>,
}

impl Comparison {
    /// Whether other run `i` has any figure of the base's to compare.
    pub(crate) fn shares_with(&self, i: usize) -> bool {
        self.rows
            .iter()
            .any(|r| r.others.get(i).is_some_and(Option::is_some))
    }
}

/// What a document holds, for a person: its probes with their record
/// counts, e.g. "c2c (3 records), latency (4 records)", or "no records".
pub(crate) fn holdings(doc: &Document) -> String {
    let mut probes: Vec<(&str, usize)> = Vec::new();
    for r in &doc.records {
        match probes.iter_mut().find(|(p, _)| *p == r.probe) {
            Some((_, n)) => *n += 1,
            None => probes.push((&r.probe, 1)),
        }
    }
    if probes.is_empty() {
        return "no records".into();
    }
    probes
        .iter()
        .map(|(p, n)| format!("{p} ({n} record{})", if *n == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Metrics that describe a measurement's spread or cost rather than its
/// result; compared only with `all_metrics`.
fn is_secondary(record: &Record, metric: &str) -> bool {
    let spread =
        metric == names::metric::CV_PCT || metric.contains("stddev") || metric.starts_with("ci95");
    let cost = metric == names::metric::RUNTIME_S
        && record
            .metrics
            .keys()
            .any(|k| k.starts_with("bandwidth") || k.starts_with("latency_"));
    spread || cost
}

/// Change in %, + = better; `None` from a base of 0 to anything else, and
/// where the change is too large for a number (a base of 1e-320, say).
/// Equal values are +0.0 whichever the direction (never -0.0).
pub(crate) fn change_pct(base: f64, other: f64, better: Better) -> Option<f64> {
    if base == 0.0 {
        return (other == 0.0).then_some(0.0);
    }
    let raw = 100.0 * (other - base) / base.abs();
    if !raw.is_finite() {
        return None;
    }
    let signed = match better {
        Better::Higher => raw,
        Better::Lower => -raw,
    };
    // -0.0 + 0.0 is +0.0: a lower-is-better metric that did not move.
    Some(signed + 0.0)
}

/// Whether the move from `base` to `other` lies within two standard
/// deviations of the difference of two runs, estimated from each run's kept
/// samples (their coefficients of variation added in quadrature). With four
/// samples or more, the one farthest from the median is set aside first: one
/// sample cut short by preemption would otherwise make any change look like
/// noise. The move is measured as a log ratio, so a tenfold drop counts as
/// much as a tenfold rise (in per cent they read -90% and +900%); for small
/// moves it is the per cent change. Where either figure is not positive it
/// falls back to the change relative to `base`; `None` from a base of 0 to
/// anything else, as [`change_pct`].
pub(crate) fn within_noise(
    base: f64,
    other: f64,
    base_samples: &[f64],
    other_samples: &[f64],
) -> Option<bool> {
    if base_samples.len() < 2 && other_samples.len() < 2 {
        return None;
    }
    let cv = |s: &[f64]| match s.len() {
        0 | 1 => 0.0,
        2 | 3 => stats::cv_pct(s),
        _ => stats::cv_pct(&without_farthest(s)),
    };
    let (a, b) = (cv(base_samples), cv(other_samples));
    let moved_pct = if base == other {
        0.0
    } else if base > 0.0 && other > 0.0 {
        100.0 * (other / base).ln().abs()
    } else if base != 0.0 {
        100.0 * ((other - base) / base).abs()
    } else {
        // From 0 to anything else: no size of change exists.
        return None;
    };
    Some(moved_pct <= 2.0 * (a * a + b * b).sqrt())
}

/// `s` less the one sample farthest from its median.
fn without_farthest(s: &[f64]) -> Vec<f64> {
    let m = stats::median(s);
    let far = (0..s.len())
        .max_by(|&i, &j| (s[i] - m).abs().total_cmp(&(s[j] - m).abs()))
        .unwrap_or(0);
    s.iter()
        .enumerate()
        .filter(|&(i, _)| i != far)
        .map(|(_, &x)| x)
        .collect()
}

/// Which metrics a comparison shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Metrics<'a> {
    /// Each record's results, without spread and cost figures.
    Main,
    /// Every metric.
    All,
    /// These metrics alone (spread and cost ones too, when named).
    Named(&'a [String]),
}

impl Metrics<'_> {
    fn shows(&self, record: &Record, metric: &str) -> bool {
        match self {
            Metrics::Main => !is_secondary(record, metric),
            Metrics::All => true,
            Metrics::Named(names) => names.iter().any(|n| n == metric),
        }
    }
}

/// The metrics of `names` that no record of `doc` has, in their order.
pub(crate) fn missing_metrics<'a>(doc: &Document, names: &'a [String]) -> Vec<&'a str> {
    names
        .iter()
        .filter(|n| !doc.records.iter().any(|r| r.metrics.contains_key(*n)))
        .map(String::as_str)
        .collect()
}

/// A record's (probe, name), what records are matched by.
fn key(r: &Record) -> (&str, &str) {
    (r.probe.as_str(), r.name.as_str())
}

/// Each record of `doc` by (probe, name), the first where a name repeats.
/// An index, not a scan per record: results files hold up to hundreds of
/// thousands of records, and a scan per record would be quadratic.
fn index(doc: &Document) -> HashMap<(&str, &str), &Record> {
    let mut by_name = HashMap::with_capacity(doc.records.len());
    for r in &doc.records {
        by_name.entry(key(r)).or_insert(r);
    }
    by_name
}

pub(crate) fn compare(base: &Document, others: &[&Document], metrics: Metrics) -> Comparison {
    let indexes: Vec<_> = others.iter().map(|d| index(d)).collect();
    let mut rows = Vec::new();
    for r in &base.records {
        let matches: Vec<Option<&Record>> =
            indexes.iter().map(|ix| ix.get(&key(r)).copied()).collect();
        for (key, m) in &r.metrics {
            if !metrics.shows(r, key) {
                continue;
            }
            let base_samples = r.samples.get(key).map_or(&[][..], Vec::as_slice);
            let cells = matches
                .iter()
                .map(|o| {
                    let o = (*o)?;
                    let value = o.value(key)?;
                    let change = change_pct(m.value, value, m.better);
                    let samples = o.samples.get(key).map_or(&[][..], Vec::as_slice);
                    Some(Cell {
                        value,
                        change_pct: change,
                        within_noise: within_noise(m.value, value, base_samples, samples),
                    })
                })
                .collect();
            rows.push(Row {
                probe: r.probe.clone(),
                test: r.name.clone(),
                metric: key.clone(),
                unit: m.unit.clone(),
                better: m.better,
                base: m.value,
                others: cells,
            });
        }
    }
    let base_index = index(base);
    let unmatched = others
        .iter()
        .map(|d| {
            d.records
                .iter()
                .filter(|o| !base_index.contains_key(&key(o)))
                .count()
        })
        .collect();
    Comparison { rows, unmatched }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

    fn doc(records: Vec<Record>) -> Document {
        let mut d = Document::new(&fixture("local-1node"));
        d.records = records;
        d
    }

    fn bw(name: &str, v: f64, samples: &[f64]) -> Record {
        let mut r = Record::new("mem", name)
            .metric("bandwidth_mb_s", v, "MB/s", Better::Higher)
            .metric("latency_ns", v / 100.0, "ns", Better::Lower)
            .metric("cv_pct", 1.0, "%", Better::Lower);
        r.samples.insert("bandwidth_mb_s".into(), samples.to_vec());
        r
    }

    #[test]
    fn sign_follows_the_better_direction() {
        assert_eq!(change_pct(100.0, 110.0, Better::Higher), Some(10.0));
        assert_eq!(change_pct(100.0, 110.0, Better::Lower), Some(-10.0));
        assert_eq!(change_pct(200.0, 150.0, Better::Lower), Some(25.0));
    }

    #[test]
    fn a_change_too_large_for_a_number_has_no_percentage() {
        assert_eq!(change_pct(5e-324, 1.0, Better::Higher), None);
        assert_eq!(change_pct(1.0, 1e308, Better::Lower), None);
        assert_eq!(change_pct(1.0, 1e300, Better::Higher), Some(1e302 - 100.0));
    }

    #[test]
    fn records_match_by_probe_and_name_and_a_repeated_name_matches_its_first() {
        let base = doc(vec![
            bw("a", 100.0, &[]),
            bw("b", 100.0, &[]),
            Record::new("sweep", "a").metric("x", 1.0, "ns", Better::Lower),
        ]);
        let other = doc(vec![
            bw("b", 50.0, &[]),
            bw("a", 110.0, &[]),
            bw("a", 999.0, &[]),
            bw("c", 1.0, &[]),
        ]);
        let c = compare(&base, &[&other], Metrics::Named(&["bandwidth_mb_s".into()]));
        let value = |t: &str| {
            c.rows
                .iter()
                .find(|r| r.probe == "mem" && r.test == t)
                .and_then(|r| r.others[0].as_ref())
                .map(|cell| cell.value)
        };
        assert_eq!(value("a"), Some(110.0));
        assert_eq!(value("b"), Some(50.0));
        // sweep/a has no bandwidth_mb_s, and mem/c is not in the base; the
        // repeated mem/a counts as matched.
        assert_eq!(c.rows.len(), 2);
        assert_eq!(c.unmatched, vec![1]);
    }

    #[test]
    fn a_zero_base_has_no_percentage() {
        // 0 -> 32,787 migrated pages is a change, not +0.0%.
        assert_eq!(change_pct(0.0, 32787.0, Better::Lower), None);
        assert_eq!(change_pct(0.0, 5.0, Better::Higher), None);
        assert_eq!(change_pct(0.0, 0.0, Better::Lower), Some(0.0));
        let base = doc(vec![Record::new("mem", "4x4-convergence").metric(
            "numa_pages_migrated",
            0.0,
            "count",
            Better::Lower,
        )]);
        let other = doc(vec![Record::new("mem", "4x4-convergence").metric(
            "numa_pages_migrated",
            32787.0,
            "count",
            Better::Lower,
        )]);
        let c = compare(&base, &[&other], Metrics::Main);
        let cell = c.rows[0].others[0].clone().unwrap();
        assert_eq!(
            (cell.value, cell.change_pct, cell.within_noise),
            (32787.0, None, None)
        );
    }

    #[test]
    fn equal_lower_is_better_values_are_plus_zero() {
        let c = change_pct(7.5, 7.5, Better::Lower).unwrap();
        assert!(c == 0.0 && c.is_sign_positive(), "{c}");
        assert_eq!(format!("{c:+.1}"), "+0.0");
    }

    #[test]
    fn noise_comes_from_the_kept_samples() {
        // CVs of 5% each: 2 x sqrt(50) = 14.1% of noise.
        let noisy = [95.0, 100.0, 105.0];
        assert_eq!(within_noise(100.0, 110.0, &noisy, &noisy), Some(true));
        assert_eq!(within_noise(100.0, 120.0, &noisy, &noisy), Some(false));
        let tight = [100.0, 100.1, 99.9];
        assert_eq!(within_noise(100.0, 102.0, &tight, &tight), Some(false));
        assert_eq!(within_noise(100.0, 102.0, &[], &[1.0]), None);
        // One preempted sample of five does not make -90% noise; two
        // scattered runs still do.
        let one_slow = [100.0, 101.0, 99.0, 100.5, 10.0];
        let tenth: Vec<f64> = one_slow.iter().map(|x| x / 10.0).collect();
        assert_eq!(within_noise(100.0, 10.0, &one_slow, &tenth), Some(false));
        let scattered = [100.0, 40.0, 160.0, 70.0, 130.0];
        assert_eq!(
            within_noise(100.0, 120.0, &scattered, &scattered),
            Some(true)
        );
        // A tenfold drop and a tenfold rise are the same size of move:
        // samples with a CV of 41% once the farthest is set aside hide
        // neither (2 x sqrt(2) x 41 = 115% against ln 10 = 230%), where in
        // per cent the drop (-90%) would have counted as noise and the
        // rise (+900%) not.
        let wide = [50.0, 100.0, 150.0, 100.0, 200.0];
        let (down, up): (Vec<f64>, Vec<f64>) = wide.iter().map(|x| (x / 10.0, x * 10.0)).unzip();
        assert_eq!(within_noise(100.0, 10.0, &wide, &down), Some(false));
        assert_eq!(within_noise(100.0, 1000.0, &wide, &up), Some(false));
        // Not positive: the change relative to the base.
        assert_eq!(within_noise(-100.0, -105.0, &noisy, &noisy), Some(true));
        assert_eq!(within_noise(0.0, 5.0, &noisy, &noisy), None);
        assert_eq!(within_noise(0.0, 0.0, &noisy, &noisy), Some(true));
    }

    #[test]
    fn planted_change_is_found_and_noise_is_marked() {
        let base = doc(vec![
            bw("2x1-bw-process", 1000.0, &[990.0, 1000.0, 1010.0]),
            bw("4x1-bw-process", 2000.0, &[1900.0, 2000.0, 2100.0]),
        ]);
        let other = doc(vec![
            bw("2x1-bw-process", 1500.0, &[1490.0, 1500.0, 1510.0]),
            bw("4x1-bw-process", 2040.0, &[1940.0, 2040.0, 2140.0]),
            bw("only-here", 1.0, &[]),
        ]);
        let c = compare(&base, &[&other], Metrics::Main);
        // cv_pct is secondary: two metrics per record.
        assert_eq!(c.rows.len(), 4);
        let row = |t: &str, m: &str| {
            c.rows
                .iter()
                .find(|r| r.test == t && r.metric == m)
                .unwrap()
                .others[0]
                .clone()
                .unwrap()
        };
        let planted = row("2x1-bw-process", "bandwidth_mb_s");
        assert_eq!(planted.change_pct, Some(50.0));
        assert_eq!(planted.within_noise, Some(false));
        let small = row("4x1-bw-process", "bandwidth_mb_s");
        assert!((small.change_pct.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(small.within_noise, Some(true));
        // Latency dropped by half: + for a lower-is-better metric.
        assert_eq!(row("2x1-bw-process", "latency_ns").change_pct, Some(-50.0));
        assert_eq!(c.unmatched, [1]);
        assert_eq!(compare(&base, &[&other], Metrics::All).rows.len(), 6);
        // Named metrics alone, a secondary one included when named.
        let named = ["cv_pct".to_string(), "latency_ns".to_string()];
        let c = compare(&base, &[&other], Metrics::Named(&named));
        assert_eq!(c.rows.len(), 4);
        assert!(c.rows.iter().all(|r| named.contains(&r.metric)));
        assert_eq!(missing_metrics(&base, &named), Vec::<&str>::new());
        let wrong = ["cv_pct".to_string(), "no_such".to_string()];
        assert_eq!(missing_metrics(&base, &wrong), ["no_such"]);
    }

    #[test]
    fn a_missing_record_is_an_empty_cell() {
        let base = doc(vec![bw("a", 1.0, &[])]);
        let other = doc(vec![]);
        let c = compare(&base, &[&other, &base], Metrics::Main);
        assert!(c.rows[0].others[0].is_none());
        assert_eq!(c.rows[0].others[1].as_ref().unwrap().change_pct, Some(0.0));
    }
}
