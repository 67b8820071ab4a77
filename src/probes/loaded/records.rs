//! Curves as results records, and records read back as curves: a record
//! per point (its latency and bandwidth samples kept) and one per pair
//! with the idle latency, the knee and the most bandwidth. The view reads
//! these alone, so a saved file renders as the command printed it.

use super::curve::{self, Point};
use super::{CHUNK_BYTES, Curve, Loaded, PointRun};
use crate::probes::measure::Seen;
use crate::results::names::loaded::{self as ld, IDLE, kind};
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Line, Placement, Record, Series};
use crate::stats;

impl Loaded {
    pub(crate) fn records(&self) -> Vec<Record> {
        let mut out = Vec::new();
        for c in &self.curves {
            out.extend(
                curve_records(c)
                    .into_iter()
                    .map(|r| r.param(param::CHASE_BUFFERS_BUILT, self.buffers_built)),
            );
        }
        if let Some(first) = out.first_mut() {
            first.notes.extend(self.notes.iter().cloned());
            first.conditions.extend(self.conditions.iter().cloned());
        }
        out
    }
}

/// The curve's points as [`Point`]s, idle first.
fn points(c: &Curve) -> Vec<Point> {
    c.points
        .iter()
        .map(|p| Point {
            bandwidth_mb_s: p.mean_bandwidth_mb_s,
            latency_ns: stats::median(&p.latency_ns),
            stddev_ns: stats::stddev(&p.latency_ns),
        })
        .collect()
}

fn placement(chase: &Seen, injectors: &Seen, with_injectors: bool) -> Placement {
    let mut pages = chase.pages_by_node.clone();
    let mut verified = chase.verified_pct;
    let mut cpus = chase.cpus_seen.clone();
    let mut huge = chase.huge_pct;
    if with_injectors {
        for (n, c) in &injectors.pages_by_node {
            *pages.entry(*n).or_default() += c;
        }
        verified = verified.min(injectors.verified_pct);
        cpus.extend(&injectors.cpus_seen);
        huge = huge.min(injectors.huge_pct);
    }
    Placement {
        pages_by_node: pages.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        on_target_pct: Some(verified),
        huge_pct: huge,
        cpus_seen: cpus,
    }
}

fn pair_name(c: &Curve) -> String {
    format!("{}->{}", c.plan.cpu_node, c.plan.mem_node)
}

/// The params a pair's records share.
fn common(rec: Record, c: &Curve) -> Record {
    let p = &c.plan;
    let chase = p.pattern;
    let rec = crate::probes::measure::with_pattern(rec, &chase, chase.spacing());
    rec.param(param::CPU_NODE, p.cpu_node)
        .param(param::MEM_NODE, p.mem_node)
        .param(param::CPU, p.chase_cpu)
        .param(param::SIZE_BYTES, p.chase_bytes)
        .param(param::PAGE_SIZE, c.chase_seen.page_kind.clone())
        .param(ld::param::MIX, c.mix.name())
        .param(param::KERNEL, c.kernel)
        .param(ld::param::INJECTOR_NODE, p.injector_node)
        .param(ld::param::INJECTOR_CPUS, c.injector_seen.cpus_seen.clone())
        .param(ld::param::INJECTOR_BYTES, p.injector_bytes)
        .param(ld::param::CHUNK_BYTES, CHUNK_BYTES)
        .param(ld::param::NS_PER_SPIN, c.ns_per_spin)
}

fn point_record(c: &Curve, p: &PointRun) -> Record {
    let delay = p.delay_ns.map_or(IDLE.to_string(), |d| format!("{d}ns"));
    let injectors = if p.delay_ns.is_some() {
        c.plan.injector_cpus.len()
    } else {
        0
    };
    let mut rec = common(
        Record::new(probe::LOADED, &format!("point {} {delay}", pair_name(c))),
        c,
    )
    .param(ld::param::KIND, kind::POINT)
    .param(ld::param::INJECTORS, injectors)
    .param(param::THREADS, injectors + 1)
    .param(ld::param::SPINS, p.spins)
    .metric(
        metric::LATENCY_NS,
        stats::median(&p.latency_ns),
        "ns",
        Better::Lower,
    )
    .metric(
        metric::LATENCY_STDDEV_NS,
        stats::stddev(&p.latency_ns),
        "ns",
        Better::Lower,
    )
    .metric(
        metric::CV_PCT,
        stats::cv_pct(&p.latency_ns),
        "%",
        Better::Lower,
    )
    .metric(
        metric::BANDWIDTH_MB_S,
        p.mean_bandwidth_mb_s,
        "MB/s",
        Better::Higher,
    )
    .metric(metric::RUNTIME_S, p.elapsed_s, "s", Better::Lower);
    if let Some(d) = p.delay_ns {
        rec = rec.param(ld::param::DELAY_NS, d);
    }
    rec.samples
        .insert(metric::LATENCY_NS.into(), p.latency_ns.clone());
    rec.samples
        .insert(metric::BANDWIDTH_MB_S.into(), p.bandwidth_mb_s.clone());
    rec.placement = Some(placement(
        &c.chase_seen,
        &c.injector_seen,
        p.delay_ns.is_some(),
    ));
    rec
}

