//! Record names of the `latency` probe alone.

/// The record name's start: `chase <pattern> <pages> <cpu>-><mem>`.
pub const CHASE: &str = "chase";
