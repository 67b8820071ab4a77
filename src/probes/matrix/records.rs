//! The matrix's measurements as results-document records: one per cell and
//! figure, the per-core runs with their summary, and Gamma from DMI. The
//! analysis (`analysis::atlas`) reads them back by the names used here.

use super::{Matrix, PerCore};
use crate::analysis::classes::ClassOptions;
use crate::analysis::model::Peak;
use crate::probes::measure::{self, Bandwidth};
use crate::results::names::matrix::{self as mx, kind};
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Line, Placement, Record, Series};
use crate::stats;
use crate::topology::Topology;

fn placement(seen: &measure::Seen) -> Placement {
    Placement {
        pages_by_node: seen
            .pages_by_node
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        on_target_pct: Some(seen.verified_pct),
        huge_pct: seen.huge_pct,
        cpus_seen: seen.cpus_seen.clone(),
    }
}

/// A bandwidth measurement as a record (STREAM-counted MB/s, every timed
/// run kept).
fn bandwidth_record(name: &str, c: usize, m: usize, b: &Bandwidth) -> Record {
    let mut rec = Record::new(probe::MATRIX, &format!("{name} {c}->{m}"))
        .param(mx::param::KIND, name)
        .param(param::CPU_NODE, c)
        .param(param::MEM_NODE, m)
        .param(param::THREADS, b.threads)
        .param(param::KERNEL, b.kernel.op.to_string())
        .param(param::VARIANT, b.kernel.name)
        .param(param::SIZE_BYTES, b.array_bytes)
        .param(param::PAGE_SIZE, b.seen.page_kind.clone())
        .metric(
            metric::BANDWIDTH_MB_S,
            b.stream_mb_s(),
            "MB/s",
            Better::Higher,
        )
        .metric(
            metric::CV_PCT,
            stats::cv_pct(&b.stream_samples()),
            "%",
            Better::Lower,
        )
        .metric(metric::RUNTIME_S, b.elapsed_s, "s", Better::Lower);
    rec.samples
        .insert(metric::BANDWIDTH_MB_S.into(), b.stream_samples());
    rec.placement = Some(placement(&b.seen));
    rec
}

/// The saturation peak, with its scaling curve as a series; its first
/// note says why the scaling stopped (the atlas leaves that note out of the
/// matrix's).
fn saturated_record(c: usize, m: usize, s: &super::Scaling) -> Record {
    let peak = &s.steps[s.peak];
    let mut rec = bandwidth_record(kind::SATURATED, c, m, peak);
    rec.notes.push(format!("scaling stopped: {}", s.stop));
    rec.conditions.extend(s.cut.clone());
    let curve = s.curve();
    rec.series.push(Series {
        name: mx::SCALING.into(),
        x_label: "threads".into(),
        x_unit: "".into(),
        y_label: "bandwidth".into(),
        y_unit: "MB/s".into(),
        x: curve.iter().map(|p| p.0 as f64).collect(),
        lines: vec![Line {
            label: format!("{c}->{m}"),
            y: curve.iter().map(|p| p.1).collect(),
        }],
    });
    rec
}

/// The best mix and store kind of a node pair, every candidate in a note.
fn peak_cell_record(c: usize, m: usize, p: &super::PeakCell) -> Record {
    use crate::results::names::peak::param as pk;
    let store = p.best.kernel.store.to_string();
    let mut rec = bandwidth_record(kind::PEAK_MIX, c, m, &p.best)
        .param(pk::MIX, p.mix.name())
        .param(pk::STORE, store.clone());
    let all: Vec<String> = p
        .candidates
        .iter()
        .map(|(mix, name, mb_s)| format!("{mix} {name} {mb_s:.0}"))
        .collect();
    rec.notes.push(format!(
        "best of {} mix and store kind pair(s): {} with {}; all, MB/s: {}",
        p.candidates.len(),
        p.mix,
        p.best.kernel.access(),
        all.join(", ")
    ));
    rec
}

