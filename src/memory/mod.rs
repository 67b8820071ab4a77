//! Memory for the probes: mapped buffers with a chosen page size and node
//! policy, placed by first touch and able to report where their pages are.

pub mod buffer;

pub use buffer::{
    ALIGN, Buffer, BufferOptions, Fill, PageKind, PageKindParseError, Placement, fill_pattern,
    pattern_word,
};
