use super::RootArgs;
use crate::output::render::Format;
use anyhow::Result;

/// Show the machine's NUMA topology.
///
/// Show nodes, CPUs, memory, distances, caches, huge pages, THP, NUMA
/// balancing, cpuset limits, HMAT and accelerators.
///
/// `--json` prints the
/// full model; Markdown, LaTeX, HTML and CSV give its tables.
#[derive(clap::Args, Debug)]
pub struct TopoArgs {
    #[command(flatten)]
    pub root: RootArgs,
    #[command(flatten)]
    pub format: super::output::FormatArgs,
}

pub(super) fn run(args: TopoArgs) -> Result<()> {
    let (_, topo) = args.root.topology()?;
    let format = args.format.chosen().unwrap_or(Format::Text);
    crate::console::out(&crate::output::topo::render(&topo, format)?);
    Ok(())
}
