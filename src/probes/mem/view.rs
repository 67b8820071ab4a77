//! How `mem` records are shown, from the records alone: perf's text (the
//! banner, numabench's `#` lines and perf's metric lines), a table of
//! perf's figures and one of where the memory was, one CSV line per run,
//! and the report's table of every metric.

use super::Summary;
use super::text;
use crate::probes::workload::areas::node_shares;
use crate::probes::workload::layout::AreaPlacement;
use crate::probes::workload::vmstat;
use crate::results::names::mem::{area, metric as mm, param as mp};
use crate::results::names::{metric, param, probe};
use crate::results::{Document, Record};
use crate::text::escape;
use crate::view::{Block, Csv, Section, View, series_charts};
use serde_json::Value;
use std::collections::BTreeMap;

/// The `mem` probe's view.
pub(crate) struct MemView;

impl View for MemView {
    fn probe(&self) -> &'static str {
        probe::MEM
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "perf bench numa mem's workload: the figures perf prints for each test (total speed in GB/s, runtimes, convergence), and where each task's memory ended up.",
        )
    }

    fn sections(&self, _doc: &Document, records: &[&Record]) -> Vec<Section> {
        let mut out = vec![figures(records)];
        if records.iter().any(|r| !placement_of(r).is_empty()) {
            out.push(placement(records));
        }
        out
    }

    fn text(&self, _doc: &Document, records: &[&Record]) -> Option<String> {
        let text: String = records.iter().map(|r| perf_text(r)).collect();
        Some(escape_lines(&text))
    }

    fn csv(&self, _doc: &Document, records: &[&Record]) -> Option<Csv> {
        Some(csv(records))
    }

    fn blocks(&self, _doc: &Document, records: &[&Record]) -> Vec<Block> {
        let mut out = vec![Block::Section(crate::view::section::metrics_table(
            "", records,
        ))];
        for r in records {
            out.extend(series_charts(&[*r]).into_iter().map(Block::Chart));
            out.extend(
                r.notes
                    .iter()
                    .map(|n| Block::Note(format!("{}: {n}", r.name))),
            );
        }
        out
    }
}

/// A suite test's record (it carries its test's name).
fn in_suite(r: &Record) -> bool {
    r.has_param(param::TEST)
}

/// perf's figures of a run that ran.
fn summary(r: &Record) -> Option<Summary> {
    let v = |n: &str| r.value(n);
    Some(Summary {
        convergence_latency_s: v(mm::CONVERGENCE_LATENCY_S),
        runtime_max_s: v(mm::RUNTIME_MAX_S)?,
        runtime_min_s: v(mm::RUNTIME_MIN_S)?,
        runtime_avg_s: v(mm::RUNTIME_AVG_S)?,
        spread_pct: v(mm::SPREAD_RUNTIME_PCT)?,
        data_per_thread_gb: v(mm::DATA_PER_THREAD_GB)?,
        data_total_gb: v(mm::DATA_TOTAL_GB)?,
        runtime_per_byte_ns: v(mm::RUNTIME_PER_BYTE_PER_THREAD_NS)?,
        thread_speed_gb_s: v(mm::THREAD_SPEED_GB_S)?,
        total_speed_gb_s: v(mm::TOTAL_SPEED_GB_S)?,
    })
}

/// Each area's placement as the record keeps it, with its name and the
/// share on its bound node.
struct Area {
    name: String,
    placement: AreaPlacement,
    bound: Option<(usize, f64)>,
}

fn placement_of(r: &Record) -> Vec<Area> {
    r.list_param(mp::MEMORY_PLACEMENT)
        .map_or_else(Vec::new, |list| list.iter().filter_map(area_of).collect())
}

