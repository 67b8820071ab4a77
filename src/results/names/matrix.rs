//! Record, param and metric names of the `matrix` probe alone.

/// What a matrix record holds, in its `kind` param (and its name's start).
pub(crate) mod kind {
    pub(crate) const SINGLE: &str = "bandwidth_1t";
    pub(crate) const SATURATED: &str = "bandwidth_saturated";
    pub(crate) const LATENCY: &str = "latency";
    pub(crate) const PER_CORE: &str = "bandwidth_per_core";
    pub(crate) const PER_CORE_SUMMARY: &str = "per_core_summary";
    pub(crate) const PEAK: &str = "peak";
    /// The best read/write mix and store kind with all the CPU node's cores.
    pub(crate) const PEAK_MIX: &str = "bandwidth_peak_mix";
    pub(crate) const CLASS_RULE: &str = "class_rule";
}

/// Params of the matrix alone.
pub(crate) mod param {
    /// One of [`super::kind`].
    pub(crate) const KIND: &str = "kind";
    /// Gamma with its source, on the `peak` record.
    pub(crate) const PEAK: &str = "peak";
    /// The class tolerance in percent, on the `class_rule` record.
    pub(crate) const TOLERANCE_PCT: &str = "tolerance_pct";
    /// Whether close classes are merged, on the `class_rule` record.
    pub(crate) const MERGE_CLOSE: &str = "merge_close";
    /// Cores measured, on the per-core summary.
    pub(crate) const CORES: &str = "cores";
    /// Whether every core is within the equivalence bound of the mean;
    /// null when, with `--runs`, a core's mean is known less closely.
    pub(crate) const EQUIVALENT: &str = "equivalent";
    /// Measurements per core (`--runs`), on a per-core record (those made)
    /// and on the summary (those asked).
    pub(crate) const RUNS: &str = "runs";
    /// Buffers built for the record's memory node (bandwidth arrays and
    /// chase), each shared by every CPU node measured against it, on every
    /// cell's records.
    pub(crate) const BUFFER_BUILDS: &str = "buffer_builds";
}

/// Metrics of the per-core summary and, with `--runs`, of each core.
pub(crate) mod metric {
    pub(crate) const STDDEV_MB_S: &str = "stddev_mb_s";
    pub(crate) const CI95_LOW_MB_S: &str = "ci95_low_mb_s";
    pub(crate) const CI95_HIGH_MB_S: &str = "ci95_high_mb_s";
    pub(crate) const MAX_DEVIATION_PCT: &str = "max_deviation_pct";
    /// The slowest and the fastest run of a core.
    pub(crate) const MIN_MB_S: &str = "min_mb_s";
    pub(crate) const MAX_MB_S: &str = "max_mb_s";
    /// Half the widest 95% confidence interval of a core's mean, in % of
    /// that mean (summary, with `--runs`).
    pub(crate) const WIDEST_CI95_PCT: &str = "widest_ci95_pct";
}

/// The kernel param of a latency record: a pointer chase.
pub(crate) const CHASE: &str = "chase";
/// The series of a saturated record: bandwidth over threads.
pub(crate) const SCALING: &str = "scaling";
