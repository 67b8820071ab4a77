//! The peak probe's findings: noisy mixes, a write or non-temporal mix
//! implausibly far above the read of the same node, and a best figure far
//! above the matrix's saturated triad of the same cell. Memory shares its
//! bandwidth between reads and writes, so such a figure counts bytes that
//! did not all reach memory, or was measured wrongly.

use crate::analysis::checks::{implausible, noise};
use crate::view::Finding;
use crate::results::names::matrix::{kind as mx, param as mxp};
use crate::results::names::peak::{INTERLEAVE, kind, param};
use crate::results::names::{metric, param as shared, probe};
use crate::results::{Document, Record};

fn is(r: &Record, k: &str) -> bool {
    r.str_param(param::KIND) == Some(k)
}

/// `0->1, 2 thread(s)`: the cell and team a peak figure is of.
fn cell(r: &Record) -> String {
    let target = r.str_param(param::TARGET).unwrap_or("?");
    let c = r.u64_param(shared::CPU_NODE).map_or("?".into(), |c| c.to_string());
    format!(
        "{c}->{target}, {} thread(s)",
        r.u64_param(shared::THREADS).unwrap_or(0)
    )
}

fn mix(r: &Record) -> String {
    format!(
        "{} {}",
        r.str_param(param::MIX).unwrap_or("?"),
        r.str_param(param::STORE).unwrap_or("?")
    )
}

fn mb_s(r: &Record) -> Option<f64> {
    r.value(metric::BANDWIDTH_MB_S)
}

pub(super) fn findings(doc: &Document, records: &[&Record]) -> Vec<Finding> {
    let mixes: Vec<&Record> = records.iter().copied().filter(|r| is(r, kind::MIX)).collect();
    let mut out: Vec<Finding> = noise("peak injection", &mixes, |r| format!("{} {}", mix(r), cell(r)))
        .into_iter()
        .collect();
    out.extend(above_read(&mixes));
    out.extend(above_triad(doc, records));
    out
}

/// Per cell and team, the mix that passes its read the most, where one
/// passes it by more than the bound.
fn above_read(mixes: &[&Record]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut cells: Vec<String> = Vec::new();
    for r in mixes {
        if !cells.contains(&cell(r)) {
            cells.push(cell(r));
        }
    }
    for c in cells {
        let of: Vec<&Record> = mixes.iter().copied().filter(|r| cell(r) == c).collect();
        let Some(read) = of
            .iter()
            .filter(|r| r.str_param(param::MIX) == Some("read"))
            .filter_map(|r| mb_s(r))
            .reduce(f64::max)
        else {
            continue;
        };
        let worst = of
            .iter()
            .filter(|r| r.str_param(param::MIX) != Some("read"))
            .filter_map(|r| Some((*r, implausible(mb_s(r)?, read)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((r, x)) = worst {
            out.push(Finding::flag(format!(
                "peak injection {c}: {} at {:.0} MB/s is {x:.2}x the read figure of {read:.0} MB/s, where memory shares its bandwidth between reads and writes: stores counted once but moved as write-combined lines may explain it; otherwise the figure is suspect",
                mix(r),
                mb_s(r).unwrap_or(0.0)
            )));
        }
    }
    out
}

/// A local best figure far above the matrix's saturated triad of the same
/// cell.
fn above_triad(doc: &Document, records: &[&Record]) -> Vec<Finding> {
    let saturated = |c: u64| {
        doc.records
            .iter()
            .filter(|r| r.probe == probe::MATRIX && r.str_param(mxp::KIND) == Some(mx::SATURATED))
            .find(|r| r.node_pair() == Some((c, c)))
            .and_then(mb_s)
    };
    let mut out = Vec::new();
    for r in records.iter().filter(|r| is(r, kind::BEST)) {
        let Some(c) = r.u64_param(shared::CPU_NODE) else {
            continue;
        };
        if r.str_param(param::TARGET) == Some(INTERLEAVE)
            || r.str_param(param::TARGET) != Some(c.to_string().as_str())
        {
            continue;
        }
        let (Some(best), Some(triad)) = (mb_s(r), saturated(c)) else {
            continue;
        };
        if let Some(x) = implausible(best, triad) {
            out.push(Finding::flag(format!(
                "peak injection {}: best {} at {best:.0} MB/s is {x:.2}x the matrix's saturated triad of {triad:.0} MB/s on {c}->{c}: non-temporal stores counted once, or write-combining, may explain it; otherwise the figure is suspect",
                cell(r),
                mix(r)
            )));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Better;

    fn peak(k: &str, m: &str, store: &str, mb: f64) -> Record {
        Record::new(probe::PEAK, "p")
            .param(param::KIND, k)
            .param(param::MIX, m)
            .param(param::STORE, store)
            .param(param::TARGET, "0")
            .param(shared::CPU_NODE, 0)
            .param(shared::MEM_NODE, 0)
            .param(shared::THREADS, 2)
            .metric(metric::BANDWIDTH_MB_S, mb, "MB/s", Better::Higher)
            .metric(metric::CV_PCT, 1.0, "%", Better::Lower)
    }

    fn doc_with_triad(mb: f64) -> Document {
        let mut d = Document::new(&crate::topology::fixture("two-node"));
        d.records.push(
            Record::new(probe::MATRIX, "bandwidth_saturated 0->0")
                .param(mxp::KIND, mx::SATURATED)
                .param(shared::CPU_NODE, 0)
                .param(shared::MEM_NODE, 0)
                .metric(metric::BANDWIDTH_MB_S, mb, "MB/s", Better::Higher),
        );
        d
    }

    #[test]
    fn a_write_far_above_the_read_is_flagged() {
        let read = peak(kind::MIX, "read", "regular", 12_000.0);
        let nt = peak(kind::MIX, "write", "nontemporal", 36_000.0);
        let d = doc_with_triad(12_700.0);
        let f = findings(&d, &[&read, &nt]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].text.starts_with("peak injection 0->0, 2 thread(s): write nontemporal at 36000 MB/s is 3.00x the read figure of 12000 MB/s"),
            "{}",
            f[0].text
        );
        let fair = peak(kind::MIX, "write", "nontemporal", 14_000.0);
        assert!(findings(&d, &[&read, &fair]).is_empty());
    }

    #[test]
    fn a_best_far_above_the_saturated_triad_is_flagged() {
        let best = peak(kind::BEST, "write", "nontemporal", 36_000.0);
        let f = findings(&doc_with_triad(12_700.0), &[&best]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].text.starts_with("peak injection 0->0, 2 thread(s): best write nontemporal at 36000 MB/s is 2.83x the matrix's saturated triad of 12700 MB/s on 0->0"),
            "{}",
            f[0].text
        );
        assert!(findings(&doc_with_triad(30_000.0), &[&best]).is_empty());
    }
}