fn area_of(v: &Value) -> Option<Area> {
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    let pages_by_node: BTreeMap<usize, u64> = v
        .get(area::PAGES_BY_NODE)?
        .as_object()?
        .iter()
        .filter_map(|(k, c)| Some((k.parse().ok()?, c.as_u64()?)))
        .collect();
    let bound = v
        .get(area::BOUND_NODE)
        .and_then(Value::as_u64)
        .zip(v.get(area::ON_BOUND_NODE_PCT).and_then(Value::as_f64))
        .map(|(n, pct)| (n as usize, pct));
    Some(Area {
        name: v.get(area::AREA)?.as_str()?.to_string(),
        placement: AreaPlacement {
            pages_by_node,
            not_present: n(area::PAGES_NOT_PRESENT),
            errors: 0,
            pages_checked: n(area::PAGES_CHECKED),
            pages_total: n(area::PAGES_TOTAL),
            huge_bytes: n(area::HUGE_BYTES),
            bytes: n(area::BYTES),
        },
        bound,
    })
}

/// One record as perf's text: the banner, the notes and numabench's `#`
/// lines, perf's metric lines (quiet for a suite test, as the suite runs).
fn perf_text(r: &Record) -> String {
    let command = r.str_param(param::COMMAND).unwrap_or("");
    let name = format!("{},", r.name);
    let mut s = text::running(&name, command);
    for n in &r.notes {
        s.push_str(&format!(" # {n}\n"));
    }
    let Some(sum) = summary(r) else {
        return s;
    };
    let areas = placement_of(r);
    if !areas.is_empty() {
        let sampled = areas
            .iter()
            .any(|a| a.placement.pages_checked < a.placement.pages_total);
        s.push_str(&text::placement_heading(sampled));
        for a in &areas {
            s.push_str(&text::area_line(&a.name, &a.placement, a.bound));
        }
    }
    s.push_str(&text::balancing_line(&balancing(r)));
    s.push_str(&text::cpu_line(
        r.value(metric::USER_TIME_S).unwrap_or(0.0),
        r.value(metric::SYSTEM_TIME_S).unwrap_or(0.0),
    ));
    s.push_str(&text::results(&name, &sum, in_suite(r)));
    s
}

/// The NUMA-balancing counters a record holds.
fn balancing(r: &Record) -> BTreeMap<String, u64> {
    vmstat::KEYS
        .iter()
        .filter_map(|k| Some((k.to_string(), r.value(k)? as u64)))
        .collect()
}

