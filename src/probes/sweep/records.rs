//! Sweep rows as results records, and records read back as rows: what the
//! view shows and the summary computes comes from the records alone, so a
//! saved results file renders as the command printed it.

use super::SweepRow;
use crate::analysis::sweep_summary::{self, Point, Summary};
use crate::kernels;
use crate::results::names::sweep::{
    LATENCY, NON_TEMPORAL, REGULAR, metric as own_metric, param as own,
};
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Condition, Document, Placement, Record};

/// A sweep row as a results-document record.
pub(crate) fn record(r: &SweepRow) -> Record {
    let mut rec = Record::new(probe::SWEEP, &format!("{} {}K", r.operation, r.size_kb))
        .param(param::SIZE_BYTES, r.size_kb * 1024)
        .param(own::OPERATION, r.operation.clone())
        .param(param::THREADS, r.threads)
        .param(param::VARIANT, r.variant.clone())
        .param(param::PAGE_SIZE, r.page_kind.clone())
        .param(own::BYTES_PER_ELEMENT, r.bytes_per_element)
        .param(own::ITERATIONS, r.iterations)
        .metric(metric::RUNTIME_S, r.elapsed_s, "s", Better::Lower);
    if let Some(k) = kernels::find(&r.variant) {
        let stores = if k.store == kernels::Store::NonTemporal {
            NON_TEMPORAL
        } else {
            REGULAR
        };
        rec = rec
            .param(own::ISA, k.isa.to_string())
            .param(own::STORES, stores);
    }
    let mut rec = if r.operation == LATENCY {
        latency_metrics(rec, r)
    } else {
        bandwidth_metrics(rec, r)
    };
    if let Some(p) = &r.pattern {
        rec = crate::probes::measure::with_pattern(rec, p, p.spacing());
    }
    rec.placement = Some(placement(r));
    rec.notes.extend(r.notes.iter().cloned());
    rec
}

fn latency_metrics(rec: Record, r: &SweepRow) -> Record {
    let mut rec = rec
        .metric(metric::LATENCY_NS, r.latency_ns, "ns", Better::Lower)
        .metric(
            metric::LATENCY_STDDEV_NS,
            r.latency_stddev_ns,
            "ns",
            Better::Lower,
        )
        .metric(metric::CV_PCT, r.cv_pct, "%", Better::Lower);
    rec.samples
        .insert(metric::LATENCY_NS.into(), r.samples.clone());
    rec
}

fn bandwidth_metrics(rec: Record, r: &SweepRow) -> Record {
    let mut rec = rec
        .metric(
            metric::BANDWIDTH_MB_S,
            r.bandwidth_mb_s,
            "MB/s",
            Better::Higher,
        )
        .metric(
            own_metric::STREAM_BANDWIDTH_MB_S,
            r.stream_bandwidth_mb_s,
            "MB/s",
            Better::Higher,
        )
        .metric(metric::CV_PCT, r.cv_pct, "%", Better::Lower);
    rec.samples
        .insert(metric::BANDWIDTH_MB_S.into(), r.samples.clone());
    // The two conventions differ by a constant factor per kernel.
    if r.bandwidth_mb_s > 0.0 {
        let ratio = r.stream_bandwidth_mb_s / r.bandwidth_mb_s;
        rec.samples.insert(
            own_metric::STREAM_BANDWIDTH_MB_S.into(),
            r.samples.iter().map(|s| s * ratio).collect(),
        );
    }
    rec
}

/// Where the row's pages were.
fn placement(r: &SweepRow) -> Placement {
    Placement {
        pages_by_node: r
            .pages_by_node
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        on_target_pct: Some(r.placement_verified_pct),
        huge_pct: r.huge_pct,
        cpus_seen: r.cpus_seen.clone(),
    }
}

/// The records of a sweep: one per row, the notes (sizes not measured)
/// and their conditions on the last.
pub(crate) fn records(
    rows: &[SweepRow],
    notes: &[String],
    conditions: &[Condition],
) -> Vec<Record> {
    let mut out: Vec<Record> = rows.iter().map(record).collect();
    if let Some(last) = out.last_mut() {
        last.notes.extend(notes.iter().cloned());
        last.conditions.extend(conditions.iter().cloned());
    }
    out
}