fn latency_record(c: usize, m: usize, l: &measure::Latency) -> Record {
    let rec = Record::new(probe::MATRIX, &format!("{} {c}->{m}", kind::LATENCY))
        .param(mx::param::KIND, kind::LATENCY)
        .param(param::CPU_NODE, c)
        .param(param::MEM_NODE, m)
        .param(param::THREADS, 1)
        .param(param::KERNEL, mx::CHASE)
        .param(param::SIZE_BYTES, l.size_bytes)
        .param(param::PAGE_SIZE, l.seen.page_kind.clone());
    let mut rec = measure::with_pattern(rec, &l.pattern, l.pattern.spacing())
        .metric(metric::LATENCY_NS, l.median_ns(), "ns", Better::Lower)
        .metric(
            metric::LATENCY_STDDEV_NS,
            l.stddev_ns(),
            "ns",
            Better::Lower,
        )
        .metric(metric::CV_PCT, l.cv_pct(), "%", Better::Lower)
        .metric(metric::RUNTIME_S, l.elapsed_s, "s", Better::Lower);
    rec.samples
        .insert(metric::LATENCY_NS.into(), l.samples.clone());
    rec.placement = Some(placement(&l.seen));
    rec
}

/// Gamma from the DMI memory speed of this machine, kept with the matrix
/// so a results file carries its own peak. `Err` says why there is none.
pub(super) fn peak_record(topo: &Topology) -> Result<Record, String> {
    let p = crate::topology::peak::dmi_node_peak(topo, std::path::Path::new("/"))?;
    peak_of(&Peak::dmi(
        p.speed_mt_s,
        p.bytes_per_transfer,
        p.channels_per_node,
    ))
}

fn peak_of(peak: &Peak) -> Result<Record, String> {
    let mut rec = Record::new(probe::MATRIX, kind::PEAK)
        .param(mx::param::KIND, kind::PEAK)
        .metric(metric::PEAK_MB_S, peak.mb_s, "MB/s", Better::Higher);
    rec.params.insert(
        mx::param::PEAK.into(),
        serde_json::to_value(peak).map_err(|e| e.to_string())?,
    );
    Ok(rec)
}

/// Adds Gamma from DMI to a matrix's records, or a note on the first
/// saying why there is none.
pub(crate) fn add_peak(records: &mut Vec<Record>, topo: &Topology) {
    match peak_record(topo) {
        Ok(rec) => records.push(rec),
        Err(why) => {
            if let Some(first) = records.first_mut() {
                first
                    .notes
                    .push(format!("no theoretical peak from DMI: {why}"));
            }
        }
    }
}

/// How the matrix's classes are to be found, kept with it so that every
/// rendering of the document (and `numabench model`) finds the same ones.
pub(crate) fn class_rule_record(opts: &ClassOptions) -> Record {
    Record::new(probe::MATRIX, kind::CLASS_RULE)
        .param(mx::param::KIND, kind::CLASS_RULE)
        .param(mx::param::TOLERANCE_PCT, opts.tolerance * 100.0)
        .param(mx::param::MERGE_CLOSE, opts.merge_close)
}

/// Gamma as the user gave it (`--peak`) in place of the recorded one.
pub(crate) fn give_peak(records: &mut Vec<Record>, mb_s: f64) {
    records.retain(|r| !(r.probe == probe::MATRIX && r.name == kind::PEAK));
    records.extend(peak_of(&Peak::given(mb_s)).ok());
}

impl Matrix {
    /// Every measured figure as results-document records.
    pub(crate) fn records(&self) -> Vec<Record> {
        let mut out = Vec::new();
        for cell in &self.cells {
            let (c, m) = (cell.cpu_node, cell.mem_node);
            let first = out.len();
            if let Some(b) = &cell.single {
                out.push(bandwidth_record(kind::SINGLE, c, m, b));
            }
            if let Some(s) = &cell.saturated {
                out.push(saturated_record(c, m, s));
            }
            if let Some(l) = &cell.latency {
                out.push(latency_record(c, m, l));
            }
            if let Some(p) = &cell.peak {
                out.push(peak_cell_record(c, m, p));
            }
            if let Some((_, built)) = self.builds.iter().find(|(n, _)| *n == m) {
                for rec in &mut out[first..] {
                    let n = built.total();
                    rec.params.insert(mx::param::BUFFER_BUILDS.into(), n.into());
                }
            }
        }
        if let Some(first) = out.first_mut() {
            first.notes.extend(self.notes.iter().cloned());
            first.conditions.extend(self.conditions.iter().cloned());
        }
        out
    }
}

