use super::*;
use crate::probes::autonuma::bench::{Asked, Start, plan};
use crate::probes::autonuma::facts::{Header, Run};
use crate::probes::autonuma::text::{self, header};
use crate::probes::workload::watch::Look;
use std::time::Duration;

/// The runs table of `outcomes` as the command and the view print it:
/// through their records.
fn runs_table(plan: &Plan, outcomes: &[Outcome], settings: &Settings) -> String {
    text::runs_text(plan, &runs_of(plan, outcomes, settings))
}

fn runs_of(plan: &Plan, outcomes: &[Outcome], settings: &Settings) -> Vec<Run> {
    outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| Run::of(&record(plan, i + 1, o, settings)))
        .collect()
}

fn overhead_hint(o: &Outcome, settings: &Settings) -> Option<String> {
    text::overhead_hint(&Run::of(&record(&a_plan(Test::Numa02), 1, o, settings)))
}

fn summary(tests: &[(Plan, Vec<Outcome>)]) -> String {
    let named: Vec<(String, Vec<Run>)> = tests
        .iter()
        .map(|(p, outs)| (p.test.name().to_string(), runs_of(p, outs, &settings())))
        .collect();
    text::summary(&named)
}

fn header_of(nodes: &[usize], settings: &Settings) -> String {
    header(&Header {
        nr_cpus: 2,
        cpu_nodes: nodes.to_vec(),
        start_node: 0,
        balancing: Some(0),
        interval_s: settings.interval.as_secs_f64(),
        tolerance_pct: settings.tolerance_pct,
        sample_pages: match settings.method {
            Method::Sampled { max_pages } => Some(max_pages),
            Method::Exact => None,
        },
    })
}

fn outcome() -> Outcome {
    let look = |t: f64, a: u64, b: u64, ta: usize, tb: usize| Look {
        t,
        mem: [(0, a << 20), (1, b << 20)].into(),
        pages: [(0, a * 256), (1, b * 256)].into(),
        threads: [(0, ta), (1, tb)].into(),
        doubled_cores: 0,
        sampled_pages: 4096,
        stride: 16,
        carried_pages: 0,
        exact: false,
    };
    Outcome {
        runtime_s: 3.0,
        looks: vec![
            look(0.0, 100, 0, 2, 0),
            look(0.5, 70, 30, 1, 1),
            look(1.0, 52, 48, 1, 1),
        ],
        mem_nodes: vec![0, 1],
        cpu_nodes: vec![0, 1],
        convergence_s: Some(1.0),
        numa_balancing: [("numa_pages_migrated".to_string(), 12288)].into(),
        cpu: crate::sys::CpuTimes {
            user_s: 5.0,
            system_s: 1.0,
        },
        sampling_cpu_s: 0.03,
        sampled_pages_max: 4096,
        stride_max: 16,
        sampled_looks: 3,
        policies: ["default".to_string()].into(),
        cpus_seen: vec![0, 2],
        data_bytes: 6_000_000_000,
        loops_min: 3,
        loops_max: 3,
        ..Default::default()
    }
}

fn settings() -> Settings {
    Settings {
        interval: Duration::from_millis(500),
        tolerance_pct: 10.0,
        method: Method::default(),
    }
}

fn start64() -> Start {
    Start {
        node: 0,
        free: 64 << 30,
        words: "the 64 GiB free on node 0".into(),
        limited: None,
    }
}

fn a_plan(test: Test) -> Plan {
    plan(test, 4, 2, &start64(), &Asked::default()).unwrap()
}

