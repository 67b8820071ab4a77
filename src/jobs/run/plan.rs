//! What a run will measure, before it measures anything (`run --plan`,
//! and the estimate on run's first line): its steps in order, each in the
//! run's own process or as a child numabench with the command line it
//! will be given on this topology, with what each measures, the buffers it
//! builds, the memory it maps at once and its estimated time.

use super::parts;
use crate::topology::Topology;
use crate::units::bytes;
use crate::view::{PartPlan, Probe, Profile, Scope, Trim};

/// One step of a run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    /// The probe its records carry.
    pub probe: &'static str,
    /// The child's arguments after `numabench`; `None` for a step measured
    /// in the run's own process.
    pub command: Option<Vec<String>>,
    /// What it will do and how long that should take.
    pub plan: PartPlan,
}

/// The steps of a run of `scope` on `topo`, in the order they run.
pub(crate) fn steps(topo: &Topology, scope: Scope, registry: &[&dyn Probe]) -> Vec<Step> {
    parts::of(scope.profile, registry)
        .iter()
        .map(|p| Step {
            probe: p.probe,
            command: p
                .part
                .in_process
                .is_none()
                .then(|| (p.part.args)(topo, scope)),
            plan: (p.part.plan)(topo, scope),
        })
        .collect()
}

/// The run of `profile` that fits `budget_s` (none: as it is): the least
/// trim whose estimate is within it, with its steps; `Err` with the
/// smallest estimate where even the most trimmed run is over it.
pub(crate) fn fit(
    topo: &Topology,
    (profile, all_pairs): (Profile, bool),
    budget_s: Option<f64>,
    registry: &[&dyn Probe],
) -> Result<(Scope, Vec<Step>), f64> {
    let mut least = f64::INFINITY;
    for trim in Trim::LADDER {
        let scope = Scope {
            profile,
            trim,
            all_pairs,
        };
        let steps = steps(topo, scope, registry);
        let total = total_s(&steps);
        if budget_s.is_none_or(|b| total <= b) {
            return Ok((scope, steps));
        }
        least = least.min(total);
    }
    Err(least)
}

/// The estimated seconds of all of `steps`.
pub(crate) fn total_s(steps: &[Step]) -> f64 {
    steps.iter().map(|s| s.plan.seconds).sum()
}

/// Seconds as a person reads a duration: "45 s", "3 min 20 s", "2 h 5 min".
pub(crate) fn duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// The plan as printed: one block per step, numbered, with its command,
/// what it measures, its buffers and its estimate; then the total.
pub(crate) fn text(topo: &Topology, scope: Scope, steps: &[Step]) -> String {
    let total = total_s(steps);
    let mut out = format!(
        "numabench run on {}: {} node(s) with memory, {} CPU(s); {} step(s), about {} in all, nothing measured yet\n",
        crate::text::escape(&topo.hostname),
        topo.usable_memory_nodes().len(),
        topo.allowed.cpus.len(),
        steps.len(),
        duration(total)
    );
    if scope.trim != Trim::None {
        out.push_str(&format!(
            "  trimmed to fit the budget: {}\n",
            scope.trim.dropped()
        ));
    }
    let width = steps.iter().map(|s| s.probe.len()).max().unwrap_or(0);
    for (i, s) in steps.iter().enumerate() {
        let how = match &s.command {
            None => "in the run's own process".to_string(),
            Some(args) => format!("numabench {}", crate::text::escape(&shell_words(args))),
        };
        let share = if total > 0.0 {
            100.0 * s.plan.seconds / total
        } else {
            0.0
        };
        out.push_str(&format!(
            "  {:>2}  {:<width$}  ~{} ({share:.0}%)  {how}\n",
            i + 1,
            s.probe,
            duration(s.plan.seconds)
        ));
        out.push_str(&details(&s.plan, width + 6));
    }
    out.push_str(
        "The estimate is a model's (docs/run.md, \"How long a run takes\"); \
         each run's results keep it beside the seconds each part took.\n",
    );
    out
}

/// One command's plan as `--plan` prints it.
pub(crate) fn command_text(command: &str, topo: &Topology, p: &PartPlan) -> String {
    format!(
        "numabench {command} on {}: about {}, nothing measured yet\n{}",
        crate::text::escape(&topo.hostname),
        duration(p.seconds),
        details(p, 2)
    )
}

