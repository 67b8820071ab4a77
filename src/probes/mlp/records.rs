//! MLP curves as records: one per (pair, chase count) with ns per access,
//! per-chase latency, achieved concurrency and line bandwidth, every sample
//! and the verified placement.

use super::{Curve, Measured, MlpConfig, Point};
use crate::probes::measure::with_pattern;
use crate::results::names::mlp as ml;
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Record};
use crate::stats;

/// Bytes a load brings in: one cache line.
const LINE: f64 = 64.0;

fn record(cfg: &MlpConfig, c: &Curve, p: &Point, one: f64) -> Record {
    let ns = p.ns_per_access();
    let name = format!(
        "mlp {} x{} {}->{}",
        cfg.pattern, p.chases, c.cpu_node, c.mem_node
    );
    let rec = Record::new(probe::MLP, &name)
        .param(param::CPU_NODE, c.cpu_node)
        .param(param::MEM_NODE, c.mem_node)
        .param(param::CPU, c.cpu)
        .param(param::THREADS, 1)
        .param(ml::param::CHASES, p.chases)
        .param(param::SIZE_BYTES, cfg.size)
        .param(param::PAGES_ASKED, cfg.pages.to_string())
        .param(param::PAGE_SIZE, c.seen.page_kind.clone());
    let mut rec = with_pattern(rec, &cfg.pattern, super::spacing(&cfg.pattern))
        .metric(ml::metric::NS_PER_ACCESS, ns, "ns", Better::Lower)
        .metric(
            ml::metric::CHASE_LATENCY_NS,
            ns * p.chases as f64,
            "ns",
            Better::Lower,
        )
        .metric(
            ml::metric::LINE_MB_S,
            LINE / ns * 1e3,
            "MB/s",
            Better::Higher,
        )
        .metric(
            metric::CV_PCT,
            stats::cv_pct(&p.samples),
            "%",
            Better::Lower,
        );
    // More misses in flight than chases cannot be: the chases then share
    // lines or pages (hits, not overlapped misses), so no figure is given.
    let in_flight = one / ns;
    if in_flight <= p.chases as f64 {
        rec = rec.metric(ml::metric::CONCURRENCY, in_flight, "", Better::Higher);
    } else {
        rec.notes.push(format!(
            "in flight not shown: 1 chase's time per access over {} chases' is {in_flight:.2}, \
             more than the chases: they share lines or pages (hits, not misses overlapped); \
             give a larger buffer or window",
            p.chases
        ));
    }
    rec.samples
        .insert(ml::metric::NS_PER_ACCESS.into(), p.samples.clone());
    rec.placement = Some(c.seen.placement());
    rec
}

