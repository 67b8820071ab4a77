//! Bandwidth classes and the model's parameters as sections, shown under a
//! matrix and by `numabench model`; and the model's records in every
//! format.

use crate::analysis::atlas::Atlas;
use crate::analysis::classes::{Class, Classes};
use crate::analysis::model::{self, Peak};
use crate::analysis::placement::{self, RowClasses};
use crate::results::names::model::{self as md, metric as mm, param as mp};
use crate::results::names::{metric, param, probe};
use crate::results::{Document, Record};
use crate::topology::Topology;
use crate::view::{Section, View};
use std::collections::BTreeMap;

fn list(nodes: &[usize]) -> String {
    nodes
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Classes per CPU node (with the SLIT of each class's nodes beside them),
/// system-wide classes, where the SLIT disagrees, and Gamma.
pub(crate) fn class_sections(a: &Atlas, topo: &Topology, gamma: &Peak) -> Vec<Section> {
    if a.single.is_empty() {
        return Vec::new();
    }
    let rows: Vec<RowClasses> = a
        .cpu_nodes
        .iter()
        .map(|&c| placement::row_classes(a, c))
        .collect();
    let saturated = saturated_by_class(a, &rows);
    let (cells, system) = placement::system_classes(a);
    let classes = Shown {
        rows,
        saturated,
        cells,
        system,
        gamma_mb_s: gamma.mb_s,
        gamma: gamma.describe(),
    };
    classes.sections(topo)
}

/// The best saturated bandwidth of each single-thread class's memory nodes,
/// by (CPU node, class): the thesis' "multi-threaded" rows of Table 3.4.
pub(crate) fn saturated_by_class(a: &Atlas, rows: &[RowClasses]) -> BTreeMap<(usize, usize), f64> {
    let mut out = BTreeMap::new();
    for rc in rows {
        for k in &rc.classes.classes {
            let best = rc
                .members(k.index)
                .iter()
                .filter_map(|&m| a.saturated.get(rc.cpu_node, m))
                .reduce(f64::max);
            if let Some(b) = best {
                out.insert((rc.cpu_node, k.index), b);
            }
        }
    }
    out
}

/// The classes as shown, whether just worked out or read back from the
/// model's records.
struct Shown {
    rows: Vec<RowClasses>,
    /// Saturated bandwidth per (CPU node, class), where measured.
    saturated: BTreeMap<(usize, usize), f64>,
    /// The cells the system-wide classes' members index.
    cells: Vec<(usize, usize)>,
    system: Classes,
    gamma_mb_s: f64,
    /// Gamma and where it comes from, in words.
    gamma: String,
}

/// `x` GB/s with its share of `of` (class 0), as the thesis' tables show
/// a class: `9.30 (100%)`.
fn gb_s_pct(x: f64, of: Option<f64>) -> String {
    // Three significant digits at least, below 1 GB/s too.
    let gb = x / 1000.0;
    let digits = match gb.abs() {
        g if g >= 1.0 => 2,
        g if g >= 0.1 => 3,
        _ => 4,
    };
    match of
        .map(|o| 100.0 * x / o)
        .filter(|p| p.is_finite() && *p >= 0.0)
    {
        Some(p) => format!("{gb:.digits$} ({p:.0}%)"),
        None => format!("{gb:.digits$}"),
    }
}

impl Shown {
    fn sections(&self, topo: &Topology) -> Vec<Section> {
        let mut peak = Section::new(probe::MODEL);
        peak.lines.push(self.gamma.clone());
        peak.lines.push(
            "D = sum(alpha_i x theta_i), theta_i = share of accesses to class i; see 'numabench model FILE --theta ...' and '--pid PID'"
                .into(),
        );
        vec![self.row_section(topo), self.system_section(), peak]
    }

    fn row_section(&self, topo: &Topology) -> Section {
        let mut rows = Section::new(
            "bandwidth classes from each CPU node (single-thread GB/s and % of class 0; alpha = class bandwidth / Gamma; saturated: the best of the class's nodes with every thread)",
        );
        let with_saturated = !self.saturated.is_empty();
        rows.header = [
            "cpu node",
            "class",
            "single GB/s",
            mm::ALPHA,
            "alpha/alpha_0",
            "saturated GB/s",
            "memory nodes",
            "SLIT",
        ]
        .iter()
        .filter(|h| with_saturated || **h != "saturated GB/s")
        .map(|h| h.to_string())
        .collect();
        let mut flags = Vec::new();
        let mut criterion = None;
        let mut details = Vec::new();
        for rc in &self.rows {
            let c = rc.cpu_node;
            let top = rc.classes.classes.first().map(|k| k.max);
            let top_saturated = self.saturated.get(&(c, 0)).copied();
            for class in &rc.classes.classes {
                let members = rc.members(class.index);
                let mut slit: Vec<u32> = members
                    .iter()
                    .filter_map(|&m| topo.distance(c, m))
                    .collect();
                slit.sort_unstable();
                slit.dedup();
                let alpha = model::alpha(class.max, self.gamma_mb_s);
                let mut row = vec![
                    c.to_string(),
                    class.index.to_string(),
                    gb_s_pct(class.max, top),
                    format!("{alpha:.4}"),
                    top.map(|t| class.max / t)
                        .filter(|r| r.is_finite())
                        .map_or("-".into(), |r| format!("{r:.4}")),
                ];
                if with_saturated {
                    row.push(
                        self.saturated
                            .get(&(c, class.index))
                            .map_or("-".into(), |&v| gb_s_pct(v, top_saturated)),
                    );
                }
                row.push(list(&members));
                row.push(
                    slit.iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                );
                rows.rows.push(row);
            }
            flags.extend(placement::slit_disagreements(topo, rc));
            flags.extend(placement::hmat_disagreements(topo, rc));
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
        rows
    }

    fn system_section(&self) -> Section {
        let mut system = Section::new("system-wide bandwidth classes");
        let classes = &self.system;
        for (line, class) in classes
            .describe(Some(self.gamma_mb_s))
            .iter()
            .zip(&classes.classes)
        {
            let members: Vec<String> = class
                .members
                .iter()
                .map(|&i| format!("{}->{}", self.cells[i].0, self.cells[i].1))
                .collect();
            system
                .lines
                .push(format!("{line}: cells {}", members.join(", ")));
        }
        system
    }

    /// The classes the model's records hold: each row's classes with their
    /// members, the system-wide ones with their cells, Gamma. How each
    /// row's classes were found (k, merges) is not in them.
    fn from_records(records: &[&Record]) -> Option<Shown> {
        let gamma = records.iter().find(|r| r.name == md::GAMMA)?;
        let classes: Vec<&Record> = records
            .iter()
            .copied()
            .filter(|r| r.has_param(mp::CLASS))
            .collect();
        let mut nodes: Vec<usize> = Vec::new();
        for r in &classes {
            if let Some(c) = r.u64_param(param::CPU_NODE).map(|c| c as usize)
                && !nodes.contains(&c)
            {
                nodes.push(c);
            }
        }
        let rule = gamma
            .str_param(mp::CLASS_RULE)
            .unwrap_or("the rule was not recorded with these results")
            .to_string();
        let rows = nodes
            .iter()
            .map(|&c| row_from_records(c, &classes, &rule))
            .collect();
        let system: Vec<&Record> = classes
            .iter()
            .copied()
            .filter(|r| !r.has_param(param::CPU_NODE))
            .collect();
        let (cells, system) = system_from_records(&system, &rule);
        let saturated = classes
            .iter()
            .filter_map(|r| {
                let c = r.u64_param(param::CPU_NODE)? as usize;
                let v = r.value(mm::SATURATED_MB_S)?;
                Some(((c, r.u64_param(mp::CLASS)? as usize), v))
            })
            .collect();
        Some(Shown {
            rows,
            saturated,
            cells,
            system,
            gamma_mb_s: gamma.value(metric::PEAK_MB_S).unwrap_or(f64::NAN),
            gamma: gamma.str_param(mp::SOURCE).unwrap_or_default().to_string(),
        })
    }
}

/// A class read back: its members as indices into what it classified.
fn class_of(r: &Record, members: Vec<usize>) -> Class {
    let max = r.value(metric::BANDWIDTH_MB_S).unwrap_or(f64::NAN);
    Class {
        index: r.u64_param(mp::CLASS).unwrap_or(0) as usize,
        max,
        min: max,
        mean: max,
        members,
    }
}

/// One CPU node's classes from its class records.
fn row_from_records(c: usize, classes: &[&Record], rule: &str) -> RowClasses {
    let row: Vec<&Record> = classes
        .iter()
        .copied()
        .filter(|r| r.u64_param(param::CPU_NODE) == Some(c as u64))
        .collect();
    let of = |r: &Record| -> Vec<usize> {
        r.strs_param(mp::MEMBERS)
            .unwrap_or_default()
            .iter()
            .filter_map(|m| m.parse().ok())
            .collect()
    };
    let mut mem_nodes: Vec<usize> = row.iter().flat_map(|r| of(r)).collect();
    mem_nodes.sort_unstable();
    mem_nodes.dedup();
    let index = |m: &usize| mem_nodes.iter().position(|n| n == m);
    let list: Vec<Class> = row
        .iter()
        .map(|r| class_of(r, of(r).iter().filter_map(index).collect()))
        .collect();
    let assignment = mem_nodes
        .iter()
        .map(|m| {
            list.iter()
                .find(|k| k.members.contains(&index(m).unwrap_or(usize::MAX)))
                .map(|k| k.index)
        })
        .collect();
    RowClasses {
        cpu_node: c,
        mem_nodes: mem_nodes.clone(),
        classes: Classes {
            classes: list,
            assignment,
            criterion: rule.to_string(),
        },
    }
}

/// The system-wide classes from their records: the cells in order, each
/// class's members indexing them.
fn system_from_records(classes: &[&Record], rule: &str) -> (Vec<(usize, usize)>, Classes) {
    let mut cells = Vec::new();
    let mut list = Vec::new();
    for r in classes {
        let first = cells.len();
        cells.extend(
            r.strs_param(mp::MEMBERS)
                .unwrap_or_default()
                .iter()
                .filter_map(|m| {
                    let (c, n) = m.split_once("->")?;
                    Some((c.parse().ok()?, n.parse().ok()?))
                }),
        );
        list.push(class_of(r, (first..cells.len()).collect()));
    }
    let assignment = vec![None; cells.len()];
    (
        cells,
        Classes {
            classes: list,
            assignment,
            criterion: rule.to_string(),
        },
    )
}

/// The model's view (registered in `probes::REGISTRY`): every figure its
/// records hold. `numabench model` prints more in text (see `sections.rs`).
pub(crate) struct ModelView;

impl View for ModelView {
    fn probe(&self) -> &'static str {
        probe::MODEL
    }

    fn heading(&self) -> String {
        "Data-access model".into()
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "The thesis' model: each bandwidth class as a fraction alpha of the theoretical peak, and D, the fraction of the peak a program reaches with a given share of its accesses in each class (1 is the peak; the loss against alpha_0 is what its placement costs).",
        )
    }

    fn sections(&self, doc: &Document, all: &[&Record]) -> Vec<Section> {
        // The PCIe model's records name a direction; the rest are the
        // memory model's.
        let (pcie, records): (Vec<&Record>, Vec<&Record>) = all
            .iter()
            .copied()
            .partition(|r| r.has_param(crate::results::names::pcie::param::DIRECTION));
        let records = &records[..];
        let classes: Vec<&Record> = records
            .iter()
            .copied()
            .filter(|r| r.has_param(mp::CLASS))
            .collect();
        let mut out = Shown::from_records(records)
            .map(|shown| shown.sections(&doc.host.topology))
            .unwrap_or_default();
        for r in records.iter().filter(|r| r.has_param(mp::THETA)) {
            out.push(mix_section(r, &classes));
        }
        out.extend(pid_section(records));
        out.extend(validation_section(records));
        if let Some(x) = super::pcie::from_records(&pcie) {
            out.extend(super::pcie::sections(&x));
        }
        out
    }
}

/// D for a mix, its terms from the classes it was worked out over.
fn mix_section(r: &Record, classes: &[&Record]) -> Section {
    let from = r.name.strip_prefix("D ").unwrap_or(&r.name);
    let row = r.u64_param(param::CPU_NODE);
    let alphas: Vec<f64> = classes
        .iter()
        .filter(|c| c.u64_param(param::CPU_NODE) == row)
        .map(|c| c.value(mm::ALPHA).unwrap_or(f64::NAN))
        .collect();
    let thetas: Vec<f64> = r.f64s_param(mp::THETA).unwrap_or_default();
    let d = r.value(mm::D).unwrap_or(f64::NAN);
    let terms: Vec<String> = thetas
        .iter()
        .zip(&alphas)
        .map(|(t, a)| format!("{t:.4} x {a:.4}"))
        .collect();
    let mut s = Section::new(format!("data-access performance D ({from} classes)"));
    s.lines.push(format!("D = {} = {d:.4}", terms.join(" + ")));
    s.lines.push(format!(
        "predicted bandwidth D x Gamma = {:.0} MB/s",
        r.value(metric::BANDWIDTH_MB_S).unwrap_or(f64::NAN)
    ));
    if let Some(a0) = alphas.first() {
        let loss = r.value(mm::LOSS).unwrap_or(f64::NAN);
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
        .filter(|r| r.has_param(mp::PID))
        .collect();
    let pid = rows.first()?.u64_param(mp::PID)?;
    let mut s = Section::new(format!("process {pid}: predicted D on each CPU node"));
    s.header = ["cpu node", "D", "predicted MB/s"]
        .map(String::from)
        .to_vec();
    for r in &rows {
        s.rows.push(vec![
            r.u64_param(param::CPU_NODE).unwrap_or(0).to_string(),
            format!("{:.4}", r.value(mm::D).unwrap_or(f64::NAN)),
            format!("{:.0}", r.value(metric::BANDWIDTH_MB_S).unwrap_or(f64::NAN)),
        ]);
    }
    let best = rows.iter().reduce(|a, b| {
        let d = |r: &Record| r.value(mm::D).unwrap_or(f64::NAN);
        if d(b) > d(a) + 1e-12 { b } else { a }
    })?;
    let node = best.u64_param(param::CPU_NODE).unwrap_or(0);
    s.lines.push(format!(
        "best: node {node} (D {:.4}): numactl --cpunodebind={node} <command>",
        best.value(mm::D).unwrap_or(f64::NAN)
    ));
    Some(s)
}

/// A validation's measurement and predictions, or the nodes a stop left
/// measured alone.
fn validation_section(records: &[&Record]) -> Option<Section> {
    if let Some(r) = records.iter().find(|r| r.has_param(mp::WEIGHTS)) {
        let text = |k: &str| r.str_param(k).unwrap_or("?");
        let mut s = Section::new(format!(
            "model check: one thread on CPU node {}, {} ({}), memory split by weight",
            r.u64_param(param::CPU_NODE).unwrap_or(0),
            text(param::KERNEL),
            text(param::VARIANT),
        ));
        // The per-node table the command prints (each node alone, pages
        // found) is not in the record.
        s.lines.push(format!(
            "measured mixed placement: {:.0} MB/s",
            r.value(metric::BANDWIDTH_MB_S).unwrap_or(f64::NAN)
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
                r.value(p).unwrap_or(f64::NAN),
                r.value(e).unwrap_or(f64::NAN)
            ));
        }
        return Some(s);
    }
    let pure: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.has_param(mp::WEIGHT))
        .collect();
    (!pure.is_empty()).then(|| {
        let mut s = Section::new("model check, stopped before the mixed placement");
        s.lines = pure
            .iter()
            .map(|r| {
                format!(
                    "memory node {} alone: {:.0} MB/s",
                    r.u64_param(param::MEM_NODE).unwrap_or(0),
                    r.value(metric::BANDWIDTH_MB_S).unwrap_or(f64::NAN)
                )
            })
            .collect();
        s
    })
}

