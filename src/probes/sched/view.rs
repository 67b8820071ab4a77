//! How a sched run is shown, from its records alone: numa_test's residency
//! table (a column per node, iSched, MSched, the memory's node and the
//! marks) and its totals, a CSV row per task, and the runnable-tasks chart
//! with the burst marked. Several runs (a series of task counts) are shown
//! one after the other and end with the original's table across them.

use crate::results::names::sched::{burst_state, metric, param, record, task, task_metric};
use crate::results::names::{self, probe};
use crate::results::{Document, Record};
use crate::text::escape;
use crate::view::table::{Align, Table};
use crate::view::{Block, Chart, Csv, Marker, Section, View, chart};
use serde_json::Value;

#[path = "view_series.rs"]
pub(crate) mod series;
use series::series_section;
pub(crate) use series::series_text;

/// The sched probe's view.
pub(crate) struct SchedView;

/// What the sched part of the report shows.
const INTRO: &str = "numa_test: unbound tasks each updating their own array, disturbed by a burst of short tasks; for each task, the share of its time on each node and whether it ended away from its memory. A good scheduler keeps a task on the node of its memory through the burst.";

impl View for SchedView {
    fn probe(&self) -> &'static str {
        probe::SCHED
    }

    fn heading(&self) -> String {
        format!("Scheduler placement ({})", probe::SCHED)
    }

    fn intro(&self) -> Option<&'static str> {
        Some(INTRO)
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

fn node_param(r: &Record, k: &str) -> String {
    r.u64_param(k).map_or("-".into(), |v| v.to_string())
}

fn secs(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

/// The task records (those with a task number), in task order.
fn task_records<'a>(records: &[&'a Record]) -> Vec<&'a Record> {
    let mut t: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.has_param(task::TASK))
        .collect();
    t.sort_by_key(|r| r.u64_param(task::TASK).unwrap_or(0));
    t
}

/// The summary: the record that is not a task's.
fn summary_record<'a>(records: &[&'a Record]) -> Option<&'a Record> {
    records.iter().copied().find(|r| !r.has_param(task::TASK))
}

/// The runs of a document, each its task records and the summary that
/// ends them.
fn runs<'a>(records: &[&'a Record]) -> Vec<Vec<&'a Record>> {
    let mut out: Vec<Vec<&Record>> = vec![Vec::new()];
    for &r in records {
        let summary = !r.has_param(task::TASK);
        out.last_mut().expect("one run at least").push(r);
        if summary {
            out.push(Vec::new());
        }
    }
    out.retain(|run| !run.is_empty());
    out
}

/// Whether `runs` are a series: several, or named as a series' are.
fn is_series(runs: &[Vec<&Record>]) -> bool {
    runs.len() > 1
        || runs
            .iter()
            .filter_map(|r| summary_record(r))
            .any(|s| s.name.starts_with(record::SERIES_PREFIX))
}

