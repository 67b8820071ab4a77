//! Atomic replacement of a regular file: a temporary file beside the
//! target, then a rename over it.
//!
//! The temporary file is made by the `tempfile` crate in the target's own
//! directory (a rename never crosses file systems) under an unpredictable
//! name: 16 random letters and digits, with the generator reseeded from the
//! kernel's random source after a few taken names. It is opened here
//! `O_CREAT|O_EXCL|O_NOFOLLOW`, so a file or link planted at that name
//! makes the open fail (another name is drawn) and is never written
//! through.

use super::{Target, describe_file, directory_of};
use anyhow::{Context, Result, bail};
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering};
use tempfile::NamedTempFile;

/// The temporary file being written, if any, for [`remove_temp_in_flight`].
static IN_FLIGHT: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Removes the temporary file being written, if any. Async-signal-safe (an
/// atomic swap and unlink(2)), so a handler that ends the process at once
/// can call it.
pub(crate) fn remove_temp_in_flight() {
    let p = IN_FLIGHT.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: `p` came from CString::into_raw in `replace` and is only
        // read here; it is leaked, never freed, once swapped out.
        unsafe { libc::unlink(p) };
    }
}

/// A new file `.NAME.RANDOM.tmp` in `dir`, removed when dropped unless
/// kept.
pub(super) fn create_temp(dir: &Path, name: &str, mode: u32) -> std::io::Result<NamedTempFile> {
    // Keep the whole name under NAME_MAX (255 bytes).
    let mut short: String = name.chars().take(200).collect();
    while short.len() > 200 {
        short.pop();
    }
    tempfile::Builder::new()
        .prefix(&format!(".{short}."))
        .suffix(".tmp")
        .rand_bytes(16)
        .make_in(dir, |path| open_new(path, mode))
}

/// Creates `path`, failing if anything (a link included) is there.
pub(super) fn open_new(path: &Path, mode: u32) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Writes a temporary file and renames it over `path`.
pub(super) fn replace(path: &Path, bytes: &[u8], target: Target) -> Result<()> {
    let dir = directory_of(path);
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let mode = match target {
        Target::Replace => {
            std::fs::symlink_metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o777)
        }
        _ => 0o644,
    };
    let mut tmp = create_temp(dir, &name.to_string_lossy(), mode)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    if let Ok(c) = CString::new(tmp.path().as_os_str().as_bytes()) {
        IN_FLIGHT.store(c.into_raw(), Ordering::SeqCst);
    }
    let result = fill_and_rename(&mut tmp, path, bytes, mode, target);
    let p = IN_FLIGHT.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: `p` came from CString::into_raw above and was not freed.
        drop(unsafe { CString::from_raw(p) });
    }
    // Renamed, the name is the target's now: nothing to remove. Otherwise
    // dropping `tmp` removes the temporary file.
    if result.is_ok() {
        tmp.disable_cleanup(true);
    }
    result
}

fn fill_and_rename(
    tmp: &mut NamedTempFile,
    path: &Path,
    bytes: &[u8],
    mode: u32,
    target: Target,
) -> Result<()> {
    let file = tmp.as_file_mut();
    // The umask may have narrowed the mode asked for at creation.
    let _ = file.set_permissions(std::fs::Permissions::from_mode(mode));
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", tmp.path().display()))?;
    rename_into_place(tmp.path(), path, target)
}

/// Renames `tmp` to `path`; a new file never replaces something that
/// appeared meanwhile, and a replaced one must still be a regular file.
fn rename_into_place(tmp: &Path, path: &Path, target: Target) -> Result<()> {
    let fail = |e: std::io::Error| {
        anyhow::Error::new(e).context(format!(
            "cannot rename a temporary file to {}",
            path.display()
        ))
    };
    if target == Target::New {
        match rename_noreplace(tmp, path) {
            Ok(()) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            Err(e) => return Err(fail(e)),
        }
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => bail!(
            "{} changed while numabench ran: it is now {}; nothing written there",
            path.display(),
            describe_file(&m)
        ),
        _ => std::fs::rename(tmp, path).map_err(fail),
    }
}

/// renameat2(RENAME_NOREPLACE): EEXIST if `to` exists, EINVAL where the
/// file system cannot do it.
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
    };
    let (f, t) = (c(from)?, c(to)?);
    // SAFETY: both strings are NUL-terminated and outlive the call.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
