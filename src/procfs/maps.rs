//! `/proc/PID/maps`: a process's mappings (VMAs) with their address
//! ranges, permissions and backing file, and nothing about their pages.
//!
//! Reading it costs a few microseconds per mapping whatever the mappings
//! hold, where `numa_maps` walks the page tables of every one of them.
//! Each line is `START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]`, for
//! example `7f2c80000000-7f2c80021000 rw-p 00000000 00:00 0`. The path may
//! contain spaces and is absent for plain anonymous memory; the kernel
//! names some mappings in brackets (`[heap]`, `[stack]`, `[vdso]`,
//! `[anon:NAME]` for anonymous memory named with `prctl`).

use super::lines::{parse_lines, read_parsed};
use std::io;

/// One line of `maps`: one mapping.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Vma {
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    pub read: bool,
    pub write: bool,
    pub exec: bool,
    /// `s`: shared (`MAP_SHARED`, including shared anonymous memory);
    /// otherwise `p`, private.
    pub shared: bool,
    /// Offset into the file, in bytes.
    pub offset: u64,
    pub inode: u64,
    /// The file or the kernel's name for the mapping, as written (deleted
    /// files end in ` (deleted)`); `None` for unnamed anonymous memory.
    pub path: Option<String>,
}

impl Vma {
    pub(crate) fn len(&self) -> u64 {
        self.end - self.start
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.end == self.start
    }

    /// Private memory with no file behind it: unnamed, or named by the
    /// kernel (`[heap]`, `[stack]`, `[anon:NAME]`). Shared anonymous memory
    /// and hugetlb memory have a stand-in file (`/dev/zero (deleted)`,
    /// `/anon_hugepage (deleted)`) and so are not.
    pub(crate) fn is_private_anonymous(&self) -> bool {
        !self.shared && self.inode == 0 && self.path.as_deref().is_none_or(|p| p.starts_with('['))
    }

    /// The initial heap (`[heap]`).
    pub(crate) fn is_heap(&self) -> bool {
        self.path.as_deref() == Some("[heap]")
    }

    /// The main thread's stack (`[stack]`); other threads' stacks are
    /// unnamed anonymous memory.
    pub(crate) fn is_stack(&self) -> bool {
        self.path.as_deref() == Some("[stack]")
    }

    /// A mapping the kernel provides (`[vdso]`, `[vvar]`, `[vsyscall]`, ...)
    /// rather than memory the process asked for: a bracketed name other
    /// than the heap, the stack and named anonymous memory.
    pub(crate) fn is_special(&self) -> bool {
        self.path.as_deref().is_some_and(|p| {
            p.starts_with('[') && !p.starts_with("[anon:") && !self.is_heap() && !self.is_stack()
        })
    }

    /// No access at all (`---`): guard pages and reserved address space,
    /// which hold no pages unless they were written before being protected.
    pub(crate) fn is_inaccessible(&self) -> bool {
        !(self.read || self.write || self.exec)
    }
}

pub(crate) use super::lines::ParseError;

/// Parses the whole text of a `maps` file. Blank lines are skipped.
pub(crate) fn parse_maps(text: &str) -> Result<Vec<Vma>, ParseError> {
    parse_lines("maps", text, parse_line)
}

/// The next space-separated field and the rest after the spaces that end it.
fn field(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let end = s.find(' ').unwrap_or(s.len());
    (&s[..end], &s[end..])
}

fn hex(s: &str, what: &str) -> Result<u64, String> {
    u64::from_str_radix(s, 16).map_err(|_| format!("'{s}' is not a hexadecimal {what}"))
}

