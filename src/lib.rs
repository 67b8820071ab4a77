//! numabench: measure how a machine's memory behaves across NUMA nodes.
//!
//! The crate follows one flow, each layer calling only those before it:
//! the ground floor (id sets, units, statistics, text escaping, `/proc`
//! parsers, process and memory system calls) → [`topology`] (what is there)
//! → `placement` and `memory` (pin, bind, allocate, verify) → probes →
//! `results` (one JSON document) → [`output`].
//!
//! What a module offers the rest of the crate is `pub(crate)`; only what
//! the binary and the integration tests use is `pub` (the lint below
//! keeps it so).

#![warn(unreachable_pub)]

pub(crate) mod analysis;
pub mod cli;
pub mod console;
pub mod error;
pub(crate) mod ids;
pub mod interrupt;
pub(crate) mod jobs;
pub(crate) mod kernels;
pub(crate) mod memory;
pub mod output;
pub(crate) mod placement;
pub(crate) mod probes;
pub(crate) mod procfs;
pub(crate) mod progress;
pub(crate) mod results;
pub(crate) mod stats;
pub(crate) mod sys;
pub(crate) mod text;
pub mod topology;
pub(crate) mod units;
pub(crate) mod view;

/// The heap the binary installs: a refused allocation is one clear line
/// and exit 1, not an abort.
pub use sys::alloc::Reported as ReportedHeap;
