//! Bandwidth classes and the model's parameters as sections, shown under a
//! matrix and by `numabench model`; and the model's records in every
//! format.

use crate::analysis::atlas::Atlas;
use crate::analysis::model::{self, Peak};
use crate::analysis::placement::{self, RowClasses};
use crate::results::names::model::{self as md, metric as mm, param as mp};
use crate::results::names::{metric, param, probe};
use crate::results::{Document, Record};
use crate::topology::Topology;
use crate::view::{Section, View};

fn list(nodes: &[usize]) -> String {
    nodes
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Classes per CPU node (with the SLIT of each class's nodes beside them),
/// system-wide classes, where the SLIT disagrees, and Gamma.
pub fn class_sections(a: &Atlas, topo: &Topology, gamma: &Peak) -> Vec<Section> {
    if a.single.is_empty() {
        return Vec::new();
    }
    let mut rows = Section::new(
        "bandwidth classes from each CPU node (single-thread; alpha = class bandwidth / Gamma)",
    );
    rows.header = vec![
        "cpu node".into(),
        "class".into(),
        "<= MB/s".into(),
        "alpha".into(),
        "memory nodes".into(),
        "SLIT".into(),
    ];
    let mut flags = Vec::new();
    let mut criterion = None;
    let mut details = Vec::new();
    for &c in &a.cpu_nodes {
        let rc: RowClasses = placement::row_classes(a, c);
        for class in &rc.classes.classes {
            let members = rc.members(class.index);
            let mut slit: Vec<u32> = members
                .iter()
                .filter_map(|&m| topo.distance(c, m))
                .collect();
            slit.sort_unstable();
            slit.dedup();
            rows.rows.push(vec![
                c.to_string(),
                class.index.to_string(),
                format!("{:.0}", class.max),
                format!("{:.4}", model::alpha(class.max, gamma.mb_s)),
                list(&members),
                slit.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ]);
        }
        flags.extend(placement::slit_disagreements(topo, &rc));
        flags.extend(placement::hmat_disagreements(topo, &rc));
        // The rule is the same for every row; k and merges are the row's.
        let (rule, detail) = rc
            .classes
            .criterion
            .rsplit_once("; ")
            .map_or((rc.classes.criterion.as_str(), ""), |(a, b)| (a, b));
        criterion.get_or_insert(rule.to_string());
        if !detail.is_empty() {
            details.push(format!("from node {c}: {detail}"));
        }
    }
    if let Some(c) = criterion {
        rows.lines.push(format!("classes: {c}"));
    }
    rows.lines.extend(details);
    if flags.is_empty() {
        rows.lines
            .push("the firmware's SLIT (and HMAT, where present) rank the memory nodes as the measured classes do".into());
    } else {
        rows.lines
            .extend(flags.into_iter().map(|f| format!("disagreement: {f}")));
    }
    let mut system = Section::new("system-wide bandwidth classes");
    let (cells, classes) = placement::system_classes(a);
    for (line, class) in classes
        .describe(Some(gamma.mb_s))
        .iter()
        .zip(&classes.classes)
    {
        let members: Vec<String> = class
            .members
            .iter()
            .map(|&i| format!("{}->{}", cells[i].0, cells[i].1))
            .collect();
        system
            .lines
            .push(format!("{line}: cells {}", members.join(", ")));
    }
    let mut peak = Section::new("model");
    peak.lines.push(gamma.describe());
    peak.lines.push(
        "D = sum(alpha_i x theta_i), theta_i = share of accesses to class i; see 'numabench model FILE --theta ...' and '--pid PID'"
            .into(),
    );
    vec![rows, system, peak]
}

/// The model's view (registered in `probes::VIEWS`): every figure its
/// records hold. `numabench model` prints more in text (see `sections.rs`).
pub struct ModelView;

fn value(r: &Record, key: &str) -> f64 {
    r.metrics.get(key).map_or(f64::NAN, |m| m.value)
}

fn has(r: &Record, key: &str) -> bool {
    r.params.contains_key(key)
}

fn uint(r: &Record, key: &str) -> Option<u64> {
    r.params.get(key).and_then(|v| v.as_u64())
}

fn members(r: &Record) -> Vec<String> {
    r.params
        .get(mp::MEMBERS)
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|m| m.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

impl View for ModelView {
    fn probe(&self) -> &'static str {
        probe::MODEL
    }

    fn heading(&self) -> String {
        "Data-access model".into()
    }

    fn sections(&self, doc: &Document, records: &[&Record]) -> Vec<Section> {
        let classes: Vec<&Record> = records
            .iter()
            .copied()
            .filter(|r| has(r, mp::CLASS))
            .collect();
        let mut out = Vec::new();
        if !classes.is_empty() {
            out.push(class_table(doc, &classes));
            out.push(system_lines(&classes));
        }
        if let Some(g) = records.iter().find(|r| r.name == md::GAMMA) {
            out.push(gamma_section(g));
        }
        for r in records.iter().filter(|r| has(r, mp::THETA)) {
            out.push(mix_section(r, &classes));
        }
        out.extend(pid_section(records));
        out.extend(validation_section(records));
        out
    }
}

/// The classes from each CPU node, with the SLIT of their nodes.
fn class_table(doc: &Document, classes: &[&Record]) -> Section {
    let mut s = Section::new(
        "bandwidth classes from each CPU node (single-thread; alpha = class bandwidth / Gamma)",
    );
    s.header = [
        "cpu node",
        "class",
        "<= MB/s",
        "alpha",
        "memory nodes",
        "SLIT",
    ]
    .map(String::from)
    .to_vec();
    for r in classes {
        let Some(c) = uint(r, param::CPU_NODE) else {
            continue;
        };
        let nodes = members(r);
        let mut slit: Vec<u32> = nodes
            .iter()
            .filter_map(|m| m.parse().ok())
            .filter_map(|m| doc.host.topology.distance(c as usize, m))
            .collect();
        slit.sort_unstable();
        slit.dedup();
        s.rows.push(vec![
            c.to_string(),
            uint(r, mp::CLASS).unwrap_or(0).to_string(),
            format!("{:.0}", value(r, metric::BANDWIDTH_MB_S)),
            format!("{:.4}", value(r, mm::ALPHA)),
            nodes.join(","),
            slit.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(","),
        ]);
    }
    s
}

fn system_lines(classes: &[&Record]) -> Section {
    let mut s = Section::new("system-wide bandwidth classes");
    for r in classes.iter().filter(|r| !has(r, param::CPU_NODE)) {
        s.lines.push(format!(
            "Class {}: <= {:.0} MB/s (alpha {:.4}): cells {}",
            uint(r, mp::CLASS).unwrap_or(0),
            value(r, metric::BANDWIDTH_MB_S),
            value(r, mm::ALPHA),
            members(r).join(", ")
        ));
    }
    s
}

fn gamma_section(g: &Record) -> Section {
    let mut s = Section::new("model");
    if let Some(source) = g.params.get(mp::SOURCE).and_then(|v| v.as_str()) {
        s.lines.push(source.to_string());
    }
    s.lines.push(
        "D = sum(alpha_i x theta_i), theta_i = share of accesses to class i; see 'numabench model FILE --theta ...' and '--pid PID'"
            .into(),
    );
    s
}

/// D for a mix, its terms from the classes it was worked out over.
fn mix_section(r: &Record, classes: &[&Record]) -> Section {
    let from = r.name.strip_prefix("D ").unwrap_or(&r.name);
    let row = uint(r, param::CPU_NODE);
    let alphas: Vec<f64> = classes
        .iter()
        .filter(|c| uint(c, param::CPU_NODE) == row)
        .map(|c| value(c, mm::ALPHA))
        .collect();
    let thetas: Vec<f64> = r
        .params
        .get(mp::THETA)
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|t| t.as_f64()).collect())
        .unwrap_or_default();
    let d = value(r, mm::D);
    let terms: Vec<String> = thetas
        .iter()
        .zip(&alphas)
        .map(|(t, a)| format!("{t:.4} x {a:.4}"))
        .collect();
    let mut s = Section::new(format!("data-access performance D ({from} classes)"));
    s.lines.push(format!("D = {} = {d:.4}", terms.join(" + ")));
    s.lines.push(format!(
        "predicted bandwidth D x Gamma = {:.0} MB/s",
        value(r, metric::BANDWIDTH_MB_S)
    ));
    if let Some(a0) = alphas.first() {
        let loss = value(r, mm::LOSS);
        s.lines.push(format!(
            "loss against alpha_0: D - alpha_0 = {loss:+.4} ({:+.1}% of alpha_0)",
            100.0 * loss / a0
        ));
    }
    s
}

