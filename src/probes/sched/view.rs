//! How a sched run is shown, from its records alone: numa_test's residency
//! table (a column per node, iSched, MSched, the memory's node and the
//! marks) and its totals, a CSV row per task, and the runnable-tasks chart
//! with the burst marked.

use crate::results::names::sched::{burst_state, metric, param, record, task, task_metric};
use crate::results::names::{self, probe};
use crate::results::{Document, Record};
use crate::text::escape;
use crate::view::table::{Align, Table};
use crate::view::{Block, Chart, Csv, Marker, Section, View, chart};
use serde_json::Value;

/// The sched probe's view.
pub struct SchedView;

impl View for SchedView {
    fn probe(&self) -> &'static str {
        probe::SCHED
    }

    fn heading(&self) -> String {
        format!("Scheduler placement ({})", probe::SCHED)
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "numa_test: unbound tasks each updating their own array, disturbed by a burst of short tasks; for each task, the share of its time on each node and whether it ended away from its memory. A good scheduler keeps a task on the node of its memory through the burst.",
        )
    }

    fn sections(&self, _doc: &Document, records: &[&Record]) -> Vec<Section> {
        sections(records)
    }

    fn text(&self, _doc: &Document, records: &[&Record]) -> Option<String> {
        Some(text(records))
    }

    fn csv(&self, _doc: &Document, records: &[&Record]) -> Option<Csv> {
        Some(csv(records))
    }

    fn blocks(&self, _doc: &Document, records: &[&Record]) -> Vec<Block> {
        let mut out: Vec<Block> = sections(records).into_iter().map(Block::Section).collect();
        out.extend(charts(records).into_iter().map(Block::Chart));
        out
    }
}

// --- Reading the records ------------------------------------------------

fn num(r: &Record, k: &str) -> Option<f64> {
    r.params.get(k).and_then(Value::as_f64)
}

fn node_param(r: &Record, k: &str) -> String {
    r.params
        .get(k)
        .and_then(Value::as_u64)
        .map_or("-".into(), |v| v.to_string())
}

fn flag(r: &Record, k: &str) -> bool {
    r.params.get(k).and_then(Value::as_bool) == Some(true)
}

fn value(r: &Record, k: &str) -> Option<f64> {
    r.metrics.get(k).map(|m| m.value)
}

fn secs(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

/// The task records (those with a task number), in task order.
fn task_records<'a>(records: &[&'a Record]) -> Vec<&'a Record> {
    let mut t: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.params.contains_key(task::TASK))
        .collect();
    t.sort_by_key(|r| {
        r.params
            .get(task::TASK)
            .and_then(Value::as_u64)
            .unwrap_or(0)
    });
    t
}

fn summary_record<'a>(records: &[&'a Record]) -> Option<&'a Record> {
    records.iter().copied().find(|r| r.name == record::SUMMARY)
}

/// The node columns: the summary's list, plus any node a task has a share on.
fn columns(summary: Option<&Record>, tasks: &[&Record]) -> Vec<usize> {
    let mut nodes: Vec<usize> = summary
        .and_then(|s| s.params.get(param::NODES))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_u64())
                .map(|v| v as usize)
                .collect()
        })
        .unwrap_or_default();
    for t in tasks {
        if let Some(m) = shares(t) {
            for k in m.keys().filter_map(|k| k.parse::<usize>().ok()) {
                if !nodes.contains(&k) {
                    nodes.push(k);
                }
            }
        }
    }
    nodes.sort_unstable();
    nodes
}

fn shares(t: &Record) -> Option<&serde_json::Map<String, Value>> {
    t.params
        .get(task::TIME_PCT_BY_NODE)
        .and_then(Value::as_object)
}

/// A task's share of time on `node`, in %.
fn share(t: &Record, node: usize) -> Option<f64> {
    shares(t)
        .and_then(|m| m.get(&node.to_string()))
        .and_then(Value::as_f64)
}

/// numa_test's header line: what ran.
fn title(s: Option<&Record>) -> String {
    let Some(s) = s else {
        return format!("numabench {}", probe::SCHED);
    };
    let n = |k: &str| num(s, k).map_or("?".into(), |v| format!("{v}"));
    let bytes =
        num(s, names::param::SIZE_BYTES).map_or("?".into(), |b| crate::units::bytes(b as u64));
    let burst = match num(s, param::BURST_AT_S) {
        Some(at) => format!("burst of {} group(s) at {at} s", n(param::BURST_GROUPS)),
        None => "no burst".into(),
    };
    format!(
        "numabench {}: {} tasks x {} elements ({bytes} each), {} passes, unbound; {burst}; looked at every {} ms",
        probe::SCHED,
        n(names::param::TASKS),
        n(param::SIZE_ELEMENTS),
        n(param::PASSES),
        n(param::INTERVAL_MS),
    )
}