#[test]
fn the_record_carries_series_metrics_and_marker_data() {
    let p = a_plan(Test::Numa02);
    let r = record(&p, 2, &outcome(), &settings());
    assert_eq!(r.name, "numa02 run 2");
    assert_eq!(r.metrics["convergence_s"].value, 1.0);
    assert_eq!(r.metrics["runtime_s"].value, 3.0);
    assert!((r.metrics["sampling_overhead_pct"].value - 0.5).abs() < 1e-9);
    assert_eq!(r.metrics["numa_pages_migrated"].value, 12288.0);
    assert_eq!(r.metrics["bandwidth_mb_s"].value, 2000.0);
    let mem = &r.series[0];
    assert_eq!(mem.x, [0.0, 0.5, 1.0]);
    assert_eq!(mem.lines[1].label, "node 1");
    assert_eq!(mem.lines[1].y, [0.0, 30.0, 48.0]);
    assert_eq!(r.series[1].lines[0].y, [2.0, 1.0, 1.0]);
    assert_eq!(r.series.len(), 2, "only numa02_SMT has the cores series");
    assert_eq!(r.params["final_share_pct"]["1"], 48.0);
    assert_eq!(r.placement.as_ref().unwrap().pages_by_node["0"], 52 * 256);
    assert!(r.notes.iter().any(|n| n.contains("loops")), "{:?}", r.notes);
    // Sampled looks: what was sampled, and no claim about policies.
    assert_eq!(r.params["look_method"], "sampled");
    assert_eq!(r.params["sample_pages"], 4096);
    assert_eq!(r.params["sampled_pages_max"], 4096);
    assert_eq!(r.params["sample_stride_max"], 16);
    assert_eq!(r.params["sampled_looks"], 3);
    assert_eq!(r.params["exact_looks"], 0);
    assert!(r.params.get("policies_seen").is_none(), "{:?}", r.params);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("estimated at 3 of 3 looks")
                && n.contains("up to 4096 queried, each standing for up to 16 pages")
                && n.contains("policies not read")),
        "{:?}",
        r.notes
    );
    let exact = Settings {
        method: Method::Exact,
        ..settings()
    };
    let o = Outcome {
        method: Method::Exact,
        sampled_looks: 0,
        exact_looks: 3,
        ..outcome()
    };
    let r = record(&p, 2, &o, &exact);
    assert_eq!(r.params["look_method"], "exact");
    assert_eq!(r.params["policies_seen"], json!(["default"]));
    assert!(r.params.get("sample_pages").is_none(), "{:?}", r.params);
    assert!(
        r.params.get("sample_stride_max").is_none(),
        "{:?}",
        r.params
    );
    assert!(
        r.notes.iter().any(|n| n.contains("(--exact)")),
        "{:?}",
        r.notes
    );
    let smt = record(&a_plan(Test::Numa02Smt), 1, &outcome(), &settings());
    assert_eq!(smt.series[2].name, "cores_with_two_threads");
    assert_eq!(smt.metrics["cores_with_two_threads_max"].value, 0.0);
}

#[test]
fn checks_flag_a_wrong_start_and_bound_memory() {
    let p = a_plan(Test::Numa02);
    let mut o = outcome();
    assert!(checks(&p, &o).is_empty(), "{:?}", checks(&p, &o));
    o.looks[0].mem = [(0, 50), (1, 50)].into();
    o.policies.insert("bind:0".into());
    let notes = checks(&p, &o);
    assert!(notes[0].contains("only 50.0%"), "{notes:?}");
    assert!(notes[1].contains("bind:0"), "{notes:?}");
}

#[test]
fn chart_marks_convergence_and_csv_has_a_row_per_look() {
    let p = a_plan(Test::Numa01);
    let chart = |o: &Outcome| {
        crate::probes::autonuma::view::memory_chart(&record(&p, 1, o, &settings())).unwrap()
    };
    let c = chart(&outcome());
    assert_eq!(c.title, "numa01 run 1: memory per node");
    assert_eq!(c.markers[0].label, "converged 1.0 s");
    assert_eq!(c.lines.len(), 2);
    let mut never = outcome();
    never.convergence_s = None;
    assert!(chart(&never).markers.is_empty());
    let c = looks_csv(&outcome());
    let lines: Vec<&str> = c.lines().collect();
    assert_eq!(
        lines[0],
        "time_s,node0_mib,node1_mib,node0_threads,node1_threads,cores_with_two_threads"
    );
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2], "0.500,70.000,30.000,1,1,0");
    assert_eq!(
        file_stem(&a_plan(Test::Numa01ThreadAlloc), 3),
        "numa01_THREAD_ALLOC-run3"
    );
    let hard = p.baseline(crate::probes::autonuma::bind::Bind::Hard, String::new());
    assert_eq!(file_stem(&hard, 1), "numa01_HARD_BIND-run1");
}

