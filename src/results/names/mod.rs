//! Every probe, record, param and metric name, once. Probes write records
//! with these, analysis and output read them with these: a figure renamed
//! here is renamed everywhere, and no reader silently misses it.
//!
//! Names shared by several probes are here; names one probe alone uses are
//! in its own file below, beside the others of that probe.

pub mod autonuma;
pub mod c2c;
pub mod fleet;
pub mod latency;
pub mod loaded;
pub mod matrix;
pub mod mem;
pub mod mlp;
pub mod model;
pub mod pcie;
pub mod peak;
pub mod run;
pub mod sched;
pub mod sweep;
pub mod tier;

/// The probes, as records name them in `probe`.
pub mod probe {
    pub const MATRIX: &str = "matrix";
    pub const SWEEP: &str = "sweep";
    pub const SCHED: &str = "sched";
    pub const AUTONUMA: &str = "autonuma";
    pub const MEM: &str = "mem";
    pub const MODEL: &str = "model";
    pub const PCIE: &str = "pcie";
    pub const C2C: &str = "c2c";
    pub const TIER: &str = "tier";
    pub const LOADED: &str = "loaded";
    pub const PEAK: &str = "peak";
    /// The `run` job, on the record it leaves when stopped before measuring.
    pub const RUN: &str = "run";
    pub const LATENCY: &str = "latency";
    pub const MLP: &str = "mlp";
}

/// Params every probe that has the thing names the same way.
pub mod param {
    pub const CPU_NODE: &str = "cpu_node";
    pub const MEM_NODE: &str = "mem_node";
    pub const CPU: &str = "cpu";
    pub const THREADS: &str = "threads";
    pub const PROCESSES: &str = "processes";
    pub const SIZE_BYTES: &str = "size_bytes";
    pub const KERNEL: &str = "kernel";
    pub const VARIANT: &str = "variant";
    pub const PAGE_SIZE: &str = "page_size";
    /// How many tasks (threads or processes) ran.
    pub const TASKS: &str = "tasks";
    /// The named test of a suite (numa01, numa02, ...).
    pub const TEST: &str = "test";
    /// The command line that reproduces the run.
    pub const COMMAND: &str = "command";
    /// Set (to `true`) on a suite's test this machine could not run; the
    /// run summary counts those apart.
    pub const SKIPPED: &str = "skipped";
    /// A pointer chase's access pattern: full-random, page-local or stride.
    pub const PATTERN: &str = "pattern";
    /// The window of a page-local chase.
    pub const WINDOW_BYTES: &str = "window_bytes";
    /// The stride of a stride chase.
    pub const STRIDE_BYTES: &str = "stride_bytes";
    /// Bytes between the elements a chase visits.
    pub const SPACING_BYTES: &str = "spacing_bytes";
    /// The page kind asked for (`page_size` is the kind the buffer got).
    pub const PAGES_ASKED: &str = "pages_asked";
}

/// Metrics every probe that has the thing names the same way; units are
/// in the name (MB = 10^6 bytes).
pub mod metric {
    pub const BANDWIDTH_MB_S: &str = "bandwidth_mb_s";
    pub const LATENCY_NS: &str = "latency_ns";
    pub const RUNTIME_S: &str = "runtime_s";
    pub const CONVERGENCE_S: &str = "convergence_s";
    pub const CV_PCT: &str = "cv_pct";
    pub const PEAK_MB_S: &str = "peak_mb_s";
    pub const LATENCY_STDDEV_NS: &str = "latency_stddev_ns";
    pub const USER_TIME_S: &str = "user_time_s";
    pub const SYSTEM_TIME_S: &str = "system_time_s";
    /// /proc/vmstat counters over a run, under the kernel's own names.
    pub const NUMA_PAGES_MIGRATED: &str = "numa_pages_migrated";
    pub const NUMA_HINT_FAULTS: &str = "numa_hint_faults";
}

/// Columns of the CSV outputs that are neither a param nor a metric.
pub mod column {
    /// The lowest share of a measurement's pages found on its memory node.
    pub const PLACEMENT_VERIFIED_PCT: &str = "placement_verified_pct";
}