// --- Sections -------------------------------------------------------------

/// The residency table and the totals.
pub fn sections(records: &[&Record]) -> Vec<Section> {
    let tasks = task_records(records);
    let summary = summary_record(records);
    vec![residency(summary, &tasks), totals(summary, &tasks)]
}

/// A row per task: its share on each node, iSched, MSched, the memory's
/// node, the marks and its CPU times.
fn residency(summary: Option<&Record>, tasks: &[&Record]) -> Section {
    let nodes = columns(summary, tasks);
    let mut table = Section::new(title(summary));
    table.header = std::iter::once("Task".to_string())
        .chain(nodes.iter().map(|n| format!("node{n:02}")))
        .chain(
            [
                "iSched",
                "MSched",
                "",
                "Mem",
                "",
                "UserTime(s)",
                "SysTime(s)",
            ]
            .iter()
            .map(|s| s.to_string()),
        )
        .collect();
    for t in tasks {
        let mark = |k: &str, mark: &str| if flag(t, k) { mark } else { "" }.to_string();
        let mut row = vec![
            t.params
                .get(task::TASK)
                .map_or("?".into(), |v| v.to_string()),
        ];
        row.extend(
            nodes
                .iter()
                .map(|&n| share(t, n).map_or("-".into(), |v| format!("{v:.1}"))),
        );
        row.extend([
            node_param(t, task::START_NODE),
            node_param(t, task::MOST_TIME_NODE),
            mark(task::MOVED, "*"),
            node_param(t, task::MEMORY_NODE),
            mark(task::AWAY_FROM_MEMORY, "!"),
            secs(value(t, names::metric::USER_TIME_S)),
            secs(value(t, names::metric::SYSTEM_TIME_S)),
        ]);
        table.rows.push(row);
    }
    table.lines.extend(
        [
            "nodeNN: % of the task's user time on the node's CPUs",
            "iSched: the node it started on; MSched: the node with most of its time;",
            "Mem: the node with most of its pages at the end of its work",
            "*: MSched differs from iSched (it was moved for most of its run)",
            "!: MSched differs from Mem (it ran mostly away from its memory)",
        ]
        .map(String::from),
    );
    table
}

/// numa_test's totals (E, H, E - H), the sampler's cost, and every note.
fn totals(summary: Option<&Record>, tasks: &[&Record]) -> Section {
    let mut totals = Section::new("totals");
    totals.header = vec!["".into(), "value".into(), "".into()];
    if let Some(s) = summary {
        let m = |k: &str| value(s, k);
        let mut row = |name: &str, v: Option<f64>, about: String| {
            let v = v.map_or("-".into(), |v| format!("{v:.2} s"));
            totals.rows.push(vec![name.into(), v, about]);
        };
        row(
            "AverageUserTime",
            m(metric::AVERAGE_USER_TIME_S),
            String::new(),
        );
        row(
            "ElapsedTime (E)",
            m(metric::ELAPSED_S),
            "first fork to the last task's end".into(),
        );
        row(
            "TotalUserTime",
            m(metric::TOTAL_USER_TIME_S),
            "of the tasks".into(),
        );
        row(
            "TotalSysTime",
            m(metric::TOTAL_SYSTEM_TIME_S),
            "of the tasks".into(),
        );
        row("BurstTime (H)", m(metric::BURST_S), burst_about(s));
        let within = match (m(metric::BURST_WITHIN_TASKS_S), m(metric::BURST_S)) {
            (Some(w), Some(h)) if w < h => format!("H counted only within E: {w:.2} s"),
            _ => String::new(),
        };
        row("E - H", m(metric::ELAPSED_MINUS_BURST_S), within);
        totals.rows.push(sampler_row(s));
        totals.lines.extend(s.notes.iter().cloned());
    }
    for t in tasks {
        for n in &t.notes {
            totals.lines.push(format!("{}: {n}", t.name));
        }
    }
    totals
}

