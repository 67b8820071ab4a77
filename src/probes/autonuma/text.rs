//! `numabench autonuma` as the benchmark's users read it: what the command
//! does, per test a table of runs like the benchmark's slides with average
//! and spread, then all tests side by side. Everything here is drawn from
//! [`facts`](super::facts), which the command builds as it goes and a
//! results document gives back, so both print the same bytes.

use super::bench::{Plan, Test, Work};
use super::bind::{APART_PCT, Bind, Position};
use super::facts::{End, Header, Run};
use super::records::MIB;
use crate::probes::workload::watch::WALK_PAGES_PER_QUERY;
use crate::stats;
use crate::view::table::{Align, Table};
use std::fmt::Write;

fn nodes_list(ids: &[usize]) -> String {
    ids.iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the whole command will do, before the first test.
pub(crate) fn header(h: &Header) -> String {
    let balancing = match h.balancing {
        Some(0) => "off (kernel.numa_balancing = 0): nothing should move".to_string(),
        Some(v) => format!("on (kernel.numa_balancing = {v})"),
        None => "not available in this kernel".to_string(),
    };
    format!(
        "numabench autonuma: {} CPU(s) on node(s) {}; all memory starts on node {}; NUMA balancing {balancing}\n\
         looked at every {} s: {}; converged = every node with usable CPUs holds total/{} of the memory within {}% of that share, from then to the end\n\n",
        h.nr_cpus,
        nodes_list(&h.cpu_nodes),
        h.start_node,
        h.interval_s,
        method_text(h.sample_pages),
        h.cpu_nodes.len().max(1),
        h.tolerance_pct,
    )
}

/// How the looks find the memory per node, in a few words.
fn method_text(sample_pages: Option<usize>) -> String {
    match sample_pages {
        Some(max_pages) => format!(
            "memory per node from the node of {max_pages} sampled pages (move_pages), or of every page (numa_maps) up to {} pages",
            max_pages * WALK_PAGES_PER_QUERY
        ),
        None => "memory per node counted page by page (numa_maps)".into(),
    }
}

/// The test's shape and work, in one line.
pub(crate) fn intro_line(plan: &Plan) -> String {
    let s = &plan.shape;
    let mib = s.mem_bytes as f64 / MIB;
    let memory = if s.per_thread {
        format!(
            "M = {mib:.0} MiB per process split over its threads ({:.1} MiB each)",
            s.bytes_per_thread_pass() as f64 / MIB
        )
    } else {
        format!("M = {mib:.0} MiB per process shared by all its threads")
    };
    let work = match plan.work {
        Work::Loops(l) => format!("{l} memset pass(es) per thread"),
        Work::Secs(secs) => format!("memset passes for {secs} s"),
    };
    format!(
        "{}: P = {} process(es) x T = {} thread(s), {memory}; {work}",
        plan.label(),
        s.processes,
        s.threads
    )
}

/// The test's shape and work, and its notes.
pub(crate) fn intro(plan: &Plan) -> String {
    let mut out = intro_line(plan);
    out.push('\n');
    for n in &plan.notes {
        let _ = writeln!(out, "  {n}");
    }
    out
}

fn secs(v: Option<f64>) -> String {
    v.map_or("never".into(), |t| format!("{t:.1} s"))
}

fn count(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{}", v as u64))
}

/// A test's runs as a table, and the lines under it.
pub(crate) struct RunsTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub lines: Vec<String>,
}

/// The table of a test's runs, one row each, with what the runs tell.
pub(crate) fn runs(plan: &Plan, runs: &[Run]) -> RunsTable {
    let shares = runs.first().map_or(&[][..], |r| &r.shares[..]);
    let mut header: Vec<String> = ["run", "seconds", "GB/s", "converged at"]
        .map(String::from)
        .to_vec();
    header.extend(shares.iter().map(|(n, _)| format!("{n} at end")));
    header.extend(
        [
            "pages migrated",
            "hint faults",
            "user s",
            "system s",
            "sampling",
        ]
        .map(String::from),
    );
    let rows = runs
        .iter()
        .enumerate()
        .map(|(i, r)| row(i, r, shares))
        .collect();
    let mut lines = notes(plan, runs);
    lines.push(average(plan, runs));
    RunsTable {
        header,
        rows,
        lines,
    }
}

