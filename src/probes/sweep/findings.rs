//! The sweep's findings: noisy sizes, and a write implausibly far above
//! the read of the same size (each counts its buffer once per pass, so a
//! write cannot move more than a read where both reach the same level).

use crate::analysis::checks::{implausible, noise};
use crate::view::Finding;
use crate::results::Record;
use crate::results::names::sweep::param as sw;
use crate::results::names::{metric, param};

fn label(r: &Record) -> String {
    format!(
        "{} at {}",
        r.str_param(sw::OPERATION).unwrap_or("?"),
        crate::units::bytes(r.u64_param(param::SIZE_BYTES).unwrap_or(0))
    )
}

fn of<'a>(records: &[&'a Record], op: &str) -> Vec<&'a Record> {
    records
        .iter()
        .copied()
        .filter(|r| r.str_param(sw::OPERATION) == Some(op))
        .collect()
}

pub(super) fn findings(records: &[&Record]) -> Vec<Finding> {
    let mut out: Vec<Finding> = noise(crate::results::names::probe::SWEEP, records, label).into_iter().collect();
    let reads = of(records, "read");
    let worst = of(records, "write")
        .into_iter()
        .filter_map(|w| {
            let size = w.u64_param(param::SIZE_BYTES);
            let read = reads
                .iter()
                .find(|r| r.u64_param(param::SIZE_BYTES) == size)?
                .value(metric::BANDWIDTH_MB_S)?;
            let write = w.value(metric::BANDWIDTH_MB_S)?;
            Some((w, write, read, implausible(write, read)?))
        })
        .max_by(|a, b| a.3.total_cmp(&b.3));
    if let Some((w, write, read, x)) = worst {
        out.push(Finding::flag(format!(
            "sweep: {} at {write:.0} MB/s is {x:.2}x the read of the same size ({read:.0} MB/s): a write moves no more than a read, so the write figure is suspect (stores the kernel dropped, or a buffer smaller than it says)",
            label(w)
        )));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Better;
    use crate::results::names::probe;

    fn point(op: &str, size: u64, mb: f64, cv: f64) -> Record {
        Record::new(probe::SWEEP, op)
            .param(sw::OPERATION, op)
            .param(param::SIZE_BYTES, size)
            .metric(metric::BANDWIDTH_MB_S, mb, "MB/s", Better::Higher)
            .metric(metric::CV_PCT, cv, "%", Better::Lower)
    }

    #[test]
    fn a_write_far_above_its_read_is_flagged() {
        let r = point("read", 1 << 30, 20_000.0, 1.0);
        let w = point("write", 1 << 30, 40_000.0, 1.0);
        let f = findings(&[&r, &w]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].text.starts_with("sweep: write at 1 GiB at 40000 MB/s is 2.00x the read of the same size (20000 MB/s)"),
            "{}",
            f[0].text
        );
        let fair = point("write", 1 << 30, 19_000.0, 1.0);
        assert!(findings(&[&r, &fair]).is_empty());
    }

    #[test]
    fn a_noisy_size_is_flagged() {
        let r = point("triad", 512 << 10, 60_000.0, 26.9);
        let f = findings(&[&r]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].text.contains("up to 26.9% (triad at 512 KiB)"), "{}", f[0].text);
    }
}
