//! Sweep output: sc-membench-compatible CSV (its nine columns in its order,
//! then numabench's own) and the human table with summary and scores.

use crate::analysis::sweep_summary::{Summary, summarize};
use crate::probes::sweep::SweepRow;
use crate::view::table::{Align, Table};
use std::fmt::Write;

/// sc-membench's columns, in its order.
pub const SC_MEMBENCH_COLUMNS: [&str; 9] = [
    "size_kb",
    "operation",
    "bandwidth_mb_s",
    "latency_ns",
    "latency_stddev_ns",
    "latency_samples",
    "threads",
    "iterations",
    "elapsed_s",
];

/// numabench's own columns, after sc-membench's.
pub const OWN_COLUMNS: [&str; 5] = [
    "variant",
    "bytes_per_element",
    "stream_bandwidth_mb_s",
    "placement_verified_pct",
    "huge_pct",
];

/// Notes after the CSV rows, one `# note: ...` line each: readers that take
/// `#` as a comment skip them, and a person reading the file sees why a
/// size is missing.
pub fn csv_notes(notes: &[String]) -> String {
    notes
        .iter()
        .map(|n| format!("# note: {}\n", super::escape(n)))
        .collect()
}

pub fn csv(rows: &[SweepRow]) -> String {
    let mut out = SC_MEMBENCH_COLUMNS
        .iter()
        .chain(&OWN_COLUMNS)
        .copied()
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{:.2},{:.2},{:.2},{},{},{},{:.6},{},{},{:.2},{:.1},{:.1}",
            r.size_kb,
            r.operation,
            r.bandwidth_mb_s,
            r.latency_ns,
            r.latency_stddev_ns,
            r.latency_samples,
            r.threads,
            r.iterations,
            r.elapsed_s,
            r.variant,
            r.bytes_per_element,
            r.stream_bandwidth_mb_s,
            r.placement_verified_pct,
            r.huge_pct
        );
    }
    out
}

/// MB/s (10^6 bytes/s) as `12.3 GB/s` or `850.1 MB/s`.
pub fn rate(mb_s: f64) -> String {
    if mb_s >= 1e6 {
        format!("{:.1} TB/s", mb_s / 1e6)
    } else if mb_s >= 1e3 {
        format!("{:.1} GB/s", mb_s / 1e3)
    } else {
        format!("{mb_s:.1} MB/s")
    }
}

fn size(kb: u64) -> String {
    if kb >= 1024 * 1024 && kb.is_multiple_of(1024 * 1024) {
        format!("{} GiB", kb >> 20)
    } else if kb >= 1024 && kb.is_multiple_of(1024) {
        format!("{} MiB", kb >> 10)
    } else {
        format!("{kb} KiB")
    }
}

/// The human view: one line per measurement, then the summary.
/// `partial`: a stop cut the sweep short, so the summary (peaks, averages
/// over sizes, RAM latency at the largest size) would describe a different
/// sweep and is left out.
pub fn table(rows: &[SweepRow], warnings: &[String], notes: &[String], partial: bool) -> String {
    let mut t = Table::new(
        &[
            "size",
            "op",
            "bandwidth",
            "STREAM-style",
            "latency",
            "cv",
            "threads",
            "variant",
            "on node",
            "huge",
        ],
        &[
            Align::Right,
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Left,
            Align::Right,
            Align::Right,
        ],
    );
    for r in rows {
        let is_lat = r.operation == "latency";
        t.row(vec![
            size(r.size_kb),
            r.operation.clone(),
            if is_lat {
                "-".into()
            } else {
                rate(r.bandwidth_mb_s)
            },
            if is_lat || r.stream_bandwidth_mb_s == r.bandwidth_mb_s {
                "-".into()
            } else {
                rate(r.stream_bandwidth_mb_s)
            },
            if is_lat {
                format!("{:.2} ns", r.latency_ns)
            } else {
                "-".into()
            },
            format!("{:.1}%", r.cv_pct),
            r.threads.to_string(),
            r.variant.clone(),
            format!("{:.0}%", r.placement_verified_pct),
            format!("{:.0}%", r.huge_pct),
        ]);
    }
    let mut out = t.render();
    out.push('\n');
    if partial {
        out.push_str("no summary: the sweep was stopped before its end\n");
    } else {
        out.push_str(&summary(&summarize(rows)));
    }
    for n in notes {
        let _ = writeln!(out, "note: {n}");
    }
    if !warnings.is_empty() {
        out.push_str("\nWARNING: scores may not be comparable due to non-default options:\n");
        for w in warnings {
            let _ = writeln!(out, "  - {w}");
        }
        out.push_str("For comparable scores, run without -t, -p or -s.\n");
    }
    out
}

fn summary(s: &Summary) -> String {
    let mut out = String::new();
    if !s.ops.is_empty() {
        let mut t = Table::new(
            &["bandwidth MB/s", "peak", "weighted avg"],
            &[Align::Left, Align::Right, Align::Right],
        );
        for o in &s.ops {
            t.row(vec![
                o.operation.clone(),
                format!("{:.0}", o.peak_mb_s),
                format!("{:.0}", o.weighted_avg_mb_s),
            ]);
        }
        out.push_str(&t.render());
    }
    if let Some((lat, kb)) = s.ram_latency {
        let _ = writeln!(out, "RAM latency: {lat:.1} ns (at {})", size(kb));
    }
    match &s.scores {
        Some(sc) => {
            let _ = writeln!(
                out,
                "scores: bandwidth {:.1} (mean of read, write, copy peaks in GB/s), latency {:.1} (1000 / ns), combined {:.0} (sqrt(bandwidth x latency) x 100)",
                sc.bandwidth, sc.latency, sc.combined
            );
        }
        None => out.push_str("scores: not computed (they need read, write, copy and latency)\n"),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_header_starts_with_sc_membench_columns_in_order() {
        let text = csv(&[]);
        assert_eq!(
            text.trim(),
            "size_kb,operation,bandwidth_mb_s,latency_ns,latency_stddev_ns,latency_samples,threads,iterations,elapsed_s,\
             variant,bytes_per_element,stream_bandwidth_mb_s,placement_verified_pct,huge_pct"
        );
    }

    #[test]
    fn rates_and_sizes() {
        assert_eq!(rate(850.14), "850.1 MB/s");
        assert_eq!(rate(12_345.0), "12.3 GB/s");
        assert_eq!(rate(2_612_561.0), "2.6 TB/s");
        assert_eq!(size(16), "16 KiB");
        assert_eq!(size(32768), "32 MiB");
        assert_eq!(size(1 << 20), "1 GiB");
    }
}