fn row(i: usize, r: &Run, nodes: &[(String, f64)]) -> Vec<String> {
    // A partial run's figures stay visible, never as a normal row.
    let run = match r.end {
        End::Interrupted => format!("{} INTERRUPTED", i + 1),
        End::Failed => format!("{} FAILED", i + 1),
        End::Whole => (i + 1).to_string(),
    };
    let mut row = vec![
        run,
        format!("{:.2}", r.runtime_s),
        format!("{:.1}", r.gb_s),
        secs(r.convergence_s),
    ];
    row.extend(nodes.iter().map(|(n, _)| {
        let pct = r.shares.iter().find(|(m, _)| m == n).map_or(0.0, |s| s.1);
        format!("{pct:.1}%")
    }));
    row.extend([
        count(r.migrated),
        count(r.hint_faults),
        format!("{:.2}", r.user_s),
        format!("{:.2}", r.system_s),
        format!("{:.2}%", r.overhead_pct),
    ]);
    row
}

/// The lines between the table and the average: what the looks cost, how
/// the memory was found, numa02_SMT's cores.
fn notes(plan: &Plan, runs: &[Run]) -> Vec<String> {
    let mut out = Vec::new();
    // The costliest run speaks for all: the runs look at the same memory.
    let costliest = runs
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.overhead_pct.total_cmp(&b.1.overhead_pct));
    if let Some((i, r)) = costliest
        && let Some(hint) = overhead_hint(r)
    {
        out.push(format!("run {}: {hint}", i + 1));
    }
    if let Some(r) = runs.iter().max_by_key(|r| r.stride_max)
        && r.sampled_looks > 0
    {
        out.push(format!(
            "memory per node estimated: up to {} pages queried per look, each standing for up to {} (--exact counts them all)",
            r.sampled_pages_max, r.stride_max
        ));
    }
    for (i, r) in runs.iter().enumerate() {
        if let Some(why) = &r.fallback {
            out.push(format!("run {}: {why}", i + 1));
        }
    }
    if plan.test == Test::Numa02Smt {
        for (i, r) in runs.iter().enumerate() {
            out.push(format!("run {}: {}", i + 1, smt_line(r)));
        }
    }
    out
}

/// Averages cover whole runs only.
fn average(plan: &Plan, runs: &[Run]) -> String {
    let whole: Vec<&Run> = runs.iter().filter(|r| r.whole()).collect();
    if whole.is_empty() {
        return format!(
            "{}: no whole run, no average: the run above is partial",
            plan.label()
        );
    }
    match plan.work {
        Work::Loops(_) => {
            let times: Vec<f64> = whole.iter().map(|r| r.runtime_s).collect();
            format!(
                "{}: {:.2} s on average over {} run(s), stddev {:.2} s (lower is better)",
                plan.label(),
                stats::mean(&times),
                times.len(),
                stats::stddev(&times)
            )
        }
        // A fixed time makes the seconds equal: the work done is the result.
        Work::Secs(_) => {
            let rates: Vec<f64> = whole.iter().map(|r| r.gb_s).collect();
            format!(
                "{}: {:.1} GB/s cleared on average over {} run(s), stddev {:.1} GB/s (higher is better)",
                plan.label(),
                stats::mean(&rates),
                rates.len(),
                stats::stddev(&rates)
            )
        }
    }
}

