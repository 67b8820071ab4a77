//! Moved to [`crate::procfs::numa_maps`]; re-exported here for existing callers.

pub use crate::procfs::numa_maps::*;
