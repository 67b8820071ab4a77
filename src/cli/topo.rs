use super::RootArgs;
use anyhow::Result;
use std::io::Write;

/// Show nodes, CPUs, memory, distances, caches, huge pages, THP, NUMA
/// balancing, cpuset limits, HMAT and accelerators.
#[derive(clap::Args, Debug)]
pub struct TopoArgs {
    /// Print the full model as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub root: RootArgs,
}

pub fn run(args: TopoArgs) -> Result<()> {
    let (_, topo) = args.root.topology()?;
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&topo)?;
        s.push('\n');
        s
    } else {
        crate::output::topo_text::render(&topo)
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}
