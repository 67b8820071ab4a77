//! The matrix's grids (rows = CPU nodes, columns = memory nodes) as tables,
//! heatmaps and CSV, from the atlas the records make.

use crate::analysis::atlas::{Atlas, Grid};
use crate::results::Better;
use crate::results::names::{metric, param};
use crate::topology::Topology;
use crate::view::{Csv, HeatRow, Heatmap, Section};

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
    best: Option<Better>,
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
    if let Some(b) = best {
        s.mark_column_best(b == Better::Lower);
    }
    Some(s)
}

/// The measured grids: single-thread and saturated bandwidth, latency.
pub(super) fn measured_sections(a: &Atlas) -> Vec<Section> {
    let mut out = Vec::new();
    let kernel = a.kernel.as_deref().unwrap_or("triad");
    out.extend(grid_section(
        a,
        &format!("single-thread {kernel} bandwidth, MB/s (% of the row's local)"),
        &a.single,
        Some(Better::Higher),
        |c, m, v| match a.single.pct_of_local(c, m) {
            Some(p) => format!("{v:.0} ({p:.0}%)"),
            None => format!("{v:.0}"),
        },
    ));
    out.extend(grid_section(
        a,
        &format!("saturated {kernel} bandwidth, MB/s (threads at the peak)"),
        &a.saturated,
        Some(Better::Higher),
        |c, m, v| match a.saturated_threads.get(c, m) {
            Some(t) => format!("{v:.0} ({t:.0})"),
            None => format!("{v:.0}"),
        },
    ));
    out.extend(peak_section(a));
    out.extend(grid_section(
        a,
        &format!(
            "idle latency, {}{}, ns per load (CV %)",
            a.latency_chase(),
            a.latency_buffer()
        ),
        &a.latency,
        Some(Better::Lower),
        |c, m, v| match a.latency_cv.get(c, m) {
            Some(cv) => format!("{v:.1} ({cv:.1}%)"),
            None => format!("{v:.1}"),
        },
    ));
    out
}

/// The peak cells: each with its best mix and store kind named.
pub(super) fn peak_section(a: &Atlas) -> Option<Section> {
    grid_section(
        a,
        "peak bandwidth, all cores, best read/write mix and store kind, MB/s",
        &a.peak_mix,
        Some(Better::Higher),
        |c, m, v| match a.peak_mix_names.get(&(c, m)) {
            Some(name) => format!("{v:.0} ({name})"),
            None => format!("{v:.0}"),
        },
    )
}

/// What the firmware says beside the measurement: the SLIT, and HMAT
/// where present.
pub(super) fn firmware_sections(a: &Atlas, topo: &Topology) -> Vec<Section> {
    let mut slit = Grid::default();
    for &c in &a.cpu_nodes {
        for &m in &a.mem_nodes {
            if let Some(d) = topo.distance(c, m) {
                slit.values.insert((c, m), f64::from(d));
            }
        }
    }
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
    let whole = |_: usize, _: usize, v: f64| format!("{v:.0}");
    [
        ("SLIT distance (firmware)", &slit),
        (
            "HMAT read bandwidth, MB/s (firmware, best initiators only)",
            &hmat_bw,
        ),
        (
            "HMAT read latency, ns (firmware, best initiators only)",
            &hmat_lat,
        ),
    ]
    .into_iter()
    .filter_map(|(title, grid)| grid_section(a, title, grid, None, whole))
    .collect()
}

/// How much of each cell's memory was found on its node, and the run's
/// notes.
pub(super) fn placement_section(a: &Atlas) -> Section {
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
    verified
}

