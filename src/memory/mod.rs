//! Memory for the probes: mapped buffers with a chosen page size and node
//! policy, placed by first touch and able to report where their pages are.

pub mod admission;
pub mod buffer;
mod enomem;
pub mod fill;
pub mod page_kind;

pub use buffer::{AtomicWords, Buffer, BufferOptions, Placement};
pub use page_kind::PageKind;
