//! `numabench gather`: archive exactly the files the topology reader uses, so
//! a machine can be attached to a bug report and replayed with
//! `--sysfs-root` (like hwloc-gather-topology).

use super::RootArgs;
use crate::error::usage;
use crate::results::write_atomic;
use anyhow::{Context, Result};
use std::path::PathBuf;

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

pub fn run(args: GatherArgs) -> Result<()> {
    let name = args.output.to_string_lossy().to_string();
    if !(name.ends_with(".tar.gz") || name.ends_with(".tgz")) {
        return Err(usage(format!(
            "-o {name}: the archive name must end in .tar.gz or .tgz"
        )));
    }
    super::check_output_path(&args.output, "-o")?;
    let (src, _) = args.root.topology()?;
    let bytes = archive(&src)?;
    write_atomic(&args.output, &bytes)?;
    let accessed = src.accessed();
    eprintln!(
        "numabench: wrote {} ({} files); replay with: mkdir m && tar xzf {} -C m && numabench topo --sysfs-root m",
        args.output.display(),
        accessed.files.len(),
        args.output.display()
    );
    Ok(())
}

/// The accessed files as a gzip-compressed tar, paths relative to the root.
/// Contents are read again and written with their real length: procfs and
/// sysfs report a size of 0 or 4096 whatever they hold.
pub fn archive(src: &crate::topology::SysfsRoot) -> Result<Vec<u8>> {
    let accessed = src.accessed();
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mtime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for rel in &accessed.files {
        let Ok(data) = std::fs::read(src.path().join(rel)) else {
            continue;
        };
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(mtime);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, rel, data.as_slice())
            .with_context(|| format!("cannot archive {rel}"))?;
    }
    // Marker entries are links on a live system; keep them links so a
    // capture committed to git keeps them too (git drops empty directories).
    for rel in &accessed.markers {
        let mut header = tar::Header::new_gnu();
        header.set_size(0);
        header.set_mtime(mtime);
        match std::fs::read_link(src.path().join(rel)) {
            Ok(target) => {
                header.set_mode(0o777);
                header.set_entry_type(tar::EntryType::Symlink);
                tar.append_link(&mut header, rel, &target)
            }
            Err(_) => {
                header.set_mode(0o755);
                header.set_entry_type(tar::EntryType::Directory);
                tar.append_data(&mut header, format!("{rel}/"), std::io::empty())
            }
        }
        .with_context(|| format!("cannot archive {rel}"))?;
    }
    let gz = tar.into_inner().context("cannot finish the archive")?;
    gz.finish().context("cannot compress the archive")
}
