//! Reading files below a root directory, remembering what was read.
//!
//! The root is `/` on a live system and a captured tree otherwise (like
//! hwloc's `HWLOC_FSROOT`). Every path read or listed is recorded so that
//! `numabench gather` can archive exactly the files the reader depends on.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

/// Most a sysfs or procfs file may hold: `/proc/cpuinfo` of 8192 CPUs (some
/// 2 KiB each) fits; an endless file (`/dev/zero` linked in) does not fill
/// memory.
pub(super) const MAX_FILE_BYTES: u64 = 64 << 20;

/// Longest path under the root that is read: the kernel's `PATH_MAX`.
pub(super) const MAX_PATH_BYTES: usize = 4096;

/// Most components a path under the root may have; the deepest sysfs path
/// (a device behind PCIe switches) has a few dozen.
pub(super) const MAX_PATH_DEPTH: usize = 256;

/// Why a file under the root could not be used. Either way the file is bad
/// input, never a reason to wait or to guess.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// A FIFO, device, socket or directory where a file was expected:
    /// reading it could block forever or never end.
    #[error("{0} is not a regular file (a FIFO, device or directory)")]
    NotRegular(String),
    #[error("{0} holds more than {max} MiB", max = MAX_FILE_BYTES >> 20)]
    TooLarge(String),
    /// A symbolic link that leads back to itself: no kernel writes one, and
    /// taking it as an absent file would silently empty what it holds (a
    /// node's CPU list).
    #[error("{0} is a loop of symbolic links")]
    LinkLoop(String),
}

impl ReadError {
    /// What numabench reads instead, after the message.
    pub fn hint(&self) -> &'static str {
        match self {
            Self::LinkLoop(_) => "; a link in a captured tree must lead to a file or directory",
            _ => "; numabench reads only regular files from sysfs and procfs",
        }
    }
}

/// Environment variable naming a directory that holds `sys/` and `proc/`.
pub const ROOT_ENV: &str = "NUMABENCH_SYSFS_ROOT";

/// What the reader touched, relative to the root.
#[derive(Debug, Default, Clone)]
pub struct Accessed {
    /// Files whose contents were read.
    pub files: BTreeSet<String>,
    /// Directory entries whose existence alone carries meaning (HMAT
    /// initiator links); archived as empty directories.
    pub markers: BTreeSet<String>,
}

#[derive(Debug)]
pub struct SysfsRoot {
    root: PathBuf,
    accessed: RefCell<Accessed>,
    /// The root with links resolved, once known; `None` for the live system,
    /// whose files may lie anywhere.
    resolved_root: RefCell<Option<PathBuf>>,
    /// Paths already warned about, so a file read twice warns once.
    warned: RefCell<BTreeSet<String>>,
    /// Directories with links resolved, so that a tree of thousands of
    /// files costs one lstat per file, not a realpath.
    resolved_dirs: RefCell<std::collections::HashMap<PathBuf, Resolved>>,
    /// Resolved paths whose lstat showed a regular file: opening them needs
    /// no second look at their type first.
    regular: RefCell<std::collections::HashSet<PathBuf>>,
}

/// Where a path under the root leads.
enum Place {
    /// The path to open: inside the root (or anywhere on the live system).
    Inside(PathBuf),
    /// A link leads out of a captured tree, to this path.
    Outside(PathBuf),
    Missing,
    /// A link on the way loops.
    Loop,
}

/// What resolving a path under a captured root found.
#[derive(Debug, Clone)]
enum Resolved {
    At(PathBuf),
    Missing,
    Loop,
}

