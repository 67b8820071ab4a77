//! How c2c records are shown, from the document alone: what was measured,
//! then per variant the classes (SMT sibling, same L3, same node, same
//! package, remote),
//! the node x node summary, the CPU x CPU table of medians (up to
//! [`MAX_GRID_CPUS`] CPUs) and the pairs with their spread (up to
//! [`MAX_PAIR_ROWS`] pairs); heatmaps in the HTML report; a CSV line per
//! pair.

use super::PROBE;
use super::plan::PairClass;
use crate::results::names::c2c::{metric as cm, param as cp};
use crate::results::names::{metric, param};
use crate::results::{Document, Record};
use crate::view::{Block, Csv, HeatRow, Heatmap, Section, View};
use std::collections::{BTreeMap, BTreeSet};

/// The view of the `c2c` probe.
pub(crate) struct C2cView;

/// The most CPUs a CPU x CPU table or heatmap shows.
pub(crate) const MAX_GRID_CPUS: usize = 64;
/// Above this many columns a heatmap is drawn as small squares, each
/// figure in its tooltip.
pub(crate) const COMPACT_ABOVE: usize = 16;
/// The most pairs listed one per row.
pub(crate) const MAX_PAIR_ROWS: usize = 64;

/// One pair in one variant, as its record has it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cell {
    pub variant: String,
    pub a: usize,
    pub b: usize,
    pub node_a: Option<usize>,
    pub node_b: Option<usize>,
    pub class: Option<PairClass>,
    pub median: Option<f64>,
    pub iqr: Option<f64>,
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub cv: Option<f64>,
    pub samples: u64,
    pub iterations: u64,
    pub verified: bool,
    /// Where pairs were sampled: the pairs of the machine in this pair's
    /// (class, node pair) group.
    pub group_pairs: Option<usize>,
    /// How the lines' node was chosen, the node, and the percent of their
    /// pages found on it.
    pub line_home: Option<String>,
    pub line_node: Option<usize>,
    pub line_on_node_pct: Option<f64>,
}

impl Cell {
    /// The two CPUs, lower first: one pair for both directions.
    fn pair(&self) -> (usize, usize) {
        (self.a.min(self.b), self.a.max(self.b))
    }

    fn group(&self) -> (Option<PairClass>, Option<usize>, Option<usize>) {
        let (lo, hi) = (self.node_a.min(self.node_b), self.node_a.max(self.node_b));
        (self.class, lo, hi)
    }
}

/// Whether a variant's figure is one way (`cpu` reads from `peer_cpu`'s
/// cache), so that a pair is measured both ways and its table is not
/// symmetric.
fn directed(v: &str) -> bool {
    use crate::results::names::c2c::variant;
    v == variant::CLEAN_READ || v == variant::MODIFIED_READ
}

fn cell(r: &Record) -> Option<Cell> {
    Some(Cell {
        variant: r.str_param(param::VARIANT)?.to_string(),
        a: r.usize_param(param::CPU)?,
        b: r.usize_param(cp::PEER_CPU)?,
        node_a: r.usize_param(param::CPU_NODE),
        node_b: r.usize_param(cp::PEER_NODE),
        class: r.str_param(cp::CLASS).and_then(PairClass::parse),
        median: r.value(metric::LATENCY_NS),
        iqr: r.value(cm::LATENCY_IQR_NS),
        min: r.value(cm::LATENCY_MIN_NS),
        mean: r.value(cm::LATENCY_MEAN_NS),
        cv: r.value(metric::CV_PCT),
        samples: r.u64_param(cp::SAMPLES).unwrap_or(0),
        iterations: r.u64_param(cp::ITERATIONS).unwrap_or(0),
        verified: r.bool_param(cp::PINNING_VERIFIED).unwrap_or(false),
        group_pairs: r.usize_param(cp::GROUP_PAIRS),
        line_home: r.str_param(cp::LINE_HOME).map(String::from),
        line_node: r.usize_param(param::MEM_NODE),
        line_on_node_pct: r.placement.as_ref().and_then(|p| p.on_target_pct),
    })
}

/// The cells of the records, grouped by variant in the order they first
/// appear.
pub(crate) fn by_variant(records: &[&Record]) -> Vec<(String, Vec<Cell>)> {
    let mut out: Vec<(String, Vec<Cell>)> = Vec::new();
    for c in records.iter().filter_map(|r| cell(r)) {
        match out.iter_mut().find(|(v, _)| *v == c.variant) {
            Some((_, cells)) => cells.push(c),
            None => out.push((c.variant.clone(), vec![c])),
        }
    }
    out
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    Some(super::records::quantile(&xs, 0.5))
}