/// Shown in reports only: no part in `run`, no fleet figure.
impl crate::view::Probe for ModelView {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::model::{Modelled, records};
    use crate::topology::fixture;

    #[test]
    fn class_bandwidths_keep_three_digits() {
        assert_eq!(gb_s_pct(9300.0, Some(9300.0)), "9.30 (100%)");
        assert_eq!(gb_s_pct(5600.0, Some(9300.0)), "5.60 (60%)");
        assert_eq!(gb_s_pct(866.0, None), "0.866");
        assert_eq!(gb_s_pct(36.0, Some(0.0)), "0.0360");
    }

    fn modelled() -> Modelled {
        let mut atlas = Atlas {
            cpu_nodes: vec![0, 1],
            mem_nodes: vec![0, 1],
            ..Default::default()
        };
        for (c, m, v) in [
            (0, 0, 10_000.0),
            (0, 1, 6_000.0),
            (1, 0, 5_500.0),
            (1, 1, 9_900.0),
        ] {
            atlas.single.values.insert((c, m), v);
        }
        Modelled {
            atlas,
            gamma: Peak::given(20_000.0),
            mix: None,
            process: None,
        }
    }

    #[test]
    fn the_records_show_the_classes_as_the_analysis_does() {
        let topo = fixture("two-node");
        let x = modelled();
        let live = class_sections(&x.atlas, &topo, &x.gamma);
        let mut doc = Document::new(&topo);
        doc.records = records::of_model(&x);
        let refs: Vec<&Record> = doc.records.iter().collect();
        let read = ModelView.sections(&doc, &refs);
        assert_eq!(read.len(), live.len());
        for (r, l) in read.iter().zip(&live) {
            assert_eq!(
                (&r.title, &r.header, &r.rows),
                (&l.title, &l.header, &l.rows)
            );
            // Only how each row's classes were found is not in the records.
            let kept: Vec<&String> = l
                .lines
                .iter()
                .filter(|line| !(line.starts_with("from node ") && line.contains(": k = ")))
                .collect();
            assert_eq!(r.lines.iter().collect::<Vec<_>>(), kept);
        }
    }
}
