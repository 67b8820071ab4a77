//! Sets of CPU or node numbers of any size, and the kernel's list syntax.
//!
//! The kernel writes CPU and node sets as lists such as `0-3,8,10-11` (sysfs
//! `cpulist`, `online`, `/proc/self/status`), and `bitmap_parselist()` also
//! accepts a stride form `0-15:2/4` (the first 2 of every group of 4). One
//! grammar serves sysfs files and command-line options, so both are parsed by
//! [`IdSet::parse_list`]. Unlike libc's `cpu_set_t` (1024 bits) the set grows
//! as needed, so machines with thousands of CPUs work.

use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// The largest id accepted from text. Linux allows at most 8192 CPUs and 1024
/// nodes today; the cap keeps a typo like `0-4000000000` from allocating
/// gigabytes.
pub(crate) const MAX_ID: usize = 1 << 20;

/// The most CPUs Linux supports (`NR_CPUS` at most 8192): CPU and node ids
/// in a document are below it.
pub(crate) const MAX_CPUS: usize = 8192;

/// A set of small non-negative integers (CPU or node ids), stored as a bitmap.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct IdSet {
    words: Vec<u64>,
}

/// A set of CPUs.
pub(crate) type CpuSet = IdSet;
/// A set of NUMA nodes.
pub(crate) type NodeSet = IdSet;

/// Why a list could not be parsed; the message names the offending part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{input}' is not a valid list: {reason} (expected e.g. '0-3,8,10-11')")]
pub struct ListError {
    pub input: String,
    pub reason: String,
}

impl IdSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn from_ids<I: IntoIterator<Item = usize>>(ids: I) -> Self {
        let mut set = Self::new();
        for id in ids {
            set.insert(id);
        }
        set
    }

    /// A set holding `0..n`.
    pub fn first_n(n: usize) -> Self {
        Self::from_ids(0..n)
    }

    pub fn insert(&mut self, id: usize) {
        let (w, b) = (id / 64, id % 64);
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << b;
    }

    pub fn remove(&mut self, id: usize) {
        if let Some(word) = self.words.get_mut(id / 64) {
            *word &= !(1 << (id % 64));
        }
        self.trim();
    }

    pub fn contains(&self, id: usize) -> bool {
        self.words
            .get(id / 64)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The ids in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            (0..64)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| i * 64 + b)
        })
    }

    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    /// One past the highest id, or 0 for an empty set.
    pub fn end(&self) -> usize {
        self.iter().last().map_or(0, |m| m + 1)
    }

    pub fn union(&self, other: &Self) -> Self {
        let n = self.words.len().max(other.words.len());
        let word = |v: &Vec<u64>, i: usize| v.get(i).copied().unwrap_or(0);
        let mut out = Self {
            words: (0..n)
                .map(|i| word(&self.words, i) | word(&other.words, i))
                .collect(),
        };
        out.trim();
        out
    }

    pub fn intersection(&self, other: &Self) -> Self {
        let mut out = Self {
            words: self
                .words
                .iter()
                .zip(&other.words)
                .map(|(a, b)| a & b)
                .collect(),
        };
        out.trim();
        out
    }

    /// Ids in `self` that are not in `other`.
    pub fn difference(&self, other: &Self) -> Self {
        let mut out = Self {
            words: self
                .words
                .iter()
                .enumerate()
                .map(|(i, a)| a & !other.words.get(i).copied().unwrap_or(0))
                .collect(),
        };
        out.trim();
        out
    }

    pub fn is_subset(&self, other: &Self) -> bool {
        self.difference(other).is_empty()
    }

    /// The bitmap as 64-bit words (bit `i` of word `w` is id `64*w + i`), padded
    /// with zero words to at least `min_words` words: the layout that
    /// `sched_setaffinity`, `mbind` and `set_mempolicy` expect.
    pub fn to_words(&self, min_words: usize) -> Vec<u64> {
        let mut words = self.words.clone();
        if words.len() < min_words {
            words.resize(min_words, 0);
        }
        words
    }

    pub fn from_words(words: &[u64]) -> Self {
        let mut out = Self {
            words: words.to_vec(),
        };
        out.trim();
        out
    }

    fn trim(&mut self) {
        while self.words.last() == Some(&0) {
            self.words.pop();
        }
    }

    /// Parses the kernel's list syntax: comma-separated ids and ranges `a-b`,
    /// optionally with a stride `a-b:used/group`. Surrounding white space is
    /// ignored and an empty string is the empty set (a memory-only node's
    /// `cpulist` is empty).
    pub fn parse_list(input: &str) -> Result<Self, ListError> {
        let err = |reason: String| ListError {
            input: input.trim().to_string(),
            reason,
        };
        let text = input.trim();
        let mut set = Self::new();
        if text.is_empty() {
            return Ok(set);
        }
        for part in text.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(err("empty element between commas".into()));
            }
            let (range, stride) = match part.split_once(':') {
                Some((r, s)) => (r, Some(s)),
                None => (part, None),
            };
            let (lo, hi) = match range.split_once('-') {
                Some((a, b)) => (
                    parse_id(a, part).map_err(err)?,
                    parse_id(b, part).map_err(err)?,
                ),
                None => {
                    let id = parse_id(range, part).map_err(err)?;
                    (id, id)
                }
            };
            if lo > hi {
                return Err(err(format!("range '{part}' runs backwards")));
            }
            let (used, group) = match stride {
                None => (1, 1),
                Some(s) => {
                    let (u, g) = s
                        .split_once('/')
                        .ok_or_else(|| err(format!("stride in '{part}' must be 'used/group'")))?;
                    let (u, g) = (
                        parse_id(u, part).map_err(err)?,
                        parse_id(g, part).map_err(err)?,
                    );
                    if u == 0 || g == 0 || u > g {
                        return Err(err(format!("stride in '{part}' needs 0 < used <= group")));
                    }
                    (u, g)
                }
            };
            for id in lo..=hi {
                if (id - lo) % group < used {
                    set.insert(id);
                }
            }
        }
        Ok(set)
    }

    /// The canonical list form, e.g. `0-3,8,10-11`; empty for an empty set.
    pub fn to_list(&self) -> String {
        self.to_string()
    }
}

