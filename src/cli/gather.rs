//! `numabench gather`: its arguments (see `jobs::gather` for the archive).

use super::RootArgs;
use crate::error::usage;
use crate::results::write_output;
use anyhow::Result;
use std::path::PathBuf;

/// Capture this machine's topology files into a .tar.gz.
///
/// Capture this machine's topology files into a .tar.gz for bug reports and
/// test fixtures; unpack it and pass the directory to --sysfs-root to replay.
#[derive(clap::Args, Debug)]
pub struct GatherArgs {
    /// Archive to write (gzip-compressed tar).
    #[arg(short, long, value_name = "FILE.tar.gz")]
    pub output: PathBuf,
    #[command(flatten)]
    pub root: RootArgs,
}

pub(super) fn run(args: GatherArgs) -> Result<()> {
    let name = args.output.to_string_lossy().to_string();
    if !(name.ends_with(".tar.gz") || name.ends_with(".tgz")) {
        return Err(usage(format!(
            "-o {name}: the archive name must end in .tar.gz or .tgz"
        )));
    }
    super::check_output_path(&args.output, "-o")?;
    let (src, _) = args.root.topology()?;
    let (bytes, files) = crate::jobs::gather::archive(&src)?;
    write_output(&args.output, &bytes)?;
    eprintln!(
        "numabench: wrote {} ({files} files); replay with: mkdir m && tar xzf {} -C m && numabench topo --sysfs-root m",
        args.output.display(),
        args.output.display()
    );
    Ok(())
}
