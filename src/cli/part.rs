//! `numabench part PROBE ARGS...`: one probe's part of `run`, for a probe
//! without a command of its own (see `Probe::measure_part`). Hidden: run
//! starts it as a child and reads the results document it prints.

use crate::error::usage;
use crate::probes::REGISTRY;
use crate::results::Document;
use crate::topology::{SysfsRoot, read_topology};
use anyhow::Result;

/// Measure one probe's part of `numabench run` and print its results
/// document (JSON) on stdout.
#[derive(clap::Args, Debug)]
pub struct PartArgs {
    /// The probe, as its records name it.
    #[arg(value_name = "PROBE")]
    pub probe: String,
    /// The part's own arguments, as its `run` part gives them.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
}

pub(super) fn run(a: PartArgs) -> Result<()> {
    let Some(probe) = REGISTRY.iter().find(|p| p.probe() == a.probe) else {
        let known: Vec<&str> = REGISTRY.iter().map(|p| p.probe()).collect();
        return Err(usage(format!(
            "no probe '{}' (probes: {})",
            crate::text::escape(&a.probe),
            known.join(", ")
        )));
    };
    let topo = read_topology(&SysfsRoot::live())?;
    let Some(measured) = probe.measure_part(&topo, &a.args) else {
        return Err(usage(format!(
            "{0} has a command of its own: run 'numabench {0}'",
            a.probe
        )));
    };
    let mut doc = Document::new(&topo);
    doc.records = measured?;
    match crate::interrupt::requested() {
        None => doc.finish(),
        Some(sig) => super::mark_interrupted(&mut doc, probe.probe(), sig),
    }
    super::output::emit(&doc, crate::output::render::Format::Json)?;
    if let Some(sig) = crate::interrupt::requested() {
        super::exit_interrupted(sig);
    }
    Ok(())
}
