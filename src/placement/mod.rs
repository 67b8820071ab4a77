//! Where threads run and where memory lives: CPU and node sets, thread
//! pinning, memory policies, page-location queries and `numa_maps`.

pub mod cpuset;

pub use cpuset::{CpuSet, IdSet, ListError, NodeSet};
