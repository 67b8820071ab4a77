//! Moved to [`crate::procfs::maps`]; re-exported here for existing callers.

pub use crate::procfs::maps::*;
