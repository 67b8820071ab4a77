//! Moved to [`crate::sys`]; re-exported here for existing callers.

pub use crate::interrupt::{StopSignals, catch_stop_signals, child_signal_setup, stop_signals};
pub use crate::sys::futex::*;
pub use crate::sys::process::*;
pub use crate::sys::region::*;
