//! Record names of the `latency` probe alone.

/// The record name's start: `chase <pattern> <pages> <cpu>-><mem>`.
pub(crate) const CHASE: &str = "chase";
