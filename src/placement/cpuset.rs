//! Moved to [`crate::ids`]; re-exported here for existing callers.

pub use crate::ids::*;