/// D of a process on each CPU node, and the best of them.
fn pid_section(records: &[&Record]) -> Option<Section> {
    let rows: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| has(r, mp::PID))
        .collect();
    let pid = uint(rows.first()?, mp::PID)?;
    let mut s = Section::new(format!("process {pid}: predicted D on each CPU node"));
    s.header = ["cpu node", "D", "predicted MB/s"]
        .map(String::from)
        .to_vec();
    for r in &rows {
        s.rows.push(vec![
            uint(r, param::CPU_NODE).unwrap_or(0).to_string(),
            format!("{:.4}", value(r, mm::D)),
            format!("{:.0}", value(r, metric::BANDWIDTH_MB_S)),
        ]);
    }
    let best = rows.iter().reduce(|a, b| {
        if value(b, mm::D) > value(a, mm::D) + 1e-12 {
            b
        } else {
            a
        }
    })?;
    let node = uint(best, param::CPU_NODE).unwrap_or(0);
    s.lines.push(format!(
        "best: node {node} (D {:.4}): numactl --cpunodebind={node} <command>",
        value(best, mm::D)
    ));
    Some(s)
}

/// A validation's measurement and predictions, or the nodes a stop left
/// measured alone.
fn validation_section(records: &[&Record]) -> Option<Section> {
    if let Some(r) = records.iter().find(|r| has(r, mp::WEIGHTS)) {
        let text = |k: &str| r.params.get(k).and_then(|v| v.as_str()).unwrap_or("?");
        let mut s = Section::new(format!(
            "model check: one thread on CPU node {}, {} ({}), memory split by weight {}",
            uint(r, param::CPU_NODE).unwrap_or(0),
            text(param::KERNEL),
            text(param::VARIANT),
            text(mp::WEIGHTS)
        ));
        s.lines.push(format!(
            "measured mixed placement: {:.0} MB/s",
            value(r, metric::BANDWIDTH_MB_S)
        ));
        for (what, p, e) in [
            (
                "the thesis' linear model sum(theta_i x b_i)",
                mm::PREDICTED_LINEAR_MB_S,
                mm::ERROR_LINEAR_PCT,
            ),
            (
                "time-weighted 1 / sum(theta_i / b_i)",
                mm::PREDICTED_HARMONIC_MB_S,
                mm::ERROR_HARMONIC_PCT,
            ),
        ] {
            s.lines.push(format!(
                "predicted, {what}: {:.0} MB/s, error {:+.1}%",
                value(r, p),
                value(r, e)
            ));
        }
        return Some(s);
    }
    let pure: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| has(r, mp::WEIGHT))
        .collect();
    (!pure.is_empty()).then(|| {
        let mut s = Section::new("model check, stopped before the mixed placement");
        s.lines = pure
            .iter()
            .map(|r| {
                format!(
                    "memory node {} alone: {:.0} MB/s",
                    uint(r, param::MEM_NODE).unwrap_or(0),
                    value(r, metric::BANDWIDTH_MB_S)
                )
            })
            .collect();
        s
    })
}