/// How many pairs of the machine each measured cell stands for: where
/// pairs were sampled, a few from each (class, node pair) group, a group's
/// pairs share its size (a directed variant's two ways of one pair count
/// as that pair); 1 for every cell otherwise.
fn weights(cells: &[&Cell]) -> Vec<f64> {
    let mut measured: BTreeMap<_, BTreeSet<(usize, usize)>> = BTreeMap::new();
    for c in cells {
        measured.entry(c.group()).or_default().insert(c.pair());
    }
    cells
        .iter()
        .map(|c| match c.group_pairs {
            Some(g) => g as f64 / measured[&c.group()].len().max(1) as f64,
            None => 1.0,
        })
        .collect()
}

/// The median of the cells' medians, each weighted by the pairs it stands
/// for ([`weights`]); the plain median where every weight is the same.
fn weighted_median(cells: &[&Cell]) -> Option<f64> {
    let w = weights(cells);
    let mut vw: Vec<(f64, f64)> = cells
        .iter()
        .zip(&w)
        .filter_map(|(c, w)| Some((c.median?, *w)))
        .collect();
    if vw.windows(2).all(|p| p[0].1 == p[1].1) {
        return median(vw.into_iter().map(|(v, _)| v).collect());
    }
    vw.sort_by(|x, y| x.0.total_cmp(&y.0));
    let half = vw.iter().map(|(_, w)| w).sum::<f64>() / 2.0;
    let mut below = 0.0;
    for (i, (v, w)) in vw.iter().enumerate() {
        below += w;
        if below > half {
            return Some(*v);
        }
        if below == half {
            // Half the weight on each side: between this and the next.
            return Some(vw.get(i + 1).map_or(*v, |n| (v + n.0) / 2.0));
        }
    }
    vw.last().map(|x| x.0)
}