/// A grid coloured by each cell's share of its row's reference: the local
/// value, or for latency (`lower_better`) the row's best.
pub(super) fn heatmap(
    a: &Atlas,
    title: &str,
    g: &Grid,
    lower_better: bool,
    digits: usize,
) -> Heatmap {
    let mut h = Heatmap {
        title: title.into(),
        header: std::iter::once("cpu \\ mem".to_string())
            .chain(a.mem_nodes.iter().map(|m| m.to_string()))
            .collect(),
        lower_better,
        digits,
        ..Default::default()
    };
    if g.is_empty() {
        return h;
    }
    for &c in &a.cpu_nodes {
        h.rows.push(HeatRow {
            label: c.to_string(),
            cells: a.mem_nodes.iter().map(|&m| g.get(c, m)).collect(),
            reference: if lower_better {
                g.row(c).into_iter().map(|r| r.1).reduce(f64::min)
            } else {
                g.local(c)
            },
        });
    }
    h
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or(String::new(), |v| format!("{v:.digits$}"))
}

/// One line per cell with every figure.
pub(super) fn csv(a: &Atlas, topo: &Topology) -> Csv {
    let mut out = Csv {
        header: [
            param::CPU_NODE,
            param::MEM_NODE,
            "bandwidth_1t_mb_s",
            "pct_of_local",
            "bandwidth_saturated_mb_s",
            "saturated_threads",
            metric::LATENCY_NS,
            "latency_cv_pct",
            "slit_distance",
            crate::results::names::column::PLACEMENT_VERIFIED_PCT,
        ]
        .map(String::from)
        .to_vec(),
        ..Default::default()
    };
    // Only matrices with the peak cell have its columns, so older files
    // keep their shape.
    let peak = !a.peak_mix.is_empty();
    if peak {
        out.header.push("bandwidth_peak_mix_mb_s".into());
        out.header.push("peak_mix".into());
    }
    for &c in &a.cpu_nodes {
        for &m in &a.mem_nodes {
            let mut row = vec![
                c.to_string(),
                m.to_string(),
                opt(a.single.get(c, m), 1),
                opt(a.single.pct_of_local(c, m), 1),
                opt(a.saturated.get(c, m), 1),
                opt(a.saturated_threads.get(c, m), 0),
                opt(a.latency.get(c, m), 2),
                opt(a.latency_cv.get(c, m), 2),
                topo.distance(c, m).map_or(String::new(), |d| d.to_string()),
                opt(a.verified.get(c, m), 1),
            ];
            if peak {
                row.push(opt(a.peak_mix.get(c, m), 1));
                row.push(a.peak_mix_names.get(&(c, m)).cloned().unwrap_or_default());
            }
            out.rows.push(row);
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
        let a = atlas();
        let measured = measured_sections(&a);
        let firmware = firmware_sections(&a, &t);
        let mut all = measured.clone();
        all.extend(firmware.clone());
        all.push(placement_section(&a));
        let text: String = all
            .iter()
            .flat_map(|s| s.rows.iter().flatten().chain(&s.lines))
            .map(|c| format!("{c}\n"))
            .collect();
        assert!(text.contains("6000 (60%)"), "{text}");
        assert!(text.contains("151.2") || text.contains("151.3"), "{text}");
        assert!(text.contains("100% verified"), "{text}");
        assert_eq!(firmware[0].title, "SLIT distance (firmware)");
        assert_eq!(
            firmware[0].rows[0][2],
            t.distance(0, 1).unwrap().to_string()
        );
    }

    #[test]
    fn csv_has_one_line_per_cell_and_blanks_for_missing() {
        let t = fixture("two-node");
        let c = csv(&atlas(), &t);
        assert_eq!(c.rows.len(), 4);
        assert_eq!(
            c.rows[1][..8].join(","),
            "0,1,6000.0,60.0,,,151.25,",
            "{:?}",
            c.rows[1]
        );
        assert!(c.rows.iter().all(|r| r.len() == c.header.len()));
    }

    #[test]
    fn an_empty_grid_is_no_heatmap() {
        let a = atlas();
        assert!(heatmap(&a, "x", &a.saturated, false, 0).rows.is_empty());
        let h = heatmap(&a, "x", &a.latency, true, 1);
        assert_eq!(h.rows[0].reference, Some(151.25));
    }
}
