//! numabench: measure how a machine's memory behaves across NUMA nodes.
//!
//! The crate follows one flow, each layer calling only those before it:
//! [`topology`] (what is there) → [`placement`] and [`memory`] (pin, bind,
//! allocate, verify) → probes → [`results`] (one JSON document) → [`output`].

pub mod analysis;
pub mod cli;
pub mod console;
pub mod error;
pub mod interrupt;
pub mod jobs;
pub mod kernels;
pub mod memory;
pub mod output;
pub mod placement;
pub mod probes;
pub mod progress;
pub mod results;
pub mod topology;
pub mod view;