fn ns(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

fn sampled(records: &[&Record]) -> bool {
    records.iter().any(|r| r.has_param(cp::SAMPLED))
}

fn cpus_of(cells: &[Cell]) -> Vec<usize> {
    let set: BTreeSet<usize> = cells.iter().flat_map(|c| [c.a, c.b]).collect();
    set.into_iter().collect()
}

fn nodes_of(cells: &[Cell]) -> Vec<Option<usize>> {
    let set: BTreeSet<Option<usize>> = cells.iter().flat_map(|c| [c.node_a, c.node_b]).collect();
    set.into_iter().collect()
}

fn node_label(n: Option<usize>) -> String {
    n.map_or("?".into(), |n| n.to_string())
}

/// What was measured, in words.
fn about(doc: &Document, records: &[&Record], groups: &[(String, Vec<Cell>)]) -> Section {
    let mut s = Section::new("what was measured");
    let all: Vec<&Cell> = groups.iter().flat_map(|(_, c)| c).collect();
    let pairs: BTreeSet<(usize, usize)> = all.iter().map(|c| c.pair()).collect();
    let cpus: BTreeSet<usize> = all.iter().flat_map(|c| [c.a, c.b]).collect();
    s.lines.push(format!(
        "one-way latency of a cache line handed between two pinned threads, {} CPU pairs of {} CPUs, variants {}",
        pairs.len(),
        cpus.len(),
        groups.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>().join(", ")
    ));
    for (v, cells) in groups {
        if let Some(c) = cells.first() {
            s.lines.push(format!("{v}: {}", describe(v, c)));
        }
    }
    s.lines.push("a pair's figure is the median of its samples (spread: the interquartile range); classes: smt = threads of one core, same-l3 = cores under one L3, same-node = one NUMA node without a shared L3, same-package = different nodes of one package (socket), remote = different packages".into());
    let unverified = all.iter().filter(|c| !c.verified).count();
    s.lines.push(if unverified == 0 {
        "pinning verified: both threads of every pair were seen on their CPUs before and after the timed loops".into()
    } else {
        format!("pinning NOT verified for {unverified} pair(s): their figures are left out (see the notes)")
    });
    if let Some(line) = line_home_line(&all) {
        s.lines.push(line);
    }
    if let Some(vm) = &doc.host.topology.virtual_machine {
        s.lines.push(format!("virtual machine under {vm}: the classes are what the host declares, and the host decides where the virtual CPUs run and may move them; a pair's figure can change from run to run, and a wide spread can mean its CPUs moved while it was measured"));
    }
    if sampled(records) {
        s.lines.push("sampled: not every pair of this machine was measured (see the note below); the node and class summaries stand on the pairs measured".into());
    }
    s
}

/// Where the lines' memory was, in words; `None` for records from before
/// it was chosen.
fn line_home_line(cells: &[&Cell]) -> Option<String> {
    use crate::results::names::c2c::line_home;
    let first = cells.iter().find_map(|c| c.line_home.as_deref())?;
    let rule = match first {
        line_home::CPU => {
            "bound to the node of each pair's first CPU (the reader, in the read variants)".into()
        }
        line_home::PEER => {
            "bound to the node of each pair's second CPU (the writer, in the read variants)".into()
        }
        _ => format!(
            "bound to node {} for every pair",
            node_label(cells.iter().find_map(|c| c.line_node))
        ),
    };
    let unbound = cells.iter().filter(|c| c.line_node.is_none()).count();
    let bound = || cells.iter().filter(|c| c.line_node.is_some());
    let off = bound()
        .filter(|c| c.line_on_node_pct.is_some_and(|p| p < 100.0))
        .count();
    let unchecked = bound().filter(|c| c.line_on_node_pct.is_none()).count();
    let mut line = format!("the lines' memory: {rule}");
    if unbound > 0 {
        line += &format!(
            "; for {unbound} record(s) that node has no memory this process may use, and the lines stayed where first written"
        );
    }
    if off > 0 {
        line += &format!("; NOT all on its node for {off} record(s) (see the notes)");
    }
    if unchecked > 0 {
        line += &format!("; pages not looked up for {unchecked} record(s) (see the notes)");
    }
    if off + unchecked == 0 && unbound < cells.len() {
        line += "; every page was found on its node";
    }
    Some(line)
}

fn describe(v: &str, c: &Cell) -> String {
    use crate::results::names::c2c::variant;
    let how = match v {
        variant::CAS => {
            "one line, each side compare-and-swaps the other's value to its own (core-to-core-latency's default test); round trip / 2"
        }
        variant::STORE => {
            "two lines, each side waits for the other's value, then stores its own (core-to-core-latency -b 2); round trip / 2"
        }
        variant::CLEAN_READ => {
            "the reader chases lines that the other CPU read last after a flush (clean in its cache); time per line"
        }
        variant::MODIFIED_READ => {
            "the reader chases lines that the other CPU wrote last (modified in its cache); time per line"
        }
        _ => "as recorded",
    };
    let unit = if v == variant::CLEAN_READ || v == variant::MODIFIED_READ {
        "lines per chase"
    } else {
        "round trips per sample"
    };
    format!("{how}; {} {unit}, {} samples", c.iterations, c.samples)
}

/// The cells of `class` that have a figure.
fn of_class(cells: &[Cell], class: PairClass) -> Vec<&Cell> {
    cells
        .iter()
        .filter(|c| c.class == Some(class) && c.median.is_some())
        .collect()
}

/// Per variant (in the order the records give them), the median of each
/// class's pair medians, weighted as the class table weights them.
pub(crate) fn class_medians(records: &[&Record]) -> Vec<(String, Vec<(PairClass, f64)>)> {
    by_variant(records)
        .into_iter()
        .map(|(v, cells)| {
            let per_class = PairClass::ALL
                .into_iter()
                .filter_map(|class| Some((class, weighted_median(&of_class(&cells, class))?)))
                .collect();
            (v, per_class)
        })
        .collect()
}

/// Per class: pairs, the median, fastest and slowest of the pair medians,
/// and the median spread.
fn class_section(v: &str, cells: &[Cell]) -> Section {
    let mut s = Section::new(format!("{v}: one-way latency by class (ns)"));
    s.header = [
        "class",
        "pairs",
        "median",
        "fastest pair",
        "slowest pair",
        "median spread (IQR)",
    ]
    .map(String::from)
    .to_vec();
    for class in PairClass::ALL {
        let of = of_class(cells, class);
        if of.is_empty() {
            continue;
        }
        let meds: Vec<f64> = of.iter().filter_map(|c| c.median).collect();
        let pairs: BTreeSet<(usize, usize)> = of.iter().map(|c| c.pair()).collect();
        s.rows.push(vec![
            class.name().to_string(),
            pairs.len().to_string(),
            ns(weighted_median(&of)),
            ns(meds.iter().copied().reduce(f64::min)),
            ns(meds.iter().copied().reduce(f64::max)),
            ns(median(of.iter().filter_map(|c| c.iqr).collect())),
        ]);
    }
    s
}

/// Node x node: the median of the pair medians between the two nodes,
/// weighted by what each pair stands for where pairs were sampled; row
/// reads from column for a directed variant.
fn node_grid(cells: &[Cell]) -> (Vec<Option<usize>>, Vec<Vec<Option<f64>>>) {
    let nodes = nodes_of(cells);
    let mut acc: BTreeMap<(Option<usize>, Option<usize>), Vec<&Cell>> = BTreeMap::new();
    for c in cells.iter().filter(|c| c.median.is_some()) {
        acc.entry((c.node_a, c.node_b)).or_default().push(c);
        if c.node_a != c.node_b && !directed(&c.variant) {
            acc.entry((c.node_b, c.node_a)).or_default().push(c);
        }
    }
    let grid = nodes
        .iter()
        .map(|i| {
            nodes
                .iter()
                .map(|j| acc.get(&(*i, *j)).and_then(|v| weighted_median(v)))
                .collect()
        })
        .collect();
    (nodes, grid)
}

/// CPU x CPU: each pair's median, both ways round where the line travels
/// both ways in a round trip; row reads from column for a directed variant.
fn cpu_grid(cells: &[Cell]) -> (Vec<usize>, Vec<Vec<Option<f64>>>) {
    let cpus = cpus_of(cells);
    let mut at: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for c in cells {
        let Some(m) = c.median else { continue };
        at.insert((c.a, c.b), m);
        if !directed(&c.variant) {
            at.insert((c.b, c.a), m);
        }
    }
    let grid = cpus
        .iter()
        .map(|i| cpus.iter().map(|j| at.get(&(*i, *j)).copied()).collect())
        .collect();
    (cpus, grid)
}

fn grid_section(
    title: String,
    corner: &str,
    labels: &[String],
    grid: &[Vec<Option<f64>>],
) -> Section {
    let mut s = Section::new(title);
    s.header = std::iter::once(corner.to_string())
        .chain(labels.iter().cloned())
        .collect();
    for (label, row) in labels.iter().zip(grid) {
        s.rows.push(
            std::iter::once(label.clone())
                .chain(row.iter().map(|v| ns(*v)))
                .collect(),
        );
    }
    s
}

fn heatmap(title: String, corner: &str, labels: &[String], grid: &[Vec<Option<f64>>]) -> Heatmap {
    // Coloured from the fastest pair (green) to the slowest (red) on a log
    // scale: the figures span several times (SMT siblings to remote).
    let fastest = grid.iter().flatten().flatten().copied().reduce(f64::min);
    Heatmap {
        title,
        header: std::iter::once(corner.to_string())
            .chain(labels.iter().cloned())
            .collect(),
        rows: labels
            .iter()
            .zip(grid)
            .map(|(l, row)| HeatRow {
                label: l.clone(),
                cells: row.clone(),
                reference: fastest,
            })
            .collect(),
        lower_better: true,
        digits: 1,
        compact: labels.len() > COMPACT_ABOVE,
        by_range: true,
    }
}

/// The pairs one per row: nodes, class, median and spread, pinning.
fn pairs_section(v: &str, cells: &[Cell]) -> Section {
    let mut s = Section::new(format!("{v}: every pair (ns)"));
    s.header = [
        "cpu",
        "peer cpu",
        "nodes",
        "class",
        "line node",
        "median",
        "IQR",
        "min",
        "mean",
        "CV %",
        "pinned",
    ]
    .map(String::from)
    .to_vec();
    for c in cells {
        s.rows.push(vec![
            c.a.to_string(),
            c.b.to_string(),
            format!("{}-{}", node_label(c.node_a), node_label(c.node_b)),
            c.class.map_or("?", PairClass::name).to_string(),
            c.line_node.map_or("-".into(), |n| n.to_string()),
            ns(c.median),
            ns(c.iqr),
            ns(c.min),
            ns(c.mean),
            c.cv.map_or("-".into(), |v| format!("{v:.1}")),
            if c.verified { "verified" } else { "NO" }.to_string(),
        ]);
    }
    s
}

/// The tables of one variant, and its heatmaps where `heat`.
fn variant_blocks(v: &str, cells: &[Cell], heat: bool) -> Vec<Block> {
    let mut out = vec![Block::Section(class_section(v, cells))];
    let (nodes, ngrid) = node_grid(cells);
    let nlabels: Vec<String> = nodes.iter().map(|n| node_label(*n)).collect();
    let way = if directed(v) {
        ", the row's CPU reading from the column's"
    } else {
        ""
    };
    let ntitle = format!("{v}: node x node, median of the pair medians (ns{way})");
    out.push(if heat {
        Block::Heatmap(heatmap(ntitle, "node", &nlabels, &ngrid))
    } else {
        Block::Section(grid_section(ntitle, "node", &nlabels, &ngrid))
    });
    let ctitle = format!("{v}: CPU x CPU, median of each pair (ns{way})");
    // The grid is built only where it is shown: at 8192 CPUs it would be
    // 67 million cells.
    let n_cpus = cpus_of(cells).len();
    if n_cpus <= MAX_GRID_CPUS {
        let (cpus, cgrid) = cpu_grid(cells);
        let labels: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
        out.push(if heat {
            Block::Heatmap(heatmap(ctitle, "cpu", &labels, &cgrid))
        } else {
            Block::Section(grid_section(ctitle, "cpu", &labels, &cgrid))
        });
    } else {
        out.push(Block::Note(format!(
            "{v}: the CPU x CPU table is left out at {n_cpus} CPUs (more than {MAX_GRID_CPUS}); every pair is in the CSV and JSON"
        )));
    }
    if cells.len() <= MAX_PAIR_ROWS {
        out.push(Block::Section(pairs_section(v, cells)));
    }
    out
}

fn notes(records: &[&Record]) -> Option<Section> {
    let mut n: Vec<String> = records
        .iter()
        .flat_map(|r| r.notes.iter().cloned())
        .collect();
    n.dedup();
    (!n.is_empty()).then(|| {
        let mut s = Section::new("notes");
        s.lines = n;
        s
    })
}

fn all_blocks(doc: &Document, records: &[&Record], heat: bool) -> Vec<Block> {
    let groups = by_variant(records);
    let mut out = Vec::new();
    if !groups.is_empty() {
        out.push(Block::Section(about(doc, records, &groups)));
    }
    for (v, cells) in &groups {
        out.extend(variant_blocks(v, cells, heat));
    }
    out.extend(notes(records).map(Block::Section));
    out
}

impl View for C2cView {
    fn probe(&self) -> &'static str {
        PROBE
    }

    fn heading(&self) -> String {
        "Core-to-core latency".into()
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "How long a cache line takes to travel from one CPU to another, one way: the lower, the cheaper it is for threads on those CPUs to share data or a lock. Pairs are grouped by what they share (SMT sibling, same L3, same node, same package, remote); colours run from the fastest pair (green) to the slowest (red) on a log scale; above 16 CPUs the CPU x CPU grid is drawn as small squares, each figure in its tooltip.",
        )
    }

    fn sections(&self, doc: &Document, records: &[&Record]) -> Vec<Section> {
        all_blocks(doc, records, false)
            .into_iter()
            .map(|b| match b {
                Block::Section(s) => s,
                Block::Note(n) => {
                    let mut s = Section::new("");
                    s.lines.push(n);
                    s
                }
                _ => Section::default(),
            })
            .collect()
    }

    fn blocks(&self, doc: &Document, records: &[&Record]) -> Vec<Block> {
        all_blocks(doc, records, true)
    }

    fn csv(&self, _doc: &Document, records: &[&Record]) -> Option<Csv> {
        let mut csv = Csv {
            header: [
                param::VARIANT,
                param::CPU,
                cp::PEER_CPU,
                param::CPU_NODE,
                cp::PEER_NODE,
                cp::CLASS,
                param::MEM_NODE,
                metric::LATENCY_NS,
                cm::LATENCY_IQR_NS,
                cm::LATENCY_MIN_NS,
                cm::LATENCY_MEAN_NS,
                metric::CV_PCT,
                cp::SAMPLES,
                cp::PINNING_VERIFIED,
            ]
            .map(String::from)
            .to_vec(),
            ..Default::default()
        };
        let num = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
        for (_, cells) in by_variant(records) {
            for c in cells {
                csv.rows.push(vec![
                    c.variant.clone(),
                    c.a.to_string(),
                    c.b.to_string(),
                    c.node_a.map_or(String::new(), |n| n.to_string()),
                    c.node_b.map_or(String::new(), |n| n.to_string()),
                    c.class.map_or("", PairClass::name).to_string(),
                    c.line_node.map_or(String::new(), |n| n.to_string()),
                    num(c.median),
                    num(c.iqr),
                    num(c.min),
                    num(c.mean),
                    num(c.cv),
                    c.samples.to_string(),
                    c.verified.to_string(),
                ]);
            }
        }
        csv.notes = notes(records).map(|s| s.lines).unwrap_or_default();
        Some(csv)
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
