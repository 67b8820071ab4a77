//! Param and metric names of the `mlp` probe alone.

/// Params of an mlp record.
pub(crate) mod param {
    /// Independent chases one thread follows together.
    pub(crate) const CHASES: &str = "chases";
}

/// Metrics of an mlp record.
pub(crate) mod metric {
    /// Wall time per load over all chases: multichase's `parallelN` figure.
    pub(crate) const NS_PER_ACCESS: &str = "ns_per_access";
    /// Time from one load of a chase to its next: chases x ns per access.
    pub(crate) const CHASE_LATENCY_NS: &str = "chase_latency_ns";
    /// Loads the memory system overlapped, in idle-latency units:
    /// ns per access with one chase / ns per access with N.
    pub(crate) const CONCURRENCY: &str = "concurrency";
    /// Lines moved per second at that rate (64 B lines, MB = 10^6 bytes).
    pub(crate) const LINE_MB_S: &str = "line_mb_s";
}
