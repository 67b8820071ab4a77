//! Bandwidth classes and the model's parameters as sections, shown under a
//! matrix and by `numabench model`.

use crate::analysis::atlas::Atlas;
use crate::analysis::model::{self, Peak};
use crate::analysis::placement::{self, RowClasses};
use crate::topology::Topology;
use crate::view::Section;

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