/// Keeps why the scores may not compare with a default run on the first
/// record, so the document alone renders the table's warning.
pub(crate) fn keep_warnings(doc: &mut Document, warnings: &[String]) {
    if let Some(first) = doc.records.first_mut()
        && !warnings.is_empty()
    {
        first
            .params
            .insert(own::SCORE_WARNINGS.into(), warnings.to_vec().into());
    }
}

/// A sweep record read back: the figures of one line of the table or the
/// CSV.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub size_kb: u64,
    pub operation: String,
    pub bandwidth_mb_s: f64,
    pub latency_ns: f64,
    pub latency_stddev_ns: f64,
    pub latency_samples: usize,
    pub threads: u64,
    /// `None` in files written before records kept it.
    pub iterations: Option<u64>,
    pub elapsed_s: f64,
    pub variant: String,
    pub bytes_per_element: u64,
    pub stream_bandwidth_mb_s: f64,
    pub placement_verified_pct: f64,
    pub huge_pct: f64,
    pub cv_pct: f64,
}

impl Row {
    pub(crate) fn is_latency(&self) -> bool {
        self.operation == LATENCY
    }
}

/// A metric, 0 where the record has none (latency for a bandwidth row).
fn figure(r: &Record, key: &str) -> f64 {
    r.value(key).unwrap_or(0.0)
}

/// The row of a measurement record; `None` for a record that holds only
/// notes (e.g. a stop before the first measurement).
pub(crate) fn row(r: &Record) -> Option<Row> {
    let operation = r.str_param(own::OPERATION).map(str::to_string)?;
    let size_kb = r.u64_param(param::SIZE_BYTES)? / 1024;
    let latency_samples = if operation == LATENCY {
        r.samples.get(metric::LATENCY_NS).map_or(0, Vec::len)
    } else {
        0
    };
    let placement = r.placement.as_ref();
    Some(Row {
        size_kb,
        bandwidth_mb_s: figure(r, metric::BANDWIDTH_MB_S),
        latency_ns: figure(r, metric::LATENCY_NS),
        latency_stddev_ns: figure(r, metric::LATENCY_STDDEV_NS),
        latency_samples,
        threads: r.u64_param(param::THREADS).unwrap_or(0),
        iterations: r.u64_param(own::ITERATIONS),
        elapsed_s: figure(r, metric::RUNTIME_S),
        variant: r
            .str_param(param::VARIANT)
            .map(str::to_string)
            .unwrap_or_default(),
        bytes_per_element: r.u64_param(own::BYTES_PER_ELEMENT).unwrap_or(0),
        stream_bandwidth_mb_s: figure(r, own_metric::STREAM_BANDWIDTH_MB_S),
        placement_verified_pct: placement.and_then(|p| p.on_target_pct).unwrap_or(0.0),
        huge_pct: placement.map_or(0.0, |p| p.huge_pct),
        cv_pct: figure(r, metric::CV_PCT),
        operation,
    })
}

/// The rows of `records`, in order.
pub(crate) fn rows(records: &[&Record]) -> Vec<Row> {
    records.iter().filter_map(|r| row(r)).collect()
}

/// Every note of `records`, in order.
pub(crate) fn notes(records: &[&Record]) -> Vec<String> {
    records.iter().flat_map(|r| r.notes.clone()).collect()
}

/// Why the scores may not compare with a default run.
pub(crate) fn warnings(records: &[&Record]) -> Vec<String> {
    records
        .iter()
        .filter_map(|r| r.strs_param(own::SCORE_WARNINGS))
        .flatten()
        .map(str::to_string)
        .collect()
}

/// Whether a stop cut the sweep short: its document has no end time.
pub(crate) fn stopped(doc: &Document) -> bool {
    doc.finished.is_none()
}

impl From<&Row> for Point {
    fn from(r: &Row) -> Point {
        Point {
            operation: r.operation.clone(),
            size_kb: r.size_kb,
            bandwidth_mb_s: r.bandwidth_mb_s,
            latency_ns: r.latency_ns,
        }
    }
}