fn curve_records(c: &Curve) -> Vec<Record> {
    let pts = points(c);
    let mut out: Vec<Record> = c.points.iter().map(|p| point_record(c, p)).collect();
    for (i, j) in curve::not_monotone(&pts) {
        let rec = &mut out[i];
        rec.params.insert(
            ld::param::NOT_MONOTONE.into(),
            serde_json::Value::Bool(true),
        );
        rec.notes.push(format!(
            "latency {:.1} ns is below the lighter load's {:.1} ns ({}) by more than the noise",
            pts[i].latency_ns,
            pts[j].latency_ns,
            label(&c.points[j])
        ));
    }
    for (rec, p) in out.iter_mut().zip(&pts).skip(1) {
        if !curve::injected(p) {
            rec.notes.push(NO_LOAD.into());
        }
    }
    if let Some(first) = out.first_mut() {
        first.notes.extend(c.notes.iter().cloned());
        first.conditions.extend(c.plan.limited.clone());
    }
    if let Some(idle) = pts.first() {
        out.push(knee_record(c, idle, &pts[1..]));
    }
    out
}

/// What a loaded point whose injectors counted no bytes says of itself.
const NO_LOAD: &str = "no injected bandwidth measured: the injectors moved no bytes during this point's samples (their CPUs ran something else, or their pages were being brought back in); the point is left out of the knee, the full-load figure and the chart";

fn label(p: &PointRun) -> String {
    p.delay_ns
        .map_or(IDLE.to_string(), |d| format!("delay {d} ns"))
}