/// The node columns: the summary's list, plus any node a task has a share on.
fn columns(summary: Option<&Record>, tasks: &[&Record]) -> Vec<usize> {
    let mut nodes: Vec<usize> = summary
        .and_then(|s| s.u64s_param(param::NODES))
        .unwrap_or_default()
        .into_iter()
        .map(|v| v as usize)
        .collect();
    for t in tasks {
        if let Some(m) = t.map_param(task::TIME_PCT_BY_NODE) {
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

/// A task's share of time on `node`, in %.
fn share(t: &Record, node: usize) -> Option<f64> {
    t.map_param(task::TIME_PCT_BY_NODE)
        .and_then(|m| m.get(&node.to_string()))
        .and_then(Value::as_f64)
}

/// numa_test's header line: what ran.
fn title(s: Option<&Record>) -> String {
    let Some(s) = s else {
        return format!("numabench {}", probe::SCHED);
    };
    let n = |k: &str| s.f64_param(k).map_or("?".into(), |v| format!("{v}"));
    let bytes = s
        .f64_param(names::param::SIZE_BYTES)
        .map_or("?".into(), |b| crate::units::bytes(b as u64));
    let burst = match s.f64_param(param::BURST_AT_S) {
        Some(at) => {
            let pipes =
                s.str_param(param::BURST_TRANSPORT) == Some(super::burst::Transport::Pipe.name());
            format!(
                "burst of {} group(s){} at {at} s",
                n(param::BURST_GROUPS),
                if pipes { " over pipes" } else { "" }
            )
        }
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

/// How the size and the passes were chosen, where they were.
fn chosen(s: Option<&Record>) -> Vec<String> {
    let Some(s) = s else { return Vec::new() };
    let text = |k: &str| s.str_param(k);
    let mut out = Vec::new();
    if let Some(basis) = text(param::SIZE_BASIS) {
        out.push(format!(
            "size: {} elements per array: {basis} (--elements overrides)",
            s.f64_param(param::SIZE_ELEMENTS)
                .map_or("?".into(), |v| v.to_string())
        ));
    }
    if let Some(basis) = text(param::PASSES_BASIS) {
        let aim = s
            .f64_param(param::TARGET_RUN_S)
            .map_or(String::new(), |t| format!(", aimed at {t} s"));
        out.push(format!(
            "passes: {}: {basis}{aim} (--passes overrides)",
            s.f64_param(param::PASSES)
                .map_or("?".into(), |v| v.to_string())
        ));
    }
    out
}

// --- Sections -------------------------------------------------------------

/// Per run the residency table and the totals; the series table after
/// several runs.
pub(crate) fn sections(records: &[&Record]) -> Vec<Section> {
    let runs = runs(records);
    let mut out = Vec::new();
    for run in &runs {
        let mut two = run_sections(run);
        let explained = std::mem::take(&mut two[0].lines);
        two[0].lines = chosen(summary_record(run))
            .into_iter()
            .chain(explained)
            .collect();
        out.extend(two);
    }
    if is_series(&runs) {
        out.push(series_section(records));
    }
    out
}

/// A run's residency table and totals.
fn run_sections(records: &[&Record]) -> Vec<Section> {
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
        let mark = |k: &str, mark: &str| {
            if t.bool_param(k).unwrap_or(false) {
                mark
            } else {
                ""
            }
            .to_string()
        };
        let mut row = vec![t.param_shown(task::TASK).unwrap_or_else(|| "?".into())];
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
            secs(t.value(names::metric::USER_TIME_S)),
            secs(t.value(names::metric::SYSTEM_TIME_S)),
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
        let m = |k: &str| s.value(k);
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
    let count = |k: &str| s.f64_param(k).map_or("?".into(), |v| v.to_string());
    match s.str_param(param::BURST) {
        Some(burst_state::RAN) => format!(
            "{} processes from {} s; {} of {} messages; {} s CPU",
            count(param::BURST_PROCESSES),
            secs(s.f64_param(param::BURST_GO_AT_S)),
            count(param::BURST_MESSAGES_RECEIVED),
            count(param::BURST_MESSAGES_EXPECTED),
            secs(s.value(metric::BURST_CPU_S)),
        ),
        other => other.unwrap_or("?").to_string(),
    }
}

fn sampler_row(s: &Record) -> Vec<String> {
    vec![
        "Sampler CPU".into(),
        s.value(metric::SAMPLER_CPU_S)
            .map_or("-".into(), |v| format!("{v:.3} s")),
        format!(
            "{:.3}% of the run's CPU time; {} rounds, {:.0} us each",
            s.value(metric::SAMPLER_OVERHEAD_PCT).unwrap_or(0.0),
            s.f64_param(param::ROUNDS).unwrap_or(0.0),
            s.value(metric::SAMPLER_US_PER_ROUND).unwrap_or(0.0)
        ),
    ]
}

// --- Formats --------------------------------------------------------------

/// Per run the residency table in the original's layout, then the totals
/// as its "name value" lines; the series table after several runs.
pub(crate) fn text(records: &[&Record]) -> String {
    let runs = runs(records);
    let mut out: String = runs.iter().map(|r| run_text(r)).collect();
    if is_series(&runs) {
        out.push_str(&series_text(records));
    }
    out
}

/// One run's residency table and totals as text.
pub(crate) fn run_text(records: &[&Record]) -> String {
    let summary = summary_record(records);
    let mut out = String::new();
    for (i, s) in run_sections(records).iter().enumerate() {
        let residency = i == 0;
        if residency {
            out.push_str(&escape(&s.title));
            out.push('\n');
            for l in chosen(summary) {
                out.push_str(&escape(&l));
                out.push('\n');
            }
            out.push('\n');
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

// --- The series -----------------------------------------------------------

/// A row per task: its shares by node and the rest of the residency
/// table's figures, unformatted; the summary's metrics and every note
/// follow as notes. A series gives its table instead.
pub(crate) fn csv(records: &[&Record]) -> Csv {
    if is_series(&runs(records)) {
        let s = series_section(records);
        return Csv {
            header: s.header,
            rows: s.rows,
            notes: s.lines,
        };
    }
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
        let node = |k: &str| t.u64_param(k).map_or(String::new(), |v| v.to_string());
        let mut row = vec![t.param_shown(task::TASK).unwrap_or_default()];
        row.extend(nodes.iter().map(|&n| figure(share(t, n))));
        row.extend([
            node(task::START_NODE),
            node(task::MOST_TIME_NODE),
            t.bool_param(task::MOVED).unwrap_or(false).to_string(),
            node(task::MEMORY_NODE),
            t.bool_param(task::AWAY_FROM_MEMORY)
                .unwrap_or(false)
                .to_string(),
            figure(t.value(names::metric::USER_TIME_S)),
            figure(t.value(names::metric::SYSTEM_TIME_S)),
            figure(t.value(names::metric::RUNTIME_S)),
            figure(t.value(task_metric::LOCAL_TIME_PCT)),
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

/// Each run's runnable-tasks chart.
pub(crate) fn charts(records: &[&Record]) -> Vec<Chart> {
    let runs = runs(records);
    let series = is_series(&runs);
    let mut out = Vec::new();
    for run in &runs {
        for mut c in run_charts(run) {
            if series && let Some(s) = summary_record(run) {
                c.title = format!("{}: {}", s.name, c.title);
            }
            out.push(c);
        }
    }
    out
}

/// A run's series as charts, with the burst's release marked.
fn run_charts(records: &[&Record]) -> Vec<Chart> {
    let Some(s) = summary_record(records) else {
        return Vec::new();
    };
    let markers: Vec<Marker> = s
        .f64_param(param::BURST_GO_AT_S)
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
#[path = "view_tests.rs"]
mod tests;
