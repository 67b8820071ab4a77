//! `/proc/PID/numa_maps`: the policy and per-node page counts of every
//! mapping of a process.
//!
//! Each line is `START POLICY [key[=value]]...`, for example
//! `7f2c80000000 bind:1 anon=262144 dirty=262144 N1=262144 kernelpagesize_kB=4`.
//! Two policy names contain a space (`prefer (many):0-1`, `weighted
//! interleave:0-3`), and file paths escape spaces as `\040`. Keys this
//! parser does not know are skipped, so newer kernels still parse.

use super::lines::{parse_lines, read_parsed};
use std::collections::BTreeMap;
use std::io;

/// One line of `numa_maps`: one mapping (VMA).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NumaMapping {
    /// Start address of the mapping.
    pub addr: u64,
    /// The policy as the kernel writes it, e.g. `default`, `bind:1`,
    /// `interleave:0-1`, `prefer:1`, `prefer (many):0-1`, `bind=static:0`.
    pub policy: String,
    /// The mapped file, unescaped.
    pub file: Option<String>,
    /// Anonymous memory: no file (heap, stack, private mmap), or the kernel's
    /// stand-in files for shared anonymous memory (`/dev/zero (deleted)`)
    /// and hugetlb anonymous memory (`/anon_hugepage (deleted)`).
    pub anon: bool,
    /// A hugetlb mapping (`huge`).
    pub huge: bool,
    /// The process heap (`heap`).
    pub heap: bool,
    /// A stack (`stack`).
    pub stack: bool,
    /// Anonymous pages (`anon=`), including copy-on-write pages of a file
    /// mapping.
    pub anon_pages: u64,
    /// `dirty=`.
    pub dirty_pages: u64,
    /// `mapped=`: file pages mapped.
    pub mapped_pages: u64,
    /// `swapcache=`.
    pub swapcache_pages: u64,
    /// `active=`.
    pub active_pages: u64,
    /// `writeback=`.
    pub writeback_pages: u64,
    /// `mapmax=`: the most processes mapping any one page.
    pub mapmax: u64,
    /// Pages per node (`N<node>=<pages>`).
    pub pages_by_node: BTreeMap<usize, u64>,
    /// `kernelpagesize_kB=`; 0 when the line has no pages and so no size.
    pub page_size_kb: u64,
}

impl NumaMapping {
    /// Pages present on any node.
    pub(crate) fn pages(&self) -> u64 {
        self.pages_by_node.values().sum()
    }

    /// Bytes present per node.
    pub(crate) fn bytes_by_node(&self) -> BTreeMap<usize, u64> {
        self.pages_by_node
            .iter()
            .map(|(&n, &p)| (n, p.saturating_mul(self.page_size_kb).saturating_mul(1024)))
            .collect()
    }

    /// The nodes named in the policy (`bind:0-1` gives 0-1); empty for
    /// `default` and `local`, or if the node list does not parse.
    #[cfg(test)]
    pub(crate) fn policy_nodes(&self) -> crate::ids::NodeSet {
        self.policy
            .rsplit_once(':')
            .and_then(|(_, list)| crate::ids::NodeSet::parse_list(list).ok())
            .unwrap_or_default()
    }
}

pub(crate) use super::lines::ParseError;

/// Policy names that contain a space, so they span two tokens.
const SPACED_POLICIES: [&str; 2] = ["prefer (many)", "weighted interleave"];

/// Parses the whole text of a `numa_maps` file. Blank lines are skipped.
pub(crate) fn parse_numa_maps(text: &str) -> Result<Vec<NumaMapping>, ParseError> {
    parse_lines("numa_maps", text, parse_line)
}

