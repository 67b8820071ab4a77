//! The node-to-node atlas read back from matrix records: grids of
//! single-thread and saturated bandwidth and of latency, rows = CPU nodes,
//! columns = memory nodes. Everything that renders or models a matrix works
//! from this, whether the records were just measured or loaded from a file.

use super::classes::ClassOptions;
use super::model::Peak;
use crate::results::Record;
use crate::results::names::matrix::{kind, param as mx};
use crate::results::names::peak::param as pk;
use crate::results::names::{metric, param, probe};
use std::collections::{BTreeMap, BTreeSet};

/// One figure per (CPU node, memory node).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Grid {
    pub values: BTreeMap<(usize, usize), f64>,
}

impl Grid {
    pub(crate) fn get(&self, cpu_node: usize, mem_node: usize) -> Option<f64> {
        self.values.get(&(cpu_node, mem_node)).copied()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// (memory node, value) of one row, by memory node.
    pub(crate) fn row(&self, cpu_node: usize) -> Vec<(usize, f64)> {
        self.values
            .iter()
            .filter(|((c, _), _)| *c == cpu_node)
            .map(|((_, m), v)| (*m, *v))
            .collect()
    }

    /// The row's reference: its own node's value, or where the CPU node has
    /// no memory of its own, the row's best.
    pub(crate) fn local(&self, cpu_node: usize) -> Option<f64> {
        self.get(cpu_node, cpu_node).or_else(|| {
            self.row(cpu_node)
                .into_iter()
                .map(|(_, v)| v)
                .reduce(f64::max)
        })
    }

    /// A cell in % of its row's local value.
    pub(crate) fn pct_of_local(&self, cpu_node: usize, mem_node: usize) -> Option<f64> {
        let local = self.local(cpu_node).filter(|l| *l > 0.0)?;
        Some(100.0 * self.get(cpu_node, mem_node)? / local)
    }
}

/// Everything a matrix run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Atlas {
    pub cpu_nodes: Vec<usize>,
    pub mem_nodes: Vec<usize>,
    /// Single-thread bandwidth, MB/s (STREAM convention).
    pub single: Grid,
    /// Saturated bandwidth (the scaling peak), MB/s.
    pub saturated: Grid,
    /// Threads at the saturation peak.
    pub saturated_threads: Grid,
    /// Idle latency, median ns per load.
    pub latency: Grid,
    pub latency_cv: Grid,
    /// The chase pattern of the latency grid, as `page-local:256K`.
    pub latency_pattern: Option<String>,
    /// The latency grid's chase, as `page-local:256K chase on thp pages`.
    pub latency_chase: Option<String>,
    /// The latency grid's buffer, bytes: a figure means little without it
    /// where the L3 holds part of the buffer.
    pub latency_size: Option<u64>,
    /// Lowest verified placement (% of pages on the memory node) over the
    /// cell's measurements.
    pub verified: Grid,
    /// Kernel of the bandwidth figures, e.g. `triad`.
    pub kernel: Option<String>,
    pub variant: Option<String>,
    /// Thread-scaling curves per cell: (threads, MB/s).
    pub curves: BTreeMap<(usize, usize), Vec<(usize, f64)>>,
    pub notes: Vec<String>,
    /// Gamma as recorded with the measurement (from DMI), if it was.
    pub peak: Option<Peak>,
    /// The peak cell: best read/write mix and store kind with all the CPU
    /// node's cores, MB/s.
    pub peak_mix: Grid,
    /// What the peak cell's best was: `<mix> <store>` per cell.
    pub peak_mix_names: BTreeMap<(usize, usize), String>,
    /// How the classes are found: as recorded with the measurement, else
    /// the default rule.
    pub class_options: ClassOptions,
}

/// The class options a `class_rule` record holds; what is missing or out
/// of range keeps its default.
fn class_rule(r: &Record) -> ClassOptions {
    let mut o = ClassOptions::default();
    if let Some(t) = r.f64_param(mx::TOLERANCE_PCT)
        && (0.0..=100.0).contains(&t)
    {
        o.tolerance = t / 100.0;
    }
    if let Some(m) = r.bool_param(mx::MERGE_CLOSE) {
        o.merge_close = m;
    }
    o
}