impl From<&SweepRow> for Point {
    fn from(r: &SweepRow) -> Point {
        Point {
            operation: r.operation.clone(),
            size_kb: r.size_kb,
            bandwidth_mb_s: r.bandwidth_mb_s,
            latency_ns: r.latency_ns,
        }
    }
}

/// Peaks, weighted averages, RAM latency and scores of the sweep records
/// in `records` (records of other probes are left out).
pub(crate) fn summarize(records: &[&Record]) -> Summary {
    let own: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.probe == probe::SWEEP)
        .collect();
    sweep_summary::summarize(&rows(&own))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(op: &str, size_kb: u64) -> SweepRow {
        let lat = op == LATENCY;
        SweepRow {
            size_kb,
            operation: op.into(),
            bandwidth_mb_s: if lat { 0.0 } else { 1234.5678 },
            latency_ns: if lat { 87.654 } else { 0.0 },
            latency_stddev_ns: if lat { 1.25 } else { 0.0 },
            latency_samples: if lat { 3 } else { 0 },
            threads: if lat { 1 } else { 4 },
            iterations: if lat { 3 } else { 977 },
            elapsed_s: 0.123456789,
            variant: if lat { "chase" } else { "copy_portable" }.into(),
            bytes_per_element: if lat { 0 } else { 16 },
            stream_bandwidth_mb_s: if lat { 0.0 } else { 2469.1356 },
            placement_verified_pct: 99.5,
            huge_pct: 12.5,
            samples: vec![1.0, 2.0, 3.0],
            cv_pct: 4.5,
            cpus_seen: vec![0, 1],
            pages_by_node: [(0, 10)].into_iter().collect(),
            page_kind: "base".into(),
            pattern: None,
            notes: Vec::new(),
        }
    }

    #[test]
    fn a_record_reads_back_as_the_row_it_was_made_from() {
        for m in [measured("copy", 256), measured(LATENCY, 65536)] {
            let rec = record(&m);
            let r = row(&rec).unwrap();
            assert_eq!(r.size_kb, m.size_kb);
            assert_eq!(r.operation, m.operation);
            assert_eq!(r.bandwidth_mb_s, m.bandwidth_mb_s);
            assert_eq!(r.latency_ns, m.latency_ns);
            assert_eq!(r.latency_stddev_ns, m.latency_stddev_ns);
            assert_eq!(r.latency_samples, m.latency_samples);
            assert_eq!(r.threads, m.threads as u64);
            assert_eq!(r.iterations, Some(m.iterations));
            assert_eq!(r.elapsed_s, m.elapsed_s);
            assert_eq!(r.variant, m.variant);
            assert_eq!(r.bytes_per_element, m.bytes_per_element);
            assert_eq!(r.stream_bandwidth_mb_s, m.stream_bandwidth_mb_s);
            assert_eq!(r.placement_verified_pct, m.placement_verified_pct);
            assert_eq!(r.huge_pct, m.huge_pct);
            assert_eq!(r.cv_pct, m.cv_pct);
        }
    }

    #[test]
    fn notes_go_on_the_last_record_and_warnings_on_the_first() {
        let topo = crate::topology::fixture("two-node");
        let mut doc = Document::new(&topo);
        let limit = Condition::CutByTimeLimit { limit_s: 1.0 };
        doc.records = records(
            &[measured("read", 64), measured(LATENCY, 64)],
            &["128 KiB read not measured".to_string()],
            std::slice::from_ref(&limit),
        );
        keep_warnings(&mut doc, &["fixed thread count (-p 1)".to_string()]);
        let all: Vec<&Record> = doc.records.iter().collect();
        assert_eq!(doc.records[1].notes, ["128 KiB read not measured"]);
        assert_eq!(doc.records[1].conditions, [limit]);
        assert!(doc.records[0].conditions.is_empty());
        assert_eq!(notes(&all), ["128 KiB read not measured"]);
        assert_eq!(warnings(&all), ["fixed thread count (-p 1)"]);
        assert!(doc.records[0].has_param(own::SCORE_WARNINGS));
    }

    #[test]
    fn a_record_without_a_measurement_is_no_row() {
        let mut r = Record::new(probe::SWEEP, "interrupted");
        r.notes.push("stopped".into());
        assert_eq!(row(&r), None);
        assert_eq!(summarize(&[&r]).ops, Vec::new());
    }
}