fn parse_line(line: &str) -> Result<NumaMapping, String> {
    let line = line.trim();
    let (addr, rest) = line.split_once(' ').unwrap_or((line, ""));
    let addr = u64::from_str_radix(addr, 16)
        .map_err(|_| format!("'{addr}' is not a hexadecimal address"))?;
    let rest = rest.trim_start();
    let policy_len = SPACED_POLICIES
        .iter()
        .find(|p| rest.starts_with(*p))
        .map_or(0, |p| p.len());
    let policy_end = rest[policy_len..]
        .find(' ')
        .map_or(rest.len(), |i| i + policy_len);
    let (policy, rest) = rest.split_at(policy_end);
    if policy.is_empty() {
        return Err("no policy after the address".into());
    }
    let mut m = NumaMapping {
        addr,
        policy: policy.to_string(),
        ..Default::default()
    };
    for token in rest.split_ascii_whitespace() {
        let (key, value) = match token.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (token, None),
        };
        let number = || -> Result<u64, String> {
            let v = value.ok_or_else(|| format!("'{key}' has no value"))?;
            v.parse::<u64>()
                .map_err(|_| format!("'{key}={v}' is not a count"))
        };
        match key {
            "file" => m.file = value.map(unescape),
            "huge" => m.huge = true,
            "heap" => m.heap = true,
            "stack" => m.stack = true,
            "anon" => m.anon_pages = number()?,
            "dirty" => m.dirty_pages = number()?,
            "mapped" => m.mapped_pages = number()?,
            "swapcache" => m.swapcache_pages = number()?,
            "active" => m.active_pages = number()?,
            "writeback" => m.writeback_pages = number()?,
            "mapmax" => m.mapmax = number()?,
            "kernelpagesize_kB" => m.page_size_kb = number()?,
            _ => {
                if let Some(node) = key.strip_prefix('N')
                    && !node.is_empty()
                    && node.bytes().all(|b| b.is_ascii_digit())
                {
                    let node: usize = node
                        .parse()
                        .ok()
                        .filter(|&n| n < crate::ids::MAX_ID)
                        .ok_or_else(|| format!("'{key}' is not a node number"))?;
                    let pages = number()?;
                    let slot = m.pages_by_node.entry(node).or_insert(0);
                    *slot = slot.saturating_add(pages);
                }
                // Anything else is a key from a newer kernel.
            }
        }
    }
    m.anon = match &m.file {
        None => true,
        Some(f) => f.starts_with("/dev/zero") || f.starts_with("/anon_hugepage"),
    };
    Ok(m)
}

