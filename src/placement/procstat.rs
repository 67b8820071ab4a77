//! Moved to [`crate::procfs::stat`]; re-exported here for existing callers.

pub use crate::procfs::stat::*;
