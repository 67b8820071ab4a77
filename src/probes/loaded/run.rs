//! The run over the pairs: per memory node (and chase size) one chase
//! buffer, mapped and linked once ([`crate::probes::node_chase`]) and
//! chased by each CPU node's curve in turn, so only one memory node's
//! buffers are mapped at a time. The injectors' buffers stay per pair:
//! each injector maps and first-touches its own on its pinned thread, and
//! who injects (and how much each maps) depends on the CPU node.

use super::{Curve, Loaded, LoadedConfig, Plan, admit_plans, inject, pairs, plan};
use crate::memory::PageKind;
use crate::probes::node_chase::{Buffers, Link, Memory};
use crate::results::Condition;
use crate::topology::Topology;
use anyhow::Result;

/// Measures a curve per pair; stops between points on a signal and keeps
/// what was measured. Per memory node (and chase size) one chase buffer,
/// linked once and chased from each CPU node's pair in turn; the curves
/// come out in the order of [`pairs`].
pub(crate) fn run(
    topo: &Topology,
    cfg: &LoadedConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Loaded> {
    let plans = pairs(topo, cfg)?
        .into_iter()
        .map(|p| plan(topo, cfg, p))
        .collect::<Result<Vec<_>>>()?;
    admit_plans(topo, &plans)?;
    run_with(cfg, &plans, progress, &mut Memory, &mut |p, linked| {
        inject::measure(p, cfg, linked)
    })
}

/// [`run`] over `plans` with the buffers and the curve (of a pair, over a
/// linked chase buffer) given, so a test can count the builds.
fn run_with<B: Buffers>(
    cfg: &LoadedConfig,
    plans: &[Plan],
    progress: &mut dyn FnMut(&str),
    buffers: &mut B,
    measure: &mut impl for<'b> FnMut(&Plan, &mut B::Linked<'b>) -> Result<Curve>,
) -> Result<Loaded> {
    let groups = by_buffer(plans);
    let mut out = Loaded::default();
    let mut made: Vec<(usize, Curve)> = Vec::new();
    let started = std::time::Instant::now();
    let stopped = |out: &mut Loaded, made: usize| -> bool {
        if crate::interrupt::requested().is_some() {
            return true;
        }
        if let Some(t) = cfg.time_limit.filter(|&t| started.elapsed() >= t) {
            out.timed_out = true;
            out.notes.push(format!(
                "time limit reached: {made} of {} pair(s) measured",
                plans.len()
            ));
            out.conditions.push(Condition::time_limit(t));
            return true;
        }
        false
    };
    let keep_or_fail = |out: &mut Loaded, e: anyhow::Error, made: usize| -> Result<()> {
        if made == 0 {
            return Err(e);
        }
        out.failed = Some(format!("{e:#}"));
        Ok(())
    };
    'all: for group in &groups {
        let first = group[0].1;
        if stopped(&mut out, made.len()) {
            break;
        }
        progress(&format!(
            "mem node {}: mapping and linking the chase buffer",
            first.mem_node
        ));
        let built = buffers.build(
            first.chase_cpu,
            first.mem_node,
            first.chase_bytes,
            PageKind::Auto,
        );
        let mut built = match built {
            Ok(b) => b,
            Err(e) => {
                let e = e.context(format!("the chase buffer on node {}", first.mem_node));
                keep_or_fail(&mut out, e, made.len())?;
                break;
            }
        };
        out.buffers_built += 1;
        let how = Link::One {
            pattern: first.pattern,
            seed: inject::CHASE_SEED,
        };
        let mut linked = match buffers.link(&mut built, how) {
            Ok(l) => l,
            Err(e) => {
                let e = e.context(format!("the chase on node {}", first.mem_node));
                keep_or_fail(&mut out, e, made.len())?;
                break;
            }
        };
        for (i, &(at, p)) in group.iter().enumerate() {
            // The first pair was let through before the build.
            if i > 0 && stopped(&mut out, made.len()) {
                break 'all;
            }
            progress(&format!(
                "cpu node {} -> mem node {}: chase on CPU {}, {} injector(s)",
                p.cpu_node,
                p.mem_node,
                p.chase_cpu,
                p.injector_cpus.len()
            ));
            match measure(p, &mut linked) {
                Ok(curve) => made.push((at, curve)),
                Err(e) => {
                    keep_or_fail(&mut out, e, made.len())?;
                    break 'all;
                }
            }
        }
    }
    made.sort_by_key(|(at, _)| *at);
    out.curves = made.into_iter().map(|(_, curve)| curve).collect();
    if let Some(sig) = crate::interrupt::requested() {
        out.notes.push(format!(
            "interrupted by {}: {} of {} pair(s) measured, the last one possibly in part",
            crate::interrupt::name(sig),
            out.curves.len(),
            plans.len()
        ));
        out.conditions.push(Condition::CutBySignal { signal: sig });
    }
    Ok(out)
}

