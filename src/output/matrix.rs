//! The node-to-node matrix for people (text, Markdown, LaTeX sections) and
//! for spreadsheets (CSV, one line per cell).

use super::sections::{self, Section};
use crate::analysis::atlas::{Atlas, Grid};
use crate::probes::matrix::PER_CORE;
use crate::results::{Document, Record};
use crate::topology::Topology;

/// A matrix results document ready to render in any format.
pub struct View<'a> {
    doc: &'a Document,
    atlas: Atlas,
    peak: Option<f64>,
}

impl<'a> View<'a> {
    /// `peak` is Gamma in MB/s when the user gave it.
    pub fn new(doc: &'a Document, peak: Option<f64>) -> Self {
        View {
            doc,
            atlas: Atlas::from_records(&doc.records),
            peak,
        }
    }

    /// Gamma: `--peak`, else the recorded DMI figure, else the best cell.
    pub fn gamma(&self) -> Option<crate::analysis::model::Peak> {
        crate::analysis::placement::peak(&self.atlas, self.peak, self.atlas.peak.clone())
    }

    fn topo(&self) -> &Topology {
        &self.doc.host.topology
    }

    fn title(&self) -> String {
        format!(
            "numabench matrix: {} ({}), {}",
            self.doc.host.hostname, self.doc.host.cpu_model, self.doc.started
        )
    }

    pub fn sections(&self) -> Vec<Section> {
        let mut out = Vec::new();
        let per_core: Vec<&Record> = self
            .doc
            .records
            .iter()
            .filter(|r| r.probe == "matrix" && r.name.starts_with(PER_CORE))
            .collect();
        if !per_core.is_empty() {
            out.push(per_core_section(&per_core));
        }
        if !self.atlas.is_empty() {
            out.push(self.about());
            out.extend(grid_sections(&self.atlas, self.topo()));
            out.extend(
                self.gamma()
                    .map(|g| super::model::class_sections(&self.atlas, self.topo(), &g))
                    .unwrap_or_default(),
            );
        }
        out
    }

    fn about(&self) -> Section {
        let mut s = Section::new("what was measured");
        let a = &self.atlas;
        s.lines.push(format!(
            "rows: CPU nodes {:?}; columns: memory nodes {:?}; kernel {} ({}); MB/s = 10^6 bytes/s, STREAM convention (bytes read + bytes written)",
            a.cpu_nodes,
            a.mem_nodes,
            a.kernel.as_deref().unwrap_or("?"),
            a.variant.as_deref().unwrap_or("?"),
        ));
        s
    }

    pub fn text(&self) -> String {
        sections::text_titled(Some(&self.title()), &self.sections())
    }

    pub fn markdown(&self) -> String {
        sections::markdown(&self.title(), &self.sections())
    }

    pub fn latex(&self) -> String {
        sections::latex(&self.title(), &self.sections())
    }

    pub fn csv(&self) -> String {
        if self.atlas.is_empty() {
            per_core_csv(&self.doc.records)
        } else {
            csv(&self.atlas, self.topo())
        }
    }
}

fn metric(r: &Record, key: &str) -> Option<f64> {
    r.metrics.get(key).map(|m| m.value)
}

fn per_core_rows(records: &[Record]) -> impl Iterator<Item = (u64, f64)> + '_ {
    records
        .iter()
        .filter(|r| r.params.get("kind").and_then(|k| k.as_str()) == Some(PER_CORE))
        .filter_map(|r| Some((r.params.get("cpu")?.as_u64()?, metric(r, "bandwidth_mb_s")?)))
}

fn per_core_csv(records: &[Record]) -> String {
    let mut out = String::from("cpu,bandwidth_mb_s\n");
    for (cpu, v) in per_core_rows(records) {
        out.push_str(&format!("{cpu},{v:.1}\n"));
    }
    out
}

