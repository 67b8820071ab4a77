//! The `gather` job: archive exactly the files the topology reader used, so
//! a machine can be attached to a bug report and replayed with
//! `--sysfs-root` (like hwloc-gather-topology).

use anyhow::{Context, Result};
use std::path::Path;

/// Most a captured file may hold: /proc/cpuinfo of a few thousand CPUs
/// fits; a planted endless file does not fill memory.
const MAX_FILE_BYTES: u64 = 16 << 20;

/// The contents of `root/rel` when it is a regular file that, links
/// resolved, still lies under `root`: an archive for a bug report must
/// never carry a file from elsewhere (a planted `hostname -> /etc/shadow`).
fn read_inside(root: &Path, rel: &str) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let real = root.join(rel).canonicalize().map_err(|e| e.to_string())?;
    if !real.starts_with(root) {
        return Err(format!("it leads out of the root, to {}", real.display()));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&real)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mut data = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| e.to_string())?;
    if data.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("larger than {} MiB", MAX_FILE_BYTES >> 20));
    }
    Ok(data)
}

/// The accessed files as a gzip-compressed tar, paths relative to the root,
/// and how many files it holds.
/// Contents are read again and written with their real length: procfs and
/// sysfs report a size of 0 or 4096 whatever they hold.
pub(crate) fn archive(src: &crate::topology::SysfsRoot) -> Result<(Vec<u8>, usize)> {
    let accessed = src.accessed();
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mtime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let root = src
        .path()
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", src.path().display()))?;
    let mut files = 0;
    for rel in &accessed.files {
        let data = match read_inside(&root, rel) {
            Ok(data) => data,
            Err(why) => {
                eprintln!(
                    "numabench: warning: left {} out of the archive: {why}",
                    rel.escape_debug()
                );
                continue;
            }
        };
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(mtime);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, rel, data.as_slice())
            .with_context(|| format!("cannot archive {rel}"))?;
        files += 1;
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
    let bytes = gz.finish().context("cannot compress the archive")?;
    Ok((bytes, files))
}