/// The table of a test's runs as text, indented under its intro.
pub(crate) fn runs_text(plan: &Plan, all: &[Run]) -> String {
    let t = runs(plan, all);
    let h: Vec<&str> = t.header.iter().map(String::as_str).collect();
    let mut table = Table::new(&h, &vec![Align::Right; h.len()]);
    for r in t.rows {
        table.row(r);
    }
    let mut out = String::new();
    for line in table.render().lines().map(str::to_string).chain(t.lines) {
        let _ = writeln!(out, "  {line}");
    }
    out.push('\n');
    out
}

/// Share of the run's CPU time the looks may take before the text says how
/// to lower it.
pub(crate) const OVERHEAD_TARGET_PCT: f64 = 1.0;

/// What a look cost and the interval that would have kept the looks under
/// [`OVERHEAD_TARGET_PCT`], when they took more. An exact look walks the
/// page tables of all the test's memory, so its cost grows with the memory;
/// a sampled look's grows with `--sample-pages`. The share shrinks with the
/// CPUs at work.
pub(crate) fn overhead_hint(r: &Run) -> Option<String> {
    let pct = r.overhead_pct;
    if pct <= OVERHEAD_TARGET_PCT || r.looks == 0 {
        return None;
    }
    let sampling_cpu_s = pct / 100.0 * (r.user_s + r.system_s);
    let per_look_ms = sampling_cpu_s / r.looks as f64 * 1000.0;
    let wider = (r.interval_s * pct / OVERHEAD_TARGET_PCT * 2.0).ceil() / 2.0;
    let other = if r.exact {
        "sampling (no --exact)"
    } else {
        "fewer --sample-pages"
    };
    Some(format!(
        "the looks took {pct:.2}% of the run's CPU time ({per_look_ms:.1} ms each, above the {OVERHEAD_TARGET_PCT}% aimed at); --interval {wider} or {other} would keep them under it"
    ))
}

/// numa02_SMT's question: did the kernel keep one thread per core?
fn smt_line(r: &Run) -> String {
    let (end, max) = r.doubled;
    format!(
        "cores carrying two of the test's threads: {} at the last look, at most {} (0 = one thread per physical core, as the kernel should do)",
        end as u64, max as u64
    )
}

/// The runs of `label` with `bind`'s suffix, among `tests`.
fn runs_of<'a>(tests: &'a [(String, Vec<Run>)], label: &str, bind: Bind) -> Option<&'a [Run]> {
    let want = format!("{label}{}", bind.suffix());
    tests.iter().find(|(n, _)| *n == want).map(|t| &t.1[..])
}

/// Whether test `label` has both baselines among `tests`, and if so where
/// its whole runs lie between theirs (`None` inside: one of the three has
/// no whole run).
pub(crate) fn position_of(label: &str, tests: &[(String, Vec<Run>)]) -> Option<Option<Position>> {
    let hard = runs_of(tests, label, Bind::Hard)?;
    let inverse = runs_of(tests, label, Bind::Inverse)?;
    let test = runs_of(tests, label, Bind::Free)?;
    let by_rate = test.first().is_some_and(|r| r.fixed_time);
    Some(position(by_rate, test, hard, inverse))
}

/// The mean of the whole runs' seconds (or GB/s with a fixed time).
fn mean(runs: &[Run], by_rate: bool) -> Option<f64> {
    let v: Vec<f64> = runs
        .iter()
        .filter(|r| r.whole())
        .map(|r| if by_rate { r.gb_s } else { r.runtime_s })
        .collect();
    (!v.is_empty()).then(|| crate::stats::mean(&v))
}

/// Where the test's whole runs lie between its baselines' whole runs, by
/// seconds or (`by_rate`, a fixed time) by GB/s; `None` where one of the
/// three has no whole run.
pub(crate) fn position(
    by_rate: bool,
    test: &[Run],
    hard: &[Run],
    inverse: &[Run],
) -> Option<Position> {
    let (value, h, i) = (
        mean(test, by_rate)?,
        mean(hard, by_rate)?,
        mean(inverse, by_rate)?,
    );
    let span = h - i;
    let better = if by_rate { span > 0.0 } else { span < 0.0 };
    let apart = span.abs() > APART_PCT / 100.0 * h.abs().max(i.abs());
    Some(Position {
        by_rate,
        value,
        hard: h,
        inverse: i,
        pct: (better && apart).then(|| (value - i) / span * 100.0),
    })
}

