//! The table across task counts of a `sched` series (the seed's runs at
//! 4, 8, 16, ... tasks), in text and as a section.

use super::*;

/// The original's tables across the runs of a series: per task count the
/// average and total user time (U, TU), the elapsed and burst times (E, H)
/// and E - H; a run cut short shows no figure.
pub(super) fn series_section(records: &[&Record]) -> Section {
    let mut s = Section::new("numa_test series: one row per task count (N)");
    s.header = SERIES_HEADER.map(String::from).to_vec();
    let summaries: Vec<&Record> = runs(records)
        .iter()
        .filter_map(|r| summary_record(r))
        .collect();
    for r in &summaries {
        s.rows.push(series_row(r));
    }
    s.lines.push(
        "U: average user time per task; TU: total user time; E: elapsed; H: the burst; lower is better".into(),
    );
    let left: Vec<String> = summaries
        .last()
        .and_then(|r| r.list_param(param::SERIES_LEFT_OUT))
        .map_or(Vec::new(), |a| a.iter().map(|v| v.to_string()).collect());
    if !left.is_empty() {
        s.lines.push(format!(
            "left out: N = {} (at most {} tasks per CPU, and what the free memory holds)",
            left.join(", "),
            crate::probes::sched::plan::SERIES_TASKS_PER_CPU
        ));
    }
    s
}

const SERIES_HEADER: [&str; 9] = [
    "N",
    "U (s)",
    "TU (s)",
    "E (s)",
    "H (s)",
    "E - H (s)",
    "moved",
    "away",
    "run",
];

fn series_row(r: &Record) -> Vec<String> {
    let tasks = r.f64_param(names::param::TASKS).unwrap_or(0.0);
    let finished = r.f64_param(param::FINISHED_TASKS).unwrap_or(0.0);
    let cut =
        r.has_param(param::INTERRUPTED_BY_SIGNAL) || finished < tasks || r.part_failed().is_some();
    let mut row = vec![format!("{tasks}")];
    if cut {
        row.extend(std::iter::repeat_n("-".to_string(), 7));
        row.push(format!("partial: {finished} of {tasks} tasks finished"));
        return row;
    }
    let m = |k: &str| r.value(k);
    row.extend([
        secs(m(metric::AVERAGE_USER_TIME_S)),
        secs(m(metric::TOTAL_USER_TIME_S)),
        secs(m(metric::ELAPSED_S)),
        secs(m(metric::BURST_S)),
        secs(m(metric::ELAPSED_MINUS_BURST_S)),
        m(metric::TASKS_MOVED).map_or("-".into(), |v| format!("{v}")),
        m(metric::TASKS_AWAY_FROM_MEMORY).map_or("-".into(), |v| format!("{v}")),
        "whole".into(),
    ]);
    row
}

/// The series table as text.
pub(crate) fn series_text(records: &[&Record]) -> String {
    let s = series_section(records);
    let header: Vec<&str> = s.header.iter().map(String::as_str).collect();
    let mut align = vec![Align::Right; header.len()];
    align[header.len() - 1] = Align::Left;
    let mut t = Table::new(&header, &align);
    for r in &s.rows {
        t.row(r.clone());
    }
    let mut out = format!("{}\n{}", escape(&s.title), t.render());
    for l in &s.lines {
        out.push_str(&escape(l));
        out.push('\n');
    }
    out.push('\n');
    out
}