fn parse_id(text: &str, part: &str) -> Result<usize, String> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{part}' holds '{t}', which is not a number"));
    }
    match t.parse::<usize>() {
        Ok(v) if v < MAX_ID => Ok(v),
        _ => Err(format!(
            "{t} is larger than the largest id allowed ({})",
            MAX_ID - 1
        )),
    }
}

impl fmt::Display for IdSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut ids = self.iter().peekable();
        while let Some(lo) = ids.next() {
            let mut hi = lo;
            while ids.peek() == Some(&(hi + 1)) {
                hi = ids.next().unwrap_or(hi);
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if hi > lo {
                write!(f, "{lo}-{hi}")?;
            } else {
                write!(f, "{lo}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for IdSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IdSet({self})")
    }
}

impl std::str::FromStr for IdSet {
    type Err = ListError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse_list(s)
    }
}

/// Serialized as an array of ids, which every JSON consumer can read without
/// knowing the list syntax.
impl Serialize for IdSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// Sets in a document (a results file's topology) hold CPU or node ids as
/// the topology reader accepts them, below [`MAX_CPUS`]:
/// a few bytes of JSON such as `[1048575]` must not size a bitmap of
/// 128 KiB, thousands of times over.
impl<'de> Deserialize<'de> for IdSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let ids = Vec::<usize>::deserialize(d)?;
        let max = MAX_CPUS;
        if let Some(bad) = ids.iter().find(|&&i| i >= max) {
            return Err(serde::de::Error::custom(format!(
                "id {bad} is too large (CPU and node ids are below {max})"
            )));
        }
        Ok(Self::from_ids(ids))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(s: &str) -> IdSet {
        IdSet::parse_list(s).unwrap()
    }

    #[test]
    fn parses_kernel_lists() {
        assert_eq!(
            p("0-3,8,10-11").iter().collect::<Vec<_>>(),
            [0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(p("  5\n").iter().collect::<Vec<_>>(), [5]);
        assert!(p("").is_empty());
        assert!(p("\n").is_empty());
        assert_eq!(p("0-7,16-23").len(), 16);
    }

    #[test]
    fn formats_canonically() {
        assert_eq!(
            IdSet::from_ids([11, 10, 0, 1, 2, 3, 8]).to_list(),
            "0-3,8,10-11"
        );
        assert_eq!(IdSet::from_ids([0, 2]).to_list(), "0,2");
        assert_eq!(IdSet::from_ids([0, 1]).to_list(), "0-1");
        assert_eq!(IdSet::new().to_list(), "");
    }

    #[test]
    fn parses_strides() {
        assert_eq!(p("0-15:2/4").to_list(), "0-1,4-5,8-9,12-13");
        assert!(IdSet::parse_list("0-7:3/2").is_err());
        assert!(IdSet::parse_list("0-7:0/2").is_err());
    }

    #[test]
    fn rejects_malformed_lists_with_the_reason() {
        for bad in [
            "1-",
            "-1",
            "a",
            "1,,2",
            "3-1",
            "1-2-3",
            "0x1",
            "1 2",
            "99999999999999999999",
        ] {
            let e = IdSet::parse_list(bad).unwrap_err();
            assert_eq!(e.input, bad.trim(), "{bad}");
        }
        let e = IdSet::parse_list("3-1").unwrap_err();
        assert!(e.to_string().contains("backwards"), "{e}");
    }

    #[test]
    fn large_sets_have_no_size_limit() {
        let s = p("0-4095");
        assert_eq!(s.len(), 4096);
        assert!(s.contains(4095) && !s.contains(4096));
        assert_eq!(s.to_words(0).len(), 64);
        assert_eq!(s.end(), 4096);
    }

    #[test]
    fn set_algebra() {
        let a = p("0-7");
        let b = p("4-11");
        assert_eq!(a.intersection(&b).to_list(), "4-7");
        assert_eq!(a.union(&b).to_list(), "0-11");
        assert_eq!(a.difference(&b).to_list(), "0-3");
        assert!(p("2-3").is_subset(&a));
        assert!(!b.is_subset(&a));
        let mut c = p("64");
        c.remove(64);
        assert_eq!(c, IdSet::new());
    }

    #[test]
    fn words_round_trip_and_pad() {
        let s = p("1,65");
        assert_eq!(s.to_words(4), vec![2, 2, 0, 0]);
        assert_eq!(IdSet::from_words(&[2, 2, 0, 0]), s);
    }

    #[test]
    fn json_is_an_array() {
        let s = p("0-2,5");
        assert_eq!(serde_json::to_string(&s).unwrap(), "[0,1,2,5]");
        let back: IdSet = serde_json::from_str("[5,0,1,2]").unwrap();
        assert_eq!(back, s);
    }

    proptest! {
        #[test]
        fn any_set_round_trips(ids in proptest::collection::btree_set(0usize..5000, 0..200)) {
            let s = IdSet::from_ids(ids.iter().copied());
            let back = IdSet::parse_list(&s.to_list()).unwrap();
            prop_assert_eq!(back.iter().collect::<Vec<_>>(), ids.into_iter().collect::<Vec<_>>());
        }

        #[test]
        fn parser_never_panics(text in "\\PC{0,40}") {
            let _ = IdSet::parse_list(&text);
        }

        /// List-shaped text (ids, ranges, strides, stray spaces and
        /// commas) is a set of ids below the bound or an error.
        #[test]
        fn list_like_text_is_a_set_or_an_error(
            text in "[0-9]{1,5}(-[0-9]{1,5})?(:[0-9]{1,3}/[0-9]{1,3})?([ ,]{1,2}[0-9]{1,5}(-[0-9]{0,5})?(:[0-9]{0,3}/?[0-9]{0,3})?){0,3}",
        ) {
            if let Ok(set) = IdSet::parse_list(&text) {
                prop_assert!(set.iter().all(|id| id < MAX_ID));
                prop_assert_eq!(IdSet::parse_list(&set.to_list()).unwrap(), set);
            }
        }

        #[test]
        fn parser_never_panics_on_list_like_text(text in "[0-9,:/ -]{0,30}") {
            if let Ok(s) = IdSet::parse_list(&text) {
                // Whatever parses must format back to something that parses the same.
                prop_assert_eq!(IdSet::parse_list(&s.to_list()).unwrap(), s);
            }
        }
    }
}