/// Test `label`'s position between its baselines, in a line, when they ran.
pub(crate) fn position_line(label: &str, tests: &[(String, Vec<Run>)]) -> Option<String> {
    let Some(p) = position_of(label, tests)? else {
        return Some(format!(
            "{label}: no position between HARD_BIND and INVERSE_BIND: one of the three has no whole run\n\n"
        ));
    };
    let v = |x: f64| {
        if p.by_rate {
            format!("{x:.1} GB/s")
        } else {
            format!("{x:.2} s")
        }
    };
    let figures = format!(
        "INVERSE_BIND {}, HARD_BIND {}, {label} {}",
        v(p.inverse),
        v(p.hard),
        v(p.value)
    );
    Some(match p.pct {
        Some(pct) => {
            let beyond = if pct < 0.0 {
                ": slower than the worst placement"
            } else if pct > 100.0 {
                ": faster than the best placement"
            } else {
                ""
            };
            format!(
                "{label}: {pct:.0}% of the way from inverse to hard bind ({figures}){beyond}\n\n"
            )
        }
        None => format!(
            "{label}: no position: HARD_BIND is not {APART_PCT}% better than INVERSE_BIND here ({figures})\n\n"
        ),
    })
}

/// The summary's position cell of test `label`.
fn position_cell(label: &str, tests: &[(String, Vec<Run>)]) -> String {
    if label.ends_with(Bind::Hard.suffix()) || label.ends_with(Bind::Inverse.suffix()) {
        return "baseline".into();
    }
    match position_of(label, tests) {
        Some(Some(Position { pct: Some(pct), .. })) => format!("{pct:.0}%"),
        _ => "-".into(),
    }
}

/// Whether any test of `tests` ran with its baselines.
fn has_baselines(tests: &[(String, Vec<Run>)]) -> bool {
    tests.iter().any(|(n, _)| n.ends_with(Bind::Hard.suffix()))
}

pub(crate) const SUMMARY_TITLE: &str = "Seconds per test (lower is better)";

/// The slides' table: per test its runs, average and stddev of seconds,
/// and how its runs converged.
pub(crate) fn summary_rows(tests: &[(String, Vec<Run>)]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (name, all) in tests {
        // Partial runs (stopped, failed) are left out of every average.
        let outs: Vec<&Run> = all.iter().filter(|r| r.whole()).collect();
        let partial = all.len() - outs.len();
        if outs.is_empty() {
            if partial > 0 {
                rows.push(
                    [name.clone(), format!("0 ({partial} partial)")]
                        .into_iter()
                        .chain(std::iter::repeat_n("-".to_string(), 4))
                        .chain(has_baselines(tests).then(|| "-".to_string()))
                        .collect(),
                );
            }
            continue;
        }
        let times: Vec<f64> = outs.iter().map(|r| r.runtime_s).collect();
        let conv: Vec<f64> = outs.iter().filter_map(|r| r.convergence_s).collect();
        let converged = if conv.is_empty() {
            format!("0 of {} runs", outs.len())
        } else {
            format!(
                "{} of {} runs, at {:.1} s on average",
                conv.len(),
                outs.len(),
                stats::mean(&conv)
            )
        };
        rows.push(vec![
            name.clone(),
            if partial > 0 {
                format!("{} (+{partial} partial)", outs.len())
            } else {
                outs.len().to_string()
            },
            format!("{:.2}", stats::mean(&times)),
            format!("{:.2}", stats::stddev(&times)),
            format!(
                "{:.1}",
                stats::mean(&outs.iter().map(|r| r.gb_s).collect::<Vec<_>>())
            ),
            converged,
        ]);
        if has_baselines(tests)
            && let Some(row) = rows.last_mut()
        {
            row.push(position_cell(name, tests));
        }
    }
    rows
}

