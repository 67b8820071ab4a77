//! `/proc/PID/smaps`: per-mapping memory figures, here read for how much of
//! a range transparent huge pages back.
//!
//! Each entry starts with a line of `maps` (see [`super::maps`]) followed
//! by `Key: value` lines, most of them `Key:   N kB`. Three keys count
//! PMD-mapped huge pages, one per kind of page (the kernel's
//! `smaps_pmd_entry` adds each huge page to exactly one):
//!
//! - `AnonHugePages`: anonymous memory (private mappings, the heap);
//! - `ShmemPmdMapped`: shared memory (`MAP_SHARED|MAP_ANONYMOUS`, tmpfs);
//! - `FilePmdMapped` (Linux 5.4+): page cache of regular files.
//!
//! A range's huge pages are their sum: the three never overlap, and
//! leaving one out undercounts the mappings of that kind. hugetlb pages are
//! none of them (`Shared_Hugetlb`, `Private_Hugetlb`); their page size is
//! known from how they were mapped.

use super::lines::ParseError;
use super::maps::{Vma, parse_line as parse_maps_line};
use std::io;

/// One mapping of `smaps` with the figures this crate reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SmapsEntry {
    pub vma: Vma,
    /// `Rss`: resident bytes / 1024.
    pub rss_kb: u64,
    /// `AnonHugePages`.
    pub anon_huge_kb: u64,
    /// `ShmemPmdMapped`.
    pub shmem_pmd_kb: u64,
    /// `FilePmdMapped`; 0 on kernels before 5.4, which do not write it.
    pub file_pmd_kb: u64,
}

impl SmapsEntry {
    /// Bytes of the mapping backed by PMD-mapped (transparent) huge pages,
    /// of every kind.
    pub(crate) fn huge_bytes(&self) -> u64 {
        self.anon_huge_kb
            .saturating_add(self.shmem_pmd_kb)
            .saturating_add(self.file_pmd_kb)
            .saturating_mul(1024)
    }
}

/// Parses the whole text of an `smaps` file. Blank lines are skipped; keys
/// this parser does not read are skipped whatever their value, so newer
/// kernels still parse.
pub(crate) fn parse_smaps(text: &str) -> Result<Vec<SmapsEntry>, ParseError> {
    let mut entries: Vec<SmapsEntry> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = |reason: String| ParseError {
            file: "smaps",
            line: i + 1,
            reason,
            text: line.chars().take(200).collect(),
        };
        // A field's first word ends in ':'; a mapping's is an address range.
        let first = line.split_ascii_whitespace().next().unwrap_or("");
        if let Some(key) = first.strip_suffix(':') {
            let entry = entries
                .last_mut()
                .ok_or_else(|| err("a field before the first mapping".into()))?;
            read_field(entry, key, &line[line.find(':').map_or(0, |c| c + 1)..]).map_err(err)?;
        } else {
            let vma = parse_maps_line(line).map_err(err)?;
            entries.push(SmapsEntry {
                vma,
                ..Default::default()
            });
        }
    }
    Ok(entries)
}

fn read_field(entry: &mut SmapsEntry, key: &str, value: &str) -> Result<(), String> {
    let slot = match key {
        "Rss" => &mut entry.rss_kb,
        "AnonHugePages" => &mut entry.anon_huge_kb,
        "ShmemPmdMapped" => &mut entry.shmem_pmd_kb,
        "FilePmdMapped" => &mut entry.file_pmd_kb,
        _ => return Ok(()),
    };
    let bad = || format!("'{key}: {}' is not a size in kB", value.trim());
    let mut words = value.split_ascii_whitespace();
    *slot = match (words.next(), words.next(), words.next()) {
        (Some(n), Some("kB"), None) => n.parse().map_err(|_| bad())?,
        _ => return Err(bad()),
    };
    Ok(())
}

/// Huge-page bytes ([`SmapsEntry::huge_bytes`]) of the entries overlapping
/// `start..end`. An entry reaching beyond the range (a mapping merged with
/// a neighbour) contributes in proportion to the overlap, as smaps does not
/// say where in the entry its huge pages are.
pub(crate) fn huge_bytes(entries: &[SmapsEntry], start: u64, end: u64) -> u64 {
    let total: u128 = entries
        .iter()
        .filter(|e| e.vma.start < end && e.vma.end > start && !e.vma.is_empty())
        .map(|e| {
            let overlap = u128::from(e.vma.end.min(end) - e.vma.start.max(start));
            u128::from(e.huge_bytes()) * overlap / u128::from(e.vma.len())
        })
        .sum();
    u64::try_from(total).unwrap_or(u64::MAX)
}