impl PerCore {
    /// One record per core, then the summary across the cores.
    pub(crate) fn records(&self) -> Vec<Record> {
        let s = &self.summary;
        let mut summary = Record::new(
            probe::MATRIX,
            &format!(
                "{} node{}->{}",
                kind::PER_CORE,
                self.cpu_node,
                self.mem_node
            ),
        )
        .param(mx::param::KIND, kind::PER_CORE_SUMMARY)
        .param(param::CPU_NODE, self.cpu_node)
        .param(param::MEM_NODE, self.mem_node)
        .param(mx::param::CORES, self.cores.len())
        .param(mx::param::EQUIVALENT, self.equivalent())
        .metric(metric::BANDWIDTH_MB_S, s.mean, "MB/s", Better::Higher)
        .metric(mx::metric::STDDEV_MB_S, s.stddev, "MB/s", Better::Lower)
        .metric(mx::metric::CI95_LOW_MB_S, s.ci95.0, "MB/s", Better::Higher)
        .metric(mx::metric::CI95_HIGH_MB_S, s.ci95.1, "MB/s", Better::Higher)
        .metric(
            mx::metric::MAX_DEVIATION_PCT,
            s.max_dev_pct,
            "%",
            Better::Lower,
        );
        if let Some(n) = self.runs {
            summary = summary.param(mx::param::RUNS, n);
        }
        if let Some(w) = self.widest_ci_pct() {
            summary = summary.metric(mx::metric::WIDEST_CI95_PCT, w, "%", Better::Lower);
        }
        self.cores
            .iter()
            .map(|core| {
                let mut rec = match self.runs {
                    None => bandwidth_record(
                        kind::PER_CORE,
                        self.cpu_node,
                        self.mem_node,
                        &core.runs[0],
                    ),
                    Some(_) => runs_record(self.cpu_node, self.mem_node, core),
                };
                rec.name = format!("{} cpu{}->{}", kind::PER_CORE, core.cpu, self.mem_node);
                rec.params.insert(param::CPU.into(), core.cpu.into());
                rec
            })
            .chain(std::iter::once(summary))
            .collect()
    }
}

/// One core's runs as a record: the mean of the runs' figures (each the
/// best of its timed runs) with their spread, every run's figure as a
/// sample, the placement of all runs together.
fn runs_record(c: usize, m: usize, core: &super::CoreRuns) -> Record {
    let figures = core.figures();
    let s = super::percore::summarise_cores(&figures);
    let mut rec = bandwidth_record(kind::PER_CORE, c, m, &core.runs[0])
        .param(mx::param::RUNS, figures.len())
        .metric(metric::BANDWIDTH_MB_S, s.mean, "MB/s", Better::Higher)
        .metric(metric::CV_PCT, stats::cv_pct(&figures), "%", Better::Lower)
        .metric(
            metric::RUNTIME_S,
            core.runs.iter().map(|b| b.elapsed_s).sum(),
            "s",
            Better::Lower,
        )
        .metric(mx::metric::STDDEV_MB_S, s.stddev, "MB/s", Better::Lower)
        .metric(mx::metric::MIN_MB_S, s.min, "MB/s", Better::Higher)
        .metric(mx::metric::MAX_MB_S, s.max, "MB/s", Better::Higher);
    if figures.len() > 1 {
        rec = rec
            .metric(mx::metric::CI95_LOW_MB_S, s.ci95.0, "MB/s", Better::Higher)
            .metric(mx::metric::CI95_HIGH_MB_S, s.ci95.1, "MB/s", Better::Higher);
    }
    rec.samples.insert(metric::BANDWIDTH_MB_S.into(), figures);
    rec.placement = Some(placement(&merged(core.runs.iter().map(|b| &b.seen))));
    rec
}

