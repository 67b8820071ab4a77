//! The summary `run` prints, from the records of its results document.

use super::levels::Levels;
use crate::analysis::atlas::{Atlas, Grid};
use crate::analysis::sweep_summary::Summary;
use crate::results::names::{param, probe};
use crate::results::{Document, Record};
use crate::topology::MemoryLimit;
use crate::view::Probe;

/// The summary of `doc`, measured in `secs`, with the lines of the probes
/// of `registry`.
pub(super) fn summary(doc: &Document, secs: f64, registry: &[&dyn Probe]) -> String {
    let h = &doc.host;
    let mut out = format!(
        "{} ({}), {} node(s) with memory, {} CPU(s); measured in {secs:.0} s\n",
        crate::text::escape(&h.hostname),
        crate::text::escape(&h.cpu_model),
        h.topology.nodes.iter().filter(|n| n.has_memory).count(),
        h.topology.allowed.cpus.len()
    );
    let levels = super::levels::Levels::of(&h.topology, None);
    out.push_str(&matrix_lines(&Atlas::from_records(&doc.records), &levels));
    let records: Vec<&Record> = doc.records.iter().collect();
    out.push_str(&sweep_lines(
        &crate::probes::sweep::summarize(&records),
        &sweep_points(&records),
        &levels,
    ));
    out.push_str(&super::probe_lines::probe_lines(&doc.records, registry));
    out.push_str(&super::probe_lines::part_lines(&doc.records, registry));
    out.push_str(&cut_lines(&doc.records));
    out.push_str(&limit_line(h.topology.memory_limit.as_ref(), &doc.records));
    out
}

/// One line when a memory limit of the process cut some buffer down: the
/// figures above are then of smaller buffers than on the same machine
/// without it. A record whose buffer the limit cut says so by its
/// condition, naming the limit by its source.
fn limit_line(limit: Option<&MemoryLimit>, records: &[Record]) -> String {
    let Some(l) = limit else {
        return String::new();
    };
    if !records.iter().any(|r| r.scaled_by_memory_limit(&l.source)) {
        return String::new();
    }
    format!(
        "  memory limit: {}; buffers scaled down to fit (see the notes)\n",
        crate::text::escape(&l.describe())
    )
}

/// One line per part its time limit stopped early, from the records'
/// conditions: a figure missing from the lines above is then explained,
/// and the part's notes say how much of it was measured.
fn cut_lines(records: &[Record]) -> String {
    let mut cuts: Vec<(&str, f64)> = Vec::new();
    for r in records {
        if let Some(limit_s) = r.cut_by_time_limit()
            && !cuts.contains(&(r.probe.as_str(), limit_s))
        {
            cuts.push((r.probe.as_str(), limit_s));
        }
    }
    cuts.iter()
        .map(|(probe, limit_s)| {
            format!(
                "  {} cut short: time limit of {limit_s} s reached (its notes say what was measured)\n",
                crate::text::escape(probe)
            )
        })
        .collect()
}

/// The lowest and highest value of `g`'s local (or remote) cells.
fn range(g: &Grid, local: bool) -> Option<(f64, f64)> {
    let v: Vec<f64> = g
        .values
        .iter()
        .filter(|((c, m), _)| (c == m) == local)
        .map(|(_, v)| *v)
        .collect();
    let lo = v.iter().copied().reduce(f64::min)?;
    let hi = v.iter().copied().reduce(f64::max)?;
    Some((lo, hi))
}

fn shown(r: Option<(f64, f64)>, unit: &str, d: usize) -> String {
    match r {
        Some((lo, hi)) if (hi - lo).abs() < 0.5 => format!("{lo:.d$} {unit}"),
        Some((lo, hi)) => format!("{lo:.d$}-{hi:.d$} {unit}"),
        None => "-".into(),
    }
}