/// Every point of every curve, each with the run's count of chase
/// buffers; the notes go on the first record.
pub(crate) fn records(cfg: &MlpConfig, m: &Measured) -> Vec<Record> {
    let mut out = Vec::new();
    for c in &m.curves {
        let Some(one) = c
            .points
            .iter()
            .find(|p| p.chases == 1)
            .map(Point::ns_per_access)
        else {
            continue;
        };
        let mut first = true;
        for p in &c.points {
            let mut rec =
                record(cfg, c, p, one).param(param::CHASE_BUFFERS_BUILT, m.buffers_built);
            if first {
                rec = rec.metric(metric::RUNTIME_S, c.elapsed_s, "s", Better::Lower);
                first = false;
            }
            out.push(rec);
        }
    }
    if let Some(first) = out.first_mut() {
        first.notes.extend(m.notes.iter().cloned());
        first.conditions.extend(m.conditions.iter().cloned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::pattern::Pattern;
    use crate::memory::PageKind;
    use crate::results::Condition;

    #[test]
    fn a_run_its_time_limit_stopped_says_so_as_data() {
        let cfg = MlpConfig {
            selection: crate::probes::pairs::Selection::default(),
            only: None,
            size: 1 << 20,
            pattern: Pattern::FullRandom,
            pages: PageKind::Base,
            counts: vec![1, 2],
            pairs: super::super::Pairs::All,
            cpu_nodes: None,
            mem_nodes: None,
            time_limit: Some(std::time::Duration::ZERO),
        };
        let topo = crate::topology::fixture("two-node");
        let m = super::super::run(&topo, &cfg, &mut |_| {}).unwrap();
        assert!(m.curves.is_empty());
        assert_eq!(
            m.notes,
            ["stopped (time limit reached): 0 of 4 node pairs measured"]
        );
        assert_eq!(m.conditions, [Condition::CutByTimeLimit { limit_s: 0.0 }]);
    }

    #[test]
    fn concurrency_is_idle_latency_over_ns_per_access() {
        let cfg = MlpConfig {
            selection: crate::probes::pairs::Selection::default(),
            only: None,
            size: 1 << 30,
            pattern: Pattern::PageLocal { window: 256 << 10 },
            pages: PageKind::Thp,
            counts: vec![1, 4],
            pairs: super::super::Pairs::All,
            cpu_nodes: None,
            mem_nodes: None,
            time_limit: None,
        };
        let point = |chases, ns| Point {
            chases,
            samples: vec![ns, ns],
        };
        let m = Measured {
            curves: vec![Curve {
                cpu_node: 0,
                mem_node: 1,
                cpu: 0,
                points: vec![point(1, 100.0), point(4, 40.0)],
                seen: Default::default(),
                elapsed_s: 1.0,
            }],
            notes: vec!["n".into()],
            conditions: vec![Condition::CutByTimeLimit { limit_s: 3.0 }],
            failed: None,
            buffers_built: 1,
        };
        let r = records(&cfg, &m);
        assert_eq!(r[0].cut_by_time_limit(), Some(3.0));
        assert!(r[1].conditions.is_empty());
        assert_eq!(r.len(), 2);
        let get = |i: usize, k: &str| r[i].metrics[k].value;
        assert_eq!(get(0, ml::metric::CONCURRENCY), 1.0);
        assert_eq!(get(1, ml::metric::CONCURRENCY), 2.5);
        assert_eq!(get(1, ml::metric::CHASE_LATENCY_NS), 160.0);
        assert_eq!(get(1, ml::metric::LINE_MB_S), 1600.0);
        assert_eq!(r[0].params[param::PATTERN], "page-local");
        assert_eq!(r[0].params[param::WINDOW_BYTES], 256 << 10);
        assert_eq!(r[0].notes, vec!["n".to_string()]);
        // 100 / 20 = 5 in flight from 4 chases: not shown, said why.
        let mut more = m.clone();
        more.curves[0].points[1] = point(4, 20.0);
        let r = records(&cfg, &more);
        assert!(!r[1].metrics.contains_key(ml::metric::CONCURRENCY));
        assert!(
            r[1].notes[0].starts_with("in flight not shown"),
            "{:?}",
            r[1].notes
        );
        assert_eq!(r[1].metrics[ml::metric::NS_PER_ACCESS].value, 20.0);
    }

    #[test]
    fn a_buffer_needs_an_element_per_chase_and_a_window_each_page_local() {
        let mut cfg = MlpConfig {
            selection: crate::probes::pairs::Selection::default(),
            only: None,
            size: 1 << 20,
            pattern: Pattern::Stride { stride: 512 << 10 },
            pages: PageKind::Base,
            counts: vec![1, 2],
            pairs: super::super::Pairs::All,
            cpu_nodes: None,
            mem_nodes: None,
            time_limit: None,
        };
        assert!(super::super::check_elements(&cfg).is_ok());
        cfg.counts = vec![1, 16];
        let e = super::super::check_elements(&cfg).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
        assert!(e.to_string().contains("2 elements"), "{e}");
        // 1 MiB of 64 KiB windows: 16 windows, one per chase.
        cfg.pattern = Pattern::PageLocal { window: 64 << 10 };
        assert!(super::super::check_elements(&cfg).is_ok());
        cfg.pattern = Pattern::PageLocal { window: 128 << 10 };
        assert!(super::super::check_elements(&cfg).is_err());
    }
}