#[test]
fn costly_looks_get_a_wider_interval_suggested() {
    // 0.03 s of 6 s is 0.5%: no hint.
    assert_eq!(overhead_hint(&outcome(), &settings()), None);
    // 0.18 s of 6 s is 3% over 3 looks: 60 ms each; 0.5 s x 3 = 1.5 s.
    let mut o = outcome();
    o.sampling_cpu_s = 0.18;
    let hint = overhead_hint(&o, &settings()).unwrap();
    assert!(
        hint.contains("3.00% of the run's CPU time (60.0 ms each"),
        "{hint}"
    );
    assert!(
        hint.contains("--interval 1.5 or fewer --sample-pages would"),
        "{hint}"
    );
    let text = runs_table(&a_plan(Test::Numa02), &[o.clone()], &settings());
    assert!(text.contains("run 1: the looks took 3.00%"), "{text}");
    o.method = Method::Exact;
    let hint = overhead_hint(&o, &settings()).unwrap();
    assert!(hint.contains("or sampling (no --exact)"), "{hint}");
}

#[test]
fn the_text_says_how_memory_was_found() {
    let h = header_of(&[0], &settings());
    assert!(
        h.contains("looked at every 0.5 s: memory per node from the node of 4096 sampled pages (move_pages), or of every page (numa_maps) up to 16384 pages;"),
        "{h}"
    );
    let exact = Settings {
        method: Method::Exact,
        ..settings()
    };
    assert!(header_of(&[0], &exact).contains("page by page (numa_maps)"));
    let text = runs_table(&a_plan(Test::Numa02), &[outcome()], &settings());
    assert!(
        text.contains("up to 4096 pages queried per look, each standing for up to 16"),
        "{text}"
    );
    // Small memory, every page from numa_maps: nothing estimated, and
    // the policies were read.
    let mut all = outcome();
    (all.sampled_looks, all.exact_looks) = (0, 3);
    let text = runs_table(&a_plan(Test::Numa02), &[all.clone()], &settings());
    assert!(!text.contains("estimated"), "{text}");
    let note = method_note(&all, &settings());
    assert!(note.contains("and memory policies from numa_maps at each look: the test's mappings held no more than 16384 pages"), "{note}");
    assert!(!note.contains("hidden"), "{note}");
    let r = record(&a_plan(Test::Numa02), 1, &all, &settings());
    assert_eq!(r.params["policies_seen"], json!(["default"]));
    assert!(
        r.params.get("sample_stride_max").is_none(),
        "{:?}",
        r.params
    );
    all.carried_pct_max = 12.25;
    assert!(
        method_note(&all, &settings()).contains("at most 12.2% of a look's memory was hidden"),
        "{}",
        method_note(&all, &settings())
    );
    all.method_fallback = Some("move_pages(pid=7) failed: denied".into());
    let text = runs_table(&a_plan(Test::Numa02), &[all.clone()], &settings());
    assert!(text.contains("run 1: move_pages(pid=7) failed"), "{text}");
    assert!(method_note(&all, &settings()).starts_with("memory per node sampled until"));
}