/// What the burst did: its processes, messages and CPU where it ran, else
/// why it did not.
fn burst_about(s: &Record) -> String {
    let count = |k: &str| num(s, k).map_or("?".into(), |v| v.to_string());
    match s.params.get(param::BURST).and_then(Value::as_str) {
        Some(burst_state::RAN) => format!(
            "{} processes from {} s; {} of {} messages; {} s CPU",
            count(param::BURST_PROCESSES),
            secs(num(s, param::BURST_GO_AT_S)),
            count(param::BURST_MESSAGES_RECEIVED),
            count(param::BURST_MESSAGES_EXPECTED),
            secs(value(s, metric::BURST_CPU_S)),
        ),
        other => other.unwrap_or("?").to_string(),
    }
}

fn sampler_row(s: &Record) -> Vec<String> {
    vec![
        "Sampler CPU".into(),
        value(s, metric::SAMPLER_CPU_S).map_or("-".into(), |v| format!("{v:.3} s")),
        format!(
            "{:.3}% of the run's CPU time; {} rounds, {:.0} us each",
            value(s, metric::SAMPLER_OVERHEAD_PCT).unwrap_or(0.0),
            num(s, param::ROUNDS).unwrap_or(0.0),
            value(s, metric::SAMPLER_US_PER_ROUND).unwrap_or(0.0)
        ),
    ]
}

// --- Formats --------------------------------------------------------------