impl SysfsRoot {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            accessed: RefCell::default(),
            resolved_root: RefCell::default(),
            warned: RefCell::default(),
            resolved_dirs: RefCell::default(),
            regular: RefCell::default(),
        }
    }

    /// The live system.
    pub fn live() -> Self {
        Self::new("/")
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn is_live(&self) -> bool {
        self.root == Path::new("/")
    }

    /// Where `rel` leads. In a captured tree, links are resolved and a path
    /// that ends outside the root is reported as such: a planted
    /// `hostname -> /etc/shadow` must not show another file's contents.
    /// Links inside the tree (`node0/cpu0 -> ../../cpu/cpu0`) keep working.
    fn place(&self, rel: &str) -> Place {
        if rel.len() > MAX_PATH_BYTES || rel.split('/').count() > MAX_PATH_DEPTH {
            self.warn_too_long(rel);
            return Place::Missing;
        }
        let path = self.root.join(rel);
        if self.is_live() {
            return Place::Inside(path);
        }
        let Some(root) = self.resolved_root() else {
            return Place::Missing;
        };
        let real = match self.resolve(&path) {
            Resolved::At(real) => real,
            Resolved::Missing => return Place::Missing,
            Resolved::Loop => return Place::Loop,
        };
        if real.starts_with(&root) {
            Place::Inside(real)
        } else {
            Place::Outside(real)
        }
    }

    /// `path` with every link resolved, one lstat per component below the
    /// root, each directory resolved once (a realpath per file costs a
    /// readlink per component: tens of thousands on a big machine's tree).
    /// It walks up to the nearest known directory and back down in a loop:
    /// a path of thousands of components must not take a stack frame each.
    fn resolve(&self, path: &Path) -> Resolved {
        let mut below = Vec::new();
        let mut at = path;
        let mut found = loop {
            if at == self.root {
                break self.resolved_root().map_or(Resolved::Missing, Resolved::At);
            }
            if let Some(known) = self.resolved_dirs.borrow().get(at) {
                break known.clone();
            }
            match (at.parent(), at.file_name()) {
                (Some(dir), Some(name))
                    if name != ".." && name != "." && dir.starts_with(&self.root) =>
                {
                    below.push(at);
                    at = dir;
                }
                _ => {
                    let real = canonical(at);
                    self.resolved_dirs
                        .borrow_mut()
                        .insert(at.to_path_buf(), real.clone());
                    break real;
                }
            }
        };
        for p in below.into_iter().rev() {
            if let (Resolved::At(dir), Some(name)) = (&found, p.file_name()) {
                found = self.step(dir.join(name));
            }
            self.resolved_dirs
                .borrow_mut()
                .insert(p.to_path_buf(), found.clone());
        }
        found
    }

    /// Where `candidate`, in a directory already resolved, leads.
    fn step(&self, candidate: PathBuf) -> Resolved {
        match std::fs::symlink_metadata(&candidate) {
            Ok(m) if m.file_type().is_symlink() => canonical(&candidate),
            Ok(m) => {
                if m.is_file() {
                    self.regular.borrow_mut().insert(candidate.clone());
                }
                Resolved::At(candidate)
            }
            Err(_) => Resolved::Missing,
        }
    }

    fn resolved_root(&self) -> Option<PathBuf> {
        let mut slot = self.resolved_root.borrow_mut();
        if slot.is_none() {
            *slot = self.root.canonicalize().ok();
        }
        slot.clone()
    }

    /// One warning per path for a file or directory left unread because it
    /// leads out of the root.
    fn warn_outside(&self, rel: &str, real: &Path) {
        if self.warned.borrow_mut().insert(rel.to_string()) {
            crate::console::err(&format!(
                "numabench: warning: ignored {} under {}: it leads out of the root, to {}\n",
                crate::text::escape(rel),
                crate::text::escape(&self.root.display().to_string()),
                crate::text::escape(&real.display().to_string()),
            ));
        }
    }

    /// One warning per path too long or deep to be a kernel's file: such a
    /// path comes from a damaged or planted file (a cgroup path in
    /// `proc/self/cgroup`), and is taken as absent.
    fn warn_too_long(&self, rel: &str) {
        let start: String = rel.chars().take(60).collect();
        if self.warned.borrow_mut().insert(start.clone()) {
            crate::console::err(&format!(
                "numabench: warning: ignored {}...: a path of {} bytes and {} components \
                 is longer than {MAX_PATH_BYTES} bytes or deeper than {MAX_PATH_DEPTH}\n",
                crate::text::escape(&start),
                rel.len(),
                rel.split('/').count(),
            ));
        }
    }

    /// One warning per directory left unlisted because a link on the way
    /// leads back to itself.
    fn warn_loop(&self, rel: &str) {
        if self.warned.borrow_mut().insert(rel.to_string()) {
            crate::console::err(&format!(
                "numabench: warning: ignored {}: it is a loop of symbolic links\n",
                self.shown(rel)
            ));
        }
    }

    /// The file's contents, or `None` when it does not exist, cannot be read
    /// (sysfs files of absent features simply are not there) or leads out of
    /// a captured tree (with a warning). A FIFO, device or directory, or a
    /// file larger than `MAX_FILE_BYTES`, is an error: reading it could
    /// block forever or fill memory.
    pub fn read(&self, rel: &str) -> Result<Option<String>, ReadError> {
        let path = match self.place(rel) {
            Place::Inside(path) => path,
            Place::Outside(real) => {
                // A link to a device or FIFO is refused like one planted in
                // the tree; only its type is looked at (stat never blocks).
                if std::fs::metadata(&real).is_ok_and(|m| !m.is_file()) {
                    return Err(ReadError::NotRegular(self.shown(rel)));
                }
                self.warn_outside(rel, &real);
                return Ok(None);
            }
            Place::Missing => return Ok(None),
            Place::Loop => return Err(ReadError::LinkLoop(self.shown(rel))),
        };
        let known_regular = self.regular.borrow().contains(&path);
        match read_regular(&path, !self.is_live(), known_regular) {
            Ok(Some(bytes)) => {
                self.accessed.borrow_mut().files.insert(rel.to_string());
                Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
            }
            Ok(None) => Ok(None),
            Err(Refused::NotRegular) => Err(ReadError::NotRegular(self.shown(rel))),
            Err(Refused::TooLarge) => Err(ReadError::TooLarge(self.shown(rel))),
            Err(Refused::LinkLoop) => Err(ReadError::LinkLoop(self.shown(rel))),
        }
    }

    /// `rel` under the root, as an error message shows it.
    fn shown(&self, rel: &str) -> String {
        crate::text::escape(&self.root.join(rel).display().to_string()).into_owned()
    }

    /// The value without surrounding whitespace and the NUL bytes some
    /// kernels leave after the newline.
    pub fn read_trimmed(&self, rel: &str) -> Result<Option<String>, ReadError> {
        Ok(self.read(rel)?.map(|t| value_of(&t).to_string()))
    }

    /// True when `rel` exists; a loop of links on the way counts as there,
    /// so that reading it reports the loop.
    pub fn exists(&self, rel: &str) -> bool {
        match self.place(rel) {
            Place::Inside(p) => p.exists(),
            Place::Loop => true,
            Place::Outside(_) | Place::Missing => false,
        }
    }

    /// Names in a directory, sorted; empty when it does not exist or leads
    /// out of a captured tree (with a warning).
    pub fn list(&self, rel: &str) -> Vec<String> {
        let dir = match self.place(rel) {
            Place::Inside(path) => path,
            Place::Outside(real) => {
                self.warn_outside(rel, &real);
                return Vec::new();
            }
            Place::Missing => return Vec::new(),
            Place::Loop => {
                self.warn_loop(rel);
                return Vec::new();
            }
        };
        let mut names: Vec<String> = match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect(),
            Err(_) => Vec::new(),
        };
        names.sort();
        names
    }

    /// Records a path whose existence is information in itself.
    pub fn mark(&self, rel: &str) {
        self.accessed.borrow_mut().markers.insert(rel.to_string());
    }

    pub fn accessed(&self) -> Accessed {
        self.accessed.borrow().clone()
    }

    /// Checks that the root looks like a captured machine, so a wrong path
    /// gives a clear message instead of an empty topology.
    pub fn check(&self) -> io::Result<()> {
        if !self.root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is not a directory", self.root.display()),
            ));
        }
        if !self.exists("sys/devices/system/cpu") {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{} holds no sys/devices/system/cpu; expected a tree captured by 'numabench gather'",
                    self.root.display()
                ),
            ));
        }
        Ok(())
    }
}