impl Atlas {
    /// Reads the `matrix` records; others are ignored.
    pub(crate) fn from_records<'a>(records: impl IntoIterator<Item = &'a Record>) -> Atlas {
        let mut a = Atlas::default();
        let mut cpus = BTreeSet::new();
        let mut mems = BTreeSet::new();
        for r in records.into_iter().filter(|r| r.probe == probe::MATRIX) {
            let kind = r.str_param(mx::KIND).unwrap_or("");
            if kind == kind::CLASS_RULE {
                a.class_options = class_rule(r);
                continue;
            }
            if kind == kind::PEAK {
                a.peak = r.param_as(mx::PEAK);
                continue;
            }
            let (Some(c), Some(m)) = (
                r.usize_param(param::CPU_NODE),
                r.usize_param(param::MEM_NODE),
            ) else {
                continue;
            };
            let mut measured = true;
            match kind {
                kind::SINGLE => {
                    if let Some(v) = r.value(metric::BANDWIDTH_MB_S) {
                        a.single.values.insert((c, m), v);
                    }
                    a.kernel = r.str_param(param::KERNEL).map(Into::into);
                    a.variant = r.str_param(param::VARIANT).map(Into::into);
                }
                kind::SATURATED => {
                    if let Some(v) = r.value(metric::BANDWIDTH_MB_S) {
                        a.saturated.values.insert((c, m), v);
                    }
                    if let Some(t) = r.usize_param(param::THREADS) {
                        a.saturated_threads.values.insert((c, m), t as f64);
                    }
                    if let Some(s) = r
                        .series
                        .iter()
                        .find(|s| s.name == crate::results::names::matrix::SCALING)
                        && let Some(line) = s.lines.first()
                    {
                        let curve = s.x.iter().zip(&line.y).map(|(x, y)| (*x as usize, *y));
                        a.curves.insert((c, m), curve.collect());
                    }
                }
                kind::LATENCY => {
                    if let Some(v) = r.value(metric::LATENCY_NS) {
                        a.latency.values.insert((c, m), v);
                    }
                    if let Some(v) = r.value(metric::CV_PCT) {
                        a.latency_cv.values.insert((c, m), v);
                    }
                    a.latency_pattern = Some(pattern_label(r));
                    a.latency_chase = Some(chase_label(r));
                    a.latency_size = r.u64_param(param::SIZE_BYTES);
                }
                kind::PEAK_MIX => {
                    if let Some(v) = r.value(metric::BANDWIDTH_MB_S) {
                        a.peak_mix.values.insert((c, m), v);
                    }
                    let text = |k: &str| r.str_param(k).unwrap_or("?");
                    let (mix, store) = (text(pk::MIX), text(pk::STORE));
                    a.peak_mix_names.insert((c, m), format!("{mix} {store}"));
                    // Its note lists every candidate: the record keeps it,
                    // the atlas's notes do not.
                    cpus.insert(c);
                    mems.insert(m);
                    if let Some(p) = r.placement.as_ref().and_then(|p| p.on_target_pct) {
                        let v = a.verified.values.entry((c, m)).or_insert(p);
                        *v = v.min(p);
                    }
                    continue;
                }
                _ => measured = false,
            }
            if !measured {
                continue;
            }
            cpus.insert(c);
            mems.insert(m);
            if let Some(p) = r.placement.as_ref().and_then(|p| p.on_target_pct) {
                let v = a.verified.values.entry((c, m)).or_insert(p);
                *v = v.min(p);
            }
            // A saturated record's first note says why its scaling stopped:
            // the record keeps it, the atlas's notes do not. The matrix's
            // own notes may follow it on the first record.
            let own = usize::from(kind == kind::SATURATED);
            for n in r.notes.iter().skip(own) {
                if !a.notes.contains(n) {
                    a.notes.push(n.clone());
                }
            }
        }
        a.cpu_nodes = cpus.into_iter().collect();
        a.mem_nodes = mems.into_iter().collect();
        a
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.cpu_nodes.is_empty()
    }

    /// The latency grid's pattern, `full-random` where the records predate
    /// patterns (the chase was full-random then).
    pub(crate) fn latency_pattern(&self) -> &str {
        self.latency_pattern
            .as_deref()
            .unwrap_or(crate::kernels::pattern::Pattern::FULL_RANDOM)
    }

    /// `, 1.2 GiB`: the latency grid's buffer, to follow its chase's name;
    /// empty where the records do not say.
    pub(crate) fn latency_buffer(&self) -> String {
        buffer_suffix(self.latency_size)
    }

    /// The latency grid's chase, as [`chase_label`] words it.
    pub(crate) fn latency_chase(&self) -> String {
        self.latency_chase
            .clone()
            .unwrap_or_else(|| format!("{} chase", self.latency_pattern()))
    }
}

/// `, 1.2 GiB` for a chase buffer of that many bytes, to follow the name of
/// its chase; empty for `None`.
pub(crate) fn buffer_suffix(bytes: Option<u64>) -> String {
    bytes
        .map(|b| format!(", {}", crate::units::bytes(b)))
        .unwrap_or_default()
}

/// The chase a latency record ran, as `full-random chase on thp pages`;
/// without its pages where the record does not name them.
pub(crate) fn chase_label(r: &Record) -> String {
    let pattern = pattern_label(r);
    match r.str_param(param::PAGE_SIZE) {
        Some(pages) => format!("{pattern} chase on {} pages", crate::text::escape(pages)),
        None => format!("{pattern} chase"),
    }
}

