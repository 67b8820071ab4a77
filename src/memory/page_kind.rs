//! Which pages back a buffer, and the text form users type (`base`, `thp`,
//! `auto`, `hugetlb`, `hugetlb:1G`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// 2 MiB, the usual huge page size on x86-64 and arm64 with 4 KiB pages.
pub(crate) const MIB2: usize = 2 << 20;

/// Which pages back a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PageKind {
    /// Base pages only (THP switched off for the range).
    Base,
    /// Transparent huge pages where the kernel can provide them.
    Thp,
    /// Pages from the hugetlb pool of this size in bytes (2 MiB, 1 GiB, ...).
    HugeTlb(usize),
    /// The best available: hugetlb 2 MiB, else THP, else base pages.
    Auto,
}

impl fmt::Display for PageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PageKind::Base => f.write_str("base"),
            PageKind::Thp => f.write_str("thp"),
            PageKind::Auto => f.write_str("auto"),
            PageKind::HugeTlb(size) => {
                let (n, unit) = if size % (1 << 30) == 0 {
                    (size >> 30, "G")
                } else if size % (1 << 20) == 0 {
                    (size >> 20, "M")
                } else {
                    (size >> 10, "K")
                };
                write!(f, "hugetlb:{n}{unit}")
            }
        }
    }
}

/// Why a page kind was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid page kind '{input}': {reason}")]
pub struct PageKindParseError {
    pub input: String,
    pub reason: String,
}

impl FromStr for PageKind {
    type Err = PageKindParseError;

    /// `base`, `thp`, `auto`, `hugetlb` (2 MiB) or `hugetlb:SIZE` with SIZE
    /// such as `2M`, `1G`, `1GiB`, `64K`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text = s.trim();
        let fail = |reason: String| PageKindParseError {
            input: text.to_string(),
            reason,
        };
        let lower = text.to_ascii_lowercase();
        let (kind, size) = match lower.split_once(':') {
            Some((k, sz)) => (k.trim(), Some(sz.trim())),
            None => (lower.as_str(), None),
        };
        match (kind, size) {
            ("base", None) => Ok(PageKind::Base),
            ("thp", None) => Ok(PageKind::Thp),
            ("auto", None) => Ok(PageKind::Auto),
            ("hugetlb", None) => Ok(PageKind::HugeTlb(MIB2)),
            ("hugetlb", Some(sz)) => parse_page_size(sz).map(PageKind::HugeTlb).map_err(fail),
            ("base" | "thp" | "auto", Some(_)) => Err(fail(format!(
                "'{kind}' takes no size; only 'hugetlb:SIZE' does (e.g. 'hugetlb:1G')"
            ))),
            _ => Err(fail(
                "expected base, thp, auto, hugetlb or hugetlb:SIZE (e.g. hugetlb:1G)".into(),
            )),
        }
    }
}

fn parse_page_size(text: &str) -> Result<usize, String> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (num, unit) = text.split_at(digits);
    let shift = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "" => return Err(format!("'{text}' needs a unit: K, M or G (e.g. 2M)")),
        _ => {
            return Err(format!(
                "'{text}': huge pages come in K, M or G sizes (e.g. 2M, 1G)"
            ));
        }
    };
    let n: usize = num
        .parse()
        .map_err(|_| format!("'{text}' does not start with a number"))?;
    let size = n
        .checked_shl(shift)
        .filter(|s| s >> shift == n)
        .ok_or_else(|| format!("'{text}' is too large"))?;
    if !size.is_power_of_two() || size < crate::sys::mmap::base_page_size() {
        return Err(format!(
            "huge page sizes are powers of two of at least the base page; '{text}' is not"
        ));
    }
    Ok(size)
}

impl Serialize for PageKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PageKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}
