//! What a run will measure, before it measures anything (`run --plan`):
//! its steps in order, each in the run's own process or as a child
//! numabench with the command line it will be given on this topology.

use super::parts;
use crate::topology::Topology;
use crate::view::{Probe, Profile};

/// One step of a run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    /// The probe its records carry.
    pub probe: &'static str,
    /// The child's arguments after `numabench`; `None` for a step measured
    /// in the run's own process.
    pub command: Option<Vec<String>>,
}

/// The steps of a run of `profile` on `topo`, in the order they run.
pub(crate) fn steps(topo: &Topology, profile: Profile, registry: &[&dyn Probe]) -> Vec<Step> {
    parts::of(profile, registry)
        .iter()
        .map(|p| Step {
            probe: p.probe,
            command: p.part.in_process.is_none().then(|| (p.part.args)(topo)),
        })
        .collect()
}

/// The plan as printed: one line per step, numbered, with its command.
pub(crate) fn text(topo: &Topology, profile: Profile, registry: &[&dyn Probe]) -> String {
    let steps = steps(topo, profile, registry);
    let mut out = format!(
        "numabench run on {}: {} node(s) with memory, {} CPU(s); {} step(s), nothing measured yet\n",
        crate::text::escape(&topo.hostname),
        topo.usable_memory_nodes().len(),
        topo.allowed.cpus.len(),
        steps.len()
    );
    let width = steps.iter().map(|s| s.probe.len()).max().unwrap_or(0);
    for (i, s) in steps.iter().enumerate() {
        let how = match &s.command {
            None => "in the run's own process".to_string(),
            Some(args) => format!("numabench {}", crate::text::escape(&shell_words(args))),
        };
        out.push_str(&format!("  {:>2}  {:<width$}  {how}\n", i + 1, s.probe));
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
        let s = steps(&topo, Profile::Default, REGISTRY);
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
        let quick = steps(&topo, Profile::Quick, REGISTRY);
        assert_eq!(quick.len(), 1);
        let full = steps(&topo, Profile::Full, REGISTRY);
        assert_eq!(full.len(), s.len() + 3);
    }

    #[test]
    fn the_plan_text_names_every_step_and_quotes_odd_words() {
        let topo = crate::topology::fixture("two-node");
        let t = text(&topo, Profile::Default, REGISTRY);
        assert!(t.contains("7 step(s), nothing measured yet"), "{t}");
        assert!(t.contains("   1  matrix   in the run's own process"), "{t}");
        assert!(t.contains("numabench latency -s "), "{t}");
        assert_eq!(
            shell_words(&["a b".into(), "it's".into()]),
            r"'a b' 'it'\''s'"
        );
    }
}