fn matrix_lines(a: &Atlas, levels: &Levels) -> String {
    let mut out = String::new();
    let local_remote = |g: &Grid, unit: &str, d: usize| {
        format!(
            "local {}, remote {}",
            shown(range(g, true), unit, d),
            shown(range(g, false), unit, d)
        )
    };
    out.push_str(&format!(
        "  triad, one thread:  {}\n",
        local_remote(&a.single, "MB/s", 0)
    ));
    out.push_str(&format!(
        "  triad, saturated:   {}\n",
        local_remote(&a.saturated, "MB/s", 0)
    ));
    // A chase short of memory's size still finds some of its lines in the
    // L3: say so, as the sweep's lines do.
    let level = match a.latency_size {
        Some(b) if (b as usize) < levels.memory_from() => {
            format!("; {}", levels.name(b as usize))
        }
        _ => String::new(),
    };
    out.push_str(&format!(
        "  idle latency:       {} ({}{}{level})\n",
        local_remote(&a.latency, "ns", 1),
        a.latency_chase(),
        a.latency_buffer()
    ));
    let (_, classes) = crate::analysis::placement::system_classes(a);
    out.push_str(&format!(
        "  bandwidth classes:  {}\n",
        classes
            .classes
            .iter()
            .map(|c| format!("<= {:.0} MB/s", c.max))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out
}

/// One sweep measurement as the summary shows it.
struct SweepPoint {
    operation: String,
    /// Per-thread bytes.
    size: usize,
    /// MB/s (each buffer counted once) or ns per load.
    value: f64,
    /// The chase that measured a latency, as `full-random chase on base
    /// pages`; `None` for bandwidth.
    chase: Option<String>,
}

/// Every sweep measurement.
fn sweep_points(records: &[&Record]) -> Vec<SweepPoint> {
    records
        .iter()
        .filter(|r| r.probe == probe::SWEEP)
        .filter_map(|r| {
            let row = crate::probes::sweep::records::row(r)?;
            let chase = row.is_latency().then(|| {
                let chase = crate::analysis::atlas::chase_label(r);
                match r.str_param(param::PAGE_SIZE) {
                    Some("thp") => format!("{chase}, {:.0}% huge", row.huge_pct),
                    _ => chase,
                }
            });
            Some(SweepPoint {
                value: if row.is_latency() {
                    row.latency_ns
                } else {
                    row.bandwidth_mb_s
                },
                size: row.size_kb as usize * 1024,
                operation: row.operation,
                chase,
            })
        })
        .collect()
}

/// Per operation its peak with the level it was measured in, and its
/// figure at the largest size where that is memory; then the latency at
/// the largest size, named the same way, with its chase and pages. The
/// sweep counts the buffer once per pass (sc-membench) where the lines
/// around it count every byte moved (STREAM), so its lines open by saying
/// so.
fn sweep_lines(s: &Summary, points: &[SweepPoint], levels: &Levels) -> String {
    let mut out = String::new();
    let size = |b: usize| crate::units::bytes(b as u64);
    let largest = |op: &str| {
        points
            .iter()
            .filter(|p| p.operation == op)
            .max_by_key(|p| p.size)
    };
    if !s.ops.is_empty() {
        out.push_str(
            "  sweep MB/s count the buffer once per pass, as sc-membench does; STREAM's count, as in the lines above, is 2x that for copy and 3x for triad\n",
        );
    }
    for o in &s.ops {
        let at_peak = points
            .iter()
            .find(|p| p.operation == o.operation && p.value == o.peak_mb_s)
            .map(|p| p.size);
        let peak = match at_peak {
            Some(b) => format!(
                "peak ({}) {:.0} MB/s at {}",
                levels.name(b),
                o.peak_mb_s,
                size(b)
            ),
            None => format!("peak {:.0} MB/s", o.peak_mb_s),
        };
        let memory = match largest(&o.operation) {
            Some(p) if p.size >= levels.memory_from() => format!(
                "memory ({}) {:.0} MB/s at {}",
                levels.name(p.size),
                p.value,
                size(p.size)
            ),
            Some(p) => format!(
                "no memory figure (largest size {}, {})",
                size(p.size),
                levels.name(p.size)
            ),
            None => String::new(),
        };
        out.push_str(&format!(
            "  sweep {:<6}        {peak}; {memory}; log2-weighted average {:.0} MB/s\n",
            o.operation, o.weighted_avg_mb_s
        ));
    }
    if let Some(p) = largest(crate::results::names::sweep::LATENCY) {
        let what = if p.size >= levels.memory_from() {
            "memory latency:    "
        } else {
            "latency (not RAM): "
        };
        let chase = p
            .chase
            .as_deref()
            .map(|c| format!("; {c}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {what} {:.1} ns at {} ({}{chase})\n",
            p.value,
            size(p.size),
            levels.name(p.size)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Condition;

    #[test]
    fn a_memory_limit_that_scaled_a_buffer_gets_one_line() {
        let l = MemoryLimit {
            headroom_bytes: 62 << 20,
            limit_bytes: 64 << 20,
            source: "memory cgroup /x (memory.limit_in_bytes)".into(),
        };
        let mut scaled = Record::new(probe::MATRIX, "matrix");
        scaled.conditions.push(Condition::ScaledByMemoryLimit {
            source: l.source.clone(),
        });
        let plain = Record::new(probe::SWEEP, "sweep");
        let text = limit_line(Some(&l), &[plain.clone(), scaled.clone(), scaled.clone()]);
        assert_eq!(
            text,
            "  memory limit: 62 MiB left under memory cgroup /x (memory.limit_in_bytes) of 64 MiB; buffers scaled down to fit (see the notes)\n"
        );
        // A limit that cut nothing, or no limit: no line; nor a note that
        // names the limit without its condition.
        let mut said = plain.clone();
        said.notes
            .push(format!("scaled down (half of the {})", l.describe()));
        assert_eq!(limit_line(Some(&l), &[plain, said]), "");
        assert_eq!(limit_line(None, &[scaled]), "");
    }

    #[test]
    fn a_part_its_time_limit_stopped_is_named_once_from_its_conditions() {
        let limit = |s: f64| Condition::CutByTimeLimit { limit_s: s };
        let mut cut = Record::new(probe::LATENCY, "chase");
        cut.notes
            .push("time limit reached: 1 of 2 measurements made".into());
        cut.conditions.push(limit(12.0));
        let whole = Record::new(probe::MLP, "mlp");
        let text = cut_lines(&[cut.clone(), cut, whole]);
        assert_eq!(
            text,
            "  latency cut short: time limit of 12 s reached (its notes say what was measured)\n"
        );
        assert_eq!(cut_lines(&[Record::new(probe::PEAK, "peak")]), "");
        // A note that says it, without the condition, is no cut; a stop by
        // a signal is none either.
        let mut peak = Record::new(probe::PEAK, "peak");
        peak.notes
            .push("time limit of 20 s reached: 4 of 12 measurement(s) made".into());
        let mut mlp = Record::new(probe::MLP, "mlp");
        mlp.conditions.push(Condition::CutBySignal { signal: 2 });
        assert_eq!(cut_lines(&[peak.clone(), mlp.clone()]), "");
        peak.conditions.push(limit(20.0));
        mlp.conditions.push(limit(0.5));
        assert_eq!(
            cut_lines(&[peak, mlp]),
            "  peak cut short: time limit of 20 s reached (its notes say what was measured)\n  \
             mlp cut short: time limit of 0.5 s reached (its notes say what was measured)\n"
        );
    }
    use crate::analysis::sweep_summary::summarize;
    use crate::probes::sweep::{self, SweepRow};

    fn row(size_kb: u64, operation: &str, bandwidth_mb_s: f64, latency_ns: f64) -> SweepRow {
        SweepRow {
            size_kb,
            operation: operation.into(),
            bandwidth_mb_s,
            latency_ns,
            latency_stddev_ns: 1.0,
            latency_samples: 3,
            threads: 2,
            iterations: 10,
            elapsed_s: 0.5,
            variant: "read_portable".into(),
            bytes_per_element: 8,
            stream_bandwidth_mb_s: bandwidth_mb_s,
            placement_verified_pct: 100.0,
            huge_pct: 0.0,
            samples: vec![bandwidth_mb_s.max(latency_ns)],
            cv_pct: 1.0,
            cpus_seen: vec![0],
            pages_by_node: Default::default(),
            page_kind: "base".into(),
            pattern: None,
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_sweep_lines_name_the_level_of_each_figure() {
        let rows = vec![
            row(16, "read", 12345.678, 0.0),
            row(1 << 20, "read", 4321.5, 0.0),
            row(16, "copy", 9000.25, 0.0),
            row(4096, "copy", 3000.75, 0.0),
            row(16, "latency", 0.0, 1.25),
            row(1 << 20, "latency", 0.0, 97.5),
        ];
        let records: Vec<Record> = rows.iter().map(sweep::records::record).collect();
        let refs: Vec<&Record> = records.iter().collect();
        let levels = Levels {
            l1: 32 << 10,
            l2: 1 << 20,
            l3: 32 << 20,
        };
        let lines = sweep_lines(&sweep::summarize(&refs), &sweep_points(&refs), &levels);
        assert!(
            lines.starts_with("  sweep MB/s count the buffer once per pass, as sc-membench"),
            "{lines}"
        );
        // The same summary as the rows give.
        assert_eq!(sweep::summarize(&refs).ops, summarize(&rows).ops);
        assert!(
            lines.contains("sweep read          peak (L1) 12346 MB/s at 16 KiB; memory (memory, 32x L3) 4322 MB/s at 1 GiB;"),
            "{lines}"
        );
        // 4 MiB is an eighth of this L3: no memory figure for copy.
        assert!(
            lines.contains("no memory figure (largest size 4 MiB, L3)"),
            "{lines}"
        );
        assert!(
            lines.contains(
                "memory latency:     97.5 ns at 1 GiB (memory, 32x L3; full-random chase on base pages)"
            ),
            "{lines}"
        );
    }

    #[test]
    fn the_idle_latency_line_names_its_chase_and_pages() {
        let mut a = Atlas::default();
        a.latency.values.insert((0, 0), 150.0);
        a.latency.values.insert((0, 1), 240.0);
        let levels = Levels {
            l1: 32 << 10,
            l2: 1 << 20,
            l3: 32 << 20,
        };
        let line = |a: &Atlas| {
            matrix_lines(a, &levels)
                .lines()
                .find(|l| l.contains("idle latency"))
                .unwrap()
                .to_string()
        };
        assert_eq!(
            line(&a),
            "  idle latency:       local 150.0 ns, remote 240.0 ns (full-random chase)"
        );
        a.latency_pattern = Some("page-local:256K".into());
        a.latency_chase = Some("page-local:256K chase on thp pages".into());
        assert_eq!(
            line(&a),
            "  idle latency:       local 150.0 ns, remote 240.0 ns (page-local:256K chase on thp pages)"
        );
        a.latency_size = Some(1_258_291_200);
        assert_eq!(
            line(&a),
            "  idle latency:       local 150.0 ns, remote 240.0 ns (page-local:256K chase on thp pages, 1.2 GiB)"
        );
        // Under 16x this L3 the chase is named by the level it lives in.
        a.latency_size = Some(256 << 20);
        assert_eq!(
            line(&a),
            "  idle latency:       local 150.0 ns, remote 240.0 ns (page-local:256K chase on thp pages, 256 MiB; L3 and memory, 8x L3)"
        );
    }
}