fn per_core_section(records: &[&Record]) -> Section {
    let owned: Vec<Record> = records.iter().map(|r| (*r).clone()).collect();
    let summary = owned
        .iter()
        .find(|r| r.params.get("kind").and_then(|k| k.as_str()) == Some("per_core_summary"));
    let (c, m) = summary
        .map(|r| {
            (
                r.params
                    .get("cpu_node")
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0),
                r.params
                    .get("mem_node")
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0),
            )
        })
        .unwrap_or((0, 0));
    let mut s = Section::new(format!(
        "single-thread bandwidth from each core of node {c} to memory node {m}, MB/s"
    ));
    s.header = vec!["cpu".into(), "MB/s".into(), "vs mean".into()];
    let mean = summary
        .and_then(|r| metric(r, "bandwidth_mb_s"))
        .unwrap_or(0.0);
    for (cpu, v) in per_core_rows(&owned) {
        let dev = if mean > 0.0 {
            100.0 * (v - mean) / mean
        } else {
            0.0
        };
        s.rows.push(vec![
            cpu.to_string(),
            format!("{v:.0}"),
            format!("{dev:+.1}%"),
        ]);
    }
    if let Some(r) = summary {
        let sd = metric(r, "stddev_mb_s").unwrap_or(0.0);
        let (lo, hi) = (
            metric(r, "ci95_low_mb_s").unwrap_or(0.0),
            metric(r, "ci95_high_mb_s").unwrap_or(0.0),
        );
        let dev = metric(r, "max_deviation_pct").unwrap_or(0.0);
        let equivalent = r.params.get("equivalent").and_then(|v| v.as_bool()) == Some(true);
        s.lines.push(format!(
            "mean {mean:.0} MB/s, standard deviation {sd:.1} MB/s ({:.2}% of the mean), 95% confidence interval ({lo:.1}; {hi:.1})",
            if mean > 0.0 { 100.0 * sd / mean } else { 0.0 }
        ));
        s.lines.push(if equivalent {
            format!(
                "verdict: the cores are equivalent (every core within {}% of the mean; largest deviation {dev:.1}%), so one core per node stands for all",
                crate::probes::matrix::EQUIVALENT_PCT
            )
        } else {
            format!(
                "verdict: the cores are NOT equivalent (largest deviation {dev:.1}% of the mean, more than {}%): measure per core",
                crate::probes::matrix::EQUIVALENT_PCT
            )
        });
    }
    s
}

fn corner() -> String {
    "cpu\\mem".into()
}

fn header(a: &Atlas) -> Vec<String> {
    std::iter::once(corner())
        .chain(a.mem_nodes.iter().map(|m| m.to_string()))
        .collect()
}

/// One section of a grid; `cell` formats a present value.
fn grid_section(
    a: &Atlas,
    title: &str,
    grid: &Grid,
    cell: impl Fn(usize, usize, f64) -> String,
) -> Option<Section> {
    if grid.is_empty() {
        return None;
    }
    let mut s = Section::new(title);
    s.header = header(a);
    for &c in &a.cpu_nodes {
        let mut row = vec![c.to_string()];
        for &m in &a.mem_nodes {
            row.push(grid.get(c, m).map_or("-".into(), |v| cell(c, m, v)));
        }
        s.rows.push(row);
    }
    Some(s)
}

