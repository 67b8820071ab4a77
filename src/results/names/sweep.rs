//! Record, param and metric names of the `sweep` probe alone.

/// Params of a sweep record.
pub(crate) mod param {
    /// The operation measured: a kernel's operation or [`super::LATENCY`].
    pub(crate) const OPERATION: &str = "operation";
    /// Bytes STREAM counts per element (reads + writes).
    pub(crate) const BYTES_PER_ELEMENT: &str = "bytes_per_element";
    /// Kernel passes over the buffer, calibration runs included.
    pub(crate) const ITERATIONS: &str = "iterations";
    /// The instruction set of the kernel.
    pub(crate) const ISA: &str = "isa";
    /// Regular or non-temporal stores.
    pub(crate) const STORES: &str = "stores";
    /// Why the scores may not compare with a default run (options given),
    /// on the first record.
    pub(crate) const SCORE_WARNINGS: &str = "score_warnings";
}

/// Metrics of a sweep record.
pub(crate) mod metric {
    /// STREAM convention: every byte read or written / time.
    pub(crate) const STREAM_BANDWIDTH_MB_S: &str = "stream_bandwidth_mb_s";
}

/// The `operation` of a pointer-chase latency record.
pub(crate) const LATENCY: &str = "latency";
/// The `variant` of a latency record: the pointer chase.
pub(crate) const CHASE: &str = "chase";
/// `stores` values.
pub(crate) const NON_TEMPORAL: &str = "non-temporal";
pub(crate) const REGULAR: &str = "regular";

/// The CSV's columns. sc-membench's are fixed by its format: they keep
/// their names whatever the records call the same figures.
pub(crate) mod csv {
    /// sc-membench's columns, in its order.
    pub(crate) const SC_MEMBENCH_COLUMNS: [&str; 9] = [
        "size_kb",
        "operation",
        "bandwidth_mb_s",
        "latency_ns",
        "latency_stddev_ns",
        "latency_samples",
        "threads",
        "iterations",
        "elapsed_s",
    ];

    /// numabench's own columns, after sc-membench's.
    pub(crate) const OWN_COLUMNS: [&str; 5] = [
        "variant",
        "bytes_per_element",
        "stream_bandwidth_mb_s",
        crate::results::names::column::PLACEMENT_VERIFIED_PCT,
        "huge_pct",
    ];
}