/// Where the memory of several measurements was: pages summed, the lowest
/// verified share, the mean huge-page share, every CPU seen once.
fn merged<'a>(seen: impl Iterator<Item = &'a measure::Seen>) -> measure::Seen {
    let mut out = measure::Seen {
        verified_pct: 100.0,
        ..Default::default()
    };
    let mut n = 0;
    for s in seen {
        for (node, pages) in &s.pages_by_node {
            *out.pages_by_node.entry(*node).or_default() += pages;
        }
        out.verified_pct = out.verified_pct.min(s.verified_pct);
        out.huge_pct += s.huge_pct;
        out.cpus_seen.extend(&s.cpus_seen);
        if n == 0 {
            out.page_kind = s.page_kind.clone();
        }
        n += 1;
    }
    out.huge_pct /= n.max(1) as f64;
    out.cpus_seen.sort_unstable();
    out.cpus_seen.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Cell, MatrixConfig, Scaling};
    use super::*;
    use crate::kernels::{Op, Store};
    use crate::results::Condition;
    use std::time::Duration;

    fn triad(threads: usize) -> Bandwidth {
        Bandwidth {
            kernel: crate::kernels::best(Op::Triad, Store::Regular).unwrap(),
            threads,
            array_bytes: 1 << 20,
            reps: 1,
            iterations: 2,
            times_s: vec![0.001],
            elapsed_s: 0.1,
            seen: Default::default(),
        }
    }

    #[test]
    fn a_stop_by_the_time_limit_goes_on_the_records_as_a_condition() {
        let limit = Condition::CutByTimeLimit { limit_s: 2.0 };
        let m = Matrix {
            cells: vec![Cell {
                cpu_node: 0,
                mem_node: 0,
                single: Some(triad(1)),
                saturated: Some(Scaling {
                    steps: vec![triad(1), triad(2)],
                    peak: 1,
                    stop: "time limit reached at 3 threads".into(),
                    cut: Some(limit.clone()),
                }),
                latency: None,
                peak: None,
            }],
            builds: vec![(0, Default::default())],
            notes: vec!["time limit of 2 s reached: 1 cell(s) not fully measured".into()],
            conditions: vec![limit.clone()],
            failed: None,
        };
        let recs = m.records();
        assert_eq!(
            recs[0].conditions,
            std::slice::from_ref(&limit),
            "the matrix's stop"
        );
        assert_eq!(recs[1].cut_by_time_limit(), Some(2.0), "the curve's stop");
        assert_eq!(
            recs[1].notes,
            ["scaling stopped: time limit reached at 3 threads"]
        );
    }

    #[test]
    fn a_time_limited_run_says_so_as_data() {
        // A limit of no time measures nothing: every cell is left out.
        let cfg = MatrixConfig::new()
            .unwrap()
            .time_limit(Some(Duration::ZERO));
        let m =
            super::super::run(&crate::topology::fixture("two-node"), &cfg, &mut |_| {}).unwrap();
        assert!(m.cells.iter().all(|c| c.single.is_none()));
        assert_eq!(m.conditions, [Condition::CutByTimeLimit { limit_s: 0.0 }]);
        assert!(m.notes.iter().any(|n| n.starts_with("time limit of 0 s")));
        // A memory limit that halves the working set is named as data too.
        let mut topo = crate::topology::fixture("two-node");
        topo.memory_limit = Some(crate::topology::MemoryLimit {
            headroom_bytes: 40 << 20,
            limit_bytes: 64 << 20,
            source: "memory cgroup /x (memory.max)".into(),
        });
        let m = super::super::run(&topo, &cfg, &mut |_| {}).unwrap();
        assert!(m.conditions.contains(&Condition::ScaledByMemoryLimit {
            source: "memory cgroup /x (memory.max)".into()
        }));
    }
}