/// The plans of each chase buffer (memory node and size), each with its
/// place in `plans`, memory node by memory node in the order first met.
fn by_buffer(plans: &[Plan]) -> Vec<Vec<(usize, &Plan)>> {
    let mut groups: Vec<Vec<(usize, &Plan)>> = Vec::new();
    for (at, p) in plans.iter().enumerate() {
        let same = |g: &&mut Vec<(usize, &Plan)>| {
            g[0].1.mem_node == p.mem_node && g[0].1.chase_bytes == p.chase_bytes
        };
        match groups.iter_mut().find(same) {
            Some(g) => g.push((at, p)),
            None => groups.push(vec![(at, p)]),
        }
    }
    groups.sort_by_key(|g| {
        plans
            .iter()
            .position(|p| p.mem_node == g[0].1.mem_node)
            .unwrap_or(0)
    });
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::measure::Seen;
    use crate::probes::loaded::Mix;
    use crate::topology::fixture;

    fn curve_of(p: &Plan) -> Curve {
        Curve {
            plan: p.clone(),
            mix: Mix::Read,
            kernel: "read_portable",
            ns_per_spin: 1.0,
            points: Vec::new(),
            chase_seen: Seen::default(),
            injector_seen: Seen::default(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn each_memory_node_builds_one_chase_buffer_for_every_cpu_nodes_curve() {
        use crate::probes::node_chase::{Counted, Fake};
        let t = fixture("amd-4node");
        let cfg = LoadedConfig {
            chase_bytes: Some(8 << 20),
            injector_bytes: Some(4 << 20),
            ..Default::default()
        };
        let plans: Vec<Plan> = pairs(&t, &cfg)
            .unwrap()
            .into_iter()
            .map(|p| plan(&t, &cfg, p).unwrap())
            .collect();
        let mut counted = Counted::default();
        let mut used = Vec::new();
        let out = run_with(&cfg, &plans, &mut |_| {}, &mut counted, &mut |p, on: &mut Fake| {
            assert_eq!(on.node, p.mem_node);
            used.push((on.build, p.cpu_node, p.mem_node));
            Ok(curve_of(p))
        })
        .unwrap();
        let mem_nodes: Vec<usize> = t.usable_memory_nodes().iter().collect();
        let cpu_nodes = t.usable_cpu_nodes().len();
        // One build per memory node, memory node outermost, by the chase
        // CPU of its first pair, on the pages the chase always asked.
        let built: Vec<(usize, usize, usize, PageKind)> = counted.builds.clone();
        assert_eq!(built.len(), mem_nodes.len());
        assert_eq!(out.buffers_built, mem_nodes.len());
        for (b, &m) in built.iter().zip(&mem_nodes) {
            assert_eq!((b.1, b.2, b.3), (m, 8 << 20, PageKind::Auto));
            assert_eq!(b.0, plans[0].chase_cpu);
        }
        assert_eq!(counted.links.len(), mem_nodes.len());
        // Every CPU node's pair chased its memory node's one buffer.
        for (i, &m) in mem_nodes.iter().enumerate() {
            let these: Vec<_> = used.iter().filter(|u| u.2 == m).collect();
            assert_eq!(these.len(), cpu_nodes);
            assert!(these.iter().all(|u| u.0 == i));
        }
        // The curves in the pairs' order.
        let got: Vec<(usize, usize)> = out
            .curves
            .iter()
            .map(|c| (c.plan.cpu_node, c.plan.mem_node))
            .collect();
        assert_eq!(got, pairs(&t, &cfg).unwrap());
        let recs = out.records();
        assert!(recs.iter().all(|r| {
            r.u64_param(crate::results::names::param::CHASE_BUFFERS_BUILT)
                == Some(mem_nodes.len() as u64)
        }));
    }

    #[test]
    fn a_limit_met_part_way_keeps_the_curves_before_it_in_order() {
        use crate::probes::node_chase::{Counted, Fake};
        let t = fixture("two-node");
        let cfg = LoadedConfig {
            chase_bytes: Some(8 << 20),
            injector_bytes: Some(4 << 20),
            injectors: Some(1),
            time_limit: Some(std::time::Duration::from_millis(5)),
            ..Default::default()
        };
        let plans: Vec<Plan> = pairs(&t, &cfg)
            .unwrap()
            .into_iter()
            .map(|p| plan(&t, &cfg, p).unwrap())
            .collect();
        let mut counted = Counted::default();
        let out = run_with(&cfg, &plans, &mut |_| {}, &mut counted, &mut |p, _: &mut Fake| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            Ok(curve_of(p))
        })
        .unwrap();
        // The first pair (0 -> 0), then the limit: node 1's buffer is never built.
        let got: Vec<_> = out
            .curves
            .iter()
            .map(|c| (c.plan.cpu_node, c.plan.mem_node))
            .collect();
        assert_eq!(got, [(0, 0)]);
        assert_eq!(counted.builds.len(), 1);
        assert!(out.timed_out);
        assert_eq!(out.notes, ["time limit reached: 1 of 4 pair(s) measured"]);
        // A failing build after a curve ends the run, keeping it.
        let cfg = LoadedConfig {
            time_limit: None,
            ..cfg
        };
        let mut failing = Counted {
            fail_build: Some(2),
            ..Default::default()
        };
        let out = run_with(&cfg, &plans, &mut |_| {}, &mut failing, &mut |p, _: &mut Fake| {
            Ok(curve_of(p))
        })
        .unwrap();
        assert_eq!(out.curves.len(), 2, "both CPU nodes on memory node 0");
        assert!(out.failed.unwrap().contains("mbind failed"));
    }
}
