//! A probe that exists nowhere but here, registered beside the real ones:
//! its part, its summary line, its idle chase and its fleet figure show up
//! in `run`'s parts, `run`'s summary, the repeat check and the fleet
//! report with no line changed anywhere else. Adding a probe is its
//! folder and its registry line.

use crate::analysis::fleet::figures::plain;
use crate::probes::REGISTRY;
use crate::results::{Better, Document, LeanDocument, Record};
use crate::topology::Topology;
use crate::view::{FleetFigure, Part, Probe, Profile, Section, Spec, View};

const TOY: &str = "toy";
const SPEED: &str = "speed_m_s";

struct ToyView;

impl View for ToyView {
    fn probe(&self) -> &'static str {
        TOY
    }

    fn sections(&self, _doc: &Document, _records: &[&Record]) -> Vec<Section> {
        Vec::new()
    }
}

impl Probe for ToyView {
    fn part(&self) -> Option<Part> {
        Some(Part {
            profile: Profile::Default,
            order: 9,
            args: |topo, _| {
                let nodes = topo.usable_memory_nodes().len().to_string();
                vec![TOY.into(), "--nodes".into(), nodes, "--json".into()]
            },
            counted_as: None,
            in_process: None,
            plan: |_, _| crate::probes::part::workload_plan("one toy".into(), 1, 0.1),
        })
    }

    fn summary_line(&self, _topo: &Topology, records: &[&Record]) -> Option<String> {
        let fastest = records
            .iter()
            .filter_map(|r| r.value(SPEED))
            .reduce(f64::max)?;
        Some(format!("  toy speed:          {fastest:.1} m/s\n"))
    }

    fn idle_chase(&self, r: &Record) -> Option<f64> {
        r.value(crate::results::names::metric::LATENCY_NS)
    }

    fn idle_chase_source(&self) -> &'static str {
        "the toy's lap"
    }

    fn fleet_figures(&self) -> &'static [FleetFigure] {
        &[FleetFigure {
            spec: Spec {
                id: "toy_speed_m_s",
                title: "toy speed",
                unit: "m/s",
                better: Better::Higher,
            },
            read: |records| {
                plain(
                    records
                        .iter()
                        .filter_map(|r| r.value(SPEED))
                        .reduce(f64::max)?,
                )
            },
        }]
    }
}

/// The real registry and the toy after it.
fn registry() -> Vec<&'static dyn Probe> {
    REGISTRY
        .iter()
        .copied()
        .chain([&ToyView as &dyn Probe])
        .collect()
}

fn toy_record(speed: f64) -> Record {
    Record::new(TOY, "lap")
        .param(crate::results::names::param::CPU_NODE, 0)
        .metric(SPEED, speed, "m/s", Better::Higher)
}

/// The one-node run of tests/golden/cases with two toy records.
fn run_with_toy() -> Document {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cases/run.json");
    let mut doc = Document::load(&path).unwrap().document;
    doc.records.push(toy_record(3.5));
    doc.records.push(toy_record(4.25));
    doc
}

#[test]
fn the_toy_part_runs_after_the_default_parts_with_its_command_line() {
    let topo = crate::topology::fixture("two-node");
    let names = |reg: &[&dyn Probe], profile| -> Vec<&str> {
        super::parts::of(profile, reg)
            .iter()
            .map(|p| p.probe)
            .collect()
    };
    let reg = registry();
    for profile in [Profile::Default, Profile::Full] {
        let mut want = names(REGISTRY, profile);
        let defaults = names(REGISTRY, Profile::Default).len();
        want.insert(defaults, TOY);
        assert_eq!(names(&reg, profile), want, "{profile:?}");
    }
    // A quick run is the matrix alone, with the toy or without it.
    assert_eq!(
        names(&reg, Profile::Quick),
        [crate::results::names::probe::MATRIX]
    );
    let toy = super::parts::of(Profile::Default, &reg).pop().unwrap();
    assert_eq!(
        (toy.part.args)(&topo, crate::view::Scope::of(crate::view::Profile::Default)),
        ["toy", "--nodes", "2", "--json"]
    );
}

#[test]
fn the_toy_line_closes_the_probe_lines_of_run_summary() {
    let doc = run_with_toy();
    let plain = super::summary::summary(&doc, 25.0, REGISTRY);
    let with_toy = super::summary::summary(&doc, 25.0, &registry());
    // The findings close the summary; the toy's line closes the probes'.
    assert_eq!(
        with_toy,
        plain.replacen(
            "findings:\n",
            "  toy speed:          4.2 m/s\nfindings:\n",
            1
        )
    );
    // A toy part that failed says so in place of its figure.
    let mut failed = doc.clone();
    failed
        .records
        .push(Record::new(TOY, crate::results::names::run::NOT_COMPLETE));
    let text = super::summary::summary(&failed, 25.0, &registry());
    assert!(
        text.contains("  toy                 NOT COMPLETE, see toy.log\nfindings:\n"),
        "{text}"
    );
    assert!(
        text.contains("  ! warning: toy did not complete:"),
        "{text}"
    );
}

#[test]
fn the_toy_figure_is_a_column_of_the_fleet_report() {
    use crate::analysis::fleet::{figures, report, specs};
    let reg = registry();
    let json = run_with_toy().to_json().unwrap();
    let lean = LeanDocument::from_json(std::str::from_utf8(&json).unwrap()).unwrap();
    let machines: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|name| {
            let mut m = figures::read(&lean, &format!("{name}.json"), &reg);
            m.name = name.to_string();
            m
        })
        .collect();
    let all = specs(&reg);
    assert_eq!(all.len(), specs(REGISTRY).len() + 1);
    assert_eq!(all.last().unwrap().id, "toy_speed_m_s");
    assert_eq!(
        machines[0].figures.last().unwrap().as_ref().unwrap().value,
        4.25
    );
    let r = report(machines, Default::default(), all);
    use crate::output::render::Format;
    let text = crate::output::fleet::report(&r, &[], Format::Text).unwrap();
    assert!(text.contains("\ntoy speed "), "{text}");
    let csv = crate::output::fleet::report(&r, &[], Format::Csv).unwrap();
    assert!(csv.contains(",toy_speed_m_s,4.25,m/s,"), "{csv}");
}

#[test]
fn the_toy_chase_is_compared_with_the_same_chase_of_the_matrix() {
    use crate::analysis::repeats::{latency_disagreements, source};
    use crate::results::names::{matrix, metric, probe};
    let mut doc = run_with_toy();
    let cell = doc
        .records
        .iter()
        .find(|r| {
            r.probe == probe::MATRIX
                && r.str_param(matrix::param::KIND) == Some(matrix::kind::LATENCY)
        })
        .unwrap();
    let mut lap = cell.clone();
    lap.probe = TOY.into();
    lap.metrics.get_mut(metric::LATENCY_NS).unwrap().value = 404.0;
    doc.records.push(lap);
    let reg = registry();
    let found = latency_disagreements(&doc.records, &reg);
    let first = &found[0];
    assert_eq!(first.high, (TOY.to_string(), 404.0));
    assert_eq!(source(&first.high.0, &reg), "the toy's lap");
    // Without the toy in the registry its record is no chase.
    assert!(
        latency_disagreements(&doc.records, REGISTRY)
            .iter()
            .all(|d| d.high.0 != TOY)
    );
}
