use super::*;
use crate::results::Better;
use crate::topology::fixture;

fn doc() -> Document {
    let mut topo = fixture("two-node");
    topo.hostname = "<img src=x onerror=alert(1)>".into();
    let mut d = Document::new(&topo);
    for (c, m, v) in [
        (0, 0, 10_000.0),
        (0, 1, 6_000.0),
        (1, 0, 5_800.0),
        (1, 1, 9_800.0),
    ] {
        d.records.push(
            Record::new("matrix", &format!("bandwidth_1t {c}->{m}"))
                .param("kind", "bandwidth_1t")
                .param("cpu_node", c)
                .param("mem_node", m)
                .metric("bandwidth_mb_s", v, "MB/s", Better::Higher),
        );
    }
    d.records.push(
        Record::new(crate::results::names::probe::SWEEP, "read 64K")
            .param("size_bytes", 65536)
            .param("operation", "read")
            .metric("bandwidth_mb_s", 50_000.0, "MB/s", Better::Higher),
    );
    d.records
        .push(Record::new("mem</td>", "2x1-bw-process").metric(
            "total_speed_gb_s",
            6.2,
            "GB/s",
            Better::Higher,
        ));
    d
}

#[test]
fn strings_from_the_file_are_escaped() {
    let d = doc();
    let html = report(
        &[Run {
            label: "a\"b".into(),
            doc: &d,
        }],
        crate::probes::REGISTRY,
    );
    assert!(!html.contains("<img"), "markup from a hostname leaked");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(!html.contains("mem</td>"));
    assert!(html.contains("a&quot;b"));
}

#[test]
fn the_contents_link_every_part_of_every_run_to_its_anchor() {
    let d = doc();
    let html = report(
        &[
            Run {
                label: "a".into(),
                doc: &d,
            },
            Run {
                label: "b".into(),
                doc: &d,
            },
        ],
        crate::probes::REGISTRY,
    );
    let start = html.find("<nav class=\"toc\">").expect("no contents");
    let nav = &html[start..start + html[start..].find("</nav>").unwrap()];
    // Before the first run's part.
    assert!(start < html.find("<section").unwrap());
    let targets: Vec<&str> = nav
        .split("href=\"#")
        .skip(1)
        .map(|t| t.split('"').next().unwrap())
        .collect();
    for want in [
        "host-a",
        "findings-a",
        "topology-a",
        "matrix-a",
        "sweep-a",
        "mem--td--b",
    ] {
        assert!(targets.contains(&want), "{want} not in {targets:?}");
    }
    for t in &targets {
        assert!(html.contains(&format!(" id=\"{t}\"")), "#{t} leads nowhere");
    }
}

#[test]
fn parts_appear_for_the_records_present() {
    let d = doc();
    let html = report(
        &[Run {
            label: "base".into(),
            doc: &d,
        }],
        crate::probes::REGISTRY,
    );
    assert!(html.contains("Node-to-node matrix"));
    assert!(html.contains("bandwidth against buffer size"));
    assert!(html.contains("2x1-bw-process"));
    assert!(html.contains("bandwidth classes"));
    // 6000 is 60% of its row's local value: a warm colour.
    assert!(html.contains("title=\"60%\""), "{html}");
    // The sorter is the one script.
    assert_eq!(html.matches("<script").count(), 1);
    assert!(html.contains(SORTER));
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
}

#[test]
fn a_records_convergence_is_marked_on_its_time_series() {
    let topo = fixture("two-node");
    let mut d = Document::new(&topo);
    let series = crate::results::Series {
        name: "memory_per_node".into(),
        x_label: "time".into(),
        x_unit: "s".into(),
        y_label: "memory".into(),
        y_unit: "MiB".into(),
        x: vec![0.0, 1.0, 2.0],
        lines: vec![crate::results::Line {
            label: "node 1".into(),
            y: vec![0.0, 40.0, 50.0],
        }],
    };
    let mut converged =
        Record::new("autonuma", "numa02 run 1").metric("convergence_s", 1.5, "s", Better::Lower);
    converged.series.push(series.clone());
    let mut never = Record::new("autonuma", "numa02 run 2");
    never.series.push(series);
    d.records.push(converged);
    d.records.push(never);
    let html = report(
        &[Run {
            label: "r".into(),
            doc: &d,
        }],
        crate::probes::REGISTRY,
    );
    assert_eq!(html.matches("converged 1.5 s").count(), 1, "{html}");
    assert_eq!(html.matches("<polyline").count(), 2);
}

#[test]
fn heat_runs_from_red_to_green() {
    assert_eq!(heat(100.0), "hsl(120,70%,80%)");
    assert_eq!(heat(0.0), "hsl(0,70%,80%)");
    assert_eq!(heat(150.0), heat(100.0));
}

/// Every id of a run's report is used once: a contents link or a fragment
/// leads to one place, the run's heading and its own part included.
#[test]
fn every_id_of_a_runs_report_is_unique() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cases/readme-run.json");
    let d = Document::load(&path).unwrap().document;
    assert!(d.records.iter().any(|r| r.probe == "run"));
    let html = report(
        &[Run {
            label: "run".into(),
            doc: &d,
        }],
        crate::probes::REGISTRY,
    );
    let ids: Vec<&str> = html
        .split(" id=\"")
        .skip(1)
        .map(|t| t.split('"').next().unwrap())
        .collect();
    assert!(ids.len() > 5, "{ids:?}");
    let mut seen = std::collections::BTreeSet::new();
    for id in &ids {
        assert!(seen.insert(*id), "id {id} is used twice");
    }
}