/// Undoes the kernel's octal escapes (`\040` for a space, `\012` for a
/// newline) in a path; anything else is kept as written.
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && let Some(oct) = bytes.get(i + 1..i + 4)
            && oct.iter().all(|b| (b'0'..=b'7').contains(b))
        {
            let v = oct
                .iter()
                .fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
            if let Ok(byte) = u8::try_from(v) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads and parses `/proc/<pid>/numa_maps`; a malformed line is an
/// `InvalidData` error carrying the [`ParseError`] message.
pub(crate) fn read_numa_maps(pid: u32) -> io::Result<Vec<NumaMapping>> {
    read_path(&format!("/proc/{pid}/numa_maps"))
}

/// Reads and parses `/proc/self/numa_maps`.
#[cfg(test)]
pub(crate) fn read_self_numa_maps() -> io::Result<Vec<NumaMapping>> {
    read_path("/proc/self/numa_maps")
}

fn read_path(path: &str) -> io::Result<Vec<NumaMapping>> {
    read_parsed(path, parse_numa_maps)
}

/// Bytes present per node over all `mappings` (pages × page size).
pub(crate) fn bytes_by_node(mappings: &[NumaMapping]) -> BTreeMap<usize, u64> {
    let mut total = BTreeMap::new();
    for m in mappings {
        for (node, bytes) in m.bytes_by_node() {
            let slot = total.entry(node).or_insert(0u64);
            *slot = slot.saturating_add(bytes);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::NodeSet;
    use proptest::prelude::*;

    const SAMPLE: &str = "\
7f2c80000000 bind:1 anon=262144 dirty=262144 N1=262144 kernelpagesize_kB=4
55d1 default file=/usr/bin/cat mapped=5 N0=5 kernelpagesize_kB=4
7f2d00000000 interleave:0-1 anon=10 dirty=10 N0=5 N1=5 huge kernelpagesize_kB=2048
7ffd1000 default stack anon=3 dirty=3 active=0 N0=3 kernelpagesize_kB=4
55d2000 default heap anon=40 dirty=40 N0=40 kernelpagesize_kB=4

7f00 prefer (many):0-1 anon=2 dirty=2 N1=2 kernelpagesize_kB=4
7f01 weighted interleave:0-3 anon=4 N0=1 N1=1 N2=1 N3=1 kernelpagesize_kB=4
7f02 default file=/tmp/a\\040b.bin mapped=1 mapmax=3 swapcache=0 writeback=0 N0=1 kernelpagesize_kB=4 futurekey=7 flag
7f03 default
7f04 bind:0 file=/anon_hugepage\\040(deleted) huge anon=4 dirty=4 N0=4 kernelpagesize_kB=2048
7f05 default file=/dev/zero\\040(deleted) dirty=1024 active=0 N0=1024 kernelpagesize_kB=4
";

    #[test]
    fn parses_each_kind_of_line() {
        let maps = parse_numa_maps(SAMPLE).unwrap();
        assert_eq!(maps.len(), 11);

        let bound = &maps[0];
        assert_eq!(bound.addr, 0x7f2c_8000_0000);
        assert_eq!(bound.policy, "bind:1");
        assert!(bound.anon && !bound.huge && !bound.heap && !bound.stack);
        assert_eq!(bound.anon_pages, 262_144);
        assert_eq!(bound.dirty_pages, 262_144);
        assert_eq!(bound.pages_by_node, BTreeMap::from([(1, 262_144)]));
        assert_eq!(bound.bytes_by_node(), BTreeMap::from([(1, 1 << 30)]));
        assert_eq!(bound.policy_nodes().to_list(), "1");

        let cat = &maps[1];
        assert_eq!(cat.file.as_deref(), Some("/usr/bin/cat"));
        assert!(!cat.anon);
        assert_eq!(cat.mapped_pages, 5);

        let huge = &maps[2];
        assert!(huge.huge);
        assert_eq!(huge.page_size_kb, 2048);
        assert_eq!(huge.policy_nodes().to_list(), "0-1");

        assert!(maps[3].stack && maps[3].active_pages == 0);
        assert!(maps[4].heap);
        assert_eq!(maps[5].policy, "prefer (many):0-1");
        assert_eq!(maps[5].pages_by_node, BTreeMap::from([(1, 2)]));
        assert_eq!(maps[6].policy, "weighted interleave:0-3");
        assert_eq!(maps[6].pages(), 4);
        assert_eq!(maps[7].file.as_deref(), Some("/tmp/a b.bin"));
        assert_eq!(maps[7].mapmax, 3);
        assert_eq!(maps[8].policy, "default");
        assert_eq!(maps[8].pages(), 0);
        assert_eq!(maps[8].page_size_kb, 0);
        assert!(maps[9].anon && maps[9].huge);
        assert_eq!(maps[9].file.as_deref(), Some("/anon_hugepage (deleted)"));
        assert!(maps[10].anon);
        assert_eq!(maps[10].file.as_deref(), Some("/dev/zero (deleted)"));
    }

    #[test]
    fn sums_bytes_per_node() {
        let maps = parse_numa_maps(SAMPLE).unwrap();
        let total = bytes_by_node(&maps);
        let kib = 1024;
        assert_eq!(
            total[&0],
            (5 + 3 + 40 + 1 + 1 + 1024) * 4 * kib + (5 + 4) * 2048 * kib
        );
        assert_eq!(total[&1], (262_144 + 2 + 1) * 4 * kib + 5 * 2048 * kib);
        assert_eq!(total[&3], 4 * kib);
    }

    #[test]
    fn malformed_lines_name_their_number() {
        let e = parse_numa_maps("7f00 default N0=1\nxyz default\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(
            e.to_string()
                .starts_with("numa_maps line 2: 'xyz' is not a hexadecimal")
        );
        let e = parse_numa_maps("7f00 default N0=lots").unwrap_err();
        assert!(e.reason.contains("'N0=lots' is not a count"), "{e}");
        let e = parse_numa_maps("7f00").unwrap_err();
        assert!(e.reason.contains("no policy"), "{e}");
        let e = parse_numa_maps("7f00 default anon").unwrap_err();
        assert!(e.reason.contains("'anon' has no value"), "{e}");
        let e = parse_numa_maps("7f00 default N99999999999=1").unwrap_err();
        assert!(e.reason.contains("not a node number"), "{e}");
    }

    #[test]
    fn reads_this_process() {
        let maps = read_self_numa_maps().unwrap();
        assert!(!maps.is_empty());
        assert!(maps.iter().any(|m| m.stack));
        let nodes = bytes_by_node(&maps);
        let online = std::fs::read_to_string("/sys/devices/system/node/online").map_or_else(
            |_| NodeSet::from_ids([0]),
            |t| NodeSet::parse_list(&t).unwrap(),
        );
        assert!(nodes.keys().all(|n| online.contains(*n)), "{nodes:?}");
        assert!(read_numa_maps(std::process::id()).is_ok());
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,200}") {
            let _ = parse_numa_maps(&text);
        }

        #[test]
        fn never_panics_on_line_like_text(
            text in "[0-9a-f]{1,12} (default|bind:0|prefer \\(many\\):0)( [A-Za-z_]{1,6}(=[0-9\\\\a-z]{0,24})?){0,8}\n?",
        ) {
            let _ = parse_numa_maps(&text);
        }
    }
}