/// Parses one line of `maps` (also the first line of each `smaps` entry).
pub(crate) fn parse_line(line: &str) -> Result<Vma, String> {
    let (range, rest) = field(line);
    let (start, end) = range
        .split_once('-')
        .ok_or_else(|| format!("'{range}' is not an address range"))?;
    let (start, end) = (hex(start, "address")?, hex(end, "address")?);
    if end < start {
        return Err(format!("'{range}' ends before it starts"));
    }
    let (perms, rest) = field(rest);
    let p = perms.as_bytes();
    if p.len() != 4 || !matches!(p[3], b'p' | b's') {
        return Err(format!("'{perms}' are not permissions"));
    }
    let (offset, rest) = field(rest);
    let offset = hex(offset, "offset")?;
    let (dev, rest) = field(rest);
    if !dev.contains(':') {
        return Err(format!("'{dev}' is not a device"));
    }
    let (inode, rest) = field(rest);
    let inode = inode
        .parse::<u64>()
        .map_err(|_| format!("'{inode}' is not an inode number"))?;
    // The path is the rest of the line after the padding, spaces and all.
    let path = rest.trim_start();
    Ok(Vma {
        start,
        end,
        read: p[0] == b'r',
        write: p[1] == b'w',
        exec: p[2] == b'x',
        shared: p[3] == b's',
        offset,
        inode,
        path: (!path.is_empty()).then(|| path.to_string()),
    })
}

/// Reads and parses `/proc/<pid>/maps`; a malformed line is an
/// `InvalidData` error carrying the [`ParseError`] message.
pub(crate) fn read_maps(pid: u32) -> io::Result<Vec<Vma>> {
    read_parsed(&format!("/proc/{pid}/maps"), parse_maps)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0c0000000-55d0c0200000 r-xp 00000000 fd:01 1835042                    /usr/bin/numa bench
55d0c2000000-55d0c2028000 rw-p 00000000 00:00 0                          [heap]
7f0000000000-7f0040000000 rw-p 00000000 00:00 0 \n\
7f0040000000-7f0040001000 ---p 00000000 00:00 0 \n\
7f1000000000-7f1000400000 rw-s 00000000 00:10 4242                       /anon_hugepage (deleted)
7f2000000000-7f2000001000 rw-s 00000000 00:01 17                         /dev/zero (deleted)
7f3000000000-7f3000010000 rw-p 00000000 00:00 0                          [anon:arena]
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
";

    #[test]
    fn lines_parse_with_paths_permissions_and_names() {
        let v = parse_maps(MAPS).unwrap();
        assert_eq!(v.len(), 10);
        assert_eq!(v[0].path.as_deref(), Some("/usr/bin/numa bench"));
        assert!(v[0].read && v[0].exec && !v[0].write && !v[0].shared);
        assert_eq!(v[0].inode, 1835042);
        assert!(v[1].is_heap() && v[1].is_private_anonymous());
        assert_eq!(v[2].len(), 1 << 30);
        assert_eq!(v[2].path, None);
        assert!(v[2].is_private_anonymous() && !v[2].is_special());
        assert!(v[3].is_inaccessible() && v[3].is_private_anonymous());
        // Shared and hugetlb anonymous memory have stand-in files.
        assert!(v[4].shared && !v[4].is_private_anonymous());
        assert!(!v[5].is_private_anonymous());
        // Named anonymous memory is still anonymous and not special.
        assert!(v[6].is_private_anonymous() && !v[6].is_special());
        assert!(v[7].is_stack() && !v[7].is_special());
        assert!(v[8].is_special() && v[9].is_special());
        assert!(!v[0].is_private_anonymous());
    }

    #[test]
    fn malformed_lines_are_named() {
        let e = parse_maps("7f00-7e00 rw-p 0 00:00 0\n").unwrap_err();
        assert!(e.to_string().contains("ends before it starts"), "{e}");
        let e = parse_maps("\n7f00-7f10 rwxq 0 00:00 0\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("'rwxq' are not permissions"), "{e}");
        assert!(parse_maps("zz-7f10 rw-p 0 00:00 0").is_err());
        assert!(parse_maps("7f00-7f10 rw-p 0 00:00 x").is_err());
        assert!(parse_maps("7f00-7f10 rw-p 0 0000 0").is_err());
    }

    #[test]
    fn this_process_has_its_stack_and_its_vector() {
        let buf: Vec<u64> = vec![7; 1 << 20];
        let a = buf.as_ptr() as u64;
        let v = read_maps(std::process::id()).unwrap();
        assert!(v.iter().any(Vma::is_stack), "{v:?}");
        let m = v.iter().find(|m| m.start <= a && a < m.end).unwrap();
        assert!(m.is_private_anonymous() && m.read && m.write, "{m:?}");
        std::hint::black_box(&buf);
    }
}
