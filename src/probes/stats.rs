//! Moved to [`crate::stats`]; re-exported here for existing callers.

pub use crate::stats::*;