#[test]
fn a_partial_run_is_marked_and_never_averaged() {
    let p = a_plan(Test::Numa02);
    let whole = outcome();
    let mut cut = outcome();
    cut.runtime_s = 0.25;
    cut.interrupted = Some(2);
    let text = runs_table(&p, &[whole.clone(), cut.clone()], &settings());
    assert!(text.contains("2 INTERRUPTED"), "{text}");
    let avg = format!("{:.2} s on average over 1 run(s)", whole.runtime_s);
    assert!(text.contains(&avg), "{text}");
    let sum = summary(&[(p.clone(), vec![whole.clone(), cut.clone()])]);
    assert!(sum.contains("1 (+1 partial)"), "{sum}");
    assert!(sum.contains(&format!("{:.2}", whole.runtime_s)), "{sum}");
    let mut died = outcome();
    died.failed = Some("process 0 ended".into());
    let text = runs_table(&p, &[died.clone()], &settings());
    assert!(text.contains("1 FAILED"), "{text}");
    assert!(text.contains("no whole run, no average"), "{text}");
    let sum = summary(&[(p, vec![died])]);
    assert!(sum.contains("0 (1 partial)"), "{sum}");
}

#[test]
fn tables_show_runs_average_and_spread() {
    let p = a_plan(Test::Numa02);
    let mut b = outcome();
    b.runtime_s = 5.0;
    b.convergence_s = None;
    let text = runs_table(&p, &[outcome(), b.clone()], &settings());
    assert!(text.contains("node 1 at end"), "{text}");
    assert!(text.contains("48.0%"), "{text}");
    assert!(text.contains("never"), "{text}");
    // mean 4, sample stddev sqrt(2) = 1.41.
    assert!(
        text.contains("4.00 s on average over 2 run(s), stddev 1.41 s"),
        "{text}"
    );
    let sum = summary(&[(p.clone(), vec![outcome(), b])]);
    assert!(sum.contains("1 of 2 runs, at 1.0 s on average"), "{sum}");
    // For a fixed time the work done is the figure: 6 GB in 3 s.
    let timed = plan(
        Test::Numa02,
        4,
        2,
        &start64(),
        &Asked {
            secs: Some(3),
            ..Default::default()
        },
    )
    .unwrap();
    let text = runs_table(&timed, &[outcome()], &settings());
    assert!(
        text.contains("2.0 GB/s cleared on average over 1 run(s)"),
        "{text}"
    );
    assert!(text.contains("(higher is better)"), "{text}");
    let rec = summary_record(&p, &[outcome()], None);
    assert_eq!(rec.samples["runtime_s"], [3.0]);
    assert_eq!(rec.metrics["convergence_mean_s"].value, 1.0);
}

#[test]
fn a_record_gives_back_its_plan_and_the_commands_header() {
    let topo = crate::topology::fixture("two-node");
    let p = a_plan(Test::Numa02Smt);
    let r = record(&p, 1, &outcome(), &settings());
    assert_eq!(crate::probes::autonuma::facts::plan_of(&r), Some(p.clone()));
    let mut o = outcome();
    o.cpu_nodes = topo.usable_cpu_nodes().iter().collect();
    let r = record(&p, 1, &o, &settings());
    let doc = crate::results::Document::new(&topo);
    assert_eq!(
        Header::of(&doc, &r),
        Header::live(&topo, p.nr_cpus, p.start_node, &settings())
    );
}

#[test]
fn the_view_prints_what_the_command_printed_and_a_csv_line_per_run() {
    use crate::view::View;
    let topo = crate::topology::fixture("two-node");
    let p = a_plan(Test::Numa02);
    let mut cut = outcome();
    cut.failed = Some("process 0 ended".into());
    let outs = [outcome(), cut];
    let mut doc = crate::results::Document::new(&topo);
    doc.records.extend(
        outs.iter()
            .enumerate()
            .map(|(i, o)| record(&p, i + 1, o, &settings())),
    );
    let records: Vec<&Record> = doc.records.iter().collect();
    let head = Header::of(&doc, records[0]);
    let runs = runs_of(&p, &outs, &settings());
    let printed = format!(
        "{}{}{}{}",
        header(&head),
        text::intro(&p),
        text::runs_text(&p, &runs),
        text::summary(&[(p.test.name().to_string(), runs.clone())])
    );
    let view = &crate::probes::autonuma::AutonumaView;
    assert_eq!(view.text(&doc, &records).unwrap(), printed);
    let csv = view.csv(&doc, &records).unwrap();
    assert_eq!(
        csv.header[..6],
        ["test", "run", "end", "runtime_s", "gb_s", "convergence_s"]
    );
    assert_eq!(csv.header[6..8], ["node0_end_pct", "node1_end_pct"]);
    assert_eq!(csv.rows.len(), 2);
    assert_eq!(csv.rows[1][2], "failed");
    assert_eq!(csv.rows[0][7], "48");
    let sections = view.sections(&doc, &records);
    assert_eq!(sections.len(), 3, "setup, the test, the summary");
    assert!(sections[1].rows[1][0].contains("FAILED"));
}