enum Refused {
    NotRegular,
    TooLarge,
    LinkLoop,
}

/// `path` with its links resolved, telling a loop from a missing target.
fn canonical(path: &Path) -> Resolved {
    match path.canonicalize() {
        Ok(real) => Resolved::At(real),
        Err(e) if is_loop(&e) => Resolved::Loop,
        Err(_) => Resolved::Missing,
    }
}

fn is_loop(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

/// The bytes of a regular file; `None` when it cannot be opened or read.
/// The type is checked before opening, since opening a device can act
/// (`/dev/watchdog` arms a timer), and again on the open descriptor, so
/// nothing swapped in between is read; the open does not block, so a FIFO is
/// refused instead of waited on. `no_follow` refuses a link as the last
/// component: the path was resolved already, a link there now is a swap.
fn read_regular(
    path: &Path,
    no_follow: bool,
    known_regular: bool,
) -> Result<Option<Vec<u8>>, Refused> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // The type is looked at before opening (opening a device can act:
    // /dev/watchdog arms a timer), unless an lstat just did.
    if !known_regular {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(Refused::NotRegular),
            Err(e) if is_loop(&e) => return Err(Refused::LinkLoop),
            // Absent or unreadable, as sysfs files of absent features are.
            Err(_) => return Ok(None),
        }
    }
    let flags = libc::O_NONBLOCK | libc::O_NOCTTY | if no_follow { libc::O_NOFOLLOW } else { 0 };
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
    else {
        return Ok(None);
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(Refused::NotRegular),
        Err(_) => return Ok(None),
    }
    let mut data = Vec::new();
    if file
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut data)
        .is_err()
    {
        return Ok(None);
    }
    if data.len() as u64 > MAX_FILE_BYTES {
        return Err(Refused::TooLarge);
    }
    Ok(Some(data))
}

