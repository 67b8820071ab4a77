//! Every probe, record, param and metric name, once. Probes write records
//! with these, analysis and output read them with these: a figure renamed
//! here is renamed everywhere, and no reader silently misses it.
//!
//! Names shared by several probes are here; names one probe alone uses are
//! in its own file below, beside the others of that probe.

pub(crate) mod autonuma;
pub(crate) mod c2c;
pub(crate) mod fleet;
pub(crate) mod latency;
pub(crate) mod loaded;
pub(crate) mod matrix;
pub(crate) mod mem;
pub(crate) mod mlp;
pub(crate) mod model;
pub(crate) mod pcie;
pub(crate) mod peak;
pub(crate) mod run;
pub(crate) mod sched;
pub(crate) mod sweep;
pub(crate) mod tier;

/// The probes, as records name them in `probe`.
pub(crate) mod probe {
    pub(crate) const MATRIX: &str = "matrix";
    pub(crate) const SWEEP: &str = "sweep";
    pub(crate) const SCHED: &str = "sched";
    pub(crate) const AUTONUMA: &str = "autonuma";
    pub(crate) const MEM: &str = "mem";
    pub(crate) const MODEL: &str = "model";
    pub(crate) const PCIE: &str = "pcie";
    pub(crate) const C2C: &str = "c2c";
    pub(crate) const TIER: &str = "tier";
    pub(crate) const LOADED: &str = "loaded";
    pub(crate) const PEAK: &str = "peak";
    /// The `run` job, on the record it leaves when stopped before measuring.
    pub(crate) const RUN: &str = "run";
    pub(crate) const LATENCY: &str = "latency";
    pub(crate) const MLP: &str = "mlp";
}

/// Params every probe that has the thing names the same way.
pub(crate) mod param {
    pub(crate) const CPU_NODE: &str = "cpu_node";
    pub(crate) const MEM_NODE: &str = "mem_node";
    pub(crate) const CPU: &str = "cpu";
    pub(crate) const THREADS: &str = "threads";
    pub(crate) const PROCESSES: &str = "processes";
    pub(crate) const SIZE_BYTES: &str = "size_bytes";
    pub(crate) const KERNEL: &str = "kernel";
    pub(crate) const VARIANT: &str = "variant";
    pub(crate) const PAGE_SIZE: &str = "page_size";
    /// How many tasks (threads or processes) ran.
    pub(crate) const TASKS: &str = "tasks";
    /// The named test of a suite (numa01, numa02, ...).
    pub(crate) const TEST: &str = "test";
    /// The command line that reproduces the run.
    pub(crate) const COMMAND: &str = "command";
    /// Set (to `true`) on a suite's test this machine could not run; the
    /// run summary counts those apart.
    pub(crate) const SKIPPED: &str = "skipped";
    /// A pointer chase's access pattern: full-random, page-local or stride.
    pub(crate) const PATTERN: &str = "pattern";
    /// The window of a page-local chase.
    pub(crate) const WINDOW_BYTES: &str = "window_bytes";
    /// The stride of a stride chase.
    pub(crate) const STRIDE_BYTES: &str = "stride_bytes";
    /// Bytes between the elements a chase visits.
    pub(crate) const SPACING_BYTES: &str = "spacing_bytes";
    /// The page kind asked for (`page_size` is the kind the buffer got).
    pub(crate) const PAGES_ASKED: &str = "pages_asked";
    /// Chase buffers the run mapped (one per memory node, page kind and
    /// size), each chased from every CPU node in turn.
    pub(crate) const CHASE_BUFFERS_BUILT: &str = "chase_buffers_built";
}

/// Metrics every probe that has the thing names the same way; units are
/// in the name (MB = 10^6 bytes).
pub(crate) mod metric {
    pub(crate) const BANDWIDTH_MB_S: &str = "bandwidth_mb_s";
    pub(crate) const LATENCY_NS: &str = "latency_ns";
    pub(crate) const RUNTIME_S: &str = "runtime_s";
    pub(crate) const CONVERGENCE_S: &str = "convergence_s";
    pub(crate) const CV_PCT: &str = "cv_pct";
    pub(crate) const PEAK_MB_S: &str = "peak_mb_s";
    pub(crate) const LATENCY_STDDEV_NS: &str = "latency_stddev_ns";
    pub(crate) const USER_TIME_S: &str = "user_time_s";
    pub(crate) const SYSTEM_TIME_S: &str = "system_time_s";
    /// /proc/vmstat counters over a run, under the kernel's own names.
    pub(crate) const NUMA_PAGES_MIGRATED: &str = "numa_pages_migrated";
    pub(crate) const NUMA_HINT_FAULTS: &str = "numa_hint_faults";
}

/// Columns of the CSV outputs that are neither a param nor a metric.
pub(crate) mod column {
    /// The lowest share of a measurement's pages found on its memory node.
    pub(crate) const PLACEMENT_VERIFIED_PCT: &str = "placement_verified_pct";
}