/// The chase pattern a latency record names, as `full-random`,
/// `page-local:256K` or `stride:128`; `full-random` where it names none
/// (records from before patterns, whose chase was full-random).
pub(crate) fn pattern_label(r: &Record) -> String {
    use crate::kernels::pattern::Pattern;
    let num = |k: &str| r.u64_param(k).unwrap_or(0) as usize;
    match r.str_param(param::PATTERN) {
        None => Pattern::FULL_RANDOM.to_string(),
        Some(kind) => Pattern::from_parts(kind, num(param::WINDOW_BYTES), num(param::STRIDE_BYTES))
            .map_or_else(|_| kind.to_string(), |p| p.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Better, Placement};

    #[test]
    fn a_latency_record_names_its_chase_and_pages() {
        let lat = || rec(kind::LATENCY, 0, 1, metric::LATENCY_NS, 150.0);
        assert_eq!(chase_label(&lat()), "full-random chase");
        let local = lat()
            .param(param::PATTERN, "page-local")
            .param(param::WINDOW_BYTES, 262144)
            .param(param::PAGE_SIZE, "thp")
            .param(param::SIZE_BYTES, 1u64 << 30);
        assert_eq!(chase_label(&local), "page-local:256K chase on thp pages");
        let a = Atlas::from_records([&local]);
        assert_eq!(a.latency_chase(), "page-local:256K chase on thp pages");
        assert_eq!(a.latency_size, Some(1 << 30));
        assert_eq!(a.latency_buffer(), ", 1 GiB");
        assert_eq!(Atlas::from_records([&lat()]).latency_size, None);
        let odd = lat().param(param::PAGE_SIZE, "x\u{1b}[31m");
        assert_eq!(chase_label(&odd), "full-random chase on x\\x1b[31m pages");
        assert_eq!(Atlas::default().latency_chase(), "full-random chase");
    }

    fn rec(kind: &str, c: usize, m: usize, metric: &str, v: f64) -> Record {
        let mut r = Record::new("matrix", &format!("{kind} {c}->{m}"))
            .param("kind", kind)
            .param("cpu_node", c)
            .param("mem_node", m)
            .param("threads", 1)
            .param("kernel", "triad")
            .metric(metric, v, "x", Better::Higher);
        r.placement = Some(Placement {
            on_target_pct: Some(100.0 - m as f64),
            ..Default::default()
        });
        r
    }

    #[test]
    fn a_saturated_records_stop_stays_out_of_the_atlas_notes() {
        let mut sat = rec(kind::SATURATED, 0, 0, metric::BANDWIDTH_MB_S, 9_000.0);
        sat.notes = vec![
            "scaling stopped: all 2 cores used".into(),
            "node 0: working set scaled down from 128 to 31 MiB (half its free memory)".into(),
        ];
        let mut one = rec(kind::SINGLE, 0, 0, metric::BANDWIDTH_MB_S, 5_000.0);
        one.notes = vec!["no theoretical peak from DMI".into()];
        let a = Atlas::from_records([&one, &sat]);
        assert_eq!(a.notes, [one.notes[0].as_str(), sat.notes[1].as_str()]);
    }

    #[test]
    fn grids_from_records() {
        let records = vec![
            rec("bandwidth_1t", 0, 0, "bandwidth_mb_s", 10_000.0),
            rec("bandwidth_1t", 0, 1, "bandwidth_mb_s", 6_000.0),
            rec("bandwidth_1t", 1, 0, "bandwidth_mb_s", 5_000.0),
            rec("bandwidth_1t", 1, 1, "bandwidth_mb_s", 9_000.0),
            rec("latency", 0, 1, "latency_ns", 140.0),
            rec("latency", 1, 2, "latency_ns", 300.0),
            Record::new("sweep", "read 64K"),
        ];
        let a = Atlas::from_records(&records);
        assert_eq!(a.cpu_nodes, [0, 1]);
        assert_eq!(a.mem_nodes, [0, 1, 2]);
        assert_eq!(a.single.get(0, 1), Some(6_000.0));
        assert_eq!(a.single.pct_of_local(0, 1), Some(60.0));
        assert_eq!(a.single.pct_of_local(1, 0).map(|v| v.round()), Some(56.0));
        assert_eq!(a.latency.get(1, 2), Some(300.0));
        assert_eq!(a.verified.get(1, 2), Some(98.0));
        assert_eq!(a.kernel.as_deref(), Some("triad"));
        assert_eq!(a.single.row(1), [(0, 5_000.0), (1, 9_000.0)]);
    }

    #[test]
    fn a_cpu_node_without_memory_is_measured_against_its_best() {
        let mut g = Grid::default();
        g.values.insert((3, 0), 4_000.0);
        g.values.insert((3, 1), 8_000.0);
        assert_eq!(g.local(3), Some(8_000.0));
        assert_eq!(g.pct_of_local(3, 0), Some(50.0));
        assert_eq!(g.local(7), None);
    }
}