fn knee_record(c: &Curve, idle: &Point, loaded: &[Point]) -> Record {
    let mut rec = common(
        Record::new(probe::LOADED, &format!("knee {}", pair_name(c))),
        c,
    )
    .param(ld::param::KIND, kind::KNEE)
    .param(ld::param::INJECTORS, c.plan.injector_cpus.len())
    .metric(
        ld::metric::IDLE_LATENCY_NS,
        idle.latency_ns,
        "ns",
        Better::Lower,
    );
    match curve::knee(idle, loaded) {
        Some(k) => {
            rec = rec
                .metric(
                    ld::metric::KNEE_BANDWIDTH_MB_S,
                    k.bandwidth_mb_s,
                    "MB/s",
                    Better::Higher,
                )
                .metric(
                    ld::metric::KNEE_LATENCY_NS,
                    k.latency_ns,
                    "ns",
                    Better::Lower,
                );
        }
        None if !loaded.is_empty() && !loaded.iter().any(curve::injected) => rec.notes.push(
            "no knee and no full-load figure: the injectors moved no bytes at any load, so no point measured latency under load".into(),
        ),
        None if !loaded.is_empty() => rec.notes.push(format!(
            "no knee: the latency stayed under {}x idle at every load (the injectors did not saturate this memory)",
            curve::KNEE_FACTOR
        )),
        None => {}
    }
    if let Some(m) = curve::most_bandwidth(loaded) {
        rec = rec
            .metric(
                ld::metric::MAX_BANDWIDTH_MB_S,
                m.bandwidth_mb_s,
                "MB/s",
                Better::Higher,
            )
            .metric(
                ld::metric::MAX_LOAD_LATENCY_NS,
                m.latency_ns,
                "ns",
                Better::Lower,
            );
    }
    let all: Vec<&Point> = std::iter::once(idle)
        .chain(loaded.iter().filter(|p| curve::injected(p)))
        .collect();
    rec.series.push(Series {
        name: "latency vs injected bandwidth".into(),
        x_label: "injected bandwidth".into(),
        x_unit: "MB/s".into(),
        y_label: "chase latency".into(),
        y_unit: "ns".into(),
        x: all.iter().map(|p| p.bandwidth_mb_s).collect(),
        lines: vec![Line {
            label: pair_name(c),
            y: all.iter().map(|p| p.latency_ns).collect(),
        }],
    });
    rec
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::loaded::{Mix, Plan};
    use crate::results::names::loaded::param as lp;
    use crate::view::View;

    fn run(delay: Option<u64>, bw: f64, lat: f64) -> PointRun {
        PointRun {
            delay_ns: delay,
            spins: delay.unwrap_or(0) / 10,
            latency_ns: vec![lat * 0.99, lat, lat * 1.01],
            bandwidth_mb_s: vec![bw; 3],
            mean_bandwidth_mb_s: bw,
            elapsed_s: 0.1,
        }
    }

    fn seen(cpus: &[usize]) -> Seen {
        Seen {
            pages_by_node: [(1, 100)].into(),
            verified_pct: 100.0,
            huge_pct: 100.0,
            cpus_seen: cpus.to_vec(),
            page_kind: "thp".into(),
        }
    }

    /// A synthetic curve from node 0 to memory node 1: idle 100 ns, then
    /// heavier loads up to 3x idle.
    fn curve(lats: &[(Option<u64>, f64, f64)]) -> Curve {
        Curve {
            plan: Plan {
                cpu_node: 0,
                mem_node: 1,
                chase_cpu: 0,
                injector_node: 0,
                injector_cpus: vec![1, 2, 3],
                chase_bytes: 1 << 28,
                pattern: crate::kernels::pattern::Pattern::FullRandom,
                injector_bytes: 1 << 25,
                note: None,
                limited: None,
            },
            mix: Mix::Read,
            kernel: "read_avx2",
            ns_per_spin: 10.0,
            points: lats.iter().map(|&(d, b, l)| run(d, b, l)).collect(),
            chase_seen: seen(&[0]),
            injector_seen: seen(&[1, 2, 3]),
            notes: Vec::new(),
        }
    }

    fn records_of(c: Curve) -> Vec<Record> {
        Loaded {
            curves: vec![c],
            notes: Vec::new(),
            conditions: Vec::new(),
            failed: None,
            timed_out: false,
            buffers_built: 1,
        }
        .records()
    }

    #[test]
    fn a_curve_gives_a_record_per_point_and_a_knee() {
        let recs = records_of(curve(&[
            (None, 0.0, 100.0),
            (Some(1000), 5_000.0, 110.0),
            (Some(100), 15_000.0, 160.0),
            (Some(0), 20_000.0, 300.0),
        ]));
        assert_eq!(recs.len(), 5);
        let idle = &recs[0];
        assert!(!idle.has_param(lp::DELAY_NS));
        assert_eq!(idle.params[lp::INJECTORS], 0);
        // The idle point's placement is the chase's alone; loaded ones add
        // the injectors' CPUs.
        assert_eq!(idle.placement.as_ref().unwrap().cpus_seen, [0]);
        assert_eq!(recs[3].placement.as_ref().unwrap().cpus_seen, [0, 1, 2, 3]);
        assert_eq!(recs[3].params[lp::INJECTORS], 3);
        let knee = &recs[4];
        let m = |k: &str| knee.metrics[k].value;
        assert_eq!(m(ld::metric::IDLE_LATENCY_NS), 100.0);
        assert_eq!(m(ld::metric::KNEE_LATENCY_NS), 200.0);
        // 200 ns between (15000, 160) and (20000, 300).
        let k = m(ld::metric::KNEE_BANDWIDTH_MB_S);
        assert!(
            (k - (15_000.0 + 5_000.0 * 40.0 / 140.0)).abs() < 1e-6,
            "{k}"
        );
        assert_eq!(m(ld::metric::MAX_BANDWIDTH_MB_S), 20_000.0);
        assert!(recs.iter().all(|r| !r.has_param(lp::NOT_MONOTONE)));
    }

    #[test]
    fn every_record_names_the_chase_pattern() {
        use crate::kernels::pattern::Pattern;
        use crate::results::names::param;
        let mut c = curve(&[(None, 0.0, 100.0), (Some(0), 20_000.0, 300.0)]);
        c.plan.pattern = Pattern::PageLocal { window: 256 << 10 };
        let recs = records_of(c);
        assert!(recs.iter().all(|r| r.params[param::PATTERN] == "page-local"
            && r.params[param::WINDOW_BYTES] == 256 << 10
            && r.params[param::SPACING_BYTES] == 256));
        let recs = records_of(curve(&[(None, 0.0, 100.0)]));
        assert!(recs.iter().all(
            |r| r.params[param::PATTERN] == "full-random" && !r.has_param(param::WINDOW_BYTES)
        ));
    }

    #[test]
    fn the_runs_stop_and_a_curves_limit_go_on_the_first_records() {
        let limit = crate::results::Condition::ScaledByMemoryLimit {
            source: "memory cgroup /x (memory.max)".into(),
        };
        let mut c = curve(&[(None, 0.0, 100.0), (Some(0), 9_000.0, 300.0)]);
        c.plan.limited = Some(limit.clone());
        let recs = Loaded {
            curves: vec![c],
            notes: vec!["time limit reached: 1 of 2 pair(s) measured".into()],
            conditions: vec![crate::results::Condition::CutByTimeLimit { limit_s: 1.0 }],
            failed: None,
            timed_out: true,
            buffers_built: 1,
        }
        .records();
        assert_eq!(recs[0].cut_by_time_limit(), Some(1.0));
        assert!(recs[0].scaled_by_memory_limit("memory cgroup /x (memory.max)"));
        assert!(recs[1..].iter().all(|r| r.conditions.is_empty()));
    }

    #[test]
    fn a_dip_is_flagged_and_a_flat_curve_has_no_knee() {
        let recs = records_of(curve(&[
            (None, 0.0, 100.0),
            (Some(1000), 5_000.0, 150.0),
            (Some(0), 9_000.0, 120.0),
        ]));
        assert_eq!(recs[2].params[lp::NOT_MONOTONE], true);
        assert!(
            recs[2].notes[0].contains("delay 1000 ns"),
            "{:?}",
            recs[2].notes
        );
        let knee = recs.last().unwrap();
        assert!(!knee.metrics.contains_key(ld::metric::KNEE_BANDWIDTH_MB_S));
        assert!(knee.notes.iter().any(|n| n.starts_with("no knee")));
    }

    #[test]
    fn a_full_load_point_that_moved_nothing_is_no_knee_no_full_load_and_not_drawn() {
        let recs = records_of(curve(&[
            (None, 0.0, 100.0),
            (Some(1000), 5_000.0, 120.0),
            (Some(100), 9_000.0, 150.0),
            (Some(0), 0.0, 260.0),
        ]));
        let knee = recs.last().unwrap();
        let m = |k: &str| knee.metrics.get(k).map(|m| m.value);
        assert_eq!(m(ld::metric::KNEE_BANDWIDTH_MB_S), None);
        assert_eq!(m(ld::metric::MAX_BANDWIDTH_MB_S), Some(9_000.0));
        assert_eq!(m(ld::metric::MAX_LOAD_LATENCY_NS), Some(150.0));
        assert!(recs[3].notes.iter().any(|n| n == NO_LOAD), "{:?}", recs[3].notes);
        assert!(recs[..3].iter().all(|r| !r.notes.iter().any(|n| n == NO_LOAD)));
        assert_eq!(knee.series[0].x, [0.0, 5_000.0, 9_000.0]);
        let refs: Vec<&Record> = recs.iter().collect();
        let doc = crate::results::Document::new(&crate::topology::fixture("two-node"));
        let chart = super::super::LoadedView
            .blocks(&doc, &refs)
            .into_iter()
            .find_map(|b| match b {
                crate::view::Block::Chart(c) => Some(c),
                _ => None,
            })
            .unwrap();
        let xs: Vec<f64> = chart.lines[0].points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [0.0, 5_000.0, 9_000.0]);
        // No point with a load: the knee record says so, not "did not saturate".
        let recs = records_of(curve(&[(None, 0.0, 100.0), (Some(0), 0.0, 300.0)]));
        let knee = recs.last().unwrap();
        assert!(!knee.metrics.contains_key(ld::metric::MAX_BANDWIDTH_MB_S));
        assert!(
            knee.notes[0].starts_with("no knee and no full-load figure"),
            "{:?}",
            knee.notes
        );
    }

    #[test]
    fn the_view_shows_every_point_the_knee_and_a_chart_with_it_marked() {
        let recs = records_of(curve(&[
            (None, 0.0, 100.0),
            (Some(100), 15_000.0, 160.0),
            (Some(0), 20_000.0, 300.0),
        ]));
        let doc = crate::results::Document::new(&crate::topology::fixture("two-node"));
        let refs: Vec<&Record> = recs.iter().collect();
        let view = super::super::LoadedView;
        let secs = view.sections(&doc, &refs);
        assert_eq!(secs.len(), 2);
        assert_eq!(secs[0].rows[0][0], "0->1");
        assert_eq!(secs[0].rows[0][2], "100.0");
        assert_eq!(secs[1].rows.len(), 3);
        assert_eq!(secs[1].rows[0][0], IDLE);
        assert_eq!(secs[1].rows[2][6], "3.00");
        let charts: Vec<_> = view
            .blocks(&doc, &refs)
            .into_iter()
            .filter_map(|b| match b {
                crate::view::Block::Chart(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(charts.len(), 1);
        assert_eq!(charts[0].lines[0].points.len(), 3);
        assert_eq!(charts[0].markers.len(), 1);
        let csv = view.csv(&doc, &refs).unwrap();
        assert_eq!(csv.rows.len(), 3);
    }
}
