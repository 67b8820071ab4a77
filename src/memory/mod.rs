//! Memory for the probes: mapped buffers with a chosen page size and node
//! policy, placed by first touch and able to report where their pages are.

pub(crate) mod admission;
pub(crate) mod buffer;
mod enomem;
pub(crate) mod fill;
pub(crate) mod page_kind;

pub(crate) use buffer::{AtomicWords, Buffer, BufferOptions, Placement};
pub(crate) use page_kind::PageKind;