/// Text from a results file, each line made safe for a terminal.
fn escape_lines(text: &str) -> String {
    text.split('\n')
        .map(|l| escape(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn fixed(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// perf's figures, one row per run.
fn figures(records: &[&Record]) -> Section {
    let mut s = Section::new("perf bench numa mem");
    s.header = [
        "test",
        "tasks",
        "access",
        "runtime max s",
        "runtime avg s",
        "spread %",
        "data GB",
        "GB/s/thread",
        "GB/s total",
        "converged in s",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    for r in records {
        let tasks = match (r.u64_param(param::PROCESSES), r.u64_param(param::THREADS)) {
            (Some(p), Some(t)) => format!("{p}x{t}"),
            _ => "-".into(),
        };
        let access = r.str_param(mp::ACCESS);
        s.rows.push(vec![
            r.name.clone(),
            tasks,
            access.unwrap_or("-").to_string(),
            fixed(r.value(mm::RUNTIME_MAX_S), 3),
            fixed(r.value(mm::RUNTIME_AVG_S), 3),
            fixed(r.value(mm::SPREAD_RUNTIME_PCT), 3),
            fixed(r.value(mm::DATA_TOTAL_GB), 3),
            fixed(r.value(mm::THREAD_SPEED_GB_S), 3),
            fixed(r.value(mm::TOTAL_SPEED_GB_S), 3),
            fixed(r.value(mm::CONVERGENCE_LATENCY_S), 3),
        ]);
    }
    s.lines
        .push("GB = 10^9 bytes; the run's metrics are perf's".into());
    for r in records {
        for n in &r.notes {
            s.lines.push(format!("{}: {n}", r.name));
        }
    }
    s
}

/// Where each run's memory was at the end, one row per area.
fn placement(records: &[&Record]) -> Section {
    let mut s = Section::new("memory placement at the end (move_pages)");
    s.header = [
        "test",
        "area",
        "size",
        "pages by node",
        "on bound node",
        "THP",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    for r in records {
        for a in placement_of(r) {
            let p = &a.placement;
            s.rows.push(vec![
                r.name.clone(),
                a.name,
                crate::units::bytes(p.bytes),
                node_shares(&p.pages_by_node),
                a.bound
                    .map_or("-".into(), |(n, pct)| format!("{pct:.0}% on node {n}")),
                format!(
                    "{:.0}%",
                    p.huge_bytes as f64 * 100.0 / p.bytes.max(1) as f64
                ),
            ]);
        }
    }
    s
}

/// The CSV columns after the test's name: params, then metrics.
const CSV_PARAMS: [&str; 5] = [
    param::PROCESSES,
    param::THREADS,
    param::TASKS,
    param::SIZE_BYTES,
    mp::ACCESS,
];
const CSV_METRICS: [&str; 16] = [
    mm::RUNTIME_MAX_S,
    mm::RUNTIME_MIN_S,
    mm::RUNTIME_AVG_S,
    mm::SPREAD_RUNTIME_PCT,
    mm::DATA_PER_THREAD_GB,
    mm::DATA_TOTAL_GB,
    mm::RUNTIME_PER_BYTE_PER_THREAD_NS,
    mm::THREAD_SPEED_GB_S,
    mm::TOTAL_SPEED_GB_S,
    mm::CONVERGENCE_LATENCY_S,
    mm::CONVERGED_AT_S,
    mm::STARTUP_S,
    metric::USER_TIME_S,
    metric::SYSTEM_TIME_S,
    metric::NUMA_HINT_FAULTS,
    metric::NUMA_PAGES_MIGRATED,
];

/// One line per run: its params and every figure at full precision, blank
/// where a run has none; notes after the rows.
fn csv(records: &[&Record]) -> Csv {
    let mut out = Csv {
        header: std::iter::once("test")
            .chain(CSV_PARAMS)
            .chain(CSV_METRICS)
            .map(String::from)
            .collect(),
        ..Default::default()
    };
    for r in records {
        let params = CSV_PARAMS
            .iter()
            .map(|k| r.param_shown(k).unwrap_or_default());
        let metrics = CSV_METRICS
            .iter()
            .map(|k| r.value(k).map_or(String::new(), |v| format!("{v}")));
        out.rows.push(
            std::iter::once(r.name.clone())
                .chain(params)
                .chain(metrics)
                .collect(),
        );
        for n in &r.notes {
            out.notes.push(format!("{}: {n}", r.name));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::mem::records;
    use crate::probes::workload::outcome::RunOutput;
    use crate::probes::workload::params::{RawOptions, resolve};
    use crate::sys::CpuTimes;

    fn run() -> (Document, Record, String) {
        let topo = crate::topology::fixture("two-node");
        let raw = RawOptions {
            nr_proc: Some(2),
            nr_threads: Some(1),
            mb_proc: Some("1".into()),
            memnodes: Some("1".into()),
            ..RawOptions::seed_defaults()
        };
        let p = resolve(&raw, &topo).unwrap();
        let area = AreaPlacement {
            pages_by_node: [(0, 64), (1, 192)].into_iter().collect(),
            pages_checked: 256,
            pages_total: 256,
            huge_bytes: 0,
            bytes: 1 << 20,
            ..Default::default()
        };
        let out = RunOutput {
            runtime_max_s: 2.0,
            task_runtime_ns: vec![1_900_000_000, 2_000_000_000],
            task_bytes: vec![3_000_000_000, 2_000_000_000],
            task_loops: vec![3, 2],
            process_placement: vec![Some(area.clone()), Some(area)],
            numa_balancing: [("numa_pte_updates".to_string(), 7)].into_iter().collect(),
            cpu: CpuTimes {
                user_s: 3.5,
                system_s: 0.25,
            },
            ..Default::default()
        };
        let s = Summary::of(&p, &out);
        let command = "numabench mem -p 2 -t 1 -P 1 -M 1";
        let live = text::running("main,", command)
            + &text::extras(&p, &out, false)
            + &text::results("main,", &s, false);
        let r = records::record("main", command, &p, &out, &s);
        (Document::new(&topo), r, live)
    }

    #[test]
    fn text_from_the_record_is_the_live_text_after_the_header() {
        let (doc, r, live) = run();
        let notes: String = r.notes.iter().map(|n| format!(" # {n}\n")).collect();
        let banner_end = live.find("\"\n").unwrap() + 2;
        let want = format!("{}{notes}{}", &live[..banner_end], &live[banner_end..]);
        assert_eq!(MemView.text(&doc, &[&r]).unwrap(), want);
        assert!(want.contains("75% on bound node 1"), "{want}");
    }

    #[test]
    fn csv_has_one_line_per_run_with_full_precision() {
        let (doc, r, _) = run();
        let c = MemView.csv(&doc, &[&r]).unwrap();
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.header.len(), c.rows[0].len());
        let col = |h: &str| c.header.iter().position(|x| x == h).unwrap();
        assert_eq!(c.rows[0][col("test")], "main");
        assert_eq!(c.rows[0][col(mm::DATA_TOTAL_GB)], "5");
        assert_eq!(c.rows[0][col(mm::CONVERGENCE_LATENCY_S)], "");
        assert_eq!(c.rows[0][col(mp::ACCESS)], "read+write");
    }

    #[test]
    fn the_report_shows_every_metric_then_each_runs_notes() {
        let (doc, r, _) = run();
        let blocks = MemView.blocks(&doc, &[&r]);
        let Block::Section(s) = &blocks[0] else {
            panic!("{blocks:?}")
        };
        assert!(s.title.is_empty());
        assert_eq!(s.header.len(), r.metrics.len() + 1);
        assert_eq!(blocks.len(), 1 + r.notes.len());
    }

    #[test]
    fn memory_per_node_is_a_series_and_its_convergence_a_metric() {
        use crate::probes::workload::outcome::MemorySeries;
        use crate::probes::workload::watch::Look;
        use crate::results::names::mem::series;
        let topo = crate::topology::fixture("two-node");
        let raw = RawOptions {
            nr_proc: Some(2),
            nr_threads: Some(1),
            mb_proc: Some("1".into()),
            measure_convergence: true,
            ..RawOptions::seed_defaults()
        };
        let p = resolve(&raw, &topo).unwrap();
        let look = |t: f64, a: u64, b: u64| Look {
            t,
            mem: [(0, a << 20), (1, b << 20)].into_iter().collect(),
            threads: [(0, 1), (1, 1)].into_iter().collect(),
            ..Default::default()
        };
        let mut out = RunOutput {
            runtime_max_s: 5.0,
            task_runtime_ns: vec![5_000_000_000; 2],
            task_bytes: vec![1_000_000_000; 2],
            memory: Some(MemorySeries {
                nodes: vec![0, 1],
                looks: vec![look(0.0, 2, 0), look(1.0, 1, 1)],
                followed_at_s: Some(1.0),
                method: "sampled",
                ..Default::default()
            }),
            stop_held: true,
            ..Default::default()
        };
        out.tracker.update(true, 1.0);
        let s = Summary::of(&p, &out);
        // The stop waited for the memory: the latency is the CPU side's.
        assert_eq!(s.convergence_latency_s, Some(1.0));
        let r = records::record("main", "numabench mem", &p, &out, &s);
        let m = r
            .series
            .iter()
            .find(|x| x.name == series::MEMORY_PER_NODE)
            .unwrap();
        assert_eq!(m.x, [0.0, 1.0]);
        assert_eq!(m.lines[1].y, [0.0, 1.0]);
        assert_eq!(r.metrics[mm::MEMORY_CONVERGED_AT_S].value, 1.0);
        assert!(
            r.notes
                .iter()
                .any(|n| n.starts_with("memory per node: 2 looks"))
        );
    }

    #[test]
    fn a_skipped_test_shows_its_reason() {
        let r = records::skipped("RAM-bw-remote", "numabench mem -p 1", "needs 2 nodes", &[]);
        let (doc, _, _) = run();
        let text = MemView.text(&doc, &[&r]).unwrap();
        assert_eq!(
            text,
            "\n # Running RAM-bw-remote, \"numabench mem -p 1\"\n # skipped: needs 2 nodes\n"
        );
        let sections = MemView.sections(&doc, &[&r]);
        assert_eq!(sections.len(), 1);
        assert_eq!(sections[0].rows[0][1], "-");
    }
}
