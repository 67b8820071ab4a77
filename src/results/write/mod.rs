//! The one writer behind every output file.
//!
//! numabench is run as root in directories other people can write to, so a
//! write must never be turned against the system:
//!
//! - a regular file (or nothing) at the target is replaced atomically: the
//!   bytes go to a temporary file created `O_EXCL|O_NOFOLLOW` under an
//!   unpredictable name in the same directory, which is then renamed over
//!   the target, so a reader never sees half a file and a planted link at
//!   the temporary name is never followed;
//! - a character device or FIFO at the target is written through, never
//!   replaced (`--save /dev/null` leaves `/dev/null` a device); so are the
//!   standard streams named as `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` or
//!   `/proc/self/fd/N`, which go to the descriptor this process already has;
//! - a symbolic link at the target is followed only to a FIFO or to a
//!   terminal or null-like device; a link to a regular file, a directory or
//!   any other device is refused, as are block devices, sockets and
//!   directories.
//!
//! [`check_output`] applies these rules before any measurement starts and
//! opens the write-through targets then (a FIFO must already have a
//! reader); [`write_output`] writes at the end.

mod replace;
#[cfg(test)]
mod tests;

pub(crate) use replace::remove_temp_in_flight;

use crate::error::usage;
use anyhow::{Context, Result, bail};
use replace::{create_temp, replace};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What sits at an output path, and so how it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// Nothing yet: a new regular file.
    New,
    /// A regular file, replaced atomically; its permission bits are kept.
    Replace,
    /// A FIFO, a character device or a standard stream: written through.
    Through,
}

/// Write-through targets opened by [`check_output`], taken by
/// [`write_output`], so a FIFO's reader sees one writer from start to end.
static OPENED: Mutex<Vec<(PathBuf, File)>> = Mutex::new(Vec::new());

/// Checks `path` as the output of option `flag` before any work is done:
/// refuses what numabench will not write (exit 2, naming the path and what
/// is there) and opens a write-through target. Call it once per path.
pub(crate) fn check_output(path: &Path, flag: &str) -> Result<Target> {
    let shown = path.display();
    if let Some(fd) = standard_stream(path) {
        let file = dup_writable(fd).map_err(|why| usage(format!("{flag} {shown}: {why}")))?;
        remember(path, file);
        return Ok(Target::Through);
    }
    if path.as_os_str().is_empty() {
        return Err(usage(format!("{flag}: the file name is empty")));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            probe_directory(path, flag)?;
            return Ok(Target::New);
        }
        Err(e) => return Err(usage(format!("{flag} {shown}: {e}"))),
    };
    let kind = meta.file_type();
    if kind.is_file() {
        if let Some(why) = locked_file(path) {
            return Err(usage(format!(
                "{flag} {shown}: is {why}, so it cannot be replaced; clear the flag (chattr) or give another name"
            )));
        }
        probe_directory(path, flag)?;
        return Ok(Target::Replace);
    }
    if kind.is_symlink() {
        return check_link(path, flag);
    }
    if kind.is_fifo() || kind.is_char_device() {
        let file = open_through(path, kind.is_fifo())
            .map_err(|why| usage(format!("{flag} {shown}: {why}")))?;
        remember(path, file);
        return Ok(Target::Through);
    }
    Err(usage(format!(
        "{flag} {shown}: is {}; give the name of a regular file (it is replaced) or of a FIFO or character device (written through)",
        describe_file(&meta)
    )))
}

/// Whether `path`, a regular file, carries a flag that forbids replacing it
/// (only a rename at the end would find out, after the work).
fn locked_file(path: &Path) -> Option<&'static str> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    // From linux/fs.h; the libc crate does not carry them.
    const FS_IMMUTABLE_FL: libc::c_int = 0x10;
    const FS_APPEND_FL: libc::c_int = 0x20;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    let mut flags: libc::c_int = 0;
    // SAFETY: FS_IOC_GETFLAGS writes one int (the kernel's actual size for
    // this request, despite its declared long) into `flags`, which lives on
    // this frame; the descriptor stays open for the call.
    let ret = unsafe { libc::ioctl(file.as_raw_fd(), libc::FS_IOC_GETFLAGS, &mut flags) };
    if ret != 0 {
        return None;
    }
    if flags & FS_IMMUTABLE_FL != 0 {
        Some("immutable (chattr +i)")
    } else if flags & FS_APPEND_FL != 0 {
        Some("append-only (chattr +a)")
    } else {
        None
    }
}

