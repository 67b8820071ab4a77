//! Record, param and metric names of the `tier` probe alone.

/// Params of a run's record.
pub(crate) mod param {
    /// Which placement ran: absent for the test itself, else one of
    /// [`BIND_FAST`] / [`BIND_SLOW`] (a baseline).
    pub(crate) const BIND: &str = "bind";
    pub(crate) const BIND_FAST: &str = "all_fast";
    pub(crate) const BIND_SLOW: &str = "all_slow";
    /// The node of the fast tier the test uses, the slow one, and the node
    /// whose CPUs run the workers.
    pub(crate) const FAST_NODE: &str = "fast_node";
    pub(crate) const SLOW_NODE: &str = "slow_node";
    pub(crate) const FAST_TIER: &str = "fast_tier";
    pub(crate) const SLOW_TIER: &str = "slow_tier";
    /// The work: seconds the workers ran for.
    pub(crate) const SECS: &str = "secs";
    pub(crate) const INTERVAL_S: &str = "interval_s";
    /// Each region's size, start node and access period, as an object per
    /// region name.
    pub(crate) const REGIONS: &str = "regions";
    /// A region's node while it was written (in [`REGIONS`]).
    pub(crate) const WRITTEN_ON_NODE: &str = "written_on_node";
    /// The kernel's tiering settings during the run, as read (an object:
    /// file name to value), and the demotion targets the tiers give.
    pub(crate) const KERNEL_SETTINGS: &str = "kernel_settings";
    /// `kernel.numa_balancing` during the run.
    pub(crate) const NUMA_BALANCING: &str = "numa_balancing";
    pub(crate) const DEMOTION_ENABLED: &str = "demotion_enabled";
    pub(crate) const PROMOTE_RATE_LIMIT_MB_S: &str = "promote_rate_limit_mb_s";
    pub(crate) const LOOKS: &str = "looks";
    /// Pages queried per region per look.
    pub(crate) const SAMPLE_PAGES: &str = "sample_pages";
    /// Summary: the baselines' GB/s.
    pub(crate) const FAST_GB_S: &str = "all_fast_gb_s";
    pub(crate) const SLOW_GB_S: &str = "all_slow_gb_s";
}

/// Metrics of a run's record.
pub(crate) mod metric {
    /// Seconds from the start until 90% of the hottest region's pages were
    /// on the fast tier (absent: never).
    pub(crate) const HOT_90_S: &str = "hot_on_fast_90pct_s";
    /// Percent of each region's pages on the fast tier at the end.
    pub(crate) const HOT_FAST_END_PCT: &str = "hot_on_fast_end_pct";
    pub(crate) const WARM_FAST_END_PCT: &str = "warm_on_fast_end_pct";
    pub(crate) const COLD_FAST_END_PCT: &str = "cold_on_fast_end_pct";
    /// /proc/vmstat counters over the run, under the kernel's names.
    pub(crate) const PGPROMOTE_SUCCESS: &str = "pgpromote_success";
    pub(crate) const PGPROMOTE_CANDIDATE: &str = "pgpromote_candidate";
    pub(crate) const PGDEMOTE_KSWAPD: &str = "pgdemote_kswapd";
    pub(crate) const PGDEMOTE_DIRECT: &str = "pgdemote_direct";
    pub(crate) const PGDEMOTE_KHUGEPAGED: &str = "pgdemote_khugepaged";
    pub(crate) const ALLOCSTALL_NORMAL: &str = "allocstall_normal";
    pub(crate) const ALLOCSTALL_MOVABLE: &str = "allocstall_movable";
    /// Promoted MB (10^6 bytes) per second over the run.
    pub(crate) const PROMOTE_MB_S: &str = "promote_mb_s";
    /// Pages promoted plus pages demoted, per second.
    pub(crate) const THRASH_PAGES_S: &str = "thrash_pages_per_s";
    /// The slowest look interval's throughput as percent of the median.
    pub(crate) const SLOWEST_INTERVAL_PCT: &str = "slowest_interval_pct";
    pub(crate) const SAMPLING_OVERHEAD_PCT: &str = "tier_sampling_overhead_pct";
    /// Summary: where the test lies from all-slow (0%) to all-fast (100%).
    pub(crate) const POSITION_PCT: &str = "tier_position_pct";
}

/// Series of a run's record.
pub(crate) mod series {
    pub(crate) const MEMORY_PER_TIER: &str = "memory_per_tier";
    pub(crate) const MIGRATIONS: &str = "migrations_per_s";
    pub(crate) const THROUGHPUT: &str = "throughput";
}
