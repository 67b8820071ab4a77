//! Reading files below a root directory, remembering what was read.
//!
//! The root is `/` on a live system and a captured tree otherwise (like
//! hwloc's `HWLOC_FSROOT`). Every path read or listed is recorded so that
//! `numabench gather` can archive exactly the files the reader depends on.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

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
}

impl SysfsRoot {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            accessed: RefCell::default(),
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

    /// The file's contents, or `None` when it does not exist or cannot be read
    /// (sysfs files of absent features simply are not there).
    pub fn read(&self, rel: &str) -> Option<String> {
        match std::fs::read_to_string(self.root.join(rel)) {
            Ok(text) => {
                self.accessed.borrow_mut().files.insert(rel.to_string());
                Some(text)
            }
            Err(_) => None,
        }
    }

    /// The trimmed contents.
    pub fn read_trimmed(&self, rel: &str) -> Option<String> {
        self.read(rel).map(|t| t.trim().to_string())
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.root.join(rel).exists()
    }

    /// Names in a directory, sorted; empty when it does not exist.
    pub fn list(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = match std::fs::read_dir(self.root.join(rel)) {
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

/// Numbers in names such as `node12` or `index3`, sorted by number.
pub fn numbered(names: &[String], prefix: &str) -> Vec<usize> {
    let mut ids: Vec<usize> = names
        .iter()
        .filter_map(|n| n.strip_prefix(prefix)?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids
}