#[test]
fn baselines_give_the_test_its_position_in_text_records_and_view() {
    use crate::probes::autonuma::bind::Bind;
    use crate::view::View;
    let topo = crate::topology::fixture("two-node");
    let p = a_plan(Test::Numa01);
    let plans = [
        p.baseline(Bind::Hard, "HARD_BIND: best".into()),
        p.baseline(Bind::Inverse, "INVERSE_BIND: worst".into()),
        p.clone(),
    ];
    let mut doc = crate::results::Document::new(&topo);
    let mut tests = Vec::new();
    let mut printed = String::new();
    for (plan, secs) in plans.iter().zip([2.0, 6.0, 3.6]) {
        let mut o = outcome();
        o.runtime_s = secs;
        let r = record(plan, 1, &o, &settings());
        assert_eq!(
            crate::probes::autonuma::facts::plan_of(&r).as_ref(),
            Some(plan)
        );
        let runs = vec![Run::of(&r)];
        printed.push_str(&text::intro(plan));
        printed.push_str(&text::runs_text(plan, &runs));
        tests.push((plan.label(), runs));
        if let Some(l) = text::position_line(&plan.label(), &tests) {
            printed.push_str(&l);
        }
        doc.records.push(r);
    }
    assert_eq!(doc.records[0].name, "numa01_HARD_BIND run 1");
    assert_eq!(doc.records[1].params["bind"], "inverse_bind");
    assert!(!doc.records[2].params.contains_key("bind"));
    let line = text::position_line("numa01", &tests).unwrap();
    assert!(
        line.starts_with(
            "numa01: 60% of the way from inverse to hard bind (INVERSE_BIND 6.00 s, HARD_BIND 2.00 s, numa01 3.60 s)"
        ),
        "{line}"
    );
    assert!(text::position_line("numa01_HARD_BIND", &tests).is_none());
    assert!(!line.contains("placement"), "{line}");
    let position = text::position_of("numa01", &tests).flatten();
    let sum = summary_record(&plans[2], &[outcome()], position.as_ref());
    assert!((sum.metrics["position_pct"].value - 60.0).abs() < 1e-9);
    assert_eq!(sum.params["position_by"], "runtime_s");
    assert_eq!(sum.params["inverse_bind_value"], 6.0);
    // The view prints what the command printed, the summary with the
    // position column.
    let records: Vec<&Record> = doc.records.iter().collect();
    printed = format!(
        "{}{printed}{}",
        header(&Header::of(&doc, records[0])),
        text::summary(&tests)
    );
    let view = &crate::probes::autonuma::AutonumaView;
    let shown = view.text(&doc, &records).unwrap();
    assert_eq!(shown, printed);
    let last = shown
        .lines()
        .rev()
        .find(|l| l.starts_with("numa01 "))
        .unwrap();
    assert!(last.trim_end().ends_with("60%"), "{shown}");
    assert!(shown.contains("baseline"), "{shown}");
    // Outside the two, the line says which way.
    let mut worse = tests.clone();
    worse[2].1[0].runtime_s = 7.0;
    let line = text::position_line("numa01", &worse).unwrap();
    assert!(line.contains("-25% of the way"), "{line}");
    assert!(
        line.trim_end().ends_with("slower than the worst placement"),
        "{line}"
    );
    // A cut test run is never placed between the baselines.
    let mut cut = outcome();
    cut.interrupted = Some(2);
    tests[2].1 = vec![Run::of(&record(&plans[2], 1, &cut, &settings()))];
    let line = text::position_line("numa01", &tests).unwrap();
    assert!(line.contains("no position"), "{line}");
    assert!(
        !text::summary(&tests).contains('%'),
        "{}",
        text::summary(&tests)
    );
}