/// Refuses an output path that is one of the files a command reads
/// (`report r.json -o r.json`): the output replaces its target, and the
/// results it was made from would be gone. Same file means same device and
/// inode, so another name for it (a hard link, `./r.json`) is caught too.
pub(crate) fn check_not_an_input(out: &Path, inputs: &[PathBuf], flag: &str) -> Result<()> {
    let Ok(target) = std::fs::metadata(out) else {
        return Ok(());
    };
    for input in inputs {
        if let Ok(m) = std::fs::metadata(input)
            && m.is_file()
            && (m.dev(), m.ino()) == (target.dev(), target.ino())
        {
            return Err(usage(format!(
                "{flag} {}: is the file {} this command reads, and writing would replace it; give another name",
                out.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// Checks a directory that outputs will be created in (`run --dir`,
/// `autonuma --out`): it must be a directory or not exist yet, with its
/// parent a directory this process can create files in.
pub(crate) fn check_output_dir(dir: &Path, flag: &str) -> Result<()> {
    let shown = dir.display();
    // A link to a directory is followed (results folders are often kept
    // elsewhere); one to nothing would fail only when the folder is made.
    if let Ok(link) = std::fs::read_link(dir)
        && std::fs::metadata(dir).is_err()
    {
        return Err(usage(format!(
            "{flag} {shown}: is a symbolic link to {}, which does not exist; give a directory",
            link.display()
        )));
    }
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => return probe_create(dir, &format!("{flag} {shown}")),
        Ok(m) => {
            return Err(usage(format!(
                "{flag} {shown}: is {}, not a directory",
                describe_file(&m)
            )));
        }
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(usage(format!("{flag} {shown}: {e}")));
        }
        Err(_) => {}
    }
    // One level is created, as `mkdir` would: a missing parent is more
    // often a typo than a wish for a new tree.
    probe_directory(dir, flag)
}

/// Writes `bytes` to `path` by the rules above: through an opened or
/// write-through target, else atomically into a regular file. On failure
/// no temporary file is left behind.
pub(crate) fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(mut file) = take_opened(path) {
        return file
            .write_all(bytes)
            .and_then(|()| file.flush())
            .with_context(|| format!("cannot write {}", path.display()));
    }
    match check_output(path, "output") {
        Ok(Target::Through) => {
            let mut file = take_opened(path).context("write-through target vanished")?;
            file.write_all(bytes)
                .and_then(|()| file.flush())
                .with_context(|| format!("cannot write {}", path.display()))
        }
        Ok(target) => replace(path, bytes, target),
        // Refused at write time means something changed since the check:
        // a run-time failure, not bad input.
        Err(e) => bail!("{}", crate::error::one_line(&e)),
    }
}

/// `/dev/stdout` and its aliases: the descriptor they name.
fn standard_stream(path: &Path) -> Option<i32> {
    let s = path.to_str()?;
    match s {
        "/dev/stdin" => return Some(0),
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let n = s
        .strip_prefix("/dev/fd/")
        .or_else(|| s.strip_prefix("/proc/self/fd/"))?;
    n.parse::<i32>().ok().filter(|&fd| fd >= 0)
}

/// A duplicate of descriptor `fd`, if it is open for writing.
fn dup_writable(fd: i32) -> std::result::Result<File, String> {
    // SAFETY: fcntl on any integer is safe; it fails with EBADF when `fd`
    // is not open.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(format!("descriptor {fd} is not open"));
    }
    if flags & libc::O_ACCMODE == libc::O_RDONLY {
        return Err(format!("descriptor {fd} is open for reading only"));
    }
    // SAFETY: as above; F_DUPFD_CLOEXEC returns a new descriptor we own.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if dup < 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    // SAFETY: `dup` is a fresh descriptor owned by nobody else.
    Ok(unsafe { File::from_raw_fd(dup) })
}

/// A symbolic link is followed only to a FIFO or a stream-like device.
fn check_link(path: &Path, flag: &str) -> Result<Target> {
    let shown = path.display();
    let to = std::fs::read_link(path)
        .map(|t| t.display().to_string())
        .unwrap_or_default();
    let meta = std::fs::metadata(path)
        .map_err(|e| usage(format!("{flag} {shown}: a symbolic link to {to} ({e})")))?;
    let kind = meta.file_type();
    let stream_device = kind.is_char_device() && is_stream_device(meta.rdev());
    if kind.is_fifo() || stream_device {
        let file = open_through(path, kind.is_fifo())
            .map_err(|why| usage(format!("{flag} {shown}: {why}")))?;
        remember(path, file);
        return Ok(Target::Through);
    }
    Err(usage(format!(
        "{flag} {shown}: is a symbolic link to {to} ({}); numabench follows links only to a FIFO or a terminal or null device; give the real path",
        describe_file(&meta)
    )))
}

/// Terminals and /dev/null, /dev/zero, /dev/full: devices a link may
/// lead to without the write reaching memory or a disk.
fn is_stream_device(rdev: u64) -> bool {
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    matches!((major, minor), (1, 3) | (1, 5) | (1, 7)) || matches!(major, 4 | 5 | 136..=143)
}

/// Opens a FIFO or character device for writing, never creating or
/// truncating it. A FIFO without a reader is refused rather than waited on.
fn open_through(path: &Path, fifo: bool) -> std::result::Result<File, String> {
    let mut flags = libc::O_NOCTTY;
    if fifo {
        flags |= libc::O_NONBLOCK;
    }
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| {
            match e.raw_os_error() {
                Some(libc::ENXIO) if fifo => {
                    "a FIFO with no reader; start the reader first".to_string()
                }
                // /dev/tty of a process without a controlling terminal.
                Some(libc::ENXIO) => {
                    "a device that is not there (no such terminal or unit)".to_string()
                }
                _ => e.to_string(),
            }
        })?;
    if fifo {
        // Blocking writes from here on: the reader sets the pace.
        // SAFETY: fcntl on a descriptor this File owns.
        unsafe {
            let fl = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(file.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

fn remember(path: &Path, file: File) {
    let mut opened = OPENED.lock().unwrap_or_else(|p| p.into_inner());
    opened.retain(|(p, _)| p != path);
    opened.push((path.to_path_buf(), file));
}

fn take_opened(path: &Path) -> Option<File> {
    let mut opened = OPENED.lock().unwrap_or_else(|p| p.into_inner());
    let i = opened.iter().position(|(p, _)| p == path)?;
    Some(opened.swap_remove(i).1)
}

fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The target's directory must exist and take a new file.
fn probe_directory(path: &Path, flag: &str) -> Result<()> {
    let dir = directory_of(path);
    let what = format!("{flag} {}", path.display());
    // /dev holds devices: a missing name there is a mistyped device, and a
    // regular file made in its place would hide the error (and fill a
    // tmpfs that is not meant for data).
    if std::fs::canonicalize(dir).is_ok_and(|d| d == Path::new("/dev")) {
        return Err(usage(format!(
            "{what}: no such device; numabench does not create files in /dev"
        )));
    }
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => probe_create(dir, &what),
        Ok(m) => Err(usage(format!(
            "{what}: {} is {}, not a directory",
            dir.display(),
            describe_file(&m)
        ))),
        Err(_) => Err(usage(format!(
            "{what}: directory {} does not exist",
            dir.display()
        ))),
    }
}

/// Creates and removes a temporary file in `dir`: the one sure test that
/// the rename at the end will be possible (read-only mounts, /proc, ...).
fn probe_create(dir: &Path, what: &str) -> Result<()> {
    // Dropped at once, the temporary file is removed.
    match create_temp(dir, "probe", 0o600) {
        Ok(_) => Ok(()),
        Err(e) => Err(usage(format!(
            "{what}: cannot create files in {}: {e}",
            dir.display()
        ))),
    }
}

/// "a directory", "a block device", ...: what an output path holds.
pub(crate) fn describe_file(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}