/// The measured grids, the SLIT beside them and HMAT where present.
pub fn grid_sections(a: &Atlas, topo: &Topology) -> Vec<Section> {
    let mut out = Vec::new();
    let kernel = a.kernel.as_deref().unwrap_or("triad");
    out.extend(grid_section(
        a,
        &format!("single-thread {kernel} bandwidth, MB/s (% of the row's local)"),
        &a.single,
        |c, m, v| match a.single.pct_of_local(c, m) {
            Some(p) => format!("{v:.0} ({p:.0}%)"),
            None => format!("{v:.0}"),
        },
    ));
    out.extend(grid_section(
        a,
        &format!("saturated {kernel} bandwidth, MB/s (threads at the peak)"),
        &a.saturated,
        |c, m, v| match a.saturated_threads.get(c, m) {
            Some(t) => format!("{v:.0} ({t:.0})"),
            None => format!("{v:.0}"),
        },
    ));
    out.extend(grid_section(
        a,
        "idle latency, ns per load (CV %)",
        &a.latency,
        |c, m, v| match a.latency_cv.get(c, m) {
            Some(cv) => format!("{v:.1} ({cv:.1}%)"),
            None => format!("{v:.1}"),
        },
    ));
    let mut slit = Grid::default();
    for &c in &a.cpu_nodes {
        for &m in &a.mem_nodes {
            if let Some(d) = topo.distance(c, m) {
                slit.values.insert((c, m), f64::from(d));
            }
        }
    }
    out.extend(grid_section(
        a,
        "SLIT distance (firmware)",
        &slit,
        |_, _, v| format!("{v:.0}"),
    ));
    let mut hmat_bw = Grid::default();
    let mut hmat_lat = Grid::default();
    for &m in &a.mem_nodes {
        let Some(h) = topo.node(m).and_then(|n| n.hmat.as_ref()) else {
            continue;
        };
        for &c in &a.cpu_nodes {
            if h.initiators.contains(c) {
                if let Some(bw) = h.read_bandwidth_mb_s {
                    hmat_bw.values.insert((c, m), bw as f64);
                }
                if let Some(l) = h.read_latency_ns {
                    hmat_lat.values.insert((c, m), l as f64);
                }
            }
        }
    }
    out.extend(grid_section(
        a,
        "HMAT read bandwidth, MB/s (firmware, best initiators only)",
        &hmat_bw,
        |_, _, v| format!("{v:.0}"),
    ));
    out.extend(grid_section(
        a,
        "HMAT read latency, ns (firmware, best initiators only)",
        &hmat_lat,
        |_, _, v| format!("{v:.0}"),
    ));
    let mut verified = Section::new("placement");
    let lowest = a.verified.values.values().copied().reduce(f64::min);
    verified.lines.push(match lowest {
        Some(p) if p >= 99.95 => {
            "every cell's pages were checked on its memory node (100% verified)".into()
        }
        Some(p) => format!(
            "lowest verified placement {p:.1}% of pages on the intended node: {}",
            a.verified
                .values
                .iter()
                .filter(|(_, v)| **v < 99.95)
                .map(|((c, m), v)| format!("{c}->{m} {v:.1}%"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "placement was not verified".into(),
    });
    verified.lines.extend(a.notes.iter().cloned());
    out.push(verified);
    out
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or(String::new(), |v| format!("{v:.digits$}"))
}

/// One line per cell with every figure.
pub fn csv(a: &Atlas, topo: &Topology) -> String {
    let mut out = String::from(
        "cpu_node,mem_node,bandwidth_1t_mb_s,pct_of_local,bandwidth_saturated_mb_s,saturated_threads,latency_ns,latency_cv_pct,slit_distance,placement_verified_pct\n",
    );
    for &c in &a.cpu_nodes {
        for &m in &a.mem_nodes {
            out.push_str(&format!(
                "{c},{m},{},{},{},{},{},{},{},{}\n",
                opt(a.single.get(c, m), 1),
                opt(a.single.pct_of_local(c, m), 1),
                opt(a.saturated.get(c, m), 1),
                opt(a.saturated_threads.get(c, m), 0),
                opt(a.latency.get(c, m), 2),
                opt(a.latency_cv.get(c, m), 2),
                topo.distance(c, m).map_or(String::new(), |d| d.to_string()),
                opt(a.verified.get(c, m), 1),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

    fn atlas() -> Atlas {
        let mut a = Atlas {
            cpu_nodes: vec![0, 1],
            mem_nodes: vec![0, 1],
            kernel: Some("triad".into()),
            ..Default::default()
        };
        for (c, m, v) in [
            (0, 0, 10_000.0),
            (0, 1, 6_000.0),
            (1, 0, 5_500.0),
            (1, 1, 9_900.0),
        ] {
            a.single.values.insert((c, m), v);
            a.verified.values.insert((c, m), 100.0);
        }
        a.latency.values.insert((0, 1), 151.25);
        a
    }

    #[test]
    fn sections_show_percent_of_local_and_the_slit() {
        let t = fixture("two-node");
        let s = grid_sections(&atlas(), &t);
        let text = super::super::sections::text(&s);
        assert!(text.contains("6000 (60%)"), "{text}");
        assert!(text.contains("SLIT distance"), "{text}");
        assert!(text.contains("151.2") || text.contains("151.3"), "{text}");
        assert!(text.contains("100% verified"), "{text}");
        let slit = s.iter().find(|s| s.title.starts_with("SLIT")).unwrap();
        assert_eq!(slit.rows[0][2], t.distance(0, 1).unwrap().to_string());
    }

    #[test]
    fn csv_has_one_line_per_cell_and_blanks_for_missing() {
        let t = fixture("two-node");
        let c = csv(&atlas(), &t);
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(
            lines[2].starts_with("0,1,6000.0,60.0,,,151.25,,"),
            "{}",
            lines[2]
        );
        let cols = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == cols));
    }
}