#[test]
fn how_a_run_ended_and_a_fallback_are_conditions_the_facts_read() {
    use crate::probes::autonuma::facts::End;
    let p = a_plan(Test::Numa02);
    let mut o = outcome();
    o.method_fallback = Some("move_pages(pid=7) failed: denied".into());
    let r = record(&p, 1, &o, &settings());
    let why = "move_pages(pid=7) failed: denied";
    assert_eq!(
        r.conditions,
        [Condition::FallbackMethod { why: why.into() }]
    );
    assert_eq!(Run::of(&r).fallback.as_deref(), Some(why));
    assert!(Run::of(&r).whole());
    let mut cut = outcome();
    cut.interrupted = Some(2);
    let r = record(&p, 1, &cut, &settings());
    assert_eq!(r.cut_by_signal(), Some(2));
    assert_eq!(Run::of(&r).end, End::Interrupted);
    // The note alone, as a record from before conditions has it, is no
    // stop: notes are for people.
    let mut old = r.clone();
    old.conditions.clear();
    assert!(old.notes.iter().any(|n| n.contains("the run is partial")));
    assert_eq!(Run::of(&old).end, End::Whole);
    let mut died = outcome();
    died.failed = Some("process 0 ended".into());
    let r = record(&p, 1, &died, &settings());
    assert_eq!(r.part_failed(), Some("process 0 ended"));
    assert_eq!(Run::of(&r).end, End::Failed);
}

#[test]
fn a_records_plan_notes_are_counted_and_in_an_old_record_told_by_its_checks() {
    use crate::probes::autonuma::facts::plan_of;
    let limit = Condition::ScaledByMemoryLimit {
        source: "memory cgroup /x (memory.max)".into(),
    };
    let start = Start {
        free: 1 << 30,
        words: "the 1 GiB left under memory cgroup /x (memory.max) of 2 GiB".into(),
        limited: Some(limit.clone()),
        ..start64()
    };
    let p = plan(Test::Numa02, 4, 2, &start, &Asked::default()).unwrap();
    assert_eq!(p.conditions, std::slice::from_ref(&limit));
    assert!(p.notes.len() >= 2, "{:?}", p.notes);
    // The test: memory off the start node at the first look, a policy
    // other than default.
    let mut o = outcome();
    o.looks[0].mem = [(0, 50 << 20), (1, 50 << 20)].into();
    (o.exact_looks, o.policies) = (1, ["bind".to_string()].into());
    // A baseline: the policy, memory off its bound node, tasks off theirs.
    let hard = p.baseline(crate::probes::autonuma::bind::Bind::Hard, "HARD".into());
    let mut bound = o.clone();
    (bound.bound_pct, bound.tasks_off_cpus) = (Some(50.0), 2);
    let cases = [(&p, &o, 2), (&hard, &bound, 3), (&p, &outcome(), 0)];
    for (plan, o, checked) in cases {
        assert_eq!(checks(plan, o).len(), checked);
        let r = record(plan, 1, o, &settings());
        assert_eq!(r.usize_param(ap::PLAN_NOTES), Some(plan.notes.len()));
        assert_eq!(r.conditions, std::slice::from_ref(&limit));
        assert_eq!(plan_of(&r).as_ref(), Some(plan));
        // A record from before the count: its checks are counted from
        // its figures, and the notes before the method note are the plan's.
        let mut old = r.clone();
        old.params.remove(ap::PLAN_NOTES);
        assert_eq!(plan_of(&old).as_ref(), Some(plan), "{checked} checks");
    }
}
