//! Moved to [`crate::procfs::lines`]; re-exported here for existing callers.

pub use crate::procfs::lines::*;