/// The sections as text: the residency table in the original's layout,
/// then the totals as its "name value" lines.
pub fn text(records: &[&Record]) -> String {
    let mut out = String::new();
    for (i, s) in sections(records).iter().enumerate() {
        let residency = i == 0;
        if residency {
            out.push_str(&escape(&s.title));
            out.push_str("\n\n");
        }
        let header: Vec<&str> = s.header.iter().map(String::as_str).collect();
        let align: Vec<Align> = if residency {
            // The mark columns have no heading and hug the figure before.
            s.header
                .iter()
                .map(|h| {
                    if h.is_empty() {
                        Align::Left
                    } else {
                        Align::Right
                    }
                })
                .collect()
        } else {
            vec![Align::Left, Align::Right, Align::Left]
        };
        let mut t = Table::new(&header, &align);
        for r in &s.rows {
            t.row(r.clone());
        }
        let rendered = t.render();
        let body = if residency {
            rendered.as_str()
        } else {
            rendered.split_once('\n').map_or("", |x| x.1)
        };
        out.push_str(body);
        for l in &s.lines {
            out.push_str(&escape(l));
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// A row per task: its shares by node and the rest of the residency
/// table's figures, unformatted; the summary's metrics and every note
/// follow as notes.
pub fn csv(records: &[&Record]) -> Csv {
    let tasks = task_records(records);
    let summary = summary_record(records);
    let nodes = columns(summary, &tasks);
    let figure = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    let mut out = Csv {
        header: std::iter::once(task::TASK.to_string())
            .chain(nodes.iter().map(|n| format!("node{n}_time_pct")))
            .chain(
                [
                    task::START_NODE,
                    task::MOST_TIME_NODE,
                    task::MOVED,
                    task::MEMORY_NODE,
                    task::AWAY_FROM_MEMORY,
                    names::metric::USER_TIME_S,
                    names::metric::SYSTEM_TIME_S,
                    names::metric::RUNTIME_S,
                    task_metric::LOCAL_TIME_PCT,
                ]
                .map(String::from),
            )
            .collect(),
        ..Default::default()
    };
    for t in &tasks {
        let node = |k: &str| {
            t.params
                .get(k)
                .and_then(Value::as_u64)
                .map_or(String::new(), |v| v.to_string())
        };
        let mut row = vec![
            t.params
                .get(task::TASK)
                .map_or(String::new(), |v| v.to_string()),
        ];
        row.extend(nodes.iter().map(|&n| figure(share(t, n))));
        row.extend([
            node(task::START_NODE),
            node(task::MOST_TIME_NODE),
            flag(t, task::MOVED).to_string(),
            node(task::MEMORY_NODE),
            flag(t, task::AWAY_FROM_MEMORY).to_string(),
            figure(value(t, names::metric::USER_TIME_S)),
            figure(value(t, names::metric::SYSTEM_TIME_S)),
            figure(value(t, names::metric::RUNTIME_S)),
            figure(value(t, task_metric::LOCAL_TIME_PCT)),
        ]);
        out.rows.push(row);
    }
    if let Some(s) = summary {
        out.notes.extend(
            s.metrics
                .iter()
                .map(|(k, m)| format!("{k} = {} {}", m.value, m.unit)),
        );
        out.notes.extend(s.notes.iter().cloned());
    }
    for t in &tasks {
        out.notes
            .extend(t.notes.iter().map(|n| format!("{}: {n}", t.name)));
    }
    out
}

/// The summary's series as charts, with the burst's release marked.
pub fn charts(records: &[&Record]) -> Vec<Chart> {
    let Some(s) = summary_record(records) else {
        return Vec::new();
    };
    let markers: Vec<Marker> = num(s, param::BURST_GO_AT_S)
        .map(|go| Marker {
            x: go,
            label: "burst".into(),
        })
        .into_iter()
        .collect();
    s.series
        .iter()
        .map(|series| Chart {
            title: series.name.clone(),
            x_label: format!("{} ({})", series.x_label, series.x_unit),
            y_label: series.y_label.clone(),
            lines: chart::lines_of(series),
            markers: markers.clone(),
            ..Default::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::sched::BurstOutcome;
    use crate::probes::sched::records::{records, tests::run};

    fn rendered(recs: &[Record]) -> String {
        let refs: Vec<&Record> = recs.iter().collect();
        text(&refs)
    }

    #[test]
    fn the_table_has_a_column_per_node_and_the_marks() {
        let (p, out) = run();
        let text = rendered(&records(&p, &out, "numabench sched 2"));
        let lines: Vec<&str> = text.lines().collect();
        let header = lines.iter().position(|l| l.starts_with("Task")).unwrap();
        let cols: Vec<&str> = lines[header].split_whitespace().collect();
        assert_eq!(
            cols,
            [
                "Task",
                "node00",
                "node01",
                "iSched",
                "MSched",
                "Mem",
                "UserTime(s)",
                "SysTime(s)"
            ]
        );
        let row1: Vec<&str> = lines[header + 1].split_whitespace().collect();
        assert_eq!(
            row1,
            ["1", "25.0", "75.0", "0", "1", "*", "0", "!", "4.00", "0.02"]
        );
        let row2: Vec<&str> = lines[header + 2].split_whitespace().collect();
        assert_eq!(row2, ["2", "0.0", "100.0", "1", "1", "1", "4.00", "0.02"]);
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for needle in [
            "AverageUserTime 4.00 s",
            "ElapsedTime (E) 8.00 s",
            "TotalUserTime 8.00 s",
            "BurstTime (H) 1.50 s",
            "E - H 6.50 s",
        ] {
            assert!(flat.contains(needle), "{needle} missing:\n{text}");
        }
    }

    #[test]
    fn no_burst_and_interrupted_runs_say_so() {
        let (p, mut out) = run();
        out.burst = BurstOutcome::NotReached;
        out.elapsed_s = 1.0;
        out.interrupted = Some(2);
        out.tasks[1].report = None;
        let text = rendered(&records(&p, &out, "x"));
        assert!(text.contains("no burst: every task finished"), "{text}");
        assert!(text.contains("INTERRUPTED by signal 2"), "{text}");
        assert!(text.contains("task 2: did not finish"), "{text}");
    }

    #[test]
    fn the_csv_has_a_row_per_task_and_the_totals_as_notes() {
        let (p, out) = run();
        let recs = records(&p, &out, "x");
        let refs: Vec<&Record> = recs.iter().collect();
        let c = csv(&refs);
        assert_eq!(
            &c.header[..4],
            ["task", "node0_time_pct", "node1_time_pct", "start_node"]
        );
        assert_eq!(c.rows.len(), 2);
        assert_eq!(&c.rows[0][..7], ["1", "25", "75", "0", "1", "true", "0"]);
        assert!(
            c.notes.contains(&"elapsed_s = 8 s".to_string()),
            "{:?}",
            c.notes
        );
    }

    #[test]
    fn the_report_part_has_the_residency_table_and_the_marked_chart() {
        let (p, out) = run();
        let recs = records(&p, &out, "x");
        let refs: Vec<&Record> = recs.iter().collect();
        let doc = Document::new(&crate::topology::fixture("two-node"));
        let blocks = SchedView.blocks(&doc, &refs);
        let Block::Section(table) = &blocks[0] else {
            panic!("no residency table first: {blocks:?}");
        };
        assert!(table.header.iter().any(|h| h == "iSched"));
        assert!(table.rows[0].iter().any(|c| c == "75.0"));
        let charts: Vec<&Chart> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Chart(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(charts.len(), 1);
        assert_eq!(charts[0].title, "runnable tasks per node");
        assert_eq!(charts[0].markers[0].x, 3.2);
    }
}
