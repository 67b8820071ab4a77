//! Record, param and metric names of the `c2c` probe alone.

/// How the cache line travels between the two CPUs (the `variant` param).
pub(crate) mod variant {
    /// One line, each side compare-and-swaps the flag from the other's
    /// value to its own (core-to-core-latency's default test).
    pub(crate) const CAS: &str = "cas";
    /// Two lines, each side waits (loads) for the other's value on the
    /// other's line, then stores its own on its line (core-to-core-latency
    /// -b 2).
    pub(crate) const STORE: &str = "store";
    /// A chase by the reader through lines the other CPU read last: clean
    /// (unmodified) in the other CPU's cache.
    pub(crate) const CLEAN_READ: &str = "clean-read";
    /// The same chase through lines the other CPU wrote last: modified in
    /// its cache.
    pub(crate) const MODIFIED_READ: &str = "modified-read";
}

/// What two CPUs share (the `class` param), closest first.
pub(crate) mod class {
    /// Threads of one core.
    pub(crate) const SMT: &str = "smt";
    /// Different cores under one L3 cache.
    pub(crate) const SAME_L3: &str = "same-l3";
    /// One NUMA node, different L3 caches.
    pub(crate) const SAME_NODE: &str = "same-node";
    /// Different NUMA nodes of one package (socket): sub-NUMA clusters,
    /// NPS domains.
    pub(crate) const SAME_PACKAGE: &str = "same-package";
    /// Different NUMA nodes in different packages, or whose packages are
    /// not known.
    pub(crate) const REMOTE: &str = "remote";
}

/// Which node a pair's lines were bound to (the `line_home` param; the
/// node itself is the shared `mem_node`).
pub(crate) mod line_home {
    /// The node of the pair's `cpu` (the reader in the read variants).
    pub(crate) const CPU: &str = "cpu";
    /// The node of the pair's `peer_cpu` (the writer in the read variants).
    pub(crate) const PEER: &str = "peer";
    /// One node, given, for every pair.
    pub(crate) const NODE: &str = "node";
}

pub(crate) mod param {
    /// One of [`super::line_home`].
    pub(crate) const LINE_HOME: &str = "line_home";
    /// The second CPU of the pair (the first is the shared `cpu`).
    pub(crate) const PEER_CPU: &str = "peer_cpu";
    /// The node of [`PEER_CPU`] (the first CPU's is the shared `cpu_node`).
    pub(crate) const PEER_NODE: &str = "peer_node";
    /// One of [`super::class`].
    pub(crate) const CLASS: &str = "class";
    /// Hand-offs (round trips, or lines read) timed per sample.
    pub(crate) const ITERATIONS: &str = "iterations";
    /// Samples behind the figures.
    pub(crate) const SAMPLES: &str = "samples";
    /// Set (to `true`) where only some pairs of the machine were measured.
    pub(crate) const SAMPLED: &str = "sampled";
    /// Where sampled: the pairs of the machine in this pair's (class, node
    /// pair) group, which the group's measured pairs stand for together.
    pub(crate) const GROUP_PAIRS: &str = "group_pairs";
    /// Whether both threads were seen on their CPUs before and after.
    pub(crate) const PINNING_VERIFIED: &str = "pinning_verified";
}

pub(crate) mod metric {
    /// The mean of the samples (core-to-core-latency reports the mean).
    pub(crate) const LATENCY_MEAN_NS: &str = "latency_mean_ns";
    /// The fastest sample.
    pub(crate) const LATENCY_MIN_NS: &str = "latency_min_ns";
    /// The interquartile range of the samples: the spread.
    pub(crate) const LATENCY_IQR_NS: &str = "latency_iqr_ns";
}