/// Numbers in names such as `node12` or `index3`, sorted by number.
pub(super) fn numbered(names: &[String], prefix: &str) -> Vec<usize> {
    let mut ids: Vec<usize> = names
        .iter()
        .filter_map(|n| n.strip_prefix(prefix)?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids
}

/// A sysfs value as the kernel meant it: surrounding whitespace and
/// trailing NUL bytes (older kernels, and a 5.15-rc one, write one after
/// the newline of `node/online`, `cpulist` and others) removed.
pub(super) fn value_of(text: &str) -> &str {
    text.trim_matches(|c: char| c == '\0' || c.is_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_paths_resolve_and_deeper_ones_are_absent() {
        let d = tempfile::tempdir().unwrap();
        let deep = vec!["a"; 200].join("/");
        std::fs::create_dir_all(d.path().join(&deep)).unwrap();
        std::fs::write(d.path().join(&deep).join("f"), "1\n").unwrap();
        let src = SysfsRoot::new(d.path());
        assert_eq!(
            src.read(&format!("{deep}/f")).unwrap().as_deref(),
            Some("1\n")
        );
        let deeper = vec!["a"; 10_000].join("/");
        assert_eq!(src.read(&format!("{deeper}/f")), Ok(None));
        assert!(!src.exists(&deeper));
        let long = "b".repeat(MAX_PATH_BYTES + 1);
        assert_eq!(src.read(&long), Ok(None));
    }
}