/// Reads and parses `/proc/self/smaps`; a malformed line is an
/// `InvalidData` error carrying the [`ParseError`] message.
pub(crate) fn read_self_smaps() -> io::Result<Vec<SmapsEntry>> {
    super::lines::read_parsed("/proc/self/smaps", parse_smaps)
}

/// Huge-page bytes of `start..end` in this process, read now. 0 where
/// `smaps` cannot be read (a kernel without `CONFIG_PROC_PAGE_MONITOR`):
/// the figure describes a measurement and is not worth failing it.
pub(crate) fn self_huge_bytes(start: u64, end: u64) -> u64 {
    read_self_smaps().map_or(0, |entries| huge_bytes(&entries, start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
00400000-00800000 rw-p 00000000 00:00 0
Size:               4096 kB
Rss:                4096 kB
AnonHugePages:      4096 kB
ShmemPmdMapped:        0 kB
FilePmdMapped:         0 kB
THPeligible:    1
ProtectionKey:         0
VmFlags: rd wr mr mw me ac hg
00800000-00a00000 rw-s 00000000 00:01 5                                  /dev/zero (deleted)
ShmemPmdMapped:     2048 kB
00c00000-00e00000 r--p 00000000 fd:01 77                                 /data/big file.bin
Rss:                2048 kB
FilePmdMapped:      2048 kB
";

    #[test]
    fn entries_hold_their_mapping_and_huge_pages() {
        let e = parse_smaps(SMAPS).unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!((e[0].vma.start, e[0].vma.end), (0x40_0000, 0x80_0000));
        assert_eq!((e[0].rss_kb, e[0].anon_huge_kb), (4096, 4096));
        assert_eq!(e[0].huge_bytes(), 4 << 20);
        assert!(e[1].vma.shared);
        assert_eq!(e[1].huge_bytes(), 2 << 20);
        assert_eq!(e[2].vma.path.as_deref(), Some("/data/big file.bin"));
        assert_eq!(e[2].huge_bytes(), 2 << 20);
    }

    #[test]
    fn overlap_is_prorated() {
        let e = parse_smaps(SMAPS).unwrap();
        assert_eq!(huge_bytes(&e, 0x40_0000, 0x80_0000), 4 << 20);
        assert_eq!(huge_bytes(&e, 0x40_0000, 0x60_0000), 2 << 20);
        assert_eq!(huge_bytes(&e, 0x40_0000, 0xa0_0000), 6 << 20);
        assert_eq!(huge_bytes(&e, 0xa0_0000, 0xb0_0000), 0);
        // File pages mapped by PMD count as the other kinds do.
        assert_eq!(huge_bytes(&e, 0, u64::MAX), 8 << 20);
        assert_eq!(huge_bytes(&[], 0, u64::MAX), 0);
    }

    #[test]
    fn malformed_lines_are_named() {
        let e = parse_smaps("Rss: 4 kB\n").unwrap_err();
        assert!(e.reason.contains("before the first mapping"), "{e}");
        let e = parse_smaps("1000-2000 rw-p 0 00:00 0\nAnonHugePages: lots kB\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("not a size in kB"), "{e}");
        let e = parse_smaps("1000-2000 rw-p 0 00:00 0\nRss: 4 MB\n").unwrap_err();
        assert!(e.reason.contains("not a size in kB"), "{e}");
        assert!(parse_smaps("garbage\n-\nx-y\n").is_err());
        // Keys this parser does not read may hold anything.
        assert!(parse_smaps("1000-2000 rw-p 0 00:00 0\nNewKey: ??\n").is_ok());
    }

    #[test]
    fn huge_figures_saturate() {
        let text = format!(
            "0-1000 rw-p 0 00:00 0\nAnonHugePages: {0} kB\nShmemPmdMapped: {0} kB\n",
            u64::MAX
        );
        let e = parse_smaps(&text).unwrap();
        assert_eq!(e[0].huge_bytes(), u64::MAX);
        assert_eq!(huge_bytes(&e, 0, 0x1000), u64::MAX);
    }

    #[test]
    fn this_process_parses() {
        let buf: Vec<u64> = vec![7; 1 << 20];
        let a = buf.as_ptr() as u64;
        let e = read_self_smaps().unwrap();
        assert!(
            e.iter()
                .any(|m| m.vma.start <= a && a < m.vma.end && m.rss_kb > 0)
        );
        assert!(self_huge_bytes(a, a + (8 << 20)) <= 8 << 20);
        std::hint::black_box(&buf);
    }
}