pub(crate) const SUMMARY_HEADER: [&str; 6] =
    ["test", "runs", "average s", "stddev s", "GB/s", "converged"];

/// The summary's columns: [`SUMMARY_HEADER`], and the position between
/// the baselines where they ran.
pub(crate) fn summary_header(tests: &[(String, Vec<Run>)]) -> Vec<String> {
    let mut h: Vec<String> = SUMMARY_HEADER.map(String::from).to_vec();
    if has_baselines(tests) {
        h.push("inverse->hard".into());
    }
    h
}

/// [`summary_rows`] as text under its title.
pub(crate) fn summary(tests: &[(String, Vec<Run>)]) -> String {
    let header = summary_header(tests);
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut align = vec![
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
    ];
    align.resize(h.len(), Align::Right);
    let mut t = Table::new(&h, &align);
    for r in summary_rows(tests) {
        t.row(r);
    }
    format!("{SUMMARY_TITLE}\n{}", t.render())
}

/// Whether the tests together get the summary table: more than one test,
/// or a run cut short.
pub(crate) fn wants_summary(tests: &[(String, Vec<Run>)]) -> bool {
    tests.len() > 1
        || tests
            .iter()
            .any(|(_, runs)| runs.iter().any(|r| !r.whole()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::autonuma::facts::End;

    fn run(secs: f64, gb: f64, end: End) -> Run {
        let mut r = Run::of(&crate::results::Record::new("autonuma", "x"));
        r.runtime_s = secs;
        r.gb_s = gb;
        r.end = end;
        r
    }

    #[test]
    fn the_position_runs_from_inverse_to_hard() {
        let w = End::Whole;
        let p = position(
            false,
            &[run(9.0, 0.0, w), run(10.0, 0.0, w)],
            &[run(8.0, 0.0, w)],
            &[run(12.0, 0.0, w)],
        )
        .unwrap();
        assert_eq!(p.pct, Some(62.5));
        assert_eq!((p.value, p.hard, p.inverse), (9.5, 8.0, 12.0));
        // Fixed time: higher GB/s is better.
        let p = position(
            true,
            &[run(5.0, 30.0, w)],
            &[run(5.0, 40.0, w)],
            &[run(5.0, 20.0, w)],
        )
        .unwrap();
        assert_eq!(p.pct, Some(50.0));
        // A partial run is left out; no whole run, no position.
        let cut = run(1.0, 0.0, End::Interrupted);
        let p = position(
            false,
            &[run(9.0, 0.0, w), cut.clone()],
            &[run(8.0, 0.0, w)],
            &[run(12.0, 0.0, w)],
        );
        assert_eq!(p.unwrap().pct, Some(75.0));
        assert!(position(false, &[cut], &[run(8.0, 0.0, w)], &[run(12.0, 0.0, w)]).is_none());
        // Baselines within 1%, or the worst faster: no position.
        let p = position(
            false,
            &[run(9.0, 0.0, w)],
            &[run(10.0, 0.0, w)],
            &[run(10.05, 0.0, w)],
        );
        assert_eq!(p.unwrap().pct, None);
        let p = position(
            false,
            &[run(9.0, 0.0, w)],
            &[run(12.0, 0.0, w)],
            &[run(8.0, 0.0, w)],
        );
        assert_eq!(p.unwrap().pct, None);
        // Beyond hard bind reads above 100%.
        let p = position(
            false,
            &[run(7.0, 0.0, w)],
            &[run(8.0, 0.0, w)],
            &[run(12.0, 0.0, w)],
        );
        assert_eq!(p.unwrap().pct, Some(125.0));
    }
}