/// A plan's lines under its step: what it measures, its buffers, the
/// memory mapped at once and the cap on its time.
pub(crate) fn details(p: &PartPlan, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = format!("{pad}measures {}\n", crate::text::escape(&p.measures));
    if !p.buffers.is_empty() {
        let builds: Vec<String> = p
            .buffers
            .iter()
            .map(|b| {
                let size = if b.smallest == b.bytes {
                    bytes(b.bytes)
                } else {
                    format!("{}-{}", bytes(b.smallest), bytes(b.bytes))
                };
                format!("{} x {} of {size}", b.count, b.what)
            })
            .collect();
        out.push_str(&format!(
            "{pad}builds {}; at most {} mapped at once\n",
            builds.join(", "),
            bytes(p.mapped_at_once)
        ));
    }
    if let Some(cap) = &p.capped_by {
        out.push_str(&format!("{pad}the estimate stops at {cap}\n"));
    }
    out
}

/// `args` as one shell line, each word quoted where it needs it.
fn shell_words(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.,:/=+@%".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::REGISTRY;
    use crate::results::names::probe;

    #[test]
    fn the_plan_runs_the_matrix_first_and_the_sweep_after_the_chasing_parts() {
        let topo = crate::topology::fixture("amd-4node");
        let s = steps(&topo, Scope::of(Profile::Default), REGISTRY);
        let names: Vec<&str> = s.iter().map(|s| s.probe).collect();
        assert_eq!(
            names,
            [
                probe::MATRIX,
                probe::LATENCY,
                probe::MLP,
                probe::LOADED,
                probe::SWEEP,
                probe::C2C,
                probe::PEAK
            ]
        );
        assert!(s[0].command.is_none() && s[4].command.is_none());
        assert_eq!(s[1].command.as_ref().unwrap()[0], probe::LATENCY);
        let quick = steps(&topo, Scope::of(Profile::Quick), REGISTRY);
        assert_eq!(quick.len(), 1);
        let full = steps(&topo, Scope::of(Profile::Full), REGISTRY);
        assert_eq!(full.len(), s.len() + 3);
    }

    #[test]
    fn the_plan_text_names_every_step_and_quotes_odd_words() {
        let topo = crate::topology::fixture("two-node");
        let scope = Scope::of(Profile::Default);
        let t = text(&topo, scope, &steps(&topo, scope, REGISTRY));
        assert!(t.contains("7 step(s), about "), "{t}");
        assert!(t.contains("   1  matrix   ~"), "{t}");
        assert!(t.contains("in the run's own process"), "{t}");
        assert!(
            t.contains("measures 4 cell(s): 2 CPU node(s) x 2 memory node(s)"),
            "{t}"
        );
        assert_eq!(duration(59.4), "59 s");
        assert_eq!(duration(200.0), "3 min 20 s");
        assert_eq!(duration(7500.0), "2 h 5 min");
        assert!(t.contains("numabench latency -s "), "{t}");
        assert_eq!(
            shell_words(&["a b".into(), "it's".into()]),
            r"'a b' 'it'\''s'"
        );
    }

    #[test]
    fn a_budget_takes_the_least_trim_that_fits_or_is_refused_with_the_least_estimate() {
        let topo = crate::topology::fixture("big-16node");
        let full = total_s(&steps(&topo, Scope::of(Profile::Default), REGISTRY));
        let (scope, s) = fit(&topo, (Profile::Default, false), None, REGISTRY).unwrap();
        assert_eq!((scope.trim, total_s(&s)), (Trim::None, full));
        let (scope, _) = fit(&topo, (Profile::Default, false), Some(full + 1.0), REGISTRY).unwrap();
        assert_eq!(scope.trim, Trim::None);
        // Each level estimates no more than the one before it.
        let totals: Vec<f64> = Trim::LADDER
            .iter()
            .map(|&trim| {
                let scope = Scope {
                    profile: Profile::Default,
                    trim,
                    all_pairs: false,
                };
                total_s(&steps(&topo, scope, REGISTRY))
            })
            .collect();
        assert!(totals.windows(2).all(|w| w[1] <= w[0]), "{totals:?}");
        let least = totals[totals.len() - 1];
        assert!(least < totals[0], "{totals:?}");
        let (scope, s) = fit(
            &topo,
            (Profile::Default, false),
            Some(least + 0.5),
            REGISTRY,
        )
        .unwrap();
        assert!(scope.trim > Trim::None && total_s(&s) <= least + 0.5);
        assert_eq!(
            fit(&topo, (Profile::Default, false), Some(1.0), REGISTRY).unwrap_err(),
            least
        );
    }
}
