//! Latency measurements as records: one per (CPU node, memory node,
//! pattern, page kind asked), the median ns per load with its spread,
//! every sample, and the verified placement.

use super::{Cell, Measured};
use crate::probes::measure::with_pattern;
use crate::results::names::latency::CHASE;
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Record};

/// The record of one measurement.
pub(crate) fn record(cell: &Cell) -> Record {
    let l = &cell.latency;
    let (c, m) = (cell.cpu_node, cell.mem_node);
    let name = format!("{CHASE} {} {} {c}->{m}", cell.pattern, cell.pages_asked);
    let rec = Record::new(probe::LATENCY, &name)
        .param(param::CPU_NODE, c)
        .param(param::MEM_NODE, m)
        .param(param::CPU, cell.cpu)
        .param(param::THREADS, 1)
        .param(param::SIZE_BYTES, l.size_bytes)
        .param(param::PAGES_ASKED, cell.pages_asked.to_string())
        .param(param::PAGE_SIZE, l.seen.page_kind.clone());
    let mut rec = with_pattern(rec, &cell.pattern, cell.pattern.spacing())
        .metric(metric::LATENCY_NS, l.median_ns(), "ns", Better::Lower)
        .metric(
            metric::LATENCY_STDDEV_NS,
            l.stddev_ns(),
            "ns",
            Better::Lower,
        )
        .metric(metric::CV_PCT, l.cv_pct(), "%", Better::Lower)
        .metric(metric::RUNTIME_S, l.elapsed_s, "s", Better::Lower);
    rec.samples
        .insert(metric::LATENCY_NS.into(), l.samples.clone());
    rec.placement = Some(l.seen.placement());
    rec
}

/// Every measurement's record, each with the run's count of chase
/// buffers; the notes go on the first.
pub(crate) fn records(m: &Measured) -> Vec<Record> {
    let mut out: Vec<Record> = m
        .cells
        .iter()
        .map(|c| record(c).param(param::CHASE_BUFFERS_BUILT, m.buffers_built))
        .collect();
    if let Some(first) = out.first_mut() {
        first.notes.extend(m.notes.iter().cloned());
        first.conditions.extend(m.conditions.iter().cloned());
    }
    out
}
