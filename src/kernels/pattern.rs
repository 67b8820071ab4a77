//! The order a pointer chase visits its buffer in, as data.
//!
//! - `full-random`: one random cycle through every element of the buffer
//!   (the chase numabench always had): every load may miss the TLB too, so
//!   on a large buffer the figure includes page walks.
//! - `page-local`: the buffer is cut into windows (default 256 KiB, 64 base
//!   pages, multichase's `-T` default); the chase visits every element of one
//!   window in random order, then moves to the next window (windows in random
//!   order). The TLB holds a window's pages, so the figure is memory latency
//!   without page walks: multichase's default pattern, the one MLC and
//!   multichase users quote.
//! - `stride`: lmbench `lat_mem_rd` style, element `i` links to `i + 1`
//!   (`stride` bytes on), wrapping at the end; hardware prefetchers see it,
//!   and a sweep over strides shows where they stop helping.
//!
//! Elements are `spacing` bytes apart: a cache line (64 B) for full-random,
//! as numabench always measured it; multichase's 256 B stride for
//! page-local, where a line-sized element would let the adjacent-line
//! prefetcher turn loads of the same window into cache hits; the stride
//! itself for stride.

use std::fmt;

/// Multichase's default stride, the element spacing of page-local chases.
pub(crate) const WIDE_SPACING: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Pattern {
    #[default]
    FullRandom,
    /// Random within windows of `window` bytes, one window after another.
    PageLocal { window: usize },
    /// Fixed `stride` bytes from one load to the next.
    Stride { stride: usize },
}

impl Pattern {
    pub const FULL_RANDOM: &str = "full-random";
    pub const PAGE_LOCAL: &str = "page-local";
    pub const STRIDE: &str = "stride";

    /// The kind alone: `full-random`, `page-local` or `stride`.
    pub fn kind(&self) -> &'static str {
        match self {
            Pattern::FullRandom => Self::FULL_RANDOM,
            Pattern::PageLocal { .. } => Self::PAGE_LOCAL,
            Pattern::Stride { .. } => Self::STRIDE,
        }
    }

    /// Bytes between the elements the chase visits.
    pub fn spacing(&self) -> usize {
        match self {
            Pattern::FullRandom => super::latency::LINE_BYTES,
            Pattern::PageLocal { .. } => WIDE_SPACING,
            Pattern::Stride { stride } => *stride,
        }
    }

    /// The window of a page-local chase.
    pub fn window(&self) -> Option<usize> {
        match self {
            Pattern::PageLocal { window } => Some(*window),
            _ => None,
        }
    }

    /// The stride of a stride chase.
    pub fn stride(&self) -> Option<usize> {
        match self {
            Pattern::Stride { stride } => Some(*stride),
            _ => None,
        }
    }

    /// `kind` with a page-local window or a stride: what the user typed,
    /// resolved. `window` and `stride` are used where `kind` needs them.
    pub fn from_parts(kind: &str, window: usize, stride: usize) -> Result<Pattern, String> {
        let p = match kind {
            Self::FULL_RANDOM => Pattern::FullRandom,
            Self::PAGE_LOCAL => Pattern::PageLocal { window },
            Self::STRIDE => Pattern::Stride { stride },
            other => {
                return Err(format!(
                    "'{other}' is not a pattern (use full-random, page-local or stride)"
                ));
            }
        };
        p.check()?;
        Ok(p)
    }

    /// Whether the window or stride is one a chase can follow.
    pub fn check(&self) -> Result<(), String> {
        match *self {
            Pattern::FullRandom => Ok(()),
            Pattern::PageLocal { window } => {
                if window < 2 * WIDE_SPACING || !window.is_multiple_of(WIDE_SPACING) {
                    Err(format!(
                        "window {window} bytes: a page-local window is a multiple of {WIDE_SPACING} bytes (the element spacing) holding at least 2 elements, e.g. 256K"
                    ))
                } else {
                    Ok(())
                }
            }
            Pattern::Stride { stride } => {
                if stride < 8 || !stride.is_multiple_of(8) {
                    Err(format!(
                        "stride {stride} bytes: a stride is a multiple of 8 bytes (one pointer), e.g. 64 or 256"
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }
}

impl fmt::Display for Pattern {
    /// `full-random`, `page-local:256K`, `stride:128`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::FullRandom => f.write_str(Self::FULL_RANDOM),
            Pattern::PageLocal { window } => write!(f, "{}:{}", Self::PAGE_LOCAL, short(*window)),
            Pattern::Stride { stride } => write!(f, "{}:{}", Self::STRIDE, short(*stride)),
        }
    }
}

/// Bytes as the shortest exact K/M/G form (`256K`, `1G`, `96`).
fn short(bytes: usize) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "K")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_patterns_parse_resolve_and_name_themselves() {
        let p = Pattern::from_parts("page-local", 256 << 10, 64).unwrap();
        assert_eq!(p, Pattern::PageLocal { window: 256 << 10 });
        assert_eq!(p.to_string(), "page-local:256K");
        assert_eq!(p.spacing(), 256);
        let s = Pattern::from_parts("stride", 256 << 10, 192).unwrap();
        assert_eq!((s.to_string().as_str(), s.spacing()), ("stride:192", 192));
        let f = Pattern::from_parts("full-random", 1, 1).unwrap();
        assert_eq!(
            (f.kind(), f.spacing(), f.window()),
            ("full-random", 64, None)
        );
        assert!(
            Pattern::from_parts("random", 1, 1)
                .unwrap_err()
                .contains("not a pattern")
        );
        assert!(Pattern::from_parts("page-local", 300, 64).is_err());
        assert!(Pattern::from_parts("page-local", 256, 64).is_err());
        assert!(
            Pattern::from_parts("stride", 0, 12)
                .unwrap_err()
                .contains("multiple of 8")
        );
    }
}
