//! The key figures and configuration items of `numabench fleet`, as its
//! JSON, CSV and tables name them. They are read from other probes'
//! records; the names here are the fleet's own columns.

/// Key figures, one value per machine.
pub(crate) mod figure {
    /// Single-thread triad, the worst local cell of the matrix.
    pub(crate) const LOCAL_BW_1T: &str = "local_bw_1t_mb_s";
    /// Single-thread triad, the worst remote cell.
    pub(crate) const REMOTE_BW_1T: &str = "remote_bw_1t_mb_s";
    /// Saturated triad, the worst local cell.
    pub(crate) const LOCAL_BW_SAT: &str = "local_bw_saturated_mb_s";
    /// Saturated triad, the worst remote cell.
    pub(crate) const REMOTE_BW_SAT: &str = "remote_bw_saturated_mb_s";
    /// Idle latency, the slowest local cell.
    pub(crate) const LOCAL_LATENCY: &str = "local_idle_latency_ns";
    /// Idle latency, the slowest remote cell.
    pub(crate) const REMOTE_LATENCY: &str = "remote_idle_latency_ns";
    /// Bandwidth classes of the single-thread matrix.
    pub(crate) const CLASSES: &str = "bandwidth_classes";
    /// Online NUMA nodes.
    pub(crate) const NODES: &str = "numa_nodes";
    /// Memory of all nodes together.
    pub(crate) const MEMORY_GIB: &str = "memory_gib";
    /// Page-local idle latency (`latency`), the slowest local cell.
    pub(crate) const LOCAL_PAGE_LOCAL_LATENCY: &str = "local_page_local_latency_ns";
    /// Latency at full load (`loaded`), the slowest local pair.
    pub(crate) const LOCAL_LOADED_LATENCY: &str = "local_loaded_latency_ns";
    /// Peak injection with every core (`peak`), the weakest local cell.
    pub(crate) const LOCAL_PEAK_BW: &str = "local_peak_mb_s";
    /// Core-to-core latency (`c2c`, compare-and-swap), the median pair.
    pub(crate) const C2C_LATENCY: &str = "c2c_cas_latency_ns";
}

/// Configuration items compared within a machine kind.
pub(crate) mod config {
    pub(crate) const KERNEL: &str = "kernel";
    pub(crate) const THP: &str = "thp";
    pub(crate) const NUMA_BALANCING: &str = "numa_balancing";
    pub(crate) const MEMORY_PER_NODE: &str = "memory_per_node";
    pub(crate) const DIMMS: &str = "dimms";
    pub(crate) const CPUS: &str = "cpus";
    pub(crate) const VERSION: &str = "numabench_version";
}
